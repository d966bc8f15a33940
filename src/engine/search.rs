//! Searching: keyword hits to windows, each rule's regex confirmed in its windows (and, for a
//! masker, again on a token glued to the text before it), then the filters, companions and
//! overlaps that turn raw matches into findings' matches.

use super::{
    build_regex, reject, Anchors, Confirmer, Engine, Match, Startup, CHUNK, LONG_INPUT, LONG_WINDOW,
};
use rayon::prelude::*;
use regex_automata::{util::primitives::NonMaxUsize, Anchored, Input};
use std::sync::atomic::Ordering;

/// A stretch of input where a rule is searched for around one or more of its keyword hits.
/// Sorted by rule, then start: how windows are joined. Offsets count from a base near the
/// range scanned, in 32 bits: dense keywords make windows by the million (a log with
/// `secret` on every line), and at twice the size their list was most of a chunk's memory.
#[derive(Clone, Copy)]
struct Window {
    rule: u32,
    start: u32,
    end: u32,
    hit: u32,
    /// The hit is in the range being scanned, not a neighbour's seen for its window.
    own: bool,
}

/// The most [`Engine::candidates`] takes in one range, so that a window's offsets from its
/// base fit in 32 bits; a longer range is taken in parts.
const MAX_RANGE: usize = 1 << 30;

/// For a masker: a value a generic rule's class stopped short of its end, at a character
/// passwords hold too (`SECRET_KEY=kkXj…(Wun…`, `"password": "…)Tbd4…"`), runs on to its
/// closing quote, or unquoted to the next blank, tag (`<value>…</value>`) or `&` less the code's
/// punctuation that ends it there (`f(password=…)`, `{password: …, user: x}`) and a
/// sentence's stop: what is left after it would be a piece of the secret.
fn run_on(hay: &[u8], m: &mut Match) {
    let quote = m
        .start
        .checked_sub(1)
        .map(|i| hay[i])
        .filter(|b| matches!(b, b'"' | b'\'' | b'`'));
    // Only where the class stopped at what a password holds and no syntax around a value
    // means (not a URL's `@` or `/`, a query's `&`, a list's `,`).
    if !hay.get(m.end).is_some_and(|b| b"()[]{}|\\$?:>".contains(b)) {
        return;
    }
    let rest = &hay[m.end..(m.end + RUN_ON).min(hay.len())];
    let run = rest
        .iter()
        .take_while(|b| !b.is_ascii_whitespace() && !b"\"'`<&".contains(b))
        .count();
    let kept = match quote {
        Some(_) => run,
        None => rest[..run]
            .iter()
            .rposition(|b| !matches!(b, b',' | b';' | b')' | b']' | b'}' | b'>' | b'.' | b':'))
            .map_or(0, |p| p + 1),
    };
    m.end += kept;
    m.match_end = m.match_end.max(m.end);
}

/// How far a masker's match runs on past where its rule stopped: over the letters and digits
/// a token is glued to ([`Engine::confirm_glued`]), over the rest of a value
/// ([`run_on`]). Further than any provider's token or a password is long.
const RUN_ON: usize = 256;

impl Engine {
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
        if range.len() > MAX_RANGE {
            return (range.start..range.end)
                .step_by(MAX_RANGE)
                .flat_map(|s| self.candidates(hay, s..(s + MAX_RANGE).min(range.end)))
                .collect();
        }
        // Below any window of the range or of a hit around it (`windows_around`).
        let base = range
            .start
            .saturating_sub(3 * self.widest + self.longest_keyword);
        // A keyword that starts in range may end past it.
        let end = (range.end + self.longest_keyword).min(hay.len());
        let mut windows: Vec<Window> = Vec::new();
        let mut glued: Vec<(usize, usize, usize)> = Vec::new();
        // The last windows of the rules searched whole (no known start), in slots of the
        // rule and its 4 KiB of the input (the walk's lanes report hits from parts of the
        // range in turn): a window overlapping one of them is joined to it as it is found.
        // A run of one keyword (`AAAA…`, base64 of zero bytes, hits the Twitter token's
        // keyword at every byte) made a window per byte, a twentyfold copy of the input to
        // sort.
        let mut last = [(u32::MAX, 0u32); SLOTS];
        self.keywords
            .for_each(hay, range.start..end, &mut |k, start, kend| {
                if start >= range.end {
                    return;
                }
                let is_glued = self.masking && start > 0 && hay[start - 1].is_ascii_alphanumeric();
                // Glued to what follows too (`ghp_…xyz`), a fixed-length rule is tried on the
                // text cut where its secret would end, at a keyword written as a provider's
                // prefix (`ghp_`, `AKIA`, `sk-`), not a word (`token_count`, on every line of
                // a log) nor hex digits alone (`4b1d`, glued to more inside every digest):
                // each try costs an anchored search. Judged once for the hit's rules.
                let prefix = self.masking && {
                    let kw = &hay[start..kend];
                    kw.iter().any(|b| !b.is_ascii_lowercase())
                        && !kw.iter().all(u8::is_ascii_hexdigit)
                };
                for &(r, slot) in &self.keyword_rules[k] {
                    let window = self.window(r, start, kend, hay.len(), base, true);
                    if self.may_start(r, slot, hay, start) {
                        // Only a rule searched whole joins windows: an anchored one's hits
                        // are its starts.
                        let whole = self.anchors(r).starts.is_none();
                        if !(whole && joined(&mut windows, &last, window)) {
                            if whole {
                                remember(&mut last, window, windows.len());
                            }
                            windows.push(window);
                        }
                    }
                    if self.masking && !self.rules[r].generic {
                        let cut = self.compiled[r]
                            .secret_len
                            .filter(|_| prefix)
                            .map(|n| start + n)
                            .filter(|&e| hay.get(e).is_some_and(u8::is_ascii_alphanumeric));
                        if is_glued || cut.is_some() {
                            glued.push((r, start, cut.unwrap_or(base + window.end as usize)));
                        }
                    }
                }
            });
        // A chunk's windows reach past its range, and a match there may start at a keyword
        // of the chunk before or after. Their windows join the range's as a scan of the whole
        // input would have joined them, so that no search is cut short at a window's end
        // that a whole scan would not have had; a group of them alone is the other chunk's.
        if range.start > 0 || range.end < hay.len() {
            self.windows_around(hay, &range, base, &mut windows);
        }
        sort_windows(&mut windows, self.rules.len());
        let mut out = Vec::new();
        // Scratch lists, kept across windows: dense keywords make windows by the hundred
        // thousand, and an allocation for each showed in the profile.
        let (mut hits, mut starts) = (Vec::new(), Vec::new());
        let mut i = 0;
        // The windows whose hits' bytes have been asked for: those before `ahead`.
        let mut ahead = 0;
        while i < windows.len() {
            for w in windows.iter().take(i + PREFETCH).skip(ahead) {
                prefetch(hay, base + w.hit as usize);
            }
            ahead = ahead.max(i + PREFETCH);
            let Window {
                rule,
                start: ws,
                end: mut we,
                hit,
                mut own,
            } = windows[i];
            hits.clear();
            hits.push(base + hit as usize);
            i += 1;
            while i < windows.len() && windows[i].rule == rule && windows[i].start <= we {
                we = we.max(windows[i].end);
                hits.push(base + windows[i].hit as usize);
                own |= windows[i].own;
                i += 1;
            }
            if own {
                let window = base + ws as usize..base + we as usize;
                self.confirm_hits(rule as usize, hay, window, &hits, &mut starts, &mut out);
            }
        }
        if !glued.is_empty() {
            self.confirm_glued(hay, &mut glued, &mut out);
        }
        out
    }

    /// The windows, as [`Engine::candidates`] lists them, of the keyword hits outside
    /// `range` whose windows can overlap one of the range's own.
    fn windows_around(
        &self,
        hay: &[u8],
        range: &std::ops::Range<usize>,
        base: usize,
        windows: &mut Vec<Window>,
    ) {
        // The range's windows reach `widest` past it, and a window overlaps them from up to
        // `widest` further.
        let reach = 2 * self.widest + self.longest_keyword;
        let from = range.start.saturating_sub(reach);
        let to = (range.end + reach).min(hay.len());
        let mut keep = |k: usize, start: usize, kend: usize| {
            if !range.contains(&start) {
                windows.extend(
                    self.keyword_rules[k]
                        .iter()
                        .filter(|&&(r, slot)| self.may_start(r, slot, hay, start))
                        .map(|&(r, _)| self.window(r, start, kend, hay.len(), base, false)),
                );
            }
        };
        if range.len() < self.longest_keyword {
            self.keywords.for_each(hay, from..to, &mut keep);
        } else {
            // Each side alone, not the range between them (the chunk's own walk has seen it);
            // the left side reaches into the range as far as what starts before it can end.
            let left = range.start + self.longest_keyword.saturating_sub(1);
            self.keywords.for_each(hay, from..left, &mut keep);
            self.keywords.for_each(hay, range.end..to, &mut keep);
        }
    }

    /// Whether a match of rule `r` can start around its keyword hit at `start`: false only
    /// when its matches start at known offsets before the hit and no lead admits a byte
    /// there (or its walk dies from there), or when it is searched whole and the walk of its
    /// pattern from the keyword on dies at the hit. Asked as the hit is found, while its
    /// bytes are in the nearest cache: asked later, of a window among the chunk's sorted
    /// thousands, each was a load from memory (a tenth of a large file's scan), and most of
    /// the dense keywords' windows (`key=`, `pat`) have no start at all. A window left out
    /// changes no result: it would add no start, and a rule whose match is no longer than
    /// its window finds from each start what it found in the window joined with it
    /// (`confirm_hits` stops at `s + longest`). A rule searched whole finds each match from
    /// the hit of its keyword inside it, which the walk of the tail admits and whose window
    /// holds the whole match.
    #[inline]
    fn may_start(&self, r: usize, slot: usize, hay: &[u8], start: usize) -> bool {
        let c = &self.compiled[r];
        if c.longest.is_none_or(|n| n > c.window) {
            return true;
        }
        let anchors = self.anchors(r);
        // A rule searched often has its DFA walked too, here while the bytes are near.
        let walk = c.walk.get().and_then(Option::as_ref);
        let (offsets, lead) = match (anchors.starts.as_deref(), anchors.lead.as_ref()) {
            (Some(offsets), Some(lead)) => (offsets, Some(lead)),
            (Some(_), None) => return true,
            // Searched whole: its walk, if any, is of the pattern from the keyword on
            // (`Walk::of_tail`), taken at the hit as a start's would be.
            (None, _) => (&[0][..], None),
        };
        offsets.iter().any(|&d| {
            start.checked_sub(d).is_some_and(|s| {
                lead.is_none_or(|l| l.admits(hay, s, hay.len()))
                    && walk.is_none_or(|w| match d {
                        // A match that starts at the keyword: the walk takes up after it.
                        0 => w.admits_after(slot, hay, s, hay.len()),
                        _ => w.admits(hay, s, hay.len()),
                    })
            })
        })
    }

    /// Where rule `r` is searched for around its keyword hit `start..kend`: as far on each
    /// side as its longest match can reach. Offsets from `base`, which is below them all.
    fn window(
        &self,
        r: usize,
        start: usize,
        kend: usize,
        len: usize,
        base: usize,
        own: bool,
    ) -> Window {
        let w = self.compiled[r].window;
        let from_base = |at: usize| (at - base) as u32;
        let from = kend.saturating_sub(w);
        Window {
            rule: r as u32,
            start: from_base(from),
            // A window narrower than the keyword (an operator's `window`, a pattern whose
            // longest match is shorter) holds no match with the keyword in it: empty, not
            // reversed.
            end: from_base((start + w).min(len).max(from)),
            hit: from_base(start),
            own,
        }
    }

    /// For a masker: a provider token glued to the letter or digit before it (`xAKIA…`,
    /// `tokenghp_…`, what a terminal makes of two writes with no separator) fails its rule's
    /// leading boundary, so the rule is tried again on the text from the keyword on, and a
    /// token that begins right there is kept. One glued to what follows (`ghp_…xyz`) fails
    /// its trailing boundary: the rule is tried on the text cut where its fixed-length secret
    /// ends, and the match kept runs on over the letters and digits after it, which may be
    /// the token's own (a longer one than the rule knows). Reports leave both out (a token
    /// inside a longer word is usually not one); a masker masks them, as too much is its
    /// safe side.
    fn confirm_glued(&self, hay: &[u8], glued: &mut [(usize, usize, usize)], out: &mut Vec<Match>) {
        let mut seen: std::collections::HashSet<(usize, usize, usize)> =
            out.iter().map(|m| (m.rule, m.start, m.end)).collect();
        // By rule, so that each rule's searches are weighed once, in all
        // ([`Engine::confirmer_for`]); the order of `out` does not matter (`finish` sorts).
        glued.sort_unstable();
        for hits in glued.chunk_by(|a, b| a.0 == b.0) {
            let rule = hits[0].0;
            let bytes = hits.iter().map(|&(_, s, e)| e - s).sum();
            let Some(confirmer) = self.confirmer_for(rule, bytes) else {
                continue;
            };
            let group = self.compiled[rule].group;
            let mut slots = Slots::new(confirmer, group);
            for &(_, start, end) in hits {
                // Only a match from the keyword on is kept, so one anchored search there:
                // searched unanchored, each of a run of glued hits read its whole window.
                let mut found = Vec::new();
                let input = Input::new(&hay[start..end]).anchored(Anchored::Yes);
                search(confirmer, &input, rule, group, &mut slots, &mut found);
                for m in found.into_iter().filter(|m| m.start == 0) {
                    // Cut short of the letters after it: the match takes them in.
                    let more = match m.end + start == end {
                        true => hay[end..]
                            .iter()
                            .take(RUN_ON)
                            .take_while(|b| b.is_ascii_alphanumeric())
                            .count(),
                        false => 0,
                    };
                    let m = Match {
                        start: m.start + start,
                        end: m.end + start + more,
                        rule,
                        match_start: m.match_start + start,
                        match_end: (m.match_end + start).max(m.end + start + more),
                    };
                    if seen.insert((rule, m.start, m.end)) {
                        out.push(m);
                    }
                }
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

    fn anchors(&self, rule: usize) -> &Anchors {
        let r = &self.rules[rule];
        self.compiled[rule]
            .anchors
            .get_or_init(|| Anchors::of(&r.pattern, &r.keywords, self.startup))
    }

    fn confirmer(&self, rule: usize) -> Option<&Confirmer> {
        let pattern = &self.rules[rule].pattern;
        self.compiled[rule]
            .regex
            .get_or_init(|| build_regex(pattern, self.anchors(rule), self.startup).ok())
            .as_ref()
    }

    /// Confirms `rule` in `window` around keyword `hits`: where the rule's
    /// matches start at a known offset before a hit ([`Confirmer::starts`]), by an anchored
    /// search at each such start, which finds what [`Engine::confirm`]'s search of the whole
    /// window finds (the leftmost match, then the next after it) at a fraction of the bytes
    /// read; otherwise by that search.
    fn confirm_hits(
        &self,
        rule: usize,
        hay: &[u8],
        window: std::ops::Range<usize>,
        hits: &[usize],
        starts: &mut Vec<usize>,
        out: &mut Vec<Match>,
    ) {
        let (start, end) = (window.start, window.end);
        let anchors = self.anchors(rule);
        let Some(offsets) = anchors.starts.as_deref() else {
            // Counted for the walk `may_start` takes at these hits.
            self.walk(rule, hits.len());
            return self.confirm(rule, hay, start, end, out);
        };
        starts.clear();
        starts.extend(
            hits.iter()
                .flat_map(|&h| offsets.iter().filter_map(move |&d| h.checked_sub(d)))
                .filter(|&s| s >= start)
                // A start the lead turns away is one where the search finds nothing; a rule
                // whose every start it turns away builds no regex (most rules an AWS pair's
                // keywords hit, in a hook event).
                .filter(|&s| anchors.lead.as_ref().is_none_or(|l| l.admits(hay, s, end))),
        );
        if starts.is_empty() {
            return;
        }
        let (group, longest) = (self.compiled[rule].group, self.compiled[rule].longest);
        starts.sort_unstable();
        starts.dedup();
        // What the searches may read in all: 100 KB of PEM headers in a hook event is 3,000
        // starts that may each read 12,000 bytes (2 s through the backtracker).
        let reach = longest.map_or(end - start, |n| n.min(end - start));
        let Some(confirmer) = self.confirmer_for(rule, starts.len().saturating_mul(reach)) else {
            return;
        };
        let mut slots = Slots::new(confirmer, group);
        let walk = self.walk(rule, starts.len());
        let mut at = start;
        for &s in starts.iter() {
            // Walked only where a search would start: a start inside the match before it
            // is never searched, and a run of hits (a line of `a`s) has one at every byte.
            if s < at || walk.is_some_and(|w| !w.admits(hay, s, end)) {
                continue;
            }
            // No match at `s` is longer than the rule's longest, so the search stops there:
            // the backtracker clears a bit per NFA state for each byte it may read, and
            // look-around still sees the bytes beyond.
            let stop = longest.map_or(end, |n| end.min(s + n));
            let input = Input::new(hay).range(s..stop).anchored(Anchored::Yes);
            if let Some((ms, me)) = search(confirmer, &input, rule, group, &mut slots, out) {
                at = if me > ms { me } else { me + 1 };
            }
        }
    }

    /// A throughput engine's [`super::walk::Walk`] for `rule`, once it has been asked about
    /// [`MANY_STARTS`] starts in all (counted in `searched`, which only a latency engine
    /// counts bytes in): built for the rules a scan searches often.
    fn walk(&self, rule: usize, starts: usize) -> Option<&super::walk::Walk> {
        if self.startup != Startup::Throughput {
            return None;
        }
        let c = &self.compiled[rule];
        if let Some(w) = c.walk.get() {
            return w.as_ref();
        }
        if c.searched.fetch_add(starts, Ordering::Relaxed) + starts < MANY_STARTS {
            return None;
        }
        c.walk
            .get_or_init(|| {
                let hir = crate::rules::facts::parse(&self.rules[rule].pattern).ok()?;
                let keywords = &self.rules[rule].keywords;
                match self.anchors(rule).starts {
                    Some(_) => super::walk::Walk::of(&hir, keywords),
                    // Walked at the hits, not at starts (`may_start`).
                    None => super::walk::Walk::of_tail(&hir, keywords),
                }
            })
            .as_ref()
    }

    /// The regex that searches some `bytes` in all for `rule`. A latency engine's own has no
    /// lazy DFA (a hook event's searches are few and short, and the DFA's build costs more
    /// than it saves there), so the backtracker or the PikeVM searches, at a cost of the
    /// bytes times the pattern's states, and the backtracker clears that many bits at each
    /// search. Many bytes (a long window; a run of glued hits: 100 KB of `A`s in a tool's
    /// output, each position a hit of the Twitter token's keyword, took 0.4 s; many anchored
    /// starts that may each read far; a rule's searches that add up past [`LONG_INPUT`]) take
    /// the throughput engine's regex, built the first time.
    fn confirmer_for(&self, rule: usize, bytes: usize) -> Option<&Confirmer> {
        if self.startup == Startup::Throughput {
            return self.confirmer(rule);
        }
        // Bounded so that no sum wraps: past the limit, how far past does not matter.
        let bytes = bytes.min(LONG_INPUT + 1);
        let before = self.compiled[rule]
            .searched
            .fetch_add(bytes, Ordering::Relaxed);
        if bytes <= LONG_WINDOW && before + bytes <= LONG_INPUT {
            return self.confirmer(rule);
        }
        let pattern = &self.rules[rule].pattern;
        self.compiled[rule]
            .wide
            .get_or_init(|| build_regex(pattern, self.anchors(rule), Startup::Throughput).ok())
            .as_ref()
    }

    fn confirm(&self, rule: usize, hay: &[u8], start: usize, end: usize, out: &mut Vec<Match>) {
        let Some(confirmer) = self.confirmer_for(rule, end - start) else {
            return;
        };
        let group = self.compiled[rule].group;
        let mut slots = Slots::new(confirmer, group);
        let mut at = start;
        while at <= end {
            let input = Input::new(hay).range(at..end);
            let Some((ms, me)) = search(confirmer, &input, rule, group, &mut slots, out) else {
                break;
            };
            at = if me > ms { me } else { me + 1 };
        }
    }

    /// Filters, companions and overlaps: turns raw regex matches into findings' matches.
    pub fn finish(&self, hay: &[u8], mut raw: Vec<Match>) -> Vec<Match> {
        raw.sort_unstable();
        raw.dedup();
        raw.retain(|m| reject::keep(&self.rules[m.rule], hay, m, self.masking));
        if self.masking && !raw.is_empty() {
            for m in raw.iter_mut().filter(|m| self.rules[m.rule].generic) {
                run_on(hay, m);
            }
            raw.sort_unstable();
        }
        // A rule that needs a companion keeps a match only with the companion close by.
        // Matches are sorted by start, so each check looks at a bounded slice found by binary
        // search (`reaching`), never at every other match.
        let longest_raw = longest(&raw);
        let kept: Vec<Match> = raw
            .iter()
            .filter(|m| match self.compiled[m.rule].requires {
                _ if self.ignore_requires => true,
                None => true,
                Some((other, within)) => raw[reaching(
                    &raw,
                    longest_raw,
                    m.start.saturating_sub(within),
                    m.end + within,
                )]
                .iter()
                .any(|o| o.rule == other && distance(o.span(), m.span()) <= within),
            })
            .copied()
            .collect();
        // One secret, one finding: a specific rule wins over a generic one, then the earlier rule.
        let longest_kept = longest(&kept);
        let mut out: Vec<Match> = Vec::with_capacity(kept.len());
        for m in &kept {
            let shadowed = kept[reaching(&kept, longest_kept, m.start, m.end)]
                .iter()
                .any(|o| {
                    o != m
                        && overlaps(o.span(), m.span())
                        && match (self.rules[o.rule].generic, self.rules[m.rule].generic) {
                            (false, true) => true,
                            (true, false) => false,
                            // A rule that judges its value wins over one that takes any value
                            // by its name alone (`by_name`): one finding, the judged confidence.
                            (true, true)
                                if self.rules[o.rule].by_name != self.rules[m.rule].by_name =>
                            {
                                self.rules[m.rule].by_name
                            }
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

/// Capture slots for a rule's groups up to its `secret` group. Rules rarely have more than a
/// few groups; the array avoids an allocation per search.
enum Slots {
    Inline([Option<NonMaxUsize>; 16], usize),
    Heap(Vec<Option<NonMaxUsize>>),
}

impl Slots {
    /// The slots a search of `confirmer` fills: the match's alone when they give its
    /// `secret` group.
    fn new(confirmer: &Confirmer, group: usize) -> Slots {
        let n = match confirmer.between {
            Some(_) => 2,
            None => 2 * (group + 1),
        };
        if n <= 16 {
            Slots::Inline([None; 16], n)
        } else {
            Slots::Heap(vec![None; n])
        }
    }

    fn get(&mut self) -> &mut [Option<NonMaxUsize>] {
        match self {
            Slots::Inline(a, n) => &mut a[..*n],
            Slots::Heap(v) => v,
        }
    }
}

/// One search of `input`: the match's span, with its `secret` group pushed to `out` when
/// that group took part and is not empty.
fn search(
    confirmer: &Confirmer,
    input: &Input<'_>,
    rule: usize,
    group: usize,
    slots: &mut Slots,
    out: &mut Vec<Match>,
) -> Option<(usize, usize)> {
    let anchored = matches!(input.get_anchored(), Anchored::Yes);
    let unbounded = confirmer.unbounded.as_ref();
    // What the unbounded pattern finds is the rule's own match when it is short enough,
    // anchored or not: its leftmost start is at or before the rule's (it matches wherever
    // the rule does), and a match there shorter than `below` is the rule's own from there.
    let own = |(ms, me): (usize, usize)| unbounded.is_none_or(|u| me - ms < u.below);
    let parts = confirmer.parts.as_ref().filter(|_| anchored);
    let found = parts
        .and_then(|p| p.search(input))
        .filter(|f| f.is_none_or(|(span, _)| own(span)));
    let ((ms, me), secret) = match found {
        Some(found) => {
            let (span, secret) = found?;
            (span, Some(secret))
        }
        None => {
            let slots = slots.get();
            let span = |s: &[Option<NonMaxUsize>]| Some((s[0]?.get(), s[1]?.get()));
            // No match of the unbounded pattern: none of the rule's.
            unbounded
                .map_or_else(|| confirmer.regex(), |u| Some(&u.regex))?
                .search_slots(input, slots)?;
            if !span(slots).is_some_and(own) {
                confirmer.regex()?.search_slots(input, slots)?;
            }
            let (ms, me) = span(slots)?;
            let secret = match confirmer.between {
                Some((before, after)) => Some((ms + before, me.saturating_sub(after))),
                None => slots[2 * group]
                    .zip(slots[2 * group + 1])
                    .map(|(s, e)| (s.get(), e.get())),
            };
            ((ms, me), secret)
        }
    };
    if let Some((s, e)) = secret.filter(|(s, e)| e > s) {
        out.push(Match {
            start: s,
            end: e,
            rule,
            match_start: ms,
            match_end: me,
        });
    }
    Some((ms, me))
}

/// Starts of one rule after which a throughput engine walks its DFA before searching
/// ([`Engine::walk`]).
const MANY_STARTS: usize = 1024;

/// The slots of [`Engine::candidates`]' last windows.
const SLOTS: usize = 256;

/// `window`'s two slots among [`SLOTS`]: its rule and its hit's 4 KiB, hashed two ways. Two,
/// and the older of them taken for a new window, so that two runs of hits whose slots
/// collide (of six lanes and a dozen rules, some do) do not push each other out at every
/// hit.
fn slots(window: Window) -> [usize; 2] {
    let key = u64::from(window.rule) << 32 | u64::from(window.hit >> 12);
    [0x9E37_79B9_7F4A_7C15u64, 0xC2B2_AE3D_27D4_EB4F].map(|c| (key.wrapping_mul(c) >> 56) as usize)
}

/// Whether `window` overlaps the window `last` holds for its rule, and was joined to it.
fn joined(windows: &mut [Window], last: &[(u32, u32); SLOTS], window: Window) -> bool {
    for s in slots(window) {
        let (rule, at) = last[s];
        if rule != window.rule {
            continue;
        }
        let w = &mut windows[at as usize];
        if window.start <= w.end && w.start <= window.end {
            w.start = w.start.min(window.start);
            w.end = w.end.max(window.end);
            return true;
        }
    }
    false
}

/// Remembers `window`, at index `at` of the windows, in the older of its slots.
fn remember(last: &mut [(u32, u32); SLOTS], window: Window, at: usize) {
    let [a, b] = slots(window);
    let s = if last[a].1 <= last[b].1 { a } else { b };
    last[s] = (window.rule, at as u32);
}

/// `windows` by rule, then start. The order among windows of one rule and start does not
/// matter: they are joined into one, their hits sorted again. A long list (a chunk dense
/// with keywords makes them by the hundred thousand) is put in order of rule by counting,
/// then each rule's part by start with a merging sort: the walk reports hits in order of
/// start within each of its lanes, so a rule's windows are a few runs already in order.
/// Comparison sorting of the whole list was a sixth of a keyword-dense scan.
fn sort_windows(windows: &mut Vec<Window>, rules: usize) {
    if windows.len() < BY_COUNTING {
        windows.sort_unstable_by_key(|w| (u64::from(w.rule) << 32) | u64::from(w.start));
        return;
    }
    let mut at = vec![0usize; rules + 1];
    for w in windows.iter() {
        at[w.rule as usize + 1] += 1;
    }
    for r in 1..at.len() {
        at[r] += at[r - 1];
    }
    let bounds = at.clone();
    let mut sorted = vec![windows[0]; windows.len()];
    for w in windows.iter() {
        let r = w.rule as usize;
        sorted[at[r]] = *w;
        at[r] += 1;
    }
    for r in 0..rules {
        sorted[bounds[r]..bounds[r + 1]].sort_by_key(|w| w.start);
    }
    *windows = sorted;
}

/// The fewest windows put in order by counting: below, one comparison sort is quicker.
const BY_COUNTING: usize = 4096;

/// How many windows ahead of the one confirmed its hit's bytes are asked for.
const PREFETCH: usize = 16;

/// Ask for the cache line of `hay[at]`: a large input's windows are confirmed after the walk
/// over the whole range has moved on, and their bytes come from memory.
#[inline]
fn prefetch(hay: &[u8], at: usize) {
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (hay, at);
    #[cfg(target_arch = "x86_64")]
    if let Some(b) = hay.get(at) {
        // SAFETY: SSE is part of x86_64, and a prefetch reads nothing (the pointer is into
        // `hay` in any case).
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (b as *const u8).cast(),
            )
        };
    }
}

/// The longest span of `ms`.
fn longest(ms: &[Match]) -> usize {
    ms.iter().map(|m| m.end - m.start).max().unwrap_or(0)
}

/// The matches of `ms` (sorted by start, none longer than `longest`) that may reach into
/// `lo..=hi`: one that starts more than `longest` before `lo` ends before it. A bound far
/// tighter than `rules::MAX_WINDOW` where matches are dense (a file of 200k secrets).
fn reaching(ms: &[Match], longest: usize, lo: usize, hi: usize) -> std::ops::Range<usize> {
    ms.partition_point(|o| o.start < lo.saturating_sub(longest))
        ..ms.partition_point(|o| o.start <= hi)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorted by counting or by comparison, a list of windows comes out in the same order of
    /// rule and start, each window kept once: lists on either side of [`BY_COUNTING`], each
    /// made as the walk makes them (runs in order of start, interleaved, rules mixed).
    #[test]
    fn windows_sort_by_rule_then_start_however_many() {
        let mut seed = 7u64;
        let mut next = |n: u32| super::super::below(&mut seed, u64::from(n)) as u32;
        for len in [1, 100, BY_COUNTING - 1, BY_COUNTING, 3 * BY_COUNTING + 17] {
            let mut windows: Vec<Window> = (0..len as u32)
                .map(|i| {
                    let start = (i % 4) * 1_000_000 + i / 4 + next(3);
                    Window {
                        rule: next(40),
                        start,
                        end: start + 10,
                        hit: i,
                        own: next(2) == 0,
                    }
                })
                .collect();
            let key = |w: &Window| (w.rule, w.start, w.hit);
            let mut want: Vec<(u32, u32, u32)> = windows.iter().map(key).collect();
            want.sort_unstable();
            sort_windows(&mut windows, 40);
            let got: Vec<(u32, u32, u32)> = windows.iter().map(key).collect();
            assert!(
                got.windows(2).all(|p| (p[0].0, p[0].1) <= (p[1].0, p[1].1)),
                "{len}"
            );
            let mut again = got.clone();
            again.sort_unstable();
            assert_eq!(again, want, "{len}: the same windows");
        }
    }

    /// Windows joined as they are found cover what they covered apart, and only a rule's
    /// own overlapping windows are joined: hits of one rule from six lanes in turn, a run
    /// of them as a run of `A`s makes, stay a handful of windows.
    #[test]
    fn overlapping_windows_of_a_rule_join_as_they_come() {
        let window = |rule: u32, hit: u32| Window {
            rule,
            start: hit.saturating_sub(100),
            end: hit + 100,
            hit,
            own: true,
        };
        let (mut windows, mut last) = (Vec::new(), [(u32::MAX, 0u32); SLOTS]);
        // Six lanes 1 MB apart, each a run of hits of rule 3, reported in turn; a hit of
        // rule 4 beside each.
        for i in 0..10_000u32 {
            for lane in 0..6u32 {
                for (rule, hit) in [(3, lane * 1_000_000 + i), (4, lane * 1_000_000 + 5 * i)] {
                    let w = window(rule, hit);
                    if !joined(&mut windows, &last, w) {
                        remember(&mut last, w, windows.len());
                        windows.push(w);
                    }
                }
            }
        }
        let covered = |rule: u32| {
            let mut spans: Vec<(u32, u32)> = windows
                .iter()
                .filter(|w| w.rule == rule)
                .map(|w| (w.start, w.end))
                .collect();
            spans.sort_unstable();
            let mut merged: Vec<(u32, u32)> = Vec::new();
            for (s, e) in spans {
                match merged.last_mut() {
                    Some(m) if s <= m.1 => m.1 = m.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            merged
        };
        let want = |step: u32| -> Vec<(u32, u32)> {
            (0..6)
                .map(|lane| {
                    (
                        lane * 1_000_000 - (lane > 0) as u32 * 100,
                        lane * 1_000_000 + step * 9_999 + 100,
                    )
                })
                .collect()
        };
        assert_eq!(covered(3), want(1));
        assert_eq!(covered(4), want(5));
        // A window per 4 KiB of each lane at most, not one per hit.
        assert!(
            windows.len() < 6 * 2 * (50_000 / 4096 + 2),
            "{}",
            windows.len()
        );
        // A window that does not overlap is not joined.
        let far = window(3, 7_000_000);
        assert!(!joined(&mut windows, &last, far));
    }
}
