//! Every occurrence of every keyword, ASCII case-insensitively, by a shift-or filter over
//! pairs of bytes (after Hyperscan's FDR, its matcher for thousands of literals), each
//! candidate then compared with the keywords it may be.
//!
//! The keywords are split into [`BUCKETS`] buckets by length ([`split`]). A keyword is read
//! by its last eight bytes at most, right-aligned in an eight-byte window (a shorter one
//! leaves the window's first positions free). One table, indexed by the byte before a
//! position and the low five bits of the byte at it (either case of a letter set alike),
//! gives a 64-bit mask: bit `8 * (7 - i) + b` is clear when some keyword of bucket `b` has
//! that pair at window position `i` (its first byte with any byte before it). The state,
//! shifted a byte right and or-ed with each position's mask, has bit `b` clear where every
//! position of some window of bucket `b` allowed the bytes seen: a candidate end for that
//! bucket, which [`Fdr::confirm`] compares with the bucket's keywords. The loop is a load
//! and a shift-or per byte from a 64 KB table, eight positions a step with no chain between
//! them, where the keyword DFA walks a ~1.8 MB table one dependent load after another.

/// Buckets of keywords: bits of a state byte.
const BUCKETS: usize = 8;
/// Bits of the table's index: the byte before a position and the low bits of the byte at
/// it (low five bits: the same for both cases of a letter).
const DOMAIN_BITS: u32 = 13;
const DOMAIN: usize = 1 << DOMAIN_BITS;

pub(super) struct Fdr {
    masks: Vec<u64>,
    /// The state before the first byte: only the free positions of short keywords' windows
    /// are allowed, so nothing that starts before the range is a candidate.
    init: u64,
    buckets: [Bucket; BUCKETS],
    /// The keywords, lowercase, end to end: keyword `k` is `text[at[k]..at[k + 1]]`.
    text: Vec<u8>,
    at: Vec<u32>,
}

#[derive(Default)]
struct Bucket {
    /// How many bytes before a candidate end are hashed: the bucket's shortest keyword, at
    /// most eight.
    hashed: usize,
    /// log2 of the hash table's size.
    bits: u32,
    /// Keywords whose last `hashed` bytes hash to `h`: `ids[slots[h]..slots[h + 1]]`.
    slots: Vec<u32>,
    /// Each keyword with its last eight bytes at most, lowercase ([`tail`]).
    ids: Vec<(u64, u32)>,
}

/// The table's index for a byte and the one before it, `pair` as a little-endian word.
#[inline]
fn domain(pair: u16) -> usize {
    usize::from(pair) & (DOMAIN - 1)
}

#[inline]
fn hash(x: u64, bits: u32) -> usize {
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// The last `n` (at most 8) bytes of `bytes`, lowercase, in one word.
#[inline]
fn tail(bytes: &[u8], n: usize) -> u64 {
    bytes[bytes.len() - n..]
        .iter()
        .fold(0, |x, &b| x << 8 | u64::from(b.to_ascii_lowercase()))
}

impl Fdr {
    /// The filter for `keywords` (each non-empty), matched ASCII case-insensitively.
    pub(super) fn new(keywords: &[String]) -> Fdr {
        let mut text = Vec::new();
        let mut at = vec![0u32];
        for k in keywords {
            text.extend(k.bytes().map(|b| b.to_ascii_lowercase()));
            at.push(text.len() as u32);
        }
        let mut order: Vec<usize> = (0..keywords.len()).collect();
        order.sort_by_key(|&k| (keywords[k].len(), k));
        let mut masks = vec![u64::MAX; DOMAIN];
        let mut buckets: [Bucket; BUCKETS] = Default::default();
        for (b, members) in split(&order, |k| keywords[k].len()).into_iter().enumerate() {
            for &k in members {
                let word = &text[at[k] as usize..at[k + 1] as usize];
                let len = word.len();
                let shown = len.min(8);
                for j in len - shown..len {
                    let bit = !(1u64 << (8 * (len - 1 - j) + b));
                    // The byte before, in either case (any before the first byte), with
                    // this byte's low bits (the same in both cases of a letter).
                    let cur = u16::from(word[j]) << 8;
                    if j > 0 {
                        for prev in [word[j - 1], word[j - 1].to_ascii_uppercase()] {
                            masks[domain(u16::from(prev) | cur)] &= bit;
                        }
                    } else {
                        for prev in 0..=255 {
                            masks[domain(prev | cur)] &= bit;
                        }
                    }
                }
            }
            let hashed = members
                .iter()
                .map(|&k| keywords[k].len())
                .min()
                .unwrap_or(1);
            // The positions before the shortest keyword's window allow every byte.
            for free in 0..8 - hashed.min(8) {
                let bit = !(1u64 << (8 * (7 - free) + b));
                masks.iter_mut().for_each(|m| *m &= bit);
            }
            buckets[b] = Bucket::new(members, &text, &at, hashed.min(8));
        }
        let always = masks.iter().fold(u64::MAX, |a, &m| a & m);
        let init = (0..8).fold(0, |s, j| s | always >> (8 * j));
        Fdr {
            masks,
            init,
            buckets,
            text,
            at,
        }
    }

    /// Calls `f(keyword, start, end)` for every occurrence of a keyword in `hay[from..to]`.
    pub(super) fn for_each(
        &self,
        hay: &[u8],
        from: usize,
        to: usize,
        f: &mut impl FnMut(usize, usize, usize),
    ) {
        let masks: &[u64; DOMAIN] = self.masks[..].try_into().expect("DOMAIN masks");
        let mut s = self.init;
        let mut t = from;
        // Each position reads the byte before it too, which may be before `from` (it then
        // belongs to no keyword that starts at `from` or later: a keyword's first byte
        // takes any byte before it).
        let before = |t: usize| if t > 0 { hay[t - 1] } else { 0 };
        if t == 0 && t + 8 <= to {
            s = self.step(hay, from, t, 8, s, before(t), f);
            t += 8;
        }
        // Eight positions a step: the state after each is, shifted into place, the masks
        // or-ed together, with no chain from one position to the next.
        while t + 8 <= to {
            let block: &[u8; 9] = hay[t - 1..t + 8].try_into().expect("nine bytes");
            let mut w = u128::from(s >> 8);
            for i in 0..8 {
                let pair = u16::from_le_bytes([block[i], block[i + 1]]);
                w |= u128::from(masks[domain(pair)]) << (8 * i);
            }
            s = (w >> 56) as u64;
            let top = !(w as u64);
            if top != 0 {
                self.confirm(hay, from, t, top, f);
            }
            t += 8;
        }
        if t < to {
            self.step(hay, from, t, to - t, s, before(t), f);
        }
    }

    /// The loop of [`Fdr::for_each`] for `n` (at most eight) positions from `t`, which may
    /// be at the start of `hay` or the end of the range; the state after them.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &self,
        hay: &[u8],
        from: usize,
        t: usize,
        n: usize,
        s: u64,
        mut prev: u8,
        f: &mut impl FnMut(usize, usize, usize),
    ) -> u64 {
        let mut w = u128::from(s >> 8);
        for (i, &byte) in hay[t..t + n].iter().enumerate() {
            w |= u128::from(self.masks[domain(u16::from_le_bytes([prev, byte]))]) << (8 * i);
            prev = byte;
        }
        let top = !(w as u64) & low(n);
        if top != 0 {
            self.confirm(hay, from, t, top, f);
        }
        (w >> (8 * (n - 1))) as u64
    }

    /// Compares the candidates of the block at `t` (bit `8 * i + b` of `top`: an end after
    /// `t + i` for bucket `b`) with the keywords they may be.
    #[cold]
    #[inline(never)]
    fn confirm(
        &self,
        hay: &[u8],
        from: usize,
        t: usize,
        mut top: u64,
        f: &mut impl FnMut(usize, usize, usize),
    ) {
        while top != 0 {
            let bit = top.trailing_zeros() as usize;
            top &= top - 1;
            let end = t + bit / 8 + 1;
            let bucket = &self.buckets[bit % 8];
            if bucket.ids.is_empty() || end - from < bucket.hashed {
                continue;
            }
            let x = folded8(hay, end);
            let h = hash(x & low(bucket.hashed), bucket.bits);
            let (lo, hi) = (bucket.slots[h] as usize, bucket.slots[h + 1] as usize);
            for &(want, k) in &bucket.ids[lo..hi] {
                let k = k as usize;
                let word = &self.text[self.at[k] as usize..self.at[k + 1] as usize];
                let len = word.len();
                if len <= end - from
                    && x & low(len) == want
                    && (len <= 8 || hay[end - len..end - 8].eq_ignore_ascii_case(&word[..len - 8]))
                {
                    f(k, end - len, end);
                }
            }
        }
    }
}

/// The low `n` bytes of a word (all eight from `n = 8` on).
#[inline]
fn low(n: usize) -> u64 {
    if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * n)) - 1
    }
}

/// The eight bytes before `end`, lowercase, the last one lowest ([`tail`] of eight bytes,
/// fewer at the start of `hay`), in a few word operations.
#[inline]
fn folded8(hay: &[u8], end: usize) -> u64 {
    let Some(bytes) = end.checked_sub(8).and_then(|s| hay.get(s..end)) else {
        return tail(&hay[..end], end.min(8));
    };
    let x = u64::from_be_bytes(bytes.try_into().expect("eight bytes"));
    // A byte is `A`..=`Z` when its low seven bits are at least `A` and at most `Z` and its top
    // bit is clear; such a byte gets 0x20.
    const ONES: u64 = 0x0101_0101_0101_0101;
    let seven = x & (0x7f * ONES);
    let at_least_a = seven + (0x80 - u64::from(b'A')) * ONES;
    let past_z = seven + (0x80 - u64::from(b'Z') - 1) * ONES;
    let upper = at_least_a & !past_z & !x & (0x80 * ONES);
    x | upper >> 2
}

/// `order` (keywords sorted by length) cut into at most [`BUCKETS`] runs so as to let the
/// fewest candidates through. Measured on real code, a bucket of `n` keywords whose
/// shortest is `len` lets through about `n² / 2^len` (more keywords leave more pairs open at
/// every position, and a short keyword leaves the positions before it free); so long ones
/// share buckets and short ones keep to themselves. Cuts fall every [`RUN`] keywords of a
/// length and between lengths.
fn split(order: &[usize], len: impl Fn(usize) -> usize) -> Vec<&[usize]> {
    const RUN: usize = 32;
    // Runs of one length: (first index in `order`, length).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, &k) in order.iter().enumerate() {
        match runs.last() {
            Some(&(at, l)) if l == len(k) && i - at < RUN => {}
            _ => runs.push((i, len(k))),
        }
    }
    let n = runs.len();
    let at = |r: usize| if r < n { runs[r].0 } else { order.len() };
    let cost =
        |a: usize, b: usize| (at(b) - at(a)).pow(2) as f64 / f64::from(1 << runs[a].1.min(8));
    // best[j][r]: the least cost of the first `r` runs in `j` buckets, and where the last began.
    let mut best = vec![vec![(f64::INFINITY, 0usize); n + 1]; BUCKETS + 1];
    best[0][0] = (0.0, 0);
    for j in 1..=BUCKETS {
        for r in 1..=n {
            for a in 0..r {
                let c = best[j - 1][a].0 + cost(a, r);
                if c < best[j][r].0 {
                    best[j][r] = (c, a);
                }
            }
        }
    }
    let j = (1..=BUCKETS)
        .min_by(|&x, &y| best[x][n].0.total_cmp(&best[y][n].0))
        .unwrap_or(1);
    let mut cuts = vec![n];
    let (mut j, mut r) = (j, n);
    while r > 0 {
        r = best[j][r].1;
        cuts.push(r);
        j -= 1;
    }
    cuts.reverse();
    cuts.windows(2)
        .map(|w| &order[at(w[0])..at(w[1])])
        .collect()
}

impl Bucket {
    fn new(members: &[usize], text: &[u8], at: &[u32], hashed: usize) -> Bucket {
        let bits = (members.len() * 2)
            .next_power_of_two()
            .trailing_zeros()
            .max(1);
        let key = |k: usize| {
            let word = &text[at[k] as usize..at[k + 1] as usize];
            hash(tail(word, hashed), bits)
        };
        let mut slots = vec![0u32; (1 << bits) + 1];
        for &k in members {
            slots[key(k) + 1] += 1;
        }
        for h in 0..1 << bits {
            slots[h + 1] += slots[h];
        }
        let mut fill = slots.clone();
        let mut ids = vec![(0, 0); members.len()];
        for &k in members {
            let h = key(k);
            let word = &text[at[k] as usize..at[k + 1] as usize];
            ids[fill[h] as usize] = (tail(word, word.len().min(8)), k as u32);
            fill[h] += 1;
        }
        Bucket {
            hashed,
            bits,
            slots,
            ids,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasick, MatchKind};

    /// The built-in rules' keywords, as the engine collects them.
    fn builtin_keywords() -> Vec<String> {
        let mut keywords: Vec<String> = Vec::new();
        for r in crate::rules::builtin() {
            for k in r.keywords {
                let k = k.to_ascii_lowercase();
                if !keywords.contains(&k) {
                    keywords.push(k);
                }
            }
        }
        keywords
    }

    /// xorshift: random text without a dependency.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Every rule's example and negative in both cases; random bytes; and text dense with
    /// keywords, in random case, some cut short, between random separators.
    fn haystack(keywords: &[String], rng: &mut Rng) -> Vec<u8> {
        let mut hay: Vec<u8> = Vec::new();
        for r in crate::rules::builtin() {
            for e in r.examples.iter().chain(&r.negatives) {
                hay.extend_from_slice(e.as_bytes());
                hay.push(b'\n');
                hay.extend_from_slice(e.to_ascii_uppercase().as_bytes());
            }
        }
        hay.extend((0..20_000).map(|_| rng.below(256) as u8));
        let seps = b" _-.:=/\n\"'\x00\xff";
        for _ in 0..30_000 {
            let k = keywords[rng.below(keywords.len())].as_bytes();
            let n = if rng.below(4) == 0 {
                rng.below(k.len())
            } else {
                k.len()
            };
            for &b in &k[..n] {
                hay.push(if rng.below(2) == 0 {
                    b.to_ascii_uppercase()
                } else {
                    b
                });
            }
            for _ in 0..rng.below(3) {
                hay.push(seps[rng.below(seps.len())]);
            }
        }
        hay
    }

    #[test]
    fn finds_what_the_automata_find() {
        let keywords = builtin_keywords();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let hay = haystack(&keywords, &mut rng);
        let fdr = Fdr::new(&keywords);
        let dfa = super::super::keywords::Keywords::new(&keywords).unwrap();
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&keywords)
            .unwrap();
        let n = hay.len();
        // Whole; at either end of the input; shorter than a step, a step, a step and one;
        // and random ranges, whose ends fall inside keywords.
        let mut ranges = vec![0..n, 0..7, 0..8, 0..9, n - 9..n, n - 8..n, 3..3, 1..n - 1];
        for _ in 0..400 {
            let start = rng.below(n);
            let len = [rng.below(20), rng.below(300), rng.below(5000)][rng.below(3)];
            ranges.push(start..(start + len).min(n));
        }
        let mut seen = 0;
        for range in ranges {
            let mut got = Vec::new();
            fdr.for_each(&hay, range.start, range.end, &mut |k, s, e| {
                got.push((k, s, e))
            });
            got.sort_unstable();
            let mut want: Vec<_> = ac
                .find_overlapping_iter(aho_corasick::Input::new(&hay).range(range.clone()))
                .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
                .collect();
            want.sort_unstable();
            assert_eq!(got, want, "{range:?}");
            let mut walked = Vec::new();
            dfa.for_each(&hay, range.clone(), &mut |k, s, e| walked.push((k, s, e)));
            walked.sort_unstable();
            assert_eq!(got, walked, "{range:?}");
            seen += want.len();
        }
        assert!(seen > 100_000, "{seen}");
    }

    #[test]
    fn takes_other_keyword_sets() {
        // Few keywords, many of one length, bytes outside ASCII, one far longer than a window.
        let mut rng = Rng(7);
        for keywords in [
            vec!["ab".to_string()],
            (0..300).map(|i| format!("k{i:04}")).collect(),
            vec![
                "\u{e9}t\u{e9}".into(),
                "zz".into(),
                "x".repeat(40),
                "-----begin".into(),
            ],
        ] {
            let hay = haystack(&keywords, &mut rng);
            let fdr = Fdr::new(&keywords);
            let ac = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&keywords)
                .unwrap();
            let mut got = Vec::new();
            fdr.for_each(&hay, 0, hay.len(), &mut |k, s, e| got.push((k, s, e)));
            got.sort_unstable();
            let mut want: Vec<_> = ac
                .find_overlapping_iter(&hay)
                .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
                .collect();
            want.sort_unstable();
            assert!(!want.is_empty());
            assert_eq!(got, want, "{keywords:?}");
        }
    }
}
