//! What a live credential can do, as `--reach` read it from the credential's own policies:
//! plain data, filled in by validation and read by the writers and hooks.

use serde::{Deserialize, Serialize};

/// How far a credential reaches, from most to least.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReachLevel {
    /// Every IAM action on every resource (or `*:*`): it can make itself anything.
    Admin,
    /// Some action that changes something.
    Write,
    /// Only reading actions (`Get*`, `List*`, `Describe*`, ...).
    ReadOnly,
    /// Its policies, all read, allow nothing.
    None,
    /// Its policies could not all be read: never taken as `none`.
    Unknown,
}

impl ReachLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            ReachLevel::Admin => "admin",
            ReachLevel::Write => "write",
            ReachLevel::ReadOnly => "read-only",
            ReachLevel::None => "none",
            ReachLevel::Unknown => "unknown",
        }
    }
}

/// What a credential can do that a responder needs to know first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReachFlag {
    /// `iam:*` or `*:*` on `*`.
    Admin,
    /// Can make new or longer-lived credentials, or widen its own permissions (create access
    /// keys, users or login profiles, attach or put policies, pass roles, assume any role).
    MintCredentials,
    /// `secretsmanager:GetSecretValue`, `ssm:GetParameter*`, `kms:Decrypt`.
    ReadSecrets,
    /// `s3:GetObject` on every bucket.
    DataRead,
    /// `sts:AssumeRole` on some role.
    AssumeRole,
    /// A trust policy or an `sts:AssumeRole` resource names another account.
    CrossAccount,
}

impl ReachFlag {
    pub fn as_str(self) -> &'static str {
        match self {
            ReachFlag::Admin => "admin",
            ReachFlag::MintCredentials => "mint-credentials",
            ReachFlag::ReadSecrets => "read-secrets",
            ReachFlag::DataRead => "data-read",
            ReachFlag::AssumeRole => "assume-role",
            ReachFlag::CrossAccount => "cross-account",
        }
    }
}

/// How urgent a live credential's reach makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// The reach of one live credential set, attached to every finding of the set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reach {
    pub level: ReachLevel,
    /// Sorted, each once.
    pub flags: Vec<ReachFlag>,
    pub severity: Severity,
    /// The ARN STS named (a user, an assumed-role session, root).
    pub identity: String,
    /// What this evaluation leaves out and so cannot vouch for (`conditions`,
    /// `service-control-policies`, `permission-boundaries`, `session-policies`,
    /// `resource-policies`).
    pub not_evaluated: Vec<String>,
    /// The policies read and evaluated, by kind and name.
    pub policies: Vec<String>,
    /// Why the level is `unknown`, or what else a person should know (a statement with a
    /// Condition counted as "may allow", a permission boundary that is set).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
    /// For `unknown`: why (`no permission to list policies`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Reach {
    /// A reach that could not be read, with why. Never `none`: not knowing is not nothing.
    pub fn unknown(identity: &str, reason: impl Into<String>) -> Reach {
        Reach {
            level: ReachLevel::Unknown,
            flags: Vec::new(),
            severity: severity(ReachLevel::Unknown, &[]),
            identity: identity.to_string(),
            not_evaluated: Vec::new(),
            policies: Vec::new(),
            notes: Vec::new(),
            reason: Some(reason.into()),
        }
    }

    /// One line for a person: `reach: admin (critical): admin, mint-credentials; as ARN`.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "reach: {} ({})",
            self.level.as_str(),
            self.severity.as_str()
        );
        if !self.flags.is_empty() {
            let flags: Vec<&str> = self.flags.iter().map(|f| f.as_str()).collect();
            line.push_str(&format!(": {}", flags.join(", ")));
        }
        if let Some(r) = &self.reason {
            line.push_str(&format!("; {r}"));
        }
        line.push_str(&format!("; as {}", self.identity));
        line
    }
}

/// The severity a level and flags make: admin or minting credentials is critical (the holder
/// can keep access after this key is gone); secrets, writes, other accounts, or a reach that
/// could not be read are high (a live key whose reach is unknown is treated as serious);
/// reading data or assuming roles is medium; the rest low.
pub fn severity(level: ReachLevel, flags: &[ReachFlag]) -> Severity {
    let has = |f| flags.contains(&f);
    if level == ReachLevel::Admin || has(ReachFlag::Admin) || has(ReachFlag::MintCredentials) {
        Severity::Critical
    } else if level == ReachLevel::Write
        || level == ReachLevel::Unknown
        || has(ReachFlag::ReadSecrets)
        || has(ReachFlag::CrossAccount)
    {
        Severity::High
    } else if has(ReachFlag::DataRead) || has(ReachFlag::AssumeRole) {
        Severity::Medium
    } else {
        Severity::Low
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_follow_the_worst_reach() {
        assert_eq!(severity(ReachLevel::Admin, &[]), Severity::Critical);
        assert_eq!(
            severity(ReachLevel::Write, &[ReachFlag::MintCredentials]),
            Severity::Critical
        );
        assert_eq!(severity(ReachLevel::Unknown, &[]), Severity::High);
        assert_eq!(
            severity(ReachLevel::ReadOnly, &[ReachFlag::DataRead]),
            Severity::Medium
        );
        assert_eq!(severity(ReachLevel::None, &[]), Severity::Low);
        let r = Reach::unknown("arn:aws:iam::123456789012:user/x", "no permission");
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["level"], "unknown");
        assert_eq!(v["severity"], "high");
        assert!(r.summary().contains("no permission"));
    }
}
