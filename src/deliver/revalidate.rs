//! `validate REPORT`: check the credentials of an earlier JSON Lines report (written with
//! `--show-secrets`) and give the report back with each one's `validation`, redacted as the
//! writers redact.

use super::{exit_code, FailOn};
use crate::model::{Finding, Secret, Validation};
use crate::respond::Audit;
use crate::rules::Rule;
use crate::scan::Scanner;
use serde_json::Value;

/// A report line that is not a JSON object.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: not a JSON finding")]
pub struct NotAFinding {
    pub line: usize,
}

/// The report again, and the exit code.
pub struct Revalidated {
    pub lines: Vec<Value>,
    pub code: i32,
}

/// Check the credentials in `text` (JSON Lines) that a rule of `rules` names a validator
/// for. With `masker`, every secret is redacted as the writers would: each finding's own, and
/// every secret in a context line, whether another finding's or one no finding holds.
pub fn revalidate(
    text: &str,
    rules: &[Rule],
    masker: Option<&Scanner>,
    opts: &crate::validate::Options,
    audit: &mut Audit,
    fail_on: FailOn,
) -> Result<Revalidated, NotAFinding> {
    let mut lines: Vec<Value> = Vec::new();
    for (n, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Value = serde_json::from_str(l).map_err(|_| NotAFinding { line: n + 1 })?;
        if !v.is_object() {
            return Err(NotAFinding { line: n + 1 });
        }
        lines.push(v);
    }
    let rule_of = |v: &Value| {
        let id = v["rule"].as_str()?;
        rules.iter().find(|r| r.id == id && r.validator.is_some())
    };
    let redacted = |v: &Value| v["redacted"] == Value::Bool(true);
    // The credential parts of the report, as findings, with the line each came from.
    let mut findings = Vec::new();
    let mut at = Vec::new();
    for (i, v) in lines.iter().enumerate() {
        let (Some(rule), false) = (rule_of(v), redacted(v)) else {
            continue;
        };
        let Some(secret) = v["secret"].as_str() else {
            continue;
        };
        let set = v["credential_set"].as_str().map(String::from);
        let path = v["path"].as_str().unwrap_or("");
        findings.push(Finding::from_report(rule, secret, set, path));
        at.push(i);
    }
    let checked = crate::validate::validate(&mut findings, opts);
    audit.validations(&checked);
    for (f, &i) in findings.iter().zip(&at) {
        lines[i]["validation"] = serde_json::json!(f.validation);
    }
    // Every secret the report holds in clear, to mask wherever it shows: a context line can
    // hold another finding's secret (or a key id's finding, the secret beside it).
    let public = |v: &Value| rule_of(v).is_some_and(|r| r.public);
    let known: Vec<String> = lines
        .iter()
        .filter(|v| !redacted(v) && !public(v))
        .filter_map(|v| v["secret"].as_str().map(String::from))
        .collect();
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    for v in &mut lines {
        if redacted(v) && rule_of(v).is_some() {
            // Nothing to check it with: say so.
            let skipped = Validation::skipped(
                "redacted in the report (write it with --show-secrets)",
                None,
            );
            v["validation"] = serde_json::json!(skipped);
        }
        let Some(masker) = masker else { continue };
        if let Some(c) = v["context"].as_str() {
            v["context"] = Value::String(masker.mask_text(c, &known));
        }
        if !public(v) && !redacted(v) {
            if let Some(s) = v["secret"].as_str() {
                v["secret"] = Value::String(Secret::new(s.as_bytes()).redacted());
                v["redacted"] = Value::Bool(true);
            }
            if let Some(o) = v.as_object_mut() {
                o.remove("entropy");
            }
        }
    }
    let judged: Vec<super::Judged> = lines
        .iter()
        .map(|v| {
            (
                serde_json::from_value(v["validation"]["status"].clone()).ok(),
                serde_json::from_value(v["reach"]["level"].clone()).ok(),
            )
        })
        .collect();
    // A report line is a finding: the same rule as for a scan.
    let code = exit_code(fail_on, judged, 0);
    Ok(Revalidated { lines, code })
}
