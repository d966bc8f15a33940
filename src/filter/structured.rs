//! Masking whole texts and structures: an agent's hook event, an MCP message, a transcript
//! line. A JSON document keeps its shape: only string values holding a secret change, every
//! other byte stays as it was, and the result is valid JSON again.
//!
//! A JSON document is scanned once, with its strings' escapes decoded in place: a secret's
//! key gives it context (`"SecretAccessKey": "…"`), `\n`, `\"`, `\u002B` or `\u001b[31m`
//! inside a token cannot hide it, and decoded views (base64) are found as in any text. Each
//! secret's span is mapped back to the document, widened to whole escapes and cut at string
//! boundaries, so a mask never leaves half an escape behind or replaces a quote.

use super::{detect, findings_in, Masker, Visible};
use crate::decode::json::{self, StringAt};
use crate::engine::{Engine, Match};
use crate::model::Known;
use crate::model::{Finding, Origin};
use crate::source::Provenance;
use crate::sync::lock;
use std::sync::{Arc, Mutex};

/// A masked copy and what was masked in it.
#[derive(Debug)]
pub struct Masked {
    pub bytes: Vec<u8>,
    pub findings: Vec<Finding>,
}

/// One masking context: the engine, and the values known as secrets in it so far. Everything
/// masked through one `Masking` (an agent's event, an MCP session, a file being scrubbed) is
/// masked by value: a secret found anywhere in it is masked wherever else it appears, in
/// string values and in object keys alike.
#[derive(Clone)]
pub struct Masking<'e> {
    engine: &'e Engine,
    known: Arc<Mutex<Known>>,
}

impl<'e> Masking<'e> {
    pub fn new(engine: &'e Engine) -> Masking<'e> {
        Masking::sharing(engine, Arc::default())
    }

    /// A context whose values are `known`, shared with other contexts (both directions of
    /// an MCP session).
    pub fn sharing(engine: &'e Engine, known: Arc<Mutex<Known>>) -> Masking<'e> {
        Masking { engine, known }
    }

    pub fn engine(&self) -> &'e Engine {
        self.engine
    }

    /// How many secret values are known.
    pub fn known(&self) -> usize {
        lock(&self.known).len()
    }

    /// Remember the secrets in `bytes` (a JSON document is read with its strings decoded)
    /// without masking anything: what the rest of an event or a file holds, before one part
    /// of it is masked.
    pub fn learn(&self, bytes: &[u8]) {
        let text = match json::strings(bytes) {
            Some(_) => json::unescape(bytes, 0).bytes,
            None => bytes.to_vec(),
        };
        let vis = Visible::new(&text);
        detect(self.engine, &vis, &mut lock(&self.known), true);
    }

    /// A streaming masker that shares this context's values.
    pub fn stream(&self, name: &str) -> Masker<'e> {
        Masker::sharing(self.engine, name, self.known.clone())
    }

    /// `text` with every secret replaced by `[REDACTED:rule-id]`. The text is whole: an end
    /// that could merely begin a secret is kept, as nothing follows it.
    pub fn text(&self, name: &str, text: &[u8]) -> Masked {
        let (bytes, findings) = self.stream(name).complete(text);
        Masked { bytes, findings }
    }

    /// `doc` with every secret in its strings (values and keys) masked, or `None` when it is
    /// not JSON. Findings carry `name`, with lines and columns of the decoded text (a tool's
    /// stdout line, not the one line of JSON it is escaped into).
    pub fn json(&self, name: &str, doc: &[u8]) -> Option<Masked> {
        let strings = json::strings_and_keys(doc)?;
        // Outside strings valid JSON has no backslash, so this decodes the strings in place.
        let text = json::unescape(doc, 0);
        Some(self.decoded(name, doc, &strings, &text, &[]))
    }

    /// A notebook masked as [`Masking::json`] masks any document, its multi-line fields read
    /// as the one text each is: nbformat writes a cell's source or an output's text as a list
    /// of strings that every reader shows joined, so a secret cut between two of them is
    /// masked in both. `None` when it is not JSON.
    pub fn notebook(&self, name: &str, doc: &[u8]) -> Option<Masked> {
        let strings = json::strings_and_keys(doc)?;
        let (text, left_out) = json::unescape_joining_items(doc, &strings);
        Some(self.decoded(name, doc, &strings, &text, &left_out))
    }

    /// `doc` masked where the secrets of `text` (its strings decoded, each mapped back to
    /// `doc`) are, each cut to the strings of `strings` it spans but those `text` leaves out
    /// (`left_out`, sorted: a stream output's fields between two outputs' texts joined).
    fn decoded(
        &self,
        name: &str,
        doc: &[u8],
        strings: &[StringAt],
        text: &crate::decode::View,
        left_out: &[usize],
    ) -> Masked {
        let vis = Visible::new(&text.bytes);
        let mut known = lock(&self.known);
        let (_, detection) = detect(self.engine, &vis, &mut known, true);
        let provenance = Provenance::Stream {
            name: name.to_string(),
        };
        let findings = findings_in(
            self.engine,
            &text.bytes,
            &detection,
            0..text.bytes.len(),
            &provenance,
            Origin::START,
        );
        let mut findings = findings;
        crate::detect::mask_contexts(&mut findings, &known);
        let known_at = known.find(&vis.bytes).into_iter().map(|o| {
            vis.original(&Match {
                start: o.start,
                end: o.end,
                rule: o.rule,
                match_start: o.start,
                match_end: o.end,
            })
        });
        let spans = detection
            .spans()
            .into_iter()
            .chain(known_at)
            .map(|m| {
                let (start, end) = text.original(m.start, m.end);
                (start, end, m.rule)
            })
            .collect();
        Masked {
            bytes: splice(self.engine, doc, strings, left_out, spans),
            findings,
        }
    }

    /// A masked copy of a parsed value, through [`Masking::json`] on its serialisation, so
    /// object keys give their values context as they do in text. `None` only if the value
    /// cannot be written or read back, which a masker treats as a failure to scan.
    pub fn value(
        &self,
        name: &str,
        value: &serde_json::Value,
    ) -> Option<(serde_json::Value, Vec<Finding>)> {
        let raw = serde_json::to_vec(value).ok()?;
        let m = self.json(name, &raw)?;
        let v = serde_json::from_slice(&m.bytes).ok()?;
        Some((v, m.findings))
    }
}

/// `text` masked in a context of its own (see [`Masking::text`]).
pub fn mask_text(engine: &Engine, name: &str, text: &[u8]) -> Masked {
    Masking::new(engine).text(name, text)
}

/// `doc` masked in a context of its own (see [`Masking::json`]).
pub fn mask_json(engine: &Engine, name: &str, doc: &[u8]) -> Option<Masked> {
    Masking::new(engine).json(name, doc)
}

/// `value` masked in a context of its own (see [`Masking::value`]).
pub fn mask_value(
    engine: &Engine,
    name: &str,
    value: &serde_json::Value,
) -> Option<(serde_json::Value, Vec<Finding>)> {
    Masking::new(engine).value(name, value)
}

/// `doc` with each span masked: spans are cut to the string bodies they overlap (a span over
/// no string is not a string's secret and stays) and widened to whole escapes (spans from the
/// decoded text already end on them; an escape JSON does not know, `\uZZZZ`, is kept as
/// written and would not); overlapping or touching pieces in one string share one marker.
fn splice(
    engine: &Engine,
    doc: &[u8],
    strings: &[StringAt],
    left_out: &[usize],
    mut spans: Vec<(usize, usize, usize)>,
) -> Vec<u8> {
    spans.sort_unstable();
    let mut pieces: Vec<(usize, usize, usize)> = Vec::new();
    // The escapes of the last string a span fell in: a tool's output is one long string
    // holding every secret, and its escapes are found once, not once per secret.
    let mut cached: Option<(usize, Vec<(usize, usize)>)> = None;
    for (s, e, rule) in spans {
        let first = strings.partition_point(|b| b.end <= s);
        for (k, b) in strings
            .iter()
            .enumerate()
            .skip(first)
            .take_while(|(_, b)| b.start < e)
        {
            let (cs, ce) = (s.max(b.start), e.min(b.end));
            if cs >= ce || left_out.binary_search(&k).is_ok() {
                continue;
            }
            let escapes = match &mut cached {
                Some((i, x)) if *i == k => x,
                slot => {
                    &slot
                        .insert((k, escapes_in(&doc[b.start..b.end], b.start)))
                        .1
                }
            };
            let (cs, ce) = widen(escapes, cs, ce);
            pieces.push((cs, ce, rule));
        }
    }
    pieces.sort_unstable();
    let mut out = Vec::with_capacity(doc.len());
    let mut at = 0;
    for (s, e, rule) in pieces {
        if e <= at {
            continue;
        }
        if s >= at {
            out.extend_from_slice(&doc[at..s]);
            out.extend_from_slice(b"[REDACTED:");
            out.extend_from_slice(engine.rules()[rule].id.as_bytes());
            out.push(b']');
        }
        at = e;
    }
    out.extend_from_slice(&doc[at..]);
    out
}

/// `cs..ce` widened to whole escapes: to the start of one `cs` falls inside and the end of
/// one `ce` falls inside.
fn widen(escapes: &[(usize, usize)], cs: usize, ce: usize) -> (usize, usize) {
    let cs = match escapes.partition_point(|&(at, _)| at <= cs) {
        i if i > 0 && cs < escapes[i - 1].1 => escapes[i - 1].0,
        _ => cs,
    };
    let ce = match escapes.partition_point(|&(at, _)| at < ce) {
        0 => ce,
        i => ce.max(escapes[i - 1].1),
    };
    (cs, ce)
}

/// Where (from `offset`) each escape of a string body begins and ends, in order: a mask
/// never begins or ends inside one. Every other byte is a character of its own.
fn escapes_in(body: &[u8], offset: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(j) = memchr::memchr(b'\\', &body[i..]) {
        let at = i + j;
        let len = if body.get(at + 1) == Some(&b'u') {
            6
        } else {
            2
        };
        i = (at + len).min(body.len());
        out.push((offset + at, offset + i));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{engine, KEY, SECRET};

    /// Widening by the escapes alone gives what widening to the nearest character or
    /// escape boundary does, on every span of bodies full of escapes, cut short ones too.
    #[test]
    fn a_piece_is_widened_to_the_nearest_boundaries() {
        let mut rng = crate::testing::Rng::new(0x2545f491);
        let parts: [&[u8]; 8] = [
            b"a",
            b"\\n",
            b"\\\\",
            b"\\u00e9",
            b"\\\"",
            b"\xc3\xa9",
            b"\\u12",
            b"z",
        ];
        for _ in 0..300 {
            let mut body = Vec::new();
            for _ in 0..rng.below(9) {
                body.extend_from_slice(parts[rng.below(parts.len())]);
            }
            if rng.below(5) == 0 {
                body.push(b'\\');
            }
            let offset = 3;
            // Every offset a character or escape begins at, and the end.
            let mut bounds = Vec::new();
            let mut i = 0;
            while i < body.len() {
                bounds.push(offset + i);
                i += match body[i] {
                    b'\\' if body.get(i + 1) == Some(&b'u') => 6,
                    b'\\' => 2,
                    _ => 1,
                };
            }
            bounds.push(offset + body.len());
            let escapes = escapes_in(&body, offset);
            for cs in offset..offset + body.len() {
                for ce in cs + 1..=offset + body.len() {
                    let want = (
                        *bounds.iter().rev().find(|&&b| b <= cs).unwrap(),
                        *bounds.iter().find(|&&b| b >= ce).unwrap(),
                    );
                    assert_eq!(widen(&escapes, cs, ce), want, "{body:?} {cs}..{ce}");
                }
            }
        }
    }

    #[test]
    fn a_json_document_keeps_its_shape() {
        let e = engine();
        let doc = format!(
            r#"{{"n": 1.50, "ok": true, "stdout": "id={KEY}\nsecret = {SECRET}\n", "k": "plain"}}"#
        );
        let m = mask_json(&e, "t", doc.as_bytes()).unwrap();
        let out = String::from_utf8(m.bytes).unwrap();
        assert!(!out.contains(KEY) && !out.contains(SECRET), "{out}");
        assert!(out.starts_with(r#"{"n": 1.50, "ok": true, "stdout": "id=[REDACTED:"#));
        assert!(out.ends_with(r#"\n", "k": "plain"}"#), "{out}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
        assert!(m.findings.len() >= 2);
    }

    #[test]
    fn escapes_cannot_hide_a_secret_and_are_never_cut() {
        let e = engine();
        // The key id with one character written as a \u escape, and a secret whose `/` is `\/`.
        let key = format!("{}\\u0051{}", &KEY[..4], &KEY[5..]);
        let secret = SECRET.replace('/', "\\/");
        let doc = format!(r#"["aws_access_key_id={key}\naws_secret_access_key={secret}"]"#);
        let m = mask_json(&e, "t", doc.as_bytes()).unwrap();
        let out = String::from_utf8(m.bytes).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let text = v[0].as_str().unwrap();
        assert!(
            !text.contains(&KEY[5..]) && !text.contains(&SECRET[..10]),
            "{text}"
        );
        assert!(!out.contains("\\u00") && !out.contains("ml36"), "{out}");
    }

    #[test]
    fn a_secret_given_context_by_its_key_is_masked() {
        let e = engine();
        let doc = format!(
            r#"{{"Credentials": {{"AccessKeyId": "{KEY}", "SecretAccessKey": "{SECRET}"}}}}"#
        );
        let (v, f) = mask_value(&e, "t", &serde_json::from_str(&doc).unwrap()).unwrap();
        let out = v.to_string();
        assert!(!out.contains(SECRET) && !out.contains(KEY), "{out}");
        assert!(f.len() >= 2);
    }

    #[test]
    fn not_json_is_none_and_text_is_masked_whole() {
        let e = engine();
        assert!(mask_json(&e, "t", b"{\"a\": ").is_none());
        let m = mask_text(&e, "t", format!("key {KEY} end AK").as_bytes());
        assert_eq!(
            String::from_utf8(m.bytes).unwrap(),
            "key [REDACTED:aws.access-key-id] end AK"
        );
    }
}
