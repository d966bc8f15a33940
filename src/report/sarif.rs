//! SARIF 2.1.0, as code-scanning services ingest it: one run, the driver's rule metadata for
//! every rule that has a result, a stable partial fingerprint per result.

use super::Report;
use crate::model::{Confidence, Provenance, Record};
use crate::rules::Rule;
use serde_json::{json, Value};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::io::{self, Write};

pub(super) fn write(r: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let ids = r.findings.iter().map(|f| f.rule_id.as_str());
    let records = r.findings.iter().map(|f| f.record(r.show_secrets));
    write_stream(ids, records, r.rules, out)
}

/// The SARIF of findings as records: a scan's, or shards' merged, so that both are one
/// document for the same findings.
pub(super) fn write_records(
    findings: &[Record],
    rules: &[Rule],
    out: &mut dyn Write,
) -> io::Result<()> {
    let ids = findings.iter().map(|f| f.rule.as_str());
    write_stream(ids, findings.iter(), rules, out)
}

/// The document of `records`, whose rule ids in order are `ids`: each result made and
/// written as its turn comes. A document built whole first (a `Value` of every result)
/// held a large run's findings twice over until it was written.
fn write_stream<'r>(
    ids: impl Iterator<Item = &'r str>,
    records: impl Iterator<Item = impl Borrow<Record>>,
    rules: &[Rule],
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut used: BTreeMap<&str, usize> = BTreeMap::new();
    for id in ids {
        let next = used.len();
        used.entry(id).or_insert(next);
    }
    let mut described: Vec<(usize, Value)> = rules
        .iter()
        .filter_map(|rule| {
            used.get(rule.id.as_str()).map(|&i| {
                (
                    i,
                    json!({
                        "id": rule.id,
                        "name": rule.name,
                        "shortDescription": {"text": rule.name},
                        "fullDescription": {"text": rule.description.clone().unwrap_or_else(|| format!("{} found in the input.", rule.name))},
                        "defaultConfiguration": {"level": "error"},
                        "properties": {"tags": ["security", "secret"], "precision": rule.confidence().as_str()},
                    }),
                )
            })
        })
        .collect();
    described.sort_by_key(|(i, _)| *i);
    let results = records.map(|f| {
        let f = f.borrow();
        result(f, used[f.rule.as_str()])
    });
    let rules = described.into_iter().map(|(_, v)| v).collect();
    write_document(rules, results, out)
}

/// One finding's result; `index` is its rule's in the driver's list.
fn result(f: &Record, index: usize) -> Value {
    let mut result = json!({
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": "error",
        // SARIF's 0-100 relevance, so a viewer can sort high-confidence results first.
        "rank": rank(f.confidence),
        "message": {"text": format!("{} found: {}", f.name, f.secret)},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": {"uri": uri(&f.path)},
                "region": {
                    "startLine": f.line,
                    "startColumn": f.column,
                    "endLine": f.end_line,
                    "snippet": {"text": f.context},
                }
            }
        }],
        "partialFingerprints": {"leakhound/v1": f.fingerprint},
    });
    if let Some(p) = properties(f) {
        result["properties"] = p;
    }
    result
}

/// One run of leakhound with the driver's `rules` and the `results`, each written as its
/// turn comes: the document every SARIF leakhound writes (a scan's report, a merge of
/// reports) is.
pub(super) fn write_document(
    rules: Vec<Value>,
    results: impl Iterator<Item = Value>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let doc = Document {
        rules,
        results: super::Seq::new(results),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// [`write_document`]'s document, its results serialized from an iterator.
struct Document<I> {
    rules: Vec<Value>,
    results: super::Seq<I>,
}

impl<I: Iterator<Item = Value>> serde::Serialize for Document<I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let driver = json!({
            "name": "leakhound",
            "version": env!("CARGO_PKG_VERSION"),
            "rules": self.rules,
        });
        let run = Run {
            driver: &driver,
            results: &self.results,
        };
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("$schema", "https://json.schemastore.org/sarif-2.1.0.json")?;
        m.serialize_entry("version", "2.1.0")?;
        m.serialize_entry("runs", &[run])?;
        m.end()
    }
}

/// The one run: `{"tool": {"driver": …}, "columnKind": …, "results": […]}`.
struct Run<'a, I> {
    driver: &'a Value,
    results: &'a super::Seq<I>,
}

impl<I: Iterator<Item = Value>> serde::Serialize for Run<'_, I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("tool", &json!({ "driver": self.driver }))?;
        m.serialize_entry("columnKind", "unicodeCodePoints")?;
        m.serialize_entry("results", self.results)?;
        m.end()
    }
}

fn rank(confidence: Option<Confidence>) -> f64 {
    match confidence {
        Some(Confidence::High) => 90.0,
        Some(Confidence::Medium) => 60.0,
        _ => 30.0,
    }
}

/// Where the finding came from beyond its file (the git commit that introduced it), why it
/// has its confidence (`reasons`; the confidence itself is `rank`), and what its credential
/// can do (`--reach`).
fn properties(f: &Record) -> Option<Value> {
    let mut out = match &f.provenance {
        Some(Provenance::Git {
            commit: Some(c),
            blob,
            ..
        }) => Some(json!({
            "commit": c.id, "author": c.author, "email": c.email, "date": c.date,
            "subject": c.subject, "blob": blob,
        })),
        _ => None,
    };
    if !f.reasons.is_empty() {
        out.get_or_insert_with(|| json!({}))["reasons"] = json!(f.reasons);
    }
    if let Some(reach) = &f.reach {
        out.get_or_insert_with(|| json!({}))["reach"] = json!(reach);
    }
    out
}

/// A relative path becomes a relative URI reference; an absolute one a `file://` URI.
pub(super) fn uri(path: &str) -> String {
    let path = path.strip_prefix("./").unwrap_or(path);
    let mut out = String::with_capacity(path.len());
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b'!' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn uris() {
        assert_eq!(super::uri("./a b/c.py"), "a%20b/c.py");
        assert_eq!(super::uri("/abs/x"), "file:///abs/x");
    }
}
