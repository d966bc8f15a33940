//! Built without the `db-validate` feature: no login is tried, and each verdict says why.

use super::{Login, Target};
use std::time::Duration;

pub(super) fn login(_t: &Target, _password: &str, _timeout: Duration) -> Login {
    Login::Unknown("built without database validation (the db-validate feature)".into())
}
