//! `validate REPORT`: check the credentials of an earlier JSON Lines report (written with
//! `--show-secrets`) and give the report back with each one's `validation`, redacted as the
//! writers redact.

use super::{exit_code, FailOn};
use crate::model::{Finding, Validation};
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
    // A secret the report holds masked cannot be checked. The `redacted` flag is read only
    // to skip what it says is masked: the text decides whether a secret is in clear.
    let redacted = |v: &Value| {
        v["redacted"] == Value::Bool(true)
            || v["secret"].as_str().is_none_or(crate::report::is_masked)
    };
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
    for v in &mut lines {
        if redacted(v) && rule_of(v).is_some() {
            // Nothing to check it with: say so.
            let skipped = Validation::skipped(
                "redacted in the report (write it with --show-secrets)",
                None,
            );
            v["validation"] = serde_json::json!(skipped);
        }
    }
    // Every secret the report holds in clear is masked wherever it shows, whatever the
    // line's flags say: a context line can hold another finding's secret (or a key id's
    // finding, the secret beside it).
    if let Some(masker) = masker {
        let is_public = |id: &str| rules.iter().any(|r| r.id == id && r.public);
        let context = |c: &str, known: &[&str]| masker.mask_text(c, known);
        crate::report::Redact {
            public: &is_public,
            context: &context,
        }
        .findings(&mut lines);
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
