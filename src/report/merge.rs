//! `report merge`: the reports of several runs (files, git history, images, environments,
//! filter streams; JSON or JSON Lines) as one entry per credential, each with every place it
//! was found and when it was first and last seen.
//!
//! Findings are keyed by their fingerprint (a keyed hash of rule and secret, nothing about the
//! place), so one credential found in a file, a commit and an image layer is one entry. Only
//! entries are held in memory, never whole reports: JSON Lines input is read line by line.
//! The output does not depend on the order of the inputs.

use crate::model::{Confidence, Provenance, Record};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::{self, BufRead, Write};

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{file}:{line}: not a leakhound finding ({why})")]
    NotFinding {
        file: String,
        line: usize,
        why: String,
    },
    #[error(
        "{file}: made with fingerprint key {found}, {first} with {expected}: their fingerprints \
         do not compare (give every run the same key: LEAKHOUND_FINGERPRINT_KEY or `fingerprint.key_file`)"
    )]
    KeyMismatch {
        file: String,
        found: String,
        first: String,
        expected: String,
    },
    // The I/O error is part of the message, not a source: a chain would say it twice.
    #[error("{file}: {cause}")]
    Io { file: String, cause: io::Error },
}

/// One credential and where it was found.
struct Entry {
    rule: String,
    name: String,
    /// The highest any report gave it.
    confidence: Option<Confidence>,
    secret: String,
    redacted: bool,
    sets: BTreeSet<String>,
    /// What the credential carries wherever it is found (`aws_account`, `validation`,
    /// `reach`): the first report's value, a live validation over any other.
    extra: Map<String, Value>,
    locations: BTreeMap<(String, u64, u64, String), Place>,
}

struct Place {
    path: String,
    line: u64,
    column: u64,
    provenance: Value,
    reports: BTreeSet<String>,
    first_seen: Option<String>,
    last_seen: Option<String>,
}

/// Merges reports one at a time; [`Merger::write`] writes the result.
#[derive(Default)]
pub struct Merger {
    entries: BTreeMap<String, Entry>,
    key: Option<(String, String)>,
    reports: usize,
    findings: usize,
    show_secrets: bool,
    public_rules: HashSet<String>,
    /// Every secret a report held in clear: masked wherever else it shows (a field this
    /// merge carries without knowing it) unless `show_secrets`.
    known: BTreeSet<String>,
}

impl Merger {
    /// `public_rules`: rules whose values are identifiers shown whole (AWS key ids); any
    /// other secret a report shows in full is redacted unless `show_secrets`.
    pub fn new(show_secrets: bool, public_rules: HashSet<String>) -> Merger {
        Merger {
            show_secrets,
            public_rules,
            ..Merger::default()
        }
    }

    /// Add one report named `name` (a JSON document or JSON Lines). `seen` is when it was
    /// made (RFC 3339), for places without a date of their own; a git commit's date wins.
    pub fn add(
        &mut self,
        name: &str,
        input: impl BufRead,
        seen: Option<&str>,
    ) -> Result<(), MergeError> {
        let io_err = |cause| MergeError::Io {
            file: name.to_string(),
            cause,
        };
        self.reports += 1;
        let mut lines = input.lines();
        let mut first = String::new();
        let mut n = 0;
        // The first non-empty line tells the format: a finding of its own (JSON Lines) or the
        // start of a document.
        for l in lines.by_ref() {
            n += 1;
            first = l.map_err(io_err)?;
            if !first.trim().is_empty() {
                break;
            }
        }
        if first.trim().is_empty() {
            return Ok(());
        }
        if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&first) {
            if v.get("findings").is_none() {
                self.finding(name, n, v, seen)?;
                for l in lines {
                    n += 1;
                    let l = l.map_err(io_err)?;
                    if l.trim().is_empty() {
                        continue;
                    }
                    let v = serde_json::from_str(&l).map_err(|_| MergeError::NotFinding {
                        file: name.to_string(),
                        line: n,
                        why: "not JSON".into(),
                    })?;
                    self.finding(name, n, v, seen)?;
                }
                return Ok(());
            }
            return self.document(name, v, seen);
        }
        let mut text = first;
        for l in lines {
            text.push('\n');
            text.push_str(&l.map_err(io_err)?);
        }
        let doc = serde_json::from_str(&text).map_err(|_| MergeError::NotFinding {
            file: name.to_string(),
            line: 1,
            why: "neither a JSON report nor JSON Lines".into(),
        })?;
        self.document(name, doc, seen)
    }

    fn document(
        &mut self,
        name: &str,
        mut doc: Value,
        seen: Option<&str>,
    ) -> Result<(), MergeError> {
        if let Some(k) = doc.get("fingerprint_key_id").and_then(Value::as_str) {
            match &self.key {
                Some((first, expected)) if expected != k => {
                    return Err(MergeError::KeyMismatch {
                        file: name.to_string(),
                        found: k.to_string(),
                        first: first.clone(),
                        expected: expected.clone(),
                    })
                }
                Some(_) => {}
                None => self.key = Some((name.to_string(), k.to_string())),
            }
        }
        let Some(Value::Array(findings)) = doc.get_mut("findings").map(Value::take) else {
            return Err(MergeError::NotFinding {
                file: name.to_string(),
                line: 1,
                why: "no findings array".into(),
            });
        };
        for (i, f) in findings.into_iter().enumerate() {
            self.finding(name, i + 1, f, seen)?;
        }
        Ok(())
    }

    fn finding(
        &mut self,
        name: &str,
        line: usize,
        f: Value,
        seen: Option<&str>,
    ) -> Result<(), MergeError> {
        let f = Record::from_value(f).map_err(|e| MergeError::NotFinding {
            file: name.to_string(),
            line,
            why: e.to_string(),
        })?;
        self.findings += 1;
        // A commit's date is when the secret was there; otherwise, when the report was made.
        let when = match &f.provenance {
            Some(Provenance::Git {
                commit: Some(c), ..
            }) => Some(c.date.as_str()),
            _ => seen,
        }
        .map(str::to_string);
        // The record's own `redacted` flag is not trusted: a record may lack it, or hold a
        // secret in full under any flag. What is not a masked form is a secret in clear.
        let public = self.public_rules.contains(&f.rule);
        let clear = !super::is_masked(&f.secret);
        if clear && !public && !f.secret.is_empty() {
            self.known.insert(f.secret.clone());
        }
        let (secret, redacted) = if public || self.show_secrets {
            (f.secret.clone(), !clear)
        } else {
            (super::remask(&f.secret), true)
        };
        let entry = self
            .entries
            .entry(f.fingerprint.clone())
            .or_insert_with(|| Entry {
                rule: f.rule.clone(),
                name: f.name.clone(),
                confidence: f.confidence,
                secret: secret.clone(),
                redacted,
                sets: BTreeSet::new(),
                extra: Map::new(),
                locations: BTreeMap::new(),
            });
        // Asked to show secrets, one report's clear value beats another's masked one.
        if entry.redacted && !redacted {
            (entry.secret, entry.redacted) = (secret, false);
        }
        entry.confidence = entry.confidence.max(f.confidence);
        if let Some(s) = &f.credential_set {
            entry.sets.insert(s.clone());
        }
        for (k, v) in f.per_credential() {
            let live = |v: &Value| v.get("status").and_then(Value::as_str) == Some("live");
            match entry.extra.get(&k) {
                Some(old) if !(k == "validation" && live(&v) && !live(old)) => {}
                _ => {
                    entry.extra.insert(k, v);
                }
            }
        }
        let provenance = f.provenance.as_ref().map_or(Value::Null, |p| json!(p));
        let key = (f.path.clone(), f.line, f.column, provenance.to_string());
        let place = entry.locations.entry(key).or_insert_with(|| Place {
            path: f.path,
            line: f.line,
            column: f.column,
            provenance,
            reports: BTreeSet::new(),
            first_seen: None,
            last_seen: None,
        });
        place.reports.insert(name.to_string());
        if let Some(w) = when {
            widen(&mut place.first_seen, &mut place.last_seen, &w);
        }
        Ok(())
    }

    /// The merged report in `format`: `json` (one document), `jsonl` (one credential a
    /// line), `sarif` (one result per credential, every place a location) or `human`.
    pub fn write(&self, format: crate::report::Format, out: &mut dyn Write) -> io::Result<()> {
        use crate::report::Format;
        let entries = self.sorted();
        let known = if self.show_secrets {
            crate::model::Known::new()
        } else {
            super::known_of(self.known.iter().map(String::as_str))
        };
        let entry_json = |fp: &str, e: &Entry| entry_json(fp, e, &known);
        match format {
            Format::Json => {
                let doc = json!({
                    "tool": "leakhound",
                    "version": env!("CARGO_PKG_VERSION"),
                    "fingerprint_key_id": self.key.as_ref().map(|(_, k)| k),
                    "credentials": entries.iter().map(|(fp, e)| entry_json(fp, e)).collect::<Vec<_>>(),
                    "summary": {
                        "reports": self.reports,
                        "findings": self.findings,
                        "credentials": entries.len(),
                        "locations": entries.iter().map(|(_, e)| e.locations.len()).sum::<usize>(),
                    },
                });
                serde_json::to_writer_pretty(&mut *out, &doc)?;
                writeln!(out)?;
            }
            Format::Jsonl => {
                for (fp, e) in &entries {
                    serde_json::to_writer(&mut *out, &entry_json(fp, e))?;
                    writeln!(out)?;
                }
            }
            Format::Sarif => {
                self.sarif(&entries, &known, out)?;
            }
            Format::Human => {
                for (_, e) in &entries {
                    let (first, last) = span(e);
                    writeln!(
                        out,
                        "{}  {}  {} place{}{}",
                        crate::report::printable(&super::mask_known_text(&e.rule, &known)),
                        crate::report::printable(&e.secret),
                        e.locations.len(),
                        if e.locations.len() == 1 { "" } else { "s" },
                        match (first, last) {
                            (Some(f), Some(l)) if f != l => format!(", seen {f} .. {l}"),
                            (Some(f), _) => format!(", seen {f}"),
                            _ => String::new(),
                        }
                    )?;
                    for p in e.locations.values() {
                        let kind = p
                            .provenance
                            .get("kind")
                            .and_then(Value::as_str)
                            .unwrap_or("?");
                        writeln!(
                            out,
                            "    {}:{}:{}  ({kind})",
                            crate::report::printable(&super::mask_known_text(&p.path, &known)),
                            p.line,
                            p.column
                        )?;
                    }
                }
                writeln!(
                    out,
                    "{} credential{} in {} finding{} from {} report{}",
                    entries.len(),
                    if entries.len() == 1 { "" } else { "s" },
                    self.findings,
                    if self.findings == 1 { "" } else { "s" },
                    self.reports,
                    if self.reports == 1 { "" } else { "s" },
                )?;
            }
        }
        out.flush()
    }

    /// Whether any report held a finding.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries by their first place, then rule and fingerprint: the same for any input order.
    fn sorted(&self) -> Vec<(&String, &Entry)> {
        let mut v: Vec<(&String, &Entry)> = self.entries.iter().collect();
        v.sort_by(|a, b| {
            (a.1.locations.keys().next(), &a.1.rule, a.0).cmp(&(
                b.1.locations.keys().next(),
                &b.1.rule,
                b.0,
            ))
        });
        v
    }

    fn sarif(
        &self,
        entries: &[(&String, &Entry)],
        known: &crate::model::Known,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        // A report is not trusted to keep its secrets to the secret's field: every string of
        // a result is masked (a rule id, a fingerprint, a path).
        let mask = |s: &str| super::mask_known_text(s, known);
        let rules: BTreeMap<String, String> = entries
            .iter()
            .map(|(_, e)| (mask(&e.rule), mask(&e.name)))
            .collect();
        let results = entries.iter().map(|(fp, e)| {
            let mut r = json!({
                "ruleId": e.rule,
                "level": "error",
                "message": {"text": format!("{} ({}), found in {} place(s)", e.name, e.secret, e.locations.len())},
                "partialFingerprints": {"leakhound/v1": fp},
                "locations": e.locations.values().map(|p| json!({
                    "physicalLocation": {
                        "artifactLocation": {"uri": super::sarif::uri(&mask(&p.path))},
                        "region": {"startLine": p.line.max(1), "startColumn": p.column.max(1)},
                    },
                })).collect::<Vec<_>>(),
            });
            super::mask_known(&mut r, known);
            r
        });
        let rules = rules
            .iter()
            .map(|(id, name)| json!({"id": id, "name": name, "shortDescription": {"text": name}}))
            .collect();
        super::sarif::write_document(rules, results, out)
    }
}

fn entry_json(fp: &str, e: &Entry, known: &crate::model::Known) -> Value {
    let (first, last) = span(e);
    let surfaces: BTreeSet<&str> = e
        .locations
        .values()
        .filter_map(|p| p.provenance.get("kind").and_then(Value::as_str))
        .collect();
    let mut v = json!({
        "fingerprint": fp,
        "rule": e.rule,
        "name": e.name,
        "confidence": e.confidence.map_or("", Confidence::as_str),
        "secret": e.secret,
        "redacted": e.redacted,
        "credential_sets": e.sets,
        "surfaces": surfaces,
        "first_seen": first,
        "last_seen": last,
        "locations": e.locations.values().map(|p| json!({
            "path": p.path,
            "line": p.line,
            "column": p.column,
            "provenance": p.provenance,
            "reports": p.reports,
            "first_seen": p.first_seen,
            "last_seen": p.last_seen,
        })).collect::<Vec<_>>(),
    });
    for (k, x) in &e.extra {
        v[k] = x.clone();
    }
    // A report is not trusted to keep its secrets to the secret's field: every string of
    // the entry (a fingerprint, a credential set, a commit's subject) is masked.
    super::mask_known(&mut v, known);
    v
}

/// The earliest and latest time any place of `e` was seen.
fn span(e: &Entry) -> (Option<String>, Option<String>) {
    let (mut first, mut last) = (None, None);
    for p in e.locations.values() {
        for w in p.first_seen.iter().chain(&p.last_seen) {
            widen(&mut first, &mut last, w);
        }
    }
    (first, last)
}

/// RFC 3339 times in UTC compare as text; offsets other than `Z` are compared as written.
fn widen(first: &mut Option<String>, last: &mut Option<String>, w: &str) {
    if first.as_deref().is_none_or(|f| w < f) {
        *first = Some(w.to_string());
    }
    if last.as_deref().is_none_or(|l| w > l) {
        *last = Some(w.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(fp: &str, path: &str, line: u64, kind: &str) -> String {
        // A place of its kind whole: records are read typed, and an image's names its image.
        let provenance = match kind {
            "image" => json!({"kind": kind, "image": "app:1", "manifest": "sha256:m",
                              "layer": 0, "layer_digest": "sha256:l", "path": path,
                              "deleted": false}),
            _ => json!({"kind": kind, "path": path}),
        };
        json!({"rule": "github.pat", "name": "GitHub token", "confidence": "high", "path": path,
               "line": line, "column": 3, "secret": "ghp_********", "redacted": true,
               "fingerprint": fp, "provenance": provenance})
        .to_string()
    }

    fn merged(inputs: &[(&str, String, Option<&str>)]) -> Value {
        let mut m = Merger::new(false, HashSet::new());
        for (name, text, seen) in inputs {
            m.add(name, text.as_bytes(), *seen).unwrap();
        }
        let mut out = Vec::new();
        m.write(crate::report::Format::Json, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn one_entry_per_credential_whatever_the_order() {
        let a = format!(
            "{}\n{}\n",
            finding("f1", "a.py", 1, "file"),
            finding("f2", "b.py", 9, "file")
        );
        let b = json!({"fingerprint_key_id": "k", "findings": [
            serde_json::from_str::<Value>(&finding("f1", "app/.env", 4, "image")).unwrap()]})
        .to_string();
        let one = merged(&[
            ("a.jsonl", a.clone(), Some("2026-01-02T00:00:00Z")),
            ("b.json", b.clone(), Some("2026-03-04T00:00:00Z")),
        ]);
        let two = merged(&[
            ("b.json", b, Some("2026-03-04T00:00:00Z")),
            ("a.jsonl", a, Some("2026-01-02T00:00:00Z")),
        ]);
        assert_eq!(one["credentials"], two["credentials"]);
        let creds = one["credentials"].as_array().unwrap();
        assert_eq!(creds.len(), 2);
        let f1 = creds.iter().find(|c| c["fingerprint"] == "f1").unwrap();
        assert_eq!(f1["locations"].as_array().unwrap().len(), 2);
        assert_eq!(f1["surfaces"], json!(["file", "image"]));
        assert_eq!(f1["first_seen"], "2026-01-02T00:00:00Z");
        assert_eq!(f1["last_seen"], "2026-03-04T00:00:00Z");
        assert_eq!(one["summary"]["findings"], 3);
    }

    #[test]
    fn a_shown_secret_is_redacted_unless_asked_and_bad_input_is_named() {
        let shown = json!({"rule": "x.token", "fingerprint": "f", "secret": "abcdefghijklmnopqrstuvwxyz0123456789", "redacted": false}).to_string();
        let v = merged(&[("r.jsonl", shown, None)]);
        assert_eq!(v["credentials"][0]["secret"], "abcd********");
        let mut m = Merger::new(false, HashSet::new());
        let e = m
            .add("r.jsonl", "{\"rule\": 1}\n".as_bytes(), None)
            .unwrap_err();
        assert!(e.to_string().starts_with("r.jsonl:1:"), "{e}");
        m.add(
            "a.json",
            r#"{"fingerprint_key_id": "k1", "findings": []}"#.as_bytes(),
            None,
        )
        .unwrap();
        let e = m
            .add(
                "b.json",
                r#"{"fingerprint_key_id": "k2", "findings": []}"#.as_bytes(),
                None,
            )
            .unwrap_err();
        assert!(matches!(e, MergeError::KeyMismatch { .. }));
    }
}
