//! Cheap checks that cut the classic false positives after a regex matched: documentation
//! example keys, placeholders, low entropy, bad checksums, and, for generic assignment rules,
//! variable references, hashes, uuids and paths.

use super::Match;
use crate::rules::{Checksum, Rule};
use aho_corasick::AhoCorasick;
use base64::Engine as _;
use std::sync::OnceLock;

/// A case-insensitive "contains any of" test, built once.
fn contains_any(
    cell: &'static OnceLock<AhoCorasick>,
    words: &'static [&'static str],
    hay: &[u8],
) -> bool {
    cell.get_or_init(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(words)
            .expect("fixed word list builds")
    })
    .is_match(hay)
}

/// Whether match `m` of `rule` in `hay` survives the filters.
/// Whether `rule`'s match `m` in `hay` is kept. A masker's engine (`masking`) keeps what only
/// looks doubtful: a token of a provider's shape whose checksum fails, or that reads like a
/// placeholder, is still masked (its finding says `low`); documentation's own examples are
/// not.
pub(super) fn keep(rule: &Rule, hay: &[u8], m: &Match, masking: bool) -> bool {
    let secret = &hay[m.span()];
    if is_documentation_example(secret) {
        return false;
    }
    // Identifiers (AWS key ids) are not checked for placeholder words, which a random id can
    // hold, only for filler (`AKIAXXXXXXXXXXXXXXXX`) and for AWS's documentation marker, which
    // its docs put inside an id too, not only at its end (`AKIAEXAMPLE…`): seven given
    // capitals are no accident in a random id.
    let filler = if rule.public {
        is_filler_id(secret) || memchr::memmem::find(secret, b"EXAMPLE").is_some()
    } else {
        (rule.generic || !masking) && is_placeholder(secret)
    };
    if filler {
        return false;
    }
    if rule.literal && !super::literal::is_literal(hay, m) {
        return false;
    }
    if rule.words && super::words::made_of_words(secret) {
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
    // For context rules: the name before the secret (whole, from before the match) and the
    // assignment sign.
    !(rule.generic
        && generic_reject(
            &hay[name_start(hay, m.match_start)..m.start],
            secret,
            rule.password,
        ))
}

/// Whether `secret` passes its rule's checksum.
pub fn checksum_ok(c: Checksum, secret: &[u8]) -> bool {
    match c {
        Checksum::Github => github_checksum_ok(secret),
        Checksum::Jwt => jwt_header_ok(secret),
        Checksum::Base64Credentials => base64_credentials_ok(secret),
    }
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
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

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
fn is_documentation_example(secret: &[u8]) -> bool {
    const JWT_IO_PAYLOAD: &[u8] = b"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIi";
    secret.ends_with(b"EXAMPLE")
        || secret.ends_with(b"EXAMPLEKEY")
        || KNOWN_EXAMPLES.iter().any(|e| secret == e.as_bytes())
        || memchr::memmem::find(secret, JWT_IO_PAYLOAD).is_some()
}

const PLACEHOLDER_WORDS: &[&str] = &[
    "xxxx",
    "changeme",
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourkey",
    "yourtoken",
    "yoursecret",
    "yourpassword",
    "placeholder",
    "password",
    "passw0rd",
    "redacted",
    "dummy",
    "example",
    "sample",
    "insert",
    "replace",
    "****",
    "....",
    "abcdefg",
    "12345678",
    "0123456",
    "<",
    ">",
    "${",
    "{{",
    "}}",
    "%(",
];

/// Whole values that are never real secrets: default and documentation passwords.
const PLACEHOLDER_VALUES: &[&str] = &[
    "pass", "pwd", "passwd", "secret", "root", "admin", "test", "guest", "user", "postgres",
    "mysql", "redis", "rabbitmq", "changeit", "letmein", "qwerty", "default", "none", "null",
    "nil", "true", "false", "foo", "bar", "foobar", "token", "%s",
];

fn is_placeholder(secret: &[u8]) -> bool {
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
    if (secret.len() > 1
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
    {
        return true;
    }
    static WORDS: OnceLock<AhoCorasick> = OnceLock::new();
    if contains_any(&WORDS, PLACEHOLDER_WORDS, secret) {
        return true;
    }
    shouts_words(secret) || is_filler(secret)
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
fn is_filler_id(id: &[u8]) -> bool {
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

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// GitHub's (and npm's) token format: `prefix_` + 30 random base62 characters + the CRC32 of
/// those 30, base62-encoded in 6 characters.
pub(crate) fn github_checksum_ok(secret: &[u8]) -> bool {
    let Some(us) = memchr::memrchr(b'_', secret) else {
        return false;
    };
    let body = &secret[us + 1..];
    if body.len() < 7 {
        return false;
    }
    let (random, check) = body.split_at(body.len() - 6);
    base62_6(crc32fast::hash(random)).as_slice() == check
}

pub(crate) fn base62_6(mut n: u32) -> [u8; 6] {
    let mut out = [b'0'; 6];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    out
}

pub(super) fn b64_decode_lenient(s: &[u8]) -> Option<Vec<u8>> {
    let trimmed: Vec<u8> = s.iter().copied().filter(|&b| b != b'=').collect();
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(&trimmed)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(&trimmed))
        .ok()
}

/// A JWT's first segment is base64url JSON naming a JOSE header parameter, or any JSON
/// object when the second segment is a JSON object naming a registered claim: headers such
/// as `{"kty":"EC"}` or `{"ver":"2"}` name no registered parameter, but a header and a
/// payload with `iss` or `exp` are a token all the same.
fn jwt_header_ok(secret: &[u8]) -> bool {
    let header = secret.split(|&b| b == b'.').next().unwrap_or_default();
    let Some(h) = b64_decode_lenient(header).filter(|h| h.first() == Some(&b'{')) else {
        return false;
    };
    JOSE_HEADER
        .iter()
        .any(|p| memchr::memmem::find(&h, p).is_some())
        || jwt_payload(secret)
            .is_some_and(|map| map.keys().any(|k| REGISTERED_CLAIMS.contains(&k.as_str())))
}

/// RFC 7519 section 4.1's registered claims.
const REGISTERED_CLAIMS: &[&str] = &["iss", "sub", "aud", "exp", "nbf", "iat", "jti"];

/// A JWT's payload (its second segment) when it is base64url of a JSON object; `None` when
/// it is not (encrypted, or not a JWT after all).
pub(super) fn jwt_payload(secret: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    let payload = secret.split(|&b| b == b'.').nth(1)?;
    match serde_json::from_slice(&b64_decode_lenient(payload)?) {
        Ok(serde_json::Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// The JOSE header parameters in IANA's registry (RFC 7515 section 4.1, RFC 7516 section 4.1,
/// RFC 7518 sections 4.6-4.8, RFC 7797 `b64`, RFC 8555 `url`/`nonce`, RFC 8225 `ppt`,
/// RFC 9321 `svt`, and the claims RFC 7519 section 5.3 lets a header repeat) as JSON keys: a
/// token's header names at least one.
const JOSE_HEADER: &[&[u8]] = &[
    b"\"alg\"",
    b"\"typ\"",
    b"\"cty\"",
    b"\"kid\"",
    b"\"jku\"",
    b"\"jwk\"",
    b"\"x5u\"",
    b"\"x5c\"",
    b"\"x5t\"",
    b"\"x5t#S256\"",
    b"\"crit\"",
    b"\"enc\"",
    b"\"zip\"",
    b"\"epk\"",
    b"\"apu\"",
    b"\"apv\"",
    b"\"iv\"",
    b"\"tag\"",
    b"\"p2s\"",
    b"\"p2c\"",
    b"\"b64\"",
    b"\"url\"",
    b"\"nonce\"",
    b"\"ppt\"",
    b"\"svt\"",
    b"\"iss\"",
    b"\"sub\"",
    b"\"aud\"",
];

/// `user:password` in base64, as in a Docker `config.json` `auth` field.
fn base64_credentials_ok(secret: &[u8]) -> bool {
    b64_decode_lenient(secret).is_some_and(|d| {
        let colon = d.iter().position(|&b| b == b':');
        colon.is_some_and(|c| c > 0 && c + 1 < d.len())
            && d.iter().all(|&b| (0x20..0x7f).contains(&b))
    })
}

const HASH_WORDS: &[&str] = &[
    "hash",
    "sha",
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
fn generic_reject(key: &[u8], secret: &[u8], password: bool) -> bool {
    static HASHES: OnceLock<AhoCorasick> = OnceLock::new();
    static CODE: OnceLock<AhoCorasick> = OnceLock::new();
    static NOT_CREDENTIALS: OnceLock<AhoCorasick> = OnceLock::new();
    let hex = secret.iter().all(|b| b.is_ascii_hexdigit());
    // Hashes: any value under a hash-like name. Hex of a digest length under a credential's
    // name is kept: API keys and secrets are often 32 or 64 hex digits (Flask's
    // `SECRET_KEY`, OAuth client secrets); its confidence then says whether it sits in a
    // test. Under an id's name (`private_key_id`) it is an id; in both cases at once
    // (`acdeFf05…`) it was typed: a program writes hex in one case.
    let both_cases =
        secret.iter().any(u8::is_ascii_lowercase) && secret.iter().any(u8::is_ascii_uppercase);
    if contains_any(&HASHES, HASH_WORDS, key)
        || contains_any(&NOT_CREDENTIALS, NOT_CREDENTIAL_WORDS, key)
        || (hex
            && matches!(secret.len(), 32 | 40 | 56 | 64 | 96 | 128)
            && (names_an_id(key) || both_cases))
    {
        return true;
    }
    // Under an id's, a name's or an ARN's name the value names a secret, it is not one:
    // `SecretId="prod/payments/stripe-key"`, `secret_name: prod/app/api-key-v2`.
    if is_uuid(secret) || names_a_reference(key) {
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
    // (`hh5s93j4&oauth_token_secret=…`): many values, not one.
    if (secret.starts_with(b"X-") || secret.starts_with(b"x-"))
        && secret
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
    {
        return true;
    }
    if secret.split(|&b| b == b'&').skip(1).any(|pair| {
        pair.contains(&b'=')
            && pair
                .iter()
                .take_while(|&&b| b != b'=')
                .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
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
        || contains_any(&CODE, &["://", "env"], secret)
        || FILE_SUFFIXES.iter().any(|s| ends_with(s))
    {
        return true;
    }
    // A password a person chose need not mix classes: `qwmvzt` is one, and its confidence
    // (weak: `low`) says how sure. A lowercase word of a schema or a setting is not one
    // (`password: string`, `needless_pass_by_value = "allow"`), nor is the name passed on
    // (`passphrase=passphrase`).
    if password && secret.iter().all(u8::is_ascii_lowercase) {
        let named = key
            .windows(secret.len())
            .any(|w| w.eq_ignore_ascii_case(secret));
        return SCHEMA_WORDS.iter().any(|w| secret == w.as_bytes()) || named;
    }
    // Names with a counter (`token_count-415`, `worker_2`): lowercase words and separators
    // with at most a short number at the end.
    let head = secret.trim_ascii_end();
    let digits_at_end = head.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let stem = &head[..head.len() - digits_at_end];
    if digits_at_end <= 4
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
        generic_reject(key, secret, false)
    }

    #[test]
    fn jwt_headers() {
        use base64::Engine as _;
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let jwt = |h: &str, p: &str| format!("{}.{}.c2lnbmF0dXJl", enc(h), enc(p));
        // A registered header parameter, or any header with a registered claim in the payload.
        assert!(jwt_header_ok(
            jwt(r#"{"b64":false}"#, r#"{"a":1}"#).as_bytes()
        ));
        assert!(jwt_header_ok(
            jwt(r#"{"kty":"EC"}"#, r#"{"iss":"x","exp":1}"#).as_bytes()
        ));
        // Neither: JSON that is not a token, and a header that is not JSON.
        assert!(!jwt_header_ok(
            jwt(r#"{"kty":"EC"}"#, r#"{"a":1}"#).as_bytes()
        ));
        assert!(!jwt_header_ok(jwt("not json", r#"{"iss":"x"}"#).as_bytes()));
    }

    #[test]
    fn base62_checksum_roundtrip() {
        let random = b"AbCdEfGhIjKlMnOpQrStUvWxYz0123";
        let mut tok = b"ghp_".to_vec();
        tok.extend_from_slice(random);
        tok.extend_from_slice(&base62_6(crc32fast::hash(random)));
        assert!(github_checksum_ok(&tok));
        let last = tok.len() - 1;
        tok[last] = if tok[last] == b'A' { b'B' } else { b'A' };
        assert!(!github_checksum_ok(&tok));
    }

    #[test]
    fn entropy_bounds() {
        assert_eq!(shannon_entropy(b"aaaa"), 0.0);
        assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-9);
    }

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
        assert!(!generic_reject(b"password: ", b"qwmvzt", true));
        assert!(generic_reject(b"password: ", b"string", true));
        assert!(generic_reject(b"password_hash: ", b"qwmvzt", true));
        assert!(generic_reject(b"password = ", b"password_value", true));
        assert!(generic_reject(b"passphrase=", b"passphrase", true));
        assert!(generic_reject(b"copy_pass_by_ref = \"", b"warn", true));
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
