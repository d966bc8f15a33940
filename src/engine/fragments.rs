//! Every occurrence of every keyword, ASCII case-insensitively, found through one short
//! fragment of each keyword rather than by walking an automaton over every byte.
//!
//! Why: the keyword DFA ([`super::keywords`]) reads a ~1.8 MB table once per input byte, so a
//! scan waits on memory at every byte; yet in source text a keyword starts at only ~1.5 % of
//! positions. Here each keyword is represented by its rarest 4-byte fragment (a keyword
//! shorter than 4 by its 3-byte head, a 2-byte keyword by every 3 bytes it can head). A
//! position's next 4 (and 3) bytes, case-folded, are hashed into two bitmaps small enough for
//! L1 (8 KB and 2 KB); only where a bit is set are the fragment's keywords compared with the
//! input. Measured in `benches/engine.rs` (see benches/RESULTS.md, "Engine").
//!
//! Folding is `| 0x20` on every byte: it maps `A`-`Z` onto `a`-`z` (and a few punctuation
//! bytes onto others, which only adds candidates); each candidate is then checked exactly with
//! `eq_ignore_ascii_case`, so what is reported is exactly what the DFA reports.

/// `| FOLD` folds four bytes' ASCII case at once (see the module's comment).
const FOLD: u32 = 0x2020_2020;
/// Bits of the 4-byte fragments' hash: a 64 Ki-bit (8 KB) bitmap, ~2 % full for ~1,300
/// keywords, so that hash collisions add few candidates.
const BITS4: u32 = 16;
/// Bits of the 3-byte heads' hash (2 KB): the ~40 three-byte keywords and each two-byte
/// keyword's 128 possible 3-byte heads.
const BITS3: u32 = 14;

#[inline(always)]
fn hash4(v: u32) -> u32 {
    v.wrapping_mul(0x9E37_79B1) >> (32 - BITS4)
}

#[inline(always)]
fn hash3(v: u32) -> u32 {
    (v & 0x00FF_FFFF).wrapping_mul(0x85EB_CA77) >> (32 - BITS3)
}

/// One keyword reached through one fragment.
#[derive(Clone, Copy)]
struct Entry {
    /// The fragment's hash.
    hash: u32,
    /// The fragment, folded (3-byte ones in the low 24 bits).
    frag: u32,
    keyword: u32,
    /// Where the fragment starts in the keyword.
    offset: u32,
}

/// A bitmap of fragment hashes and, for each set bit, the entries behind it, grouped by the
/// bitmap's word (`at[word]..at[word + 1]`), so a candidate reads one small slice.
struct Table {
    bits: Vec<u64>,
    at: Vec<u32>,
    entries: Vec<Entry>,
}

impl Table {
    fn new(bits: u32, mut entries: Vec<Entry>) -> Table {
        let words = 1usize << (bits - 6);
        let mut map = vec![0u64; words];
        entries.sort_unstable_by_key(|e| (e.hash, e.frag, e.keyword));
        entries.dedup_by_key(|e| (e.hash, e.frag, e.keyword, e.offset));
        let mut at = vec![0u32; words + 1];
        for e in &entries {
            map[(e.hash >> 6) as usize] |= 1 << (e.hash & 63);
            at[(e.hash >> 6) as usize + 1] += 1;
        }
        for w in 0..words {
            at[w + 1] += at[w];
        }
        Table {
            bits: map,
            at,
            entries,
        }
    }

    #[inline(always)]
    fn hit(&self, hash: u32) -> u64 {
        (self.bits[(hash >> 6) as usize] >> (hash & 63)) & 1
    }

    fn entries(&self, hash: u32) -> &[Entry] {
        let w = (hash >> 6) as usize;
        &self.entries[self.at[w] as usize..self.at[w + 1] as usize]
    }
}

pub(super) struct Fragments {
    four: Table,
    three: Table,
    /// The keywords, lowercased, as the engine numbered them.
    words: Vec<Box<[u8]>>,
    /// Whether to probe the bitmaps 32 positions at a time with AVX2 gathers ([`simd`]).
    #[cfg(target_arch = "x86_64")]
    avx2: bool,
}

/// How common a byte is in source text, roughly (higher: more common). Only the order
/// matters: a keyword's fragment is the one whose bytes are least common, so that it starts
/// few candidates (`token` is reached through `oken`, `-----begin` through `begi`, not `----`).
fn commonness(b: u8) -> u32 {
    const LETTERS: &[u8] = b" etaoinsrlcdpmuhfgbyvwkxjqz";
    let b = b | 0x20;
    match LETTERS.iter().position(|&l| l == b) {
        Some(i) => 100 - 3 * i as u32,
        None if b"_.-/=\"'(),:;0123456789\n\t".contains(&b) => 60,
        None => 10,
    }
}

fn fold4(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]]) | FOLD
}

impl Fragments {
    /// `keywords` are lowercase (as the engine keeps them), each at least 2 bytes.
    pub(super) fn new(keywords: &[String]) -> Fragments {
        let mut four = Vec::new();
        let mut three = Vec::new();
        for (id, k) in keywords.iter().enumerate() {
            let k = k.as_bytes();
            let keyword = id as u32;
            match k.len() {
                0 | 1 => {}
                2 => {
                    // Every folded byte that can follow: `b | 0x20` takes 128 values.
                    for next in (0..=255u8).filter(|b| b & 0x20 != 0) {
                        let frag = u32::from_le_bytes([k[0], k[1], next, 0]) | 0x0020_2020;
                        let frag = frag & 0x00FF_FFFF;
                        three.push(Entry {
                            hash: hash3(frag),
                            frag,
                            keyword,
                            offset: 0,
                        });
                    }
                }
                3 => {
                    let frag = (u32::from_le_bytes([k[0], k[1], k[2], 0]) | FOLD) & 0x00FF_FFFF;
                    three.push(Entry {
                        hash: hash3(frag),
                        frag,
                        keyword,
                        offset: 0,
                    });
                }
                n => {
                    let score = |o: usize| -> u32 {
                        let w = &k[o..o + 4];
                        let repeated = w.iter().all(|&b| b | 0x20 == w[0] | 0x20);
                        w.iter().map(|&b| commonness(b)).sum::<u32>() + 200 * u32::from(repeated)
                    };
                    let offset = (0..=n - 4).min_by_key(|&o| (score(o), o)).unwrap_or(0);
                    let frag = fold4(&k[offset..]);
                    four.push(Entry {
                        hash: hash4(frag),
                        frag,
                        keyword,
                        offset: offset as u32,
                    });
                }
            }
        }
        Fragments {
            four: Table::new(BITS4, four),
            three: Table::new(BITS3, three),
            words: keywords
                .iter()
                .map(|k| k.as_bytes().to_vec().into_boxed_slice())
                .collect(),
            #[cfg(target_arch = "x86_64")]
            avx2: std::env::var_os("LH_SCALAR").is_none() && is_x86_feature_detected!("avx2"),
        }
    }

    /// Calls `f(keyword, start, end)` for every occurrence of a keyword in `hay[range]`
    /// (nothing outside `range` is looked at), in no particular order.
    pub(super) fn for_each(
        &self,
        hay: &[u8],
        range: std::ops::Range<usize>,
        f: &mut impl FnMut(usize, usize, usize),
    ) {
        let (from, to) = (range.start, range.end.min(hay.len()));
        if from >= to {
            return;
        }
        let hay = &hay[..to];
        let mut p = from;
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // 32 positions a step; a step reads 35 bytes.
            while p + 35 <= to {
                // SAFETY: `avx2` is set only where the CPU has AVX2 (`Fragments::new`), and
                // `p + 35 <= to <= hay.len()`.
                let (mut m4, mut m3) = unsafe {
                    simd::probe(hay.as_ptr().add(p), &self.four.bits, &self.three.bits)
                };
                while m4 != 0 {
                    let q = p + m4.trailing_zeros() as usize;
                    let v = fold4(&hay[q..]);
                    self.confirm(&self.four, hash4(v), v, hay, from, q, f);
                    m4 &= m4 - 1;
                }
                while m3 != 0 {
                    let q = p + m3.trailing_zeros() as usize;
                    let v = fold4(&hay[q..]) & 0x00FF_FFFF;
                    self.confirm(&self.three, hash3(v), v, hay, from, q, f);
                    m3 &= m3 - 1;
                }
                p += 32;
            }
        }
        // Positions with four bytes to read, 64 at a time: the bitmaps are probed without a
        // branch, and only the positions whose bit is set are looked at again.
        while p + 4 <= to {
            let end = (p + 64).min(to - 3);
            let (mut m4, mut m3) = (0u64, 0u64);
            for (j, w) in hay[p..end + 3].windows(4).enumerate() {
                let v = fold4(w);
                m4 |= self.four.hit(hash4(v)) << j;
                m3 |= self.three.hit(hash3(v)) << j;
            }
            while m4 != 0 {
                let q = p + m4.trailing_zeros() as usize;
                let v = fold4(&hay[q..]);
                self.confirm(&self.four, hash4(v), v, hay, from, q, f);
                m4 &= m4 - 1;
            }
            while m3 != 0 {
                let q = p + m3.trailing_zeros() as usize;
                let v = fold4(&hay[q..]) & 0x00FF_FFFF;
                self.confirm(&self.three, hash3(v), v, hay, from, q, f);
                m3 &= m3 - 1;
            }
            p = end;
        }
        // The last three positions, read as if zeros followed (a zero folds to a space): a
        // keyword found there is still checked to end inside the range.
        for q in p..to {
            let mut b = [0u8; 4];
            b[..to - q].copy_from_slice(&hay[q..to]);
            let v = fold4(&b);
            if self.four.hit(hash4(v)) != 0 {
                self.confirm(&self.four, hash4(v), v, hay, from, q, f);
            }
            let v = v & 0x00FF_FFFF;
            if self.three.hit(hash3(v)) != 0 {
                self.confirm(&self.three, hash3(v), v, hay, from, q, f);
            }
        }
    }

    /// The keywords of `table`'s fragment `frag` (hash `hash`) seen at `q`, compared in full.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn confirm(
        &self,
        table: &Table,
        hash: u32,
        frag: u32,
        hay: &[u8],
        from: usize,
        q: usize,
        f: &mut impl FnMut(usize, usize, usize),
    ) {
        for e in table.entries(hash) {
            if e.hash != hash || e.frag != frag {
                continue;
            }
            let Some(start) = q.checked_sub(e.offset as usize).filter(|&s| s >= from) else {
                continue;
            };
            let word = &self.words[e.keyword as usize];
            if hay
                .get(start..start + word.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(word))
            {
                f(e.keyword as usize, start, start + word.len());
            }
        }
    }
}

/// The bitmaps probed for 32 positions at once: the hashes of eight positions' fragments are
/// computed in one vector, and their bits fetched with one gather per table.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{BITS3, BITS4, FOLD};
    use std::arch::x86_64::*;

    /// `SPREAD[m]` puts bit `k` of `m` at bit `4k`: lane `k` of the vector loaded at `p + r`
    /// holds the bytes at `p + 4k + r`.
    const SPREAD: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut m = 0;
        while m < 256 {
            let mut k = 0;
            while k < 8 {
                if m & (1 << k) != 0 {
                    t[m] |= 1 << (4 * k);
                }
                k += 1;
            }
            m += 1;
        }
        t
    };

    /// For the 32 positions from `at`: bit `j` of the first word is set when the 4 bytes at
    /// `at + j` hash to a set bit of `four`, of the second when their first 3 do in `three`.
    ///
    /// # Safety
    /// The CPU has AVX2; 35 bytes from `at` are readable; `four` and `three` are the bitmaps
    /// of `BITS4` and `BITS3` bits.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn probe(at: *const u8, four: &[u64], three: &[u64]) -> (u64, u64) {
        debug_assert!(four.len() << 6 == 1 << BITS4 && three.len() << 6 == 1 << BITS3);
        let fold = _mm256_set1_epi32(FOLD as i32);
        let low3 = _mm256_set1_epi32(0x00FF_FFFF);
        let m4 = _mm256_set1_epi32(0x9E37_79B1u32 as i32);
        let m3 = _mm256_set1_epi32(0x85EB_CA77u32 as i32);
        let bit = _mm256_set1_epi32(31);
        let (t4, t3) = (four.as_ptr() as *const i32, three.as_ptr() as *const i32);
        let (mut out4, mut out3) = (0u32, 0u32);
        for r in 0..4 {
            // SAFETY: bytes `at + r .. at + r + 32` are within the 35 readable.
            let v = _mm256_or_si256(_mm256_loadu_si256(at.add(r) as *const __m256i), fold);
            let h4 = _mm256_srli_epi32::<{ 32 - BITS4 as i32 }>(_mm256_mullo_epi32(v, m4));
            let w4 = _mm256_i32gather_epi32::<4>(t4, _mm256_srli_epi32::<5>(h4));
            let b4 = _mm256_slli_epi32::<31>(_mm256_srlv_epi32(w4, _mm256_and_si256(h4, bit)));
            let h3 = _mm256_srli_epi32::<{ 32 - BITS3 as i32 }>(_mm256_mullo_epi32(
                _mm256_and_si256(v, low3),
                m3,
            ));
            let w3 = _mm256_i32gather_epi32::<4>(t3, _mm256_srli_epi32::<5>(h3));
            let b3 = _mm256_slli_epi32::<31>(_mm256_srlv_epi32(w3, _mm256_and_si256(h3, bit)));
            out4 |= SPREAD[_mm256_movemask_ps(_mm256_castsi256_ps(b4)) as usize] << r;
            out3 |= SPREAD[_mm256_movemask_ps(_mm256_castsi256_ps(b3)) as usize] << r;
        }
        (u64::from(out4), u64::from(out3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_the_dfa_finds() {
        let rules = crate::rules::builtin();
        let mut keywords: Vec<String> = rules
            .iter()
            .flat_map(|r| r.keywords.iter().map(|k| k.to_ascii_lowercase()))
            .collect();
        keywords.sort();
        keywords.dedup();
        // Every rule's examples in both cases, every keyword whole and cut in half, and
        // bytes that fold onto others (`@` and a backquote).
        let mut hay: Vec<u8> = Vec::new();
        for r in &rules {
            for e in r.examples.iter().chain(&r.negatives) {
                hay.extend_from_slice(e.as_bytes());
                hay.push(b'\n');
                hay.extend_from_slice(e.to_ascii_uppercase().as_bytes());
                hay.push(0xff);
            }
        }
        for k in &keywords {
            hay.extend_from_slice(k.as_bytes());
            hay.extend_from_slice(&k.as_bytes()[..k.len() / 2]);
            hay.extend_from_slice(k.to_ascii_uppercase().as_bytes());
            hay.extend_from_slice(b"@`[{");
        }
        let dfa = super::super::keywords::Keywords::new(&keywords).unwrap();
        #[allow(unused_mut)]
        let mut ours = Fragments::new(&keywords);
        let n = hay.len();
        // Whole, short, and ranges whose ends fall inside keywords.
        let mut ranges = vec![0..n, 1..n - 3, 5..200, 17..17, 17..18, n - 2..n, n - 3..n];
        ranges.extend((0..300).map(|i| (i * 997) % (n - 700)..(i * 997) % (n - 700) + i + 1));
        // The vector probe where the CPU has one, then the plain loop alone.
        for pass in 0..2 {
            let mut seen = 0;
            for range in ranges.clone() {
                let (mut got, mut want) = (Vec::new(), Vec::new());
                ours.for_each(&hay, range.clone(), &mut |k, s, e| got.push((k, s, e)));
                dfa.for_each(&hay, range.clone(), &mut |k, s, e| want.push((k, s, e)));
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "pass {pass}, {range:?}");
                seen += want.len();
            }
            assert!(seen > 10_000, "{seen}");
            #[cfg(target_arch = "x86_64")]
            {
                ours.avx2 = false;
            }
        }
    }
}
