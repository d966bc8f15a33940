//! Identifiers made of words (`Rule::words`): `TKTokenKeychainItem` is a name, not a secret.

use std::sync::OnceLock;

/// The words of [`made_of_words`]: frequent English words and the words of code, in byte
/// order as `words.txt` lists them (a test checks), so a lookup is a binary search: the list
/// is built on a hook's first generic match, and hashing 28,000 words cost more there than
/// all its lookups.
fn dictionary() -> &'static [&'static str] {
    static WORDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| {
        include_str!("words.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect()
    })
}

fn in_dictionary(w: &str) -> bool {
    dictionary().binary_search(&w).is_ok()
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
    let n = s.len();
    if n > 64 {
        return false;
    }
    let mut ok = vec![false; n + 1];
    ok[0] = true;
    for end in 3..=n {
        ok[end] = (3..=end.min(24)).any(|len| ok[end - len] && in_dictionary(&s[end - len..end]));
    }
    ok[n]
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
    let mut parts: Vec<&[u8]> = Vec::new();
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
                parts.push(&piece[start..i]);
                start = i;
            }
        }
        parts.push(&piece[start..]);
    }
    let (mut words, mut numbers, mut singles, mut unknown) = (0, 0, 0, 0);
    for p in parts {
        if p[0].is_ascii_digit() {
            numbers += 1;
            if numbers > 1 || p.len() > 4 {
                return false;
            }
            continue;
        }
        let lower = String::from_utf8_lossy(p).to_ascii_lowercase();
        if p.len() == 1 {
            singles += 1;
            if singles > 1 {
                return false;
            }
        } else if p.len() == 2 {
            if !SHORT_WORDS.contains(&lower.as_str()) && !p.iter().all(u8::is_ascii_uppercase) {
                return false;
            }
        } else if p.iter().all(u8::is_ascii_uppercase) && p.len() <= 5 {
            // An acronym (`TK`, `HTTP`), or a word in capitals.
            if segments(&lower) {
                words += 1;
            }
        } else if segments(&lower) {
            words += 1 + usize::from(p.len() >= 8 && !in_dictionary(&lower));
        } else if p.len() <= 3 || wordlike(&lower) {
            // A rarer word (`Elliptic`, `Oauth`) or a short part (`Amz`, `Mcp`): one for
            // every two words.
            unknown += 1;
        } else {
            return false;
        }
    }
    words >= 2 && unknown <= (words / 2).max(1)
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
        && segments(&String::from_utf8_lossy(s).to_ascii_lowercase())
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

    #[test]
    fn the_dictionary_is_in_byte_order() {
        let d = dictionary();
        assert!(d.len() > 20_000);
        assert!(
            d.windows(2).all(|w| w[0] < w[1]),
            "words.txt must stay sorted (LC_ALL=C sort -u)"
        );
        assert!(in_dictionary("keychain") && !in_dictionary("kxqzv"));
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
