//! The one detection step below every consumer: `scan` (reports) and the maskers (`filter`,
//! `run`, `hook`, `scrub`, `mcp-proxy`, `redact-notebook`) ask the same question here, "what
//! in these bytes is a secret", and get the same answer:
//! - [`detect`]: the engine's matches in the bytes as they are, and in their decoded views
//!   (base64, UTF-16, escapes, percent-encoding, ANSI-stripped) mapped back to the encoded
//!   span, one secret one match across views;
//! - [`Detection::findings`]: those matches as findings, each context masked with every span
//!   any pass took for a secret;
//! - [`mask_contexts`]: every context masked with the secret *values* seen so far
//!   ([`Known`], in `model`, where every reader of a report finds it too), so a value found
//!   in one place is masked wherever else it appears (masking by value, not by position).

use crate::decode::View;
use crate::engine::{Engine, Match};
use crate::model::{self, Finding, Known, Origin, Provenance};

/// A match in a decoded view: its encoded span in the input and the decoded secret.
#[derive(Clone)]
pub struct Decoded {
    pub encoding: crate::decode::Encoding,
    pub at: Match,
    pub secret: Vec<u8>,
}

/// What one input holds: its plain matches and those only its decoded views hold.
#[derive(Default, Clone)]
pub struct Detection {
    pub plain: Vec<Match>,
    pub decoded: Vec<Decoded>,
}

/// Which of a detection's matches become findings, and how whole. `allowed` takes a match
/// out (it is given the text the match is read in, and the match there); the findings that
/// `counted` names by their rule and confidence are made only as far as a run that just
/// counts them needs ([`model::findings_counting`]).
#[derive(Clone, Copy)]
pub struct Sieve<'a> {
    pub allowed: &'a dyn Fn(&[u8], &Match) -> bool,
    pub counted: &'a dyn Fn(&crate::rules::Rule, crate::rules::Confidence) -> bool,
}

impl Sieve<'static> {
    /// Every match a finding, every finding whole: what a masker reports.
    pub const KEEP_ALL: Self = Sieve {
        allowed: &|_, _| false,
        counted: &|_, _| false,
    };
}

/// Every secret in `hay`, plain and decoded.
pub fn detect(engine: &Engine, hay: &[u8]) -> Detection {
    let mut plain = engine.scan(hay);
    let decoded = decoded_matches(engine, hay, &plain);
    // One secret, one finding, across views too: a generic rule's plain match of an encoded
    // value gives way to a provider's rule that read the decoded value.
    let rules = engine.rules();
    plain.retain(|p| {
        !rules[p.rule].generic
            || !decoded.iter().any(|d| {
                !rules[d.at.rule].generic && crate::engine::overlaps(d.at.span(), p.span())
            })
    });
    Detection { plain, decoded }
}

/// The matches in `hay`'s decoded views that `plain` (the plain matches) does not already
/// hold, at their encoded spans in `hay`.
fn decoded_matches(engine: &Engine, hay: &[u8], plain: &[Match]) -> Vec<Decoded> {
    let mut seen: std::collections::HashSet<(usize, usize, usize)> =
        plain.iter().map(|m| (m.rule, m.start, m.end)).collect();
    let mut decoded = Vec::new();
    for (encoding, view) in crate::decode::views(hay) {
        for m in engine.scan(&view.bytes) {
            let (start, end) = view.original(m.start, m.end);
            if end <= start || !seen.insert((m.rule, start, end)) {
                continue;
            }
            let (match_start, match_end) = view.original(m.match_start, m.match_end);
            decoded.push(Decoded {
                encoding,
                at: Match {
                    start,
                    end,
                    rule: m.rule,
                    match_start: match_start.min(start),
                    match_end: match_end.max(end),
                },
                secret: view.bytes[m.span()].to_vec(),
            });
        }
    }
    decoded
}

impl Detection {
    /// Every span, plain and decoded: what a context must not show.
    pub fn spans(&self) -> Vec<Match> {
        let decoded = self.decoded.iter().map(|d| d.at);
        self.plain.iter().copied().chain(decoded).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.plain.is_empty() && self.decoded.is_empty()
    }

    /// The same matches with every offset moved by `at` (offsets of a view to its original).
    pub fn mapped(self, at: impl Fn(&Match) -> Match) -> Detection {
        Detection {
            plain: self.plain.iter().map(&at).collect(),
            decoded: self
                .decoded
                .into_iter()
                .map(|d| Decoded { at: at(&d.at), ..d })
                .collect(),
        }
    }

    /// Keep only the matches `keep` accepts (a chunk's own part, a stream's forwarded range).
    pub fn retain(&mut self, keep: impl Fn(&Match) -> bool) {
        self.plain.retain(&keep);
        self.decoded.retain(|d| keep(&d.at));
    }

    /// Every secret value this detection holds, as it appears in `hay` (the encoded form of
    /// a decoded match too) and decoded, with its rule: what [`Known`] learns.
    pub fn values<'a>(&'a self, hay: &'a [u8]) -> impl Iterator<Item = (&'a [u8], usize)> + 'a {
        let plain = self.plain.iter().map(move |m| (&hay[m.span()], m.rule));
        let decoded = self
            .decoded
            .iter()
            .flat_map(move |d| [(&d.secret[..], d.at.rule), (&hay[d.at.span()], d.at.rule)]);
        plain.chain(decoded)
    }

    /// The findings this detection holds in `hay`, as far as `sieve` keeps them. Each context
    /// is masked with `masks` (every span any pass took for a secret, allowed ones too) and
    /// with `known`. Findings come plain first, then decoded, each in order of start.
    ///
    /// In UTF-16 text every decoded match is in the text a person reads (nested views are
    /// made from it): `sieve.allowed` reads that text, and lines, columns and contexts are
    /// its own, so a column counts characters, not the bytes of two-byte units.
    pub fn findings(
        &self,
        engine: &Engine,
        hay: &[u8],
        masks: &[Match],
        provenance: &Provenance,
        origin: Origin,
        sieve: Sieve,
    ) -> Vec<Finding> {
        let Sieve { allowed, counted } = sieve;
        let rules = engine.rules();
        let key = engine.fingerprint_key();
        let kept: Vec<Match> = self
            .plain
            .iter()
            .filter(|m| !allowed(hay, m))
            .copied()
            .collect();
        let mut out =
            model::findings_counting(rules, hay, &kept, masks, provenance, origin, key, counted);
        if self.decoded.is_empty() {
            return out;
        }
        let text = crate::decode::utf16_view(hay);
        let allow = |m: &Match| match &text {
            Some(v) => allowed(&v.bytes, &in_view(v, m)),
            None => allowed(hay, m),
        };
        // `findings_masked` returns findings in order of start, so the decoded matches are
        // sorted the same way first to pair each with its decoded secret.
        let mut decoded: Vec<&Decoded> = self.decoded.iter().filter(|d| !allow(&d.at)).collect();
        decoded.sort_by_key(|d| d.at.start);
        let at: Vec<Match> = decoded.iter().map(|d| d.at).collect();
        // A rule with a checksum judges a decoded finding again, on its decoded value: the
        // confidence it is made with is not yet its own.
        let counted = |r: &crate::rules::Rule, c| r.checksum.is_none() && counted(r, c);
        let found = match &text {
            Some(v) => in_text(engine, v, &at, masks, provenance, origin, &counted),
            None => {
                model::findings_counting(rules, hay, &at, masks, provenance, origin, key, &counted)
            }
        };
        out.extend(found.into_iter().zip(decoded).map(|(f, d)| {
            let rule = &rules[d.at.rule];
            let mut f = f.decoded(d.encoding, &d.secret, key);
            // A checksum is the decoded token's, not its encoding's.
            if let Some(c) = rule.checksum {
                (f.confidence, f.reasons) = if crate::engine::checksum_ok(c, &d.secret) {
                    crate::engine::confidence::judge(rule, &d.secret, model::place(provenance), b"")
                } else {
                    let low = crate::rules::Confidence::Low;
                    (low, crate::engine::confidence::checksum_failed())
                };
            }
            f
        }));
        out
    }
}

/// Mask every finding's context by value: each secret `known` holds (a run's findings,
/// suppressed ones and those left out for their confidence; a stream's values so far)
/// wherever it appears in any context, pieces of one cut off at a context's edge too, and
/// any run that looks generated. A notebook line whose metadata holds a token must not show
/// an AWS secret found in another file. The place's other texts (a commit's subject, a
/// variable's name) are masked the same way.
pub fn mask_contexts(findings: &mut [Finding], known: &Known) {
    let mask = |f: &mut Finding| {
        let text = f.context.text().as_bytes();
        let mut spans: Vec<(usize, usize)> = known
            .find(text)
            .into_iter()
            .map(|o| (o.start, o.end))
            .collect();
        spans.extend(known.pieces_at_edges(text));
        // A value repeated with an invisible character inside, raw or as an escape, is
        // found in the text as a reader sees it.
        if crate::decode::has_hidden(text) {
            let shown = crate::decode::visible(text);
            let found = known.find(&shown.bytes).into_iter();
            spans.extend(found.map(|o| shown.original(o.start, o.end)));
        }
        if !spans.is_empty() {
            f.context.mask_spans(spans);
        }
        f.context.mask_random_runs();
        f.provenance.labels_mut(|label, prose| {
            let spans = known.find(label.as_bytes()).into_iter();
            let spans = spans.map(|o| (o.start, o.end)).collect();
            *label = crate::model::Context::masked(label, spans, prose);
        });
    };
    // A run's thousands of findings, masked at its end while nothing else runs, on every
    // core; an event's few on this thread.
    if findings.len() >= 256 {
        use rayon::prelude::*;
        findings.par_iter_mut().for_each(mask);
    } else {
        findings.iter_mut().for_each(mask);
    }
}

/// `m`, a span of UTF-16 text's bytes, in its decoded view.
pub fn in_view(v: &View, m: &Match) -> Match {
    Match {
        start: v.decoded_at(m.start),
        end: v.decoded_at(m.end),
        rule: m.rule,
        match_start: v.decoded_at(m.match_start),
        match_end: v.decoded_at(m.match_end),
    }
}

/// Findings of `at` (spans of UTF-16 text's bytes, sorted by start) read in the decoded
/// text `v`: line, column (characters of the text) and context are the text's, the context
/// masked with `masks`; `start..end` stay the text's bytes from `origin`.
fn in_text(
    engine: &Engine,
    v: &View,
    at: &[Match],
    masks: &[Match],
    provenance: &Provenance,
    origin: Origin,
    counted: &dyn Fn(&crate::rules::Rule, crate::rules::Confidence) -> bool,
) -> Vec<Finding> {
    let spans: Vec<Match> = at.iter().map(|m| in_view(v, m)).collect();
    let masks: Vec<Match> = masks.iter().map(|m| in_view(v, m)).collect();
    let from = Origin {
        offset: 0,
        ..origin
    };
    let (rules, key) = (engine.rules(), engine.fingerprint_key());
    let mut found = model::findings_counting(
        rules, &v.bytes, &spans, &masks, provenance, from, key, counted,
    );
    // Returned in order of start, as `at` is (the map keeps order).
    for (f, m) in found.iter_mut().zip(at) {
        (f.start, f.end) = (origin.offset + m.start, origin.offset + m.end);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::FingerprintKey;

    /// The key is the engine's value, not the process's: two engines of one process with two
    /// keys fingerprint one secret, plain and decoded, each under its own.
    #[test]
    fn findings_are_fingerprinted_under_the_engines_key() {
        // A fake AWS key id, in pieces: a public identifier, which every rule set finds.
        let id = format!("AKIA{}", "QYLPMN5HHHFPZAM2");
        let plain = format!("id = {id}\n");
        let encoded = {
            use base64::Engine as _;
            let b64 = base64::engine::general_purpose::STANDARD.encode(plain.as_bytes());
            format!("blob: {b64}\n")
        };
        let prov = Provenance::Stream { name: "t".into() };
        for hay in [plain.as_bytes(), encoded.as_bytes()] {
            let mut seen = Vec::new();
            for k in [&b"first key, sixteen+"[..], b"second key, sixteen+"] {
                let key = FingerprintKey::new(k);
                let e = Engine::new(crate::rules::builtin(), key.clone()).unwrap();
                let found =
                    detect(&e, hay).findings(&e, hay, &[], &prov, Origin::START, Sieve::KEEP_ALL);
                let f = found
                    .iter()
                    .find(|f| f.secret.reveal() == id)
                    .expect("the key id is found");
                assert_eq!(f.fingerprint, key.fingerprint(&f.rule_id, f.secret.bytes()));
                seen.push(f.fingerprint.clone());
            }
            assert_ne!(seen[0], seen[1]);
        }
    }
}
