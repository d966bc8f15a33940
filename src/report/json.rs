//! JSON (one document with findings, warnings and a summary) and JSON Lines (one finding a
//! line). Secrets are redacted unless the report says to show them.

use super::{Finding, Report};
use serde_json::{json, Value};
use std::io::{self, Write};

/// The JSON object of one finding; the schema is documented in `docs/json.md`.
pub fn finding_json(f: &Finding, show: bool) -> Value {
    let mut v = json!({
        "rule": f.rule_id,
        "name": f.rule_name,
        "path": f.path(),
        "line": f.line,
        "column": f.column,
        "end_line": f.end_line,
        "start": f.start,
        "end": f.end,
        "secret": f.display_secret(show),
        "redacted": !(show || f.public),
        "fingerprint": f.fingerprint,
        "context": f.context.render(show),
        "encoding": f.encoding,
        "credential_set": f.credential_set,
        "provenance": f.provenance,
    });
    // Present only where they apply, so other findings keep their shape. The entropy of a
    // redacted secret is left out: with its length it narrows a guess.
    if show || f.public {
        v["entropy"] = json!((f.entropy * 100.0).round() / 100.0);
    }
    if let Some(a) = &f.aws_account {
        v["aws_account"] = json!(a);
    }
    if let Some(val) = &f.validation {
        v["validation"] = json!(val);
    }
    if !f.hooks.is_empty() {
        v["hooks"] = json!(f.hooks);
    }
    v
}

pub(super) fn write_json(r: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let doc = json!({
        "tool": "leakhound",
        "version": env!("CARGO_PKG_VERSION"),
        "rules_version": crate::rules::RULESET,
        "fingerprint_key_id": super::fingerprint_key_id(),
        "findings": r.findings.iter().map(|f| finding_json(f, r.show_secrets)).collect::<Vec<_>>(),
        "warnings": r.warnings,
        "summary": r.summary,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

pub(super) fn write_jsonl(r: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    for f in r.findings {
        serde_json::to_writer(&mut *out, &finding_json(f, r.show_secrets))?;
        writeln!(out)?;
    }
    Ok(())
}

/// A baseline: what identifies each accepted finding, and nothing of its secret. No context
/// line and no masked secret: a baseline is committed, and a context can hold other secrets.
pub fn write_baseline(findings: &[Finding], out: &mut dyn Write) -> io::Result<()> {
    let doc = json!({
        "tool": "leakhound",
        "version": env!("CARGO_PKG_VERSION"),
        "fingerprint_key_id": super::fingerprint_key_id(),
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
