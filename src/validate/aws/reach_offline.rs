//! The stand-in for `reach.rs` in a build without the `aws` feature (no IAM client): every
//! reach is `unknown`, with the reason, and no request is made.

use super::AwsSet;
use crate::model::Reach;
use crate::validate::{Options, Reached};

const REASON: &str = "not read: this leakhound was built without the aws feature (no IAM client)";

pub(super) fn reach_all(sets: &[(AwsSet, String)], _opts: &Options) -> Vec<Reached> {
    sets.iter()
        .map(|(_, identity)| Reached {
            reach: Reach::unknown(identity, REASON),
            calls: Vec::new(),
        })
        .collect()
}
