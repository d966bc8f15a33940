//! The stage after the scan, over an owned outcome: validate -> respond (hooks) -> audit ->
//! write -> baseline -> exit code. The CLI gathers the settings and calls [`deliver`]; the
//! exit-code rule is [`exit_code`], with one exception outside it: `runtime-audit` also exits
//! 1 on an IMDSv1 endpoint with no finding (`cli/scan.rs`), an exposure that is no finding.

mod revalidate;

pub use revalidate::{revalidate, Revalidated};

use crate::model::{Confidence, Finding, ReachLevel, Status};
use crate::report::{self, Format, HumanOptions, Report};
use crate::respond::{Audit, OperatorHook};
use crate::rules::Rule;
use crate::scan::ScanResults;
use std::collections::BTreeMap;
use std::io::Write;

/// No findings (or none that fail the run).
pub const EXIT_CLEAN: i32 = 0;
/// Findings that fail the run.
pub const EXIT_FINDINGS: i32 = 1;
/// An error, or an input named by the operator that could not be read.
pub const EXIT_ERROR: i32 = 2;

/// What makes the exit code 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// Any finding.
    Any,
    /// A credential validation found live.
    Live,
    /// Nothing.
    None,
    /// A live credential reaching further than this (`runtime-audit --max-reach`): one whose
    /// reach could not be read (`unknown`, or none read) counts as reaching everything.
    Reach(ReachLevel),
}

impl FailOn {
    /// Whether findings with these validation statuses (`None`: not validated) and reach
    /// levels fail the run.
    pub fn fails(self, judged: impl IntoIterator<Item = Judged>) -> bool {
        let mut judged = judged.into_iter();
        match self {
            FailOn::Any => judged.next().is_some(),
            FailOn::Live => judged.any(|(s, _)| s == Some(Status::Live)),
            FailOn::None => false,
            FailOn::Reach(max) => judged.any(|(s, r)| {
                s == Some(Status::Live)
                    && reach_rank(r.unwrap_or(ReachLevel::Unknown)) > reach_rank(max)
            }),
        }
    }
}

/// What the exit code looks at in a finding: its validation status, and its reach.
pub type Judged = (Option<Status>, Option<ReachLevel>);

/// Reach levels from none to admin; not knowing is as bad as the worst.
fn reach_rank(r: ReachLevel) -> u8 {
    match r {
        ReachLevel::None => 0,
        ReachLevel::ReadOnly => 1,
        ReachLevel::Write => 2,
        ReachLevel::Admin | ReachLevel::Unknown => 3,
    }
}

/// The exit code: an unreadable input named by the operator fails the run whatever was found
/// (2); then findings that `fail_on` counts, given their validation statuses (1); else 0.
pub fn exit_code(
    fail_on: FailOn,
    judged: impl IntoIterator<Item = Judged>,
    failed_inputs: u64,
) -> i32 {
    if failed_inputs > 0 {
        EXIT_ERROR
    } else if fail_on.fails(judged) {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

/// Each finding's validation status and reach, as [`exit_code`] takes them.
pub fn judged(findings: &[Finding]) -> impl Iterator<Item = Judged> + '_ {
    findings.iter().map(|f| {
        (
            f.validation.as_ref().map(|v| v.status),
            f.reach.as_ref().map(|r| r.level),
        )
    })
}

/// How to deliver an outcome.
pub struct Delivery<'a> {
    /// Check credentials with their validators (also when `fail_on` is `Live`).
    pub validate: bool,
    pub validation: crate::validate::Options,
    /// After validation, read what each live credential can do (`--reach`).
    pub reach: bool,
    pub hooks: &'a [OperatorHook],
    pub audit: Audit,
    pub fail_on: FailOn,
    pub format: Format,
    pub human: HumanOptions,
    pub show_secrets: bool,
    /// Findings less sure than this are left out of the report (and counted).
    pub min_confidence: Confidence,
}

/// What was delivered: the exit code, how many findings the report shows, and how many
/// credentials each validation status got.
#[derive(Debug)]
pub struct Delivered {
    pub code: i32,
    pub reported: usize,
    pub validated: BTreeMap<&'static str, usize>,
}

/// Validate, run hooks, audit, write the report to `out` and the baseline (every finding,
/// suppressed ones included) to `baseline`, and pick the exit code.
pub fn deliver(
    o: &mut ScanResults,
    rules: &[Rule],
    mut d: Delivery<'_>,
    out: &mut dyn Write,
    baseline: Option<&mut dyn Write>,
) -> std::io::Result<Delivered> {
    let before = o.findings.len();
    o.findings.retain(|f| f.confidence >= d.min_confidence);
    // With those the scan already let go of and only counted.
    o.summary.below_confidence = (before - o.findings.len()) as u64 + o.left_out;
    o.summary.findings = o.findings.len() as u64;
    let mut validated = BTreeMap::new();
    if d.validate || matches!(d.fail_on, FailOn::Live | FailOn::Reach(_)) {
        let checked = crate::validate::validate(&mut o.findings, &d.validation);
        d.audit.validations(&checked);
        for c in &checked {
            *validated.entry(c.validation.status.as_str()).or_insert(0) += 1;
        }
        // Each override in use is said in the report: a secret sent somewhere other than its
        // provider's documented host is never silent.
        let mut overrides: Vec<String> = checked
            .iter()
            .filter(|c| c.endpoint.as_ref().is_some_and(|(_, o)| *o))
            .filter_map(|c| {
                let base = d.validation.endpoints.get(c.validator)?;
                Some(format!("{} -> {base}", c.validator))
            })
            .collect();
        overrides.sort();
        overrides.dedup();
        for o in &overrides {
            eprintln!("leakhound: validation endpoint overridden by --config: {o}");
        }
        o.summary.endpoint_overrides = overrides;
        // Before the hooks, so each hook gets the reach in the finding it is handed.
        if d.reach {
            let reached = crate::validate::reach(&mut o.findings, &d.validation);
            d.audit.reach(&reached);
        }
    }
    let (findings, known) = o.findings_and_known();
    crate::respond::run_hooks(findings, known, d.hooks, &d.validation, &mut d.audit);
    let report = Report {
        findings: &o.findings,
        warnings: &o.warnings,
        summary: &o.summary,
        rules,
        show_secrets: d.show_secrets,
        notes: o.notes.as_ref(),
        // The run's key, which the findings were made and the credentials cached with.
        fingerprint_key: &d.validation.key,
    };
    report::write(d.format, &report, &d.human, out)?;
    if let Some(b) = baseline {
        let mut all: Vec<&Finding> = o.findings.iter().chain(&o.suppressed).collect();
        all.sort_by_key(|f| (f.path(), f.start));
        report::write_baseline(&all, b)?;
    }
    Ok(Delivered {
        code: exit_code(d.fail_on, judged(&o.findings), o.summary.failed_inputs),
        reported: o.findings.len(),
        validated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_rule() {
        let none: [Judged; 0] = [];
        let s = |s: Option<Status>| (s, None);
        assert!(!FailOn::Any.fails(none));
        assert!(FailOn::Any.fails([s(None)]));
        assert!(!FailOn::Live.fails([s(None), s(Some(Status::Invalid))]));
        assert!(FailOn::Live.fails([s(Some(Status::Unknown)), s(Some(Status::Live))]));
        assert!(!FailOn::None.fails([s(Some(Status::Live))]));
        assert_eq!(exit_code(FailOn::None, none, 1), EXIT_ERROR);
        assert_eq!(exit_code(FailOn::Any, [s(None)], 2), EXIT_ERROR);
        assert_eq!(exit_code(FailOn::Any, [s(None)], 0), EXIT_FINDINGS);
        assert_eq!(exit_code(FailOn::Any, none, 0), EXIT_CLEAN);
        // --max-reach read-only: a live admin fails, a live reader or a dead admin does not,
        // and a live credential whose reach is unknown fails.
        let max = FailOn::Reach(ReachLevel::ReadOnly);
        let live = Some(Status::Live);
        assert!(max.fails([(live, Some(ReachLevel::Admin))]));
        assert!(!max.fails([(live, Some(ReachLevel::ReadOnly)), (None, None)]));
        assert!(!max.fails([(Some(Status::Invalid), Some(ReachLevel::Admin))]));
        assert!(max.fails([(live, Some(ReachLevel::Unknown))]));
        assert!(max.fails([(live, None)]));
        assert!(!FailOn::Reach(ReachLevel::Admin).fails([(live, None)]));
    }
}
