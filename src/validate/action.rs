//! Built-in responses: what a provider can do about one of its live credentials when an
//! operator's hook asks for it by name (`action = "NAME"` in `leakhound.toml`). The provider
//! supplies them with its validator ([`Validator::actions`](super::Validator::actions)), so
//! `respond` runs them, records them and checks the credential again without naming a
//! provider.

use super::{Options, VALIDATORS};
use crate::model::Finding;

/// One built-in action.
pub trait Action: Sync {
    /// The name a hook's `action` gives (`aws-deactivate-key`).
    fn name(&self) -> &'static str;
    /// Why it cannot run in this build, if it cannot: checked when the config is loaded, not
    /// when a live credential is found and the action would fail.
    fn available(&self) -> Result<(), String>;
    /// Whether it acts on this finding (for one, the public part of each of its provider's
    /// credentials, so it runs once per credential).
    fn takes(&self, f: &Finding) -> bool;
    /// Act on the credential `f` belongs to, with the operator's own credentials; what was
    /// done, for the hook run's `detail`. Both the answer and the error name identifiers
    /// only, never a secret.
    fn act(&self, f: &Finding, opts: &Options) -> Result<String, String>;
}

/// The action called `name`, from any provider.
pub fn action(name: &str) -> Option<&'static dyn Action> {
    actions().find(|a| a.name() == name)
}

/// Every built-in action, in the registry's order.
pub fn actions() -> impl Iterator<Item = &'static dyn Action> {
    VALIDATORS.iter().flat_map(|v| v.actions().iter().copied())
}

/// The environment variables that hold the operator's own credentials for some provider
/// (`AWS_SECRET_ACCESS_KEY`, ...): a command hook's child does not inherit them unless the
/// hook names them in `pass_env`.
pub fn operator_credential_vars() -> impl Iterator<Item = &'static str> {
    VALIDATORS
        .iter()
        .flat_map(|v| v.operator_credential_vars().iter().copied())
}
