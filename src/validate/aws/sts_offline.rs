//! The stand-in for `sts.rs` in a build without the `aws` feature (no AWS SDK, no network):
//! every set that would have been sent to STS is `unknown`, with the reason. The offline
//! steps before it (account decoding, canary and pairing checks) still run.

use super::AwsSet;
use crate::model::{now_rfc3339, Status, Validation};
use crate::validate::Options;

/// Why nothing was checked; the report and the audit log carry it.
const REASON: &str =
    "not checked: this leakhound was built without the aws feature (no STS client)";

pub(super) fn check_all(sets: &[AwsSet], _opts: &Options) -> Vec<Validation> {
    sets.iter()
        .map(|_| Validation {
            status: Status::Unknown,
            account: None,
            arn: None,
            user_id: None,
            reason: Some(REASON.into()),
            identity: None,
            checked_at: now_rfc3339(),
        })
        .collect()
}
