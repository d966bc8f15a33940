//! Findings from the engine's matches in one blob: positions, contexts, fingerprints.

use super::{Context, CredentialPart, Finding, FingerprintKey, Provenance, Secret};
use crate::engine::Match;
use crate::rules::{Confidence, Rule};

/// The credential part `rule` says its matches are.
pub(super) fn part(rule: &Rule) -> Option<CredentialPart> {
    let v = rule.validator.as_ref()?;
    Some(CredentialPart {
        validator: v.name.clone(),
        part: v.part.clone(),
    })
}

/// Longest context shown on each side of a secret.
const CONTEXT_SIDE: usize = 80;

/// Where a slice of a blob begins: byte offset, line and column. Large blobs are reported a
/// chunk at a time; each chunk's positions continue from its origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl Origin {
    pub const START: Origin = Origin {
        offset: 0,
        line: 1,
        column: 1,
    };

    /// Move past `seg`, the bytes that follow this origin.
    pub fn advance(&mut self, seg: &[u8]) {
        self.line += memchr::memchr_iter(b'\n', seg).count();
        self.column = match memchr::memrchr(b'\n', seg) {
            Some(p) => 1 + chars(&seg[p + 1..]),
            None => self.column + chars(seg),
        };
        self.offset += seg.len();
    }
}

/// Turn the engine's matches in one blob into findings. Lines and columns are computed here,
/// once, walking the blob in order of the matches. Fingerprinted under `key` (an engine's
/// [`crate::engine::Engine::fingerprint_key`]); each context masks every match.
pub fn findings(
    rules: &[Rule],
    hay: &[u8],
    matches: &[Match],
    provenance: &Provenance,
    key: &FingerprintKey,
) -> Vec<Finding> {
    findings_masked(rules, hay, matches, matches, provenance, Origin::START, key)
}

/// The findings of `matches` in a slice of a blob that begins at `origin`, fingerprinted under
/// `key`, each context masked by `known`: every span in `hay` that any pass (plain, decoded
/// views, other notebook fields, matches the policy allowed) took for a secret. A context then
/// never shows a secret that another finding, or no finding, holds.
pub fn findings_masked(
    rules: &[Rule],
    hay: &[u8],
    matches: &[Match],
    known: &[Match],
    provenance: &Provenance,
    origin: Origin,
    key: &FingerprintKey,
) -> Vec<Finding> {
    findings_counting(
        rules,
        hay,
        matches,
        known,
        provenance,
        origin,
        key,
        &|_, _| false,
    )
}

/// [`findings_masked`], where the findings that `only_counted` names (by their rule and
/// confidence) are made only as far as a run that counts them needs: place (lines, for a
/// history's added lines), value, and confidence. No context, fingerprint or entropy: the
/// caller lets them go, keeping their count and value (`scan::run::Run::counts_only` says
/// which). A `by_name` rule's findings never rise above the rule's own confidence, so
/// theirs are not even judged when that is already one only counted; the others are asked
/// about once judged.
#[allow(clippy::too_many_arguments)]
pub fn findings_counting(
    rules: &[Rule],
    hay: &[u8],
    matches: &[Match],
    known: &[Match],
    provenance: &Provenance,
    origin: Origin,
    key: &FingerprintKey,
    only_counted: &dyn Fn(&Rule, Confidence) -> bool,
) -> Vec<Finding> {
    // Where the content lives, for judging a value's place: an environment's origin (a pid,
    // a dump file), not its variable's name.
    let place = place(provenance);
    let mut sorted: Vec<&Match> = matches.iter().collect();
    sorted.sort_by_key(|m| m.start);
    let mut masks: Vec<&Match> = known.iter().chain(matches).collect();
    masks.sort_by_key(|m| (m.start, std::cmp::Reverse(m.end)));
    let mut out = Vec::with_capacity(sorted.len());
    let mut line = origin.line;
    let mut counted = 0;
    // (byte offset, column there) of the last match, to count columns incrementally when
    // many matches share one long line.
    let mut col_at = (0, origin.column);
    // Where the current line starts, found from the bytes counted since the last match, so
    // many matches on one long line (a minified file) cost no search back to its start each.
    let mut line_start = 0;
    for m in &sorted {
        let gap = &hay[counted..m.start];
        line += memchr::memchr_iter(b'\n', gap).count();
        if let Some(p) = memchr::memrchr(b'\n', gap) {
            line_start = counted + p + 1;
        }
        counted = m.start;
        if col_at.0 < line_start {
            col_at = (line_start, 1);
        }
        let column = col_at.1 + chars(&hay[col_at.0..m.start]);
        col_at = (m.start, column);
        let end_line = line + memchr::memchr_iter(b'\n', &hay[m.start..m.end]).count();
        let rule = &rules[m.rule];
        let secret = &hay[m.span()];
        let mut f = bare(
            rule,
            provenance,
            origin,
            m,
            secret,
            (line, column, end_line),
        );
        if rule.by_name && only_counted(rule, rule.confidence()) {
            out.push(f);
            continue;
        }
        (f.confidence, f.reasons) = match rule.checksum {
            // Only a masker keeps a token whose checksum fails: it is masked, and reported
            // as doubt. A token written with JSON escapes (a notebook's source) is judged as
            // it reads.
            Some(c) if !crate::engine::checksum_ok(c, &unescaped(secret)) => (
                crate::rules::Confidence::Low,
                crate::engine::confidence::checksum_failed(),
            ),
            _ => crate::engine::confidence::judge(rule, secret, place, &hay[line_start..m.start]),
        };
        // Most of a large tree's findings are judged too unsure for its report.
        if only_counted(rule, f.confidence) {
            out.push(f);
            continue;
        }
        f.rule_name = rule.name.clone();
        f.fingerprint = key.fingerprint(&rule.id, secret);
        f.entropy = crate::engine::shannon_entropy(secret);
        f.context = context(rules, hay, m, &masks);
        out.push(f);
    }
    out
}

/// A finding of `rule` as bare as a run that only counts it needs (see
/// [`findings_counting`]): its place and value, at the rule's own confidence, with no
/// context and no fingerprint. A whole finding is this with its judgement, name,
/// fingerprint, entropy and context filled in.
fn bare(
    rule: &Rule,
    provenance: &Provenance,
    origin: Origin,
    m: &Match,
    secret: &[u8],
    (line, column, end_line): (usize, usize, usize),
) -> Finding {
    Finding {
        rule_id: rule.id.clone(),
        rule_name: String::new(),
        confidence: rule.confidence(),
        reasons: Vec::new(),
        provenance: provenance.clone(),
        line,
        column,
        end_line,
        start: origin.offset + m.start,
        end: origin.offset + m.end,
        secret: Secret::new(secret),
        public: rule.public,
        fingerprint: String::new(),
        entropy: 0.0,
        context: Context::default(),
        encoding: None,
        part: part(rule),
        credential_set: None,
        annotations: Vec::new(),
        validation: None,
        reach: None,
        hooks: Vec::new(),
    }
}

/// `secret` with JSON string escapes decoded, if it has any.
fn unescaped(secret: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match memchr::memchr(b'\\', secret) {
        None => std::borrow::Cow::Borrowed(secret),
        Some(_) => std::borrow::Cow::Owned(crate::decode::json::unescape(secret, 0).bytes),
    }
}

/// Where the content lives, for judging a value's place: an environment's origin (a pid, a
/// dump file), not its variable's name.
pub fn place(provenance: &Provenance) -> &str {
    match provenance {
        Provenance::Env { origin, .. } => origin.as_str(),
        p => p.name(),
    }
}

/// Characters in `bytes` as a lossy UTF-8 decoding shows them: each invalid sequence is one.
fn chars(bytes: &[u8]) -> usize {
    bytes
        .utf8_chunks()
        .map(|c| c.valid().chars().count() + usize::from(!c.invalid().is_empty()))
        .sum()
}

/// The line around `m`, clipped, with every match on it (not just `m`) marked.
fn context(rules: &[Rule], hay: &[u8], m: &Match, all: &[&Match]) -> Context {
    // The line, clipped to CONTEXT_SIDE bytes each side; only that much is searched for its
    // ends. Multi-line secrets (private keys) show only their first line.
    let lo = m.start.saturating_sub(CONTEXT_SIDE);
    let from = memchr::memrchr(b'\n', &hay[lo..m.start]).map_or(lo, |p| lo + p + 1);
    let hi = (m.end.max(m.start) + CONTEXT_SIDE).min(hay.len());
    let to = memchr::memchr(b'\n', &hay[m.start..hi])
        .map_or(hi, |p| m.start + p)
        .max(from);
    let mut text = String::new();
    let mut marks = Vec::new();
    let mut at = from;
    let push = |bytes: &[u8], text: &mut String| {
        let s = String::from_utf8_lossy(bytes);
        text.extend(
            s.chars()
                .map(|c| if c == '\t' || !c.is_control() { c } else { ' ' }),
        );
    };
    // `all` is sorted by start and no secret is longer than MAX_WINDOW: only the masks that
    // start in this window can reach into the context, found by binary search, so a file
    // with many secrets costs time in proportion to them, not to their square.
    let lo = all.partition_point(|o| o.start + crate::rules::MAX_WINDOW < from);
    let hi = all.partition_point(|o| o.start < to);
    for o in all[lo..hi.max(lo)]
        .iter()
        .filter(|o| o.start < to && o.end > from)
    {
        // Overlapping secrets (rare) and ones that start before the clip are masked from
        // wherever the text shown so far ends.
        if o.end <= at {
            continue;
        }
        let from_here = o.start.max(at);
        push(&hay[at..from_here], &mut text);
        let s = text.len();
        push(&hay[from_here..o.end.min(to)], &mut text);
        let masked = if rules[o.rule].public {
            text[s..].to_string()
        } else {
            Secret::new(&hay[o.span()]).redacted()
        };
        marks.push((s, text.len(), masked));
        at = o.end.min(to);
    }
    push(&hay[at..to], &mut text);
    Context { text, marks }
}
