//! A rule's pattern as a small DFA, walked from a start before the regex searches there
//! (for the rules a scan searches often). Not in `lead`, which `build.rs` includes without
//! the DFA's crate features.

use regex_automata::dfa::dense;
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::primitives::StateID;
use regex_syntax::hir::Hir;

/// A rule's pattern as a small DFA, anchored, walked from a start over at most [`WALK`]
/// bytes: where it dies no match starts. Exact where [`super::lead::Lead`]'s sets are not: after a run
/// of any length (`secret[\w-]{0,16}`) the sets hold every byte the run does, while a dense
/// keyword's hits (`secret`, `token`) are mostly names with no assignment after them.
pub(super) struct Walk {
    /// Each byte's class.
    classes: [u8; 256],
    /// `trans[row + class]`: the next state's row (its index times the number of classes).
    /// The rows of states that end a walk come first: row 0 is the dead state, rows below
    /// `ends` the states that admit (a match, or a byte the DFA gives up on). A quarter to a
    /// half of the DFA's own table (a `u32` a transition, rows padded to a power of two):
    /// walked at each hit of the generic rules' keywords, its loads missed the nearest cache.
    trans: Vec<u16>,
    ends: u16,
    /// The start row after each byte (look-behind: `\b`, `^`), and at the text's start.
    starts: Box<[u16; 257]>,
    /// For each of the rule's keywords (in the order of [`Walk::of`]'s `keywords`), its
    /// length and the row after reading it from each start, in any case: at a hit the
    /// keyword's bytes are known up to case, and they were about half of a generic rule's
    /// walk (`token` in `token_count`, `secret` in `secret_name`). `None` where its
    /// spellings end in different rows.
    after: Vec<Option<(usize, Box<[u16; 257]>)>>,
}

/// The index into [`Walk::starts`] (and a keyword's rows after it) for a walk from `at`: the
/// byte before it, or 256 at the text's start.
#[inline]
fn before(hay: &[u8], at: usize) -> usize {
    at.checked_sub(1).map_or(256, |i| usize::from(hay[i]))
}

/// The most bytes a [`Walk`] reads: past a name and its assignment sign, a value's bytes
/// turn few starts away.
const WALK: usize = 48;

/// The pattern as an anchored dense DFA with no captures, its bounds past 16 counted no more:
/// `None` when it would be large (a long bound).
fn dfa(hir: &Hir) -> Option<dense::DFA<Vec<u32>>> {
    use regex_automata::dfa::StartKind;
    // Counted past 16 and the DFA counts in states; unbounded, it still goes on wherever
    // the pattern does, so it turns away no start the pattern matches at.
    let hir =
        crate::rules::facts::without_long_bounds(hir, 16).map_or_else(|| hir.clone(), |(h, _)| h);
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .which_captures(WhichCaptures::None)
                .utf8(false),
        )
        .build_from_hir(&hir)
        .ok()?;
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .start_kind(StartKind::Anchored)
                .match_kind(regex_automata::MatchKind::All)
                // Its states are copied into a table of its own, which is not accelerated.
                .accelerate(false)
                // The generic rules' walks, for which it is built, are under 160 KB
                // and take under 3 ms; a larger one took up to 45 ms to build or fail.
                .dfa_size_limit(Some(256 << 10))
                .determinize_size_limit(Some(1 << 20)),
        )
        .build_from_nfa(&nfa)
        .ok()?;
    Some(dfa)
}

/// `dfa`'s anchored start state after each byte (look-behind: `\b`, `^`), and at the text's
/// start (index 256): the rows of [`Walk::starts`].
fn start_states(dfa: &dense::DFA<Vec<u32>>) -> Option<Vec<StateID>> {
    use regex_automata::dfa::Automaton;
    use regex_automata::util::start;
    (0..=256)
        .map(|b| {
            let config = start::Config::new()
                .anchored(regex_automata::Anchored::Yes)
                .look_behind(u8::try_from(b).ok());
            dfa.start_state(&config).ok()
        })
        .collect()
}

/// The pattern's parts in sequence, groups opened: `a(?P<secret>b c)d` is `a`, `b`, `c`, `d`.
fn elements(hir: &Hir) -> Vec<Hir> {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Concat(parts) => parts.iter().flat_map(elements).collect(),
        HirKind::Capture(c) => elements(&c.sub),
        _ => vec![hir.clone()],
    }
}

/// Whether whatever `dfa` matches, from any start, begins with one of `keywords` (ASCII
/// case-insensitively): read byte by byte beside the keywords' trie, every way the DFA lives
/// on must reach a whole keyword before it can match, end, or give up.
fn begins_with_keyword(dfa: &dense::DFA<Vec<u32>>, keywords: &[String]) -> bool {
    use regex_automata::dfa::Automaton;
    /// Pairs of a state and a trie node past which the answer is not worth the time.
    const MOST: usize = 1 << 16;
    // The trie: each node's children by lower-case byte, and whether a keyword ends there.
    let mut children: Vec<std::collections::HashMap<u8, usize>> = vec![Default::default()];
    let mut whole = vec![false];
    for k in keywords {
        let mut node = 0;
        for b in k.bytes().map(|b| b.to_ascii_lowercase()) {
            node = match children[node].get(&b) {
                Some(&next) => next,
                None => {
                    let next = children.len();
                    children.push(Default::default());
                    whole.push(false);
                    children[node].insert(b, next);
                    next
                }
            };
        }
        whole[node] = true;
    }
    if whole[0] {
        return false;
    }
    let Some(starts) = start_states(dfa) else {
        return false;
    };
    let mut todo: Vec<(StateID, usize)> = starts.into_iter().map(|sid| (sid, 0)).collect();
    let mut seen = std::collections::HashSet::new();
    while let Some((sid, node)) = todo.pop() {
        if !seen.insert((sid, node)) {
            continue;
        }
        // A match ends before the keyword is whole (seen a byte late, or at the input's end).
        if seen.len() > MOST
            || dfa.is_match_state(sid)
            || dfa.is_match_state(dfa.next_eoi_state(sid))
        {
            return false;
        }
        for b in 0..=255u8 {
            let next = dfa.next_state(sid, b);
            if dfa.is_dead_state(next) {
                continue;
            }
            match children[node].get(&b.to_ascii_lowercase()) {
                _ if dfa.is_quit_state(next) => return false,
                None => return false,
                Some(&n) if whole[n] => {}
                Some(&n) => todo.push((next, n)),
            }
        }
    }
    true
}

impl Walk {
    /// `None` when the pattern's DFA would be large (a long bound): the sets then decide.
    /// `keywords` are the rule's, for [`Walk::admits_after`].
    pub(super) fn of(hir: &Hir, keywords: &[String]) -> Option<Walk> {
        Walk::from_dfa(&dfa(hir)?, keywords)
    }

    /// For a rule whose matches start at no known offset before its keyword (`mailgun` up to
    /// 40 bytes before `key-…`, `(?:^|[^\w])live_…`, `(?:ntn_…|secret_…)`), which is searched
    /// in the whole window around each hit: the walk of the pattern from the element at which
    /// every match holds one of its keywords, taken at the hit. The longest such tail, or
    /// `None` if no element is one (OpenAI's `T3BlbkFJ` stands inside one branch, after a
    /// run). A hit it turns away needs no window: a match's keyword there is itself a hit,
    /// which the walk admits, and whose window holds the whole match.
    pub(super) fn of_tail(hir: &Hir, keywords: &[String]) -> Option<Walk> {
        let parts = elements(hir);
        let firsts: Vec<u8> = keywords
            .iter()
            .filter_map(|k| k.bytes().next())
            .map(|b| b.to_ascii_lowercase())
            .collect();
        (0..parts.len()).find_map(|i| {
            let tail = Hir::concat(parts[i..].to_vec());
            // A DFA is built only for a tail whose first bytes all begin keywords: a few
            // of a pattern's parts, not each (the first tails are the whole pattern's size).
            let lead = super::lead::Lead::of(&tail)?;
            let first = lead.sets().first()?;
            if (0..=255u8).any(|b| {
                first[usize::from(b / 64)] >> (b % 64) & 1 != 0
                    && !firsts.contains(&b.to_ascii_lowercase())
            }) {
                return None;
            }
            let dfa = dfa(&tail)?;
            if begins_with_keyword(&dfa, keywords) {
                Walk::from_dfa(&dfa, keywords)
            } else {
                None
            }
        })
    }

    fn from_dfa(dfa: &dense::DFA<Vec<u32>>, keywords: &[String]) -> Option<Walk> {
        let mut walk = Walk::compact(dfa)?;
        walk.after = keywords.iter().map(|k| walk.read(k.as_bytes())).collect();
        Some(walk)
    }

    /// The row after reading `keyword` from each start, in any case; or the row that ends
    /// the walk inside it. `None` when the spellings of it do not all end in one row (a
    /// case-sensitive branch, `[a-z0-9](?:Pass|PASS)`, may live on for some of them until
    /// the keyword's end), or when it is longer than a walk.
    fn read(&self, keyword: &[u8]) -> Option<(usize, Box<[u16; 257]>)> {
        /// More rows than this at once: the spellings are not converging.
        const SPREAD: usize = 16;
        if keyword.len() > WALK {
            return None;
        }
        let next = |row: u16, b: u8| {
            self.trans[usize::from(row) + usize::from(self.classes[usize::from(b)])]
        };
        let mut after = self.starts.clone();
        for row in after.iter_mut() {
            // The rows the spellings read so far are in, one each.
            let mut rows = vec![*row];
            for &b in keyword {
                if rows.iter().any(|&r| r < self.ends) {
                    // Ended within the keyword: the answer, if all spellings ended there.
                    break;
                }
                let mut then: Vec<u16> = rows
                    .iter()
                    .flat_map(|&r| {
                        [
                            next(r, b.to_ascii_lowercase()),
                            next(r, b.to_ascii_uppercase()),
                        ]
                    })
                    .collect();
                then.sort_unstable();
                then.dedup();
                if then.len() > SPREAD {
                    return None;
                }
                rows = then;
            }
            let [one] = rows[..] else {
                return None;
            };
            *row = one;
        }
        Some((keyword.len(), after))
    }

    /// `dfa`'s states reachable from its anchored starts, in rows of `u16`; `None` when
    /// they do not fit.
    fn compact(dfa: &dense::DFA<Vec<u32>>) -> Option<Walk> {
        use regex_automata::dfa::Automaton;
        let start_ids = start_states(dfa)?;
        let bytes = dfa.byte_classes();
        let width = bytes.alphabet_len() - 1; // the last class is the end of input
        let reps: Vec<u8> = bytes
            .representatives(..)
            .filter_map(|u| u.as_u8())
            .collect();
        // Every state reachable from a start, dead first, then the ones that admit.
        let mut found: Vec<StateID> = Vec::new();
        let mut seen = std::collections::HashMap::new();
        let mut todo = start_ids.clone();
        while let Some(sid) = todo.pop() {
            if seen.insert(sid, 0u16).is_some() {
                continue;
            }
            found.push(sid);
            todo.extend(reps.iter().map(|&b| dfa.next_state(sid, b)));
        }
        let admits = |s: StateID| dfa.is_match_state(s) || dfa.is_quit_state(s);
        found.retain(|&s| !dfa.is_dead_state(s));
        found.sort_by_key(|&s| !admits(s));
        let ends = 1 + found.iter().take_while(|&&s| admits(s)).count();
        let rows = 1 + found.len();
        if rows * width > usize::from(u16::MAX) {
            return None;
        }
        // The dead state, not in `found`, keeps row 0.
        for (i, &s) in found.iter().enumerate() {
            seen.insert(s, ((i + 1) * width) as u16);
        }
        let row = |s: StateID| -> u16 { seen[&s] };
        let mut trans = vec![0u16; rows * width];
        for (i, &s) in found.iter().enumerate() {
            for &b in &reps {
                trans[(i + 1) * width + usize::from(bytes.get(b))] = row(dfa.next_state(s, b));
            }
        }
        let starts = Box::new(std::array::from_fn(|b| row(start_ids[b])));
        Some(Walk {
            classes: std::array::from_fn(|b| bytes.get(b as u8)),
            trans,
            ends: (ends * width) as u16,
            starts,
            after: Vec::new(),
        })
    }

    /// Whether a match can start at `at`: false only when the DFA dies within [`WALK`]
    /// bytes, before `end`.
    #[inline]
    pub(super) fn admits(&self, hay: &[u8], at: usize, end: usize) -> bool {
        self.admits_from(self.starts[before(hay, at)], hay, at, end.min(at + WALK))
    }

    /// [`Walk::admits`] at a hit of the rule's keyword `slot` at `at`, whose bytes are that
    /// keyword's up to case and end by `end`: the walk takes up after it.
    #[inline]
    pub(super) fn admits_after(&self, slot: usize, hay: &[u8], at: usize, end: usize) -> bool {
        match self.after.get(slot) {
            Some(Some((len, after))) if at + len <= end => {
                let row = after[before(hay, at)];
                if row < self.ends {
                    return row != 0;
                }
                self.admits_from(row, hay, at + len, end.min(at + WALK))
            }
            _ => self.admits(hay, at, end),
        }
    }

    /// The walk from `row` over `hay[at..to]`.
    #[inline]
    fn admits_from(&self, mut row: u16, hay: &[u8], at: usize, to: usize) -> bool {
        for &b in hay.get(at..to).unwrap_or_default() {
            row = self.trans[usize::from(row) + usize::from(self.classes[usize::from(b)])];
            if row < self.ends {
                // A match (seen a byte late), or a byte the DFA gives up on: admitted.
                return row != 0;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_automata::{meta, Anchored, Input};

    /// A rule's examples and negatives, each followed by names with no value after them.
    fn examples_text(r: &crate::rules::Rule) -> String {
        let mut text = String::new();
        for t in r.examples.iter().chain(&r.negatives) {
            text.push_str(t);
            text.push_str("\nsecret.name(x) token, key ");
        }
        text
    }

    /// `text` with its ASCII letters' case swapped.
    fn swapped(text: &str) -> String {
        text.chars()
            .map(|c| match c {
                'a'..='z' => c.to_ascii_uppercase(),
                'A'..='Z' => c.to_ascii_lowercase(),
                _ => c,
            })
            .collect()
    }

    /// At every hit of a built-in rule's keyword in its examples and negatives, in their
    /// case and in swapped case, the walk taken up after the keyword answers as the whole
    /// walk does; and it is taken up so at most hits of the generic rules' keywords (all
    /// but the ones that start a match before them, `_pass`).
    #[test]
    fn a_walk_after_its_keyword_is_the_whole_walk() {
        let (mut hits, mut skipped, mut generic) = (0, 0, 0);
        for r in crate::rules::builtin() {
            let hir = crate::rules::facts::parse(&r.pattern).unwrap();
            let Some(walk) = Walk::of(&hir, &r.keywords) else {
                continue;
            };
            let text = examples_text(&r);
            let swapped = swapped(&text);
            for hay in [text.as_bytes(), swapped.as_bytes()] {
                let folded = hay.to_ascii_lowercase();
                for (slot, k) in r.keywords.iter().enumerate() {
                    let k = k.to_ascii_lowercase();
                    for at in memchr::memmem::find_iter(&folded, k.as_bytes()) {
                        assert_eq!(
                            walk.admits_after(slot, hay, at, hay.len()),
                            walk.admits(hay, at, hay.len()),
                            "{}: keyword {k:?} at {at}",
                            r.id
                        );
                        hits += 1;
                        if r.generic {
                            generic += 1;
                            skipped += usize::from(walk.after[slot].is_some());
                        }
                    }
                }
            }
        }
        assert!(
            hits > 1000 && skipped > generic / 2,
            "{skipped} skipped of {generic}"
        );
    }

    /// Every built-in rule searched whole (its matches start at no known offset before the
    /// keyword) over its examples and negatives, in their case and swapped: each match holds a
    /// hit of the rule's keywords at which the walk of its tail admits, and names that hold
    /// the keywords are turned away. The ones the generated corpus hits most have a tail.
    #[test]
    fn a_tail_walk_admits_a_hit_inside_every_match() {
        let (mut tails, mut matches) = (0, 0);
        let mut walked = Vec::new();
        for r in crate::rules::builtin() {
            let hir = crate::rules::facts::parse(&r.pattern).unwrap();
            let lower: Vec<String> = r.keywords.iter().map(|k| k.to_ascii_lowercase()).collect();
            if super::super::anchor::of(&hir, &lower).0.is_some() {
                continue;
            }
            let Some(walk) = Walk::of_tail(&hir, &r.keywords) else {
                continue;
            };
            tails += 1;
            walked.push(r.id.clone());
            // Names that hold the hot ones' keywords, with no token after them.
            let names = b"secret_name = 1; key-name: 2; live_stream(); api-version=3";
            for (slot, k) in lower.iter().enumerate() {
                for at in memchr::memmem::find_iter(names, k.as_bytes()) {
                    assert!(
                        !walk.admits_after(slot, names, at, names.len()),
                        "{}: {k:?} at {at} admitted",
                        r.id
                    );
                }
            }
            let re = meta::Builder::new().build_from_hir(&hir).unwrap();
            let text = examples_text(&r);
            for hay in [text.as_bytes(), swapped(&text).as_bytes()] {
                let folded = hay.to_ascii_lowercase();
                // Each hit's span, and whether the walk admits it.
                let spans: Vec<(usize, usize, bool)> = lower
                    .iter()
                    .enumerate()
                    .flat_map(|(slot, k)| {
                        memchr::memmem::find_iter(&folded, k.as_bytes())
                            .map(|at| {
                                (
                                    at,
                                    at + k.len(),
                                    walk.admits_after(slot, hay, at, hay.len()),
                                )
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect();
                let found: Vec<_> = re.find_iter(hay).collect();
                for m in &found {
                    matches += 1;
                    assert!(
                        spans
                            .iter()
                            .any(|&(s, e, yes)| yes && m.start() <= s && e <= m.end()),
                        "{}: no admitted hit in the match at {}..{}",
                        r.id,
                        m.start(),
                        m.end()
                    );
                }
            }
        }
        assert!(
            tails > 20 && matches > 50,
            "{tails} tails, {matches} matches"
        );
        for id in [
            "notion.token",
            "mailgun.api-key",
            "twitch.stream-key",
            "launchdarkly.key",
        ] {
            assert!(walked.iter().any(|w| w == id), "{id}: no tail walk");
        }
    }

    /// A tail is walked only where it begins with a keyword: not where the keyword can stand
    /// anywhere in a run, nor where a match can end before the keyword does.
    #[test]
    fn a_tail_is_taken_only_where_every_match_holds_the_keyword_there() {
        let tail = |pattern: &str, keywords: &[&str]| {
            let hir = crate::rules::facts::parse(pattern).unwrap();
            let keywords: Vec<String> = keywords.iter().map(|k| k.to_string()).collect();
            Walk::of_tail(&hir, &keywords)
        };
        let walk = tail(
            r"(?i:mailgun)[\s\S]{0,40}?\b(?P<secret>key-[0-9a-f]{32})\b",
            &["key-"],
        )
        .expect("the secret begins with the keyword");
        let hay = b"mailgun key-name: key-0123456789abcdef0123456789abcdef";
        assert!(!walk.admits_after(0, hay, 8, hay.len()));
        assert!(walk.admits_after(0, hay, 18, hay.len()));
        // With the name for its keyword, the whole pattern is the tail; a keyword inside an
        // element (`ey-` in `key-`) begins none.
        assert!(tail(r"(?i:mailgun)[\s\S]{0,40}key-[0-9a-f]{32}", &["mailgun"]).is_some());
        assert!(tail(r"[a-z]{0,8}key-[0-9a-f]{32}", &["ey-"]).is_none());
        // A match may end before the keyword is whole (`ke`), or never hold it (`kex`).
        assert!(tail(r"x(?:ke|key-[0-9]{4})", &["key-"]).is_none());
        assert!(tail(r"x(?:kex|key-)[0-9]{4}", &["key-"]).is_none());
        assert!(tail(r"x(?:KEY-|key-)[0-9]{4}", &["key-"]).is_some());
    }

    /// Every built-in rule over its own examples and negatives, and names with no value
    /// after them, at every offset: where its regex matches from there, the walk admits.
    /// It turns away most offsets, and names the sets of the lead let through.
    #[test]
    fn a_walk_turns_away_only_starts_where_nothing_matches() {
        let (mut starts, mut turned) = (0, 0);
        for r in crate::rules::builtin() {
            let hir = crate::rules::facts::parse(&r.pattern).unwrap();
            let Some(walk) = Walk::of(&hir, &r.keywords) else {
                // The rules walked most, at every name that holds their keyword.
                assert!(!r.id.starts_with("generic."), "{}: no walk", r.id);
                continue;
            };
            let re = meta::Builder::new().build_from_hir(&hir).unwrap();
            let text = examples_text(&r);
            let hay = text.as_bytes();
            for at in 0..=hay.len() {
                let input = Input::new(hay).range(at..).anchored(Anchored::Yes);
                let admitted = walk.admits(hay, at, hay.len());
                assert!(
                    admitted || re.search(&input).is_none(),
                    "{}: a match at {at} turned away",
                    r.id
                );
                starts += 1;
                turned += usize::from(!admitted);
            }
        }
        assert!(turned > starts / 2, "{turned} of {starts}");
        // After a run of any length the lead's sets hold every byte of the run; the walk
        // knows that a name needs its assignment.
        let hir = crate::rules::facts::parse(
            r#"(?i:secret)[\w\-]{0,16}[\t ]{0,4}[:=][\t ]{0,4}(?P<secret>[^\s"']{6,})"#,
        )
        .unwrap();
        let walk = Walk::of(&hir, &[]).unwrap();
        let lead = super::super::lead::Lead::of(&hir).unwrap();
        for (text, admitted) in [
            ("secret_name.x(y)", false),
            ("secret_key, other", false),
            ("secret_key = abcdefgh", true),
            ("secret:x", true),
        ] {
            assert!(lead.admits(text.as_bytes(), 0, text.len()), "{text}");
            assert_eq!(
                walk.admits(text.as_bytes(), 0, text.len()),
                admitted,
                "{text}"
            );
        }
    }
}
