//! A rule's pattern as a small DFA, walked from a start before the regex searches there
//! (for the rules a scan searches often). Not in `lead`, which `build.rs` includes without
//! the DFA's crate features.

use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_syntax::hir::Hir;

/// A rule's pattern as a small DFA, anchored, walked from a start over at most [`WALK`]
/// bytes: where it dies no match starts. Exact where [`super::lead::Lead`]'s sets are not: after a run
/// of any length (`secret[\w-]{0,16}`) the sets hold every byte the run does, while a dense
/// keyword's hits (`secret`, `token`) are mostly names with no assignment after them.
pub(super) struct Walk {
    dfa: regex_automata::dfa::dense::DFA<Vec<u32>>,
}

/// The most bytes a [`Walk`] reads: past a name and its assignment sign, a value's bytes
/// turn few starts away.
const WALK: usize = 48;

impl Walk {
    /// `None` when the pattern's DFA would be large (a long bound): the sets then decide.
    pub(super) fn of(hir: &Hir) -> Option<Walk> {
        use regex_automata::dfa::{dense, StartKind};
        // Counted past 16 and the DFA counts in states; unbounded, it still goes on wherever
        // the pattern does, so it turns away no start the pattern matches at.
        let hir = crate::rules::facts::without_long_bounds(hir, 16)
            .map_or_else(|| hir.clone(), |(h, _)| h);
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
                    // The generic rules' walks, for which it is built, are under 160 KB
                    // and take under 3 ms; a larger one took up to 45 ms to build or fail.
                    .dfa_size_limit(Some(256 << 10))
                    .determinize_size_limit(Some(1 << 20)),
            )
            .build_from_nfa(&nfa)
            .ok()?;
        Some(Walk { dfa })
    }

    /// Whether a match can start at `at`: false only when the DFA dies within [`WALK`]
    /// bytes, before `end`.
    #[inline]
    pub(super) fn admits(&self, hay: &[u8], at: usize, end: usize) -> bool {
        use regex_automata::dfa::Automaton;
        let input = regex_automata::Input::new(hay)
            .range(at..end)
            .anchored(regex_automata::Anchored::Yes);
        let Ok(mut sid) = self.dfa.start_state_forward(&input) else {
            return true;
        };
        for &b in &hay[at..end.min(at + WALK)] {
            sid = self.dfa.next_state(sid, b);
            if self.dfa.is_special_state(sid) {
                // A match (seen a byte late), or a byte the DFA gives up on: admitted.
                return !self.dfa.is_dead_state(sid);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_automata::{meta, Anchored, Input};

    /// Every built-in rule over its own examples and negatives, and names with no value
    /// after them, at every offset: where its regex matches from there, the walk admits.
    /// It turns away most offsets, and names the sets of the lead let through.
    #[test]
    fn a_walk_turns_away_only_starts_where_nothing_matches() {
        let (mut starts, mut turned) = (0, 0);
        for r in crate::rules::builtin() {
            let hir = crate::rules::facts::parse(&r.pattern).unwrap();
            let Some(walk) = Walk::of(&hir) else {
                continue;
            };
            let re = meta::Builder::new().build_from_hir(&hir).unwrap();
            let mut text = String::new();
            for t in r.examples.iter().chain(&r.negatives) {
                text.push_str(t);
                text.push_str("\nsecret.name(x) token, key ");
            }
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
        let walk = Walk::of(&hir).unwrap();
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
