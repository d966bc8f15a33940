//! Rejecting a regex's match: cheap checks that cut the classic false positives
//! (documentation example keys, placeholders, low entropy, a failed checksum from
//! [`super::checksum`], and, for generic assignment rules, variable references, hashes, uuids
//! and paths). Not to be confused with `crate::filter`, the masker.

use super::checksum::checksum_ok;
use super::placeholder::{is_documentation_example, is_filler_id};
use super::Match;
use crate::rules::Rule;
use aho_corasick::AhoCorasick;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// A fixed list of words looked for ASCII case-insensitively, its automata built at first use.
pub(super) struct Words {
    words: &'static [&'static str],
    more: &'static [&'static str],
    nfa: OnceLock<AhoCorasick>,
    dfa: OnceLock<AhoCorasick>,
    /// Searches made with the NFA, up to [`MANY_SEARCHES`].
    searches: AtomicUsize,
}

impl Words {
    pub(super) const fn new(words: &'static [&'static str]) -> Words {
        Words::both(words, &[])
    }

    /// The words of two lists, looked for at once.
    pub(super) const fn both(
        words: &'static [&'static str],
        more: &'static [&'static str],
    ) -> Words {
        Words {
            words,
            more,
            nfa: OnceLock::new(),
            dfa: OnceLock::new(),
            searches: AtomicUsize::new(0),
        }
    }

    /// Whether `hay` holds one of the words.
    pub(super) fn found_in(&self, hay: &[u8]) -> bool {
        self.automaton(hay.len()).is_match(hay)
    }

    /// The automaton for a search of `len` bytes. A hook's few values get a contiguous NFA,
    /// not the DFA `aho_corasick` would pick for a list this short: the DFA's build was a
    /// hook event's ~0.4 ms at its first secret. A long value (a PEM block's body), or any
    /// once the list has been searched [`MANY_SEARCHES`] times (a scan), gets the DFA: the
    /// NFA read at ~6 ns a byte, a third of a scan of 5,000 keys.
    pub(super) fn automaton(&self, len: usize) -> &AhoCorasick {
        let few = self.searches.load(Ordering::Relaxed) < MANY_SEARCHES;
        if few {
            self.searches.fetch_add(1, Ordering::Relaxed);
        }
        let (cell, kind) = if len < LONG_VALUE && few {
            (&self.nfa, aho_corasick::AhoCorasickKind::ContiguousNFA)
        } else {
            (&self.dfa, aho_corasick::AhoCorasickKind::DFA)
        };
        cell.get_or_init(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .kind(Some(kind))
                .build(self.words.iter().chain(self.more))
                .expect("fixed word list builds")
        })
    }
}

/// From this many bytes a value is searched for words by a DFA ([`Words::automaton`]).
const LONG_VALUE: usize = 256;

/// After this many searches a list's values are searched by a DFA ([`Words::automaton`]).
const MANY_SEARCHES: usize = 1_000;

/// Whether match `m` of `rule` in `hay` survives the filters.
/// Whether `rule`'s match `m` in `hay` is kept. A masker's engine (`masking`) keeps what only
/// looks doubtful: a token of a provider's shape whose checksum fails, or that reads like a
/// placeholder, is still masked (its finding says `low`); documentation's own examples are
/// not.
pub(super) fn keep(rule: &Rule, hay: &[u8], m: &Match, masking: bool) -> bool {
    // Every check only rejects, so their order changes nothing but the time: the cheap ones
    // that reject often come first (on the generated tree, per call: the literal check ~240
    // cycles and 22 % rejected, the documentation keys ~300 and 19 %, entropy ~1,500 and
    // 48 %; the placeholder words ~2,200 and 31 %, the dictionary ~4,400 and 23 %, the
    // generic name checks ~3,200 and 16 %).
    let secret = &hay[m.span()];
    // A masker takes a generated value under a secret's name in prose too (`your password:
    // q8Vz…, keep it`, `Initial admin password: KqTfXbWmRzPaLsDe`): a report leaves prose's
    // values out as too often not secrets, but no variable or word is shaped like a random
    // string, and too much is a masker's safe side.
    let random = |v: &[u8]| super::literal::generated(v) || super::literal::random_run(v);
    if rule.literal && !super::literal::is_literal(hay, m) && !(masking && random(secret)) {
        return false;
    }
    if is_documentation_example(secret) {
        return false;
    }
    if let Some(min) = rule.entropy {
        if shannon_entropy(secret) < min {
            return false;
        }
    }
    if let Some(c) = rule.checksum {
        if !masking && !checksum_ok(c, secret) {
            return false;
        }
    }
    // Identifiers (AWS key ids) are not checked for placeholder words, which a random id can
    // hold, only for filler (`AKIAXXXXXXXXXXXXXXXX`) and for AWS's documentation marker, which
    // its docs put inside an id too, not only at its end (`AKIAEXAMPLE…`): seven given
    // capitals are no accident in a random id.
    let filler = if rule.public {
        is_filler_id(secret) || memchr::memmem::find(secret, b"EXAMPLE").is_some()
    } else {
        (rule.generic || !masking) && super::placeholder::of_rule(rule, secret)
    };
    if filler {
        return false;
    }
    if rule.words && super::words::made_of_words(secret) {
        return false;
    }
    // For context rules: the name before the secret (whole, from before the match) and the
    // assignment sign.
    !(rule.generic
        && generic_reject(
            &hay[name_start(hay, m.match_start)..m.start],
            secret,
            rule.password,
            rule.by_name,
            masking,
        ))
}

/// Where the name that holds a rule's keyword begins: `next_` in `next_token = …` lies
/// before the match, which starts at the keyword.
fn name_start(hay: &[u8], at: usize) -> usize {
    let part_of_name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    at - hay[at.saturating_sub(32)..at]
        .iter()
        .rev()
        .take_while(|b| part_of_name(b))
        .count()
}

/// Shannon entropy of `bytes`, in bits per byte.
pub fn shannon_entropy(bytes: &[u8]) -> f64 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    // The bytes present, so that the sum visits them alone, in byte order: a walk of all
    // 256 counts was most of this function, and a value has a few dozen distinct bytes.
    let mut present = [0u64; 4];
    for &b in bytes {
        counts[b as usize] += 1;
        present[usize::from(b >> 6)] |= 1 << (b & 63);
    }
    let n = bytes.len() as f64;
    // Most bytes of a value occur once or twice: each count's term is worked out once (the
    // same terms, summed in the same order, so the same result to the bit), not a `log2`
    // for each distinct byte.
    let term = |c: u32| {
        let p = c as f64 / n;
        -p * p.log2()
    };
    let mut terms = [f64::NAN; 16];
    // From -0.0, as `Iterator::sum` of floats starts, so that one byte repeated is -0.0.
    let mut sum = -0.0;
    for (word, mut bits) in present.into_iter().enumerate() {
        while bits != 0 {
            let c = counts[word * 64 + bits.trailing_zeros() as usize];
            bits &= bits - 1;
            sum += match terms.get_mut(c as usize) {
                Some(t) => {
                    if t.is_nan() {
                        *t = term(c);
                    }
                    *t
                }
                None => term(c),
            };
        }
    }
    sum
}

// `sha` with what follows it in a digest's name: alone it is inside `SharedSecret`.
const HASH_WORDS: &[&str] = &[
    "hash",
    "sha1",
    "sha2",
    "sha3",
    "sha5",
    "sha_",
    "sha-",
    "shasum",
    "md5",
    "digest",
    "checksum",
    "integrity",
    "nonce",
    "salt",
    "commit",
];
/// Names of values that are tokens but not credentials: a pagination cursor (`NextToken`,
/// `page_token`), a form's CSRF token (bound to a session it cannot open), and what is public
/// by design (`publicToken`, a publishable key).
const NOT_CREDENTIAL_WORDS: &[&str] = &[
    "next_token",
    "nexttoken",
    "next-token",
    "page_token",
    "pagetoken",
    "page-token",
    "continuation",
    "csrf",
    "xsrf",
    "public",
    "publishable",
];
const FILE_SUFFIXES: &[&str] = &[
    ".json", ".pem", ".key", ".txt", ".yaml", ".yml", ".toml", ".env", ".crt", ".p12", ".pfx",
    ".cfg", ".ini", ".conf",
];

/// Filters for `password = …`-style rules, where the name alone says little. `password`: the
/// rule's value is a password a person chose (`Rule::password`), which need not mix classes.
/// `by_name`: the name vouches for any literal (`Rule::by_name`), so only what is not a value
/// at all is dropped (references, code, paths, a schema's word), not a value for its shape.
fn generic_reject(key: &[u8], secret: &[u8], password: bool, by_name: bool, masking: bool) -> bool {
    static HASHES: Words = Words::new(HASH_WORDS);
    static CODE: Words = Words::new(&["://", "env"]);
    static NOT_CREDENTIALS: Words = Words::new(NOT_CREDENTIAL_WORDS);
    let hex = secret.iter().all(|b| b.is_ascii_hexdigit());
    // Hashes: any value under a hash-like name. Hex of a digest length under a credential's
    // name is kept: API keys and secrets are often 32 or 64 hex digits (Flask's
    // `SECRET_KEY`, OAuth client secrets); its confidence then says whether it sits in a
    // test. Under an id's name (`private_key_id`) it is an id; in both cases at once
    // (`acdeFf05…`) it was typed: a program writes hex in one case.
    let both_cases =
        secret.iter().any(u8::is_ascii_lowercase) && secret.iter().any(u8::is_ascii_uppercase);
    if HASHES.found_in(key)
        || NOT_CREDENTIALS.found_in(key)
        || (hex
            && matches!(secret.len(), 32 | 40 | 56 | 64 | 96 | 128)
            && (names_an_id(key) || both_cases))
    {
        return true;
    }
    // Under an id's, a name's or an ARN's name the value names a secret, it is not one:
    // `SecretId="prod/payments/stripe-key"`, `secret_name: prod/app/api-key-v2`.
    // A uuid under a key's or a secret's own name is the credential (a client secret, an API
    // key), which only a rule that takes any value under such a name (`by_name`) keeps.
    if (is_uuid(secret) && !by_name) || names_a_reference(key) {
        return true;
    }
    // A quoted name, a comma, a value (`setProperty("API_TOKEN", "…")`): a pair only when
    // the name is a setting's, not a class's or an algorithm's (`"SecretKeyFactory", "PBKDF2…"`).
    if let Some(quote) = key.iter().position(|&b| b == b'"' || b == b'\'') {
        let pair = key[quote + 1..].trim_ascii_start().starts_with(b",");
        let camel = key[..quote]
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
        if pair && camel {
            return true;
        }
    }
    // Variable references and code: `os.environ`, `settings.SECRET`, `MY_TOKEN_NAME`,
    // `process.env.X`, `get_password()`.
    // Dotted names: `settings.SECRET`, `v4Internal.AmzSecurityTokenKey`,
    // `sun.security.pkcs11.P11SecretKeyFactory`.
    let identifier = |s: &[u8]| {
        s.first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
            && s.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    // A name, not a random value with a dot in it: the last part is letters or words, digits
    // aside (`x25519.X25519PrivateKey`).
    let name = |s: &[u8]| {
        let letters: Vec<u8> = s.iter().copied().filter(|b| !b.is_ascii_digit()).collect();
        s.iter().all(|b| b.is_ascii_alphabetic() || *b == b'_')
            || super::words::made_of_words(s)
            || super::words::made_of_words(&letters)
    };
    if secret.contains(&b'.')
        && secret.split(|&b| b == b'.').all(identifier)
        && secret.rsplit(|&b| b == b'.').next().is_some_and(name)
    {
        return true;
    }
    // An HTTP header's name (`X-Amz-Security-Token`) and a form body or query string
    // (`hh5s93j4&oauth_token_secret=…`): many values, not one. To a masker only when the
    // pairs are named in words (`&token_type=`): a password may hold `&r=` or `&k3x=`
    // (Django's alphabet has both), and then it is all masked.
    if (secret.starts_with(b"X-") || secret.starts_with(b"x-"))
        && secret
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
    {
        return true;
    }
    if secret.split(|&b| b == b'&').skip(1).any(|pair| {
        let name = &pair[..pair.iter().position(|&b| b == b'=').unwrap_or(pair.len())];
        name.len() < pair.len()
            && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
            && (!masking
                || (name.len() >= 3
                    && (super::words::is_word(name) || super::words::made_of_words(name))))
    }) {
        return true;
    }
    if secret
        .iter()
        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
        && secret.contains(&b'_')
    {
        return true;
    }
    let ends_with = |suffix: &str| {
        secret.len() >= suffix.len()
            && secret[secret.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    if secret.starts_with(b"$")
        || secret.starts_with(b"/")
        || secret.starts_with(b"./")
        || CODE.found_in(secret)
        || FILE_SUFFIXES.iter().any(|s| ends_with(s))
    {
        return true;
    }
    // A password a person chose need not mix classes: `qwmvzt` is one, and its confidence
    // (weak: `low`) says how sure. A lowercase word of a schema or a setting is not one
    // (`password: string`, `needless_pass_by_value = "allow"`), nor is the name passed on
    // (`passphrase=passphrase`).
    if !password && separated_name(secret) {
        return true;
    }
    if by_name && super::by_name::not_a_value(key, secret, password) {
        return true;
    }
    // Under `by_name` the same holds for any value, whatever its classes (`String`, `PASSWORD`).
    if by_name || (password && secret.iter().all(u8::is_ascii_lowercase)) {
        let named = key
            .windows(secret.len())
            .any(|w| w.eq_ignore_ascii_case(secret));
        let schema = SCHEMA_WORDS
            .iter()
            .any(|w| secret.eq_ignore_ascii_case(w.as_bytes()));
        // Words under a token's or a key's name are a kind or a setting (`token_type: bearer`);
        // under a password's they are a weak password.
        return schema || named || (by_name && !password && super::words::is_word(secret));
    }
    // Names with a counter (`token_count-415`, `worker_2`): lowercase words and separators
    // with at most a short number at the end. Not under a password's own name, where that is
    // what people choose (`sunshine42`): the finding stays `low` as a weak value.
    let head = secret.trim_ascii_end();
    let digits_at_end = head.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let stem = &head[..head.len() - digits_at_end];
    if !password
        && digits_at_end <= 4
        && stem
            .iter()
            .all(|b| b.is_ascii_lowercase() || matches!(b, b'-' | b'_' | b'.'))
    {
        return true;
    }
    // A secret mixes letters with digits or symbols; words, identifiers and kebab-case
    // names (`prod-db-credentials`) do not. Long mixed-case runs count as random too.
    let letters = secret.iter().any(|b| b.is_ascii_alphabetic());
    let others = secret
        .iter()
        .any(|b| !b.is_ascii_alphabetic() && !matches!(b, b'-' | b'_' | b'.'));
    // Under 20 characters, mixed case counts when the case changes often and the value is
    // not words: `yqDVtkqPECriaLRi` is random; `getElementById` and `UntagResource` are names.
    let case_changes = secret
        .windows(2)
        .filter(|w| w[0].is_ascii_uppercase() != w[1].is_ascii_uppercase())
        .count();
    let mixed_case = (secret.len() >= 20
        || (secret.len() >= 12
            && case_changes * 3 >= secret.len()
            && !super::words::made_of_words(secret)))
        && secret.iter().any(|b| b.is_ascii_uppercase())
        && secret.iter().any(|b| b.is_ascii_lowercase());
    !(letters && (others || mixed_case))
}

/// A name in parts (`KAS-ECC-CDH_P-256_C9`, `BOB_cf_sect193r1`, a test vector's entry under
/// `PrivateKey=`): two separators or more, a part of three capitals or more that is not hex, no
/// part over 16 characters (a provider's token carries a long random one: `FLWPUBK_TEST-<hex>-X`)
/// and at most one part that mixes cases, where a random token's long parts nearly all do.
fn separated_name(s: &[u8]) -> bool {
    let seps = s.iter().filter(|b| matches!(b, b'_' | b'-')).count();
    let parts = || {
        s.split(|b| matches!(b, b'_' | b'-'))
            .filter(|p| !p.is_empty())
    };
    let mixed =
        |p: &&[u8]| p.iter().any(u8::is_ascii_lowercase) && p.iter().any(u8::is_ascii_uppercase);
    // A label in capitals (`KAS`, `BOB`); lowercase parts in sequence are a placeholder's
    // (`a1b2c3d4-e5f6-g7h8-…`), which the rules' own judging handles.
    let word = |p: &[u8]| {
        p.len() >= 3 && p.iter().all(u8::is_ascii_uppercase) && !p.iter().all(u8::is_ascii_hexdigit)
    };
    seps >= 2
        && parts().all(|p| p.len() <= 16)
        && parts().filter(mixed).count() <= 1
        && parts().any(word)
}

/// Lowercase words that stand where a password would in schemas, forms, validation rules,
/// policies and lint tables: types, states and settings, not values.
const SCHEMA_WORDS: &[&str] = &[
    "string",
    "str",
    "text",
    "bool",
    "boolean",
    "number",
    "integer",
    "int",
    "bytes",
    "varchar",
    "char",
    "object",
    "any",
    "undefined",
    "unknown",
    "required",
    "optional",
    "hidden",
    "input",
    "field",
    "value",
    "missing",
    "invalid",
    "empty",
    "blank",
    "masked",
    "encrypted",
    "sensitive",
    "plain",
    "plaintext",
    "confirm",
    "confirmed",
    "reset",
    "change",
    "forgot",
    "login",
    "email",
    "username",
    "strong",
    "weak",
    "medium",
    "enabled",
    "disabled",
    "match",
    "mismatch",
    "expired",
    "random",
    "generated",
    "prompt",
    "file",
    "vault",
    "keyring",
    "secure",
    "allow",
    "deny",
    "warn",
    "forbid",
];

/// Whether the name before a value names a secret rather than holds it: an id's
/// ([`names_an_id`]), a name's (`secret_name = `, `"SecretName": `) or an ARN's (`SecretArn`).
fn names_a_reference(key: &[u8]) -> bool {
    let name = key
        .iter()
        .rposition(|b| b.is_ascii_alphanumeric())
        .map_or(&key[..0], |end| &key[..=end]);
    let ends = |word: &[u8]| {
        let Some(head) = name.len().checked_sub(word.len()) else {
            return false;
        };
        let (rest, tail) = name.split_at(head);
        let sep = rest.last().is_some_and(|b| b"_-.".contains(b));
        // `secret_name`, `SECRET_NAME`, `secretName`, `SecretName`: not `username`.
        (sep && tail.eq_ignore_ascii_case(word))
            || (rest.last().is_some_and(u8::is_ascii_lowercase)
                && tail[0] == word[0].to_ascii_uppercase()
                && tail[1..] == word[1..])
    };
    names_an_id(key) || ends(b"name") || ends(b"arn")
}

/// Whether the name before a value names an id: `private_key_id = `, `"clientId": `.
fn names_an_id(key: &[u8]) -> bool {
    let name = key
        .iter()
        .rposition(|b| b.is_ascii_alphanumeric())
        .map_or(&key[..0], |end| &key[..=end]);
    match name {
        [.., b'_' | b'-' | b'.', b'i' | b'I', b'd' | b'D'] => true,
        [.., lower, b'I', b'd'] => lower.is_ascii_lowercase(),
        _ => false,
    }
}

fn is_uuid(s: &[u8]) -> bool {
    s.len() == 36
        && s.iter().enumerate().all(|(i, &b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reject(key: &[u8], secret: &[u8]) -> bool {
        generic_reject(key, secret, false, false, false)
    }

    /// Under a password rule (`Rule::password`).
    fn reject_password(key: &[u8], secret: &[u8]) -> bool {
        generic_reject(key, secret, true, false, false)
    }

    /// As a masker's engine judges it.
    fn reject_masking(key: &[u8], secret: &[u8]) -> bool {
        generic_reject(key, secret, false, false, true)
    }

    #[test]
    fn entropy_bounds() {
        assert_eq!(shannon_entropy(b"aaaa"), 0.0);
        // Each count's term worked out once gives the plain sum, to the bit (reports print
        // it; thresholds compare it).
        let plain = |v: &[u8]| -> f64 {
            let mut counts = [0u32; 256];
            v.iter().for_each(|&b| counts[b as usize] += 1);
            let n = v.len() as f64;
            counts
                .iter()
                .filter(|&&c| c > 0)
                .map(|&c| -(c as f64 / n) * (c as f64 / n).log2())
                .sum()
        };
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in 1..300 {
            let v: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if len % 3 == 0 {
                        // Any byte: each of the four words of the bytes present.
                        (x >> 24) as u8
                    } else {
                        b"abcdefghij0123456789ABCDEF+/"[(x % (1 + len as u64 % 28)) as usize]
                    }
                })
                .collect();
            assert_eq!(shannon_entropy(&v).to_bits(), plain(&v).to_bits(), "{v:?}");
        }
        assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-9);
    }

    #[test]
    fn generic_filters() {
        assert!(reject(b"password = ", b"os.environ.get"));
        assert!(reject(b"token = ", b"MY_SECRET_TOKEN"));
        assert!(reject(b"token = ", b"123e4567-e89b-12d3-a456-426614174000"));
        assert!(reject(b"password_hash = ", b"q8Vz3LmT0pWx9RkJ2nHs"));
        assert!(reject(b"password = ", b"correcthorsebattery"));
        assert!(reject(b"token_count: \"", b"token_count-415"));
        assert!(reject(b"token = ", b"v4Internal.AmzSecurityTokenKey"));
        assert!(reject(b"token = ", b"X-Amz-Security-Token"));
        assert!(reject(
            b"token=",
            b"45ghiukldjahdnhzdauz&token_type_hint=refresh_token"
        ));
        assert!(!reject(b"password = ", b"q8Vz3LmT0pWx9RkJ2nHs"));
        assert!(!reject(b"password = ", b"q8Vz3L&mT0pWx9RkJ2nHs"));
        // Hex of a digest length: a key under a credential's name, an id under an id's.
        let hex = b"951bc382db9abad29c68634761dd6e19";
        assert!(!reject(b"API_KEY = \"", hex));
        assert!(!reject(b"\"apiKey\": \"", hex));
        assert!(reject(b"\"private_key_id\": \"", hex));
        assert!(reject(b"apiKeyId = '", hex));
        assert!(reject(b"api-key: ", b"acdeFf05b1a6d4c890237bf08c5e6e8d"));
        assert!(reject(b"token_sha256 = '", hex));
        assert!(reject(b"\"NextToken\": \"", hex));
        assert!(reject(b"csrf-token=", b"Mj2qykJO5rELyHgezQ69nzUX0i3OH67V"));
        assert!(reject(
            b"publicToken = \"",
            b"9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC"
        ));
        // A quoted pair: a setting's name, not a class's.
        assert!(!reject(b"SERVICE_TOKEN\", \"", b"hV3qK8mZ2pX7wN4tR9bL6cY1"));
        assert!(reject(b"SecretKeyFactory\", \"", b"PBKDF2WithHmacSHA512"));
        // Short mixed case: random, or a name.
        assert!(!reject(b"-u developer:", b"yqDVtkqPECriaLRi"));
        assert!(reject(b"secretsmanager:", b"UntagResource"));
        assert!(reject(b"token = ", b"getElementById"));
        // A type's name after its module, digits and all.
        assert!(reject(b"private_key: ", b"x25519.X25519PrivateKey"));
        // Under a name that names a secret: its name, not its value.
        assert!(reject(b"SecretId=\"", b"prod/payments/stripe-key"));
        assert!(reject(b"SECRET_NAME: ", b"prod/app/api-key-v2"));
        assert!(reject(b"\"SecretArn\": \"", b"prod/DbCredentials2"));
        assert!(!reject(b"username_secret: ", b"prod/DbCredentials2"));
        // One class of lowercase letters: a chosen password, unless a schema's word.
        assert!(reject(b"password: ", b"qwmvzt"));
        assert!(!reject_password(b"password: ", b"qwmvzt"));
        assert!(reject_password(b"password: ", b"string"));
        assert!(reject_password(b"password_hash: ", b"qwmvzt"));
        assert!(reject_password(b"password = ", b"password_value"));
        assert!(reject_password(b"passphrase=", b"passphrase"));
        assert!(reject_password(b"copy_pass_by_ref = \"", b"warn"));
        // `Shared` is no `sha`: a digest's name, not a secret's.
        assert!(!reject(b"SharedSecret=", b"q8Vz3LmT0pWx9RkJ2nHs"));
        // A name in parts, not a token whose parts mix cases.
        assert!(reject(b"PrivateKey=", b"KAS-ECC-CDH_P-256_C9"));
        assert!(reject(b"PrivateKey=", b"BOB_cf_sect193r1"));
        assert!(!reject(
            b"token = ",
            b"PUBK_TEST-951bc382db9abad29c68634761dd6e19-X"
        ));
        assert!(!reject(
            b"privacy_token=",
            b"bcde2345-fg67-89hi-jklm-nopqrstuvwxy"
        ));
        assert!(!reject(
            b"token = ",
            b"Zq8vLm3Tp0Wx-9RkHq3vLm8T_p0Wx9RkJ2nHs"
        ));
        // A uuid under a secret's name: kept by a rule that takes any value by its name.
        let uuid = b"123e4567-e89b-12d3-a456-426614174000";
        assert!(reject(b"client_secret = \"", uuid));
        assert!(!generic_reject(
            b"client_secret = \"",
            uuid,
            false,
            true,
            false
        ));
        // A form body's pairs: many values for a report; to a masker only when named in
        // words, else all masked.
        assert!(reject(b"password=", b"Hq7vRt2mZk&r=Xy8kq2"));
        assert!(!reject_masking(b"password=", b"Hq7vRt2mZk&r=Xy8kq2"));
        assert!(reject_masking(b"token=", b"Hq7vRt2mZk&token_type=bearer"));
        assert!(reject_masking(b"token=", b"OcQREPvC7r&flag=web-api"));
    }

    #[test]
    fn reference_names() {
        for key in [
            &b"secret_name = \""[..],
            b"SECRET_NAME: ",
            b"\"SecretName\": \"",
            b"secretArn=",
            b"SecretId=\"",
        ] {
            assert!(names_a_reference(key), "{}", String::from_utf8_lossy(key));
        }
        for key in [&b"username = "[..], b"USERNAME=", b"secret = ", b"learn: "] {
            assert!(!names_a_reference(key), "{}", String::from_utf8_lossy(key));
        }
    }

    #[test]
    fn id_names() {
        for key in [
            &b"private_key_id = "[..],
            b"\"clientId\": \"",
            b"secret-ID: ",
            b"x.id=",
        ] {
            assert!(names_an_id(key), "{}", String::from_utf8_lossy(key));
        }
        for key in [&b"api_key = "[..], b"\"paid\": ", b"void = ", b"ID = "] {
            assert!(!names_an_id(key), "{}", String::from_utf8_lossy(key));
        }
    }
}
