//! Identifiers made of words (`Rule::words`): `TKTokenKeychainItem` is a name, not a secret.

/// The words of [`made_of_words`]: frequent English words and the words of code, one a line
/// after the header's comment, in byte order (`LC_ALL=C sort -u`; a test checks).
const WORDS: &str = include_str!("words.txt");

/// [`WORDS`] without its header.
fn listed() -> &'static [u8] {
    let mut text = WORDS.as_bytes();
    while text.starts_with(b"#") {
        text = memchr::memchr(b'\n', text).map_or(&[], |p| &text[p + 1..]);
    }
    text
}

/// Whether `w` is a line of [`WORDS`]: a binary search over the embedded text itself. A hook
/// meets the dictionary at its first generic match, once per process; splitting the 28,000
/// lines into a list first took ~0.7 ms of a ~10 ms event (and hashing them, before that,
/// more), where the search reads some 15 lines, and only the few lines that share the
/// word's first three letters ([`STARTS`]) when it has them.
fn in_dictionary(w: &str) -> bool {
    let (text, w) = (listed(), w.as_bytes());
    // `lo` is a line's start; `hi` is a line's start or the end.
    let (mut lo, mut hi) = match trigram(w) {
        Some(at) => {
            let (lo, hi) = STARTS[at];
            (lo as usize, hi as usize)
        }
        None => (0, text.len()),
    };
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let start = memchr::memrchr(b'\n', &text[lo..mid]).map_or(lo, |p| lo + p + 1);
        let end = memchr::memchr(b'\n', &text[start..hi]).map_or(hi, |p| start + p);
        match text[start..end].cmp(w) {
            std::cmp::Ordering::Equal => return true,
            std::cmp::Ordering::Less => lo = end + 1,
            std::cmp::Ordering::Greater => hi = start,
        }
    }
    false
}

/// The first three letters (`a`-`z`) of a word as a number below 26³; `None` for a word
/// shorter than that or starting otherwise (a search then decides alone).
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

/// Per [`trigram`], where the lines that start with it lie in [`listed`]: the first one's
/// start and the end of the last one's line with its newline (so a line's start, or the
/// end), empty for a trigram no word starts with. The list is sorted, so such lines are
/// together. `segments` asks about every piece of a value from 3 to 24 letters long; most
/// pieces of a token start with three letters no word starts with, and an empty range
/// answers them at once, where a binary search of the whole list read some 15 lines (the
/// dictionary was 4 % of the engine's time on source-like text). A word that does start so
/// is searched for among a few dozen lines. Computed by the compiler: built at first use, it
/// took a hook event with a secret ~1.2 ms, a tenth of the event.
static STARTS: [(u32, u32); 26 * 26 * 26] = starts(WORDS.as_bytes());

/// [`STARTS`] of the words file `text` (its header skipped, as [`listed`] does).
const fn starts(text: &[u8]) -> [(u32, u32); 26 * 26 * 26] {
    let mut ranges = [(0u32, 0u32); 26 * 26 * 26];
    let mut at = 0;
    while at < text.len() && text[at] == b'#' {
        while at < text.len() && text[at] != b'\n' {
            at += 1;
        }
        at += 1;
    }
    // Offsets count from the first word, as in `listed`.
    let base = at;
    while at < text.len() {
        let start = at;
        while at < text.len() && text[at] != b'\n' {
            at += 1;
        }
        let end = if at < text.len() { at + 1 } else { at };
        // The line's own first three bytes: `trigram` reads no further.
        if at - start >= 3 {
            if let Some(t) = trigram(text.split_at(start).1) {
                if ranges[t].0 == ranges[t].1 {
                    ranges[t].0 = (start - base) as u32;
                }
                ranges[t].1 = (end - base) as u32;
            }
        }
        at = end;
    }
    ranges
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
/// shortest first. The lines that start with a prefix of `t` lie together in the sorted list
/// and narrow as the prefix grows, so the search stops at the first prefix no line starts
/// with: asked about each length apart, a place in a word (`session…`) made some 20 searches
/// of the list, most for prefixes no word has.
fn words_starting(t: &[u8], mut found: impl FnMut(usize)) {
    let text = listed();
    // `t` is lowercase letters ([`segments`]): without a trigram it is under three long.
    let Some(tri) = trigram(t) else {
        return;
    };
    let (mut lo, hi) = (STARTS[tri].0 as usize, STARTS[tri].1 as usize);
    for len in 3..=t.len() {
        let prefix = &t[..len];
        // The first line at or after `prefix`, in `lo..hi` (its lines are line starts).
        let (mut a, mut b) = (lo, hi);
        while a < b {
            let mid = a + (b - a) / 2;
            let start = memchr::memrchr(b'\n', &text[a..mid]).map_or(a, |p| a + p + 1);
            let end = memchr::memchr(b'\n', &text[start..b]).map_or(b, |p| start + p);
            if &text[start..end] < prefix {
                a = (end + 1).min(b);
            } else {
                b = start;
            }
        }
        let end = memchr::memchr(b'\n', &text[a..hi]).map_or(hi, |p| a + p);
        let line = &text[a..end];
        if !line.starts_with(prefix) {
            return;
        }
        if line.len() == len {
            found(len);
        }
        lo = a;
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
                if !tally.part(&piece[start..i]) {
                    return false;
                }
                start = i;
            }
        }
        if !tally.part(&piece[start..]) {
            return false;
        }
    }
    tally.words >= 2 && tally.unknown <= (tally.words / 2).max(1)
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

    /// The compiler's table is the one a plain pass over the lines makes (the pass that
    /// built it at first use before).
    #[test]
    fn the_trigram_table_places_every_line() {
        let text = listed();
        let mut want = vec![(0u32, 0u32); 26 * 26 * 26];
        let mut at = 0;
        for line in text.split(|&b| b == b'\n') {
            let end = (at + line.len() + 1).min(text.len());
            if let Some(t) = trigram(line) {
                let r = &mut want[t];
                if r.0 == r.1 {
                    r.0 = at as u32;
                }
                r.1 = end as u32;
            }
            at = end;
        }
        assert_eq!(&STARTS[..], &want[..]);
        assert!(STARTS.iter().filter(|r| r.0 < r.1).count() > 1000);
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
    fn words_from_a_place_are_found_by_narrowing() {
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
