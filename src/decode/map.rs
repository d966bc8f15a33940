//! Where each byte of a decoded view comes from in the original, kept as runs. A view's
//! bytes mostly come one for one from the bytes they decode (the text between escapes), or
//! one for every two (UTF-16's ASCII), so a run of them is one entry where a table would hold
//! one offset per byte: 8 bytes of map per byte of text, 800 KB to fault in for a hook
//! event's 100 KB of tool output.

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
    /// How far each next index's offset is from the one before: 1 for bytes copied, 2 for
    /// UTF-16's ASCII, 0 for bytes decoded from one place (an escape's).
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
            // A run of one takes its step from its second offset. Only steps of copied text
            // and of UTF-16: a run that jumped over an escape would leave the bytes after it
            // a run of their own, as many runs and one more search.
            if n == 1 && to >= r.to && to - r.to <= 2 {
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
        self.push_steps(to, 1, n);
    }

    /// Appends `n` offsets from `to` on, `step` apart (at most 2, as runs are made): 0 for
    /// `n` bytes decoded from one place.
    fn push_steps(&mut self, to: usize, step: usize, n: usize) {
        // After three pushed the last run is one of `step` ending at the third (the first
        // may have ended a run before it), which the rest continue.
        for k in 0..n.min(3) {
            self.push(to + k * step);
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
            self.push_steps(r.to + (i - r.from) * r.step, r.step, end - i);
            i = end;
            k += 1;
        }
    }

    /// Each of these offsets read as an index of `outer`: the map of a view of a view. The
    /// offsets go up, so one walk along `outer`'s runs reads them, where a search for each
    /// cost a scan of a 14 MB UTF-16 file a second. Panics past `outer`'s end.
    pub fn through(&self, outer: &Map) -> Map {
        let mut k = 0;
        self.iter()
            .map(|i| {
                assert!(i < outer.len, "map index {i} out of {}", outer.len);
                if outer.runs[k].from > i {
                    k = outer.runs.partition_point(|r| r.from <= i) - 1;
                }
                while outer.runs.get(k + 1).is_some_and(|r| r.from <= i) {
                    k += 1;
                }
                let r = outer.runs[k];
                r.to + (i - r.from) * r.step
            })
            .collect()
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
                match next(5) {
                    0 => {
                        map.push_copied(at, n);
                        want.extend(at..at + n);
                        at += n;
                    }
                    1 => {
                        map.push_steps(at, 0, n);
                        want.extend(std::iter::repeat_n(at, n));
                    }
                    2 => {
                        at += n;
                        map.push(at);
                        want.push(at);
                    }
                    3 => {
                        map.push_steps(at, 2, n);
                        want.extend((0..n).map(|k| at + 2 * k));
                        at += 2 * n;
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
            // Read through a map of as many offsets, in order and out of it.
            let outer: Map = (0..at + 3).map(|k| 5 + k / 2 * 3).collect();
            let inner: Map = want.iter().copied().chain([2, 0, at]).collect();
            let through: Vec<usize> = inner.iter().map(|i| outer.get(i)).collect();
            assert_eq!(inner.through(&outer).iter().collect::<Vec<_>>(), through);
            let (mut popped, mut shorter) = (map.clone(), want.clone());
            assert_eq!(popped.pop(), shorter.pop());
            assert_eq!(popped.iter().collect::<Vec<_>>(), shorter);
            popped.push(at + 9);
            shorter.push(at + 9);
            assert_eq!(popped.iter().collect::<Vec<_>>(), shorter);
        }
    }

    /// UTF-16's ASCII, a byte of text for every two, is a run too: a 14 MB UTF-16 file's
    /// view was a run per byte, 24 bytes each, and each view made from it the same.
    #[test]
    fn utf16_ascii_takes_one_run() {
        let m: Map = (0..100_000).map(|k| 2 + 2 * k).collect();
        assert_eq!(m.runs.len(), 1);
        assert_eq!(m.get(99_999), 200_000);
        let mut copy = Map::default();
        copy.extend(&m);
        assert_eq!(copy.runs.len(), 1);
    }

    /// Text copied between escapes is a run, not an offset per byte.
    #[test]
    fn copied_bytes_take_one_run() {
        let mut m = Map::default();
        m.push_copied(10, 1000);
        m.push_steps(1010, 0, 2);
        m.push_copied(1012, 1000);
        assert_eq!(m.runs.len(), 3);
        assert_eq!(m.get(1001), 1010);
        assert_eq!(m.get(1002), 1012);
    }
}
