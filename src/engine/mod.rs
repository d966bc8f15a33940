//! Bytes in, matches out. No I/O.
//!
//! One Aho-Corasick automaton over every rule's keywords finds candidate positions; each
//! candidate rule's regex then runs only on a window around its hits, merged so that a rule is
//! confirmed at most once per stretch of input. A rule's window is the longest match its
//! pattern can produce, so every match that contains a keyword is inside the window of that
//! keyword's hit: the prefilter never drops a match the full regex would find.

mod check;
mod checksum;
pub mod confidence;
pub mod key;
mod keywords;
mod literal;
mod placeholder;
mod reject;
mod scope;
mod words;

use crate::rules::{Rule, RuleError, MAX_WINDOW};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use rayon::prelude::*;
use regex_automata::{meta, util::primitives::NonMaxUsize, Input};
use std::collections::HashMap;
use std::sync::OnceLock;

pub use check::{check, CheckFailure};
pub use checksum::checksum_ok;
pub use key::FingerprintKey;
pub use reject::shannon_entropy;
pub use scope::has_stopword;

/// The keyword automaton of the built-in rules, built by `build.rs` ([`keywords`]); 4-aligned,
/// so that its tables are read in place.
#[repr(C, align(4))]
struct Aligned<B: ?Sized>(B);
static EMBEDDED_KEYWORDS: &Aligned<[u8]> =
    &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/keywords.bin")));

/// Inputs larger than this are split into chunks of this size and searched in parallel.
const CHUNK: usize = 8 << 20;

/// One confirmed match. Offsets are into the scanned bytes; no secret is held here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Match {
    /// The secret group.
    pub start: usize,
    pub end: usize,
    /// Index of the rule in [`Engine::rules`].
    pub rule: usize,
    /// The whole match (the secret plus its context, such as a variable name).
    pub match_start: usize,
    pub match_end: usize,
}

impl Match {
    pub fn span(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

struct Compiled {
    pattern: String,
    /// Built on first use: a scan that never hits a rule's keywords never pays for its
    /// regex (start-up matters for pre-commit hooks and filters). `None` if it fails to
    /// build, which only a size limit can cause after the pattern parsed; operator rules
    /// are built eagerly so that surfaces as an error.
    regex: OnceLock<Option<meta::Regex>>,
    /// Capture group index of `secret`.
    group: usize,
    /// Bytes to search on each side of a keyword hit.
    window: usize,
    /// (companion rule index, largest distance)
    requires: Option<(usize, usize)>,
    /// Whether a match can contain a line feed: a stream filter may then have to hold more
    /// than the current line (see [`Engine::multiline_pending`]).
    spans_lines: bool,
    /// Whether the secret itself can (a PEM block), not only the context before it.
    secret_spans_lines: bool,
    /// The rule's `path` and allowlists, if it has any.
    scope: Option<scope::Scope>,
}

/// The keyword automaton, as [`Startup`] chose it. Both report every occurrence of every
/// keyword (overlapping), ASCII case-insensitively.
enum Keywords {
    // Boxed: the DFA's class table would make every engine's enum 400 bytes.
    Dfa(Box<keywords::Keywords>),
    Nfa(AhoCorasick),
}

impl Keywords {
    /// Calls `f(keyword, start, end)` for every keyword occurrence inside `range`.
    fn for_each(
        &self,
        hay: &[u8],
        range: std::ops::Range<usize>,
        f: &mut impl FnMut(usize, usize, usize),
    ) {
        match self {
            Keywords::Dfa(k) => k.for_each(hay, range, f),
            Keywords::Nfa(ac) => {
                for m in ac.find_overlapping_iter(aho_corasick::Input::new(hay).range(range)) {
                    f(m.pattern().as_usize(), m.start(), m.end());
                }
            }
        }
    }
}

/// The compiled rule set. Cheap to share between threads.
pub struct Engine {
    rules: Vec<Rule>,
    compiled: Vec<Compiled>,
    keywords: Keywords,
    /// For each keyword (automaton pattern id), the rules that listed it.
    keyword_rules: Vec<Vec<usize>>,
    longest_keyword: usize,
    /// Report `requires` rules without their companion (see [`Engine::without_companions`]).
    ignore_requires: bool,
    /// Keep token-shaped matches that fail a checksum or read like placeholders (see
    /// [`Engine::without_companions`]).
    masking: bool,
    /// What every finding made from this engine's matches is fingerprinted with (see
    /// [`Engine::with_fingerprint_key`]).
    fingerprint_key: FingerprintKey,
    /// What it was built for: a [`Startup::Latency`] engine builds its rules' regexes
    /// without a literal prefilter.
    startup: Startup,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("rules", &self.rules.len())
            .field("keywords", &self.keyword_rules.len())
            .finish()
    }
}

fn syntax_config() -> regex_automata::util::syntax::Config {
    // Bytes, not text: secrets sit in invalid UTF-8 too, and ASCII classes are much faster.
    regex_automata::util::syntax::Config::new()
        .unicode(false)
        .utf8(false)
        .nest_limit(64)
}

/// What an engine is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Startup {
    /// Scans of many bytes: the keyword automaton is our own DFA ([`keywords`]), 2 to 7 ms to
    /// build and fastest to search.
    Throughput,
    /// One small input per process (an agent hook event): a contiguous NFA, built in ~4 ms and
    /// searching 100 KB in about a millisecond.
    ///
    /// Either way, an engine over exactly the built-in rules' keywords takes the DFA
    /// `build.rs` embedded, and builds nothing.
    Latency,
}

impl Engine {
    /// Compile `rules`. Fails on the first rule that cannot be compiled, naming it.
    pub fn new(rules: Vec<Rule>) -> Result<Engine, RuleError> {
        Engine::with_startup(rules, Startup::Throughput)
    }

    /// [`Engine::new`], built for `startup`.
    pub fn with_startup(rules: Vec<Rule>, startup: Startup) -> Result<Engine, RuleError> {
        let mut ids = HashMap::new();
        for (i, r) in rules.iter().enumerate() {
            if let Some(prev) = ids.insert(r.id.clone(), i) {
                return Err(r.invalid(
                    "id",
                    format!("duplicate id (also in {})", rules[prev].origin),
                ));
            }
            validate_id(r)?;
        }
        let mut compiled = Vec::with_capacity(rules.len());
        let mut keywords: Vec<String> = Vec::new();
        let mut keyword_ids: HashMap<String, usize> = HashMap::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            let c = compile(r, &ids)?;
            if !crate::rules::is_builtin(r) {
                c.regex
                    .set(Some(
                        build_regex(&r.pattern, startup).map_err(|e| r.invalid("pattern", e))?,
                    ))
                    .ok();
            }
            compiled.push(c);
            if r.keywords.is_empty() {
                return Err(r.invalid("keywords", "at least one keyword is required"));
            }
            for k in &r.keywords {
                if k.len() < 2 {
                    return Err(r.invalid("keywords", format!("{k:?} is shorter than 2 bytes")));
                }
                let k = k.to_ascii_lowercase();
                let id = *keyword_ids.entry(k.clone()).or_insert_with(|| {
                    keywords.push(k);
                    keyword_rules.push(Vec::new());
                    keywords.len() - 1
                });
                if !keyword_rules[id].contains(&i) {
                    keyword_rules[id].push(i);
                }
            }
        }
        // The built-in rules' automaton is embedded (build.rs): either startup takes it.
        let dfa = match keywords::Keywords::embedded(&EMBEDDED_KEYWORDS.0, &keywords) {
            Some(d) => Some(d),
            None if startup == Startup::Throughput => keywords::Keywords::new(&keywords),
            None => None,
        };
        let automaton = match dfa {
            Some(d) => Keywords::Dfa(Box::new(d)),
            None => Keywords::Nfa(
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .kind(Some(AhoCorasickKind::ContiguousNFA))
                    .build(&keywords)
                    .map_err(|e| RuleError::Parse {
                        file: "keywords".into(),
                        message: e.to_string(),
                    })?,
            ),
        };
        let longest_keyword = keywords.iter().map(|k| k.len()).max().unwrap_or(0);
        Ok(Engine {
            rules,
            compiled,
            keywords: automaton,
            keyword_rules,
            longest_keyword,
            ignore_requires: false,
            masking: false,
            fingerprint_key: FingerprintKey::ephemeral(),
            startup,
        })
    }

    /// Whether match `m` in `hay`, found at `path` (in `commit`, for a git blob), is outside
    /// its rule's scope: the rule's `path` does not match, or one of its allowlists allows it.
    pub fn excluded(&self, hay: &[u8], m: &Match, path: &str, commit: Option<&str>) -> bool {
        self.compiled[m.rule]
            .scope
            .as_ref()
            .is_some_and(|s| s.excludes(hay, m, path, commit))
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The run's fingerprint key, for the findings made from this engine's matches: an
    /// engine is built with [`FingerprintKey::ephemeral`] (fingerprints that compare within
    /// the process only) until it is given the operator's.
    pub fn with_fingerprint_key(mut self, key: FingerprintKey) -> Engine {
        self.fingerprint_key = key;
        self
    }

    pub fn fingerprint_key(&self) -> &FingerprintKey {
        &self.fingerprint_key
    }

    /// An engine for a masker: it reports a rule needing a companion (an AWS secret near a
    /// key id) even when the companion is absent (the companion may arrive after the secret
    /// was forwarded), and keeps a provider-shaped token whose checksum fails or that reads
    /// like a placeholder (its confidence says `low`). Masking too much is the safe side:
    /// a checksum may raise confidence in a report, never decide whether a token is masked.
    pub fn without_companions(mut self) -> Engine {
        self.ignore_requires = true;
        self.masking = true;
        self
    }

    /// The widest window of any rule: no match is longer.
    pub fn max_window(&self) -> usize {
        self.compiled.iter().map(|c| c.window).max().unwrap_or(0)
    }

    /// For a stream filter that keeps `context` bytes of what it forwarded for its next scan:
    /// the earliest offset that must still be held back because a rule whose matches can span
    /// lines has a keyword hit whose match may not have arrived in full (its window runs past
    /// the end of `hay` and none of `found` covers the hit).
    ///
    /// Only a rule whose *secret* can span lines (a PEM block) needs that, or one whose match
    /// is longer than the context kept: when only the context before a secret spans lines (a
    /// key id's line, then the secret on the next), the lines before the secret are no part
    /// of it and go out at once, and the next scan still sees them as context. So a line that
    /// ends with an AWS key id is not held for the secret that may follow it.
    pub fn multiline_pending(&self, hay: &[u8], found: &[Match], context: usize) -> Option<usize> {
        let mut hold: Option<usize> = None;
        let holds = |c: &Compiled| c.spans_lines && (c.secret_spans_lines || c.window > context);
        // Only a hit within a window of the end can have a match running past it.
        let widest = self
            .compiled
            .iter()
            .filter(|c| holds(c))
            .map(|c| c.window)
            .max()
            .unwrap_or(0);
        let from = hay.len().saturating_sub(widest + self.longest_keyword);
        self.keywords
            .for_each(hay, from..hay.len(), &mut |k, start, end| {
                for &r in &self.keyword_rules[k] {
                    let c = &self.compiled[r];
                    if !holds(c) || start + c.window <= hay.len() {
                        continue;
                    }
                    let covered = found
                        .iter()
                        .any(|f| f.rule == r && f.match_start <= start && f.match_end >= end);
                    if !covered {
                        let from = end.saturating_sub(c.window);
                        hold = Some(hold.map_or(from, |h| h.min(from)));
                    }
                }
            });
        hold
    }

    /// Find every secret in `hay`.
    pub fn scan(&self, hay: &[u8]) -> Vec<Match> {
        self.scan_chunked(hay, CHUNK)
    }

    /// [`Engine::scan`] with inputs larger than `chunk` bytes split into chunks searched in
    /// parallel. The result does not depend on `chunk` (the tests vary it to prove so).
    pub fn scan_chunked(&self, hay: &[u8], chunk: usize) -> Vec<Match> {
        let chunk = chunk.max(1);
        let raw = if hay.len() <= chunk {
            self.candidates(hay, 0..hay.len())
        } else {
            let starts: Vec<usize> = (0..hay.len()).step_by(chunk).collect();
            let mut all: Vec<Match> = starts
                .into_par_iter()
                .flat_map_iter(|s| self.candidates(hay, s..(s + chunk).min(hay.len())))
                .collect();
            all.sort_unstable();
            all.dedup();
            all
        };
        self.finish(hay, raw)
    }

    /// Regex matches confirmed around the keyword hits that *start* in `range`. Windows may
    /// reach outside `range`, so chunks need no overlap of their own.
    pub fn candidates(&self, hay: &[u8], range: std::ops::Range<usize>) -> Vec<Match> {
        // A keyword that starts in range may end past it.
        let end = (range.end + self.longest_keyword).min(hay.len());
        let mut windows: Vec<(usize, usize, usize)> = Vec::new();
        let mut glued: Vec<(usize, usize, usize)> = Vec::new();
        self.keywords
            .for_each(hay, range.start..end, &mut |k, start, kend| {
                if start >= range.end {
                    return;
                }
                let is_glued = self.masking && start > 0 && hay[start - 1].is_ascii_alphanumeric();
                for &r in &self.keyword_rules[k] {
                    let w = self.compiled[r].window;
                    windows.push((r, kend.saturating_sub(w), (start + w).min(hay.len())));
                    if is_glued && !self.rules[r].generic {
                        glued.push((r, start, (start + w).min(hay.len())));
                    }
                }
            });
        windows.sort_unstable();
        let mut out = Vec::new();
        let mut i = 0;
        while i < windows.len() {
            let (rule, ws, mut we) = windows[i];
            i += 1;
            while i < windows.len() && windows[i].0 == rule && windows[i].1 <= we {
                we = we.max(windows[i].2);
                i += 1;
            }
            self.confirm(rule, hay, ws, we, &mut out);
        }
        if !glued.is_empty() {
            let mut seen: std::collections::HashSet<(usize, usize, usize)> =
                out.iter().map(|m| (m.rule, m.start, m.end)).collect();
            for (rule, start, end) in glued {
                self.confirm_glued(rule, hay, start, end, &mut seen, &mut out);
            }
        }
        out
    }

    /// For a masker: a provider token glued to the letter or digit before it (`xAKIA…`,
    /// `tokenghp_…`, what a terminal makes of two writes with no separator) fails its rule's
    /// leading boundary, so the rule is tried again on the text from the keyword on, and a
    /// token that begins right there is kept. Reports leave it out (a token inside a longer
    /// word is usually not one); a masker masks it, as too much is its safe side.
    fn confirm_glued(
        &self,
        rule: usize,
        hay: &[u8],
        start: usize,
        end: usize,
        seen: &mut std::collections::HashSet<(usize, usize, usize)>,
        out: &mut Vec<Match>,
    ) {
        let mut found = Vec::new();
        self.confirm(rule, &hay[start..end], 0, end - start, &mut found);
        for m in found.into_iter().filter(|m| m.start == 0) {
            let m = Match {
                start: m.start + start,
                end: m.end + start,
                rule,
                match_start: m.match_start + start,
                match_end: m.match_end + start,
            };
            if seen.insert((rule, m.start, m.end)) {
                out.push(m);
            }
        }
    }

    /// Every rule's regex over the whole input, with no prefilter: the reference the
    /// prefiltered engine must agree with (used by tests).
    pub fn reference_candidates(&self, hay: &[u8]) -> Vec<Match> {
        let mut out = Vec::new();
        for r in 0..self.rules.len() {
            self.confirm(r, hay, 0, hay.len(), &mut out);
        }
        out
    }

    fn confirm(&self, rule: usize, hay: &[u8], start: usize, end: usize, out: &mut Vec<Match>) {
        let c = &self.compiled[rule];
        let Some(regex) = c
            .regex
            .get_or_init(|| build_regex(&c.pattern, self.startup).ok())
            .as_ref()
        else {
            return;
        };
        // Rules rarely have more than a few groups; the array avoids an allocation per call.
        let mut buf = [None::<NonMaxUsize>; 16];
        let mut heap;
        let slots: &mut [Option<NonMaxUsize>] = if 2 * (c.group + 1) <= buf.len() {
            &mut buf[..2 * (c.group + 1)]
        } else {
            heap = vec![None; 2 * (c.group + 1)];
            &mut heap
        };
        let mut at = start;
        while at <= end {
            let input = Input::new(hay).range(at..end);
            if regex.search_slots(&input, slots).is_none() {
                break;
            }
            let (Some(ms), Some(me)) = (slots[0], slots[1]) else {
                break;
            };
            let (ms, me) = (ms.get(), me.get());
            if let (Some(s), Some(e)) = (slots[2 * c.group], slots[2 * c.group + 1]) {
                if e.get() > s.get() {
                    out.push(Match {
                        start: s.get(),
                        end: e.get(),
                        rule,
                        match_start: ms,
                        match_end: me,
                    });
                }
            }
            at = if me > ms { me } else { me + 1 };
        }
    }

    /// Filters, companions and overlaps: turns raw regex matches into findings' matches.
    pub fn finish(&self, hay: &[u8], mut raw: Vec<Match>) -> Vec<Match> {
        raw.sort_unstable();
        raw.dedup();
        raw.retain(|m| reject::keep(&self.rules[m.rule], hay, m, self.masking));
        // A rule that needs a companion keeps a match only with the companion close by.
        // Matches are sorted by start and no secret is longer than MAX_WINDOW, so each check
        // looks at a bounded slice found by binary search, never at every other match.
        let near = |ms: &[Match], lo: usize, hi: usize| -> std::ops::Range<usize> {
            ms.partition_point(|o| o.start < lo.saturating_sub(MAX_WINDOW))
                ..ms.partition_point(|o| o.start <= hi)
        };
        let kept: Vec<Match> = raw
            .iter()
            .filter(|m| match self.compiled[m.rule].requires {
                _ if self.ignore_requires => true,
                None => true,
                Some((other, within)) => raw
                    [near(&raw, m.start.saturating_sub(within), m.end + within)]
                .iter()
                .any(|o| o.rule == other && distance(o.span(), m.span()) <= within),
            })
            .copied()
            .collect();
        // One secret, one finding: a specific rule wins over a generic one, then the earlier rule.
        // Only a match starting at most the longest kept span before `m` can overlap it: a
        // bound far tighter than MAX_WINDOW where matches are dense (a file of 200k secrets).
        let longest = kept.iter().map(|m| m.end - m.start).max().unwrap_or(0);
        let overlapping = |lo: usize, hi: usize| {
            kept.partition_point(|o| o.start < lo.saturating_sub(longest))
                ..kept.partition_point(|o| o.start < hi)
        };
        let mut out: Vec<Match> = Vec::with_capacity(kept.len());
        for m in &kept {
            let shadowed = kept[overlapping(m.start, m.end)].iter().any(|o| {
                o != m
                    && overlaps(o.span(), m.span())
                    && match (self.rules[o.rule].generic, self.rules[m.rule].generic) {
                        (false, true) => true,
                        (true, false) => false,
                        _ => o.span() == m.span() && o.rule < m.rule,
                    }
            });
            if !shadowed {
                out.push(*m);
            }
        }
        out
    }
}

/// Whether two spans share a byte.
pub(crate) fn overlaps(a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

fn distance(a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> usize {
    if overlaps(a.clone(), b.clone()) {
        0
    } else if a.end <= b.start {
        b.start - a.end
    } else {
        a.start - b.end
    }
}

fn validate_id(r: &Rule) -> Result<(), RuleError> {
    let ok = !r.id.is_empty()
        && r.id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(r.invalid(
            "id",
            "must be non-empty lowercase letters, digits, '.' and '-'",
        ))
    }
}

fn compile(r: &Rule, ids: &HashMap<String, usize>) -> Result<Compiled, RuleError> {
    let facts = r.pattern_facts().map_err(|e| r.invalid("pattern", e))?;
    let window = match (facts.max_len, r.window) {
        (_, Some(w)) => w,
        (Some(n), None) => n,
        (None, None) => {
            return Err(r.invalid(
                "pattern",
                "match length is unbounded: use bounded repetition ({m,n}) or set `window`",
            ))
        }
    };
    if window > MAX_WINDOW {
        return Err(r.invalid(
            "pattern",
            format!("longest match {window} exceeds {MAX_WINDOW} bytes; set a smaller `window`"),
        ));
    }
    let group = facts
        .group
        .ok_or_else(|| r.invalid("pattern", "no capture group named `secret`"))?;
    if let Some(e) = r.entropy {
        if !(0.0..=8.0).contains(&e) {
            return Err(r.invalid("entropy", "must be between 0 and 8 bits per byte"));
        }
    }
    let requires = match &r.requires {
        None => None,
        Some(q) => Some((
            *ids.get(&q.rule)
                .ok_or_else(|| r.invalid("requires", format!("no rule with id {:?}", q.rule)))?,
            q.within,
        )),
    };
    Ok(Compiled {
        pattern: r.pattern.clone(),
        regex: OnceLock::new(),
        group,
        window,
        requires,
        spans_lines: facts.spans_lines,
        secret_spans_lines: facts.secret_spans_lines,
        scope: scope::compile(r)?,
    })
}

fn build_regex(pattern: &str, startup: Startup) -> Result<meta::Regex, String> {
    meta::Builder::new()
        .syntax(syntax_config())
        .configure(
            meta::Config::new()
                .nfa_size_limit(Some(8 << 20))
                .hybrid_cache_capacity(1 << 20)
                // Extracting a pattern's literals is ~40 % of building its regex (10 rules
                // an AWS pair hits: 1.1 ms against 1.9 ms), and a regex only ever runs on a
                // window around a keyword hit: one small input per process is better off
                // without the prefilter.
                .auto_prefilter(startup == Startup::Throughput),
        )
        .build(pattern)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_startups_find_the_same() {
        let rules = crate::rules::builtin();
        let hay: String = rules
            .iter()
            .flat_map(|r| r.examples.iter().chain(&r.negatives))
            .map(|e| format!("{e}\n"))
            .collect();
        let fast = Engine::with_startup(rules.clone(), Startup::Throughput).unwrap();
        let quick = Engine::with_startup(rules, Startup::Latency).unwrap();
        let found = fast.scan(hay.as_bytes());
        assert!(found.len() > 1000, "{}", found.len());
        assert_eq!(found, quick.scan(hay.as_bytes()));
    }

    #[test]
    fn the_built_in_keywords_take_the_embedded_automaton() {
        // The keywords as `with_startup` collects them.
        let mut words: Vec<String> = Vec::new();
        for r in crate::rules::builtin() {
            for k in r.keywords {
                let k = k.to_ascii_lowercase();
                if !words.contains(&k) {
                    words.push(k);
                }
            }
        }
        let embedded = keywords::Keywords::embedded(&EMBEDDED_KEYWORDS.0, &words)
            .expect("build.rs embedded the automaton of the built-in keywords");
        let built = keywords::Keywords::new(&words).unwrap();
        assert!(embedded.to_bytes(&words) == built.to_bytes(&words));
        // Any other list builds its own.
        words.swap(0, 1);
        assert!(keywords::Keywords::embedded(&EMBEDDED_KEYWORDS.0, &words).is_none());
        words.swap(0, 1);
        words.push("zq-one-more".into());
        assert!(keywords::Keywords::embedded(&EMBEDDED_KEYWORDS.0, &words).is_none());
    }
}
