//! The pipeline: source -> engine -> policy -> findings.
//!
//! - [`admit`]: one decision per blob, the same for every source (skip, open as an archive,
//!   read as a notebook, an env-shaped file or text).
//! - `content`: the content pipeline (bytes in, findings out; the content cache, chunking).
//! - `run`: the context one scan carries (what it collected, warnings, progress).
//! - the drivers, one per kind of input: `files` (directories, files, standard input),
//!   `archive`, `git`, `image`, `env`.

pub mod admit;
mod archive;
mod chunks;
mod content;
mod env;
mod files;
mod git;
mod image;
mod own_report;
mod run;

use crate::engine::Engine;
use crate::model::{Finding, ShardNotes, Summary, Warning};
use crate::policy::Policy;
use crate::source::{self, Blob};
use admit::{Admission, Admit, Nul};
use run::Run;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub use git::GitOptions;
pub use image::ImageOptions;

/// Counters a progress display may read while the scan runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub files: AtomicU64,
    pub bytes: AtomicU64,
    pub findings: AtomicU64,
}

/// What a scan produced, before any writer sees it: the findings, the suppressed ones, the
/// warnings and the totals (`Summary`). Not `rules::validator::Outcome`, a validator's verdict.
#[derive(Debug, Default)]
pub struct ScanResults {
    /// Findings to report, sorted by path and position.
    pub findings: Vec<Finding>,
    /// Findings the baseline suppressed (kept so a new baseline can include them).
    pub suppressed: Vec<Finding>,
    pub warnings: Vec<Warning>,
    pub summary: Summary,
    /// For a shard's report: what merging it with the other shards' needs.
    pub notes: Option<ShardNotes>,
    /// Every unit of work the run met, one line each, sorted (`--list-scanned`): ids and
    /// paths only, never content; a unit skipped or failed carries a marker. Empty unless
    /// the scanner was asked to list (`Scanner::listing_units`).
    pub units: Vec<String>,
    /// How many findings the report leaves out for their confidence (`Scanner::reporting`):
    /// counted, not held whole. Their values are in `known`.
    pub left_out: u64,
    /// Every value of the run's findings, kept, suppressed or left out: what masked the
    /// contexts, and masks them again when results are merged. Kept with the results and let
    /// go of with them: freed one by one at a run's end, while the report waited, they took
    /// a sixth of the time after the walk (the CLI lets go of the results on a thread of
    /// its own).
    known: crate::model::Known,
}

/// An engine and a policy, shared by every worker thread.
pub struct Scanner {
    engine: Engine,
    policy: Policy,
    seen: Mutex<HashMap<u128, Arc<content::Scanned>>>,
    /// Open archives and compressed files met by a scan (None: scan them as they are).
    archives: Option<Archives>,
    /// Keep the list of units met (`--list-scanned`); off, a run lists nothing.
    list_units: bool,
    /// The report's `--min-confidence`: less sure findings are only counted and their
    /// values kept (`Scanner::reporting`). `None` keeps every finding.
    report_from: Option<crate::rules::Confidence>,
    pub progress: Progress,
}

/// How files inside archives are treated.
#[derive(Debug, Clone)]
pub struct Archives {
    pub limits: source::archive::Limits,
    /// Scan entries that look binary too.
    pub binary: bool,
}

impl Scanner {
    pub fn new(engine: Engine, policy: Policy) -> Scanner {
        Scanner {
            engine,
            policy,
            seen: Mutex::default(),
            archives: None,
            list_units: false,
            report_from: None,
            progress: Progress::default(),
        }
    }

    /// Open archives and compressed files (zip, tar, gzip, ...) and scan what they hold.
    pub fn with_archives(mut self, archives: Option<Archives>) -> Scanner {
        self.archives = archives;
        self
    }

    /// Keep, in each run's results, every unit it met (`ScanResults::units`): a line per
    /// blob, kept to the end of the run, so only when someone asked for the list.
    pub fn listing_units(mut self, on: bool) -> Scanner {
        self.list_units = on;
        self
    }

    /// The report will leave out findings less sure than `min`: a run keeps of them only
    /// their count (`ScanResults::left_out`) and values, so that a large input's many `low`
    /// findings do not stay in memory to the end of the run. A caller that reads
    /// `ScanResults::findings` at every confidence leaves this unset.
    pub fn reporting(mut self, min: crate::rules::Confidence) -> Scanner {
        self.report_from = Some(min);
        self
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// A new run reporting warnings to `on_warning`.
    fn run<'a>(&'a self, on_warning: &'a (dyn Fn(&Warning) + Sync)) -> Run<'a> {
        Run::new(
            &self.policy,
            &self.progress,
            on_warning,
            self.list_units,
            self.report_from,
        )
    }

    /// The admission's options for a source's choices.
    fn admit_opts(&self, binary: bool, max_size: Option<u64>) -> Admit {
        Admit {
            binary,
            archives: self.archives.is_some(),
            max_size,
        }
    }

    /// One blob held whole, from any source: admitted, then skipped, opened as an archive,
    /// or scanned in its form. Returns the scanned blob (its NULs read as the admission
    /// said) with its findings and how its NULs were read, for the caller to filter and
    /// count; `None` when there is nothing more to do (allowed, skipped, or an archive whose
    /// files were scanned).
    fn take(&self, run: &Run, mut blob: Blob, opts: &Admit) -> Option<(Blob, Vec<Finding>, Nul)> {
        let path = blob.provenance.display();
        if self.policy.path_allowed(&path) {
            return None;
        }
        let size = blob.data.len() as u64;
        match admit::admit(blob.provenance.name(), &blob.data, size, opts) {
            Admission::Skip(why) => {
                run.skip_as(run::unit(&blob.provenance), path, why);
                None
            }
            Admission::Archive(_) => {
                self.archive(run, &blob);
                None
            }
            Admission::Scan(how) => {
                how.nul.apply(&mut blob.data);
                let found = self.content(run, &blob, how.form);
                Some((blob, found, how.nul))
            }
        }
    }

    /// [`Scanner::take`], counting the blob and filing its findings.
    fn file(&self, run: &Run, blob: Blob, opts: &Admit) {
        if let Some((blob, found, _)) = self.take(run, blob, opts) {
            run.scanned(&blob.provenance, blob.data.len() as u64, found);
        }
    }
}

impl ScanResults {
    /// The findings to act on, beside every value of the run's findings, reported or not
    /// (see the field).
    pub fn findings_and_known(&mut self) -> (&mut [Finding], &crate::model::Known) {
        (&mut self.findings, &self.known)
    }

    /// Two scans' results as one report.
    pub fn merge(mut self, other: ScanResults) -> ScanResults {
        self.findings.extend(other.findings);
        self.suppressed.extend(other.suppressed);
        self.warnings.extend(other.warnings);
        self.summary.add(&other.summary);
        self.units.extend(other.units);
        self.left_out += other.left_out;
        let mut known = std::mem::take(&mut self.known);
        known.absorb(other.known);
        match (&mut self.notes, other.notes) {
            (Some(mine), Some(n)) => {
                mine.images.extend(n.images);
                mine.whiteouts.extend(n.whiteouts);
            }
            (mine @ None, n) => *mine = n,
            (Some(_), None) => {}
        }
        let elapsed = self.summary.elapsed + other.summary.elapsed;
        let mut o = finish(self, Instant::now(), known);
        o.summary.elapsed = elapsed;
        o
    }
}

/// Findings sorted and paired into credential sets, totals counted. `known`: the values of
/// `o`'s findings and of those it left out.
fn finish(mut o: ScanResults, start: Instant, known: crate::model::Known) -> ScanResults {
    Finding::sort_for_report(&mut o.findings);
    crate::detect::mask_contexts(&mut o.findings, &known);
    o.known = known;
    crate::validate::annotate(&mut o.findings);
    Finding::sort_for_report(&mut o.suppressed);
    // Whole keys, not only paths: workers finish in any order, and the report must not.
    o.warnings
        .sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    o.summary
        .skipped
        .sort_by(|a, b| (&a.path, &a.reason).cmp(&(&b.path, &b.reason)));
    o.units.sort();
    o.summary.findings = o.findings.len() as u64;
    o.summary.suppressed = o.suppressed.len() as u64;
    o.summary.warnings = o.warnings.len() as u64;
    o.summary.elapsed = start.elapsed();
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Provenance;

    /// Fake credentials of the right shape, from a fixed seed (never real ones).
    fn fake_aws(seed: u64) -> (String, String) {
        use crate::testing::synth::{B64, BASE32};
        let mut rng = crate::testing::Rng::new(seed);
        (format!("AKIA{}", rng.chars(BASE32, 16)), rng.chars(B64, 40))
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// The same bytes at `name` as each source hands them over: a file on disk, a git blob,
    /// a file in an image layer, and (gzipped) an entry of an archive on disk and in git.
    fn places(name: &str, bytes: &[u8]) -> Vec<(&'static str, Blob)> {
        let git = |path: String| Provenance::Git {
            path,
            blob: "0123456789abcdef0123456789abcdef01234567".into(),
            commit: None,
            variable: None,
            cell: None,
            output: None,
            field: None,
        };
        let layer = Provenance::Image {
            image: "oci:img".into(),
            manifest: "sha256:aa".into(),
            layer: Some(0),
            layer_digest: Some("sha256:bb".into()),
            path: format!("/app/{name}"),
            deleted: false,
            variable: None,
            cell: None,
            output: None,
            field: None,
        };
        let file = |path: String| Provenance::File {
            path,
            variable: None,
        };
        let whole = |provenance| Blob {
            provenance,
            data: bytes.to_vec(),
        };
        let packed = |provenance| Blob {
            provenance,
            data: gz(bytes),
        };
        vec![
            ("a file", whole(file(format!("deploy/{name}")))),
            ("a git blob", whole(git(format!("deploy/{name}")))),
            ("a layer's file", whole(layer)),
            (
                "an archive's entry",
                packed(file(format!("deploy/{name}.gz"))),
            ),
            (
                "a committed archive's entry",
                packed(git(format!("deploy/{name}.gz"))),
            ),
        ]
    }

    /// (rule, line, variable, notebook field) of each finding, in order.
    type Seen = Vec<(
        String,
        usize,
        Option<String>,
        Option<(Option<usize>, String)>,
    )>;

    fn seen(s: &Scanner, blob: Blob) -> Seen {
        let ignore = |_: &Warning| {};
        let run = s.run(&ignore);
        let opts = s.admit_opts(false, None);
        s.file(&run, blob, &opts);
        run.finish()
            .findings
            .iter()
            .map(|f| {
                let p = &f.provenance;
                let cell = p
                    .notebook_field()
                    .map(|(c, _, field)| (c, field.to_string()));
                (
                    f.rule_id.clone(),
                    f.line,
                    p.variable().map(String::from),
                    cell,
                )
            })
            .collect()
    }

    /// A scanner of the built-in rules, no allowlist.
    fn builtin_scanner() -> Scanner {
        Scanner::new(
            Engine::new(
                crate::rules::builtin(),
                crate::engine::FingerprintKey::ephemeral(),
            )
            .unwrap(),
            Policy::default(),
        )
    }

    #[test]
    fn the_same_bytes_are_read_the_same_way_whatever_the_source() {
        let s = builtin_scanner().with_archives(Some(Archives {
            limits: Default::default(),
            binary: false,
        }));
        let (id, secret) = fake_aws(7);
        let env = format!("# deploy\nAWS_ACCESS_KEY_ID={id}\nAWS_SECRET_ACCESS_KEY={secret}\n");
        let nb = serde_json::json!({"cells": [
            {"cell_type": "markdown", "source": ["# notes\n"]},
            {"cell_type": "code", "source": ["x = 1\n"], "outputs": []},
            {"cell_type": "code", "source": [format!("aws_secret_access_key = \"{secret}\"\n")], "outputs": []},
        ], "metadata": {}, "nbformat": 4})
        .to_string();
        let environ = format!("HOME=/root\0AWS_ACCESS_KEY_ID={id}\0");
        let cases: [(&str, &[u8]); 4] = [
            (".env", env.as_bytes()),
            ("analysis.ipynb", nb.as_bytes()),
            ("environ", environ.as_bytes()),
            // A capture of an environment under any name.
            ("proc-1000-environ", environ.as_bytes()),
        ];
        for (name, bytes) in cases {
            let mut all = places(name, bytes)
                .into_iter()
                .map(|(kind, b)| (kind, seen(&s, b)));
            let (first, want) = all.next().unwrap();
            for (kind, got) in all {
                assert_eq!(got, want, "{name} as {kind} read unlike {first}");
            }
            match name {
                ".env" => {
                    let vars: Vec<_> = want.iter().map(|w| w.2.as_deref()).collect();
                    assert_eq!(
                        vars,
                        [Some("AWS_ACCESS_KEY_ID"), Some("AWS_SECRET_ACCESS_KEY")]
                    );
                }
                "analysis.ipynb" => {
                    assert_eq!(want.len(), 1, "{want:?}");
                    assert_eq!(want[0].3, Some((Some(2), "source".to_string())));
                }
                _ => {
                    // NULs read as line ends: the key id is on line 2.
                    let id = ("aws.access-key-id".to_string(), 2);
                    assert_eq!(want.len(), 1, "{want:?}");
                    assert_eq!((want[0].0.clone(), want[0].1), id);
                    assert_eq!(want[0].2.as_deref(), Some("AWS_ACCESS_KEY_ID"));
                }
            }
        }
    }

    /// A run's findings come out in the order the records' [`crate::model::report_order`]
    /// gives, whatever order their files were scanned in: several findings to a file, files
    /// whose paths sort apart from their scan order, one file in a commit and on disk.
    #[test]
    fn findings_are_sorted_as_their_records_are() {
        let s = builtin_scanner();
        let ignore = |_: &Warning| {};
        let run = s.run(&ignore);
        let opts = s.admit_opts(false, None);
        for (n, name) in ["z.env", "a/b.env", "a.env", "m.env", "a/a.env"]
            .iter()
            .enumerate()
        {
            let mut text = String::new();
            for k in 0..3 {
                let (id, secret) = fake_aws((n * 3 + k) as u64);
                text += &format!("AWS_ACCESS_KEY_ID={id}\nAWS_SECRET_ACCESS_KEY={secret}\n\n");
            }
            // The file and its git blob, the blob first.
            for (_, blob) in places(name, text.as_bytes()).into_iter().take(2).rev() {
                s.file(&run, blob, &opts);
            }
        }
        let findings = run.finish().findings;
        assert!(findings.len() >= 30, "{}", findings.len());
        let got: Vec<crate::model::Record> = findings.iter().map(|f| f.record(false)).collect();
        let mut want = got.clone();
        want.sort_by(crate::model::report_order);
        let key = |r: &crate::model::Record| {
            (
                r.path.clone(),
                r.start,
                r.rule.clone(),
                r.fingerprint.clone(),
            )
        };
        assert_eq!(
            got.iter().map(key).collect::<Vec<_>>(),
            want.iter().map(key).collect::<Vec<_>>()
        );
    }

    /// Merged results (a runtime audit's, or shards') mask each other's contexts with every
    /// value either run found, also those left out of the report for their confidence.
    #[test]
    fn merged_results_mask_with_each_others_values() {
        let s = builtin_scanner().reporting(crate::rules::Confidence::High);
        let ignore = |_: &Warning| {};
        let opts = s.admit_opts(false, None);
        let scan = |name: &str, text: &str| {
            let run = s.run(&ignore);
            for (_, blob) in places(name, text.as_bytes()).into_iter().take(1) {
                s.file(&run, blob, &opts);
            }
            run.finish()
        };
        let password = "Vq7mR2kLp9xWz4TbN8";
        let left = scan("db.env", &format!("POSTGRES_PASSWORD={password}\n"));
        assert!(left.findings.is_empty() && left.left_out == 1, "{left:?}");
        let (id, _) = fake_aws(3);
        let shown = scan("notes.txt", &format!("key {id} beside {password}\n"));
        let context = |o: &ScanResults| o.findings[0].context.render(false);
        assert!(context(&shown).contains(password), "{}", context(&shown));
        let merged = shown.merge(left);
        assert_eq!(merged.findings.len(), 1);
        assert_eq!(merged.left_out, 1);
        assert!(
            !context(&merged).contains(&password[..8]),
            "{}",
            context(&merged)
        );
    }
}
