//! The writers: human, json, jsonl, sarif, baselines, and the merge of earlier reports. Sinks: they format the findings
//! they are given and never decide what is a secret.

mod human;
mod json;
pub mod merge;
mod sarif;
pub mod shards;

use crate::model::{Finding, ShardNotes, Summary, Warning};
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

/// How the findings of an earlier report (JSON values) are made safe to write again:
/// `report merge --shards` and `validate REPORT` read reports that may hold secrets in clear
/// (written with `--show-secrets`, or by hand, with or without a `redacted` flag), and write
/// them again redacted unless their own `--show-secrets` says otherwise.
pub struct Redact<'a> {
    /// Whether a rule's values are identifiers shown whole (AWS key ids), by rule id.
    pub public: &'a dyn Fn(&str) -> bool,
    /// A context line with each of the known secrets and whatever a rule matches in it
    /// masked (`Scanner::mask_text`; the writers cannot scan).
    pub context: &'a dyn Fn(&str, &[&str]) -> String,
}

impl Redact<'_> {
    /// Mask every finding's secret (but a public one), its context, and each secret the
    /// report holds in clear wherever else it shows (a field a reader here does not know).
    pub fn findings(&self, findings: &mut [Value]) {
        let public = |v: &Value| v["rule"].as_str().is_some_and(|r| (self.public)(r));
        let known: Vec<String> = findings
            .iter()
            .filter(|v| !public(v))
            .filter_map(|v| v["secret"].as_str())
            .filter(|s| !s.is_empty() && !is_masked(s))
            .map(String::from)
            .collect();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        for v in findings.iter_mut() {
            let public = public(v);
            let Some(o) = v.as_object_mut() else { continue };
            for (k, x) in o.iter_mut() {
                match (k.as_str(), x) {
                    ("secret", Value::String(s)) if !public => *s = remask(s),
                    ("secret", _) => {}
                    ("context", Value::String(c)) => *c = (self.context)(c, &known),
                    (_, x) => mask_known(x, &known),
                }
            }
            if !public {
                o.insert("redacted".into(), Value::Bool(true));
                // The entropy of a secret is printed only beside a revealed one.
                o.remove("entropy");
            }
        }
    }
}

/// Every string in `v` with each of `known` masked where it occurs.
pub fn mask_known(v: &mut Value, known: &[&str]) {
    match v {
        Value::String(s) => *s = mask_known_text(s, known),
        Value::Array(a) => a.iter_mut().for_each(|x| mask_known(x, known)),
        Value::Object(o) => o.values_mut().for_each(|x| mask_known(x, known)),
        _ => {}
    }
}

/// `s` with each of `known` masked where it occurs.
pub fn mask_known_text(s: &str, known: &[&str]) -> String {
    let mut s = s.to_string();
    for k in known.iter().filter(|k| !k.is_empty()) {
        if s.contains(k) {
            s = s.replace(k, &remask(k));
        }
    }
    s
}
