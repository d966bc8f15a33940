//! Masking by value: the secrets seen so far in a run, a stream, an event or a document, each
//! masked wherever it appears, not only where a rule found it. A key named once
//! (`AWS_SECRET_ACCESS_KEY=…`) and repeated bare (`saved secret …`) is masked both times.

use aho_corasick::{AhoCorasick, MatchKind};
use std::collections::HashMap;

/// Values shorter than this are masked only where a rule finds them: a four-letter password
/// masked wherever it appears would garble ordinary words, and shows no five-character piece.
pub const MIN_VALUE: usize = 5;

/// A prefix at least this long, at the very end of what has arrived, is held (and masked at
/// the end of a stream) when a known value could continue it.
pub const MIN_PREFIX: usize = 4;

/// Secret values and the rule that named each. No `Debug` of the values: it prints counts.
#[derive(Default)]
pub struct Known {
    /// Each value once, with the index of the rule that first found it.
    values: Vec<(Box<[u8]>, usize)>,
    index: HashMap<Box<[u8]>, usize, FastHash>,
    /// Values by their first and by their last [`MIN_PREFIX`] bytes: where a piece cut off
    /// at an edge is looked up, in time independent of how many values there are.
    /// Looked up once per byte of a context's edges, for every finding of a run: with the
    /// default SipHash these lookups were most of a scan's single-threaded end.
    heads: HashMap<[u8; MIN_PREFIX], Vec<usize>, FastHash>,
    tails: HashMap<[u8; MIN_PREFIX], Vec<usize>, FastHash>,
    /// Automata over the values, each over a run of them, the runs' sizes decreasing: a
    /// value added is searched for in an automaton of its own at the next search, and two
    /// neighbouring automata of equal size are rebuilt as one (a binary counter). A stream
    /// that learns a few values at every flush so rebuilds each value a logarithmic number of
    /// times, not once per flush, and a search runs through at most log2(values) automata.
    tiers: Vec<Tier>,
    longest: usize,
}

/// Each automaton holds the values' first [`HEAD`] bytes only, each distinct head once: a
/// hit is confirmed against the whole values with that head. Building over whole values cost
/// more than the rest of a scan of 200k secrets (states, and memory, grow with every byte of
/// every value); the heads hold a fifth of the bytes, and a confirmation is one comparison.
const HEAD: usize = 8;

/// A quick hasher, seeded per process: values and their edges are looked up by the hundred
/// thousand at the end of a run, on one thread.
type FastHash = foldhash::fast::RandomState;

/// One automaton and the values (`values[from..to]`) it holds; `None` if it could not be
/// built (a size limit): those values are then searched for one by one.
struct Tier {
    from: usize,
    to: usize,
    automaton: Option<Heads>,
    built: bool,
}

/// An automaton over distinct heads, and for each head (by pattern id) the values that begin
/// with it.
struct Heads {
    automaton: AhoCorasick,
    values: Vec<Vec<usize>>,
}

impl Heads {
    fn build(values: &[(Box<[u8]>, usize)], from: usize) -> Option<Heads> {
        let mut ids: HashMap<&[u8], usize, FastHash> = HashMap::default();
        let mut heads: Vec<&[u8]> = Vec::new();
        let mut by_head: Vec<Vec<usize>> = Vec::new();
        for (i, (v, _)) in values.iter().enumerate() {
            let head = &v[..v.len().min(HEAD)];
            let id = *ids.entry(head).or_insert_with(|| {
                heads.push(head);
                by_head.push(Vec::new());
                heads.len() - 1
            });
            by_head[id].push(from + i);
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(heads)
            .ok()?;
        Some(Heads {
            automaton,
            values: by_head,
        })
    }
}

impl std::fmt::Debug for Known {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Known({} values)", self.values.len())
    }
}

/// One occurrence of a known value: its span and the rule that found the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrence {
    pub start: usize,
    pub end: usize,
    pub rule: usize,
}

impl Known {
    pub fn new() -> Known {
        Known::default()
    }

    /// A `Known` with room for `n` values: a run's end adds tens of thousands at once.
    pub fn with_capacity(n: usize) -> Known {
        let mut k = Known::default();
        k.values.reserve(n);
        k.index.reserve(n);
        k.heads.reserve(n);
        k.tails.reserve(n);
        k
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Remember `value`, found by `rule`. Returns whether it was new. Values shorter than
    /// [`MIN_VALUE`] (after trimming the whitespace a decoded view may carry) are not kept.
    pub fn add(&mut self, value: &[u8], rule: usize) -> bool {
        let value = value.trim_ascii();
        if value.len() < MIN_VALUE || self.index.contains_key(value) {
            return false;
        }
        let i = self.values.len();
        self.index.insert(value.into(), i);
        self.heads
            .entry(four(&value[..MIN_PREFIX]))
            .or_default()
            .push(i);
        self.tails
            .entry(four(&value[value.len() - MIN_PREFIX..]))
            .or_default()
            .push(i);
        self.values.push((value.into(), rule));
        self.longest = self.longest.max(value.len());
        true
    }

    /// Remember every value of `found` (as `Detection::values` lists them).
    pub fn learn<'a>(&mut self, found: impl IntoIterator<Item = (&'a [u8], usize)>) {
        for (v, rule) in found {
            self.add(v, rule);
        }
    }

    /// The longest value: no occurrence is longer.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// Every occurrence of every value in `hay`, overlapping ones too, by start.
    pub fn find(&mut self, hay: &[u8]) -> Vec<Occurrence> {
        self.index();
        self.find_indexed(hay)
    }

    /// [`Known::find`] without indexing first, so that many threads can search at once:
    /// only the values added before the last [`Known::index`] are looked for.
    pub fn find_indexed(&self, hay: &[u8]) -> Vec<Occurrence> {
        if self.values.is_empty() || hay.len() < MIN_VALUE {
            return Vec::new();
        }
        let mut out = Vec::new();
        for t in &self.tiers {
            let at = |start: usize, end: usize, i: usize| Occurrence {
                start,
                end,
                rule: self.values[i].1,
            };
            match &t.automaton {
                Some(heads) => {
                    for m in heads.automaton.find_overlapping_iter(hay) {
                        let s = m.start();
                        for &i in &heads.values[m.pattern().as_usize()] {
                            let v = &self.values[i].0;
                            if hay[s..].starts_with(v) {
                                out.push(at(s, s + v.len(), i));
                            }
                        }
                    }
                }
                None => {
                    for i in t.from..t.to {
                        let v = &self.values[i].0;
                        out.extend(
                            memchr::memmem::find_iter(hay, &v[..]).map(|s| at(s, s + v.len(), i)),
                        );
                    }
                }
            }
        }
        out.sort_by_key(|o| (o.start, std::cmp::Reverse(o.end)));
        out
    }

    /// Put the values added since the last search into the tiers.
    pub fn index(&mut self) {
        let indexed = self.tiers.last().map_or(0, |t| t.to);
        if indexed == self.values.len() {
            return;
        }
        self.tiers.push(Tier {
            from: indexed,
            to: self.values.len(),
            automaton: None,
            built: false,
        });
        // Merge while the newest run is as large as the one before it.
        while self.tiers.len() >= 2 {
            let n = self.tiers.len();
            let (a, b) = (&self.tiers[n - 2], &self.tiers[n - 1]);
            if b.to - b.from < a.to - a.from {
                break;
            }
            let merged = Tier {
                from: a.from,
                to: b.to,
                automaton: None,
                built: false,
            };
            self.tiers.truncate(n - 2);
            self.tiers.push(merged);
        }
        for t in self.tiers.iter_mut().filter(|t| !t.built) {
            t.built = true;
            t.automaton = Heads::build(&self.values[t.from..t.to], t.from);
        }
    }

    /// Where a piece of a known value at the very end of `hay` begins: the earliest start
    /// of a suffix of `hay`, at least [`MIN_PREFIX`] long, that some value begins with (and
    /// is longer than), with that value's rule. What a stream must hold until more arrives,
    /// and mask if nothing does.
    pub fn prefix_at_end(&self, hay: &[u8]) -> Option<(usize, usize)> {
        let n = hay.len();
        let most = self.longest.saturating_sub(1).min(n);
        // Longest piece first: the earliest start wins.
        for k in (MIN_PREFIX..=most).rev() {
            let piece = &hay[n - k..];
            let Some(candidates) = self.heads.get(&four(&piece[..MIN_PREFIX])) else {
                continue;
            };
            if let Some(&i) = candidates.iter().find(|&&i| {
                let v = &self.values[i].0;
                v.len() > k && v[..k] == *piece
            }) {
                return Some((n - k, self.values[i].1));
            }
        }
        None
    }

    /// Pieces of known values cut off at either edge of `text` (a context clipped from a
    /// longer line): the span at each end that is the end (at the start) or the beginning
    /// (at the end) of a value, at least [`MIN_PREFIX`] long.
    pub fn pieces_at_edges(&self, text: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        if let Some((start, _)) = self.prefix_at_end(text) {
            out.push((start, text.len()));
        }
        let most = self.longest.saturating_sub(1).min(text.len());
        for k in (MIN_PREFIX..=most).rev() {
            let piece = &text[..k];
            let Some(candidates) = self.tails.get(&four(&piece[k - MIN_PREFIX..])) else {
                continue;
            };
            if candidates.iter().any(|&i| {
                let v = &self.values[i].0;
                v.len() > k && v[v.len() - k..] == *piece
            }) {
                out.push((0, k));
                break;
            }
        }
        out
    }
}

fn four(b: &[u8]) -> [u8; MIN_PREFIX] {
    let mut k = [0; MIN_PREFIX];
    k.copy_from_slice(&b[..MIN_PREFIX]);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_of_a_value_is_found() {
        let mut k = Known::new();
        assert!(k.add(b"s3cr3tV4lue", 3));
        assert!(!k.add(b" s3cr3tV4lue\n", 4), "the same value, trimmed");
        assert!(!k.add(b"abcd", 1), "too short to mask by value");
        let hay = b"x=s3cr3tV4lue; again s3cr3tV4lue.";
        let found = k.find(hay);
        assert_eq!(found.len(), 2);
        assert_eq!(&hay[found[1].start..found[1].end], b"s3cr3tV4lue");
        assert_eq!(found[0].rule, 3);
    }

    /// Values that share their first bytes (one automaton pattern) are each confirmed whole,
    /// a value inside a longer one included.
    #[test]
    fn values_sharing_a_head_are_each_found() {
        let mut k = Known::new();
        k.add(b"AAAAbbbbCCCC1", 1);
        k.add(b"AAAAbbbbCCCC1DD", 2);
        k.add(b"AAAAbbbbXYZ", 3);
        let hay = b"-AAAAbbbbCCCC1DD- AAAAbbbbXYZ AAAAbbbbQQQ";
        let found: Vec<(usize, usize, usize)> = k
            .find(hay)
            .iter()
            .map(|o| (o.start, o.end, o.rule))
            .collect();
        assert_eq!(found, vec![(1, 16, 2), (1, 14, 1), (18, 29, 3)]);
    }

    #[test]
    fn a_value_cut_off_at_the_end_is_a_prefix() {
        let mut k = Known::new();
        k.add(b"ghp_abcdefgh", 0);
        assert_eq!(k.prefix_at_end(b"token: ghp_ab"), Some((7, 0)));
        assert_eq!(
            k.prefix_at_end(b"token: gh"),
            None,
            "shorter than MIN_PREFIX"
        );
        assert_eq!(
            k.prefix_at_end(b"token: ghp_abcdefgh"),
            None,
            "whole, not a prefix"
        );
        assert_eq!(
            k.pieces_at_edges(b"defgh and ghp_abc"),
            vec![(10, 17), (0, 5)]
        );
    }
}
