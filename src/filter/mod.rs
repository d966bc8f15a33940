//! Streaming redaction: bytes in, the same bytes out, with every secret replaced by
//! `[REDACTED:rule-id]`.
//!
//! What is held back, and for how long:
//! - complete lines go out as soon as they arrive, unless a rule whose secret spans lines (a
//!   PEM block) has a keyword whose match may not have arrived yet; a rule whose match spans
//!   lines only before its secret (an AWS key id's line, then the secret) holds nothing, as
//!   the forwarded lines stay in the next scan's context;
//! - a partial line (a prompt, a progress bar) goes out when the stream goes idle, except a
//!   tail where the secret of some rule's match still under way could begin (see
//!   [`Prefixes`]): a name and its assignment sign go out;
//! - nothing is held beyond the longest possible match: a line longer than that goes out in
//!   pieces, the last window kept.
//!
//! At the end of the stream (end of input, a child killed mid-token) a tail that could still
//! be a secret's beginning is replaced by `[REDACTED:partial]`: the first 34 characters of a
//! GitHub token give the whole token through its checksum, so a prefix is a secret too.
//!
//! Already-forwarded bytes stay as context for the next scan (a variable name before a value
//! that arrives later), never forwarded twice. Everything is decided on the *visible* text:
//! ANSI escape sequences (and an escape cut off at the end of what arrived), and invisible
//! characters inside a word (a NUL, a zero-width space, a soft hyphen), are left out of the
//! view the engine scans and mapped back, so colour codes or an invisible character around
//! or inside a secret do not hide it, neither from the scan nor from the partial-match
//! check. A carriage return is a line boundary, as the rules treat it.

pub mod mcp;
mod stream;
mod structured;

pub use stream::{pump, run, Sink};
pub use structured::{mask_json, mask_text, mask_value, Masked, Masking};

use crate::detect::Detection;
use crate::engine::{Engine, Match};
use crate::model::Known;
use crate::model::{Finding, Origin};
use crate::source::Provenance;
use crate::sync::lock;
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{Anchored, Input, MatchKind};
use std::sync::{Arc, Mutex, OnceLock};

/// Bytes of already-forwarded output kept as context for the next scan.
const CONTEXT: usize = 1024;

/// A partial match at least this long is held (and masked at the end) even before it holds
/// a keyword: shorter pieces of a secret are not worth much, longer ones are (the issue's
/// test: no piece of 8 characters may escape). Below this, a tail such as `12s` or `50%`
/// that only a broad rule could continue goes out when the stream is idle.
const MIN_PIECE: usize = 8;

/// The mask written for a tail cut off at the end of the stream that could be a secret.
const PARTIAL: &str = "partial";

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
    /// Whether the last byte forwarded was inside a mask: a secret that continues into the
    /// next flush then extends that mask instead of getting a second marker.
    mask_open: bool,
    /// Built on the first idle or final flush (a filter whose lines all end never pays).
    prefixes: Option<(Arc<Prefixes>, Option<Caches>)>,
    /// The secret values seen so far, in this stream and in any other that shares them (a
    /// child's stdout and stderr): each is masked wherever it appears after its first sighting.
    known: Arc<Mutex<Known>>,
}

impl<'e> Masker<'e> {
    pub fn new(engine: &'e Engine, name: &str) -> Masker<'e> {
        Masker::sharing(engine, name, Arc::default())
    }

    /// A masker that learns secret values into, and masks with, `known`.
    pub fn sharing(engine: &'e Engine, name: &str, known: Arc<Mutex<Known>>) -> Masker<'e> {
        Masker {
            engine,
            name: name.to_string(),
            ctx: Vec::new(),
            ctx_origin: Origin::START,
            pending: Vec::new(),
            hold_limit: engine.max_window().max(CONTEXT),
            mask_open: false,
            prefixes: None,
            known,
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

    /// The stream ended: forward everything, with a tail that could be the beginning of a
    /// secret masked as `[REDACTED:partial]` (fail closed: the rest never comes).
    pub fn finish(&mut self) -> (Vec<u8>, Vec<Finding>) {
        self.flush(Flush::All)
    }

    /// Mask one complete text (a JSON string's value, a file): everything goes out, and an
    /// end that merely could begin a secret stays, since nothing follows it. The masker is
    /// left empty, with the text as context for the next one.
    pub fn complete(&mut self, input: &[u8]) -> (Vec<u8>, Vec<Finding>) {
        self.pending.extend_from_slice(input);
        self.flush(Flush::Complete)
    }

    /// Learn the secret values in what is held and `input`, forwarding nothing: a child's
    /// other stream may be about to forward what the child wrote after them. A value at the
    /// very end is learned as far as it has come: this stream will mask it when it ends or
    /// grows, and the other stream must not show what has come of it meanwhile (a piece of
    /// a longer secret is masked as one).
    pub fn learn_ahead(&self, input: &[u8]) {
        // From the context forwarded before: a held value's name may be gone already.
        let text = [&self.ctx[..], &self.pending, input].concat();
        detect(
            self.engine,
            &Visible::new(&text),
            &mut lock(&self.known),
            true,
        );
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
        let vis = Visible::new(&hay);
        let (found, detection) = {
            let mut known = lock(&self.known);
            let whole = matches!(how, Flush::All | Flush::Complete);
            detect(self.engine, &vis, &mut known, whole)
        };
        let mut spans: Vec<(usize, usize, Label)> = detection
            .spans()
            .iter()
            .map(|m| (m.start, m.end, Label::Rule(m.rule)))
            .collect();
        // Every value known as a secret, wherever it is: a repetition of one found earlier in
        // this stream (or the other stream of the same child) or elsewhere on this line.
        spans.extend(self.known_spans(&vis, base));
        // Where a match could still be under way at the end: held when idle, masked at the end.
        let partial = match how {
            Flush::Lines | Flush::Complete => None,
            Flush::Idle | Flush::All => {
                let rule = self.partial_start(&vis.bytes, &found, how == Flush::All);
                let value = lock(&self.known).prefix_at_end(&vis.bytes).map(|(p, _)| p);
                let ended = trailing_line_end(&vis.bytes);
                rule.into_iter()
                    .chain(value)
                    .min()
                    // A stream that ended its last line cut nothing off on it: only a block
                    // that spans lines (a PEM key) can still be under way there.
                    .filter(|&p| {
                        how != Flush::All
                            || ended == 0
                            || vis
                                .bytes
                                .get(p..vis.bytes.len() - ended)
                                .is_some_and(|t| memchr::memchr2(b'\n', b'\r', t).is_some())
                    })
                    .map(|p| vis.raw(p).max(base))
            }
        };
        let mut upto = match how {
            Flush::All | Flush::Complete => hay.len(),
            Flush::Lines => match memchr::memrchr2(b'\n', b'\r', &hay[base..]) {
                Some(p) => base + p + 1,
                None => base,
            },
            // UTF-16 text's last byte alone is half a character: it waits for the other.
            Flush::Idle if vis.utf16.is_some() => {
                partial.unwrap_or(hay.len()).min(vis.raw(vis.bytes.len()))
            }
            Flush::Idle => partial.unwrap_or(hay.len()),
        };
        if matches!(how, Flush::All | Flush::Complete) {
            // The stream's last line end is no part of a secret: it stays, so the output
            // still ends its last line.
            let end = hay.len() - trailing_line_end(&hay);
            if let Some(p) = partial.filter(|&p| p < end) {
                spans.push((p, end, Label::Partial));
            }
        } else {
            if let Some(h) = self
                .engine
                .multiline_pending(&hay, &detection.plain, CONTEXT)
            {
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
        if how == Flush::Idle {
            // A value that reaches the end, forwarded masked as settled, is a secret now: a
            // bare copy elsewhere (the child's other stream) must not wait for this line to
            // end to be masked. Should it grow, the longer value is learned as well.
            let n = vis.bytes.len();
            let settled = Detection {
                plain: found
                    .iter()
                    .filter(|m| m.end == n && vis.raw(m.end) <= upto)
                    .cloned()
                    .collect(),
                decoded: Vec::new(),
            };
            learn(self.engine, &mut lock(&self.known), &settled, &vis.bytes);
        }
        spans.sort_unstable();
        let out = self.masked(&hay, base, upto, &spans, vis.utf16);
        let provenance = Provenance::Stream {
            name: self.name.clone(),
        };
        let mut findings = findings_in(
            self.engine,
            &hay,
            &detection,
            base..upto,
            &provenance,
            self.ctx_origin,
        );
        crate::detect::mask_contexts(&mut findings, &lock(&self.known));
        // Keep the last CONTEXT forwarded bytes as context; the rest stays pending.
        self.pending = hay[upto..].to_vec();
        let keep_from = upto.saturating_sub(CONTEXT);
        self.ctx_origin.advance(&hay[..keep_from]);
        hay.truncate(upto);
        hay.drain(..keep_from);
        self.ctx = hay;
        (out, findings)
    }

    /// Where values known as secrets occur in the visible text, in original offsets.
    fn known_spans(&self, vis: &Visible, base: usize) -> Vec<(usize, usize, Label)> {
        lock(&self.known)
            .find_after(&vis.bytes, vis.visible(base))
            .into_iter()
            .map(|o| {
                let m = vis.original(&Match {
                    start: o.start,
                    end: o.end,
                    rule: o.rule,
                    match_start: o.start,
                    match_end: o.end,
                });
                (m.start, m.end, Label::Known(o.rule))
            })
            .collect()
    }

    /// `hay[base..upto]` with `spans` masked: one marker per run of overlapping or touching
    /// spans, none for a span that continues a mask the previous flush ended in. `utf16`: the
    /// byte order of UTF-16 text ([`Visible::utf16`]), in which the markers are written.
    fn masked(
        &mut self,
        hay: &[u8],
        base: usize,
        upto: usize,
        spans: &[(usize, usize, Label)],
        utf16: Option<bool>,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(upto - base + 32);
        let mut at = base;
        let mut open = self.mask_open;
        // A marker in UTF-16 text is written in UTF-16, in the text's byte order: written as
        // UTF-8 it read as a line of CJK characters, and an odd length put the rest of the
        // text out of step.
        let marker = |out: &mut Vec<u8>, id: &str| {
            for part in ["[REDACTED:", id, "]"] {
                match utf16 {
                    None => out.extend_from_slice(part.as_bytes()),
                    Some(le) => out.extend(part.encode_utf16().flat_map(|u| {
                        if le {
                            u.to_le_bytes()
                        } else {
                            u.to_be_bytes()
                        }
                    })),
                }
            }
        };
        for &(s, e, rule) in spans {
            if e <= at || s >= upto {
                continue;
            }
            if s > at {
                out.extend_from_slice(&hay[at..s]);
                open = false;
            }
            if !open {
                let id = match rule {
                    Label::Rule(r) | Label::Known(r) => &self.engine.rules()[r].id,
                    Label::Partial => PARTIAL,
                };
                marker(&mut out, id);
                open = true;
            }
            at = e.min(upto);
        }
        if upto > at {
            out.extend_from_slice(&hay[at..upto]);
            open = false;
        }
        if upto > base {
            self.mask_open = open;
        }
        out
    }

    /// The earliest offset of the visible text `v` where the secret of a match still under
    /// way at its end could begin, over the matches worth holding: the run from the match's
    /// start holds one of the rules' keywords, or is at least [`MIN_PIECE`] long (and, at the
    /// end of the stream, [`looks_random`]), or is the start of a keyword at a word boundary
    /// (`AK`, `gh`, `postg`). A match the engine already found that runs to the end and cannot
    /// grow (its secret closed by the byte after it, or the stream ended) needs no holding.
    /// What comes before a secret is no part of it: a prompt (`Password: `, `Enter token: `)
    /// goes out whole, and the secret typed or printed after it is read with the prompt as
    /// context.
    fn partial_start(&mut self, v: &[u8], found: &[Match], at_end: bool) -> Option<usize> {
        let n = v.len();
        let lo = n.saturating_sub(self.engine.max_window().max(MIN_PIECE));
        let (pre, caches) = self.prefixes.get_or_insert_with(|| {
            let p = Prefixes::for_engine(self.engine);
            let c = p.before.as_ref().zip(p.rest.as_ref());
            let c = c.map(|(b, r)| (b.create_cache(), r.create_cache()));
            (p, c)
        });
        let last_keyword = pre.keywords.as_ref().and_then(|k| {
            k.find_overlapping_iter(&v[lo..])
                .map(|m| lo + m.start())
                .max()
        });
        // Starts inside a finished match reaching the end are settled: at the end of the
        // stream, or when its secret closed before the match ended and nothing that follows
        // can take the closing bytes into it.
        let settled: Vec<(usize, usize)> = found
            .iter()
            .filter(|m| {
                m.match_end == n
                    && (at_end || (m.end < m.match_end && !could_grow(self.engine, v, m)))
            })
            .map(|m| (m.match_start, m.match_end))
            .collect();
        // A secret begins at or after its match's start: once a start is past the earliest
        // secret found, no later match can begin one sooner.
        let mut earliest: Option<usize> = None;
        for j in lo..n {
            if earliest.is_some_and(|e| j >= e) {
                break;
            }
            let worth = last_keyword.is_some_and(|k| k >= j)
                || (n - j >= MIN_PIECE && (!at_end || looks_random(&v[j..])))
                || ((j == 0 || !is_word(v[j - 1])) && pre.is_keyword_prefix(&v[j..]));
            if worth && !settled.iter().any(|&(s, e)| s <= j && j < e) {
                // At the end of the stream a secret already found is whole and masked: a
                // longer match that would begin its secret there (an AWS secret's rule
                // reading on for its key id) has nothing more to mask, and a partial mask
                // from there took the blank lines after it into the secret's.
                let k = pre.secret_from(caches.as_mut(), v, j);
                if let Some(k) =
                    k.filter(|&k| !(at_end && found.iter().any(|m| m.span().contains(&k))))
                {
                    earliest = Some(earliest.map_or(k, |e| e.min(k)));
                }
            }
        }
        earliest
    }
}

/// Whether more text could move the end of `m`'s secret, closed before its match ends, past
/// the bytes that closed it: a URL's password runs to the last `@`, so `…:pass@host` is not
/// settled until the line is (a later `@` makes `host` part of the password), while a
/// quoted value's closing quote is. Asked by example: the text after the secret written
/// twice over, read again from the match's start.
fn could_grow(engine: &Engine, v: &[u8], m: &Match) -> bool {
    let mut probe = v[m.match_start..].to_vec();
    probe.extend_from_slice(&v[m.end..]);
    let (start, end) = (m.start - m.match_start, m.end - m.match_start);
    crate::detect::detect(engine, &probe)
        .plain
        .iter()
        .any(|o| o.rule == m.rule && o.start == start && o.end > end)
}

/// What `scan` finds in the visible text `vis`, through the one detection step: the plain
/// matches in visible offsets, and everything (plain and decoded) in original offsets. Every
/// value found is remembered in `known`.
fn detect(
    engine: &Engine,
    vis: &Visible,
    known: &mut Known,
    whole: bool,
) -> (Vec<Match>, Detection) {
    let d = crate::detect::detect(engine, &vis.bytes);
    if whole {
        learn(engine, known, &d, &vis.bytes);
    } else {
        // A match that runs to the end of what has arrived may be a piece of a longer
        // value: it is learned once it is whole (the next flush, or the end, sees it again).
        let n = vis.bytes.len();
        let mut ended = d.clone();
        ended.retain(|m| m.end < n);
        learn(engine, known, &ended, &vis.bytes);
    }
    let visible = d.plain.clone();
    (visible, d.mapped(|m| vis.original(m)))
}

/// What a masker learns of what it found: every value whole, and the pieces of a value no
/// other text shares pieces with, so that half of an AWS secret, a Slack token's body or a
/// password's first twelve characters printed alone are masked. That is a value that looks
/// generated, or a token-like run of a value (letters, digits, `_`, `-`; twelve bytes or
/// more past its format's prefix) that varies as a token does. Not a name made of words,
/// nor any value a `by_name` rule took by its name alone that does not look generated
/// (`CachedTokenPath`, `TagResource…`, found at `low`, share their pieces with other
/// names), nor the host or path of a URL a rule took whole (every Slack webhook holds
/// `.slack.com/services/`), nor base64 of JSON (a JWT's header is most JWTs' header), nor
/// the encoded text a decoded value stood in, unless it looks generated itself.
fn learn(engine: &Engine, known: &mut Known, d: &Detection, hay: &[u8]) {
    // What a `by_name` rule found is a token's run only if it looks generated itself.
    let rules = engine.rules();
    let named = |rule: usize| rules[rule].by_name;
    let found = d
        .plain
        .iter()
        .map(|m| (&hay[m.span()], m.rule, named(m.rule)));
    let decoded = d.decoded.iter().flat_map(|x| {
        [
            (&x.secret[..], x.at.rule, named(x.at.rule)),
            (&hay[x.at.span()], x.at.rule, true),
        ]
    });
    let token_byte = |b: &u8| b.is_ascii_alphanumeric() || b"_-".contains(b);
    let varies = |run: &[u8]| run.len() >= 12 && crate::engine::varies_like_a_token(run);
    // A Slack token's body is two ids of digits and a random part: the random part decides.
    let token_like = |run: &[u8]| {
        !run.starts_with(b"eyJ") && (varies(run) || run.split(|b| b"_-".contains(b)).any(varies))
    };
    // A flush sees again the values of the lines it keeps as context: asked once each.
    for (v, rule, whole_only) in found.chain(decoded) {
        if known.contains(v) {
            continue;
        }
        let v = v.trim_ascii();
        if crate::engine::looks_generated(v) {
            known.add_with_pieces(v, rule);
            continue;
        }
        if whole_only {
            known.add(v, rule);
            continue;
        }
        let runs: Vec<&[u8]> = v
            .split(|b| !token_byte(b))
            .map(body)
            .filter(|r| token_like(r))
            .collect();
        // A value of such runs and punctuation (a SendGrid key's `SG.….…`, a password with
        // a `.` or a `/`) has pieces across its punctuation too; a URL's or a header's does
        // not stand for one secret.
        let punctuated = || {
            v.len() >= 12
                && !v.starts_with(b"eyJ")
                && !v
                    .iter()
                    .any(|b| b":@?&\"'<>`\\".contains(b) || b.is_ascii_whitespace())
                && crate::engine::punctuated_token(v)
        };
        if runs == [v] || punctuated() {
            known.add_with_pieces(v, rule);
            continue;
        }
        known.add(v, rule);
        for run in runs {
            known.add_with_pieces(run, rule);
        }
    }
}

/// A token-like run less the words of its format's prefix (`xoxb-`, `sk_live_`,
/// `AGE-SECRET-KEY-`): parts in one case of letters before a `_` or `-`. Every key of the
/// format shares them, so they are no piece of one.
fn body(run: &[u8]) -> &[u8] {
    let mut rest = run;
    while let Some(p) = rest.iter().position(|b| b"_-".contains(b)) {
        let part = &rest[..p];
        let lower = part.iter().all(u8::is_ascii_lowercase);
        let upper = part.iter().all(u8::is_ascii_uppercase);
        if part.is_empty() || !(lower || upper) {
            break;
        }
        rest = &rest[p + 1..];
    }
    rest
}

/// The findings of `detection` that overlap `range` of `hay`, in the order of `hay`.
/// Contexts are masked with every match in view, reported or not.
fn findings_in(
    engine: &Engine,
    hay: &[u8],
    detection: &Detection,
    range: std::ops::Range<usize>,
    provenance: &Provenance,
    origin: Origin,
) -> Vec<Finding> {
    let masks = detection.spans();
    let mut inside = detection.clone();
    inside.retain(|m| m.end > range.start && m.start < range.end);
    if inside.is_empty() {
        return Vec::new();
    }
    let keep = crate::detect::Sieve::KEEP_ALL;
    let mut findings = inside.findings(engine, hay, &masks, provenance, origin, keep);
    findings.sort_by_key(|f| f.start);
    findings
}

/// What a masked span is, in the order a marker is chosen when spans start together: a
/// rule's match names its rule, a known value the rule that found it, a cut-off tail `partial`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Label {
    Rule(usize),
    Known(usize),
    Partial,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flush {
    Lines,
    Idle,
    All,
    /// The input is whole: no partial tail to hold or mask.
    Complete,
}

/// Whether a run cut off at the end of the stream looks like part of a generated token
/// rather than a word (`Downloading`): it has a digit, or an upper-case letter after a
/// lower-case one. Only consulted for a run that holds no keyword: those are masked at the
/// end only when they look random, so a last word without a line end is not masked.
fn looks_random(t: &[u8]) -> bool {
    t.iter().any(u8::is_ascii_digit)
        || t.iter()
            .position(u8::is_ascii_lowercase)
            .is_some_and(|i| t[i..].iter().any(u8::is_ascii_uppercase))
}

/// How many bytes of line end (`\n`, `\r\n`, `\r`) end `t`.
fn trailing_line_end(t: &[u8]) -> usize {
    match t {
        [.., b'\r', b'\n'] => 2,
        [.., b'\n'] | [.., b'\r'] => 1,
        _ => 0,
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The text a terminal shows: `bytes` with ANSI escape sequences removed (an escape cut off
/// at the end too: the rest of it is on its way) and the invisible characters inside a word
/// ([`crate::decode::visible`]), and where each byte came from.
struct Visible {
    /// When the original is UTF-16 text (`bytes` its characters in UTF-8), whether it is
    /// little-endian.
    utf16: Option<bool>,
    bytes: Vec<u8>,
    /// `map.get(i)` is where visible byte `i` is in the original; the last entry is the end.
    /// Empty when nothing was removed.
    map: crate::decode::Map,
}

impl Visible {
    fn new(hay: &[u8]) -> Visible {
        // UTF-16 text is read as the characters it holds (its NULs are half its bytes, not
        // invisible characters): the rules, the held tail of a stream and the known values
        // all see the text, and a stream written a byte at a time holds a token's beginning
        // as UTF-8 text's is held.
        let text =
            crate::decode::utf16_le(hay).and_then(|le| Some((le, crate::decode::utf16_view(hay)?)));
        if let Some((le, text)) = text {
            let shown = crate::decode::visible(&text.bytes);
            return Visible {
                utf16: Some(le),
                bytes: shown.bytes,
                map: shown.map.through(&text.map),
            };
        }
        if !crate::decode::has_hidden(hay) {
            return Visible {
                utf16: None,
                bytes: hay.to_vec(),
                map: Default::default(),
            };
        }
        let crate::decode::View {
            mut bytes, mut map, ..
        } = crate::decode::visible(hay);
        // A lone ESC at the very end is the start of a sequence, not text: its byte and its
        // entry go, the end's stays.
        if hay.last() == Some(&0x1b) && bytes.last() == Some(&0x1b) {
            bytes.pop();
            if let Some(end) = map.pop() {
                map.pop();
                map.push(end);
            }
        }
        Visible {
            utf16: None,
            bytes,
            map,
        }
    }

    /// The first visible offset at or after original offset `raw`.
    fn visible(&self, raw: usize) -> usize {
        if self.map.is_empty() {
            raw
        } else {
            self.map.partition_point(|o| o < raw)
        }
    }

    /// Where visible offset `i` (up to the end) is in the original.
    fn raw(&self, i: usize) -> usize {
        if self.map.is_empty() {
            i
        } else {
            self.map.get(i)
        }
    }

    /// A match in the visible text, in original offsets: a span ends just after its last
    /// visible byte, so escape sequences around a secret stay and those inside go with it.
    fn original(&self, m: &Match) -> Match {
        // In UTF-16 text a character's bytes all map to its first byte: a span ends where the
        // next character begins, not one byte into the last one.
        let end = |e: usize| match e {
            0 => 0,
            e if self.utf16.is_some() => self.raw(e),
            e => self.raw(e - 1) + 1,
        };
        Match {
            start: self.raw(m.start),
            end: end(m.end),
            rule: m.rule,
            match_start: self.raw(m.match_start),
            match_end: end(m.match_end),
        }
    }
}

/// The caches of a masker's two [`Prefixes`] DFAs, before and rest: both, or none when
/// either could not be built.
type Caches = (Cache, Cache);

/// What could still become a match, and where its secret could begin: every rule's pattern
/// cut where its `secret` group begins ([`Engine::patterns_around_secret`]), as two lazy DFAs
/// run anchored from a start offset (the part before the secret, then the secret with what
/// follows it, for the rule whose first part ended there); and the rules' keywords.
struct Prefixes {
    /// Each rule's part before its secret. `None` if it could not be built, or `rest` could
    /// not: then a secret could begin at every start (fail closed).
    before: Option<DFA>,
    /// Each rule's secret and what follows it, started for one rule at a time.
    rest: Option<DFA>,
    keywords: Option<aho_corasick::AhoCorasick>,
    /// Lowercased, for the keyword-prefix test.
    words: Vec<Vec<u8>>,
}

impl Prefixes {
    /// One per rule set for the process: both streams of `run`, and every masker of a test,
    /// share it (building it costs tens of milliseconds).
    fn for_engine(engine: &Engine) -> Arc<Prefixes> {
        type Built = Mutex<Vec<(Vec<String>, Arc<Prefixes>)>>;
        static BUILT: OnceLock<Built> = OnceLock::new();
        let patterns: Vec<String> = engine.rules().iter().map(|r| r.pattern.clone()).collect();
        let built = BUILT.get_or_init(Default::default);
        let mut built = lock(built);
        if let Some((_, p)) = built.iter().find(|(k, _)| *k == patterns) {
            return p.clone();
        }
        let p = Arc::new(Prefixes::new(engine));
        built.push((patterns, p.clone()));
        p
    }

    fn new(engine: &Engine) -> Prefixes {
        use regex_automata::nfa::thompson;
        // Long counted repetitions left unbounded (`{20,2048}` made `{20,}`): the NFA counts
        // a bound in states, one a byte, and the rules' bounds made one of ~115 MB that took
        // the first partial line of a stream (an interpreter's prompt) ~0.17 s to build. A
        // pattern unbounded still goes on wherever the bounded one does, so a start alive
        // before is alive still: at most more is held, never less.
        let build = |hirs: &[&regex_syntax::hir::Hir], per_pattern: bool| {
            let nfa = thompson::Compiler::new()
                .configure(
                    thompson::Config::new()
                        .utf8(false)
                        .which_captures(thompson::WhichCaptures::None)
                        .nfa_size_limit(Some(512 << 20)),
                )
                .build_many_from_hir(hirs)
                .ok()?;
            DFA::builder()
                .configure(
                    DFA::config()
                        // Every way a pattern could go on, not just the one leftmost-first
                        // keeps, and every pattern that ends at an offset.
                        .match_kind(MatchKind::All)
                        .starts_for_each_pattern(per_pattern)
                        .cache_capacity(16 << 20)
                        .skip_cache_capacity_check(true),
                )
                .build_from_nfa(nfa)
                .ok()
        };
        let cut = engine.patterns_around_secret();
        let (before, rest) = match &cut {
            Some(cut) => {
                let before: Vec<_> = cut.iter().map(|(b, _)| b).collect();
                let rest: Vec<_> = cut.iter().map(|(_, r)| r).collect();
                rayon::join(|| build(&before, false), || build(&rest, true))
            }
            None => (None, None),
        };
        let mut words: Vec<Vec<u8>> = engine
            .rules()
            .iter()
            .flat_map(|r| &r.keywords)
            .map(|k| k.to_ascii_lowercase().into_bytes())
            .filter(|k| !k.is_empty())
            .collect();
        words.sort();
        words.dedup();
        let keywords = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
            .ok();
        Prefixes {
            before,
            rest,
            keywords,
            words,
        }
    }

    /// Whether `t` is the beginning (not the whole) of a keyword.
    fn is_keyword_prefix(&self, t: &[u8]) -> bool {
        !t.is_empty()
            && self
                .words
                .iter()
                .any(|w| w.len() > t.len() && w[..t.len()].eq_ignore_ascii_case(t))
    }

    /// Where, from `j` on, the secret of a rule's match starting at `j` could begin, when
    /// such a match could still be under way at the end of `v`: the first offset where the
    /// part before some rule's secret ends and that rule's secret could go on from there to
    /// the end; the end itself when only the parts before secrets are still under way;
    /// `None` when no match starting at `j` is. Any error in the DFAs answers `j`.
    fn secret_from(&self, caches: Option<&mut Caches>, v: &[u8], j: usize) -> Option<usize> {
        let (Some(before), Some((bc, rc))) = (self.before.as_ref(), caches) else {
            return Some(j);
        };
        let input = Input::new(v).range(j..).anchored(Anchored::Yes);
        let Ok(mut sid) = before.start_state_forward(bc, &input) else {
            return Some(j);
        };
        for (at, &b) in v.iter().enumerate().skip(j) {
            match before.next_state(bc, sid, b) {
                Ok(next) => sid = next,
                Err(_) => return Some(j),
            }
            // A match state is seen one byte late: these rules' first parts end at `at`.
            if sid.is_match() {
                for i in 0..before.match_len(bc, sid) {
                    let rule = before.match_pattern(bc, sid, i);
                    if self.rest_alive(rc, v, at, rule) {
                        return Some(at);
                    }
                }
            }
            if sid.is_dead() {
                return None;
            }
            if sid.is_quit() {
                return Some(j);
            }
        }
        // A first part that ends at the end, or goes on past it: its secret begins later.
        (!sid.is_dead()).then_some(v.len())
    }

    /// Whether `rule`'s secret and what follows it could start at `at` and still be under way
    /// at the end of `v`. Any error in the DFA answers yes.
    fn rest_alive(
        &self,
        cache: &mut Cache,
        v: &[u8],
        at: usize,
        rule: regex_automata::PatternID,
    ) -> bool {
        let Some(dfa) = self.rest.as_ref() else {
            return true;
        };
        let input = Input::new(v).range(at..).anchored(Anchored::Pattern(rule));
        let Ok(mut sid) = dfa.start_state_forward(cache, &input) else {
            return true;
        };
        for &b in &v[at..] {
            match dfa.next_state(cache, sid, b) {
                Ok(next) => sid = next,
                Err(_) => return true,
            }
            if sid.is_dead() {
                return false;
            }
            if sid.is_quit() {
                return true;
            }
        }
        !sid.is_dead()
    }
}

/// A copy of a notebook with every secret replaced by `[REDACTED:rule-id]`, and how many were
/// replaced: the same structural masking as hooks and transcripts ([`Masking::notebook`]:
/// every string, decoded views included, a multi-line field read whole), so a valid notebook
/// stays valid JSON. A notebook that is not JSON is masked as plain text (`valid_json` false).
pub fn redact_notebook(engine: &Engine, raw: &[u8]) -> (Vec<u8>, usize, bool) {
    match Masking::new(engine).notebook("notebook", raw) {
        Some(m) => (m.bytes, m.findings.len(), true),
        None => {
            let m = mask_text(engine, "notebook", raw);
            (m.bytes, m.findings.len(), false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_escape_cut_off_at_the_end_is_not_text() {
        let v = Visible::new(b"ab\x1b[1;3");
        assert_eq!(v.bytes, b"ab");
        let v = Visible::new(b"ab\x1b");
        assert_eq!(v.bytes, b"ab");
        assert_eq!(v.raw(2), 3);
    }
}
