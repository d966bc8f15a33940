//! What a match must hold in its first bytes, read from its pattern: for each position from
//! a match's start, the bytes that can be there. An anchored search at a keyword hit
//! ([`super::anchor`]) that cannot match fails after reading a few bytes, but each search
//! still pays the regex's set-up (a cache, a start state), and dense keywords (`key=`,
//! `secret`, `token`) start millions of them on a source tree, most on text like
//! `key: this.name(`. A look at a few bytes against these sets turns most away first.
//!
//! Exact: the sets are read from the pattern's own NFA, every path from its anchored start,
//! look-around assertions (`\b`, `$`) taken as always true, so they hold every byte a match
//! can hold there (more, never fewer), and they stop at the first position a match can end.
//! The one assertion taken at its word is `^` of the whole text (`(?:^|[^\w])ghp_…`): its
//! paths are left out, and a match at the text's first byte is always admitted. Taken as
//! true, it let the keyword's own bytes start a match anywhere (`xghp_…`), as if every hit
//! were at the text's start.

use regex_automata::nfa::thompson::{self, State, WhichCaptures, NFA};
use regex_automata::util::{look::Look, primitives::StateID};
use regex_syntax::hir::Hir;

/// The most positions read: past a keyword and its assignment sign the sets are wide.
const MAX_LEAD: usize = 24;

/// The bytes a match of one pattern can hold at each of its first positions, from its
/// start; every match is at least as long as there are positions.
pub(super) struct Lead {
    sets: Box<[[u64; 4]]>,
}

impl Lead {
    /// The lead of `hir`'s matches; `None` when it says nothing (a match can be empty, or
    /// every byte can come first).
    pub(super) fn of(hir: &Hir) -> Option<Lead> {
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .which_captures(WhichCaptures::None)
                    .utf8(false),
            )
            .build_from_hir(hir)
            .ok()?;
        let mut seen = vec![false; nfa.states().len()];
        let mut now = Vec::new();
        closure(&nfa, nfa.start_anchored(), &mut seen, &mut now);
        let mut sets = Vec::new();
        while sets.len() < MAX_LEAD {
            if now
                .iter()
                .any(|&s| matches!(nfa.state(s), State::Match { .. }))
            {
                break;
            }
            let mut set = [0u64; 4];
            let mut next = Vec::new();
            let mut add = |b: u8| set[usize::from(b / 64)] |= 1 << (b % 64);
            for &s in &now {
                match nfa.state(s) {
                    State::ByteRange { trans } => {
                        (trans.start..=trans.end).for_each(&mut add);
                        next.push(trans.next);
                    }
                    State::Sparse(t) => {
                        for trans in t.transitions.iter() {
                            (trans.start..=trans.end).for_each(&mut add);
                            next.push(trans.next);
                        }
                    }
                    State::Dense(t) => {
                        for b in 0..=255u8 {
                            if let Some(n) = t.matches_byte(b) {
                                add(b);
                                next.push(n);
                            }
                        }
                    }
                    _ => {}
                }
            }
            sets.push(set);
            seen.iter_mut().for_each(|s| *s = false);
            now.clear();
            for n in next {
                closure(&nfa, n, &mut seen, &mut now);
            }
            if now.is_empty() {
                // No match goes on from here: the sets so far already turn every start away.
                break;
            }
        }
        // A position where any byte can be says nothing.
        while sets
            .last()
            .is_some_and(|s| s.iter().all(|&w| w == u64::MAX))
        {
            sets.pop();
        }
        (!sets.is_empty()).then(|| Lead {
            sets: sets.into_boxed_slice(),
        })
    }

    /// The sets, one per position from a match's start (for `build.rs`'s table).
    #[allow(dead_code)] // build.rs and the tests only
    pub(super) fn sets(&self) -> &[[u64; 4]] {
        &self.sets
    }

    /// A lead of `sets` as [`Lead::sets`] gave them; `None` for no sets (a lead that says
    /// nothing).
    pub(super) fn from_sets(sets: Vec<[u64; 4]>) -> Option<Lead> {
        (!sets.is_empty()).then(|| Lead {
            sets: sets.into_boxed_slice(),
        })
    }

    /// Whether a match of the pattern can start at `at` and end by `end` in `hay`: false
    /// when there are too few bytes for one, or a byte no match holds there.
    #[inline]
    pub(super) fn admits(&self, hay: &[u8], at: usize, end: usize) -> bool {
        if at == 0 {
            // Where `^` holds: its paths are not in the sets.
            return true;
        }
        let Some(bytes) = hay.get(at..at + self.sets.len()) else {
            return false;
        };
        at + self.sets.len() <= end
            && self
                .sets
                .iter()
                .zip(bytes)
                .all(|(set, &b)| set[usize::from(b / 64)] & (1 << (b % 64)) != 0)
    }
}

/// Add `id` and every state it reaches without reading a byte to `out`, once each.
fn closure(nfa: &NFA, id: StateID, seen: &mut [bool], out: &mut Vec<StateID>) {
    let mut stack = vec![id];
    while let Some(s) = stack.pop() {
        if std::mem::replace(&mut seen[s.as_usize()], true) {
            continue;
        }
        out.push(s);
        match nfa.state(s) {
            // `^` holds only at the text's first byte, which `admits` takes as it is.
            State::Look {
                look: Look::Start, ..
            } => {}
            State::Look { next, .. } | State::Capture { next, .. } => stack.push(*next),
            State::Union { alternates } => stack.extend(alternates.iter().rev()),
            State::BinaryUnion { alt1, alt2 } => stack.extend([*alt2, *alt1]),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lead(pattern: &str) -> Option<Lead> {
        let hir = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap();
        Lead::of(&hir)
    }

    /// Every start a lead turns away is one where the regex finds no match, and every match
    /// is at a start it admits: over every start of a text that holds matches and near
    /// misses.
    #[test]
    fn a_lead_turns_away_only_starts_where_nothing_matches() {
        let patterns = [
            r#"(?i:key)(?:["']\]?|\])?[ ]?(?:=>?|:=?)[\t ]{0,4}["'`]?(?P<secret>[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}|[A-Za-z0-9+/][A-Za-z0-9+/=.:]{15,511})(?:["'`\s<,;]|$)"#,
            r"\bghp_[0-9A-Za-z]{36}\b",
            r"(?i:secret|token)[\w\-]{0,16}\s*[:=]\s*(?P<secret>\S{6,})",
            r"a|b",
            r"(?:^|[^A-Za-z0-9+/%])(?P<secret>AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{80,100})",
            r"^ghp_[0-9A-Za-z]{4}|\bghp_[0-9A-Za-z]{36}",
        ];
        let text = "key: this.name(x)\nKey = 6d1f932cdfdfd464ac51da3caa29cc20\nkey=>'abc'\n\
                    API_KEY = \"f71f79c1-bd0d-48cf-b72c-bc39762a24f4\"\nkey:\t\t`abcdefgh/+ijklmnop`\n\
                    ghp_0123456789abcdefghij0123456789abcdef ghp_short secret_x = hunter2!!\n\
                    token:abc token = $VALUE_LONG key ";
        // A run of `A`s, and a Twitter bearer token (fake) after it.
        let text = format!(
            "{text}{}\n{}QJEmSGSAAAAAAABgfKyOdTGDbuV4Bd44WuTs2pndV%3DXePIbU1JmLjPbUaGumrTiGUb\
             OZhVq0Zjp9c9qVum",
            "A".repeat(130),
            "A".repeat(21)
        );
        let hay = text.as_bytes();
        for p in patterns {
            let re = regex_automata::meta::Builder::new()
                .syntax(
                    regex_automata::util::syntax::Config::new()
                        .unicode(false)
                        .utf8(false),
                )
                .build(p)
                .unwrap();
            let Some(lead) = lead(p) else { continue };
            let mut turned = 0;
            for at in 0..=hay.len() {
                let input = regex_automata::Input::new(hay)
                    .range(at..hay.len())
                    .anchored(regex_automata::Anchored::Yes);
                let found = re.find(input).is_some();
                let admitted = lead.admits(hay, at, hay.len());
                assert!(admitted || !found, "{p}: a match at {at} turned away");
                turned += usize::from(!admitted);
            }
            assert!(turned > hay.len() / 2, "{p}: {turned}");
        }
        // `^` holds at the first byte only: text that starts with a match is admitted there,
        // and the rest of a run of `A`s is not.
        let twitter = lead(patterns[4]).unwrap();
        let run = [b'A'; 200];
        assert!(twitter.admits(&run, 0, run.len()));
        assert!((1..100).all(|at| !twitter.admits(&run, at, run.len())));
        // Nothing to say: a match can be empty, or be any byte.
        assert!(lead(r"x*").is_none() && lead(r"(?s:.)").is_none());
    }
}
