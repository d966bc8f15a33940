//! The finding model: what every stage after the engine fills in and every writer reads.
//! Plain data and the rules that make it (fingerprints, contexts, redaction); it knows no
//! stage after itself, no source's workings and no flag.

mod fingerprint;
mod found;
mod known;
mod provenance;
mod reach;
mod record;
mod shard;
mod verdict;

pub use crate::engine::FingerprintKey;
pub use fingerprint::{hex, random_salt, BaselineKdf};
pub use found::{findings, findings_counting, findings_masked, place, Origin};
pub use known::{Known, Occurrence};
pub use provenance::{Commit, Provenance};
pub use reach::{severity, Reach, ReachFlag, ReachLevel, Severity};
pub use record::{report_order, BaselineEntry, Record, RecordError, PER_PLACE};
pub use shard::{whited_out, ImageLayers, Shard, ShardError, ShardNotes, Whiteouts};
pub use verdict::{now_rfc3339, rfc3339, unix_now, HookRun, Identity, Status, Validation};

pub use crate::rules::Confidence;
use std::time::Duration;

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

    /// The secret's bytes, for matching it elsewhere (masking by value); never for output.
    pub fn bytes(&self) -> &[u8] {
        &self.0
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

/// A run of token characters at least this long, with letters and digits and the entropy of
/// a generated value, is masked in a context whether or not a rule took it for a secret.
const RANDOM_RUN: usize = 20;

impl Context {
    /// `text` with `spans` (values known as secrets) masked as a context masks them, and
    /// every run that looks generated. For the other texts a report shows beside a context: a
    /// commit's subject (`prose`), or a variable's name, whose words are taken apart at `_`,
    /// `-` and `.` first (`MY_SERVICE_API_TOKEN_V2` is as varied as a generated run; the
    /// token in `TOKEN_ghp_…` is a word of it).
    pub fn masked(text: &str, spans: Vec<(usize, usize)>, prose: bool) -> String {
        let mut c = Context {
            text: text.to_string(),
            marks: Vec::new(),
        };
        if !spans.is_empty() {
            c.mask_spans(spans);
        }
        if prose {
            c.mask_random_runs();
        } else {
            c.mask_random(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/'));
        }
        c.render(false)
    }

    /// Mask `spans` of the text too (byte ranges, widened to whole characters), on top of the
    /// secrets already marked: values known as secrets elsewhere in the run.
    pub fn mask_spans(&mut self, spans: impl IntoIterator<Item = (usize, usize)>) {
        let text = &self.text;
        let widen = |(s, e): (usize, usize)| {
            let s = (0..=s.min(text.len()))
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            let e = (e.min(text.len())..=text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(text.len());
            (s, e)
        };
        let mut all: Vec<(usize, usize, Option<String>)> = self
            .marks
            .drain(..)
            .map(|(s, e, m)| (s, e, Some(m)))
            .chain(spans.into_iter().map(widen).map(|(s, e)| (s, e, None)))
            .filter(|(s, e, _)| e > s)
            .collect();
        all.sort_by_key(|(s, e, _)| (*s, std::cmp::Reverse(*e)));
        let mut merged: Vec<(usize, usize, Option<String>)> = Vec::with_capacity(all.len());
        for (s, e, m) in all {
            match merged.last_mut() {
                Some(last) if s < last.1 => {
                    // Overlapping marks become one, masked whole. A span inside a mark that
                    // already masks keeps that mark (and its short prefix); a public key id
                    // that a known value overlaps is no longer shown as it is.
                    let masks = last
                        .2
                        .as_ref()
                        .is_some_and(|shown| *shown != text[last.0..last.1]);
                    if e > last.1 || !masks {
                        last.1 = last.1.max(e);
                        last.2 = None;
                    }
                }
                _ => merged.push((s, e, m)),
            }
        }
        self.marks = merged
            .into_iter()
            .map(|(s, e, m)| (s, e, m.unwrap_or_else(|| "********".to_string())))
            .collect();
    }

    /// Mask every run of token characters that looks generated (see [`RANDOM_RUN`]): what a
    /// rule did not take for a secret may still be one, and a context is only there to
    /// locate the finding.
    pub fn mask_random_runs(&mut self) {
        // Not `=`: it joins a name to its value (`NAME=value`); base64's padding is no secret.
        self.mask_random(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'_' | b'-'));
    }

    /// [`Context::mask_random_runs`] over runs of the bytes `token` accepts.
    fn mask_random(&mut self, token: impl Fn(u8) -> bool) {
        let b = self.text.as_bytes();
        let mut runs = Vec::new();
        let marked = |s: usize, e: usize| self.marks.iter().any(|m| m.0 <= s && e <= m.1);
        let mut i = 0;
        while i < b.len() {
            if !token(b[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && token(b[i]) {
                i += 1;
            }
            let run = &b[start..i];
            if run.len() >= RANDOM_RUN
                && run.iter().any(u8::is_ascii_digit)
                && run.iter().any(u8::is_ascii_alphabetic)
                && crate::engine::shannon_entropy(run) >= 3.5
                && !marked(start, i)
            {
                runs.push((start, i));
            }
        }
        if !runs.is_empty() {
            self.mask_spans(runs);
        }
    }

    /// The context's text, as shown with `--show-secrets`: what a value is searched in.
    pub fn text(&self) -> &str {
        &self.text
    }

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

/// What part of a checkable credential a finding is, as its rule says (`validator = "aws"`,
/// `part = "secret"`): the validator named there pairs the parts and checks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialPart {
    pub validator: String,
    pub part: String,
}

/// A fact a validator read from a finding offline (an AWS key id's account): `key` in JSON,
/// `label` for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub key: &'static str,
    pub label: &'static str,
    pub value: String,
}

/// One secret at one place.
#[derive(Debug, Clone)]
pub struct Finding {
    pub rule_id: String,
    pub rule_name: String,
    /// How sure this is to be a secret: its rule's confidence, moved by the value and its place
    /// ([`crate::engine::confidence`]).
    pub confidence: Confidence,
    /// Why it has that confidence, in fixed words (`"test path"`, `"weak value"`,
    /// `"checksum failed"`, ...: [`crate::engine::confidence::judge`]).
    pub reasons: Vec<&'static str>,
    pub provenance: Provenance,
    /// 1-based line and column (in characters) of the secret's first byte; in UTF-16 text,
    /// of the decoded text, whose line is also the context.
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    /// Byte span of the secret in the scanned blob: the blob's own bytes, also when the
    /// secret was found in a decoded view (UTF-16 text, base64).
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
    /// The credential this finding is part of, if its rule names a validator.
    pub part: Option<CredentialPart>,
    /// Shared by the findings that form one credential (an AWS key id, its secret and session
    /// token): what a validator checks together.
    pub credential_set: Option<String>,
    /// What a validator read from the finding offline.
    pub annotations: Vec<Annotation>,
    /// Set by validation: whether the credential is live.
    pub validation: Option<Validation>,
    /// Set by `--reach` for a live credential: what it can do.
    pub reach: Option<Reach>,
    /// The operator's hooks that ran on this finding.
    pub hooks: Vec<HookRun>,
}

impl Finding {
    /// The value this finding has masked wherever it appears, in every context of the run:
    /// its secret, unless that is an identifier shown whole.
    pub fn masking_value(&self) -> Option<&[u8]> {
        (!self.public).then(|| self.secret.bytes())
    }

    /// A finding read back from a JSON report: enough to validate it (rule, secret, set).
    pub fn from_report(
        rule: &crate::rules::Rule,
        secret: &str,
        credential_set: Option<String>,
        path: &str,
        key: &FingerprintKey,
    ) -> Finding {
        let secret = secret.as_bytes();
        let (confidence, reasons) = crate::engine::confidence::judge(rule, secret, path, b"");
        Finding {
            rule_id: rule.id.clone(),
            rule_name: rule.name.clone(),
            confidence,
            reasons,
            provenance: Provenance::Stream {
                name: path.to_string(),
            },
            line: 0,
            column: 0,
            end_line: 0,
            start: 0,
            end: 0,
            secret: Secret::new(secret),
            public: rule.public,
            fingerprint: key.fingerprint(&rule.id, secret),
            entropy: crate::engine::shannon_entropy(secret),
            context: Context::default(),
            encoding: None,
            part: found::part(rule),
            credential_set,
            annotations: Vec::new(),
            validation: None,
            reach: None,
            hooks: Vec::new(),
        }
    }

    /// Mark this finding as found in a decoded view, with the decoded secret (fingerprinted
    /// under `key`, as the plain one was).
    pub fn decoded(
        mut self,
        encoding: crate::decode::Encoding,
        secret: &[u8],
        key: &FingerprintKey,
    ) -> Finding {
        self.secret = Secret::new(secret);
        self.fingerprint = key.fingerprint(&self.rule_id, secret);
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

    /// Whether this finding is a part of a credential that validator `name` checks.
    pub fn is_part_of(&self, name: &str) -> bool {
        self.part.as_ref().is_some_and(|p| p.validator == name)
    }
}

/// A problem with one input that did not stop the scan.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Warning {
    pub path: String,
    pub message: String,
}

/// Totals for the summary line and the JSON report. Nothing is skipped without being counted
/// here, and named in `skipped` where its path is known.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub files: u64,
    pub bytes: u64,
    pub findings: u64,
    pub suppressed: u64,
    /// Findings left out for being less sure than `--min-confidence`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub below_confidence: u64,
    pub skipped_binary: u64,
    pub skipped_large: u64,
    /// Entries (files, or whole directories) that ignore files excluded.
    pub skipped_ignored: u64,
    /// Inputs that could not be read (each also a warning).
    pub skipped_unreadable: u64,
    /// Of those, inputs named on the command line: the run fails (exit 2).
    pub failed_inputs: u64,
    pub warnings: u64,
    #[serde(serialize_with = "ser_secs", deserialize_with = "de_secs")]
    pub elapsed: Duration,
    /// Each file skipped, with why.
    pub skipped: Vec<Skipped>,
    /// Validation endpoints the operator's `--config` overrode and this run used
    /// (`github -> http://127.0.0.1:8080`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoint_overrides: Vec<String>,
}

/// A file not scanned, and why: `binary`, `too large`, `unreadable`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0).round() / 1000.0)
}

fn de_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = <f64 as serde::Deserialize>::deserialize(d)?;
    Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
}

/// Human byte counts: `512 B`, `1.5 KB`, `300.2 MB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

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
}
