//! Decoded views of encoded text whose matches map back to spans of the original input.
//! A view is the decoded bytes plus, for every decoded byte, its offset in the original (and
//! one more entry: the original end), so a match `[s, e)` in the view is
//! `[map.get(s), map.get(e))`. The offsets are kept as runs ([`Map`]).

mod blocks;
pub mod json;
mod map;

use blocks::base64_blocks;
pub use map::Map;

/// Decoded bytes and the map back to the original.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    pub bytes: Vec<u8>,
    /// `map.get(i)` is where decoded byte `i` starts in the original; `map.get(bytes.len())`
    /// is the original end.
    pub map: Map,
}

impl View {
    /// The original span of decoded span `[s, e)`.
    pub fn original(&self, s: usize, e: usize) -> (usize, usize) {
        (self.map.get(s), self.map.get(e))
    }

    /// Where original offset `at` is in the decoded bytes: the first decoded byte that comes
    /// from it or after it (the decoded end for the original end). The inverse of
    /// [`View::original`] on the offsets where decoded characters begin.
    pub fn decoded_at(&self, at: usize) -> usize {
        self.map.partition_point(|m| m < at).min(self.bytes.len())
    }

    /// Append `text`, copied one for one from offset `at` of the original.
    fn push_copied(&mut self, text: &[u8], at: usize) {
        self.bytes.extend_from_slice(text);
        self.map.push_copied(at, text.len());
    }

    /// Append another view (the next line of a notebook cell, say).
    pub fn extend(&mut self, other: &View) {
        self.map.pop();
        self.bytes.extend_from_slice(&other.bytes);
        self.map.extend(&other.map);
    }
}

/// Whether `hay` holds anything [`visible`] may take out: an escape, a control character,
/// or an invisible character outside ASCII (not merely a byte that could begin one: text
/// with a dash or a quote mark of its own goes unchanged). Read 64 bytes at a time without
/// a branch, which the compiler makes a vector loop: a byte at a time, this took a fifth of
/// `filter`'s time on plain text.
pub fn has_hidden(hay: &[u8]) -> bool {
    // The first bytes of what `invisible` takes: ASCII controls, an escape's backslash, and
    // the lead bytes of the default-ignorable characters' UTF-8.
    let may = |b: u8| {
        (b <= 0x08)
            | (b.wrapping_sub(0x0e) <= 0x1f - 0x0e)
            | (b == 0x7f)
            | (b == b'\\')
            | (b == b'%')
            | (b == 0xc2)
            | (b == 0xcd)
            | (b == 0xd8)
            | (b.wrapping_sub(0xe1) <= 0xe3 - 0xe1)
            | (b == 0xef)
            | (b == 0xf0)
            | (b == 0xf3)
    };
    for (k, chunk) in hay.chunks(64).enumerate() {
        if !chunk.iter().fold(false, |a, &b| a | may(b)) {
            continue;
        }
        for (i, &b) in chunk.iter().enumerate() {
            let control = b < 0x80 && b != b'\\' && b != b'%';
            if may(b) && (control || invisible(&hay[k * 64 + i..]).is_some()) {
                return true;
            }
        }
    }
    false
}

/// How long the invisible character at the start of `b` is, if one is: a control character
/// that is no blank and no line end (NUL, backspace; not a tab, a CR, a form feed, nor ESC,
/// which begins a sequence), DEL, or a character Unicode marks default-ignorable (a soft
/// hyphen, zero-width spaces and joiners, direction marks, variation selectors, fillers, a
/// byte-order mark, tags); raw, or written as an escape a program prints (`\u200b`,
/// `\u{200b}`, `\xad`, `\U000e0041`, a JSON surrogate pair). Nothing a reader sees, so
/// nothing that may stand inside a secret to hide it.
fn invisible(b: &[u8]) -> Option<usize> {
    let (c, n) = match b {
        [b'\\' | b'%', ..] => escaped(b)?,
        [c @ 0..=0x7f, ..] => (u32::from(*c), 1),
        _ => utf8_escaped(b, 1, |s| s.first().copied())?,
    };
    // An escaped ESC begins an escape sequence a terminal would have run (`\u001b[0m`
    // written by `json.dumps`): the sequence shows nothing.
    if c == 0x1b && b[0] == b'\\' {
        return Some(n + csi(b.get(n..)?)?);
    }
    hidden(c).then_some(n)
}

/// The length of a CSI sequence's rest after its ESC (`[`, parameters, a final byte).
fn csi(b: &[u8]) -> Option<usize> {
    if b.first() != Some(&b'[') {
        return None;
    }
    let params = b[1..]
        .iter()
        .take_while(|c| matches!(c, b'0'..=b'9' | b';' | b'?'))
        .count();
    matches!(b.get(1 + params)?, 0x40..=0x7e).then_some(params + 2)
}

/// The code point an escape at the start of `b` writes, and the escape's length: `\uXXXX`
/// (a JSON surrogate pair too), `\u{X…}` and `\x{X…}` (Rust, JavaScript, Perl),
/// `\UXXXXXXXX`, `\xHH` (a code point, or a character's UTF-8 bytes one escape each, as
/// Python's bytes show it), `\b`, `\0`, `\033` and `\e`, and percent-encoding (a
/// character's UTF-8 bytes as `%XX` each).
fn escaped(b: &[u8]) -> Option<(u32, usize)> {
    let hex = |h: &[u8]| {
        (!h.is_empty() && h.iter().all(u8::is_ascii_hexdigit))
            .then(|| u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())
            .flatten()
    };
    let byte_escape =
        |prefix: &'static [u8]| move |s: &[u8]| hex_byte(s.strip_prefix(prefix)?.get(..2));
    if b[0] == b'%' {
        return utf8_escaped(b, 3, byte_escape(b"%"));
    }
    match b.get(1)? {
        b'u' | b'x' if b.get(2) == Some(&b'{') => {
            let end = b.iter().take(10).position(|&x| x == b'}')?;
            Some((hex(&b[3..end])?, end + 1))
        }
        b'u' => {
            let c = hex(b.get(2..6)?)?;
            if (0xd800..0xdc00).contains(&c) && b.get(6..8) == Some(b"\\u") {
                let low = hex(b.get(8..12)?)?;
                if (0xdc00..0xe000).contains(&low) {
                    return Some((0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00), 12));
                }
            }
            Some((c, 6))
        }
        b'U' => Some((hex(b.get(2..10)?)?, 10)),
        b'x' => {
            let c = hex(b.get(2..4)?)?;
            utf8_escaped(b, 4, byte_escape(b"\\x"))
                .filter(|_| c >= 0xc0)
                .or(Some((c, 4)))
        }
        b'b' => Some((0x08, 2)),
        b'e' => Some((0x1b, 2)),
        b'0' if b.get(2..4) == Some(b"33") => Some((0x1b, 4)),
        b'0' if !b.get(2).is_some_and(u8::is_ascii_digit) => Some((0, 2)),
        _ => None,
    }
}

/// A character written as its UTF-8 bytes, each `len` bytes long (an escape, or the byte
/// itself) that `byte` reads.
fn utf8_escaped(b: &[u8], len: usize, byte: impl Fn(&[u8]) -> Option<u8>) -> Option<(u32, usize)> {
    let n = match byte(b)? {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return None,
    };
    let mut bytes = [0u8; 4];
    for (k, slot) in bytes.iter_mut().enumerate().take(n) {
        *slot = byte(b.get(k * len..)?)?;
    }
    let c = std::str::from_utf8(&bytes[..n]).ok()?.chars().next()?;
    Some((u32::from(c), n * len))
}

/// Whether code point `c` shows nothing: the controls [`invisible`] names and Unicode's
/// Default_Ignorable_Code_Point characters.
fn hidden(c: u32) -> bool {
    matches!(
        c,
        0x00..=0x08
            | 0x0e..=0x1a
            | 0x1c..=0x1f
            | 0x7f
            | 0xad
            | 0x34f
            | 0x61c
            | 0x115f..=0x1160
            | 0x17b4..=0x17b5
            | 0x180b..=0x180f
            | 0x200b..=0x200f
            | 0x202a..=0x202e
            | 0x2060..=0x206f
            | 0x3164
            | 0xfe00..=0xfe0f
            | 0xfeff
            | 0xffa0
            | 0xfff0..=0xfff8
            | 0x1bca0..=0x1bca3
            | 0x1d173..=0x1d17a
            | 0xe0000..=0xe0fff
    )
}

/// Whether `b` may be part of a secret's run of characters (a letter, a digit, a token's
/// punctuation).
fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-+/=.~!@#%^&*$".contains(&b)
}

/// `hay` as a terminal or a reader shows it, mapped back to `hay`: without ANSI escape
/// sequences ([`strip_ansi`]), and without an invisible character ([`invisible`]) that stands
/// between two characters of a word, where it would cut a secret in two for a rule and not
/// for a reader. What the maskers read.
pub fn visible(hay: &[u8]) -> View {
    if memchr::memchr(0x1b, hay).is_none() {
        return without_invisible(hay);
    }
    let shown = strip_ansi(hay);
    compose(&shown, &without_invisible(&shown.bytes))
}

/// `text` without the invisible characters inside its words (a group of them as one).
fn without_invisible(text: &[u8]) -> View {
    let mut v = View {
        bytes: Vec::with_capacity(text.len()),
        map: Map::default(),
    };
    let (mut run, mut i) = (0, 0);
    while i < text.len() {
        let mut j = i;
        while let Some(n) = invisible(&text[j..]) {
            j += n;
        }
        if j == i {
            i += 1;
            continue;
        }
        let before = i.checked_sub(1).map(|p| text[p]);
        if before.is_some_and(word_byte) && text.get(j).copied().is_some_and(word_byte) {
            v.push_copied(&text[run..i], run);
            run = j;
        }
        i = j;
    }
    v.push_copied(&text[run..], run);
    v.map.push(text.len());
    v
}

/// `hay` without ANSI escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ST`, and
/// two-byte escapes), mapped back to `hay`.
pub fn strip_ansi(hay: &[u8]) -> View {
    let mut v = View {
        bytes: Vec::with_capacity(hay.len()),
        map: Map::default(),
    };
    let mut i = 0;
    while i < hay.len() {
        // The text up to the next ESC, copied whole; an ESC that ends `hay` is text too.
        let esc = memchr::memchr(0x1b, &hay[i..]).map_or(hay.len(), |p| i + p);
        let text = if esc + 1 >= hay.len() { hay.len() } else { esc };
        v.push_copied(&hay[i..text], i);
        i = text;
        if i == hay.len() {
            break;
        }
        i += match hay[i + 1] {
            b'[' => {
                // Parameters and intermediates, then one final byte in 0x40..=0x7e.
                let body = &hay[i + 2..];
                let n = body
                    .iter()
                    .position(|b| (0x40..=0x7e).contains(b))
                    .map_or(body.len(), |p| p + 1);
                2 + n
            }
            // OSC, and the strings DCS, SOS, PM and APC: up to BEL or ST (`ESC \`).
            b']' | b'P' | b'X' | b'^' | b'_' => {
                let body = &hay[i + 2..];
                let n = body
                    .iter()
                    .enumerate()
                    .find_map(|(j, &b)| {
                        (b == 0x07).then_some(j + 1).or_else(|| {
                            (b == 0x1b && body.get(j + 1) == Some(&b'\\')).then_some(j + 2)
                        })
                    })
                    .unwrap_or(body.len());
                2 + n
            }
            // nF escapes (`ESC ( B` selects a character set): intermediates in 0x20..=0x2f,
            // then one final byte. Left at two bytes, the final `B` would be glued to a token
            // that follows and hide it from a rule that needs a word boundary.
            0x20..=0x2f => {
                let body = &hay[i + 1..];
                let n = body
                    .iter()
                    .position(|b| !(0x20..=0x2f).contains(b))
                    .map_or(body.len(), |p| p + 1);
                1 + n
            }
            _ => 2,
        };
    }
    v.map.push(hay.len());
    v
}

/// How a view was decoded, as reported on findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    Utf16,
    Escapes,
    Percent,
    Base64,
    Ansi,
}

/// Inputs larger than this get no decoded views (they are scanned as they are), but for
/// UTF-16 text, which is read as text at any size: it is the text itself, not a view of
/// it, and as bytes its NULs hide every keyword.
const MAX_INPUT: usize = 16 << 20;
/// Decoded bytes produced for one input, all views together.
const MAX_DECODED: usize = 8 << 20;
/// Shortest base64 run worth decoding: shorter ones are ids and hashes more than text.
const MIN_BASE64: usize = 24;
/// Base64 inside base64 is decoded this deep.
const MAX_DEPTH: usize = 2;

/// Decoded views of `hay` that could hold a secret the plain bytes hide: UTF-16 text, string
/// escapes (`\u002B`, `\x41`, `\/`), percent-encoding, and base64 blocks that decode to mostly
/// printable text (nested to depth 2). Bounded in size; empty for plain text.
pub fn views(hay: &[u8]) -> Vec<(Encoding, View)> {
    let mut out = Vec::new();
    if let Some(v) = utf16(hay) {
        // The decoded text may itself hold encoded secrets (under the limit, as any text).
        let inner = views(&v.bytes);
        out.push((Encoding::Utf16, v.clone()));
        out.extend(inner.into_iter().map(|(e, iv)| (e, compose(&v, &iv))));
        return out;
    }
    if hay.len() > MAX_INPUT {
        return out;
    }
    let mut budget = MAX_DECODED;
    let leads = Leads::of(hay);
    if leads.ansi {
        let v = strip_ansi(hay);
        budget = budget.saturating_sub(v.bytes.len());
        out.push((Encoding::Ansi, v));
    }
    if leads.escapes {
        let v = unescape_all(hay);
        budget = budget.saturating_sub(v.bytes.len());
        out.push((Encoding::Escapes, v));
    }
    if leads.percent {
        let v = percent(hay);
        budget = budget.saturating_sub(v.bytes.len());
        out.push((Encoding::Percent, v));
    }
    base64_blocks(hay, MAX_DEPTH, &mut budget, &mut out);
    out
}

/// A view of a view: decoded bytes of `inner`, mapped through `inner` then `outer`.
fn compose(outer: &View, inner: &View) -> View {
    View {
        bytes: inner.bytes.clone(),
        map: inner.map.through(&outer.map),
    }
}

/// The UTF-16 view [`views`] makes of `hay` when it reads `hay` as UTF-16 text (a BOM, or
/// NULs in every other byte); every other view of such text is made from this one. `None`
/// when `views` does not.
pub fn utf16_view(hay: &[u8]) -> Option<View> {
    utf16(hay)
}

/// Whether `hay` looks like UTF-16 text (so NUL bytes do not make it binary).
pub fn looks_utf16(hay: &[u8]) -> bool {
    utf16_kind(hay).is_some()
}

/// Whether `hay`, read as UTF-16 text, is little-endian; `None` when it does not look like
/// UTF-16 ([`looks_utf16`]).
pub fn utf16_le(hay: &[u8]) -> Option<bool> {
    utf16_kind(hay).map(|(le, _)| le)
}

/// (little-endian, where the text starts) for UTF-16 text: a byte-order mark, or NULs in
/// every other byte of mostly-ASCII text.
fn utf16_kind(hay: &[u8]) -> Option<(bool, usize)> {
    if hay.len() >= 2
        && !matches!(hay[..2], [0xFF, 0xFE] | [0xFE, 0xFF])
        && memchr::memchr(0, &hay[..hay.len().min(4096)]).is_none()
    {
        return None;
    }
    Some(match hay {
        [0xFF, 0xFE, ..] => (true, 2),
        [0xFE, 0xFF, ..] => (false, 2),
        _ => {
            let sample = &hay[..hay.len().min(4096) & !1];
            if sample.len() < 16 {
                return None;
            }
            let pairs = sample.len() / 2;
            let zero_hi = |hi: usize| {
                sample
                    .chunks(2)
                    .filter(|p| p[hi] == 0 && p[1 - hi] != 0)
                    .count()
            };
            let (le_n, be_n) = (zero_hi(1), zero_hi(0));
            if le_n * 10 >= pairs * 7 {
                (true, 0)
            } else if be_n * 10 >= pairs * 7 {
                (false, 0)
            } else {
                return None;
            }
        }
    })
}

/// UTF-16 text (BOM or detected) as UTF-8, or `None` if it does not look like UTF-16.
pub fn utf16_text(hay: &[u8]) -> Option<Vec<u8>> {
    utf16(hay).map(|v| v.bytes)
}

fn utf16(hay: &[u8]) -> Option<View> {
    let (le, start) = utf16_kind(hay)?;
    let body = &hay[start..];
    let units = body.chunks_exact(2).map(|p| {
        if le {
            u16::from_le_bytes([p[0], p[1]])
        } else {
            u16::from_be_bytes([p[0], p[1]])
        }
    });
    let mut v = View::default();
    let mut at = start;
    for r in char::decode_utf16(units) {
        let c = r.unwrap_or(char::REPLACEMENT_CHARACTER);
        let mut buf = [0u8; 4];
        for &b in c.encode_utf8(&mut buf).as_bytes() {
            v.bytes.push(b);
            v.map.push(at);
        }
        at += 2 * c.len_utf16().max(1);
    }
    v.map.push(hay.len().min(at));
    Some(v)
}

/// Which views a byte that leads an encoding asks for: an ANSI escape (ESC), a string
/// escape (`\u`, `\x`, `\/`), a percent-encoded byte (`%2B`). Found in one pass over the
/// input for all three, stopping once all are seen, where a search for each (five passes,
/// three of them `memmem`) cost more than the base64 search beside them. The pass reads 64
/// bytes a step into a mask of the three bytes: source has a backslash or a percent sign
/// every few dozen bytes, and a `memchr3` iterator, entered again at each, was 2 % of a
/// directory scan.
#[derive(Debug, Default, PartialEq)]
struct Leads {
    ansi: bool,
    escapes: bool,
    percent: bool,
}

impl Leads {
    fn of(hay: &[u8]) -> Leads {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, as just checked.
            return unsafe { Leads::of_avx2(hay) };
        }
        Leads::by(hay, lead_bits)
    }

    /// [`Leads::of`] compiled for AVX2, its blocks' bits by [`lead_bits_avx2`]: half the
    /// instructions of the SSE2 pass, which was 1.9 % of a real-code scan's.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn of_avx2(hay: &[u8]) -> Leads {
        Leads::by(hay, |block| lead_bits_avx2(block))
    }

    /// [`Leads::of`] with `bits_of` telling a 64-byte block's lead bytes; inlined into each
    /// caller, so that the AVX2 one is compiled for AVX2 whole.
    #[inline(always)]
    fn by(hay: &[u8], bits_of: impl Fn(&[u8; 64]) -> u64) -> Leads {
        let mut leads = Leads::default();
        let mut blocks = hay.chunks_exact(64);
        let mut at = 0;
        for block in blocks.by_ref() {
            let bits = bits_of(block.try_into().expect("64 bytes"));
            if bits != 0 && leads.read(hay, at, bits) {
                return leads;
            }
            at += 64;
        }
        leads.read(hay, at, bytewise_lead_bits(blocks.remainder()));
        leads
    }

    /// Takes in the leads at `at + i` for each bit `i` of `bits`; true once all are seen.
    fn read(&mut self, hay: &[u8], at: usize, mut bits: u64) -> bool {
        while bits != 0 {
            let i = at + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            match hay[i] {
                0x1b => self.ansi = true,
                b'\\' => self.escapes |= matches!(hay.get(i + 1), Some(b'u' | b'x' | b'/')),
                _ => {
                    self.percent |= hay
                        .get(i + 1..i + 3)
                        .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
                }
            }
            if self.ansi && self.escapes && self.percent {
                return true;
            }
        }
        false
    }
}

/// Bit `i` set when `block[i]` is ESC, `\` or `%`.
#[cfg(target_arch = "x86_64")]
#[inline]
fn lead_bits(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline, so these intrinsics are always available.
    sse2_bits(block, |x| unsafe {
        let is = |b: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(b as i8));
        _mm_or_si128(is(0x1b), _mm_or_si128(is(b'\\'), is(b'%')))
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn lead_bits(block: &[u8; 64]) -> u64 {
    bytewise_lead_bits(block)
}

/// [`lead_bits`] 32 bytes to a compare, where the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lead_bits_avx2(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    avx2_bits(block, |x| {
        let is = |b: u8| _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b as i8));
        _mm256_or_si256(is(0x1b), _mm256_or_si256(is(b'\\'), is(b'%')))
    })
}

/// [`lead_bits`] a byte at a time: for the last, shorter block, and where no SIMD test is
/// compiled. At most 64 bytes.
fn bytewise_lead_bits(bytes: &[u8]) -> u64 {
    bits_where(bytes, |b| matches!(b, 0x1b | b'\\' | b'%'))
}

/// Bit `i` set when `test` marks byte `i` of `block` (all ones in its lane), 16 bytes to a
/// test by SSE2: the mask of a block that the views' passes read 64 bytes a step.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn sse2_bits(
    block: &[u8; 64],
    test: impl Fn(std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i,
) -> u64 {
    use std::arch::x86_64::*;
    let mut bits = 0u64;
    for k in 0..4 {
        // SAFETY: SSE2 is part of the x86_64 baseline; the load reads 16 bytes at offset 0,
        // 16, 32 or 48 of the 64-byte `block`.
        let mask =
            unsafe { _mm_movemask_epi8(test(_mm_loadu_si128(block.as_ptr().add(16 * k).cast()))) };
        bits |= u64::from(mask as u16) << (16 * k);
    }
    bits
}

/// [`sse2_bits`] 32 bytes to a test, for the passes compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn avx2_bits(
    block: &[u8; 64],
    test: impl Fn(std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i,
) -> u64 {
    use std::arch::x86_64::*;
    let mut bits = 0u64;
    for k in 0..2 {
        // SAFETY: reads 32 bytes at offset 0 or 32 of the 64-byte `block`.
        let x = unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * k).cast()) };
        bits |= u64::from(_mm256_movemask_epi8(test(x)) as u32) << (32 * k);
    }
    bits
}

/// Bit `i` set when `is(bytes[i])`, a byte at a time: a block's last bytes, and where no
/// SIMD test is compiled. At most 64 bytes.
fn bits_where(bytes: &[u8], is: impl Fn(u8) -> bool) -> u64 {
    bytes
        .iter()
        .enumerate()
        .fold(0, |bits, (i, &b)| bits | u64::from(is(b)) << i)
}

/// JSON and Python string escapes decoded everywhere in `hay` (`\uXXXX`, `\xHH`, `\/`, `\n`,
/// quotes); anything else is kept as written.
fn unescape_all(hay: &[u8]) -> View {
    let mut v = json::unescape(hay, 0);
    // Python's `\xHH` is not JSON; decode it in a second, mapped pass. The text between
    // escapes is copied a span at a time, its offsets a run at a time: offset by offset,
    // each a search of the first pass's map, this was 9 % of a scan of real code.
    if memchr::memmem::find(&v.bytes, b"\\x").is_some() {
        let b = &v.bytes;
        let mut w = View {
            bytes: Vec::with_capacity(b.len()),
            map: Map::default(),
        };
        let mut i = 0;
        for at in memchr::memmem::find_iter(b, b"\\x") {
            // A decoded escape's hex digits hold no backslash, so no `\x` starts inside
            // one; one that is not an escape is copied with the text after it.
            let Some(byte) = hex_byte(b.get(at + 2..at + 4)).filter(|_| at >= i) else {
                continue;
            };
            w.bytes.extend_from_slice(&b[i..at]);
            w.map.extend_from(&v.map, i, at + 1);
            w.bytes.push(byte);
            i = at + 4;
        }
        w.bytes.extend_from_slice(&b[i..]);
        w.map.extend_from(&v.map, i, v.map.len());
        v = w;
    }
    v
}

/// The byte two hex digits spell, if `h` is two hex digits.
fn hex_byte(h: Option<&[u8]>) -> Option<u8> {
    let digit = |c: u8| (c as char).to_digit(16);
    match h? {
        &[a, b] => Some((digit(a)? * 16 + digit(b)?) as u8),
        _ => None,
    }
}

/// `hay` with its percent-encoding (`%2B`) decoded, for a value read on its own (a query
/// parameter) rather than scanned as a view.
pub fn percent_decoded(hay: &[u8]) -> Vec<u8> {
    percent(hay).bytes
}

/// Percent-encoding (`%2B`) decoded everywhere in `hay`.
fn percent(hay: &[u8]) -> View {
    let mut v = View {
        bytes: Vec::with_capacity(hay.len()),
        map: Map::default(),
    };
    let mut i = 0;
    while i < hay.len() {
        // The text up to the next `%`, copied whole.
        let pct = memchr::memchr(b'%', &hay[i..]).map_or(hay.len(), |p| i + p);
        v.push_copied(&hay[i..pct], i);
        i = pct;
        if i == hay.len() {
            break;
        }
        v.map.push(i);
        match hex_byte(hay.get(i + 1..i + 3)) {
            Some(byte) => {
                v.bytes.push(byte);
                i += 3;
            }
            None => {
                v.bytes.push(b'%');
                i += 1;
            }
        }
    }
    v.map.push(hay.len());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_csi_and_osc() {
        let super::View { bytes: v, map: m } = strip_ansi(b"a\x1b[31mb\x1b]0;title\x07c\x1b[0m");
        assert_eq!(v, b"abc");
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![0, 6, 17, 22]);
    }

    #[test]
    fn strips_charset_selection_and_string_escapes_whole() {
        // `ESC ( B` (tput sgr0 writes it) must not leave its `B` glued to what follows.
        assert_eq!(strip_ansi(b"\x1b(BAKIA x\x1b)0y").bytes, b"AKIA xy");
        assert_eq!(strip_ansi(b"a\x1bPq#0\x1b\\b\x1b_app\x07c").bytes, b"abc");
        assert_eq!(strip_ansi(b"a\x1b(").bytes, b"a");
    }

    /// What a reader sees: an invisible character (or a group of them, an escape among them)
    /// inside a word is left out and the word is whole, mapped back byte for byte; one beside
    /// a blank, a tab, a line end (a lone CR is one) and visible text outside ASCII stay.
    #[test]
    fn invisible_characters_inside_a_word_are_left_out() {
        for (hay, shown) in [
            (&b"ab\x00cd"[..], &b"abcd"[..]),
            ("ab\u{200b}cd".as_bytes(), b"abcd"),
            ("ab\u{ad}\u{feff}cd".as_bytes(), b"abcd"),
            (b"ab\x08\x1b[0m\x7fcd", b"abcd"),
            (b"ab\rcd", b"ab\rcd"),
            (b"ab\r\ncd", b"ab\r\ncd"),
            (b"ab \x00cd", b"ab \x00cd"),
            (b"ab\tcd", b"ab\tcd"),
            ("ab\u{200b}".as_bytes(), "ab\u{200b}".as_bytes()),
            // Unicode's default-ignorables: a grapheme joiner, a variation selector, a tag,
            // a Hangul filler.
            (
                "ab\u{34f}c\u{fe0f}d\u{e0041}e\u{3164}f".as_bytes(),
                b"abcdef",
            ),
            // Written as the escapes programs print.
            (br"ab\u200bcd", b"abcd"),
            (br"ab\u{200B}cd", b"abcd"),
            (br"ab\xadc\U000e0041d", b"abcd"),
            (br"ab\udb40\udc41cd", b"abcd"),
            (br"ab\u0041cd\ne\u{a0}f\xzz", br"ab\u0041cd\ne\u{a0}f\xzz"),
            ("ab\u{a0}cd".as_bytes(), "ab\u{a0}cd".as_bytes()),
            (br"ab\bc\0d\x{200b}e\xe2\x80\x8bf", b"abcdef"),
            (br"ab\u001b[0mc\x1b[31md\033[1;2me\e[mf", b"abcdef"),
            (b"ab%E2%80%8Bc%00d%C2%ADe", b"abcde"),
            (
                br"ab%20c\012d\xe9e%41f\u001bg",
                br"ab%20c\012d\xe9e%41f\u001bg",
            ),
            (
                "caf\u{e9} \u{2014} d".as_bytes(),
                "caf\u{e9} \u{2014} d".as_bytes(),
            ),
        ] {
            let v = visible(hay);
            assert_eq!(v.bytes, shown, "{hay:?}");
            assert!(has_hidden(hay) || v.bytes == hay, "{hay:?}");
            // Each byte shown maps to the same byte of the input.
            for (i, &b) in v.bytes.iter().enumerate() {
                assert_eq!(hay[v.map.get(i)], b, "{hay:?} at {i}");
            }
            assert_eq!(v.map.get(v.bytes.len()), hay.len());
        }
        // Text with nothing hidden is not copied into a view at all by its readers, a dash
        // or a quote mark outside ASCII neither; each hidden character is seen anywhere.
        assert!(!has_hidden(b"plain text\nand a tab\t"));
        assert!(!has_hidden(br#"print("a\tb\n", "\u00e9\\", '\x41')"#));
        assert!(!has_hidden(
            "caf\u{e9} \u{2014} \u{2019}d\u{a0}".repeat(40).as_bytes()
        ));
        for hidden in [
            "\0", "\u{8}", "\u{1b}", "\u{7f}", "\u{ad}", "\u{200b}", "\u{feff}",
        ] {
            for at in [0, 63, 64, 100] {
                let mut text = "x".repeat(130);
                text.insert_str(at, hidden);
                assert!(has_hidden(text.as_bytes()), "{hidden:?} at {at}");
            }
        }
    }

    /// The one pass finds what a search for each lead finds, wherever it is and whatever
    /// comes after it (a lead at the very end has nothing after it), by either SIMD test.
    #[test]
    fn leads_are_found_as_separate_searches_find_them() {
        let by_search = |hay: &[u8]| Leads {
            ansi: memchr::memchr(0x1b, hay).is_some(),
            escapes: [&b"\\u"[..], b"\\x", b"\\/"]
                .iter()
                .any(|p| memchr::memmem::find(hay, p).is_some()),
            percent: hay
                .windows(3)
                .any(|w| w[0] == b'%' && w[1..].iter().all(u8::is_ascii_hexdigit)),
        };
        let pieces: [&[u8]; 12] = [
            b"\x1b[0m",
            b"\\u0041",
            b"\\x41",
            b"\\/",
            b"\\n",
            b"\\",
            b"%2B",
            b"%2",
            b"%zz",
            b"%",
            b"plain text ",
            b"\x1b",
        ];
        // After padding that puts the pieces across the edges of the pass's 64-byte steps,
        // and in its last, shorter one.
        for pad in [0, 50, 61, 62, 63, 64, 120] {
            for a in pieces {
                for b in pieces {
                    for c in pieces {
                        let hay = [&b"x".repeat(pad)[..], a, b, c].concat();
                        assert_eq!(Leads::of(&hay), by_search(&hay), "{hay:?}");
                        // The SSE2 pass too, where the CPU took the AVX2 one above.
                        assert_eq!(Leads::by(&hay, lead_bits), by_search(&hay), "{hay:?}");
                    }
                }
            }
        }
        let hay = [&b"x".repeat(5000)[..], b"\\u", b"%4", b"1"].concat();
        assert_eq!(Leads::of(&hay), by_search(&hay));
        assert!(Leads::of(&hay).escapes && Leads::of(&hay).percent);
    }

    /// The `\xHH` pass copies spans and map runs; byte by byte, through `Map::get`, it
    /// must come out the same, on text mixing escapes that decode and ones that do not.
    #[test]
    fn python_escapes_decode_as_byte_by_byte() {
        let by_byte = |hay: &[u8]| {
            let v = json::unescape(hay, 0);
            let (b, mut w, mut i) = (&v.bytes, View::default(), 0);
            while i < b.len() {
                let byte = match (b[i], b.get(i + 1)) {
                    (b'\\', Some(b'x')) => hex_byte(b.get(i + 2..i + 4)),
                    _ => None,
                };
                w.bytes.push(byte.unwrap_or(b[i]));
                w.map.push(v.map.get(i));
                i += if byte.is_some() { 4 } else { 1 };
            }
            w.map.push(v.map.last().unwrap_or(hay.len()));
            w
        };
        let pieces: [&[u8]; 12] = [
            br"\x41",
            br"\x4",
            br"\xZZ",
            br"\x",
            br"\\x41",
            br"\u0041",
            br"\n",
            b"\\",
            b"ab",
            b"x",
            br"\x5c",
            br"\x5cx42",
        ];
        let mut rng = 0x2545f4914f6cdd1du64;
        for _ in 0..3000 {
            let mut hay = Vec::new();
            for _ in 0..rng % 9 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                hay.extend_from_slice(pieces[(rng % 12) as usize]);
            }
            if memchr::memmem::find(&json::unescape(&hay, 0).bytes, b"\\x").is_some() {
                assert_eq!(
                    unescape_all(&hay),
                    by_byte(&hay),
                    "{:?}",
                    String::from_utf8_lossy(&hay)
                );
            }
        }
    }

    #[test]
    fn percent_and_escapes_map_back() {
        let v = percent(b"a%2Bb");
        assert_eq!(v.bytes, b"a+b");
        assert_eq!(v.original(1, 2), (1, 4));
        let e = unescape_all(br"x\x41\u0042");
        assert_eq!(e.bytes, b"xAB");
        assert_eq!(e.original(1, 2), (1, 5));
    }

    #[test]
    fn utf16_detected_with_and_without_bom() {
        let le: Vec<u8> = "KEY=value here and more text"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(utf16(&le).unwrap().bytes, b"KEY=value here and more text");
        let mut be = vec![0xFE, 0xFF];
        be.extend(
            "hello world, long enough"
                .encode_utf16()
                .flat_map(|u| u.to_be_bytes()),
        );
        let v = utf16(&be).unwrap();
        assert_eq!(v.bytes, b"hello world, long enough");
        assert_eq!(v.original(0, 1), (2, 4));
        assert!(utf16(b"plain ascii text, nothing else here").is_none());
        // And back: each original offset where a character starts, to its first decoded
        // byte. `é` is two bytes of UTF-8 from one UTF-16 unit.
        let mut le = vec![0xFF, 0xFE];
        le.extend(
            "hé there, long enough"
                .encode_utf16()
                .flat_map(|u| u.to_le_bytes()),
        );
        let v = utf16_view(&le).unwrap();
        assert_eq!(&v.bytes[..4], "hé ".as_bytes());
        assert_eq!(
            [0, 2, 4, 6, 8].map(|o| v.decoded_at(o)),
            [0, 0, 1, 3, 4],
            "the BOM is before the text"
        );
        assert_eq!(v.decoded_at(le.len()), v.bytes.len());
        assert_eq!(v.decoded_at(le.len() + 10), v.bytes.len());
        // Lone surrogates decode to U+FFFD rather than failing.
        let bad: Vec<u8> = [0xFF, 0xFE, 0x00, 0xD8, b'a', 0, b'b', 0].to_vec();
        assert_eq!(utf16(&bad).unwrap().bytes, "\u{FFFD}ab".as_bytes());
    }

    #[test]
    fn base64_values_keep_their_names() {
        use base64::Engine as _;
        let b = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
        let value = b(b"Rk3vT9pLm2Qx7Wz4Nb8Yc1Hd6Js0Fg5Ua3Ve9Ko2");
        let hay = format!("data:\n  AWS_SECRET_ACCESS_KEY: {value}\n");
        let vs = views(hay.as_bytes());
        let (_, v) = vs.iter().find(|(e, _)| *e == Encoding::Base64).unwrap();
        assert_eq!(
            v.bytes,
            b"  AWS_SECRET_ACCESS_KEY: Rk3vT9pLm2Qx7Wz4Nb8Yc1Hd6Js0Fg5Ua3Ve9Ko2"
        );
        // The name maps to itself, the value to its encoded span.
        let at = hay.find(&value).unwrap();
        assert_eq!(v.original(2, 23), (8, 29));
        let body = value.trim_end_matches('=').len();
        assert_eq!(v.original(25, v.bytes.len()), (at, at + body));
        // A block that is not a value assigned to a name stays as it was.
        let bare = views(format!("{value}\n").as_bytes());
        assert_eq!(bare[0].1.bytes, b"Rk3vT9pLm2Qx7Wz4Nb8Yc1Hd6Js0Fg5Ua3Ve9Ko2");
    }

    #[test]
    fn base64_nested_and_binary_skipped() {
        use base64::Engine as _;
        let b = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
        let inner = b(b"password = hunter2hunter2hunter2");
        let outer = b(format!("config: {inner}").as_bytes());
        let vs = views(format!("data: {outer}\n").as_bytes());
        // The inner value, an assignment of its own, keeps its own name rather than take
        // the one it is assigned to inside the outer one (`config: password = …` would hide
        // `password` from the rules).
        assert!(vs
            .iter()
            .any(|(_, v)| v.bytes == b"password = hunter2hunter2hunter2"));
        assert!(vs
            .iter()
            .all(|(_, v)| !v.bytes.starts_with(b"config: password")));
        let binary = b(&[
            0u8, 1, 2, 3, 250, 251, 252, 253, 254, 255, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
        ]);
        assert!(views(binary.as_bytes()).is_empty());
    }

    /// Each bound [`views`] promises, counted: nesting depth, decoded bytes, input size.
    /// (tests/it/decode.rs holds the same from the outside, by what a scan finds.)
    #[test]
    fn decoding_is_bounded() {
        use base64::Engine as _;
        let b = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
        // Ten deep: two base64 views, the outer two layers, and no more.
        let mut s = b"token = ten layers down, plainly readable text".to_vec();
        for _ in 0..10 {
            s = b(&s).into_bytes();
        }
        let vs = views(&s);
        let base64 = vs.iter().filter(|(e, _)| *e == Encoding::Base64).count();
        // The documented depth (README: "nested two deep"), not MAX_DEPTH itself: a test
        // against the constant would pass whatever it were set to.
        assert_eq!(base64, 2, "views of ten layers");
        // Many blocks that each decode to text: decoding stops once the budget is spent
        // (the last block may overshoot it by its own size).
        let line = b(&b"a line of configuration text, all printable ".repeat(90));
        let block = line.len();
        let hay = format!("{line}\n").repeat((12 << 20) / (block + 1));
        assert!(hay.len() <= MAX_INPUT);
        let decoded: usize = views(hay.as_bytes())
            .iter()
            .map(|(_, v)| v.bytes.len())
            .sum();
        assert!(decoded > MAX_DECODED / 2, "{decoded} bytes decoded");
        assert!(decoded <= MAX_DECODED + block, "{decoded} bytes decoded");
        // Past the input limit, nothing is decoded at all; but UTF-16 text is read as text
        // at any size, without views of its own past the limit.
        let big = format!("{line}\n").repeat(MAX_INPUT / (block + 1) + 1);
        assert!(big.len() > MAX_INPUT);
        assert!(views(big.as_bytes()).is_empty());
        let wide: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(big.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let vs = views(&wide);
        assert_eq!(vs.len(), 1);
        assert_eq!(
            (vs[0].0, &vs[0].1.bytes[..]),
            (Encoding::Utf16, big.as_bytes())
        );
    }
}
