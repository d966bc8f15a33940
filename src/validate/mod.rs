//! Is a found credential live? AWS credential sets (a key id with its secret, plus the session
//! token for temporary `ASIA` ids), grouped by `credential_set`, are checked with STS
//! GetCallerIdentity. Before any request: the account id is decoded from the key id, and a
//! set whose account is a known canary (honeytoken) account is skipped, so the trap is never
//! sprung. Results are cached in memory and on disk, keyed by a hash of the set.
//!
//! Never is a 429, a 5xx, a timeout or a network error called `invalid`: those are `unknown`
//! with the reason.

#[cfg(feature = "aws")]
mod aws;
#[cfg(not(feature = "aws"))]
#[path = "offline.rs"]
mod aws;

use crate::report::Finding;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// What a check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Live,
    Invalid,
    SecretMismatch,
    Expired,
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
            Status::Skipped => "skipped",
            Status::Unknown => "unknown",
        }
    }

    /// Answers worth remembering: the service said so. Unknown and skipped are not cached.
    fn definitive(self) -> bool {
        matches!(
            self,
            Status::Live | Status::Invalid | Status::SecretMismatch | Status::Expired
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
    /// RFC 3339, UTC.
    pub checked_at: String,
}

impl Validation {
    fn skipped(reason: &str, account: Option<String>) -> Validation {
        Validation {
            status: Status::Skipped,
            account,
            arn: None,
            user_id: None,
            reason: Some(reason.to_string()),
            checked_at: now_rfc3339(),
        }
    }
}

/// Thinkst canarytokens.org AWS accounts: a key from one of them is a tripwire, and checking
/// it would alert its owner. Operators add their own (`[validate] canary_accounts`).
pub const DEFAULT_CANARY_ACCOUNTS: &[&str] = &[
    "052310077262",
    "171436882533",
    "266735846894",
    "534261010715",
    "595918472158",
    "717712589309",
    "730335385048",
    "819147034852",
    "992382622183",
];

/// The AWS account an access key id belongs to, decoded offline: the 16 characters after the
/// prefix are base32; bits 1..41 of the first 6 decoded bytes are the account number.
pub fn aws_account(key_id: &str) -> Option<String> {
    let body = key_id.get(4..)?;
    if key_id.len() != 20 || !key_id.is_char_boundary(4) {
        return None;
    }
    let mut bits: u128 = 0;
    for c in body.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'2'..=b'7' => c - b'2' + 26,
            _ => return None,
        };
        bits = (bits << 5) | v as u128;
    }
    // 16 characters are 80 bits; the first 48 are the 6 bytes that hold the account.
    let six = (bits >> 32) as u64;
    let account = (six & 0x7fff_ffff_ff80) >> 7;
    Some(format!("{account:012}"))
}

/// Settings for a validation run.
#[derive(Debug, Clone)]
pub struct Options {
    /// An STS endpoint from the operator (`AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL`); never
    /// from anything scanned.
    pub endpoint: Option<String>,
    pub region: String,
    pub canaries: HashSet<String>,
    pub concurrency: usize,
    /// For the whole run; sets not answered by then are `unknown`.
    pub deadline: Duration,
    /// Per request.
    pub timeout: Duration,
    pub retries: u32,
    /// Where results are kept between runs (`None`: memory only).
    pub cache_dir: Option<PathBuf>,
    pub cache_ttl: Duration,
}

impl Options {
    /// From the operator's environment: endpoint and region variables, the state directory.
    pub fn from_env() -> Options {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Options {
            endpoint: var("AWS_ENDPOINT_URL_STS").or_else(|| var("AWS_ENDPOINT_URL")),
            region: var("AWS_REGION")
                .or_else(|| var("AWS_DEFAULT_REGION"))
                .unwrap_or_else(|| "us-east-1".into()),
            canaries: DEFAULT_CANARY_ACCOUNTS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            concurrency: 8,
            deadline: Duration::from_secs(120),
            timeout: Duration::from_secs(10),
            retries: 3,
            cache_dir: state_dir(),
            cache_ttl: Duration::from_secs(3600),
        }
    }
}

pub use crate::policy::state_dir;

/// One AWS credential: what STS is asked with.
#[derive(Clone)]
pub struct AwsSet {
    pub key_id: String,
    pub secret: String,
    pub token: Option<String>,
}

impl std::fmt::Debug for AwsSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AwsSet({}, <secret redacted>)", self.key_id)
    }
}

impl AwsSet {
    /// A stable, one-way key for the cache, keyed like fingerprints: the cache file on disk
    /// lets no one test a guessed secret.
    fn hash(&self) -> String {
        let token = self.token.as_deref().unwrap_or("");
        let d = crate::report::keyed_hash(&[
            self.key_id.as_bytes(),
            &[0],
            self.secret.as_bytes(),
            &[0],
            token.as_bytes(),
        ]);
        d.iter().map(|b| format!("{b:02x}")).collect()
    }
}

const AWS_ID: &str = "aws.access-key-id";
const AWS_TOKEN: &str = "aws.session-token";

fn is_aws_secret(rule: &str) -> bool {
    rule.starts_with("aws.secret-access-key") || rule == "aws.credentials-csv"
}

/// Mark every AWS key id finding with its account (offline, always).
pub fn annotate_accounts(findings: &mut [Finding]) {
    for f in findings.iter_mut().filter(|f| f.rule_id == AWS_ID) {
        f.aws_account = aws_account(&f.secret.reveal());
    }
}

/// The complete AWS credential sets among `findings` (key id and secret, with the token if
/// found), by a hash of the set, each with the findings that belong to it. The same credential
/// found in many places is one set.
pub fn aws_sets(findings: &[Finding]) -> HashMap<String, (AwsSet, Vec<usize>)> {
    let mut sets: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, f) in findings.iter().enumerate() {
        let aws = f.rule_id == AWS_ID || f.rule_id == AWS_TOKEN || is_aws_secret(&f.rule_id);
        if let (Some(s), true) = (&f.credential_set, aws) {
            sets.entry(s.clone()).or_default().push(i);
        }
    }
    let mut distinct: HashMap<String, (AwsSet, Vec<usize>)> = HashMap::new();
    for members in sets.values() {
        let pick = |pred: &dyn Fn(&str) -> bool| {
            members
                .iter()
                .find(|&&i| pred(&findings[i].rule_id))
                .map(|&i| findings[i].secret.reveal())
        };
        let (Some(key_id), Some(secret)) = (pick(&|r| r == AWS_ID), pick(&is_aws_secret)) else {
            continue;
        };
        let set = AwsSet {
            key_id,
            secret,
            token: pick(&|r| r == AWS_TOKEN),
        };
        distinct
            .entry(set.hash())
            .or_insert_with(|| (set, Vec::new()))
            .1
            .extend(members);
    }
    distinct
}

/// Check one set now, without the cache (after a response changed it).
pub fn check_now(set: &AwsSet, opts: &Options) -> Validation {
    aws::check_all(&[(set.hash(), set.clone())], opts)
        .pop()
        .unwrap_or_else(|| Validation::skipped("not checked", None))
}

/// Record a set's new state (after an action changed it) so later runs do not trust an old
/// answer from the cache.
pub fn remember(set: &AwsSet, v: &Validation, opts: &Options) {
    if !v.status.definitive() {
        return;
    }
    let mut cache = Cache::load(opts);
    cache.put(&set.hash(), v);
    cache.save();
}

/// A record of each check, for the audit log.
#[derive(Debug, Clone)]
pub struct Checked {
    pub key_id: String,
    pub fingerprint: String,
    pub rule: String,
    pub validation: Validation,
    /// Answered from the cache, no request sent.
    pub cached: bool,
}

/// Check every AWS credential set among `findings` and attach the outcome to each member.
/// AWS parts that are not in a complete set are `skipped` ("no pair"). Returns one record
/// per distinct set.
pub fn validate(findings: &mut [Finding], opts: &Options) -> Vec<Checked> {
    let distinct = aws_sets(findings);
    let mut cache = Cache::load(opts);
    let mut out = Vec::new();
    let mut to_check = Vec::new();
    for (hash, (set, _)) in &distinct {
        let account = aws_account(&set.key_id);
        let pre = if set.key_id.starts_with("ASIA") && set.token.is_none() {
            Some(Validation::skipped(
                "no session token for a temporary (ASIA) key",
                account.clone(),
            ))
        } else if account.as_ref().is_some_and(|a| opts.canaries.contains(a)) {
            Some(Validation::skipped("canary", account.clone()))
        } else {
            None
        };
        if let Some(v) = pre.or_else(|| cache.get(hash)) {
            let cached = v.status.definitive();
            out.push((hash.clone(), v, cached));
        } else {
            to_check.push((hash.clone(), set.clone()));
        }
    }
    let checked = aws::check_all(&to_check, opts);
    for ((hash, _), v) in to_check.iter().zip(checked) {
        if v.status.definitive() {
            cache.put(hash, &v);
        }
        out.push((hash.clone(), v, false));
    }
    cache.save();
    let mut records = Vec::new();
    for (hash, v, cached) in out {
        let (set, members) = &distinct[&hash];
        for &i in members {
            findings[i].validation = Some(v.clone());
        }
        let id_finding = members
            .iter()
            .find(|&&i| findings[i].rule_id == AWS_ID)
            .copied()
            .unwrap_or(members[0]);
        records.push(Checked {
            key_id: set.key_id.clone(),
            fingerprint: findings[id_finding].fingerprint.clone(),
            rule: findings[id_finding].rule_id.clone(),
            validation: v,
            cached,
        });
    }
    // AWS parts with no complete set: nothing to check them with.
    for f in findings.iter_mut() {
        let aws = f.rule_id == AWS_ID || f.rule_id == AWS_TOKEN || is_aws_secret(&f.rule_id);
        if aws && f.validation.is_none() {
            let account = (f.rule_id == AWS_ID)
                .then(|| aws_account(&f.secret.reveal()))
                .flatten();
            f.validation = Some(Validation::skipped("no pair", account));
        }
    }
    records
}

/// Results by set hash, in memory and in `validation-cache.json` under the state directory.
struct Cache {
    path: Option<PathBuf>,
    ttl: Duration,
    entries: HashMap<String, (u64, Validation)>,
    dirty: bool,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Cache {
    fn load(opts: &Options) -> Cache {
        let path = opts
            .cache_dir
            .as_ref()
            .map(|d| d.join("validation-cache.json"));
        let entries = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Cache {
            path,
            ttl: opts.cache_ttl,
            entries,
            dirty: false,
        }
    }

    fn get(&self, hash: &str) -> Option<Validation> {
        let (at, v) = self.entries.get(hash)?;
        (unix_now().saturating_sub(*at) < self.ttl.as_secs()).then(|| v.clone())
    }

    fn put(&mut self, hash: &str, v: &Validation) {
        self.entries
            .insert(hash.to_string(), (unix_now(), v.clone()));
        self.dirty = true;
    }

    /// Best effort: a cache that cannot be written costs only repeated requests.
    fn save(&mut self) {
        let Some(path) = &self.path else { return };
        if !self.dirty {
            return;
        }
        let now = unix_now();
        let ttl = self.ttl.as_secs();
        self.entries
            .retain(|_, (at, _)| now.saturating_sub(*at) < ttl);
        let Ok(body) = serde_json::to_vec(&self.entries) else {
            return;
        };
        let _ = write_private(path, &body);
    }
}

/// Write `body` to `path` (created 0700 directory, 0600 file), atomically by rename.
pub fn write_private(path: &std::path::Path, body: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)?;
    f.write_all(body)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// The current time as RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    rfc3339(unix_now())
}

fn rfc3339(secs: u64) -> String {
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
    fn account_ids_decode_offline() {
        // A canarytokens.org key id format: the account keeps its leading zero.
        assert_eq!(
            aws_account("AKIAAYLPMN5HAAAAAAAA").as_deref(),
            Some("052310077262")
        );
        assert_eq!(
            aws_account("AKIAQYLPMN5HHHFPZAM2").as_deref(),
            Some("052310077262")
        );
        assert_eq!(aws_account("AKIA1234"), None);
        assert_eq!(aws_account("AKIAaaaaaaaaaaaaaaaa"), None);
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_083_200), "2026-12-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
