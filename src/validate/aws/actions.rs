//! AWS's built-in responses (`aws-deactivate-key`, `aws-delete-key`) and the operator's
//! credential variables that command hooks do not inherit. The IAM calls are in `iam.rs`
//! (`iam_offline.rs` in a build without the AWS SDK, which refuses the actions at load).

use super::{iam, Options};
use crate::model::Finding;
use crate::validate::Action;

/// Set a live AWS key Inactive (or delete it) through IAM, with the operator's own
/// credentials; `respond` then checks the leaked set again.
pub(super) struct DisableKey {
    pub(super) delete: bool,
}

/// What AWS's validator supplies (`Validator::actions`).
pub(super) static ACTIONS: &[&dyn Action] =
    &[&DisableKey { delete: false }, &DisableKey { delete: true }];

/// AWS credentials in the operator's environment.
pub(super) const OPERATOR_CREDENTIAL_VARS: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
];

impl Action for DisableKey {
    fn name(&self) -> &'static str {
        if self.delete {
            "aws-delete-key"
        } else {
            "aws-deactivate-key"
        }
    }

    fn available(&self) -> Result<(), String> {
        iam::available()
    }

    /// An IAM action acts on a key, so it takes the key id finding of each credential.
    fn takes(&self, f: &Finding) -> bool {
        f.public && f.is_part_of("aws")
    }

    fn act(&self, f: &Finding, opts: &Options) -> Result<String, String> {
        // The key id is public (`takes`): it may be named.
        let key_id = f.secret.reveal();
        let user = iam::disable(&key_id, self.delete, &opts.region)?;
        let done = if self.delete {
            "deleted"
        } else {
            "set Inactive"
        };
        Ok(format!("key {key_id} of IAM user {user} {done}"))
    }
}
