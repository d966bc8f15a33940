//! Built without the `http-validate` feature: nothing is sent, and each verdict says why.

use super::answer::unknown;
use super::HttpValidator;
use crate::model::Validation;
use crate::validate::{Credential, Options};

pub(super) fn check_all(
    _v: &HttpValidator,
    creds: &[&Credential],
    _opts: &Options,
) -> Vec<Validation> {
    creds
        .iter()
        .map(|_| unknown("built without HTTP validation (the http-validate feature)"))
        .collect()
}

pub(super) fn revoke(
    _v: &HttpValidator,
    _c: &Credential,
    _opts: &Options,
) -> Result<String, String> {
    Err("built without HTTP validation (the http-validate feature)".into())
}
