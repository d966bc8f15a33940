//! Base64 blocks: runs of the base64 alphabet long enough to hold text, decoded into views.
//!
//! Every input a scan reads passes through here, and source text is mostly runs of that
//! alphabet (identifiers, words, numbers) far shorter than [`MIN_BASE64`]. So the search
//! for a long run looks at 64 bytes at a time: one bit per byte saying "in the alphabet"
//! (32 bytes per compare with AVX2, 16 with SSE2 on other x86_64), then a few shifts and
//! ANDs to find a bit that ends [`MIN_BASE64`] set bits in a row. Bytes of text with no long
//! run are never looked at one by one; a byte-at-a-time walk (the previous search, probing
//! every 24th byte and walking each run it hit) cost 8.8 % of a directory scan's time.

use super::{compose, Encoding, Map, View, MIN_BASE64};

// `next_run` finds runs of exactly this many set bits with its shifts (2, 4, 8, 16, 24).
const _: () = assert!(MIN_BASE64 == 24);

/// Base64 alphabet bytes (standard and URL-safe): 1 lowercase, 2 uppercase, 4 digit,
/// 8 symbol; 0 elsewhere.
static B64: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b.is_ascii_lowercase() {
            1
        } else if b.is_ascii_uppercase() {
            2
        } else if b.is_ascii_digit() {
            4
        } else if matches!(b, b'+' | b'/' | b'-' | b'_') {
            8
        } else {
            0
        };
        i += 1;
    }
    t
};

/// Bit `i` set when `block[i]` is in the base64 alphabet ([`B64`] non-zero).
#[cfg(target_arch = "x86_64")]
#[inline]
fn alphabet_bits(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline, so these intrinsics are always available.
    unsafe {
        // `x` in `lo..=hi`: shifted so that `lo` lands on -128, then one signed compare.
        let within = |x: __m128i, lo: u8, hi: u8| {
            let shifted = _mm_add_epi8(x, _mm_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
            _mm_cmplt_epi8(
                shifted,
                _mm_set1_epi8((hi - lo + 1).wrapping_add(0x80) as i8),
            )
        };
        super::sse2_bits(block, |x| {
            // Setting bit 5 folds upper case onto lower and leaves no other byte in a..=z.
            let letter = within(_mm_or_si128(x, _mm_set1_epi8(0x20)), b'a', b'z');
            // `/` sits just below the digits.
            let digit = within(x, b'/', b'9');
            let plus = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'+' as i8));
            let minus = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'-' as i8));
            let under = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'_' as i8));
            _mm_or_si128(
                _mm_or_si128(letter, digit),
                _mm_or_si128(plus, _mm_or_si128(minus, under)),
            )
        })
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn alphabet_bits(block: &[u8; 64]) -> u64 {
    table_bits(block)
}

/// Bit `i` set when `bytes[i]` is in the base64 alphabet, by the table, a byte at a time: for
/// a block's last bytes, and where no SIMD test is compiled. At most 64 bytes.
fn table_bits(bytes: &[u8]) -> u64 {
    super::bits_where(bytes, |b| B64[b as usize] != 0)
}

/// Bit `i` set when `block[i]` is in the base64 alphabet: [`alphabet_bits`] at 32 bytes to
/// a compare, half its instructions where the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn alphabet_bits_avx2(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    // `x` in `lo..=hi`: shifted so that `lo` lands on -128, then one signed compare.
    let within = |x: __m256i, lo: u8, hi: u8| {
        let shifted = _mm256_add_epi8(x, _mm256_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
        _mm256_cmpgt_epi8(
            _mm256_set1_epi8((hi - lo + 1).wrapping_add(0x80) as i8),
            shifted,
        )
    };
    super::avx2_bits(block, |x| {
        let letter = within(_mm256_or_si256(x, _mm256_set1_epi8(0x20)), b'a', b'z');
        let digit = within(x, b'/', b'9');
        let plus = _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'+' as i8));
        let minus = _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'-' as i8));
        let under = _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'_' as i8));
        _mm256_or_si256(
            _mm256_or_si256(letter, digit),
            _mm256_or_si256(plus, _mm256_or_si256(minus, under)),
        )
    })
}

/// The first maximal run `[start, end)` of alphabet bytes at least [`MIN_BASE64`] long that
/// starts at or after `from`, where `from` is 0 or the end of a run (so no run crosses it).
fn next_run(hay: &[u8], from: usize) -> Option<(usize, usize)> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, as just checked.
        return unsafe { next_run_avx2(hay, from) };
    }
    runs(hay, from, alphabet_bits)
}

/// [`next_run`] compiled for AVX2, its blocks' bits by [`alphabet_bits_avx2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn next_run_avx2(hay: &[u8], from: usize) -> Option<(usize, usize)> {
    runs(hay, from, |block| alphabet_bits_avx2(block))
}

/// [`next_run`] with `bits_of` telling a 64-byte block's alphabet bytes; inlined into each
/// caller, so that the AVX2 one is compiled for AVX2 whole.
#[inline(always)]
fn runs(hay: &[u8], from: usize, bits_of: impl Fn(&[u8; 64]) -> u64) -> Option<(usize, usize)> {
    // Bits of the 64 bytes before `at` (none before `from`), so a run may cross blocks.
    let mut before = 0u64;
    let mut at = from;
    // The alphabet bits of the (up to) 64 bytes at `at`.
    let bits_at = |at: usize| match hay.get(at..at + 64) {
        Some(block) => bits_of(block.try_into().expect("64 bytes")),
        None => table_bits(&hay[at..]),
    };
    while at < hay.len() {
        let bits = bits_at(at);
        // Bit `i` of `ends` (counting the block before as bits 0..64): bytes `i - n + 1 ..= i`
        // are all in the alphabet, for n = 2, 4, 8, 16 and then 24 = MIN_BASE64.
        let w = u128::from(bits) << 64 | u128::from(before);
        let two = w & w << 1;
        let four = two & two << 2;
        let eight = four & four << 4;
        let sixteen = eight & eight << 8;
        let ends = ((sixteen & eight << 16) >> 64) as u64;
        if ends != 0 {
            // The first byte to end [`MIN_BASE64`] alphabet bytes: no such run ended before
            // it (this block's lower bits or a block before would have held its end, and
            // no run crosses `from`), so its run starts that many bytes back. Its end is the
            // first zero bit after it, in this block's bits or the next blocks'. Walked out
            // byte by byte both ways, the ends were a third of this search (2.7 % of a
            // real-code scan's instructions).
            let off = ends.trailing_zeros() as usize;
            let start = at + off + 1 - MIN_BASE64;
            debug_assert!(start >= from && (start == from || B64[hay[start - 1] as usize] == 0));
            // Bit `i`: the byte `i` past the run's 24th is out of the alphabet.
            let mut out = !bits >> off;
            let mut base = at + off;
            while out == 0 {
                at += 64;
                if at >= hay.len() {
                    return Some((start, hay.len()));
                }
                out = !bits_at(at);
                base = at;
            }
            return Some((start, (base + out.trailing_zeros() as usize).min(hay.len())));
        }
        before = bits;
        at += 64;
    }
    None
}

/// Base64 runs that decode to mostly printable text, each as a view; recursive.
pub(super) fn base64_blocks(
    hay: &[u8],
    depth: usize,
    budget: &mut usize,
    out: &mut Vec<(Encoding, View)>,
) {
    use base64::Engine as _;
    if depth == 0 {
        return;
    }
    let mut done = 0;
    while *budget > 0 {
        let Some((start, i)) = next_run(hay, done) else {
            break;
        };
        done = i;
        let classes = hay[start..i].iter().fold(0, |c, &b| c | B64[b as usize]);
        // Base64 of text mixes lower, upper and digits; identifiers and words do not.
        if classes & 7 != 7 {
            continue;
        }
        let mut end = i;
        while end < hay.len() && end < i + 2 && hay[end] == b'=' {
            end += 1;
        }
        let run = &hay[start..i];
        // Unpadded base64 may end in a partial group of 2 or 3 characters; 1 is never valid.
        let body = if run.len() % 4 == 1 {
            &run[..run.len() - 1]
        } else {
            run
        };
        let decoded = if body.iter().any(|b| matches!(b, b'-' | b'_')) {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(body)
        } else {
            base64::engine::general_purpose::STANDARD_NO_PAD.decode(body)
        };
        let Ok(bytes) = decoded else { continue };
        let printable = bytes
            .iter()
            .filter(|&&b| (0x20..0x7f).contains(&b) || matches!(b, b'\n' | b'\r' | b'\t'))
            .count();
        if bytes.is_empty() || printable * 10 < bytes.len() * 9 {
            continue;
        }
        *budget = budget.saturating_sub(bytes.len());
        // Decoded byte k comes from the 4-character group k / 3.
        let mut map: Map = (0..bytes.len()).map(|k| start + k / 3 * 4).collect();
        map.push(start + body.len().max(1).min(end - start));
        let v = View { bytes, map };
        let mut inner = Vec::new();
        base64_blocks(&v.bytes, depth - 1, budget, &mut inner);
        out.extend(inner.into_iter().map(|(e, iv)| (e, compose(&v, &iv))));
        out.push((Encoding::Base64, named(hay, start, v)));
    }
}

/// A one-line decoded value `v` of the block at `start`, behind the name it is assigned to on
/// its line (`AWS_SECRET_ACCESS_KEY: <decoded>` for a Kubernetes Secret's data): a value
/// known by its name alone is found only beside it. Unchanged when the block follows no
/// `name:` or `name=` (after quotes and spaces) or the value spans lines.
fn named(hay: &[u8], start: usize, v: View) -> View {
    // The line is read back no further than a name may be (96 bytes): many blocks on one
    // long line would each read it whole.
    let from = start.saturating_sub(97);
    let line = match memchr::memrchr(b'\n', &hay[from..start]) {
        Some(p) => from + p + 1,
        None if from == 0 => 0,
        None => return v,
    };
    let head = &hay[line..start];
    let sign = head
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'"' | b'\''))
        .map(|i| head[i]);
    if head.len() > 96
        || !matches!(sign, Some(b':' | b'='))
        || v.bytes.contains(&b'\n')
        || assigns(&v.bytes)
    {
        return v;
    }
    let mut bytes = head.to_vec();
    bytes.extend_from_slice(&v.bytes);
    let mut map = Map::default();
    map.push_copied(line, start - line);
    map.extend(&v.map);
    View { bytes, map }
}

/// Whether decoded text is itself an assignment (`password=…`, `user: …`): it names its own
/// value, and the outer name put before it would hide that name from the rules. `user:pass`
/// (a registry's `auth`) is a value, not an assignment: a colon assigns before a space.
fn assigns(decoded: &[u8]) -> bool {
    let name = decoded
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        .count();
    let rest = &decoded[name..];
    let rest = &rest[rest
        .iter()
        .take_while(|b| matches!(b, b'"' | b'\''))
        .count()..];
    name > 0
        && match rest {
            [b' ' | b'\t', ..] => {
                let sign = rest.iter().find(|b| !matches!(b, b' ' | b'\t'));
                matches!(sign, Some(b':' | b'='))
            }
            [b'=', ..] | [b':', b' ' | b'\t', ..] => true,
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every maximal run of at least `MIN_BASE64` alphabet bytes, one byte at a time.
    fn runs_by_hand(hay: &[u8]) -> Vec<(usize, usize)> {
        let mut runs = Vec::new();
        let mut i = 0;
        while i < hay.len() {
            let start = i;
            while i < hay.len() && B64[hay[i] as usize] != 0 {
                i += 1;
            }
            if i - start >= MIN_BASE64 {
                runs.push((start, i));
            }
            i += 1;
        }
        runs
    }

    fn runs(hay: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut from = 0;
        while let Some((s, e)) = next_run(hay, from) {
            out.push((s, e));
            from = e;
        }
        out
    }

    /// Each way of telling a block's alphabet bytes agrees with the table on every byte
    /// value, at every place in a block: the SSE2 one, and the AVX2 one where the CPU has it.
    #[test]
    fn every_alphabet_test_agrees_with_the_table() {
        for shift in 0..64 {
            for quarter in 0..4 {
                let block: [u8; 64] =
                    std::array::from_fn(|i| ((quarter * 64 + (i + shift) % 64) % 256) as u8);
                let want = table_bits(&block);
                assert_eq!(alphabet_bits(&block), want, "shift {shift}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2, as just checked.
                    assert_eq!(unsafe { alphabet_bits_avx2(&block) }, want, "shift {shift}");
                }
            }
        }
    }

    /// The block search finds the runs a byte-by-byte walk finds: every length around
    /// the minimum, at every offset around a block's edge, and every byte value as the
    /// one that breaks a run (so the SIMD alphabet test agrees with the table).
    #[test]
    fn finds_every_long_run_and_no_other() {
        for len in MIN_BASE64 - 2..MIN_BASE64 + 70 {
            for at in 0..140 {
                let mut hay = vec![b' '; 300];
                for (k, b) in hay[at..at + len].iter_mut().enumerate() {
                    *b = b"aZ9+/-_q"[k % 8];
                }
                assert_eq!(runs(&hay), runs_by_hand(&hay), "len {len} at {at}");
            }
        }
        // A run to the input's end, the end in a block or on a block's edge.
        for total in [64, 100, 128, 129, 191, 192, 256] {
            for len in MIN_BASE64 - 1..=total {
                let mut hay = vec![b' '; total];
                for (k, b) in hay[total - len..].iter_mut().enumerate() {
                    *b = b"aZ9+/-_q"[k % 8];
                }
                assert_eq!(runs(&hay), runs_by_hand(&hay), "len {len} of {total}");
            }
        }
        for byte in 0..=255u8 {
            // Pieces shorter than a run, joined by `byte`: one long run or none.
            let mut hay = Vec::new();
            for _ in 0..20 {
                hay.extend_from_slice(b"abcXYZ0189");
                hay.push(byte);
            }
            assert_eq!(runs(&hay), runs_by_hand(&hay), "byte {byte:#x}");
        }
        // Random bytes from a small alphabet with breaks, so runs of all lengths occur.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut hay = Vec::new();
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            hay.push(if x.is_multiple_of(29) {
                b'.'
            } else {
                b"xY3/"[(x >> 8) as usize % 4]
            });
        }
        let want = runs_by_hand(&hay);
        assert!(want.len() > 100, "{}", want.len());
        assert_eq!(runs(&hay), want);
    }
}
