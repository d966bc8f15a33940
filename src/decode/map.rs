//! Where each byte of a decoded view comes from in the original, kept as runs. A view's
//! bytes mostly come one for one from the bytes they decode (the text between escapes), so
//! a run of them is one entry where a table would hold one offset per byte: 8 bytes of map
//! per byte of text, 800 KB to fault in for a hook event's 100 KB of tool output.

/// The offsets, in order: offset `i` is where view byte `i` starts in the original, and a
/// view keeps one more, the original end. Built by [`Map::push`], which folds each offset
/// into the last run where it continues it.
#[derive(Debug, Clone, Default)]
pub struct Map {
    runs: Vec<Run>,
    len: usize,
}

#[derive(Debug, Clone, Copy)]
struct Run {
    /// The first index the run holds.
    from: usize,
    /// That index's offset.
    to: usize,
    /// How far each next index's offset is from the one before: 1 for bytes copied, 0 for
    /// bytes decoded from one place (an escape's).
    step: usize,
}

impl Map {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends offset `to`.
    pub fn push(&mut self, to: usize) {
        if let Some(r) = self.runs.last_mut() {
            let n = self.len - r.from;
            // A run of one takes its step from its second offset.
            if n == 1 && (to == r.to || to == r.to + 1) {
                r.step = to - r.to;
                self.len += 1;
                return;
            }
            if n > 1 && to == r.to + n * r.step {
                self.len += 1;
                return;
            }
        }
        self.runs.push(Run {
            from: self.len,
            to,
            step: 0,
        });
        self.len += 1;
    }

    /// Appends `n` offsets from `to` on, one byte apart: `n` bytes copied from `to`.
    pub fn push_copied(&mut self, to: usize, n: usize) {
        // After three in a row the last run is one of step 1 ending at the third, which the
        // rest continue.
        for k in 0..n.min(3) {
            self.push(to + k);
        }
        self.len += n.saturating_sub(3);
    }

    /// Appends offset `to`, `n` times.
    fn push_same(&mut self, to: usize, n: usize) {
        // After three the same the last run is one of step 0 ending at `to`.
        for _ in 0..n.min(3) {
            self.push(to);
        }
        self.len += n.saturating_sub(3);
    }

    /// Offset `i`. Panics past the end, as indexing a slice does.
    pub fn get(&self, i: usize) -> usize {
        assert!(i < self.len, "map index {i} out of {}", self.len);
        let r = self.runs[self.runs.partition_point(|r| r.from <= i) - 1];
        r.to + (i - r.from) * r.step
    }

    pub fn last(&self) -> Option<usize> {
        self.len.checked_sub(1).map(|i| self.get(i))
    }

    pub fn pop(&mut self) -> Option<usize> {
        let last = self.last()?;
        self.len -= 1;
        if self.runs.last().is_some_and(|r| r.from == self.len) {
            self.runs.pop();
        }
        Some(last)
    }

    /// Appends every offset of `other`.
    pub fn extend(&mut self, other: &Map) {
        self.extend_from(other, 0, other.len);
    }

    /// Appends offsets `s..e` of `other`, a run at a time: one search for the first, where
    /// [`Map::get`] for each would search again for every byte. Panics past the end.
    pub fn extend_from(&mut self, other: &Map, s: usize, e: usize) {
        assert!(
            s <= e && e <= other.len,
            "map range {s}..{e} out of {}",
            other.len
        );
        if s == e {
            return;
        }
        let mut k = other.runs.partition_point(|r| r.from <= s) - 1;
        let mut i = s;
        while i < e {
            let r = other.runs[k];
            let end = other
                .runs
                .get(k + 1)
                .map_or(other.len, |next| next.from)
                .min(e);
            let to = r.to + (i - r.from) * r.step;
            match r.step {
                1 => self.push_copied(to, end - i),
                _ => self.push_same(to, end - i),
            }
            i = end;
            k += 1;
        }
    }

    /// The first index whose offset `pred` is false for, the offsets being ordered by it
    /// (as [`slice::partition_point`]).
    pub fn partition_point(&self, pred: impl Fn(usize) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.runs_with_len()
            .flat_map(|(r, n)| (0..n).map(move |k| r.to + k * r.step))
    }

    fn runs_with_len(&self) -> impl Iterator<Item = (Run, usize)> + '_ {
        self.runs.iter().enumerate().map(|(k, r)| {
            let end = self.runs.get(k + 1).map_or(self.len, |next| next.from);
            (*r, end - r.from)
        })
    }
}

/// Two maps are equal when they hold the same offsets, however their runs fell.
impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for Map {}

impl FromIterator<usize> for Map {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Map {
        let mut m = Map::default();
        for to in iter {
            m.push(to);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way of building a map gives the offsets pushed, read back by index, in order,
    /// and by search: on sequences mixing copied runs, repeats and jumps.
    #[test]
    fn a_map_holds_what_was_pushed() {
        let mut rng = 0x9e3779b97f4a7c15u64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        for _ in 0..500 {
            let (mut want, mut map, mut at) = (Vec::new(), Map::default(), 0usize);
            for _ in 0..next(12) {
                let n = next(6) as usize;
                match next(4) {
                    0 => {
                        map.push_copied(at, n);
                        want.extend(at..at + n);
                        at += n;
                    }
                    1 => {
                        map.push_same(at, n);
                        want.extend(std::iter::repeat_n(at, n));
                    }
                    2 => {
                        at += n;
                        map.push(at);
                        want.push(at);
                    }
                    _ => {
                        let other: Map = (at..at + n).chain([at + n + 2]).collect();
                        map.extend(&other);
                        want.extend(other.iter());
                        at += n + 2;
                    }
                }
            }
            assert_eq!(map.len(), want.len());
            assert_eq!(map.iter().collect::<Vec<_>>(), want);
            for (i, &w) in want.iter().enumerate() {
                assert_eq!(map.get(i), w);
            }
            for x in 0..at + 2 {
                assert_eq!(
                    map.partition_point(|m| m < x),
                    want.partition_point(|&m| m < x)
                );
            }
            for _ in 0..8 {
                let s = next(want.len() as u64 + 1) as usize;
                let e = s + next((want.len() - s) as u64 + 1) as usize;
                let mut part: Map = [7].into_iter().collect();
                part.extend_from(&map, s, e);
                let got = part.iter().collect::<Vec<_>>();
                assert_eq!(got[0], 7);
                assert_eq!(got[1..], want[s..e]);
                assert_eq!(part.len(), 1 + e - s);
            }
            let (mut popped, mut shorter) = (map.clone(), want.clone());
            assert_eq!(popped.pop(), shorter.pop());
            assert_eq!(popped.iter().collect::<Vec<_>>(), shorter);
            popped.push(at + 9);
            shorter.push(at + 9);
            assert_eq!(popped.iter().collect::<Vec<_>>(), shorter);
        }
    }

    /// Text copied between escapes is a run, not an offset per byte.
    #[test]
    fn copied_bytes_take_one_run() {
        let mut m = Map::default();
        m.push_copied(10, 1000);
        m.push_same(1010, 2);
        m.push_copied(1012, 1000);
        assert_eq!(m.runs.len(), 3);
        assert_eq!(m.get(1001), 1010);
        assert_eq!(m.get(1002), 1012);
    }
}
