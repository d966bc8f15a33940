//! `--rotate`: each live credential whose provider lets a key revoke itself (a
//! `[validators.revoke]` request in its rule file: GitHub's `POST /credentials/revoke`,
//! GitLab's `DELETE /personal_access_tokens/self`, Slack's `auth.revoke`) is revoked with
//! that request, then checked again. It is a built-in hook named `rotate`, so the hooks' rules
//! hold for it: at most once per finding across runs (the hooks' state), one audit line per
//! run, only on `live`. Nothing is revoked without the flag.

use super::{Kind, OperatorHook};
use crate::model::{Finding, HookRun, Status, Validation};
use crate::validate::{Credential, Options};
use std::time::{Duration, Instant};

/// The hook's name in reports, the audit log and the at-most-once state.
pub const NAME: &str = "rotate";

impl OperatorHook {
    /// The built-in hook `--rotate` adds.
    pub fn rotate() -> OperatorHook {
        OperatorHook {
            name: NAME.into(),
            statuses: Some(vec![Status::Live]),
            unknown: false,
            rules: None,
            kind: Kind::Revoke,
            with_secret: false,
            pass_env: Vec::new(),
            timeout: Duration::from_secs(30),
            dir: std::path::PathBuf::from("."),
        }
    }
}

/// Whether `--rotate` acts on `f`: the `secret` part of a credential whose validator can
/// revoke it (one revoke per credential, not one per part).
pub(super) fn wants(f: &Finding) -> bool {
    f.part.as_ref().is_some_and(|p| {
        p.part == "secret"
            && crate::validate::validator(&p.validator).is_some_and(|v| v.can_revoke())
    })
}

/// Revoke the credential `f` belongs to, then check it again with itself.
pub(super) fn run(
    f: &Finding,
    set: Option<&Credential>,
    opts: &Options,
    after: &mut Option<Validation>,
) -> HookRun {
    let start = Instant::now();
    let mut run = HookRun {
        name: NAME.into(),
        status: "ok".into(),
        exit_code: None,
        duration_ms: 0,
        detail: None,
        status_after: None,
    };
    let outcome = match set {
        None => Err(format!("{}: no complete credential to revoke", f.rule_id)),
        Some(c) => crate::validate::validator_of(c).revoke(c, opts),
    };
    match outcome {
        Ok(done) => {
            run.detail = Some(done);
            if let Some(c) = set {
                let v = crate::validate::check_now(c, opts);
                run.status_after = Some(v.status);
                *after = Some(v);
            }
        }
        Err(why) => {
            run.status = "error".into();
            run.detail = Some(why);
        }
    }
    run.duration_ms = start.elapsed().as_millis() as u64;
    run
}
