//! The writers: human, json, jsonl, sarif, baselines, and the merge of earlier reports. Sinks: they format the findings
//! they are given and never decide what is a secret.

mod human;
mod json;
pub mod merge;
mod sarif;
pub mod shards;

use crate::model::{Finding, Record, ShardNotes, Summary, Warning};
use crate::rules::Rule;
use serde_json::Value;
use std::io::{self, Write};

pub use human::{printable, HumanOptions};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// A shard's notes, kept in its JSON report for the merge.
    pub notes: Option<&'a ShardNotes>,
    /// The key the findings were fingerprinted with: a JSON report names it
    /// (`fingerprint_key_id`), so reports and baselines under another key are refused.
    pub fingerprint_key: &'a crate::model::FingerprintKey,
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

pub use json::write_baseline;

use crate::model::Known;

/// Whether `s` is a secret's masked form ([`crate::model::Secret::redacted`]: at most four
/// characters, then `********`). An earlier report's `redacted` flag is not trusted (a record
/// may lack it, or be written by anything); its text is what it is.
pub fn is_masked(s: &str) -> bool {
    s.strip_suffix("********")
        .is_some_and(|prefix| prefix.chars().count() <= 4)
}

/// `s` as a report without `--show-secrets` shows it: masked, unless it already is.
pub fn remask(s: &str) -> String {
    if is_masked(s) {
        s.to_string()
    } else {
        crate::model::Secret::new(s.as_bytes()).redacted()
    }
}

/// How the findings of an earlier report are made safe to write again:
/// `report merge --shards` and `validate REPORT` read reports that may hold secrets in clear
/// (written with `--show-secrets`, or by hand, with or without a `redacted` flag), and write
/// them again redacted unless their own `--show-secrets` says otherwise.
pub struct Redact<'a> {
    /// Whether a rule's values are identifiers shown whole (AWS key ids), by rule id.
    pub public: &'a dyn Fn(&str) -> bool,
    /// A context line with each of the known secrets (and their encoded forms) and whatever
    /// a rule matches in it masked (`Scanner::mask_text`; the writers cannot scan).
    pub context: &'a dyn Fn(&str, &Known) -> String,
}

impl Redact<'_> {
    /// Mask every finding's secret (but a public one), its context, and each secret the
    /// report holds in clear wherever else it shows (any text field, and a field this
    /// version does not know).
    pub fn findings(&self, findings: &mut [Record]) {
        let public = |r: &Record| (self.public)(&r.rule);
        let known = known_of(
            findings
                .iter()
                .filter(|r| !public(r))
                .map(|r| r.secret.as_str()),
        );
        for r in findings.iter_mut() {
            let public = public(r);
            if !public {
                r.secret = remask(&r.secret);
                r.redacted = true;
                // The entropy of a secret is printed only beside a revealed one.
                r.entropy = None;
            }
            r.context = (self.context)(&r.context, &known);
            r.texts_mut(|s| *s = mask_known_text(s, &known));
        }
    }
}

/// The secrets an earlier report holds in clear (`values`, of which the masked forms and
/// empty ones are passed over), each with its encoded forms: what is masked wherever else
/// the report shows it.
pub fn known_of<'a>(values: impl IntoIterator<Item = &'a str>) -> Known {
    let mut known = Known::new();
    for v in values {
        if !v.is_empty() && !is_masked(v) {
            known.add(v.as_bytes(), 0);
        }
    }
    known
}

/// Every string in `v` with each of `known` masked where it occurs.
pub fn mask_known(v: &mut Value, known: &Known) {
    match v {
        Value::String(s) => *s = mask_known_text(s, known),
        Value::Array(a) => a.iter_mut().for_each(|x| mask_known(x, known)),
        Value::Object(o) => o.values_mut().for_each(|x| mask_known(x, known)),
        _ => {}
    }
}

/// `s` with each of `known` masked where it occurs, encoded forms too (a secret's
/// percent-encoded copy in a URL, its base64).
pub fn mask_known_text(s: &str, known: &Known) -> String {
    let found = known.find(s.as_bytes());
    if found.is_empty() {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for o in found {
        // Widened to whole characters: a value is ASCII more often than not, but its
        // neighbours need not be.
        let start = (0..=o.start.max(at)).rev().find(|&i| s.is_char_boundary(i));
        let end = (o.end..=s.len()).find(|&i| s.is_char_boundary(i));
        let (Some(start), Some(end)) = (start, end) else {
            continue;
        };
        if end <= at {
            continue;
        }
        out.push_str(&s[at..start]);
        out.push_str(&remask(&s[start..end]));
        at = end;
    }
    out.push_str(&s[at..]);
    out
}

/// A sequence serialized from an iterator, one element at a time, so that a report's
/// findings are written without a whole document of them in memory first. Taken when
/// serialized: an iterator goes once.
pub(super) struct Seq<I>(std::cell::RefCell<Option<I>>);

impl<I> Seq<I> {
    pub(super) fn new(items: I) -> Seq<I> {
        Seq(std::cell::RefCell::new(Some(items)))
    }
}

impl<I: Iterator> serde::Serialize for Seq<I>
where
    I::Item: serde::Serialize,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.borrow_mut().take() {
            Some(items) => s.collect_seq(items),
            None => Err(serde::ser::Error::custom("a sequence is written once")),
        }
    }
}
