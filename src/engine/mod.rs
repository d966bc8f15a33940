//! Bytes in, matches out. No I/O.
//!
//! One Aho-Corasick automaton over every rule's keywords finds candidate positions; each
//! candidate rule's regex then runs only on a window around its hits, merged so that a rule is
//! confirmed at most once per stretch of input. A rule's window is the longest match its
//! pattern can produce, so every match that contains a keyword is inside the window of that
//! keyword's hit: the prefilter never drops a match the full regex would find.

mod anchor;
mod by_name;
mod check;
mod checksum;
pub mod confidence;
pub mod key;
mod keywords;
mod lead;
mod literal;
mod placeholder;
mod reject;
mod scope;
mod search;
mod walk;
mod words;

// The one parser of patterns, which `build.rs` shares.
use crate::rules::facts::parse;
use crate::rules::{Rule, RuleError, MAX_WINDOW};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex_automata::meta;
use regex_syntax::hir::Hir;
use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::OnceLock;

pub use check::{check, CheckFailure};
pub use checksum::checksum_ok;
pub use key::FingerprintKey;
pub use literal::{looks_generated, punctuated_token, varies_like_a_token};
pub use reject::shannon_entropy;
pub use scope::{has_stopword, line_around};
pub(crate) use search::overlaps;

/// The keyword automaton of the built-in rules, built by `build.rs` ([`keywords`]); 4-aligned,
/// so that its tables are read in place.
#[repr(C, align(4))]
struct Aligned<B: ?Sized>(B);
static EMBEDDED_KEYWORDS: &Aligned<[u8]> =
    &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/keywords.bin")));

/// The built-in rules' start offsets and leads, analysed by `build.rs` ([`anchor::to_bytes`]).
static EMBEDDED_ANCHORS: &Aligned<[u8]> =
    &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/anchors.bin")));

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

    /// Rule 0's match of the `len` bytes at `start`, whose name begins `name` bytes before.
    #[cfg(test)]
    pub(crate) fn at(start: usize, len: usize, name: usize) -> Match {
        Match {
            start,
            end: start + len,
            rule: 0,
            match_start: start - name,
            match_end: start + len,
        }
    }
}

/// A small generator for tests, the same numbers for a seed on every run (a linear
/// congruential one, Knuth's constants): a number below `n`. Here and not in `testing`, which
/// `detect`'s tests may not use (tests/it/architecture.rs).
#[cfg(test)]
pub(crate) fn below(seed: &mut u64, n: u64) -> u64 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (*seed >> 33) % n
}

struct Compiled {
    /// Built on first use: a scan that never hits a rule's keywords never pays for its
    /// regex (start-up matters for pre-commit hooks and filters). `None` if it fails to
    /// build, which only a size limit can cause after the pattern parsed; operator rules
    /// are built eagerly so that surfaces as an error.
    regex: OnceLock<Option<Confirmer>>,
    /// A latency engine's regex for searches over [`LONG_WINDOW`] bytes in all: the one a
    /// throughput engine builds, with its lazy DFA (see [`Engine::confirmer_for`]).
    wide: OnceLock<Option<Confirmer>>,
    /// Bytes a latency engine has given this rule's own regex to search, in all: past
    /// [`LONG_INPUT`] it takes [`Compiled::wide`] too. A throughput engine counts the starts
    /// it searched the rule at instead, for [`Compiled::walk`].
    searched: AtomicUsize,
    /// Where its matches start and what they begin with: read before the regex is built,
    /// so that a rule whose every hit they turn away never builds it.
    anchors: OnceLock<Anchors>,
    /// A throughput engine's [`walk::Walk`] of the pattern, built once the rule has been
    /// searched at a thousand starts (`Engine::walk`); for a rule searched whole (no known
    /// start), of the pattern from its keyword on, walked at the hits.
    walk: OnceLock<Option<walk::Walk>>,
    /// Capture group index of `secret`.
    group: usize,
    /// Bytes to search on each side of a keyword hit.
    window: usize,
    /// The longest match, when the pattern bounds it.
    longest: Option<usize>,
    /// The secret's length, when every match's is the same (`Facts::secret_len`).
    secret_len: Option<usize>,
    /// (companion rule index, largest distance)
    requires: Option<(usize, usize)>,
    /// Whether a match can contain a line feed: a stream filter may then have to hold more
    /// than the current line (see [`Engine::multiline_pending`]).
    spans_lines: bool,
    /// Whether the secret itself can (a PEM block), not only the context before it.
    secret_spans_lines: bool,
    /// The rule's `path` and allowlists, if it has any: built at start, or for a built-in
    /// rule of a latency engine at its first finding.
    scope: OnceLock<Option<scope::Scope>>,
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
    /// For each keyword (automaton pattern id), the rules that listed it, each with the
    /// keyword's place in its list (for [`walk::Walk::admits_after`]).
    keyword_rules: Vec<Vec<(usize, usize)>>,
    longest_keyword: usize,
    /// The widest window of any rule ([`Engine::max_window`]): how far a match can reach.
    widest: usize,
    /// Report `requires` rules without their companion (see [`Engine::without_companions`]).
    ignore_requires: bool,
    /// Keep token-shaped matches that fail a checksum or read like placeholders (see
    /// [`Engine::without_companions`]).
    masking: bool,
    /// What every finding made from this engine's matches is fingerprinted with (see
    /// [`Engine::new`]).
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
    /// Compile `rules`. Fails on the first rule that cannot be compiled, naming it. `key` is
    /// the run's fingerprint key, carried to every finding made from this engine's matches:
    /// the operator's (`cli::setup::fingerprint_key`), or [`FingerprintKey::ephemeral`] for a
    /// caller that compares findings within the process only. There is no default, so no
    /// caller gets a random key without asking for one.
    pub fn new(rules: Vec<Rule>, key: FingerprintKey) -> Result<Engine, RuleError> {
        Engine::with_startup(rules, Startup::Throughput, key)
    }

    /// [`Engine::new`], built for `startup`.
    pub fn with_startup(
        rules: Vec<Rule>,
        startup: Startup,
        key: FingerprintKey,
    ) -> Result<Engine, RuleError> {
        // Sized up front: growing them rehashed every id and keyword several times, a
        // visible part of a hook event's start.
        let mut ids = HashMap::with_capacity(rules.len());
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
        let mut keywords: Vec<String> = Vec::with_capacity(rules.len() * 2);
        let mut keyword_ids: HashMap<String, usize> = HashMap::with_capacity(rules.len() * 2);
        let mut keyword_rules: Vec<Vec<(usize, usize)>> = Vec::with_capacity(rules.len() * 2);
        for (i, r) in rules.iter().enumerate() {
            let c = compile(r, &ids)?;
            // An operator's rule, or any rule of an engine for many bytes, has its scope
            // built now, so that one over the size limit fails the run as before; a hook
            // builds a built-in rule's at its first finding, its syntax checked now.
            if startup == Startup::Throughput || !crate::rules::is_builtin(r) {
                c.scope.set(scope::compile(r)?).ok();
            } else {
                scope::check(r)?;
            }
            if !crate::rules::is_builtin(r) {
                let anchors = c
                    .anchors
                    .get_or_init(|| Anchors::of(&r.pattern, &r.keywords, startup));
                let confirmer = build_regex(&r.pattern, anchors, startup)
                    .map_err(|e| r.invalid("pattern", e))?;
                // The pattern's own regex too, where it was left for later: a rule that
                // cannot be compiled fails the run now, not a search.
                if confirmer.regex.get().is_none() {
                    let own = meta_regex(&confirmer.hir, confirmer.anchored, startup)
                        .map_err(|e| r.invalid("pattern", e))?;
                    confirmer.regex.set(Some(own)).ok();
                }
                c.regex.set(Some(confirmer)).ok();
            }
            compiled.push(c);
            if r.keywords.is_empty() {
                return Err(r.invalid("keywords", "at least one keyword is required"));
            }
            for (slot, k) in r.keywords.iter().enumerate() {
                if k.len() < 2 {
                    return Err(r.invalid("keywords", format!("{k:?} is shorter than 2 bytes")));
                }
                let k = k.to_ascii_lowercase();
                let id = *keyword_ids.entry(k.clone()).or_insert_with(|| {
                    keywords.push(k);
                    keyword_rules.push(Vec::new());
                    keywords.len() - 1
                });
                if !keyword_rules[id].iter().any(|&(r, _)| r == i) {
                    keyword_rules[id].push((i, slot));
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
        let widest = compiled.iter().map(|c| c.window).max().unwrap_or(0);
        Ok(Engine {
            rules,
            compiled,
            keywords: automaton,
            keyword_rules,
            longest_keyword,
            widest,
            ignore_requires: false,
            masking: false,
            fingerprint_key: key,
            startup,
        })
    }

    /// Whether match `m` in `hay`, found at `path` (in `commit`, for a git blob), is outside
    /// its rule's scope: the rule's `path` does not match, or one of its allowlists allows it.
    pub fn excluded(&self, hay: &[u8], m: &Match, path: &str, commit: Option<&str>) -> bool {
        let rule = &self.rules[m.rule];
        self.compiled[m.rule]
            .scope
            .get_or_init(|| scope::compile_or_warn(rule))
            .as_ref()
            .is_some_and(|s| s.excludes(hay, m, path, commit))
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Every rule's pattern as the engine parses it, cut where its `secret` group begins:
    /// what comes before the group (a name, an assignment sign), then the group with what
    /// follows it. A pattern whose group is not one of its top-level parts, or that has none
    /// (its whole match is the secret), is cut at its start. Counted repetitions bounded above
    /// [`LONG_BOUND`] are left unbounded: each part still goes on wherever its pattern does,
    /// and its automaton does not count a long bound in states (a stream's test of where a
    /// secret could still be under way, `filter::Prefixes`). `None` if a pattern does not
    /// parse.
    pub fn patterns_around_secret(&self) -> Option<Vec<(Hir, Hir)>> {
        use rayon::prelude::*;
        // On every core: parsing them is a third of a first prompt's wait.
        self.rules
            .par_iter()
            .map(|r| {
                let hir = parse(&r.pattern).ok()?;
                let hir = crate::rules::facts::without_long_bounds(&hir, LONG_BOUND)
                    .map_or(hir, |(h, _)| h);
                Some(match crate::rules::facts::around_secret(&hir) {
                    Some([before, secret, after]) => (before, Hir::concat(vec![secret, after])),
                    None => (Hir::empty(), hir),
                })
            })
            .collect()
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
        self.widest
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
                for &(r, _) in &self.keyword_rules[k] {
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
        regex: OnceLock::new(),
        wide: OnceLock::new(),
        searched: AtomicUsize::new(0),
        anchors: OnceLock::new(),
        walk: OnceLock::new(),
        group,
        window,
        longest: facts.max_len,
        secret_len: facts.secret_len,
        requires,
        spans_lines: facts.spans_lines,
        secret_spans_lines: facts.secret_spans_lines,
        scope: OnceLock::new(),
    })
}

/// Counted repetitions with an upper bound above this are unbounded for searches of an
/// engine for many bytes ([`Confirmer::unbounded`]): a lazy DFA's state count grows with the
/// bound.
const LONG_BOUND: u32 = 256;

/// The bytes past which a latency engine searches with a throughput engine's regex
/// ([`Engine::confirmer_for`]). The backtracker and the PikeVM read them at a cost of their
/// length times the pattern's states; past 4 KiB that outweighs a build (~1–3 ms), and a
/// hook event's windows are rarely that long unless hits run together.
const LONG_WINDOW: usize = 4 << 10;

/// The same for a rule's searches added up: a tool that prints 10 MB of source code gives a
/// hook thousands of short windows, each under [`LONG_WINDOW`], that together read megabytes
/// through the backtracker.
const LONG_INPUT: usize = 64 << 10;

/// A rule's pattern with its long counted repetitions unbounded
/// ([`crate::rules::facts::without_long_bounds`]), and the length below which its match is
/// the pattern's own: a longer one is asked of the pattern itself.
struct Unbounded {
    regex: meta::Regex,
    below: usize,
}

/// A rule's regex.
struct Confirmer {
    /// The pattern's own regex ([`Confirmer::regex`]). Built with the rest, but where
    /// `unbounded` is asked first, only when first needed: of a real-code scan's 118 ms of
    /// regex builds, the bounded regexes of the 34 rules with long bounds took 91 (a PEM
    /// key's `{64,8192}` body, 6–10 ms each), and few of their matches are long enough to
    /// need one.
    regex: OnceLock<Option<meta::Regex>>,
    /// What `regex` is built from, and how.
    hir: Hir,
    anchored: bool,
    startup: Startup,
    /// The regex with its long counted repetitions unbounded ([`Unbounded`]), which a search
    /// asks first; built for an engine for many bytes, for a pattern that has one.
    unbounded: Option<Unbounded>,
    /// The bytes before and after the `secret` group in every match, when they are fixed
    /// ([`crate::rules::facts::secret_between_fixed`]): the regex is then asked for the
    /// match's bounds alone.
    between: Option<(usize, usize)>,
    /// The pattern cut around its `secret` group, for an anchored search that reads the group
    /// without a second pass over the match ([`Parts`]); built for an engine for many bytes.
    parts: Option<Box<Parts>>,
}

impl Confirmer {
    /// The pattern's own regex, built on first use where it was left for later; `None` if
    /// that build fails, which a test rules out for the built-in rules and
    /// [`Engine::with_startup`] for an operator's.
    fn regex(&self) -> Option<&meta::Regex> {
        self.regex
            .get_or_init(|| meta_regex(&self.hir, self.anchored, self.startup).ok())
            .as_ref()
    }
}

/// A match's span and its `secret` group's span.
type Found = ((usize, usize), (usize, usize));

/// A pattern `P(?P<secret>G)T` as three regexes, for an anchored search at a known start.
/// Reading a match's groups takes the backtracker a second pass over the match, most of the
/// search (~430 of ~530 ns for a generic assignment's match); three searches, one for each
/// part, find the same groups in a third of the time. They find them whenever
/// the first match of each part, each from where the one before ended, makes a match of the
/// whole: the backtracker, trying the whole pattern's paths in order of preference, tries
/// that one first, since the choices of `P` are made before those of `G` and `G`'s before
/// `T`'s, and each part's first match is its most preferred path. When one of them fails
/// after `P` matched, a less preferred path may still match: the whole regex is asked.
struct Parts {
    before: meta::Regex,
    secret: meta::Regex,
    after: meta::Regex,
}

impl Parts {
    fn of(hir: &Hir) -> Option<Box<Parts>> {
        let [before, secret, after] = crate::rules::facts::around_secret(hir)?;
        let build = |h: &Hir| {
            meta::Builder::new()
                .configure(
                    meta::Config::new()
                        .nfa_size_limit(Some(8 << 20))
                        .hybrid_cache_capacity(1 << 20)
                        .auto_prefilter(false)
                        .dfa(false)
                        .onepass(false)
                        .backtrack(false)
                        .which_captures(regex_automata::nfa::thompson::WhichCaptures::Implicit)
                        // An empty part (`$` at the end) is a part of a longer match: never
                        // turned away for where it falls in UTF-8.
                        .utf8_empty(false),
                )
                .build_from_hir(h)
                .ok()
        };
        Some(Box::new(Parts {
            before: build(&before)?,
            secret: build(&secret)?,
            after: build(&after)?,
        }))
    }

    /// The match at `input`'s start (anchored) and its `secret` group, as the whole regex
    /// finds them: `Some(Some(..))` found, `Some(None)` no match at all, `None` not known
    /// here (ask the whole regex).
    fn search(&self, input: &regex_automata::Input<'_>) -> Option<Option<Found>> {
        let from = |at: usize| input.clone().range(at..input.end());
        let Some(before) = self.before.search(&from(input.start())) else {
            // No path of `P` ends in range: none of the whole pattern does.
            return Some(None);
        };
        let secret = self.secret.search(&from(before.end()))?;
        let after = self.after.search(&from(secret.end()))?;
        Some(Some((
            (input.start(), after.end()),
            (secret.start(), secret.end()),
        )))
    }
}

/// Where a rule's matches can start relative to its keyword hits, and what they begin with.
struct Anchors {
    /// Offsets before a keyword hit at which every match starts ([`anchor::starts`]); `None`
    /// when the pattern does not prove that, and the whole window is searched.
    starts: Option<Box<[usize]>>,
    /// What a match holds in its first bytes ([`lead::Lead`]), checked at each start before
    /// an anchored search; only where `starts` is known.
    lead: Option<lead::Lead>,
}

impl Anchors {
    /// The analyses `build.rs` made of the built-in rules; for another rule, made here from
    /// its pattern, unless the engine is for one small input per process: the analysis cost
    /// a hook ~1 ms over the rules an AWS pair hits, more than anchored searches of 100 KB
    /// save it.
    fn of(pattern: &str, keywords: &[String], startup: Startup) -> Anchors {
        let keywords: Vec<String> = keywords.iter().map(|k| k.to_ascii_lowercase()).collect();
        let (starts, lead) = anchor::embedded(&EMBEDDED_ANCHORS.0, anchor::key(pattern, &keywords))
            .or_else(|| {
                let hir = (startup == Startup::Throughput).then(|| parse(pattern).ok())??;
                Some(anchor::of(&hir, &keywords))
            })
            .unwrap_or((None, None));
        Anchors { starts, lead }
    }
}

fn build_regex(pattern: &str, anchors: &Anchors, startup: Startup) -> Result<Confirmer, String> {
    let hir = parse(pattern)?;
    let anchored = anchors.starts.is_some();
    // Window searches too: a bearer token's `{20,2048}` walked the lazy DFA through a fresh
    // state per byte of each token, each a load from memory by the time the window came.
    let unbounded = (startup == Startup::Throughput)
        .then(|| crate::rules::facts::without_long_bounds(&hir, LONG_BOUND))
        .flatten();
    let unbounded_regex = match &unbounded {
        Some((hir, below)) => Some(Unbounded {
            regex: meta_regex(hir, anchored, startup)?,
            below: *below,
        }),
        None => None,
    };
    let between = crate::rules::facts::secret_between_fixed(&hir);
    // Only where anchored searches read groups, and only for many bytes: three more regexes
    // are no saving over a hook event's few matches.
    let parts = (startup == Startup::Throughput && anchored && between.is_none())
        .then(|| Parts::of(unbounded.as_ref().map_or(&hir, |(h, _)| h)))
        .flatten();
    // The pattern's own regex is built now unless the unbounded one is asked first: then it
    // is built when a match of that is too long to be the pattern's own, which few are.
    let regex = OnceLock::new();
    if unbounded_regex.is_none() {
        regex.set(Some(meta_regex(&hir, anchored, startup)?)).ok();
    }
    Ok(Confirmer {
        regex,
        hir,
        anchored,
        startup,
        unbounded: unbounded_regex,
        between,
        parts,
    })
}

/// `hir` as a regex that confirms a rule's matches, built for `startup`.
fn meta_regex(hir: &Hir, anchored: bool, startup: Startup) -> Result<meta::Regex, String> {
    meta::Builder::new()
        .configure(
            meta::Config::new()
                .nfa_size_limit(Some(8 << 20))
                .hybrid_cache_capacity(1 << 20)
                // Extracting a pattern's literals is ~40 % of building its regex (10 rules
                // an AWS pair hits: 1.1 ms against 1.9 ms), and a regex only ever runs on a
                // window around a keyword hit: one small input per process is better off
                // without the prefilter. So is a rule confirmed by anchored searches at
                // known starts, which a prefilter never serves (a tree of real code builds
                // some 350 rules' regexes, ~0.4 s of CPU).
                .auto_prefilter(startup == Startup::Throughput && !anchored)
                // Nor does it need the lazy DFA: building one also builds a reverse NFA, as
                // much work again as the pattern's own; the backtracker and the PikeVM
                // confirm a window as well. A fully built DFA pays for itself only over the
                // long unanchored searches of a window; anchored searches at known starts
                // read a few bytes each, which the lazy DFA serves as fast.
                .hybrid(startup == Startup::Throughput)
                .dfa(startup == Startup::Throughput && !anchored)
                // The one-pass DFA reads a match's groups faster than the backtracker, which
                // pays over many matches; over a hook event's few, building it costs more.
                .onepass(startup == Startup::Throughput),
        )
        .build_from_hir(hir)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the engine reads a rule's secret from the match's bounds, that is exactly
    /// where the regex's `secret` group is, on every example of every such built-in rule.
    #[test]
    fn a_secret_read_from_the_bounds_is_the_group() {
        let mut rules = 0;
        for r in crate::rules::builtin() {
            let hir = parse(&r.pattern).unwrap();
            let Some((before, after)) = crate::rules::facts::secret_between_fixed(&hir) else {
                continue;
            };
            rules += 1;
            let re = meta::Builder::new().build_from_hir(&hir).unwrap();
            let group = r.pattern_facts().unwrap().group.unwrap();
            let mut matches = 0;
            for ex in &r.examples {
                for c in re.captures_iter(ex.as_bytes()) {
                    let (m, g) = (c.get_match().unwrap(), c.get_group(group).unwrap());
                    assert_eq!(
                        (m.start() + before, m.end() - after),
                        (g.start, g.end),
                        "{}",
                        r.id
                    );
                    matches += 1;
                }
            }
            assert!(matches > 0, "{}: no example matched", r.id);
        }
        assert!(rules >= 10, "only {rules} rules read by their bounds");
    }

    /// Where the engine reads a rule's secret by searching the parts around it ([`Parts`]),
    /// it finds the match and the group the whole regex does, or leaves the answer to it: at
    /// every start of every example and negative of every such built-in rule, each also cut
    /// short and run on into the next, where the parts' first matches are not the answer.
    #[test]
    fn the_parts_find_the_groups_the_whole_regex_finds() {
        let (mut rules, mut answered) = (0, 0);
        for r in crate::rules::builtin() {
            let hir = parse(&r.pattern).unwrap();
            if crate::rules::facts::secret_between_fixed(&hir).is_some() {
                continue;
            }
            let Some(parts) = Parts::of(&hir) else {
                continue;
            };
            rules += 1;
            let re = meta::Builder::new().build_from_hir(&hir).unwrap();
            let group = r.pattern_facts().unwrap().group.unwrap();
            let mut slots = vec![None; 2 * (group + 1)];
            let texts: Vec<String> = r.examples.iter().chain(&r.negatives).cloned().collect();
            let mut hays: Vec<Vec<u8>> = texts.iter().map(|t| t.as_bytes().to_vec()).collect();
            for (a, b) in texts.iter().zip(texts.iter().skip(1)) {
                hays.push([&a.as_bytes()[..a.len() * 2 / 3], b.as_bytes()].concat());
                hays.push(format!("{a} {a}\n{b}").into());
            }
            for hay in &hays {
                for at in 0..=hay.len() {
                    let input = regex_automata::Input::new(hay)
                        .range(at..)
                        .anchored(regex_automata::Anchored::Yes);
                    let whole = re.search_slots(&input, &mut slots).map(|_| {
                        let get = |i: usize| slots[i].map(|v| v.get());
                        (
                            (get(0).unwrap(), get(1).unwrap()),
                            (get(2 * group).unwrap(), get(2 * group + 1).unwrap()),
                        )
                    });
                    if let Some(found) = parts.search(&input) {
                        assert_eq!(found, whole, "{} at {at} of {:?}", r.id, hay.escape_ascii());
                        answered += usize::from(found.is_some());
                    }
                }
            }
        }
        assert!(rules >= 100, "only {rules} rules searched by parts");
        assert!(answered >= 1000, "only {answered} matches read by parts");
    }

    #[test]
    fn both_startups_find_the_same() {
        let rules = crate::rules::builtin();
        let hay: String = rules
            .iter()
            .flat_map(|r| r.examples.iter().chain(&r.negatives))
            .map(|e| format!("{e}\n"))
            .collect();
        let fast = Engine::with_startup(
            rules.clone(),
            Startup::Throughput,
            FingerprintKey::ephemeral(),
        )
        .unwrap();
        let quick =
            Engine::with_startup(rules, Startup::Latency, FingerprintKey::ephemeral()).unwrap();
        let found = fast.scan(hay.as_bytes());
        assert!(found.len() > 1000, "{}", found.len());
        assert_eq!(found, quick.scan(hay.as_bytes()));
        // A window far longer than a hook's usual ones (a run of `A`s joins the windows of
        // the Twitter token's keyword into one) is searched by the throughput engine's regex.
        let twitter = (quick.rules.iter())
            .position(|r| r.id == "twitter.bearer-token")
            .unwrap();
        let token = &quick.rules[twitter].examples[0];
        let hay = format!("{}\n{token}\n{}", "A".repeat(200_000), "A".repeat(1000));
        let found = fast.scan(hay.as_bytes());
        assert!(found.iter().any(|m| m.rule == twitter), "{found:?}");
        assert!(quick.compiled[twitter].wide.get().is_none());
        assert_eq!(found, quick.scan(hay.as_bytes()));
        assert!(quick.compiled[twitter]
            .wide
            .get()
            .is_some_and(Option::is_some));
        // So are many short windows that add up (a tool printing megabytes of source), each
        // far under `LONG_WINDOW`, once the rule's searches pass `LONG_INPUT` in all.
        let quick = Engine::with_startup(
            crate::rules::builtin(),
            Startup::Latency,
            FingerprintKey::ephemeral(),
        )
        .unwrap();
        let apart = |n: usize| format!("{token}\n{}\n", " ".repeat(2000)).repeat(n);
        let few = apart(4);
        assert_eq!(fast.scan(few.as_bytes()), quick.scan(few.as_bytes()));
        assert!(quick.compiled[twitter].wide.get().is_none());
        let many = apart(400);
        let found = fast.scan(many.as_bytes());
        assert_eq!(found.iter().filter(|m| m.rule == twitter).count(), 400);
        assert_eq!(found, quick.scan(many.as_bytes()));
        assert!(quick.compiled[twitter]
            .wide
            .get()
            .is_some_and(Option::is_some));
    }

    /// A throughput engine leaves a rule's own regex for later where an unbounded one is
    /// asked first ([`Confirmer::regex`]): every built-in rule's still builds, and a match
    /// too long to be the unbounded regex's own is answered by it as a hook's engine, which
    /// has only the rule's own, answers it.
    #[test]
    fn a_regex_left_for_later_answers_the_long_matches() {
        let mut later = 0;
        for r in crate::rules::builtin() {
            let anchors = Anchors::of(&r.pattern, &r.keywords, Startup::Throughput);
            let c = build_regex(&r.pattern, &anchors, Startup::Throughput).unwrap();
            later += usize::from(c.regex.get().is_none());
            assert!(c.regex().is_some(), "{}", r.id);
        }
        assert!(later >= 20, "only {later} rules' regexes left for later");
        let fast = Engine::with_startup(
            crate::rules::builtin(),
            Startup::Throughput,
            FingerprintKey::ephemeral(),
        )
        .unwrap();
        let quick = Engine::with_startup(
            crate::rules::builtin(),
            Startup::Latency,
            FingerprintKey::ephemeral(),
        )
        .unwrap();
        let jwt = fast.rules.iter().position(|r| r.id == "jwt").unwrap();
        let part = |json: String| {
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
        };
        let header = |pad: usize| part(format!(r#"{{"alg":"HS256","kid":"{}"}}"#, "k".repeat(pad)));
        let payload = |pad: usize| {
            part(format!(
                r#"{{"sub":"{}","iat":1711992916}}"#,
                "u".repeat(pad)
            ))
        };
        let token = |h: String, p: String| format!("token: {h}.{p}.{}\n", "s".repeat(43));
        // A JWT's header is at most 600 bytes: one of ~650 makes none. A payload of ~700
        // makes a match longer than the 601 bytes under which the unbounded regex's match is
        // the pattern's own, which the rule's own regex is then asked for.
        let (long_header, long_payload) = (header(460), payload(500));
        assert!(long_header.len() > 600 && long_payload.len() > 601);
        let hay = [
            token(long_header, payload(10)),
            token(header(5), long_payload),
            token(header(5), payload(10)),
        ]
        .concat();
        let found = fast.scan(hay.as_bytes());
        assert_eq!(
            found.iter().filter(|m| m.rule == jwt).count(),
            2,
            "{found:?}"
        );
        assert_eq!(found, quick.scan(hay.as_bytes()));
        let own = |e: &Engine| {
            e.compiled[jwt]
                .regex
                .get()
                .unwrap()
                .as_ref()
                .unwrap()
                .regex
                .get()
                .is_some()
        };
        assert!(own(&fast));
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
