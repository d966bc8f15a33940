//! A finding's confidence: its rule's, moved by what the value and its place say.
//!
//! The rule gives the start (`Rule::confidence`). Four things move it, each one a property of
//! the found value that the rule alone cannot know:
//! - a generic value (known by its context alone) rises to `medium` when it looks generated
//!   (long, mixed character classes, high entropy, not words) and does not sit in a test, an
//!   example or documentation, where generated-looking fixtures are the norm (a generic
//!   password, as in `curl -u user:…`, rises when it is not weak, by the test below);
//! - a password a person chose (`Rule::password`: in a URL, a `.netrc`) falls to `low` when it
//!   is weak: short, one character class, or made of words (`tiger`, `secretpass`,
//!   `top%20secret`), and when it sits in a test, an example or documentation, where such
//!   passwords are demos' unless long and generated-looking;
//! - a JWT (`checksum = "jwt"`) falls to `low` when its payload carries no claim a real token
//!   has (`{"foo":"bar"}` in a library's tests);
//! - a shape that libraries ship as test vectors (`Rule::fixtures`: password hashes) falls to
//!   `low` in a test, an example, documentation or a comment.

use super::checksum::{b64_decode_lenient, jwt_payload};
use super::reject::shannon_entropy;
use crate::rules::{Checksum, Confidence, Rule};

/// The confidence of `rule`'s finding of `secret` at `path` (the path within its source; a
/// stream's name), with `before` the text of its line before it.
pub fn of(rule: &Rule, secret: &[u8], path: &str, before: &[u8]) -> Confidence {
    judge(rule, secret, path, before).0
}

/// [`of`], with the reasons for it: what the rule's confidence rests on (`"provider
/// prefix"`, `"checksum passed"`, `"beside its companion"`, `"provider context"`, or
/// `"context only"` for a generic rule), then what the value and its place say (`"generated-
/// looking value"`, `"not generated-looking"`, `"strong value"`, `"weak value"`, `"test
/// path"`, `"example"`, `"documentation"`, `"in a comment"`, `"no claims in payload"`,
/// `"placeholder-looking"`). Fixed words, never a piece of the value: a report shows them.
pub fn judge(
    rule: &Rule,
    secret: &[u8],
    path: &str,
    before: &[u8],
) -> (Confidence, Vec<&'static str>) {
    let base = rule.confidence();
    let mut why = vec![start_reason(rule)];
    // Decoded once (a `Basic` value's base64) for every judgement of a password below.
    let chosen = rule.password.then(|| chosen_password(rule, secret));
    if rule.generic {
        // A password known by its context (`curl -u user:…`) is one a person chose: it
        // rises when it is not weak, since chosen passwords rarely look generated.
        let strong = match &chosen {
            Some(pw) => !is_weak_password(pw),
            None => looks_generated(secret),
        };
        let place = place_kind(path);
        if base == Confidence::Low {
            why.push(match (strong, rule.password) {
                (true, true) => "strong value",
                (true, false) => "generated-looking value",
                (false, true) => "weak value",
                (false, false) => "not generated-looking",
            });
            // A `by_name` rule keeps values for their name alone (hex keys, uuids, test
            // vectors among them): its findings stay where the rule puts them.
            if strong && place.is_none() && !rule.by_name {
                return (Confidence::Medium, why);
            }
            why.extend(place);
        }
        return (base, why);
    }
    if rule.fixtures {
        let place = place_kind(path).or(is_comment(before).then_some("in a comment"));
        if let Some(p) = place {
            why.push(p);
            return (Confidence::Low, why);
        }
    }
    if let Some(pw) = &chosen {
        if is_weak_password(pw) {
            why.push("weak value");
            return (Confidence::Low, why);
        }
        // A password in a URL or connection string in a test, an example or documentation is
        // a demo's (`postgres://app:Sup3rDem0@localhost/app` in a README) unless a machine
        // made it (long and generated-looking): reported at `low`, masked all the same.
        if let Some(p) = place_kind(path).filter(|_| pw.len() < 16 || !looks_generated(pw)) {
            why.push(p);
            return (Confidence::Low, why);
        }
    }
    if rule.checksum == Some(Checksum::Jwt) && jwt_without_claims(secret) {
        why.push("no claims in payload");
        return (Confidence::Low, why);
    }
    // Only a masker's engine keeps a provider-shaped token that reads like a placeholder:
    // masked, and reported as doubt.
    if !rule.public && super::placeholder::of_rule(rule, secret) {
        why.push("placeholder-looking");
        return (Confidence::Low, why);
    }
    (base, why)
}

/// The password a person chose in `rule`'s match: the value itself, or, where the rule's
/// value is base64 of `user:password` (`Basic …`), the part after the first colon.
fn chosen_password(rule: &Rule, secret: &[u8]) -> Vec<u8> {
    if rule.checksum == Some(Checksum::Base64Credentials) {
        if let Some(d) = b64_decode_lenient(secret) {
            if let Some(colon) = d.iter().position(|&b| b == b':') {
                return d[colon + 1..].to_vec();
            }
        }
    }
    secret.to_vec()
}

/// What a rule's own confidence rests on, as [`Rule::confidence`] derives it.
fn start_reason(rule: &Rule) -> &'static str {
    if rule.generic {
        "context only"
    } else if rule.checksum.is_some() {
        "checksum passed"
    } else if rule.requires.is_some() {
        "beside its companion"
    } else if rule.pattern_facts().is_ok_and(|f| f.fixed_prefix) {
        "provider prefix"
    } else {
        "provider context"
    }
}

/// The reasons of a token whose checksum failed: kept only by a masker, reported `low`.
pub fn checksum_failed() -> Vec<&'static str> {
    vec!["checksum failed"]
}

/// Whether a line that begins with `before` is a comment: documentation's examples sit in
/// comments (`# hash => "$6$…"` in a plugin's docs).
fn is_comment(before: &[u8]) -> bool {
    let line = before.trim_ascii_start();
    ["#", "//", "/*", "*", "--", ";", "<!--"]
        .iter()
        .any(|m| line.starts_with(m.as_bytes()))
}

/// Character classes in `s`: lowercase, uppercase, digits, others.
fn classes(s: &[u8]) -> usize {
    let has = |f: fn(&u8) -> bool| usize::from(s.iter().any(f));
    has(u8::is_ascii_lowercase)
        + has(u8::is_ascii_uppercase)
        + has(u8::is_ascii_digit)
        + has(|b| !b.is_ascii_alphanumeric())
}

/// A value a machine made, not a person or a program's author: 12 characters or more, not
/// words, entropy of 3 bits per character or more, and three character classes (or two
/// over 20 characters and more entropy: hex and base32 tokens).
fn looks_generated(s: &[u8]) -> bool {
    if s.len() < 12 || is_wordy(s) || decodes_to_text(s) {
        return false;
    }
    let entropy = shannon_entropy(s);
    let classes = classes(s);
    entropy >= 3.0 && (classes >= 3 || (s.len() >= 20 && classes >= 2 && entropy >= 3.5))
}

/// Whether a person could have typed `s` to remember it: under 8 characters, one character
/// class under 16, or words with at most a short number (after percent-decoding).
fn is_weak_password(s: &[u8]) -> bool {
    let s = percent_decode(s);
    s.len() < 8 || (classes(&s) <= 1 && s.len() < 16) || is_wordy(&s)
}

/// `%40` → `@`: URLs carry passwords percent-encoded.
fn percent_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
        if s[i] == b'%' && i + 2 < s.len() {
            if let (Some(h), Some(l)) = (hex(s[i + 1]), hex(s[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// Words and short numbers joined by anything: `NEW!!secret-access-token`, `Summer2024!`,
/// `this is a token`, `[Filtered]`. At least one word; parts of one or two letters pass; no
/// other part.
fn is_wordy(s: &[u8]) -> bool {
    let mut words = 0;
    for part in s
        .split(|b| !b.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        if super::words::made_of_words(part) {
            words += 1;
            continue;
        }
        for run in part.chunk_by(|a, b| a.is_ascii_digit() == b.is_ascii_digit()) {
            if run[0].is_ascii_digit() {
                if run.len() > 4 {
                    return false;
                }
            } else if super::words::is_word(run) {
                words += 1;
            } else if run.len() > 2 {
                return false;
            }
        }
    }
    words > 0
}

/// Base64 of plain text (`dGhpcyBpcyBhIHRva2Vu` is "this is a token"): a test's stand-in.
fn decodes_to_text(s: &[u8]) -> bool {
    if s.len() < 16 {
        return false;
    }
    b64_decode_lenient(s).is_some_and(|d| {
        d.len() >= 8
            && d.iter().all(|&b| (0x20..0x7f).contains(&b))
            && d.contains(&b' ')
            && is_wordy(&d)
    })
}

/// The claims of real tokens: the registered ones (RFC 7519) and the usual private ones.
const CLAIMS: &[&str] = &[
    "iss",
    "sub",
    "aud",
    "exp",
    "nbf",
    "iat",
    "jti",
    "scope",
    "scp",
    "azp",
    "client_id",
    "email",
    "role",
    "roles",
    "uid",
    "user_id",
    "tid",
    "oid",
    "sid",
    "kid",
    "username",
    "groups",
];

/// Whether a JWT's payload (its second segment) is a JSON object naming no claim of
/// [`CLAIMS`]: `{"foo":"bar"}`, `{"some":"payload"}`. A payload that is not JSON (encrypted,
/// or not a JWT after all) says nothing either way.
fn jwt_without_claims(secret: &[u8]) -> bool {
    jwt_payload(secret).is_some_and(|map| !map.keys().any(|k| CLAIMS.contains(&k.as_str())))
}

/// Folders and files that hold tests, fixtures, examples and documentation.
const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "testdata",
    "test-data",
    "test_data",
    "t",
    "spec",
    "specs",
    "__tests__",
    "__mocks__",
    "mocks",
    "fixtures",
    "fixture",
    "example",
    "examples",
    "sample",
    "samples",
    "demo",
    "demos",
    "doc",
    "docs",
    "documentation",
];
/// Templates and samples. Not `.md` or `.txt`: notes and saved interpreter output are where
/// real secrets get pasted.
const DOC_EXTENSIONS: &[&str] = &["sample", "example", "template", "tmpl", "dist"];

/// Whether `path` is a test, a fixture, an example or documentation: a folder of
/// [`TEST_DIRS`], a test file by the conventions of Go, Python, JS/TS, Java and Rust, a
/// README or changelog, or a sample or template extension.
pub fn is_test_or_doc(path: &str) -> bool {
    place_kind(path).is_some()
}

/// Which of those `path` is, as a finding's reason: `"test path"`, `"example"` or
/// `"documentation"`; `None` for any other place.
pub fn place_kind(path: &str) -> Option<&'static str> {
    let lower = path.to_ascii_lowercase();
    let mut parts = lower.split(['/', '\\']).filter(|p| !p.is_empty());
    let name = parts.next_back()?;
    let kind_of_dir = |dir: &str| match dir {
        "example" | "examples" | "sample" | "samples" | "demo" | "demos" => "example",
        "doc" | "docs" | "documentation" => "documentation",
        _ => "test path",
    };
    // A folder named for tests in part too: `aws-signing-test-suite`, `test_utils`.
    if let Some(dir) = parts.find(|dir| {
        TEST_DIRS.contains(dir)
            || dir
                .split(['-', '_', '.'])
                .any(|part| ["test", "tests", "testing", "testdata", "fixtures"].contains(&part))
    }) {
        return Some(if TEST_DIRS.contains(&dir) {
            kind_of_dir(dir)
        } else {
            "test path"
        });
    }
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    if stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || stem.ends_with(".test")
        || stem.ends_with(".spec")
        || stem.starts_with("conftest")
        || (ext == "java" && (stem.ends_with("test") || stem.ends_with("tests")))
    {
        return Some("test path");
    }
    if stem.contains("example") || stem.contains("sample") || DOC_EXTENSIONS.contains(&ext) {
        return Some("example");
    }
    ["readme", "changelog", "changes", "history", "pkg-info"]
        .iter()
        .any(|n| stem.starts_with(n))
        .then_some("documentation")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_and_doc_paths() {
        for p in [
            "go/src/github.com/slack-go/slack/security_test.go",
            "celery/t/unit/backends/test_redis.py",
            "pkg/tests/config_files/example.jwt",
            "js/lib/auth.spec.ts",
            "java/src/test/java/FooTest.java",
            "README.md",
            "docs/usage.rst",
            "pyjwt/CHANGELOG.rst",
            "config.json.sample",
            "botocore/data/ec2/2016-11-15/examples-1.json",
            "pyjwt-2.15.1/PKG-INFO",
            "aws-sigv4-1.6.4/aws-signing-test-suite/v4/get-vanilla/context.json",
            "pkg/test_utils/keys.py",
        ] {
            assert!(is_test_or_doc(p), "{p}");
        }
        for p in [
            "rust/crates/time/src/iter/date_iter.rs",
            ".gitlab-ci.yml",
            "infra/terraform.tfvars",
            "src/latest.rs",
            "contest/main.py",
            "latest-release/config.py",
            "app/settings.py",
            "notes/deploy.md",
            "out/cell-3-stdout.txt",
        ] {
            assert!(!is_test_or_doc(p), "{p}");
        }
    }

    /// Issue 27: each finding says why it has its confidence.
    #[test]
    fn reasons_say_what_moved_the_confidence() {
        let rules = crate::rules::builtin();
        let rule = |id: &str| rules.iter().find(|r| r.id == id).unwrap();
        let pw = rule("generic.password");
        assert_eq!(
            judge(pw, b"tiger", "tests/db.py", b""),
            (
                Confidence::Low,
                vec!["context only", "not generated-looking", "test path"]
            )
        );
        let strong = b"Xk3#vQ9zLm2pW7rT";
        assert_eq!(
            judge(pw, strong, "app/settings.py", b""),
            (
                Confidence::Medium,
                vec!["context only", "generated-looking value"]
            )
        );
        assert_eq!(
            judge(pw, strong, "docs/setup.py", b""),
            (
                Confidence::Low,
                vec!["context only", "generated-looking value", "documentation"]
            )
        );
        let chosen = rule("generic.password.weak");
        assert_eq!(
            judge(chosen, b"tiger", "app/settings.py", b""),
            (Confidence::Low, vec!["context only", "weak value"])
        );
        let bcrypt = rule("pwhash.bcrypt");
        let hash = format!(
            "$2b$12${}",
            "R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"
        );
        let (c, why) = judge(bcrypt, hash.as_bytes(), "src/users.py", b"    # ");
        assert_eq!(
            (c, why.last().copied()),
            (Confidence::Low, Some("in a comment"))
        );
        let id = rule("aws.access-key-id");
        assert_eq!(
            judge(id, b"AKIAQYLPMN5HHHFPZAM2", "src/app.py", b""),
            (Confidence::High, vec!["provider prefix"])
        );
        assert_eq!(place_kind("examples/app.py"), Some("example"));
        assert_eq!(place_kind("README.md"), Some("documentation"));
        assert_eq!(place_kind("pkg/foo_test.go"), Some("test path"));
        assert_eq!(place_kind("src/main.rs"), None);
    }

    #[test]
    fn comments() {
        for before in ["    # pwdhash => \"", "// ", " * ", "-- admin: '", "<!-- "] {
            assert!(is_comment(before.as_bytes()), "{before}");
        }
        for before in [
            "root:",
            "INSERT INTO users VALUES ('ops', '",
            "hash = \"",
            "",
        ] {
            assert!(!is_comment(before.as_bytes()), "{before}");
        }
    }

    #[test]
    fn generated_values() {
        for s in [
            "ldYxfNpRS3nfCP&@MvkK",
            "kGqWwoT31YwsOmV5F6NA9vzSB8iEZXoCMnBDAFel",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
            "U0f04DINah!4579",
        ] {
            assert!(looks_generated(s.as_bytes()), "{s}");
        }
        for s in [
            "NEW!!secret-access-token",
            "dGhpcyBpcyBhIHRva2Vu",
            "Summer2024!",
            "McpOauthTokenEndpointAuth",
            "short1A!",
        ] {
            assert!(!looks_generated(s.as_bytes()), "{s}");
        }
    }

    #[test]
    fn weak_passwords() {
        for s in [
            "tiger",
            "bosco",
            "secretpass",
            "top%20secret%2Fpassword",
            "[Filtered]",
            "pwpw",
            "hunter22",
        ] {
            assert!(is_weak_password(s.as_bytes()), "{s}");
        }
        for s in [
            "TqvFLh6nfcaZa2Eu4y2L",
            "KmAfMEVe6SjQ!",
            "3argMyFhN2epkoDRlGja",
        ] {
            assert!(!is_weak_password(s.as_bytes()), "{s}");
        }
    }

    #[test]
    fn jwt_claims() {
        use base64::Engine as _;
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let jwt = |payload: &str| format!("{}.{}.c2ln", enc(r#"{"alg":"HS256"}"#), enc(payload));
        assert!(!jwt_without_claims(
            jwt(r#"{"sub":"u-1","exp":1}"#).as_bytes()
        ));
        assert!(jwt_without_claims(jwt(r#"{"foo":"bar"}"#).as_bytes()));
        assert!(!jwt_without_claims(
            b"eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln"
        ));
    }
}
