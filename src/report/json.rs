//! JSON (one document with findings, warnings and a summary) and JSON Lines (one finding a
//! line). Secrets are redacted unless the report says to show them.

use super::{Report, Seq};
use crate::model::{
    random_salt, BaselineEntry, BaselineKdf, Finding, Record, ShardNotes, Summary, Warning,
};
use serde_json::json;
use std::io::{self, Write};

pub(super) fn write_json(r: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let findings = r.findings.iter().map(|f| f.record(r.show_secrets));
    let key = r.fingerprint_key.id();
    write_document(findings, r.warnings, r.summary, r.notes, &key, out)
}

/// The JSON report of findings as records: a scan's, or shards' merged.
/// `key_id` names the fingerprint key the findings were made with. Written as it is
/// serialized, each finding's record made as its turn comes: a document built whole first
/// (a `serde_json::Value` of every record) cost a large file's report more memory than its
/// scan did.
pub(super) fn write_document(
    findings: impl Iterator<Item = Record>,
    warnings: &[Warning],
    summary: &Summary,
    notes: Option<&ShardNotes>,
    key_id: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let doc = Document {
        findings: Seq::new(findings),
        warnings,
        summary,
        notes,
        key_id,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// The report's fields in the order its readers and golden files know.
struct Document<'a, I> {
    findings: Seq<I>,
    warnings: &'a [Warning],
    summary: &'a Summary,
    notes: Option<&'a ShardNotes>,
    key_id: &'a str,
}

impl<I: Iterator<Item = Record>> serde::Serialize for Document<'_, I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("tool", "leakhound")?;
        m.serialize_entry("version", env!("CARGO_PKG_VERSION"))?;
        m.serialize_entry("rules_version", crate::rules::RULESET)?;
        m.serialize_entry("fingerprint_key_id", self.key_id)?;
        m.serialize_entry("findings", &self.findings)?;
        m.serialize_entry("warnings", self.warnings)?;
        m.serialize_entry("summary", self.summary)?;
        if let Some(n) = self.notes {
            m.serialize_entry("shard", n)?;
        }
        m.end()
    }
}

pub(super) fn write_jsonl(r: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    write_lines(r.findings.iter().map(|f| f.record(r.show_secrets)), out)
}

/// One finding a line.
pub(super) fn write_lines(
    findings: impl Iterator<Item = Record>,
    out: &mut dyn Write,
) -> io::Result<()> {
    for f in findings {
        serde_json::to_writer(&mut *out, &f)?;
        writeln!(out)?;
    }
    Ok(())
}

/// A baseline: what identifies each accepted finding, and nothing of its secret. No context
/// line and no masked secret: a baseline is committed, and a context can hold other secrets.
/// Each secret is kept as a salted, memory-hard hash ([`BaselineKdf`]) with no machine's key
/// in it, so the baseline works on every machine; the same secret in two places hashes once.
pub fn write_baseline(findings: &[&Finding], out: &mut dyn Write) -> io::Result<()> {
    let salt = random_salt();
    let kdf = BaselineKdf::DEFAULT;
    let mut hashed: std::collections::HashMap<&str, String> = Default::default();
    let mut entries = Vec::with_capacity(findings.len());
    for f in findings {
        let h = match hashed.get(f.fingerprint.as_str()) {
            Some(h) => h.clone(),
            None => {
                let h = kdf
                    .hash(&salt, &f.rule_id, f.secret.bytes())
                    .ok_or_else(|| io::Error::other("the baseline hash could not be made"))?;
                hashed.insert(&f.fingerprint, h.clone());
                h
            }
        };
        entries.push(BaselineEntry {
            rule: f.rule_id.clone(),
            path: f.path(),
            line: f.line as u64,
            column: f.column as u64,
            argon2: h,
            provenance: Some(f.provenance.clone()),
        });
    }
    let doc = json!({
        "tool": "leakhound",
        "version": env!("CARGO_PKG_VERSION"),
        "baseline": {"format": 2, "kdf": "argon2id", "m_kib": kdf.m_kib, "t": kdf.t, "p": 1,
                     "salt": crate::model::hex(&salt)},
        "findings": entries,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)?;
    out.flush()
}
