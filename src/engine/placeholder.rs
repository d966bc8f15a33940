//! Values that stand where a secret would and are none: the specifications' own examples,
//! documentation's markers, placeholders, template markers and filler. What
//! [`super::reject`] rejects before any rule-specific check.

use super::reject::Words;

/// The example values of the specifications, copied into every library and its tests.
const KNOWN_EXAMPLES: &[&str] = &[
    // RFC 6749 (OAuth 2.0): access token, refresh token, code, client credentials
    // (`s6BhdRkqt3:gX1fBat3bV`, and in Basic).
    "2YotnFZFEjr1zCsicMWpAA",
    "tGzv3JOkF0XG5Qx2TlKWIA",
    "SplxlOBeZQQYbYS6WxSbIA",
    "gX1fBat3bV",
    "czZCaGRSa3F0MzpnWDFmQmF0M2JW",
    // RFC 6750 (bearer tokens) and OpenID Connect Core.
    "mF_9.B5f-4.1JqM",
    "SlAV32hkKG",
    "8xLOxBtZp8",
    // RFC 5849 (OAuth 1.0): consumer and token keys and secrets.
    "dpf43f3p2l4k3l03",
    "kd94hf93k423kf44",
    "hh5s93j4hdidpola",
    "hdk48Djdsa",
    "nnch734d00sl2jdk",
    "pfkkdhi9sl3r4s00",
    "9djdj82h48djs9d2",
    "kllo9940pd9333jh",
    "j49sk3j29djd",
    "dh893hdasih9",
    "ad180jjd733klru7",
    "hdhd0244k9j7ao03",
    // RFC 7009 (token revocation).
    "45ghiukldjahdnhzdauz",
    // RFC 7617 / 2617 (Basic): `Aladdin:open sesame`.
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
    // The Firebase Android SDK's example and test API keys, copied into apps and samples.
    "AIzaSyabcdefghijklmnopqrstuvwxyz1234567",
    "AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs",
    "AIzaSyCkEhVjf3pduRDt6d1yKOMitrUEke8agEM",
    "AIzaSyDMAScliyLx7F0NPDEJi1QmyCgHIAODrlU",
    "AIzaSyD3asb-2pEZVqMkmL6M9N6nHZRR_znhrh0",
    "AIzayDNSXIbFmlXbIE6mCzDLQAqITYefhixbX4A",
    "AIzaSyAdOS2zB6NCsk1pCdZ4-P6GBdi_UUPwX7c",
    "AIzaSyASWm6HmTMdYWpgMnjRBjxcQ9CKctWmLd4",
    "AIzaSyANUvH9H9BsUccjsu2pCmEkOPjjaXeDQgY",
    "AIzaSyA5_iVawFQ8ABuTZNUdcwERLJv_a_p4wtM",
    "AIzaSyA4UrcGxgwQFTfaI3no3t7Lt1sjmdnP5sQ",
    "AIzaSyDSb51JiIcB6OJpwwMicseKRhhrOq1cS7g",
    "AIzaSyBF2RrAIm4a0mO64EShQfqfd2AFnzAvvuU",
    "AIzaSyBcE-OOIbhjyR83gm4r2MFCu4MJmprNXsw",
    "AIzaSyB8qGxt4ec15vitgn44duC5ucxaOi4FmqE",
    "AIzaSyA8vmApnrHNFE0bApF4hoZ11srVL_n0nvY",
];

/// AWS documents its example credentials with an `EXAMPLE` suffix (`AKIAIOSFODNN7EXAMPLE`,
/// `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`); other vendors copied the habit. The
/// specifications' own examples ([`KNOWN_EXAMPLES`]) and jwt.io's token (its payload
/// `{"sub":"1234567890","name":"John Doe",…}`) are examples wherever they appear.
pub(super) fn is_documentation_example(secret: &[u8]) -> bool {
    const JWT_IO_PAYLOAD: &[u8] = b"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIi";
    secret.ends_with(b"EXAMPLE")
        || secret.ends_with(b"EXAMPLEKEY")
        || KNOWN_EXAMPLES.iter().any(|e| secret == e.as_bytes())
        || memchr::memmem::find(secret, JWT_IO_PAYLOAD).is_some()
}

/// Whole values that are never real secrets: default and documentation passwords.
const PLACEHOLDER_VALUES: &[&str] = &[
    "pass", "pwd", "passwd", "secret", "root", "admin", "test", "guest", "user", "postgres",
    "mysql", "redis", "rabbitmq", "changeit", "letmein", "qwerty", "default", "none", "null",
    "nil", "true", "false", "foo", "bar", "foobar", "token", "%s",
];

pub(super) fn is_placeholder(secret: &[u8]) -> bool {
    plain_placeholder(secret) || encodes_placeholder(secret)
}

fn plain_placeholder(secret: &[u8]) -> bool {
    placeholder_shape(secret)
        || (CHANCE_OR_MARKER.found_in(secret) && !chance_in_random(secret))
        || shouts_words(secret)
        || is_filler(secret)
        || spells_password(secret)
}

/// `p@ssw0rd`, `P4$$word`: the word `password` in a demo's spelling.
fn spells_password(secret: &[u8]) -> bool {
    let plain = |b: u8| match b.to_ascii_lowercase() {
        b'@' | b'4' => b'a',
        b'$' | b'5' => b's',
        b'0' => b'o',
        other => other,
    };
    // From each `p`, read as spelled: no copy of the value (one for each value a scan judged).
    memchr::memchr2_iter(b'p', b'P', secret).any(|at| {
        let spelled = |word: &[u8]| {
            secret[at..].len() >= word.len()
                && secret[at..].iter().zip(word).all(|(&b, &w)| plain(b) == w)
        };
        spelled(b"password") || spelled(b"passwd")
    })
}

/// Base64 of a placeholder (`Y2hhbmdlbWU=` is `changeme`): what a Kubernetes Secret's `data:`
/// holds in a chart or a tutorial. Only base64 that decodes to printable text of a password's
/// length is read: a longer text (a whole `.env` file, encoded) holds more than one value, and
/// a placeholder word in it says nothing of the others.
fn encodes_placeholder(secret: &[u8]) -> bool {
    (8..=32).contains(&secret.len())
        && secret
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_'))
        && {
            let mut d = [0u8; 24];
            super::checksum::b64_decode_short(secret, &mut d).is_some_and(|n| {
                let d = &d[..n];
                n >= 3 && d.iter().all(|&b| (0x20..0x7f).contains(&b)) && plain_placeholder(d)
            })
        }
}

/// What makes a value a placeholder whatever words it holds: a default password, a shell
/// variable, a format field, a sanitiser's or a template's mark, an elision.
fn placeholder_shape(secret: &[u8]) -> bool {
    if PLACEHOLDER_VALUES
        .iter()
        .any(|v| secret.eq_ignore_ascii_case(v.as_bytes()))
    {
        return true;
    }
    // `$NAME` is a shell variable and `{name}` a format field, not their values (a hash such
    // as `$y$j9T$…` is neither).
    // `[Filtered]` and `@TOKEN@` are what a sanitiser or a template leaves; a value cut
    // short with `...` is elided in documentation.
    (secret.len() > 1
        && secret[0] == b'$'
        && secret[1].is_ascii_alphabetic()
        && secret[1..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_'))
        || (secret.starts_with(b"{") && secret.ends_with(b"}"))
        || (secret.starts_with(b"[") && secret.ends_with(b"]"))
        || is_template_marker(secret)
        || secret.ends_with(b"...")
        || secret.ends_with("\u{2026}".as_bytes())
}

/// Whether `rule`'s match `secret` is a placeholder: a token with its provider's fixed prefix
/// by [`is_placeholder_token`], any other value by [`is_placeholder`].
pub(super) fn of_rule(rule: &crate::rules::Rule, secret: &[u8]) -> bool {
    if !rule.generic && rule.pattern_facts().is_ok_and(|f| f.fixed_prefix) {
        is_placeholder_token(secret)
    } else {
        is_placeholder(secret)
    }
}

/// Words that a random body of letters and digits holds now and then by chance (one
/// `sk_live_` key in a few thousand spells `sample` somewhere): in a prefixed token they
/// mark a placeholder only when little random is left beside them. Any other value holding one
/// is a placeholder, as it is when it holds one of [`MARKER_WORDS`].
const CHANCE_WORDS: &[&str] = &[
    "xxxx",
    "changeme",
    "placeholder",
    "password",
    "passw0rd",
    "redacted",
    "dummy",
    "example",
    "sample",
    "insert",
    "replace",
    "abcdefg",
    "12345678",
    "0123456",
];

// The two lists' automata, shared by every check that reads them.
static CHANCE: Words = Words::new(CHANCE_WORDS);
static MARKERS: Words = Words::new(MARKER_WORDS);
// Both lists in one automaton, for a value that either marks: one search, not two.
static CHANCE_OR_MARKER: Words = Words::both(CHANCE_WORDS, MARKER_WORDS);

/// The other placeholder words: characters no token body holds, or a stand-in's own words
/// (`your_`), a marker wherever they stand.
const MARKER_WORDS: &[&str] = &[
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourkey",
    "yourtoken",
    "yoursecret",
    "yourpassword",
    "****",
    "....",
    "<",
    ">",
    "${",
    "{{",
    "}}",
    "%(",
];

/// [`is_placeholder`] for a token with its provider's fixed prefix: judged by its shape,
/// not by a word inside it. A word that chance puts in a random body (`sk_live_…redacted…`)
/// does not make it a placeholder while a random run remains beside it; a body that is the
/// word or filler (`sk_live_xxxxxxxx`, `sk_test_PLACEHOLDERkey12`), a marker (`ghp_YOUR_TOKEN_HERE`)
/// or any other placeholder shape still is.
pub(super) fn is_placeholder_token(secret: &[u8]) -> bool {
    placeholder_shape(secret)
        || MARKERS.found_in(secret)
        || shouts_words(secret)
        || is_filler(secret)
        || words_without_random(secret)
}

/// The letters and digits of `secret` beside its [`CHANCE_WORDS`] words, and whether it
/// holds one. `None` when one of them is in capitals and five letters or more: a marker
/// someone typed (AWS's `…wEXAMPLEtc764…` session tokens); a random body spells one in
/// lowercase as seldom as in capitals, but people write markers in capitals.
fn beside_chance_words(secret: &[u8]) -> Option<(bool, Vec<u8>)> {
    let words = CHANCE.automaton(secret.len());
    let mut rest = Vec::with_capacity(secret.len());
    let mut at = 0;
    let mut found = false;
    for m in words.find_iter(secret) {
        let word = &secret[m.range()];
        if word.len() >= 5 && word.iter().all(u8::is_ascii_uppercase) {
            return None;
        }
        found = true;
        rest.extend_from_slice(&secret[at..m.start()]);
        at = m.end();
    }
    rest.extend_from_slice(&secret[at..]);
    rest.retain(u8::is_ascii_alphanumeric);
    Some((found, rest))
}

/// How many of lowercase letters, capitals and digits `bytes` holds.
fn classes(bytes: &[u8]) -> usize {
    let has = |f: fn(&u8) -> bool| usize::from(bytes.iter().any(f));
    has(u8::is_ascii_lowercase) + has(u8::is_ascii_uppercase) + has(u8::is_ascii_digit)
}

/// How many distinct bytes `bytes` holds.
fn distinct(bytes: &[u8]) -> usize {
    let mut seen = [false; 256];
    bytes
        .iter()
        .filter(|&&b| !std::mem::replace(&mut seen[usize::from(b)], true))
        .count()
}

/// Whether `secret` holds `xxxx` (in any case) only by chance: long enough for it, with no
/// other word of [`CHANCE_WORDS`] or [`MARKER_WORDS`], no run of six `x`s or more (AWS's
/// documentation tokens are redacted with `XXXXXXXX`), and random beside it: two classes or
/// more and twenty distinct characters among the rest of its letters and digits. Four
/// letters of one pair (`x`, `X`) start at a random base64 position once in ~1,000,000; a
/// 4096-bit RSA key's body is 3,200 characters, so one key in ~330 spells it. Read as a
/// placeholder, the key was missed: a test that makes a fresh 1024-bit key each run met one
/// (`…bQXXxXHBxg0YK…`). Other words are longer and rarer by chance by a factor of 32 a
/// letter, and a sequence (`12345678`, a salt in a test's hash) is never chance.
fn chance_in_random(secret: &[u8]) -> bool {
    /// Shorter values are judged by their words, as before.
    const LONG: usize = 64;
    let is_x = |b: &u8| b.eq_ignore_ascii_case(&b'x');
    let by_chance = |m: &aho_corasick::Match| {
        let from = secret[..m.start()]
            .iter()
            .rev()
            .take_while(|b| is_x(b))
            .count();
        let to = secret[m.end()..].iter().take_while(|b| is_x(b)).count();
        secret[m.range()].iter().all(is_x) && from + m.len() + to < 6
    };
    if secret.len() < LONG
        || MARKERS.found_in(secret)
        || !CHANCE
            .automaton(secret.len())
            .find_iter(secret)
            .all(|m| by_chance(&m))
    {
        return false;
    }
    beside_chance_words(secret)
        .is_some_and(|(_, rest)| classes(&rest) >= 2 && distinct(&rest) >= 20)
}

/// Whether `secret` holds a [`CHANCE_WORDS`] word and, with every such word taken out, no
/// random run is left: a random run is 12 letters and digits or more (the provider's prefix
/// counts, as it does in the token's length), of two classes or more, with no run of four of
/// one character, few steps of a sequence (`1234`, `abcd`) and many distinct characters.
fn words_without_random(secret: &[u8]) -> bool {
    let Some((found, rest)) = beside_chance_words(secret) else {
        return true;
    };
    let classes = classes(&rest);
    let longest_run = rest
        .chunk_by(|a, b| a == b)
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0);
    let steps = rest
        .windows(2)
        .filter(|w| w[1] == w[0].wrapping_add(1) || w[0] == w[1].wrapping_add(1))
        .count();
    let random = rest.len() >= 12
        && classes >= 2
        && longest_run < 4
        && steps * 3 <= rest.len()
        && distinct(&rest) * 2 >= rest.len().min(24);
    found && !random
}

/// Words in capitals run together inside a value (`IQoJb3JpZ2luSECRETTOKENMARKERzzz`,
/// `SECRETTOKENHERE`): a stand-in someone typed. Random capitals seldom split into words.
/// Only in one-piece values: a PEM block's headers are words (`Proc-Type: 4,ENCRYPTED`).
fn shouts_words(secret: &[u8]) -> bool {
    !secret.iter().any(u8::is_ascii_whitespace)
        && secret
            .chunk_by(|a, b| a.is_ascii_uppercase() && b.is_ascii_uppercase())
            .any(|run| run.len() >= 9 && run[0].is_ascii_uppercase() && super::words::is_word(run))
}

/// `@SECURITY_TOKEN@` or `@SECURITY_TOKEN`: a template's marker (autoconf, Ansible test
/// templates), a name in capitals between `@`s.
fn is_template_marker(s: &[u8]) -> bool {
    let Some(name) = s.strip_prefix(b"@") else {
        return false;
    };
    let name = name.strip_suffix(b"@").unwrap_or(name);
    name.len() >= 3
        && name[0].is_ascii_uppercase()
        && name
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
}

/// An identifier that is filler, not an id: `AKIAXXXXXXXXXXXXXXXX`, `AKIA0000000000000000`.
/// Real ids are random, so few distinct characters or a long run of one mean a placeholder.
pub(super) fn is_filler_id(id: &[u8]) -> bool {
    let mut seen = [false; 256];
    let (mut distinct, mut run, mut longest) = (0, 0, 0);
    let mut last = None;
    for &b in id {
        if !seen[b as usize] {
            seen[b as usize] = true;
            distinct += 1;
        }
        run = if last == Some(b) { run + 1 } else { 1 };
        longest = longest.max(run);
        last = Some(b);
    }
    id.len() >= 12 && (distinct <= 5 || longest >= 12)
}

/// Runs of one character (`aaaaaaaa`, `XXXXXXXX`) with little else, and strings of very few
/// distinct bytes. Only short values, and only when the rest is short: base64 of binary has
/// runs of `A` for its zero bytes beside a random body (an OpenSSH key's `AAAAAAAA`; a
/// Twitter app-only bearer token opens with 21 of them; a Kubernetes Secret's data).
fn is_filler(secret: &[u8]) -> bool {
    if secret.len() > 128 {
        return false;
    }
    let longest = secret
        .chunk_by(|a, b| a == b)
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0);
    if longest >= 6 && secret.len() - longest < 32 {
        return true;
    }
    let mut seen = [false; 256];
    let mut distinct = 0;
    for &b in secret {
        if !seen[b as usize] {
            seen[b as usize] = true;
            distinct += 1;
        }
    }
    secret.len() >= 10 && distinct <= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        for p in [
            "xxxxxxxxxxxxxxxxxxxx",
            "${AWS_SECRET}",
            "<your-token>",
            "changeme123",
            "0000000000000000",
            "abababababab",
            "{db_password}",
            "$PGPASSWORD",
            "[Filtered]",
            "@SECURITY_TOKEN@",
            "ya29.c.b0Aa9Vdyk...",
            "IQoJb3JpZ2luSECRETTOKENMARKERzzz",
            "tok-SECRETTOKENHERE",
        ] {
            assert!(is_placeholder(p.as_bytes()), "{p}");
        }
        assert!(!is_placeholder(b"q8Vz3LmT0pWx9RkJ2nHs"));
        // Capitals of a random value: not words.
        assert!(!is_placeholder(b"JBSWY3DPEHPK3PXPQWERTZUIOPLKJHGF"));
        assert!(!is_placeholder(b"xK9QWRTZPLMNBVCXYqe4"));
        // A run beside a short rest is filler (`sk_live_` and 24 zeros); beside a random body of
        // 32 or more it is base64 of zero bytes.
        assert!(is_placeholder(b"sk_live_000000000000000000000000"));
        assert!(is_placeholder(b"q8Vz3LmT0pWx9RkJ2nHs00000000"));
        assert!(is_placeholder(&[b'A'; 120]));
        assert!(!is_placeholder(
            b"AAAAAAAAAAC7hjsA+H3owFygUv4w5B67lcSx14zff9FCPADiNbSwYWgE+O7Dhiy5tkRecs21ljjofvebe6xsYlA4cVmght0="
        ));
    }

    /// A key's body that spells `xxxx` by chance is still a key; one holding another word, a
    /// redaction or a marker is not.
    #[test]
    fn a_long_random_value_is_not_a_placeholder_for_a_chance_word_in_it() {
        // The body of the 1024-bit RSA key that a test made and the scan missed, as a PEM
        // block's lines are (with their line ends).
        let body = "\nMIICXQIBAAKBgQDlQIRVaTfQcviH0h7Yd4le5UZ7KCG3jyTBvW+4VuC3o8TJnoSP\n\
                    BAJnE9VlCUbhxikl41JsnwmPujqvRDK1dF+jiFrJ/e3ZXtJL5ARbQXXxXHBxg0YK\n\
                    xn64HsP/+fk/ldBlOOW3iEHQJlBKYRg1izUYN+97kLoeQMYBAkEA95btEb1ZVEBk\n";
        assert!(!is_placeholder(body.as_bytes()));
        assert!(!is_placeholder(
            body.replacen("lOOW3", "lOOW3xxxx", 1).as_bytes()
        ));
        // Another word, a longer run of `x`s (a redaction), a marker, filler, or a short
        // value: a stand-in, as before.
        for word in [
            "sample",
            "dummy",
            "12345678",
            "XXXXXXXX",
            "xxXXxx",
            "<your-key>",
        ] {
            let with = body.replacen("lOOW3", &format!("lOOW3{word}"), 1);
            assert!(is_placeholder(with.as_bytes()), "{word}");
        }
        assert!(is_placeholder("xXxX".repeat(20).as_bytes()));
        assert!(is_placeholder(
            b"q8Vz3LmT0pWx9RkJ2nHsxxxxQ8vZ3lMt0PwX9rKj2NhS"
        ));
    }

    #[test]
    fn prefixed_tokens_are_judged_by_what_is_left_beside_a_word() {
        // A chance word in a random body: still a token.
        assert!(!is_placeholder_token(
            b"sk_live_djJbJQdE9YredactedW5N0sMJeuu9uCxLgX"
        ));
        assert!(!is_placeholder_token(b"glpat-C8sredactedqvaUVTGZx"));
        // The word, filler or a sequence with little random beside it; a word in capitals.
        for p in [
            "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
            "ghp_YOUR_TOKEN_HERE_XXXXXXXXXXXXXXXXXXXX",
            "sk_live_redactedredactedredacted",
            "sk_test_PLACEHOLDERkey12345",
            "sk_live_example1234567890abcdefghij",
            "sk_live_djJbJQdE9YEXAMPLEW5N0sMJeuu9uCxLgX",
        ] {
            assert!(is_placeholder_token(p.as_bytes()), "{p}");
        }
        // Base64 of a short placeholder, and a password in a demo's spelling.
        assert!(is_placeholder(b"Y2hhbmdlbWU="));
        assert!(is_placeholder(b"YWRtaW46cGFzc3dvcmQ="));
        for spelled in ["p@ssw0rd", "P4$$word", "xyzPa55wd1", "pp@sswd"] {
            assert!(spells_password(spelled.as_bytes()), "{spelled}");
        }
        for other in ["p@ssw0r", "pa$s_word", "P", "wordpass"] {
            assert!(!spells_password(other.as_bytes()), "{other}");
        }
        assert!(is_placeholder(b"p@ssw0rd"));
        assert!(!is_placeholder(b"c3ZjOjh0cVoyeExtUg=="));
    }
}
