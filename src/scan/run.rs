//! The context of one scan: what it has collected so far, where warnings go as they happen,
//! and the progress counters. Every driver and the content pipeline get it as one argument.

use super::{admit::Skip, Progress, ScanResults};
use crate::model::Known;
use crate::model::{self, Finding, Warning};
use crate::policy::Policy;
use crate::rules::{Confidence, Rule};
use crate::source::Provenance;
use crate::sync::lock;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;
use std::time::Instant;

/// One scan in progress, shared by its worker threads.
pub(crate) struct Run<'a> {
    out: Mutex<ScanResults>,
    /// Every value kept so far, reported or left out (not the public ones): what masks the
    /// reported findings' contexts at the end. Learnt as findings come in, on the workers'
    /// threads: at the end, on one thread while the other cores idle, the table of a
    /// tree's 20,000 values took 13 ms of a 0.75 s scan. Locked after `out`, never before.
    known: Mutex<Known>,
    on_warning: &'a (dyn Fn(&Warning) + Sync),
    progress: &'a Progress,
    /// Decides which findings the baseline suppresses.
    policy: &'a Policy,
    /// Whether `out.units` is kept (`--list-scanned`).
    list: bool,
    /// Findings less sure than this are not reported: of them the run keeps only their
    /// values and their count ([`Run::thin`]). `None` keeps every finding whole.
    below: Option<Confidence>,
    start: Instant,
}

impl<'a> Run<'a> {
    pub fn new(
        policy: &'a Policy,
        progress: &'a Progress,
        on_warning: &'a (dyn Fn(&Warning) + Sync),
        list: bool,
        below: Option<Confidence>,
    ) -> Run<'a> {
        Run {
            out: Mutex::default(),
            known: Mutex::default(),
            on_warning,
            progress,
            policy,
            list,
            below,
            start: Instant::now(),
        }
    }

    /// Keep every finding whole, whatever its confidence: for a driver that files the same
    /// findings again under other names (an image's shared layers, once per image), which a
    /// count alone could not repeat.
    pub fn keeping_all(mut self) -> Run<'a> {
        self.below = None;
        self
    }

    /// Take out of `found` the findings the report will leave out for their confidence,
    /// keeping of each only its value (it still masks the contexts of reported findings:
    /// masking goes by value, at any confidence) and its count. A large file's findings at
    /// `low` outnumber the reported ones four to one, and a whole finding (its context lines,
    /// path, names) costs kilobytes; this is what keeps them out of memory while the rest of
    /// the input is scanned. Kept whole: a finding the baseline knows (it is written to a new
    /// baseline) and a part of a credential (validators annotate a set from all its members).
    pub fn thin(&self, found: &mut Vec<Finding>) {
        let thinned = self.take_thinned(found);
        if !thinned.is_empty() {
            self.learn(&thinned, &[]);
            self.file(&mut lock(&self.out), thinned, Vec::new());
        }
    }

    /// Whether a finding of `rule` at `confidence` is one [`Run::thin`] lets go: the report
    /// leaves out what is less sure than its level, and `rule` is no part of a credential,
    /// and no baseline could claim it. Such findings need no context or fingerprint
    /// (`model::findings_counting`), only what `thin` keeps of them.
    pub fn counts_only(&self, rule: &Rule, confidence: Confidence) -> bool {
        self.below.is_some_and(|min| confidence < min)
            && rule.validator.is_none()
            && !self.policy.has_baseline()
    }

    /// The findings of `found` that [`Run::thin`] lets go, taken out of it. Sorted out before
    /// any lock is taken: the workers' threads meet at the locks for every file they scan.
    fn take_thinned(&self, found: &mut Vec<Finding>) -> Vec<Finding> {
        let Some(min) = self.below else {
            return Vec::new();
        };
        if found.iter().all(|f| self.kept_whole(f, min)) {
            return Vec::new();
        }
        let (kept, thinned) = std::mem::take(found)
            .into_iter()
            .partition(|f| self.kept_whole(f, min));
        *found = kept;
        thinned
    }

    fn kept_whole(&self, f: &Finding, min: Confidence) -> bool {
        f.confidence >= min || f.part.is_some() || self.policy.in_baseline(f)
    }

    /// Learn the values of findings let go and kept (not the public ones): they mask the
    /// reported contexts at the end. Locks `known` alone.
    fn learn(&self, thinned: &[Finding], kept: &[Finding]) {
        let mut values = thinned
            .iter()
            .chain(kept)
            .filter_map(Finding::masking_value)
            .peekable();
        if values.peek().is_none() {
            return;
        }
        lock(&self.known).learn(values.map(|v| (v, 0)));
    }

    /// Learn secrets that are not findings of their own: those written in the texts a report
    /// shows beside a finding (a commit's subject), so that they are masked there.
    pub fn learn_values<'v>(&self, values: impl Iterator<Item = (&'v [u8], usize)>) {
        let mut values = values.peekable();
        if values.peek().is_some() {
            lock(&self.known).learn(values);
        }
    }

    /// File findings already learnt: those let go only counted, the others reported, or
    /// suppressed when the baseline knows them.
    fn file(&self, out: &mut ScanResults, thinned: Vec<Finding>, kept: Vec<Finding>) {
        out.left_out += thinned.len() as u64;
        let mut counted = thinned.len() as u64;
        for f in kept {
            if self.policy.in_baseline(&f) {
                out.suppressed.push(f);
            } else {
                counted += 1;
                out.findings.push(f);
            }
        }
        self.progress.findings.fetch_add(counted, Relaxed);
    }

    /// Report a per-input problem now and keep it for the report.
    pub fn warn(&self, path: impl Into<String>, message: impl Into<String>) {
        let w = Warning {
            path: path.into(),
            message: message.into(),
        };
        (self.on_warning)(&w);
        lock(&self.out).warnings.push(w);
    }

    /// An input not scanned: counted, named in the summary, and warned about when it may
    /// hide something the operator asked for (a size limit cuts what would be scanned).
    pub fn skip(&self, path: String, why: Skip) {
        self.skip_as(path.clone(), path, why)
    }

    /// [`Run::skip`] for a unit whose id is not its shown path (a git blob, a layer's file).
    pub fn skip_as(&self, unit: String, path: String, why: Skip) {
        if let Skip::Large(size) = why {
            let what = match size {
                Some(n) => format!("{n} bytes"),
                None => "its size".to_string(),
            };
            self.warn(
                path.clone(),
                format!("too large ({what} over the size limit); not scanned"),
            );
        }
        let mut out = lock(&self.out);
        let reason = match why {
            Skip::Binary => {
                out.summary.skipped_binary += 1;
                "binary"
            }
            Skip::Large(_) => {
                out.summary.skipped_large += 1;
                "too large"
            }
        };
        self.list_unit(&mut out, &unit, &format!("skipped: {reason}"));
        out.summary.skipped.push(model::Skipped {
            path,
            reason: reason.to_string(),
        });
    }

    /// An input that could not be read (already warned about); `named` on the command line
    /// fails the run.
    pub fn unreadable(&self, path: String, named: bool) {
        let mut out = lock(&self.out);
        out.summary.skipped_unreadable += 1;
        if named {
            out.summary.failed_inputs += 1;
        }
        self.list_unit(&mut out, &path, "unreadable");
        out.summary.skipped.push(model::Skipped {
            path,
            reason: "unreadable".to_string(),
        });
    }

    /// A unit of work (a blob, a layer) that failed and is counted nowhere else: warned about
    /// by the caller, and listed so a coverage audit sees it rather than a silent gap.
    pub fn failed(&self, unit: String, what: &str) {
        self.list_unit(&mut lock(&self.out), &unit, what);
    }

    /// A scanned input of `n` bytes and its findings. The one place a unit is counted
    /// scanned, so the summary's count and `--list-scanned` cannot disagree.
    pub fn scanned(&self, at: &Provenance, n: u64, mut found: Vec<Finding>) {
        self.progress.files.fetch_add(1, Relaxed);
        self.progress.bytes.fetch_add(n, Relaxed);
        let thinned = self.take_thinned(&mut found);
        self.learn(&thinned, &found);
        let mut out = lock(&self.out);
        // `unit` formats a line: only when the run keeps the list.
        if self.list {
            self.list_unit(&mut out, &unit(at), "");
        }
        out.summary.files += 1;
        out.summary.bytes += n;
        self.file(&mut out, thinned, found);
    }

    /// One line of the unit list, when the run keeps it.
    fn list_unit(&self, out: &mut ScanResults, unit: &str, marker: &str) {
        if self.list {
            out.units.push(listed(unit, marker));
        }
    }

    /// File findings as reported, or as suppressed when the baseline knows them; those the
    /// report leaves out for their confidence only counted, with their values ([`Run::thin`]).
    pub fn keep(&self, out: &mut ScanResults, mut found: Vec<Finding>) {
        let thinned = self.take_thinned(&mut found);
        self.learn(&thinned, &found);
        self.file(out, thinned, found);
    }

    /// What was collected so far, for a driver that revisits it (an image's shared layers).
    pub fn collected(&self) -> std::sync::MutexGuard<'_, ScanResults> {
        lock(&self.out)
    }

    /// The report: findings sorted and paired, totals counted, time taken.
    pub fn finish(self) -> ScanResults {
        let out = crate::sync::into_inner(self.out);
        let known = crate::sync::into_inner(self.known);
        super::finish(out, self.start, known)
    }
}

/// What identifies a unit of work whatever shard scans it: a git blob's id (and the path it
/// was introduced at: an archive's entries share their archive's blob), a layer's digest and
/// the path in it (a layer shared by images is scanned once, under either image's name), a
/// config's manifest digest and field, else the path shown.
pub fn unit(at: &Provenance) -> String {
    match at {
        Provenance::Git { blob, path, .. } => format!("{blob} {path}"),
        Provenance::Image {
            layer_digest: Some(digest),
            path,
            ..
        } => format!("{digest} {path}"),
        Provenance::Image { manifest, path, .. } => format!("{manifest} {path}"),
        other => other.display(),
    }
}

/// One line of `--list-scanned`: the unit, and a marker (tab-separated) when it was not
/// scanned whole. A backslash or control character in a path (an archive's entry may hold
/// NULs) is escaped as Rust writes it (`\n`, `\u{0}`): one unit, one line of text.
fn listed(unit: &str, marker: &str) -> String {
    let mut line = String::with_capacity(unit.len() + marker.len() + 1);
    for c in unit.chars() {
        if c == '\\' || c.is_control() {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
    }
    if !marker.is_empty() {
        line.push('\t');
        line.push_str(marker);
    }
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_listed_unit_is_one_line_of_text_whatever_its_path_holds() {
        let line = super::listed("a\tb\nc\0d\\e", "skipped: binary");
        assert_eq!(line, "a\\tb\\nc\\u{0}d\\\\e\tskipped: binary");
        assert_eq!(super::listed("src/x.py", ""), "src/x.py");
    }
}
