//! Identifiers made of words (`Rule::words`): `TKTokenKeychainItem` is a name, not a secret.

/// The words of [`made_of_words`]: frequent English words and the words of code, one a line
/// after the header's comment, in byte order (`LC_ALL=C sort -u`; a test checks).
const WORDS: &str = include_str!("words.txt");

/// [`WORDS`] without its header.
#[cfg(test)]
fn listed() -> &'static [u8] {
    &WORDS.as_bytes()[first_word(WORDS.as_bytes())..]
}

/// Whether `w` is a line of [`WORDS`]: a walk down [`TRIE`], from its trigram's node when
/// `w` starts with three letters.
fn in_dictionary(w: &str) -> bool {
    let w = w.as_bytes();
    let (mut node, rest) = match trigram(w) {
        Some(t) => (TRIGRAMS[t] as usize, &w[3..]),
        None => (0, w),
    };
    if node == 0 && rest.len() < w.len() {
        return false;
    }
    for &b in rest {
        match child(node, b) {
            Some(c) => node = c,
            None => return false,
        }
    }
    node != 0 && ends_word(node)
}

/// The first three letters (`a`-`z`) of a word as a number below 26³; `None` for a word
/// shorter than that or starting otherwise.
const fn trigram(w: &[u8]) -> Option<usize> {
    match w {
        [a, b, c, ..]
            if a.is_ascii_lowercase() && b.is_ascii_lowercase() && c.is_ascii_lowercase() =>
        {
            Some(((*a - b'a') as usize * 26 + (*b - b'a') as usize) * 26 + (*c - b'a') as usize)
        }
        _ => None,
    }
}

/// The listed words as a trie, its nodes in preorder, computed by the compiler. `segments`
/// asks about every piece of a value from 3 to 24 letters long, and from each place in it
/// the words it starts with; binary searches of the sorted text, one for each length with a
/// scan for the line's edges at each step, were 5 % of a directory scan's time. A walk down
/// the trie reads one node for each letter, and a node's children lie right after it, in
/// byte order. Node 0 is the root. Each node is one `u32`: bits 0–23 the index just past its
/// subtree (its next sibling's, or an ancestor's), bits 24–30 its byte, bit 31 set when a
/// word ends there. Computed by the compiler: a table of the list built at first use took a
/// hook event ~1.2 ms.
static TRIE: [u32; NODES] = TABLES.0;

/// Per [`trigram`], the node of the [`TRIE`] its three letters lead to; 0 (the root) when no
/// word starts with them, as most of a token's pieces do not.
static TRIGRAMS: [u32; 26 * 26 * 26] = TABLES.1;

const TABLES: ([u32; NODES], [u32; 26 * 26 * 26]) = trie(WORDS.as_bytes());
const NODES: usize = trie_nodes(WORDS.as_bytes());
const NEXT: u32 = (1 << 24) - 1;
const ENDS: u32 = 1 << 31;

/// Where the words of `text` start: past its header of `#` lines.
const fn first_word(text: &[u8]) -> usize {
    let mut at = 0;
    while at < text.len() && text[at] == b'#' {
        while at < text.len() && text[at] != b'\n' {
            at += 1;
        }
        at += 1;
    }
    at
}

/// The line of `text` at `start`: its end (before the newline, or the text's end).
const fn line_end(text: &[u8], start: usize) -> usize {
    let mut at = start;
    while at < text.len() && text[at] != b'\n' {
        at += 1;
    }
    at
}

/// How many bytes the lines at `a` and `b` (ending at `a_end`, `b_end`) share at their start.
const fn common(text: &[u8], a: usize, a_end: usize, b: usize, b_end: usize) -> usize {
    let mut l = 0;
    while a + l < a_end && b + l < b_end && text[a + l] == text[b + l] {
        l += 1;
    }
    l
}

/// The [`TRIE`]'s size for the words file `text`: the root and one node for each distinct
/// prefix, which in a sorted list is each line's length past what it shares with the line
/// before.
const fn trie_nodes(text: &[u8]) -> usize {
    let mut nodes = 1;
    let (mut at, mut prev, mut prev_end) = (first_word(text), 0, 0);
    while at < text.len() {
        let end = line_end(text, at);
        nodes += end - at - common(text, prev, prev_end, at, end);
        (prev, prev_end, at) = (at, end, end + 1);
    }
    nodes
}

/// The [`TRIE`] and [`TRIGRAMS`] of the words file `text`. The lines must be sorted bytewise
/// and unique, and ASCII: the build stops with an error otherwise.
const fn trie(text: &[u8]) -> ([u32; NODES], [u32; 26 * 26 * 26]) {
    let mut nodes = [0u32; NODES];
    let mut trigrams = [0u32; 26 * 26 * 26];
    // `path[d]`: the node of the previous line's byte `d`.
    let mut path = [0u32; 64];
    let mut n = 1;
    let (mut at, mut prev, mut prev_end) = (first_word(text), 0, 0);
    while at < text.len() {
        let end = line_end(text, at);
        let len = end - at;
        let l = common(text, prev, prev_end, at, end);
        assert!(
            len > l && len <= 64,
            "words.txt: an empty, repeated or long line"
        );
        assert!(
            l == prev_end - prev || text[at + l] > text[prev + l],
            "words.txt must be sorted bytewise"
        );
        // The previous line's nodes from byte `l` on: their subtrees end here.
        let mut d = l;
        while d < prev_end - prev {
            nodes[path[d] as usize] |= n as u32;
            d += 1;
        }
        let mut d = l;
        while d < len {
            let b = text[at + d];
            assert!(b.is_ascii(), "words.txt: a byte not ASCII");
            nodes[n] = (b as u32) << 24;
            path[d] = n as u32;
            if d == 2 {
                if let Some(t) = trigram(text.split_at(at).1) {
                    trigrams[t] = n as u32;
                }
            }
            n += 1;
            d += 1;
        }
        nodes[path[len - 1] as usize] |= ENDS;
        (prev, prev_end, at) = (at, end, end + 1);
    }
    let mut d = 0;
    while d < prev_end - prev {
        nodes[path[d] as usize] |= n as u32;
        d += 1;
    }
    assert!(n == NODES && n <= NEXT as usize);
    nodes[0] = n as u32;
    (nodes, trigrams)
}

/// The child of `node` by byte `b`: its children are the nodes from `node + 1` on, each
/// followed by its subtree, in byte order.
fn child(node: usize, b: u8) -> Option<usize> {
    let end = (TRIE[node] & NEXT) as usize;
    let mut i = node + 1;
    while i < end {
        let label = ((TRIE[i] >> 24) & 0x7f) as u8;
        if label >= b {
            return (label == b).then_some(i);
        }
        i = (TRIE[i] & NEXT) as usize;
    }
    None
}

/// Whether a listed word ends at `node`.
fn ends_word(node: usize) -> bool {
    TRIE[node] & ENDS != 0
}

/// Two-letter parts common in identifiers.
const SHORT_WORDS: &[&str] = &[
    "id", "db", "io", "ui", "os", "ok", "to", "by", "of", "in", "on", "at", "is", "no", "up", "pk",
    "sk", "my", "fs", "js", "py", "rs", "go", "tx", "rx", "ip", "vm", "ci", "cd", "or", "an", "as",
    "if", "be", "do", "it", "we", "so", "re",
];

/// Whether `s` (a lowercase run of letters) splits into dictionary words of 3 letters or
/// more: `keychain`, `correcthorse`.
fn segments(s: &str) -> bool {
    let s = s.as_bytes();
    let n = s.len();
    if n > 64 {
        return false;
    }
    // `ok[i]`: `s[..i]` splits into words. From each such place, the words it starts with.
    let mut ok = [false; 65];
    ok[0] = true;
    for at in 0..n {
        if ok[at] {
            words_starting(&s[at..n.min(at + 24)], |len| ok[at + len] = true);
        }
    }
    ok[n]
}

/// Calls `found` with the length of each word of 3 letters or more that `t` starts with,
/// shortest first: the words ending on the walk down the [`TRIE`] along `t`.
fn words_starting(t: &[u8], mut found: impl FnMut(usize)) {
    // `t` is lowercase letters ([`segments`]): without a trigram it is under three long.
    let Some(tri) = trigram(t) else {
        return;
    };
    let mut node = TRIGRAMS[tri] as usize;
    if node == 0 {
        return;
    }
    for len in 3..=t.len() {
        if len > 3 {
            match child(node, t[len - 1]) {
                Some(c) => node = c,
                None => return,
            }
        }
        if ends_word(node) {
            found(len);
        }
    }
}

/// An identifier made of words, not a secret: `TKTokenKeychainItem`,
/// `_EllipticCurvePrivateKey`, `session_token_utilization`, `AccessKeysPerUserQuota`. The
/// value splits at `_`, `-`, `.`, case changes and digits; every part of letters must be a
/// word (or split into words), an acronym of up to 5 capitals, or a common two-letter part;
/// there are at least two words, and at most one short number.
pub(super) fn made_of_words(s: &[u8]) -> bool {
    if s.is_empty()
        || !s
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(b))
    {
        return false;
    }
    let mut tally = Tally::default();
    each_part(s, |p| tally.part(p)) && tally.words >= 2 && tally.unknown <= (tally.words / 2).max(1)
}

/// Give `part` each part of identifier `s` in turn, split at `_`, `-`, `.`, case changes and
/// digits, while it says go on; whether it did to the end.
pub(super) fn each_part(s: &[u8], mut part: impl FnMut(&[u8]) -> bool) -> bool {
    for piece in s.split(|b| b"_-.".contains(b)).filter(|p| !p.is_empty()) {
        let mut start = 0;
        for i in 1..piece.len() {
            let (a, b) = (piece[i - 1], piece[i]);
            let next_lower = piece.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let boundary = (a.is_ascii_lowercase() && b.is_ascii_uppercase())
                || (a.is_ascii_digit() != b.is_ascii_digit())
                // `HTTPServer`: the last capital of a run starts the next word.
                || (a.is_ascii_uppercase() && b.is_ascii_uppercase() && next_lower);
            if boundary {
                if !part(&piece[start..i]) {
                    return false;
                }
                start = i;
            }
        }
        if !part(&piece[start..]) {
            return false;
        }
    }
    true
}

/// The parts of an identifier [`made_of_words`] has read so far, by kind.
#[derive(Default)]
struct Tally {
    words: usize,
    numbers: usize,
    singles: usize,
    unknown: usize,
}

impl Tally {
    /// Counts part `p` (letters, or digits); false when it makes the identifier no name.
    fn part(&mut self, p: &[u8]) -> bool {
        if p[0].is_ascii_digit() {
            self.numbers += 1;
            return self.numbers <= 1 && p.len() <= 4;
        }
        let mut buf = [0; 64];
        // Longer than any word split or word-like part: no name's part.
        let Some(lower) = lowered(p, &mut buf) else {
            return false;
        };
        if p.len() == 1 {
            self.singles += 1;
            return self.singles <= 1;
        }
        if p.len() == 2 {
            return SHORT_WORDS.contains(&lower) || p.iter().all(u8::is_ascii_uppercase);
        }
        if p.iter().all(u8::is_ascii_uppercase) && p.len() <= 5 {
            // An acronym (`TK`, `HTTP`), or a word in capitals.
            if segments(lower) {
                self.words += 1;
            }
        } else if segments(lower) {
            self.words += 1 + usize::from(p.len() >= 8 && !in_dictionary(lower));
        } else if p.len() <= 3 || wordlike(lower) {
            // A rarer word (`Elliptic`, `Oauth`) or a short part (`Amz`, `Mcp`): one for
            // every two words.
            self.unknown += 1;
        } else {
            return false;
        }
        true
    }
}

/// Whether `s`, letters only, is a dictionary word or splits into words of 3 letters or more,
/// in any case: `tiger`, `Filtered`, `secretpass`.
/// Written as words are: all lowercase, all capitals, or capitalised (not `DINah`).
pub(super) fn is_word(s: &[u8]) -> bool {
    let cased = s.iter().all(u8::is_ascii_lowercase)
        || s.iter().all(u8::is_ascii_uppercase)
        || (s[0].is_ascii_uppercase() && s[1..].iter().all(u8::is_ascii_lowercase));
    s.len() >= 3
        && s.iter().all(u8::is_ascii_alphabetic)
        && cased
        && lowered(s, &mut [0; 64]).is_some_and(segments)
}

/// `p`, ASCII, in lowercase in `buf`; `None` when longer than `buf` ([`segments`] splits
/// nothing longer) or not ASCII.
fn lowered<'a>(p: &[u8], buf: &'a mut [u8; 64]) -> Option<&'a str> {
    let lower = buf.get_mut(..p.len())?;
    lower.copy_from_slice(p);
    lower.make_ascii_lowercase();
    std::str::from_utf8(lower).ok().filter(|l| l.is_ascii())
}

/// A run of letters shaped like a word: vowels in it, and no long consonant clusters.
fn wordlike(s: &str) -> bool {
    let vowel = |c: u8| b"aeiouy".contains(&c);
    let b = s.as_bytes();
    let vowels = b.iter().filter(|&&c| vowel(c)).count();
    let mut run = 0;
    let clustered = b.iter().any(|&c| {
        run = if vowel(c) { 0 } else { run + 1 };
        run >= 4
    });
    (3..=14).contains(&b.len()) && vowels * 4 >= b.len() && !clustered
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiler's trie holds every listed word and no other, each node once: its
    /// words read back in preorder are the list, and the trigrams lead where the list says.
    #[test]
    fn the_trie_holds_the_list() {
        fn read(node: usize, word: &mut Vec<u8>, out: &mut Vec<String>) {
            if ends_word(node) {
                out.push(String::from_utf8(word.clone()).unwrap());
            }
            let mut i = node + 1;
            while i < (TRIE[node] & NEXT) as usize {
                word.push(((TRIE[i] >> 24) & 0x7f) as u8);
                read(i, word, out);
                word.pop();
                i = (TRIE[i] & NEXT) as usize;
            }
        }
        let mut words = Vec::new();
        read(0, &mut Vec::new(), &mut words);
        let d: Vec<&str> = std::str::from_utf8(listed()).unwrap().lines().collect();
        assert_eq!(words, d);
        let mut prefixes = std::collections::HashSet::new();
        for w in &d {
            for l in 1..=w.len() {
                prefixes.insert(&w[..l]);
            }
        }
        assert_eq!(NODES, prefixes.len() + 1);
        for (t, &at) in TRIGRAMS.iter().enumerate() {
            let l = |k: u32| b'a' + (t / 26usize.pow(k) % 26) as u8;
            let tri = [l(2), l(1), l(0)];
            let mut node = Some(0);
            for b in tri {
                node = node.and_then(|n| child(n, b));
            }
            assert_eq!(at as usize, node.unwrap_or(0), "{tri:?}");
        }
        assert!(TRIGRAMS.iter().filter(|&&n| n != 0).count() > 1000);
    }

    #[test]
    fn the_dictionary_is_in_byte_order() {
        let d: Vec<&str> = std::str::from_utf8(listed()).unwrap().lines().collect();
        assert!(d.len() > 20_000);
        assert!(
            d.windows(2).all(|w| w[0] < w[1] && !w[1].is_empty()),
            "words.txt must stay sorted (LC_ALL=C sort -u)"
        );
        assert!(in_dictionary("keychain") && !in_dictionary("kxqzv"));
        // The search over the text finds every listed word, and a word cut short or run on
        // exactly when the list has it.
        for (i, w) in d.iter().enumerate() {
            assert!(in_dictionary(w), "{w}");
            if i % 7 == 0 {
                for other in [&w[..w.len() - 1], &format!("{w}q"), &format!("a{w}")] {
                    assert_eq!(
                        in_dictionary(other),
                        d.binary_search(&other).is_ok(),
                        "{other}"
                    );
                }
            }
        }
        assert!(!in_dictionary("") && !in_dictionary("zzzzzzzz") && !in_dictionary("\0"));
        // The trigram bits answer "no" only where the list has no such word: every
        // three-letter word, and each run on, against a plain binary search of the lines.
        let mut found = 0;
        for t in 0..26 * 26 * 26u32 {
            let l = |k: u32| char::from(b'a' + (t / 26u32.pow(k) % 26) as u8);
            let w = format!("{}{}{}", l(2), l(1), l(0));
            for w in [
                w.clone(),
                format!("{w}s"),
                format!("{w}ing"),
                format!("{w}er"),
            ] {
                let listed = d.binary_search(&w.as_str()).is_ok();
                assert_eq!(in_dictionary(&w), listed, "{w}");
                found += usize::from(listed);
            }
        }
        assert!(found > 1_000, "{found}");
    }

    /// The search from each place finds what asking the list about each length finds.
    #[test]
    fn words_from_a_place_are_found_by_the_walk() {
        use super::super::below;
        let by_length = |s: &str| {
            let n = s.len();
            let mut ok = vec![false; n + 1];
            ok[0] = true;
            for end in 3..=n {
                ok[end] =
                    (3..=end.min(24)).any(|len| ok[end - len] && in_dictionary(&s[end - len..end]));
            }
            ok[n]
        };
        let d: Vec<&str> = std::str::from_utf8(listed()).unwrap().lines().collect();
        let mut seed = 7u64;
        let (mut tried, mut split) = (0, 0);
        for i in 0..20_000 {
            // Words glued together, sometimes cut or run on, and random letters.
            let mut s = String::new();
            for _ in 0..1 + below(&mut seed, 4) {
                s.push_str(d[below(&mut seed, d.len() as u64) as usize]);
            }
            match i % 4 {
                0 => s.truncate(s.len().saturating_sub(1)),
                1 => s.push('q'),
                2 => {
                    s = (0..3 + below(&mut seed, 20))
                        .map(|_| char::from(b'a' + below(&mut seed, 26) as u8))
                        .collect()
                }
                _ => {}
            }
            if !s.bytes().all(|b| b.is_ascii_lowercase()) {
                continue;
            }
            let want = by_length(&s) && s.len() <= 64;
            assert_eq!(segments(&s), want, "{s}");
            tried += 1;
            split += usize::from(want);
        }
        assert!(tried > 10_000 && split > tried / 4, "{split} of {tried}");
    }

    #[test]
    fn identifiers_made_of_words() {
        for w in [
            "TKTokenKeychainItem",
            "_EllipticCurvePrivateKey",
            "session_token_utilization",
            "AccessKeysPerUserQuota",
            "ConnectionTrafficSecrets",
            "HTTPPasswordMgr",
            "refresh_token_v2",
            "correcthorse_battery",
            "refreshTokenPathOrObject",
            "McpOauthTokenEndpointAuth",
            "ExclusiveStartBackupArn",
            "EllipticCurvePrivateKeyWithSerialization",
        ] {
            assert!(made_of_words(w.as_bytes()), "{w}");
        }
        for s in [
            "kGqWwoT31YwsOmV5F6NA9vzSB8iEZXoCMnBDAFel",
            "t94Dmgl0KwpJETZkIuS65iIXCxkT38Q0",
            "Summer2024!",
            "hqmfxzplwkrtvbnc",
            "Token",
            "sJwvAEMcfIOjGppiJfn810381-XeGyKwHUjU",
        ] {
            assert!(!made_of_words(s.as_bytes()), "{s}");
        }
    }
}
