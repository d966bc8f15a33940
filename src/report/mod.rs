//! The finding model, redaction, fingerprints, and the writers (human, json, jsonl, sarif).
//!
//! Writers are sinks: they format what they are given and never decide what is a secret.

mod human;
mod json;
mod sarif;

use crate::engine::Match;
use crate::rules::Rule;
use crate::source::Provenance;
use sha2::{Digest, Sha256};
use std::io::{self, Write};
use std::time::Duration;

pub use human::{bytes as human_bytes, printable, HumanOptions};

/// Bytes of a secret. `Debug` never shows them and there is no `Serialize`: a writer must
/// choose between [`Secret::redacted`] and [`Secret::reveal`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not even the length: it narrows a guess.
        write!(f, "Secret(<redacted>)")
    }
}

impl Secret {
    pub fn new(bytes: &[u8]) -> Secret {
        Secret(bytes.to_vec())
    }

    /// The secret as text (lossy for invalid UTF-8).
    pub fn reveal(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }

    /// A masked form that keeps a short prefix of long secrets, so a person can tell two
    /// findings apart without the secret being recoverable.
    pub fn redacted(&self) -> String {
        let keep = match self.0.len() {
            n if n >= 32 => 4,
            n if n >= 16 => 2,
            _ => 0,
        };
        let prefix: String = String::from_utf8_lossy(&self.0[..keep])
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        format!("{prefix}********")
    }
}

/// The line around a finding, with every secret on it marked so a writer can mask them.
#[derive(Clone, Default)]
pub struct Context {
    text: String,
    /// Byte ranges in `text`, each with its masked replacement, sorted and disjoint.
    marks: Vec<(usize, usize, String)>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Context(<redacted>)")
    }
}

impl Context {
    /// The context line, secrets masked unless `show`.
    pub fn render(&self, show: bool) -> String {
        if show {
            return self.text.clone();
        }
        let mut out = String::with_capacity(self.text.len());
        let mut at = 0;
        for (s, e, masked) in &self.marks {
            out.push_str(&self.text[at..*s]);
            out.push_str(masked);
            at = *e;
        }
        out.push_str(&self.text[at..]);
        out
    }
}

/// One secret at one place.
#[derive(Debug, Clone)]
pub struct Finding {
    pub rule_id: String,
    pub rule_name: String,
    pub provenance: Provenance,
    /// 1-based line and column (in characters) of the secret's first byte.
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    /// Byte span of the secret in the scanned blob.
    pub start: usize,
    pub end: usize,
    pub secret: Secret,
    /// The value is an identifier, not a secret (AWS key ids): shown whole.
    pub public: bool,
    pub fingerprint: String,
    pub entropy: f64,
    pub context: Context,
    /// Set when the secret was found in a decoded view (base64, UTF-16, escapes, percent);
    /// `secret` is then the decoded value and `start..end` its encoded span.
    pub encoding: Option<crate::decode::Encoding>,
    /// Shared by the findings that form one credential (an AWS key id, its secret and session
    /// token): what a validator checks together.
    pub credential_set: Option<String>,
    /// For an AWS access key id: the account it belongs to, decoded offline.
    pub aws_account: Option<String>,
    /// Set by `--validate`: whether the credential is live.
    pub validation: Option<crate::validate::Validation>,
    /// The operator's hooks that ran on this finding.
    pub hooks: Vec<crate::respond::HookRun>,
}

impl Finding {
    /// A finding read back from a JSON report: enough to validate it (rule, secret, set).
    pub fn from_report(
        rule_id: &str,
        secret: &str,
        credential_set: Option<String>,
        path: &str,
    ) -> Finding {
        let secret = secret.as_bytes();
        Finding {
            rule_id: rule_id.to_string(),
            rule_name: String::new(),
            provenance: Provenance::Stream {
                name: path.to_string(),
            },
            line: 0,
            column: 0,
            end_line: 0,
            start: 0,
            end: 0,
            secret: Secret::new(secret),
            public: rule_id == "aws.access-key-id",
            fingerprint: fingerprint(rule_id, secret),
            entropy: crate::engine::shannon_entropy(secret),
            context: Context::default(),
            encoding: None,
            credential_set,
            aws_account: None,
            validation: None,
            hooks: Vec::new(),
        }
    }

    /// Mark this finding as found in a decoded view, with the decoded secret.
    pub fn decoded(mut self, encoding: crate::decode::Encoding, secret: &[u8]) -> Finding {
        self.secret = Secret::new(secret);
        self.fingerprint = fingerprint(&self.rule_id, secret);
        self.entropy = crate::engine::shannon_entropy(secret);
        self.encoding = Some(encoding);
        self
    }

    /// The secret as it should be shown.
    pub fn display_secret(&self, show: bool) -> String {
        if show || self.public {
            self.secret.reveal()
        } else {
            self.secret.redacted()
        }
    }

    pub fn path(&self) -> String {
        self.provenance.display()
    }
}

/// Stable across runs for one fingerprint key: a keyed hash (HMAC-SHA256) of the rule and the
/// secret, nothing about where it was. The key makes it useless for guessing the secret
/// offline: without it, a weak password cannot be confirmed by hashing candidates.
pub fn fingerprint(rule_id: &str, secret: &[u8]) -> String {
    let d = keyed_hash(&[rule_id.as_bytes(), &[0], secret]);
    hex(&d[..16])
}

/// HMAC-SHA256 of the concatenated `parts` under the fingerprint key. Anything leakhound keeps
/// about a secret outside memory (fingerprints, baselines, caches) goes through this.
pub fn keyed_hash(parts: &[&[u8]]) -> [u8; 32] {
    hmac_sha256(fingerprint_key(), parts)
}

/// Names the fingerprint key without revealing it: written into baselines, so a baseline
/// made with another key is refused instead of silently suppressing nothing.
pub fn fingerprint_key_id() -> String {
    hex(&keyed_hash(&[b"leakhound fingerprint key id"])[..6])
}

static FINGERPRINT_KEY: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();

/// Use `key` for every fingerprint this process makes. Returns false when a key was already
/// in use (fingerprints made so far would not compare).
pub fn set_fingerprint_key(key: &[u8]) -> bool {
    let derived: [u8; 32] = Sha256::digest(key).into();
    FINGERPRINT_KEY.set(derived).is_ok() || FINGERPRINT_KEY.get() == Some(&derived)
}

/// The key set by [`set_fingerprint_key`]; without one, a random key for this process only:
/// fingerprints then compare within the run but not across runs (the CLI always sets one).
fn fingerprint_key() -> &'static [u8; 32] {
    FINGERPRINT_KEY.get_or_init(|| {
        let mut k = [0u8; 32];
        let random = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut k));
        if random.is_err() {
            // No randomness source: still unguessable enough to be different per process.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            k = Sha256::digest(format!("{t:?}{}", std::process::id())).into();
        }
        k
    })
}

fn hmac_sha256(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    let mut ipad = [0x36u8; 64];
    let mut opad = [0x5cu8; 64];
    for (i, b) in key.iter().enumerate() {
        ipad[i] ^= b;
        opad[i] ^= b;
    }
    let mut inner = Sha256::new();
    inner.update(ipad);
    for p in parts {
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(opad);
    outer.update(inner.finalize());
    outer.finalize().into()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

const AWS_ID: &str = "aws.access-key-id";
const AWS_SECRETS: &[&str] = &[
    "aws.secret-access-key",
    "aws.secret-access-key.near-key-id",
    "aws.credentials-csv",
];
const AWS_TOKEN: &str = "aws.session-token";
/// Largest distance, in bytes, between the parts of one credential in a file.
const PAIR_WITHIN: usize = 2048;

/// Group AWS key ids, secrets and session tokens into credential sets: in an environment by
/// variable name (`X_AWS_ACCESS_KEY_ID` with `X_AWS_SECRET_ACCESS_KEY`), elsewhere by
/// proximity in the same blob. Each member gets the set's id.
pub fn pair_credentials(findings: &mut [Finding]) {
    use crate::source::Provenance;
    // Where a finding lives, and the key that pairs it there.
    let place = |f: &Finding| -> (String, Option<String>) {
        let (origin, variable) = match &f.provenance {
            Provenance::Env { origin, variable } => (format!("env:{origin}"), variable),
            Provenance::File {
                path,
                variable: Some(v),
            } => (path.clone(), v),
            // Offsets compare only within one blob: the same path in two commits is two places.
            Provenance::Git { path, blob, .. } => return (format!("{path}\0{blob}"), None),
            Provenance::Image {
                layer_digest: Some(d),
                ..
            } => return (format!("{}\0{d}", f.provenance.display()), None),
            other => return (other.display(), None),
        };
        {
            {
                let v = variable.to_ascii_uppercase();
                let stem = [
                    "ACCESS_KEY_ID",
                    "SECRET_ACCESS_KEY",
                    "SESSION_TOKEN",
                    "SECURITY_TOKEN",
                ]
                .iter()
                .find_map(|s| v.strip_suffix(s))
                .unwrap_or(&v)
                .to_string();
                (origin, Some(stem))
            }
        }
    };
    // Only AWS findings take part; group them by place so pairing stays local.
    let mut groups: std::collections::HashMap<String, Vec<usize>> = Default::default();
    for (i, f) in findings.iter().enumerate() {
        let r = f.rule_id.as_str();
        if r == AWS_ID || r == AWS_TOKEN || AWS_SECRETS.contains(&r) {
            groups.entry(place(f).0).or_default().push(i);
        }
    }
    for members in groups.values() {
        let of = |rule: &dyn Fn(&str) -> bool| -> Vec<usize> {
            members
                .iter()
                .copied()
                .filter(|&i| rule(&findings[i].rule_id))
                .collect()
        };
        let ids = of(&|r| r == AWS_ID);
        let tokens = of(&|r| r == AWS_TOKEN);
        for s in of(&|r| AWS_SECRETS.contains(&r)) {
            let stem_s = place(&findings[s]).1;
            let near = |i: usize, within: usize| match (&place(&findings[i]).1, &stem_s) {
                (Some(a), Some(b)) => a == b,
                _ => findings[i].start.abs_diff(findings[s].start) <= within,
            };
            let closest = |cands: &[usize], within: usize| {
                cands
                    .iter()
                    .copied()
                    .filter(|&i| near(i, within))
                    .min_by_key(|&i| findings[i].start.abs_diff(findings[s].start))
            };
            let Some(id) = closest(&ids, PAIR_WITHIN) else {
                continue;
            };
            let token = closest(&tokens, 4 * PAIR_WITHIN);
            let parts: Vec<usize> = [Some(id), Some(s), token].into_iter().flatten().collect();
            let mut h = Sha256::new();
            for &m in &parts {
                h.update(findings[m].fingerprint.as_bytes());
            }
            let set = hex(&h.finalize()[..8]);
            for m in parts {
                findings[m].credential_set = Some(set.clone());
            }
        }
    }
}

/// Longest context shown on each side of a secret.
const CONTEXT_SIDE: usize = 80;

/// Where a slice of a blob begins: byte offset, line and column. Large blobs are reported a
/// chunk at a time; each chunk's positions continue from its origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl Origin {
    pub const START: Origin = Origin {
        offset: 0,
        line: 1,
        column: 1,
    };

    /// Move past `seg`, the bytes that follow this origin.
    pub fn advance(&mut self, seg: &[u8]) {
        self.line += memchr::memchr_iter(b'\n', seg).count();
        self.column = match memchr::memrchr(b'\n', seg) {
            Some(p) => 1 + chars(&seg[p + 1..]),
            None => self.column + chars(seg),
        };
        self.offset += seg.len();
    }
}

/// Turn the engine's matches in one blob into findings. Lines and columns are computed here,
/// once, walking the blob in order of the matches.
pub fn findings(
    rules: &[Rule],
    hay: &[u8],
    matches: &[Match],
    provenance: &Provenance,
) -> Vec<Finding> {
    findings_at(rules, hay, matches, provenance, Origin::START)
}

/// [`findings`] for a slice of a blob that begins at `origin`.
pub fn findings_at(
    rules: &[Rule],
    hay: &[u8],
    matches: &[Match],
    provenance: &Provenance,
    origin: Origin,
) -> Vec<Finding> {
    findings_masked(rules, hay, matches, matches, provenance, origin)
}

/// [`findings_at`], with each context masked by `known`: every span in `hay` that any pass
/// (plain, decoded views, other notebook fields, matches the policy allowed) took for a
/// secret. A context then never shows a secret that another finding, or no finding, holds.
pub fn findings_masked(
    rules: &[Rule],
    hay: &[u8],
    matches: &[Match],
    known: &[Match],
    provenance: &Provenance,
    origin: Origin,
) -> Vec<Finding> {
    let mut sorted: Vec<&Match> = matches.iter().collect();
    sorted.sort_by_key(|m| m.start);
    let mut masks: Vec<&Match> = known.iter().chain(matches).collect();
    masks.sort_by_key(|m| (m.start, std::cmp::Reverse(m.end)));
    let mut out = Vec::with_capacity(sorted.len());
    let mut line = origin.line;
    let mut counted = 0;
    // (byte offset, column there) of the last match, to count columns incrementally when
    // many matches share one long line.
    let mut col_at = (0, origin.column);
    for m in &sorted {
        line += memchr::memchr_iter(b'\n', &hay[counted..m.start]).count();
        counted = m.start;
        let line_start = memchr::memrchr(b'\n', &hay[..m.start]).map_or(0, |p| p + 1);
        if col_at.0 < line_start {
            col_at = (line_start, 1);
        }
        let column = col_at.1 + chars(&hay[col_at.0..m.start]);
        col_at = (m.start, column);
        let end_line = line + memchr::memchr_iter(b'\n', &hay[m.start..m.end]).count();
        let rule = &rules[m.rule];
        let secret = &hay[m.span()];
        out.push(Finding {
            rule_id: rule.id.clone(),
            rule_name: rule.name.clone(),
            provenance: provenance.clone(),
            line,
            column,
            end_line,
            start: origin.offset + m.start,
            end: origin.offset + m.end,
            secret: Secret::new(secret),
            public: rule.public,
            fingerprint: fingerprint(&rule.id, secret),
            entropy: crate::engine::shannon_entropy(secret),
            context: context(rules, hay, m, &masks),
            encoding: None,
            credential_set: None,
            aws_account: None,
            validation: None,
            hooks: Vec::new(),
        });
    }
    out
}

/// Characters in `bytes` as a lossy UTF-8 decoding shows them: each invalid sequence is one.
fn chars(bytes: &[u8]) -> usize {
    bytes
        .utf8_chunks()
        .map(|c| c.valid().chars().count() + usize::from(!c.invalid().is_empty()))
        .sum()
}

/// The line around `m`, clipped, with every match on it (not just `m`) marked.
fn context(rules: &[Rule], hay: &[u8], m: &Match, all: &[&Match]) -> Context {
    let line_start = memchr::memrchr(b'\n', &hay[..m.start]).map_or(0, |p| p + 1);
    let line_end = memchr::memchr(b'\n', &hay[m.start..]).map_or(hay.len(), |p| m.start + p);
    // Multi-line secrets (private keys) show only their first line.
    let from = line_start.max(m.start.saturating_sub(CONTEXT_SIDE));
    let to = line_end.min(m.end.max(m.start) + CONTEXT_SIDE).max(from);
    let mut text = String::new();
    let mut marks = Vec::new();
    let mut at = from;
    let push = |bytes: &[u8], text: &mut String| {
        let s = String::from_utf8_lossy(bytes);
        text.extend(
            s.chars()
                .map(|c| if c == '\t' || !c.is_control() { c } else { ' ' }),
        );
    };
    for o in all.iter().filter(|o| o.start < to && o.end > from) {
        // Overlapping secrets (rare) and ones that start before the clip are masked from
        // wherever the text shown so far ends.
        if o.end <= at {
            continue;
        }
        let from_here = o.start.max(at);
        push(&hay[at..from_here], &mut text);
        let s = text.len();
        push(&hay[from_here..o.end.min(to)], &mut text);
        let masked = if rules[o.rule].public {
            text[s..].to_string()
        } else {
            Secret::new(&hay[o.span()]).redacted()
        };
        marks.push((s, text.len(), masked));
        at = o.end.min(to);
    }
    push(&hay[at..to], &mut text);
    Context { text, marks }
}

/// A problem with one input that did not stop the scan.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Warning {
    pub path: String,
    pub message: String,
}

/// Totals for the summary line and the JSON report. Nothing is skipped without being counted
/// here, and named in `skipped` where its path is known.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Summary {
    pub files: u64,
    pub bytes: u64,
    pub findings: u64,
    pub suppressed: u64,
    pub skipped_binary: u64,
    pub skipped_large: u64,
    /// Entries (files, or whole directories) that ignore files excluded.
    pub skipped_ignored: u64,
    /// Inputs that could not be read (each also a warning).
    pub skipped_unreadable: u64,
    /// Of those, inputs named on the command line: the run fails (exit 2).
    pub failed_inputs: u64,
    pub warnings: u64,
    #[serde(serialize_with = "ser_secs")]
    pub elapsed: Duration,
    /// Each file skipped, with why.
    pub skipped: Vec<Skipped>,
}

/// A file not scanned, and why: `binary`, `too large`, `unreadable`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

impl Summary {
    /// Add another scan's totals to these.
    pub fn add(&mut self, o: &Summary) {
        self.files += o.files;
        self.bytes += o.bytes;
        self.skipped_binary += o.skipped_binary;
        self.skipped_large += o.skipped_large;
        self.skipped_ignored += o.skipped_ignored;
        self.skipped_unreadable += o.skipped_unreadable;
        self.failed_inputs += o.failed_inputs;
        self.skipped.extend(o.skipped.iter().cloned());
    }
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0).round() / 1000.0)
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
    Jsonl,
    Sarif,
}

/// Everything a writer needs.
pub struct Report<'a> {
    pub findings: &'a [Finding],
    pub warnings: &'a [Warning],
    pub summary: &'a Summary,
    pub rules: &'a [Rule],
    pub show_secrets: bool,
}

/// Write `report` in `format`. A broken pipe is not an error.
pub fn write(
    format: Format,
    report: &Report<'_>,
    human: &HumanOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    let r = match format {
        Format::Human => human::write(report, human, out),
        Format::Json => json::write_json(report, out),
        Format::Jsonl => json::write_jsonl(report, out),
        Format::Sarif => sarif::write(report, out),
    }
    .and_then(|_| out.flush());
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

pub use json::{finding_json, write_baseline};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_debug_never_shows_bytes() {
        let s = Secret::new(b"hunter2-but-longer-than-sixteen");
        assert!(!format!("{s:?}").contains("hunter"));
        assert!(!format!("{s:?}").contains("31"), "no length either");
        assert!(!s.redacted().contains("hunter"));
    }

    #[test]
    fn fingerprint_is_an_hmac_under_the_key() {
        // The key as the module derives it from the operator's key text.
        let key: [u8; 32] = Sha256::digest(b"k").into();
        let a = hmac_sha256(&key, &[b"rule", &[0], b"secret"]);
        let b = hmac_sha256(&key, &[b"rule\0secret"]);
        assert_eq!(a, b, "parts are concatenated");
        let other: [u8; 32] = Sha256::digest(b"other").into();
        assert_ne!(a, hmac_sha256(&other, &[b"rule\0secret"]));
        // Not the unkeyed hash an attacker could compute offline.
        let plain: [u8; 32] = Sha256::digest(b"rule\0secret").into();
        assert_ne!(a, plain);
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // RFC 4231 test case 1 uses a 20-byte key; HMAC pads keys to the block, so the same
        // key padded with zeros to 32 bytes gives the same MAC.
        let mut key = [0u8; 32];
        key[..20].copy_from_slice(&[0x0b; 20]);
        assert_eq!(
            hex(&hmac_sha256(&key, &[b"Hi There"])),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
    }

    #[test]
    fn fingerprint_depends_on_rule_and_secret_only() {
        assert_eq!(fingerprint("a", b"x"), fingerprint("a", b"x"));
        assert_ne!(fingerprint("a", b"x"), fingerprint("b", b"x"));
        assert_ne!(fingerprint("a", b"x"), fingerprint("a", b"y"));
    }
}
