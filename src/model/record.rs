//! A finding as reports hold it: the FINDING of `docs/json.md`, typed. The one writer
//! ([`crate::model::Finding::record`]) and every reader of earlier reports (`report merge`,
//! `report merge --shards`, SARIF, `validate REPORT`, baselines) go through this type, so the
//! schema has one definition and the report order one implementation ([`report_order`]).

use super::{Finding, HookRun, Provenance, Reach, Validation};
use crate::decode::Encoding;
use crate::rules::Confidence;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// One finding in a report. The field order is the JSON's. A reader needs `rule` and
/// `fingerprint`; the other fields take their empty value where a record (hand-written, or
/// from an older leakhound) lacks them, and a field this schema does not name is kept in
/// [`Record::other`], carried as it is and masked like the rest.
#[derive(Clone, Serialize, Deserialize)]
pub struct Record {
    pub rule: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// Why it has that confidence (`"test path"`, `"weak value"`, ...); empty in older reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub line: u64,
    #[serde(default)]
    pub column: u64,
    #[serde(default)]
    pub end_line: u64,
    #[serde(default)]
    pub start: u64,
    #[serde(default)]
    pub end: u64,
    /// Redacted unless the writer was asked to show it, or a public identifier; a reader
    /// never trusts that (see `report::Redact`).
    #[serde(default)]
    pub secret: String,
    #[serde(default)]
    pub redacted: bool,
    pub fingerprint: String,
    #[serde(default)]
    pub context: String,
    #[serde(default)]
    pub encoding: Option<Encoding>,
    #[serde(default)]
    pub credential_set: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// Only beside a shown secret: with its length, a redacted one's narrows a guess.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entropy: Option<f64>,
    /// What a validator read offline (`Annotation`s), in the order the validators add them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws_key_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws_account: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reach: Option<Reach>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookRun>,
    /// Fields this schema does not name (an annotation a newer validator adds, a field a
    /// person added by hand): kept in their order, and masked as any other text.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl std::fmt::Debug for Record {
    // The secret and the context can be in clear; the rest can hold one too (a hand-written
    // field), so only what identifies the record is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Record")
            .field("rule", &self.rule)
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

/// A record that could not be read. The message names the field and the type it needs,
/// never the value (which can be a secret).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RecordError(String);

/// The fields of a record that belong to one place, not to the credential (what `report
/// merge` keeps per location rather than per entry).
pub const PER_PLACE: &[&str] = &[
    "path",
    "line",
    "column",
    "end_line",
    "start",
    "end",
    "context",
    "provenance",
    "encoding",
    "entropy",
    "secret",
    "redacted",
    "fingerprint",
    "credential_set",
    "rule",
    "name",
    "confidence",
    "reasons",
    "hooks",
];

impl Record {
    /// Read one finding of an earlier report.
    pub fn from_value(v: Value) -> Result<Record, RecordError> {
        let Value::Object(o) = v else {
            return Err(RecordError("not a JSON object".into()));
        };
        match serde_json::from_value(Value::Object(o.clone())) {
            Ok(r) => Ok(r),
            Err(e) => Err(RecordError(describe(&o, &e))),
        }
    }

    /// Read one line of JSON Lines, or one finding of a document.
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        let v: Value = serde_json::from_str(text)
            // serde_json's syntax messages name a position, never the input.
            .map_err(|e| RecordError(format!("not JSON ({e})")))?;
        Record::from_value(v)
    }

    /// The fields that belong to the credential wherever it is found (an account, a
    /// validation, a reach, and fields this schema does not name), in the record's order;
    /// null fields are left out.
    pub fn per_credential(&self) -> Map<String, Value> {
        let Ok(Value::Object(mut o)) = serde_json::to_value(self) else {
            return Map::new();
        };
        o.retain(|k, v| !PER_PLACE.contains(&k.as_str()) && !v.is_null());
        o
    }

    /// Every free-text field but `secret` and `context` (which `report::Redact` treats
    /// itself), for masking what a report holds in clear. Typed values (the confidence, the
    /// encoding, a validation's status) cannot hold a secret and are left alone.
    pub fn texts_mut(&mut self, mut f: impl FnMut(&mut String)) {
        f(&mut self.rule);
        f(&mut self.name);
        f(&mut self.path);
        f(&mut self.fingerprint);
        self.reasons.iter_mut().for_each(&mut f);
        for s in [
            &mut self.credential_set,
            &mut self.aws_key_id,
            &mut self.aws_account,
            &mut self.region,
            &mut self.expires,
            &mut self.expired,
        ]
        .into_iter()
        .flatten()
        {
            f(s);
        }
        if let Some(p) = &mut self.provenance {
            p.texts_mut(&mut f);
        }
        if let Some(v) = &mut self.validation {
            for s in [&mut v.account, &mut v.arn, &mut v.user_id, &mut v.reason]
                .into_iter()
                .flatten()
            {
                f(s);
            }
            f(&mut v.checked_at);
        }
        if let Some(r) = &mut self.reach {
            f(&mut r.identity);
            r.not_evaluated.iter_mut().for_each(&mut f);
            r.policies.iter_mut().for_each(&mut f);
            r.notes.iter_mut().for_each(&mut f);
            if let Some(s) = &mut r.reason {
                f(s);
            }
        }
        for h in &mut self.hooks {
            f(&mut h.name);
            f(&mut h.status);
            if let Some(s) = &mut h.detail {
                f(s);
            }
        }
        self.other.values_mut().for_each(|v| texts_in(v, &mut f));
    }

    fn order_key(&self) -> OrderKey<'_> {
        OrderKey {
            path: self.path.as_str().into(),
            start: self.start,
            rule: &self.rule,
            end: self.end,
            provenance: self.provenance.as_ref(),
            fingerprint: &self.fingerprint,
            encoding: self.encoding,
        }
    }
}

fn texts_in(v: &mut Value, f: &mut impl FnMut(&mut String)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter_mut().for_each(|x| texts_in(x, f)),
        Value::Object(o) => o.values_mut().for_each(|x| texts_in(x, f)),
        _ => {}
    }
}

/// Why `o` is not a record, naming the field at fault and not its value: serde's messages
/// quote a value of the wrong type or an unknown variant, and a value can be a secret.
fn describe(o: &Map<String, Value>, e: &serde_json::Error) -> String {
    let message = e.to_string();
    if message.starts_with("missing field") {
        return message;
    }
    let expected = message
        .split_once(", expected ")
        .map(|(_, x)| format!(": expected {x}"))
        .unwrap_or_default();
    // Each field alone beside the two a record needs: the first that fails is the culprit.
    let culprit = o.iter().find(|(k, v)| {
        let mut probe = Map::new();
        probe.insert("rule".into(), Value::String(String::new()));
        probe.insert("fingerprint".into(), Value::String(String::new()));
        probe.insert((*k).clone(), (*v).clone());
        serde_json::from_value::<Record>(Value::Object(probe)).is_err()
    });
    match culprit {
        Some((k, _)) => format!("field `{}` is not of its type{expected}", k.escape_debug()),
        None => "not a leakhound finding".into(),
    }
}

/// What a report is ordered by: path, position and rule; what ties (one path in two
/// commits, two layers, two cells) is ordered by the rest of its place, so that a report does
/// not depend on which worker finished first. Built from a [`Finding`] (a scan's report) and
/// from a [`Record`] (shards merged) alike.
struct OrderKey<'a> {
    path: std::borrow::Cow<'a, str>,
    start: u64,
    rule: &'a str,
    end: u64,
    provenance: Option<&'a Provenance>,
    fingerprint: &'a str,
    encoding: Option<Encoding>,
}

impl OrderKey<'_> {
    fn cmp(&self, o: &OrderKey<'_>) -> Ordering {
        // The place and the encoding compare as their JSON, as a report shows them.
        (&self.path, self.start, self.rule)
            .cmp(&(&o.path, o.start, o.rule))
            .then_with(|| self.end.cmp(&o.end))
            .then_with(|| json(&self.provenance).cmp(&json(&o.provenance)))
            .then_with(|| self.fingerprint.cmp(o.fingerprint))
            .then_with(|| json(&self.encoding).cmp(&json(&o.encoding)))
    }
}

/// A value's JSON text, for comparing places as a report shows them.
fn json<T: Serialize>(x: &T) -> String {
    serde_json::to_string(x).unwrap_or_default()
}

/// The order of a report's findings ([`OrderKey`]).
pub fn report_order(a: &Record, b: &Record) -> Ordering {
    a.order_key().cmp(&b.order_key())
}

impl Finding {
    /// `findings` in the one report order: the same as [`report_order`] over their records.
    /// Each path is written out once, not once per comparison: a run's thousands of findings
    /// are sorted on one thread at its end, and writing paths out in the comparisons was
    /// most of that sort.
    pub fn sort_for_report(findings: &mut [Finding]) {
        let paths: Vec<String> = findings.iter().map(Finding::path).collect();
        let mut order: Vec<usize> = (0..findings.len()).collect();
        order.sort_by(|&a, &b| {
            let key = |i: usize| findings[i].order_key(paths[i].as_str().into());
            key(a).cmp(&key(b))
        });
        // In place, a cycle at a time (position `j` takes what is at `order[j]`): findings
        // are large, and a second list of them cost as much as the sort.
        let mut placed = vec![false; findings.len()];
        for i in 0..findings.len() {
            let mut j = i;
            while !std::mem::replace(&mut placed[j], true) && order[j] != i {
                findings.swap(j, order[j]);
                j = order[j];
            }
        }
    }

    fn order_key<'a>(&'a self, path: std::borrow::Cow<'a, str>) -> OrderKey<'a> {
        OrderKey {
            path,
            start: self.start as u64,
            rule: &self.rule_id,
            end: self.end as u64,
            provenance: Some(&self.provenance),
            fingerprint: &self.fingerprint,
            encoding: self.encoding,
        }
    }

    /// The finding as a report holds it (the schema is in `docs/json.md`): what reports,
    /// hooks and filter logs all show. Redacted unless `show`.
    pub fn record(&self, show: bool) -> Record {
        let shown = show || self.public;
        let mut r = Record {
            rule: self.rule_id.clone(),
            name: self.rule_name.clone(),
            confidence: Some(self.confidence),
            reasons: self.reasons.iter().map(|r| r.to_string()).collect(),
            path: self.path(),
            line: self.line as u64,
            column: self.column as u64,
            end_line: self.end_line as u64,
            start: self.start as u64,
            end: self.end as u64,
            secret: self.display_secret(show),
            redacted: !shown,
            fingerprint: self.fingerprint.clone(),
            context: self.context.render(show),
            encoding: self.encoding,
            credential_set: self.credential_set.clone(),
            provenance: Some(self.provenance.clone()),
            entropy: shown.then(|| (self.entropy * 100.0).round() / 100.0),
            aws_key_id: None,
            aws_account: None,
            region: None,
            expires: None,
            expired: None,
            validation: self.validation.clone(),
            reach: self.reach.clone(),
            hooks: self.hooks.clone(),
            other: Map::new(),
        };
        for a in &self.annotations {
            let value = Some(a.value.clone());
            match a.key {
                "aws_key_id" => r.aws_key_id = value,
                "aws_account" => r.aws_account = value,
                "region" => r.region = value,
                "expires" => r.expires = value,
                "expired" => r.expired = value,
                key => {
                    r.other.insert(key.into(), Value::String(a.value.clone()));
                }
            }
        }
        r
    }

    /// [`Finding::record`] as a JSON value.
    pub fn to_json(&self, show: bool) -> Value {
        serde_json::to_value(self.record(show)).unwrap_or(Value::Null)
    }
}

/// One finding a baseline written by `--write-baseline` accepts: what identifies it, and a
/// salted hash of its secret (`BaselineKdf`) in place of the secret, its context and its
/// fingerprint (see `docs/json.md`, Baselines).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BaselineEntry {
    pub rule: String,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub line: u64,
    #[serde(default)]
    pub column: u64,
    pub argon2: String,
    #[serde(default)]
    pub provenance: Option<Provenance>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_record_names_the_field_and_never_the_value() {
        let secret = "sk_live_0123456789abcdefghij";
        let e = Record::parse(&format!(
            r#"{{"rule": "x", "fingerprint": "f", "line": "{secret}"}}"#
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("`line`") && e.contains("u64"), "{e}");
        assert!(!e.contains(secret), "{e}");
        let e = Record::parse(&format!(
            r#"{{"rule": "x", "fingerprint": "f", "confidence": "{secret}"}}"#
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("`confidence`") && !e.contains(secret), "{e}");
        let e = Record::parse(r#"{"fingerprint": "f"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing field `rule`"), "{e}");
        assert!(Record::parse("[1]").is_err());
    }

    /// The record is the schema: a report read back and written again is the same text.
    #[test]
    fn the_golden_report_reads_back_to_the_same_text() {
        let golden = include_str!("../../tests/golden/scan.jsonl");
        let mut n = 0;
        for line in golden.lines().filter(|l| !l.is_empty()) {
            let r = Record::parse(line).unwrap();
            assert_eq!(serde_json::to_string(&r).unwrap(), line);
            assert!(
                r.other.is_empty(),
                "every field is named: {:?}",
                r.other.keys()
            );
            n += 1;
        }
        assert!(n > 0);
    }

    #[test]
    fn fields_it_does_not_name_are_kept_in_order() {
        let text = r#"{"rule":"x","fingerprint":"f","zeta":1,"alpha":"a"}"#;
        let r = Record::parse(text).unwrap();
        let keys: Vec<&String> = r.other.keys().collect();
        assert_eq!(keys, ["zeta", "alpha"]);
        let c = r.per_credential();
        assert_eq!(c.keys().collect::<Vec<_>>(), ["zeta", "alpha"]);
    }
}
