//! JSON (one document with findings, warnings and a summary) and JSON Lines (one finding a
//! line). Secrets are redacted unless the report says to show them.

use super::Report;
use crate::model::{
    random_salt, BaselineEntry, BaselineKdf, Finding, Record, ShardNotes, Summary, Warning,
};
use serde_json::json;
use std::io::{self, Write};

pub(super) fn write_json(r: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let key = r.fingerprint_key.id();
    write_document(
        r.findings,
        |f| f.record(r.show_secrets),
        r.warnings,
        r.summary,
        r.notes,
        &key,
        out,
    )
}

/// Findings serialized together before they are written: a batch's records are made and
/// printed on every core, and no more than a batch is held at a time.
const BATCH: usize = 4096;

/// The JSON report of findings as records: a scan's, or shards' merged. `record` makes each
/// finding's record. `key_id` names the fingerprint key the findings were made with.
///
/// The document is what `serde_json::to_writer_pretty` writes, byte for byte, but its
/// findings are printed a batch at a time on every core, each at the depth where it sits,
/// and written in order: on one core this was a directory scan's longest step after the
/// last file, with the other core idle. A document built whole first (a `serde_json::Value`
/// of every record) cost a large file's report more memory than its scan did.
pub(super) fn write_document<T: Sync, R: serde::Serialize>(
    findings: &[T],
    record: impl Fn(&T) -> R + Sync,
    warnings: &[Warning],
    summary: &Summary,
    notes: Option<&ShardNotes>,
    key_id: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    use rayon::prelude::*;
    out.write_all(b"{\n")?;
    for (name, value) in [
        ("tool", "leakhound"),
        ("version", env!("CARGO_PKG_VERSION")),
        ("rules_version", crate::rules::RULESET),
        ("fingerprint_key_id", key_id),
    ] {
        writeln!(out, "  {}: {},", quoted(name), quoted(value))?;
    }
    out.write_all(b"  \"findings\": [")?;
    for (i, batch) in findings.chunks(BATCH).enumerate() {
        let printed: Vec<Vec<u8>> = batch
            .par_chunks(64)
            .map(|part| {
                let mut buf = Vec::new();
                for f in part {
                    buf.extend_from_slice(b",\n    ");
                    nested(&record(f), 2, &mut buf)?;
                }
                Ok(buf)
            })
            .collect::<io::Result<_>>()?;
        for (j, buf) in printed.iter().enumerate() {
            // Each element after a comma but the first of all.
            let first = i == 0 && j == 0;
            out.write_all(if first { &buf[1..] } else { buf })?;
        }
    }
    out.write_all(if findings.is_empty() { b"]" } else { b"\n  ]" })?;
    out.write_all(b",\n  \"warnings\": ")?;
    nested(&warnings, 1, out)?;
    out.write_all(b",\n  \"summary\": ")?;
    nested(summary, 1, out)?;
    if let Some(n) = notes {
        out.write_all(b",\n  \"shard\": ")?;
        nested(n, 1, out)?;
    }
    out.write_all(b"\n}\n")
}

fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// `value` pretty-printed as it is `depth` levels into a document: printed alone, then each
/// line after its first indented by the levels. JSON strings hold no raw line breaks (they
/// are escaped), so every `\n` printed is between lines.
fn nested<W: Write + ?Sized>(
    value: &impl serde::Serialize,
    depth: usize,
    out: &mut W,
) -> io::Result<()> {
    let alone = serde_json::to_vec_pretty(value)?;
    let indent = &b"        "[..2 * depth];
    let mut lines = alone.split(|&b| b == b'\n');
    if let Some(first) = lines.next() {
        out.write_all(first)?;
    }
    for line in lines {
        out.write_all(b"\n")?;
        out.write_all(indent)?;
        out.write_all(line)?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The document as `serde_json` prints it whole, which readers and golden files know.
    fn whole(
        findings: &[Value],
        warnings: &[Warning],
        summary: &Summary,
        notes: Option<&ShardNotes>,
    ) -> Vec<u8> {
        let mut doc = serde_json::Map::new();
        doc.insert("tool".into(), "leakhound".into());
        doc.insert("version".into(), env!("CARGO_PKG_VERSION").into());
        doc.insert("rules_version".into(), crate::rules::RULESET.into());
        doc.insert("fingerprint_key_id".into(), "k\"ey\n".into());
        doc.insert("findings".into(), findings.into());
        doc.insert("warnings".into(), serde_json::to_value(warnings).unwrap());
        doc.insert("summary".into(), serde_json::to_value(summary).unwrap());
        if let Some(n) = notes {
            doc.insert("shard".into(), serde_json::to_value(n).unwrap());
        }
        let mut out = serde_json::to_vec_pretty(&doc).unwrap();
        out.push(b'\n');
        out
    }

    #[test]
    fn the_document_is_what_serde_json_prints_whole_byte_for_byte() {
        // Records of every shape a nested value takes: empty and full arrays and objects,
        // strings with escaped line breaks, quotes and non-ASCII, numbers, null.
        let record = |i: usize| {
            json!({
                "rule": format!("r{i}"),
                "context": "a \"quoted\"\n line\tand ünï 😀",
                "reasons": if i.is_multiple_of(3) { json!([]) } else { json!(["one", "two"]) },
                "provenance": {"kind": "file", "path": format!("/p/{i}"), "nested": {"deep": [i, null, {}]}},
                "line": i,
            })
        };
        let warnings = [Warning {
            path: "a\nb".into(),
            message: "cannot read".into(),
        }];
        let summary = Summary {
            files: 3,
            skipped: vec![crate::model::Skipped {
                path: "x".into(),
                reason: "binary".into(),
            }],
            ..Summary::default()
        };
        let notes = ShardNotes {
            index: 1,
            total: 2,
            ..ShardNotes::default()
        };
        // None, one, more than a part of a batch, more than a batch.
        for n in [0, 1, 65, BATCH + 70] {
            let findings: Vec<Value> = (0..n).map(record).collect();
            for (w, notes) in [(&[][..], None), (&warnings[..], Some(&notes))] {
                let mut ours = Vec::new();
                write_document(
                    &findings,
                    Value::clone,
                    w,
                    &summary,
                    notes,
                    "k\"ey\n",
                    &mut ours,
                )
                .unwrap();
                let want = whole(&findings, w, &summary, notes);
                assert!(
                    ours == want,
                    "{n} findings:\n{}",
                    String::from_utf8_lossy(&ours)
                );
            }
        }
    }
}
