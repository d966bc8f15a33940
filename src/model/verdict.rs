//! What validation and the operator's hooks concluded about a finding: plain data, filled in
//! by the stages after the scan and read by the writers.

use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// What a check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Live,
    Invalid,
    SecretMismatch,
    Expired,
    /// The provider says the credential was revoked (by its owner, or by a secret-scanning
    /// partner): it was real, it is dead.
    Revoked,
    Skipped,
    Unknown,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Live => "live",
            Status::Invalid => "invalid",
            Status::SecretMismatch => "secret-mismatch",
            Status::Expired => "expired",
            Status::Revoked => "revoked",
            Status::Skipped => "skipped",
            Status::Unknown => "unknown",
        }
    }

    /// Answers worth remembering: the service said so. Unknown and skipped are not cached.
    pub fn definitive(self) -> bool {
        matches!(
            self,
            Status::Live
                | Status::Invalid
                | Status::SecretMismatch
                | Status::Expired
                | Status::Revoked
        )
    }
}

/// The outcome attached to every member of a checked set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arn: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Who a live credential is, as a declarative validator's answer named it (AWS names its
    /// identity with `account` and `arn`). Boxed: most verdicts have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Box<Identity>>,
    /// RFC 3339, UTC.
    pub checked_at: String,
}

/// Who a live credential is, as its provider's answer named it: every field the answer
/// gave, none guessed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// The validator (provider id) that asked.
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    /// `None`: the answer named none; empty: it named an empty list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// `live` or `test` (Stripe), where the provider has modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

impl Identity {
    /// `github:octocat`, `openai:org-abc`: the provider and the most specific name given.
    pub fn display(&self) -> String {
        let who = [&self.user, &self.account, &self.org]
            .into_iter()
            .flatten()
            .next()
            .map_or("(unnamed)", String::as_str);
        format!("{}:{who}", self.provider)
    }
}

impl Validation {
    /// A verdict with no identity, checked now.
    pub fn new(status: Status, reason: Option<String>) -> Validation {
        Validation {
            status,
            account: None,
            arn: None,
            user_id: None,
            reason,
            identity: None,
            checked_at: now_rfc3339(),
        }
    }

    pub fn skipped(reason: &str, account: Option<String>) -> Validation {
        Validation {
            account,
            ..Validation::new(Status::Skipped, Some(reason.to_string()))
        }
    }
}

/// How one hook run ended; recorded on the finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookRun {
    pub name: String,
    /// `ok`, `failed` (non-zero exit), `timeout` (killed), `error` (could not start), or
    /// `done-before` (succeeded in an earlier run; not repeated).
    pub status: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// For built-in actions: what was done or went wrong (never a secret).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// For built-in actions: the credential's status when checked again afterwards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_after: Option<Status>,
}

/// Seconds since the Unix epoch, now.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The current time as RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    rfc3339(unix_now())
}

pub fn rfc3339(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_083_200), "2026-12-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
