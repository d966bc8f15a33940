//! Streaming redaction: bytes in, the same bytes out, with every secret replaced by
//! `[REDACTED:rule-id]`.
//!
//! What is held back, and for how long:
//! - complete lines go out as soon as they arrive, unless a rule whose matches span lines (a
//!   PEM block) has a keyword whose match may not have arrived yet;
//! - a partial line (a prompt, a progress bar) goes out when the stream goes idle, except a
//!   trailing run of characters that could still be the start of a secret;
//! - nothing is held beyond the longest possible match: a line longer than that goes out in
//!   pieces, the last window kept.
//!
//! Already-forwarded bytes stay as context for the next scan (a variable name before a value
//! that arrives later), never forwarded twice. ANSI escape sequences are stripped in the view
//! the engine scans and mapped back, so colour codes around or inside a secret do not hide it.

mod stream;

pub use stream::{pump, run, Sink};

use crate::engine::{Engine, Match};
use crate::report::{self, Finding, Origin};
use crate::source::Provenance;

/// Bytes of already-forwarded output kept as context for the next scan.
const CONTEXT: usize = 1024;

/// A streaming masker over one stream.
pub struct Masker<'e> {
    engine: &'e Engine,
    name: String,
    /// Forwarded bytes kept as context (original, unmasked), and where they begin.
    ctx: Vec<u8>,
    ctx_origin: Origin,
    /// Bytes not yet forwarded.
    pending: Vec<u8>,
    /// Longest run held when a line does not end.
    hold_limit: usize,
}

impl<'e> Masker<'e> {
    pub fn new(engine: &'e Engine, name: &str) -> Masker<'e> {
        Masker {
            engine,
            name: name.to_string(),
            ctx: Vec::new(),
            ctx_origin: Origin::START,
            pending: Vec::new(),
            hold_limit: engine.max_window().max(CONTEXT),
        }
    }

    /// Take `input`; return what may be forwarded now and the findings in it.
    pub fn push(&mut self, input: &[u8]) -> (Vec<u8>, Vec<Finding>) {
        self.pending.extend_from_slice(input);
        self.flush(Flush::Lines)
    }

    /// The stream is idle: forward what cannot be part of a secret.
    pub fn idle(&mut self) -> (Vec<u8>, Vec<Finding>) {
        self.flush(Flush::Idle)
    }

    /// The stream ended: forward everything.
    pub fn finish(&mut self) -> (Vec<u8>, Vec<Finding>) {
        self.flush(Flush::All)
    }

    /// Whether bytes are held back.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    fn flush(&mut self, how: Flush) -> (Vec<u8>, Vec<Finding>) {
        if self.pending.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let base = self.ctx.len();
        let mut hay = std::mem::take(&mut self.ctx);
        hay.extend_from_slice(&self.pending);
        let (matches, spans) = scan_visible(self.engine, &hay);
        let mut upto = match how {
            Flush::All => hay.len(),
            Flush::Lines => match memchr::memrchr2(b'\n', b'\r', &hay[base..]) {
                Some(p) => base + p + 1,
                None => base,
            },
            Flush::Idle => hay.len() - secretish_tail(&hay[base..]),
        };
        if how != Flush::All {
            if let Some(h) = self.engine.multiline_pending(&hay, &matches) {
                upto = upto.min(h.max(base));
            }
            // A line longer than any match: forward all but the last window.
            let cap = hay.len().saturating_sub(self.hold_limit);
            upto = upto.max(cap);
            // Never forward part of a secret.
            for &(s, e, _) in &spans {
                if s < upto && e > upto {
                    upto = s.max(base);
                }
            }
        }
        let mut out = Vec::with_capacity(upto - base + 32);
        let mut at = base;
        for &(s, e, rule) in spans.iter().filter(|(s, e, _)| *e > base && *s < upto) {
            let s = s.max(base);
            if s < at {
                continue;
            }
            out.extend_from_slice(&hay[at..s]);
            out.extend_from_slice(b"[REDACTED:");
            out.extend_from_slice(self.engine.rules()[rule].id.as_bytes());
            out.push(b']');
            at = e.min(upto).max(at);
        }
        out.extend_from_slice(&hay[at..upto]);
        let reported: Vec<Match> = matches
            .into_iter()
            .filter(|m| m.start >= base && m.start < upto)
            .collect();
        let findings = report::findings_at(
            self.engine.rules(),
            &hay,
            &reported,
            &Provenance::Stream {
                name: self.name.clone(),
            },
            self.ctx_origin,
        );
        // Keep the last CONTEXT forwarded bytes as context; the rest stays pending.
        self.pending = hay[upto..].to_vec();
        let keep_from = upto.saturating_sub(CONTEXT);
        self.ctx_origin.advance(&hay[..keep_from]);
        hay.truncate(upto);
        hay.drain(..keep_from);
        self.ctx = hay;
        (out, findings)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flush {
    Lines,
    Idle,
    All,
}

/// Bytes at the end of `b` that could begin a secret: a run of token characters.
fn secretish_tail(b: &[u8]) -> usize {
    b.iter()
        .rev()
        .take_while(|&&c| c.is_ascii_alphanumeric() || b"+/=_-.~:@!#$%^&*".contains(&c))
        .count()
}

/// Matches in `hay`, found in a view with ANSI escape sequences removed, and the spans to
/// mask in `hay` itself (start, end, rule), sorted.
fn scan_visible(engine: &Engine, hay: &[u8]) -> (Vec<Match>, Vec<(usize, usize, usize)>) {
    if memchr::memchr(0x1b, hay).is_none() {
        let m = engine.scan(hay);
        let spans = m.iter().map(|m| (m.start, m.end, m.rule)).collect();
        return (m, spans);
    }
    let crate::decode::View { bytes: view, map } = crate::decode::strip_ansi(hay);
    let found = engine.scan(&view);
    let back = |i: usize| if i < map.len() { map[i] } else { hay.len() };
    let mut spans = Vec::with_capacity(found.len());
    let mut matches = Vec::with_capacity(found.len());
    for m in found {
        let (s, e) = (back(m.start), back(m.end - 1) + 1);
        spans.push((s, e, m.rule));
        matches.push(Match {
            start: s,
            end: e,
            rule: m.rule,
            match_start: back(m.match_start),
            match_end: back(m.match_end.saturating_sub(1)) + 1,
        });
    }
    spans.sort_unstable();
    (matches, spans)
}

/// A copy of a notebook with every secret in its cells and outputs replaced by
/// `[REDACTED:rule-id]`, and how many were replaced. The mask holds no quote or backslash, so
/// a valid notebook stays valid JSON. A notebook that is not JSON is masked as plain text
/// (`valid_json` false).
pub fn redact_notebook(engine: &Engine, raw: &[u8]) -> (Vec<u8>, usize, bool) {
    let (mut spans, valid) = match crate::source::notebook::parts(raw) {
        Some(parts) => (
            parts
                .iter()
                .flat_map(|p| {
                    engine.scan(&p.view.bytes).into_iter().map(|m| {
                        let (s, e) = p.view.original(m.start, m.end);
                        (s, e, m.rule)
                    })
                })
                .collect::<Vec<_>>(),
            true,
        ),
        None => (
            engine
                .scan(raw)
                .into_iter()
                .map(|m| (m.start, m.end, m.rule))
                .collect(),
            false,
        ),
    };
    spans.sort_unstable();
    let mut out = Vec::with_capacity(raw.len());
    let mut at = 0;
    let mut n = 0;
    for (s, e, rule) in spans {
        if s < at {
            continue;
        }
        out.extend_from_slice(&raw[at..s]);
        out.extend_from_slice(format!("[REDACTED:{}]", engine.rules()[rule].id).as_bytes());
        at = e;
        n += 1;
    }
    out.extend_from_slice(&raw[at..]);
    (out, n, valid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_of_token_characters() {
        assert_eq!(secretish_tail(b">>> "), 0);
        assert_eq!(secretish_tail(b"key: AKIA12"), 6);
    }
}
