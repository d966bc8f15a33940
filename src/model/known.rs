//! Masking by value: the secrets seen so far in a run, a stream, an event or a document, each
//! masked wherever it appears, not only where a rule found it. A key named once
//! (`AWS_SECRET_ACCESS_KEY=…`) and repeated bare (`saved secret …`) is masked both times.

use std::collections::HashMap;

/// Values shorter than this are masked only where a rule finds them: a four-letter password
/// masked wherever it appears would garble ordinary words, and shows no five-character piece.
pub const MIN_VALUE: usize = 5;

/// A prefix at least this long, at the very end of what has arrived, is held (and masked at
/// the end of a stream) when a known value could continue it.
pub const MIN_PREFIX: usize = 4;

/// A piece this long of a value added with [`Known::add_with_pieces`] is found wherever it
/// appears: a value printed in part (the first half of an AWS secret, a GitHub token's body
/// without its `ghp_`) shows no piece as long.
pub const PIECE: usize = 10;

/// Secret values and the rule that named each. No `Debug` of the values: it prints counts.
#[derive(Default)]
pub struct Known {
    /// The pieces of the values added with [`Known::add_with_pieces`] (a masker's generated
    /// ones); a scan's run, which learns tens of thousands of values, keeps none.
    pieces: Pieces,
    /// Each value once, with the index of the rule that first found it.
    values: Vec<(Box<[u8]>, usize)>,
    index: HashMap<Box<[u8]>, usize, FastHash>,
    /// Values by their first and by their last [`MIN_PREFIX`] bytes: where a piece cut off
    /// at an edge is looked up, in time independent of how many values there are.
    /// Looked up once per byte of a context's edges, for every finding of a run: with the
    /// default SipHash these lookups were most of a scan's single-threaded end.
    heads: HashMap<[u8; MIN_PREFIX], Vec<usize>, FastHash>,
    tails: HashMap<[u8; MIN_PREFIX], Vec<usize>, FastHash>,
    /// Values by their head, their first [`HEAD`] bytes (the whole value when shorter): at
    /// each place a text may hold one, one look-up per head length, then a comparison with
    /// each value of the bucket, or for a bucket of many, a look-up per length in `index`.
    by_head: HashMap<Head, Bucket, FastHash>,
    /// The head lengths some value has: bit `len` for each.
    head_lens: u32,
    /// One bit per hash of a value's first four bytes, at most one in [`SPARSE`] set: most
    /// places in a text start no value and are passed over by one load and one test. Before,
    /// an Aho-Corasick automaton per run of values (a binary counter of them, so that a
    /// stream adding a few at each flush did not rebuild them all): a stream's search read
    /// its text once per automaton, over half of `filter`'s time on the generated corpus.
    starts: Vec<u64>,
    /// The same for a value's last four bytes. Both are tested before `heads` or `tails` is
    /// looked up at each length of a context's edges: a run's end looked up each of a
    /// context's edge pieces, up to the longest value's length at both ends, for each of
    /// thousands of findings.
    ends: Vec<u64>,
    /// log2 of the number of bits in `starts` and in `ends`.
    bits: u32,
    longest: usize,
}

/// The windows of a value its pieces are found by: [`WINDOW`] bytes at every [`STRIDE`]th
/// offset (and at its end), so that any run of [`PIECE`] bytes of it holds one whole. Every
/// offset's window made the index, and the bitset a text is tested against at each byte,
/// three times the size; a stream that met tens of thousands of values then ran at half its
/// speed, the bitset's loads missing the cache.
const WINDOW: usize = 8;
const STRIDE: usize = PIECE - WINDOW + 1;

/// The windows of the values added with their pieces ([`varied`] ones), and where each is in
/// which value.
#[derive(Default)]
struct Pieces {
    windows: HashMap<[u8; WINDOW], Vec<(u32, u32)>, FastHash>,
    /// Two bits of one word per window, from a hash of its eight bytes (a Bloom filter of
    /// one load): most places in a text begin no window and are passed over by one load
    /// and a test. Sixteen bits of it a window, two of them set, let one place in about
    /// sixty-four pass by chance; one bit set passed one in sixteen, and the look-ups there,
    /// or a second table's load, made a stream that met tens of thousands of values a third
    /// slower.
    filter: Vec<u64>,
    /// log2 of the words in `filter`.
    words: u32,
}

/// The word of a [`Pieces::filter`] of `2^words` words for `w`, and its two bits.
fn filter_bits(w: &[u8; WINDOW], words: u32) -> (usize, u64) {
    let h = u64::from_le_bytes(*w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let word = (h >> (64 - words)) as usize;
    (word, 1 << (h & 63) | 1 << ((h >> 6) & 63))
}

impl Pieces {
    fn add(&mut self, value: &[u8], i: usize) {
        if value.len() < PIECE {
            return;
        }
        let last = value.len() - WINDOW;
        let offsets = (0..=last)
            .step_by(STRIDE)
            .chain((!last.is_multiple_of(STRIDE)).then_some(last));
        let mut added = Vec::new();
        for at in offsets {
            let w: [u8; WINDOW] = value[at..at + WINDOW].try_into().expect("WINDOW bytes");
            if varied(&w) {
                self.windows
                    .entry(w)
                    .or_default()
                    .push((i as u32, at as u32));
                added.push(w);
            }
        }
        if added.is_empty() {
            return;
        }
        // A word per four windows: two bits of its sixty-four set for each, an eighth in all.
        if self.windows.len() > 4 << self.words || self.filter.is_empty() {
            self.words = (self.windows.len() / 4)
                .next_power_of_two()
                .trailing_zeros()
                .clamp(MIN_BITS - 6, 25);
            self.filter = vec![0; 1 << self.words];
            added = self.windows.keys().copied().collect();
        }
        for w in &added {
            let (word, bits) = filter_bits(w, self.words);
            self.filter[word] |= bits;
        }
    }
}

/// Where a value's own characters begin: after the prefix its format gives it, the last `_`
/// or `-` in its first nine bytes (`sk_live_`, `ghp_`, `xoxb-`, `glpat-`), else at once.
fn lead(value: &[u8]) -> usize {
    value[..value.len().min(9)]
        .iter()
        .rposition(|&b| b == b'_' || b == b'-')
        .map_or(0, |p| p + 1)
}

/// Whether a window of a generated value is worth finding: five different bytes at least,
/// so that a run of one character (`AAAAAAAA` in a key's padding) is not one.
fn varied(w: &[u8]) -> bool {
    let mut seen = [0u64; 4];
    for &b in w {
        seen[usize::from(b >> 6)] |= 1 << (b & 63);
    }
    seen.iter().map(|s| s.count_ones()).sum::<u32>() >= 5
}

/// A value's head is at most this long: values that share their first bytes (every AWS key
/// id begins `AKIA`) share a bucket only as far as that, and 200,000 of them do not make one
/// bucket to compare against at every `AKIA`.
const HEAD: usize = 8;

/// The values with one head, and the lengths they come in (sorted, each once).
#[derive(Default)]
struct Bucket {
    values: Vec<usize>,
    lens: Vec<usize>,
}

/// A head's bytes, zero-padded, and its length.
type Head = ([u8; HEAD], u8);

fn head(b: &[u8]) -> Head {
    let n = b.len().min(HEAD);
    let mut h = [0; HEAD];
    h[..n].copy_from_slice(&b[..n]);
    (h, n as u8)
}

/// `starts` has at least this many bits per value, and at least `2^MIN_BITS`.
const SPARSE: usize = 16;
const MIN_BITS: u32 = 12;

/// A quick hasher, seeded per process: values and their edges are looked up by the hundred
/// thousand at the end of a run, on one thread.
type FastHash = foldhash::fast::RandomState;

/// The bit of `starts` (of `2^bits`) for a text's four bytes at a place.
fn slot(four: [u8; MIN_PREFIX], bits: u32) -> usize {
    (u32::from_le_bytes(four).wrapping_mul(0x9E37_79B1) >> (32 - bits)) as usize
}

/// Sets the bit of `table` (of `2^bits`) for four bytes of a value.
fn mark(table: &mut [u64], four: [u8; MIN_PREFIX], bits: u32) {
    let b = slot(four, bits);
    table[b / 64] |= 1 << (b % 64);
}

/// Sets the bits of `starts` and `ends` for `value`'s first and last four bytes.
fn mark_edges(starts: &mut [u64], ends: &mut [u64], value: &[u8], bits: u32) {
    mark(starts, four(value), bits);
    mark(ends, four(&value[value.len() - MIN_PREFIX..]), bits);
}

/// Whether the bit of `table` (of `2^bits`) for `four` is set.
fn marked(table: &[u64], four: [u8; MIN_PREFIX], bits: u32) -> bool {
    let b = slot(four, bits);
    table.get(b / 64).is_some_and(|w| w & (1 << (b % 64)) != 0)
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
        k.by_head.reserve(n);
        k
    }

    /// Whether `value` (as [`Known::add`] trims it) is known.
    pub fn contains(&self, value: &[u8]) -> bool {
        self.index.contains_key(value.trim_ascii())
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Remember `value`, found by `rule`, and the forms it takes encoded ([`encoded`]): a
    /// secret named once is masked where it is repeated in a URL, a JSON string or base64.
    /// Returns whether it was new. Values shorter than [`MIN_VALUE`] (after trimming the
    /// whitespace a decoded view may carry) are not kept.
    pub fn add(&mut self, value: &[u8], rule: usize) -> bool {
        self.add_forms(value, rule, false)
    }

    /// [`Known::add`], and a piece of `value` at least [`PIECE`] long is found too: for a
    /// value that looks generated, whose pieces no other text holds (a masker decides, by
    /// the engine's test: a name made of words shares its pieces with other names).
    pub fn add_with_pieces(&mut self, value: &[u8], rule: usize) -> bool {
        self.add_forms(value, rule, true)
    }

    fn add_forms(&mut self, value: &[u8], rule: usize, pieces: bool) -> bool {
        let value = value.trim_ascii();
        if !self.add_one(value, rule, pieces) {
            return false;
        }
        // Not the pieces of its encoded forms: base64 of a text holding words shares
        // windows with base64 of other such text.
        for form in encoded(value) {
            self.add_one(&form, rule, false);
        }
        true
    }

    /// [`Known::add`] of `value` alone; its pieces are found too when `pieces`.
    fn add_one(&mut self, value: &[u8], rule: usize, pieces: bool) -> bool {
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
        let h = head(value);
        let bucket = self.by_head.entry(h).or_default();
        bucket.values.push(i);
        if let Err(at) = bucket.lens.binary_search(&value.len()) {
            bucket.lens.insert(at, value.len());
        }
        self.head_lens |= 1 << h.1;
        if pieces {
            self.pieces.add(value, i);
        }
        self.values.push((value.into(), rule));
        self.longest = self.longest.max(value.len());
        if self.values.len() * SPARSE > 1 << self.bits {
            // Doubled as values come: each is set again a constant number of times on average.
            let bits = (self.values.len() * SPARSE)
                .next_power_of_two()
                .trailing_zeros();
            self.bits = bits.clamp(MIN_BITS, 31);
            self.starts = vec![0; (1 << self.bits) / 64];
            self.ends = vec![0; (1 << self.bits) / 64];
            for (v, _) in &self.values {
                mark_edges(&mut self.starts, &mut self.ends, v, self.bits);
            }
        } else {
            mark_edges(&mut self.starts, &mut self.ends, value, self.bits);
        }
        true
    }

    /// A copy whose values that look generated ([`crate::engine::looks_generated`]) are
    /// found by their pieces too: what a run's command hooks inherit and print is checked
    /// against it, where a token without its prefix or a part of a secret is the secret's.
    pub fn with_pieces(&self) -> Known {
        let mut k = Known::with_capacity(self.values.len());
        for (v, rule) in &self.values {
            k.add_one(v, *rule, crate::engine::looks_generated(v));
        }
        k
    }

    /// Remember every value of `found` (as `Detection::values` lists them).
    pub fn learn<'a>(&mut self, found: impl IntoIterator<Item = (&'a [u8], usize)>) {
        for (v, rule) in found {
            self.add(v, rule);
        }
    }

    /// Remember every value `other` holds (its encoded forms are among them).
    pub fn absorb(&mut self, other: Known) {
        for (v, rule) in other.values {
            self.add_one(&v, rule, false);
        }
    }

    /// The longest value: no occurrence is longer.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// Every occurrence of every value in `hay`, overlapping ones too, by start.
    pub fn find(&self, hay: &[u8]) -> Vec<Occurrence> {
        self.find_after(hay, 0)
    }

    /// [`Known::find`] of the occurrences that end after `from` (and maybe some that do
    /// not): a stream's flush reads its last kilobyte of context again with each new line,
    /// and what lies wholly in it was masked before.
    pub fn find_after(&self, hay: &[u8], from: usize) -> Vec<Occurrence> {
        let mut out = Vec::new();
        if self.values.is_empty() || hay.len() < MIN_VALUE {
            return out;
        }
        // No occurrence is longer than the longest value.
        let lo = from.saturating_sub(self.longest).min(hay.len() - MIN_VALUE);
        for s in lo..=hay.len() - MIN_VALUE {
            let rest = &hay[s..];
            if !marked(&self.starts, four(rest), self.bits) {
                continue;
            }
            for n in (MIN_VALUE..=HEAD.min(rest.len())).filter(|n| self.head_lens & 1 << n != 0) {
                let Some(bucket) = self.by_head.get(&head(&rest[..n])) else {
                    continue;
                };
                let mut at = |i: usize| {
                    let (v, rule) = &self.values[i];
                    out.push(Occurrence {
                        start: s,
                        end: s + v.len(),
                        rule: *rule,
                    });
                };
                if bucket.values.len() <= bucket.lens.len() {
                    for &i in &bucket.values {
                        if rest.starts_with(&self.values[i].0) {
                            at(i);
                        }
                    }
                } else {
                    // Many values with one head (every JWT begins `eyJhbGci`): one look-up
                    // per length they come in, not a comparison with each of them.
                    for &len in bucket.lens.iter().take_while(|&&len| len <= rest.len()) {
                        if let Some(&i) = self.index.get(&rest[..len]) {
                            at(i);
                        }
                    }
                }
            }
        }
        self.find_pieces(hay, lo, &mut out);
        out.sort_by_key(|o| (o.start, std::cmp::Reverse(o.end)));
        out
    }

    /// Each run of `hay` at least [`PIECE`] long that some value holds, as long as it goes
    /// on matching that value both ways from a window of it at `lo` or after.
    fn find_pieces(&self, hay: &[u8], lo: usize, out: &mut Vec<Occurrence>) {
        let p = &self.pieces;
        if hay.len() < PIECE || p.windows.is_empty() {
            return;
        }
        // The whole values found (by start, as `find` lists them) and, for each, the
        // furthest end of those up to it: a piece inside a whole occurrence is no new one.
        let whole: Vec<(usize, usize)> = out
            .iter()
            .scan(0, |reach, o| {
                *reach = o.end.max(*reach);
                Some((o.start, *reach))
            })
            .collect();
        let inside = |a: usize, e: usize| {
            let i = whole.partition_point(|&(start, _)| start <= a);
            i > 0 && whole[i - 1].1 >= e
        };
        // The end of the last run found: a window inside it adds nothing.
        let mut reach = 0;
        for s in lo.min(hay.len() - WINDOW)..=hay.len() - WINDOW {
            let key: [u8; WINDOW] = hay[s..s + WINDOW].try_into().expect("WINDOW bytes");
            let (word, bits) = filter_bits(&key, p.words);
            if p.filter[word] & bits != bits {
                continue;
            }
            let Some(places) = p.windows.get(&key) else {
                continue;
            };
            for &(i, at) in places {
                let (value, rule) = &self.values[i as usize];
                let at = at as usize;
                let back = hay[..s]
                    .iter()
                    .rev()
                    .zip(value[..at].iter().rev())
                    .take_while(|(a, b)| a == b)
                    .count();
                let on = hay[s..]
                    .iter()
                    .zip(&value[at..])
                    .take_while(|(a, b)| a == b)
                    .count();
                // Only what lies past a token's format prefix counts: `sk_live_kF` of one
                // Stripe key is in thousands of others.
                let own = (at + on).saturating_sub((at - back).max(lead(value)));
                if s + on > reach && own >= PIECE && !inside(s - back, s + on) {
                    reach = s + on;
                    out.push(Occurrence {
                        start: s - back,
                        end: s + on,
                        rule: *rule,
                    });
                }
            }
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
            let first = four(&piece[..MIN_PREFIX]);
            if !marked(&self.starts, first, self.bits) {
                continue;
            }
            let Some(candidates) = self.heads.get(&first) else {
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
            let last = four(&piece[k - MIN_PREFIX..]);
            if !marked(&self.ends, last, self.bits) {
                continue;
            }
            let Some(candidates) = self.tails.get(&last) else {
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

/// The forms `value` takes where a program encodes it, each differing from it: in a URL
/// (percent-encoded as Python's `quote(v, safe="")` and JavaScript's `encodeURIComponent`
/// write it, hex in either case), in a JSON string (with `/` escaped as PHP writes it, or
/// not), and base64 of it alone (standard and URL-safe, without the padding, which then
/// shows). Base64 of a longer text holding it, the value at any offset, is not among them:
/// a decoded view finds what a rule finds there.
fn encoded(value: &[u8]) -> Vec<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    use base64::Engine as _;
    // Built only where they differ from the value: a run learns tens of thousands of values,
    // most of them letters and digits alone, whose only other form is base64.
    let mut forms = Vec::new();
    // A byte as two hex digits, in either case.
    let (upper, lower) = (b"0123456789ABCDEF", b"0123456789abcdef");
    let hex = |b: u8, digits: &[u8; 16]| [digits[usize::from(b >> 4)], digits[usize::from(b & 15)]];
    let unreserved = |b: &u8| b.is_ascii_alphanumeric() || b"-._~".contains(b);
    if !value.iter().all(unreserved) {
        let percent = |keep: &[u8], digits: &[u8; 16]| -> Vec<u8> {
            let mut out = Vec::with_capacity(value.len() * 3);
            for &b in value {
                if unreserved(&b) || keep.contains(&b) {
                    out.push(b);
                } else {
                    out.push(b'%');
                    out.extend_from_slice(&hex(b, digits));
                }
            }
            out
        };
        // JavaScript keeps `!*'()` as they are; Python encodes them.
        let keeps: &[&[u8]] = if value.iter().any(|b| b"!*'()".contains(b)) {
            &[b"", b"!*'()"]
        } else {
            &[b""]
        };
        for keep in keeps {
            let form = percent(keep, upper);
            if form.iter().any(|b| (b'A'..=b'F').contains(b)) {
                forms.push(percent(keep, lower));
            }
            forms.push(form);
        }
    }
    if value.iter().any(|b| b"\"\\/".contains(b)) {
        for slash in [false, true] {
            let mut out = Vec::with_capacity(value.len() + 8);
            for &b in value {
                match b {
                    b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
                    b'/' if slash => out.extend_from_slice(b"\\/"),
                    _ => out.push(b),
                }
            }
            forms.push(out);
        }
    }
    // A value found percent-encoded (a URL's password) is the text it spells: printed
    // decoded, it is the same secret.
    let decoded = crate::decode::percent_decoded(value);
    if decoded.len() < value.len() {
        forms.push(decoded);
    }
    // A generated value spelt a byte at a time: hex (`.hex()`, `xxd -p`), and every byte
    // escaped as JSON's `\u0061` or a C string's `\x61` writes it. Not for every value: a
    // run's tens of thousands of names would each take three long forms.
    if value.len() <= 128 && crate::engine::looks_generated(value) {
        let spelt = |lead: &[u8]| -> Vec<u8> {
            let mut out = Vec::with_capacity(value.len() * (lead.len() + 2));
            for &b in value {
                out.extend_from_slice(lead);
                out.extend_from_slice(&hex(b, lower));
            }
            out
        };
        forms.extend([spelt(b""), spelt(b"\\u00"), spelt(b"\\x")]);
    }
    let b64 = STANDARD_NO_PAD.encode(value).into_bytes();
    if b64.iter().any(|b| b"+/".contains(b)) {
        forms.push(URL_SAFE_NO_PAD.encode(value).into_bytes());
    }
    forms.push(b64);
    forms.retain(|f| f[..] != *value);
    forms
}

fn four(b: &[u8]) -> [u8; MIN_PREFIX] {
    let mut k = [0; MIN_PREFIX];
    k.copy_from_slice(&b[..MIN_PREFIX]);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value added with its pieces is found in a piece of [`PIECE`] bytes or more wherever
    /// the piece stands alone, as far as it goes on matching; a shorter one, and any piece of
    /// a value added whole, are not.
    #[test]
    fn a_piece_of_a_value_added_with_its_pieces_is_found_alone() {
        let value = "wJa1rXUtnFEMI/K7MDENG+bPxRfiCYz9k3Lq8vTd";
        let mut k = Known::new();
        assert!(k.add_with_pieces(value.as_bytes(), 3));
        // Every start and length of a piece from ten bytes on, with text around it.
        for start in 0..value.len() - PIECE {
            for len in PIECE..=value.len() - start {
                let text = format!("x {} y", &value[start..start + len]);
                let found: Vec<(usize, usize, usize)> = k
                    .find(text.as_bytes())
                    .iter()
                    .map(|o| (o.start, o.end, o.rule))
                    .collect();
                assert_eq!(found, vec![(2, 2 + len, 3)], "{text}");
            }
        }
        for start in 0..value.len() - PIECE {
            let text = format!("x {} y", &value[start..start + PIECE - 1]);
            assert!(k.find(text.as_bytes()).is_empty(), "{text}");
        }
        // A token's format prefix is not its own (every GitHub token begins `ghp_`): the
        // prefix and eight more characters are no piece; the prefix and ten more are.
        let token = "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";
        k.add_with_pieces(token.as_bytes(), 5);
        assert!(k.find(format!("x {}.", &token[..12]).as_bytes()).is_empty());
        assert_eq!(k.find(format!("x {}.", &token[..14]).as_bytes()).len(), 1);
        // The whole value is one occurrence, not also its pieces.
        assert_eq!(k.find(value.as_bytes()).len(), 1);
        let mut whole = Known::new();
        whole.add(value.as_bytes(), 3);
        assert!(whole.find(&value.as_bytes()[..20]).is_empty());
    }

    /// A value is found as programs write it encoded: in a URL (either case of hex), in a
    /// JSON string with `/` escaped, and as base64 of it alone; each such occurrence is
    /// masked whole. Absorbing a table adds no forms of forms.
    #[test]
    fn a_value_is_found_in_its_encoded_forms() {
        let value = "wJa1rXUtnFEMI/K7MDENG+bPxRfiCYz9k3Lq8vTd";
        let mut k = Known::new();
        assert!(k.add(value.as_bytes(), 7));
        let texts = [
            "url=wJa1rXUtnFEMI%2FK7MDENG%2BbPxRfiCYz9k3Lq8vTd&x=1".to_string(),
            "url=wJa1rXUtnFEMI%2fK7MDENG%2bbPxRfiCYz9k3Lq8vTd&x=1".to_string(),
            r#"{"s":"wJa1rXUtnFEMI\/K7MDENG+bPxRfiCYz9k3Lq8vTd"}"#.to_string(),
            format!("data: {}\n", {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD.encode(value)
            }),
        ];
        for t in &texts {
            let found = k.find(t.as_bytes());
            assert_eq!(found.len(), 1, "{t}");
            let o = found[0];
            let piece = &t[o.start..o.end];
            assert!(piece.len() >= value.len() && o.rule == 7, "{t}: {piece}");
            // What is left around it holds no piece of the value.
            let rest = [&t[..o.start], &t[o.end..]].concat();
            assert!(
                !rest.contains("wJa1") && !rest.contains("vTd") && !rest.contains("K7MD"),
                "{rest}"
            );
        }
        let n = k.len();
        assert!(n > 1 && n <= 9, "{n}");
        let mut again = Known::new();
        again.absorb(k);
        assert_eq!(again.len(), n);
    }

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

    /// Against a search of every value at every place: values short and long, sharing their
    /// first bytes (buckets of one head both small and large) and inside one another, added in
    /// turns between searches, past several growths of the table of first bytes.
    #[test]
    fn every_occurrence_is_found_as_values_grow() {
        let mut seed = 25u64;
        let mut below = |n: usize| crate::engine::below(&mut seed, n as u64) as usize;
        let alphabet = b"AKIabc019_";
        let mut k = Known::new();
        let mut all: Vec<Vec<u8>> = Vec::new();
        for round in 0..6 {
            for _ in 0..(40 << round) {
                let len = 5 + below(14);
                // A third share their first 5, 8 or 10 bytes with an earlier value: heads
                // shared by many values (as every JWT's) are looked up by length.
                let mut v: Vec<u8> = if below(3) == 0 && !all.is_empty() {
                    let w = &all[below(all.len())];
                    w[..w.len().min([5, 8, 10][below(3)])].to_vec()
                } else {
                    Vec::new()
                };
                while v.len() < len {
                    v.push(alphabet[below(alphabet.len())]);
                }
                if k.add(&v, v.len()) {
                    all.push(v);
                }
            }
            let mut hay = Vec::new();
            while hay.len() < 20_000 {
                if below(4) == 0 {
                    hay.extend_from_slice(&all[below(all.len())]);
                } else {
                    hay.push(alphabet[below(alphabet.len())]);
                }
            }
            let mut want: Vec<(usize, usize, usize)> = (0..hay.len())
                .flat_map(|s| {
                    let hay = &hay;
                    all.iter()
                        .filter(move |v| hay[s..].starts_with(v))
                        .map(move |v| (s, s + v.len(), v.len()))
                })
                .collect();
            want.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
            let got: Vec<_> = k
                .find(&hay)
                .iter()
                .map(|o| (o.start, o.end, o.rule))
                .collect();
            assert!(want.len() > 1000, "{}", want.len());
            assert_eq!(got, want, "round {round}, {} values", all.len());
        }
    }

    /// Pieces cut off at a context's edges, as values grow past each size of the tables that
    /// are tested before a piece is looked up, against every value compared with each edge.
    #[test]
    fn pieces_at_the_edges_are_found_as_values_grow() {
        let mut seed = 31u64;
        let mut below = |n: usize| crate::engine::below(&mut seed, n as u64) as usize;
        let alphabet = b"AKIabc019_";
        let mut k = Known::new();
        let mut all: Vec<Vec<u8>> = Vec::new();
        let mut found = [0usize; 2];
        for round in 0..6 {
            for _ in 0..(40 << round) {
                let v: Vec<u8> = (0..5 + below(20))
                    .map(|_| alphabet[below(alphabet.len())])
                    .collect();
                if k.add(&v, 0) {
                    all.push(v);
                }
            }
            let longest = all.iter().map(Vec::len).max().unwrap();
            for _ in 0..300 {
                // A value's end, some text, a value's beginning: as a clipped context holds them.
                let (a, b) = (&all[below(all.len())], &all[below(all.len())]);
                let mut text = a[a.len() - 1 - below(a.len() - 1)..].to_vec();
                text.extend((0..below(30)).map(|_| alphabet[below(alphabet.len())]));
                text.extend_from_slice(&b[..1 + below(b.len() - 1)]);
                let n = text.len();
                let most = (longest - 1).min(n);
                let prefix = (MIN_PREFIX..=most)
                    .rev()
                    .find(|&j| all.iter().any(|v| v.len() > j && v[..j] == text[n - j..]));
                let suffix = (MIN_PREFIX..=most).rev().find(|&j| {
                    all.iter()
                        .any(|v| v.len() > j && v[v.len() - j..] == text[..j])
                });
                let want: Vec<(usize, usize)> = prefix
                    .map(|j| (n - j, n))
                    .into_iter()
                    .chain(suffix.map(|j| (0, j)))
                    .collect();
                found[0] += usize::from(prefix.is_some());
                found[1] += usize::from(suffix.is_some());
                assert_eq!(k.pieces_at_edges(&text), want, "round {round}");
            }
        }
        assert!(found.iter().all(|&f| f > 500), "{found:?}");
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
