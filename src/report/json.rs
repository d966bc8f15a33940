//! JSON (one document with findings, warnings and a summary) and JSON Lines (one finding a
//! line). Secrets are redacted unless the report says to show them.

use super::Report;
use crate::model::{fingerprint_key_id, Finding};
use serde_json::json;
use std::io::{self, Write};

pub(super) fn write_json(r: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let doc = json!({
        "tool": "leakhound",
        "version": env!("CARGO_PKG_VERSION"),
        "rules_version": crate::rules::RULESET,
        "fingerprint_key_id": fingerprint_key_id(),
        "findings": r.findings.iter().map(|f| f.to_json(r.show_secrets)).collect::<Vec<_>>(),
        "warnings": r.warnings,
        "summary": r.summary,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

pub(super) fn write_jsonl(r: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    for f in r.findings {
        serde_json::to_writer(&mut *out, &f.to_json(r.show_secrets))?;
        writeln!(out)?;
    }
    Ok(())
}

/// A baseline: what identifies each accepted finding, and nothing of its secret. No context
/// line and no masked secret: a baseline is committed, and a context can hold other secrets.
pub fn write_baseline(findings: &[&Finding], out: &mut dyn Write) -> io::Result<()> {
    let doc = json!({
        "tool": "leakhound",
        "version": env!("CARGO_PKG_VERSION"),
        "fingerprint_key_id": fingerprint_key_id(),
        "findings": findings.iter().map(|f| json!({
            "rule": f.rule_id,
            "path": f.path(),
            "line": f.line,
            "column": f.column,
            "fingerprint": f.fingerprint,
            "provenance": f.provenance,
        })).collect::<Vec<_>>(),
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)?;
    out.flush()
}
