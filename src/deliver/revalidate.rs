//! `validate REPORT`: check the credentials of an earlier JSON Lines report (written with
//! `--show-secrets`) and give the report back with each one's `validation`, redacted as the
//! writers redact.

use super::{exit_code, FailOn};
use crate::model::{Finding, Record, Validation};
use crate::respond::Audit;
use crate::rules::Rule;
use crate::scan::Scanner;
use serde_json::Value;

/// A report line that is not a leakhound finding.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: not a leakhound finding ({why})")]
pub struct NotAFinding {
    pub line: usize,
    pub why: String,
}

/// The report again, and the exit code.
pub struct Revalidated {
    pub lines: Vec<Record>,
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
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| (n + 1, l))
        .collect();
    // Every line is JSON before any is read as a finding: what is not JSON at all is named
    // first, wherever it is.
    let mut values = Vec::with_capacity(lines.len());
    for (n, l) in lines {
        let v: Value = serde_json::from_str(l).map_err(|_| NotAFinding {
            line: n,
            why: "not JSON".into(),
        })?;
        values.push((n, v));
    }
    let mut lines: Vec<Record> = Vec::with_capacity(values.len());
    for (n, v) in values {
        let r = Record::from_value(v).map_err(|e| NotAFinding {
            line: n,
            why: e.to_string(),
        })?;
        lines.push(r);
    }
    let rule_of = |r: &Record| {
        rules
            .iter()
            .find(|x| x.id == r.rule && x.validator.is_some())
    };
    // A secret the report holds masked cannot be checked. The `redacted` flag is read only
    // to skip what it says is masked: the text decides whether a secret is in clear.
    let redacted =
        |r: &Record| r.redacted || r.secret.is_empty() || crate::report::is_masked(&r.secret);
    // The credential parts of the report, as findings, with the line each came from.
    let mut findings = Vec::new();
    let mut at = Vec::new();
    for (i, r) in lines.iter().enumerate() {
        let (Some(rule), false) = (rule_of(r), redacted(r)) else {
            continue;
        };
        let set = r.credential_set.clone();
        findings.push(Finding::from_report(
            rule, &r.secret, set, &r.path, &opts.key,
        ));
        at.push(i);
    }
    let checked = crate::validate::validate(&mut findings, opts);
    audit.validations(&checked);
    for (f, &i) in findings.iter().zip(&at) {
        lines[i].validation = f.validation.clone();
    }
    for r in &mut lines {
        if redacted(r) && rule_of(r).is_some() {
            // Nothing to check it with: say so.
            let skipped = Validation::skipped(
                "redacted in the report (write it with --show-secrets)",
                None,
            );
            r.validation = Some(skipped);
        }
    }
    // Every secret the report holds in clear is masked wherever it shows, whatever the
    // line's flags say: a context line can hold another finding's secret (or a key id's
    // finding, the secret beside it).
    if let Some(masker) = masker {
        let is_public = |id: &str| rules.iter().any(|r| r.id == id && r.public);
        let context = |c: &str, known: &crate::model::Known| masker.mask_text(c, known);
        crate::report::Redact {
            public: &is_public,
            context: &context,
        }
        .findings(&mut lines);
    }
    let judged: Vec<super::Judged> = lines
        .iter()
        .map(|r| {
            (
                r.validation.as_ref().map(|v| v.status),
                r.reach.as_ref().map(|x| x.level),
            )
        })
        .collect();
    // A report line is a finding: the same rule as for a scan.
    let code = exit_code(fail_on, judged, 0);
    Ok(Revalidated { lines, code })
}
