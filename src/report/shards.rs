//! `report merge --shards`: the JSON reports of the shards of one run (`--shard K/N`) as the
//! report that run would have written whole: the same findings in the same order, the totals
//! added, and what no single shard could know (a file in one shard's layer deleted by a layer
//! another shard read) worked out from the shards' notes.
//!
//! The shards must all be there, once each: a missing shard is an error, never a report that
//! quietly lacks a part of the work.

use super::{json, sarif, Format};
use crate::model::{report_order, whited_out, Provenance, Record, ShardNotes, Summary, Warning};
use crate::rules::Rule;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{self, Write};

#[derive(Debug, thiserror::Error)]
pub enum ShardsError {
    #[error("{file}: not a leakhound JSON report ({why}); shards are merged from `--format json` reports")]
    NotReport { file: String, why: String },
    #[error("{file}: {what} is {found:?}, {first} has {expected:?}: not shards of one run")]
    Mismatch {
        file: String,
        what: &'static str,
        found: String,
        first: String,
        expected: String,
    },
    #[error("{file}: made by leakhound {found:?}; this is {ours:?} (merge with the version that scanned)")]
    Version {
        file: String,
        found: String,
        ours: String,
    },
    #[error("shard {index}/{total} is given twice ({first} and {file})")]
    Twice {
        index: u64,
        total: u64,
        first: String,
        file: String,
    },
    #[error("shard(s) {missing} of {total} missing: the merged report would lack their part of the work")]
    Missing { missing: String, total: u64 },
    #[error("{file}: {cause}")]
    Io { file: String, cause: io::Error },
}

/// The shards' reports, added one at a time; [`Shards::write`] writes the merged report.
#[derive(Default)]
pub struct Shards {
    findings: Vec<Record>,
    warnings: Vec<Warning>,
    summary: Summary,
    notes: Vec<ShardNotes>,
    /// The first report's name, its fingerprint key id and shard count.
    first: Option<(String, String, u64)>,
    /// Shard index -> the report that held it.
    seen: BTreeMap<u64, String>,
}

impl Shards {
    /// Add the report named `name`, its text `input`.
    pub fn add(&mut self, name: &str, input: &str) -> Result<(), ShardsError> {
        let not = |why: &str| ShardsError::NotReport {
            file: name.to_string(),
            why: why.to_string(),
        };
        let mut doc: Value = serde_json::from_str(input).map_err(|e| not(&e.to_string()))?;
        if doc["tool"] != "leakhound" || !doc["findings"].is_array() {
            return Err(not("no leakhound findings array"));
        }
        // The merged report names this leakhound and its rules: the shards' must be those.
        let version = doc["version"].as_str().unwrap_or_default();
        let ruleset = doc["rules_version"].as_str().unwrap_or_default();
        if version != env!("CARGO_PKG_VERSION") || ruleset != crate::rules::RULESET {
            return Err(ShardsError::Version {
                file: name.to_string(),
                found: format!("{version} (rules {ruleset})"),
                ours: format!(
                    "{} (rules {})",
                    env!("CARGO_PKG_VERSION"),
                    crate::rules::RULESET
                ),
            });
        }
        let notes: ShardNotes = match doc.get_mut("shard").map(Value::take) {
            Some(n) => serde_json::from_value(n).map_err(|e| not(&format!("shard: {e}")))?,
            // A run without --shard is the one shard of one.
            None => ShardNotes::new(crate::model::Shard::WHOLE),
        };
        let text = |k: &str| doc[k].as_str().unwrap_or_default().to_string();
        let key = text("fingerprint_key_id");
        match &self.first {
            None => self.first = Some((name.to_string(), key, notes.total)),
            Some((first, k, total)) => {
                let mismatch = |what, found: String, expected: String| ShardsError::Mismatch {
                    file: name.to_string(),
                    what,
                    found,
                    first: first.clone(),
                    expected,
                };
                if *k != key {
                    return Err(mismatch("the fingerprint key", key, k.clone()));
                }
                if *total != notes.total {
                    return Err(mismatch(
                        "the shard count",
                        notes.total.to_string(),
                        total.to_string(),
                    ));
                }
            }
        }
        if let Some(first) = self.seen.insert(notes.index, name.to_string()) {
            return Err(ShardsError::Twice {
                index: notes.index,
                total: notes.total,
                first,
                file: name.to_string(),
            });
        }
        let summary: Summary = serde_json::from_value(doc["summary"].take())
            .map_err(|e| not(&format!("summary: {e}")))?;
        let warnings: Vec<Warning> = serde_json::from_value(doc["warnings"].take())
            .map_err(|e| not(&format!("warnings: {e}")))?;
        if let Value::Array(f) = doc["findings"].take() {
            for (i, f) in f.into_iter().enumerate() {
                let f = Record::from_value(f).map_err(|e| not(&format!("findings[{i}]: {e}")))?;
                self.findings.push(f);
            }
        }
        self.warnings.extend(warnings);
        self.summary.add(&summary);
        self.summary.suppressed += summary.suppressed;
        self.summary.below_confidence += summary.below_confidence;
        // Shards run side by side: the run took as long as the slowest.
        self.summary.elapsed = self.summary.elapsed.max(summary.elapsed);
        self.notes.push(notes);
        Ok(())
    }

    /// The merged report in `format` (json, jsonl or sarif); `rules` describe SARIF's rules.
    /// With `redact` (unless `--show-secrets`), every secret and context is masked again,
    /// whatever the shards were written with. Returns the number of findings and of inputs
    /// that failed in the shards.
    pub fn write(
        mut self,
        format: Format,
        rules: &[Rule],
        redact: Option<&super::Redact<'_>>,
        out: &mut dyn Write,
    ) -> Result<(usize, u64), ShardsError> {
        let Some((_, key, total)) = self.first.clone() else {
            return Err(ShardsError::Missing {
                missing: "all".into(),
                total: 0,
            });
        };
        let missing: Vec<String> = (0..total)
            .filter(|i| !self.seen.contains_key(i))
            .map(|i| i.to_string())
            .collect();
        if !missing.is_empty() {
            return Err(ShardsError::Missing {
                missing: missing.join(", "),
                total,
            });
        }
        self.deleted();
        if let Some(r) = redact {
            r.findings(&mut self.findings);
        }
        self.findings.sort_by(report_order);
        self.warnings
            .sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
        let s = &mut self.summary;
        s.skipped
            .sort_by(|a, b| (&a.path, &a.reason).cmp(&(&b.path, &b.reason)));
        s.findings = self.findings.len() as u64;
        s.warnings = self.warnings.len() as u64;
        let io_err = |cause| ShardsError::Io {
            file: "the merged report".into(),
            cause,
        };
        let n = self.findings.len();
        let written = match format {
            Format::Json => json::write_document(
                &self.findings,
                Record::clone,
                &self.warnings,
                s,
                None,
                &key,
                out,
            ),
            Format::Jsonl => json::write_lines(self.findings.into_iter(), out),
            Format::Sarif => sarif::write_records(&self.findings, rules, out),
            // The human writer reads whole findings, which a JSON report no longer holds.
            Format::Human => Err(io::Error::other(
                "shards merge into json, jsonl or sarif, not the human format",
            )),
        };
        written.and_then(|_| out.flush()).map_err(io_err)?;
        Ok((n, s.failed_inputs))
    }

    /// Whether each file found in an image layer is deleted by a later layer, now that every
    /// layer's whiteouts are known (a shard knows only those of the layers it read).
    fn deleted(&mut self) {
        let mut layers: BTreeMap<(&str, &str), &[String]> = BTreeMap::new();
        let mut whiteouts = BTreeMap::new();
        for n in &self.notes {
            for i in &n.images {
                layers.insert((&i.image, &i.manifest), &i.layers);
            }
            whiteouts.extend(n.whiteouts.iter());
        }
        if layers.is_empty() {
            return;
        }
        for f in &mut self.findings {
            let Some(Provenance::Image {
                image,
                manifest,
                layer: Some(layer),
                path,
                deleted,
                ..
            }) = &mut f.provenance
            else {
                continue;
            };
            let Some(digests) = layers.get(&(image.as_str(), manifest.as_str())) else {
                continue;
            };
            let later: Vec<(String, bool)> = digests
                .iter()
                .skip(*layer + 1)
                .filter_map(|d| whiteouts.get(d))
                .flat_map(|w| w.iter().cloned())
                .collect();
            let file = path.split('!').next().unwrap_or(path);
            *deleted = whited_out(file, &later);
        }
    }
}
