//! The pipeline: source -> engine -> policy -> findings. Identical content is scanned once;
//! its matches are reused for every path that holds it.

use crate::engine::{Engine, Match};
use crate::policy::Policy;
use crate::report::{self, Finding, Summary, Warning};
use crate::source::{self, fs::Event, Blob};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Counters a progress display may read while the scan runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub files: AtomicU64,
    pub bytes: AtomicU64,
    pub findings: AtomicU64,
}

/// What a scan produced, before any writer sees it.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Findings to report, sorted by path and position.
    pub findings: Vec<Finding>,
    /// Findings the baseline suppressed (kept so a new baseline can include them).
    pub suppressed: Vec<Finding>,
    pub warnings: Vec<Warning>,
    pub summary: Summary,
}

/// An engine and a policy, shared by every worker thread.
pub struct Scanner {
    engine: Engine,
    policy: Policy,
    seen: Mutex<HashMap<u128, Arc<[Match]>>>,
    pub progress: Progress,
}

#[derive(Default)]
struct Collected {
    findings: Vec<Finding>,
    suppressed: Vec<Finding>,
    warnings: Vec<Warning>,
    summary: Summary,
}

impl Scanner {
    pub fn new(engine: Engine, policy: Policy) -> Scanner {
        Scanner {
            engine,
            policy,
            seen: Mutex::default(),
            progress: Progress::default(),
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Scan one blob: matches (from the content cache when the same bytes were seen before),
    /// minus what the policy allows, as findings.
    pub fn blob(&self, blob: &Blob) -> Vec<Finding> {
        let hay: &[u8] = &blob.data;
        let key = xxhash_rust::xxh3::xxh3_128(hay);
        let cached = self
            .seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned();
        let matches = match cached {
            Some(m) => m,
            None => {
                let m: Arc<[Match]> = self.engine.scan(hay).into();
                self.seen
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key, m.clone());
                m
            }
        };
        let kept: Vec<Match> = matches
            .iter()
            .filter(|m| !self.policy.match_allowed(hay, m))
            .copied()
            .collect();
        report::findings(self.engine.rules(), hay, &kept, &blob.provenance)
    }

    fn take(&self, c: &Mutex<Collected>, blob: &Blob) {
        let path = blob.provenance.display();
        if self.policy.path_allowed(&path) {
            return;
        }
        let found = self.blob(blob);
        self.progress.files.fetch_add(1, Relaxed);
        self.progress
            .bytes
            .fetch_add(blob.data.len() as u64, Relaxed);
        let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
        c.summary.files += 1;
        c.summary.bytes += blob.data.len() as u64;
        for f in found {
            if self.policy.in_baseline(&f.fingerprint) {
                c.suppressed.push(f);
            } else {
                self.progress.findings.fetch_add(1, Relaxed);
                c.findings.push(f);
            }
        }
    }

    /// Scan files and directories.
    pub fn paths(
        &self,
        opts: &source::fs::WalkOptions,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) -> Outcome {
        let start = Instant::now();
        let c = Mutex::new(Collected::default());
        source::fs::walk(opts, &|event| match event {
            Event::Blob(b) => self.take(&c, &b),
            Event::SkippedBinary => lock(&c).summary.skipped_binary += 1,
            Event::SkippedLarge(_) => lock(&c).summary.skipped_large += 1,
            Event::Error { path, message } => {
                let w = Warning {
                    path: path.display().to_string(),
                    message,
                };
                on_warning(&w);
                lock(&c).warnings.push(w);
            }
        });
        finish(c.into_inner().unwrap_or_else(|e| e.into_inner()), start)
    }

    /// Scan standard input as one blob.
    pub fn stdin(&self) -> std::io::Result<Outcome> {
        let start = Instant::now();
        let c = Mutex::new(Collected::default());
        self.take(&c, &source::stdin()?);
        Ok(finish(
            c.into_inner().unwrap_or_else(|e| e.into_inner()),
            start,
        ))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn finish(mut c: Collected, start: Instant) -> Outcome {
    let order = |a: &Finding, b: &Finding| {
        (a.path(), a.start, &a.rule_id).cmp(&(b.path(), b.start, &b.rule_id))
    };
    c.findings.sort_by(order);
    c.suppressed.sort_by(order);
    c.warnings.sort_by(|a, b| a.path.cmp(&b.path));
    c.summary.findings = c.findings.len() as u64;
    c.summary.suppressed = c.suppressed.len() as u64;
    c.summary.warnings = c.warnings.len() as u64;
    c.summary.elapsed = start.elapsed();
    Outcome {
        findings: c.findings,
        suppressed: c.suppressed,
        warnings: c.warnings,
        summary: c.summary,
    }
}
