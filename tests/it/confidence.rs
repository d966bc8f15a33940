//! A finding's confidence: moved by the value and its place, filtered by `--min-confidence`
//! with a default per command, and what is left out counted in the summary.

use crate::util::Sandbox;
use base64::Engine as _;
use std::collections::BTreeMap;

fn jwt(payload: &str) -> String {
    let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!(
        "{}.{}.{}",
        enc(r#"{"alg":"HS256","typ":"JWT"}"#),
        enc(payload),
        "kQ3vN2pL9wRt4ZkB8mHs3JdCxT5yUe7iOa1sDf6gHj0"
    )
}

/// (path, line) → (rule, confidence) of every finding in a JSON report.
fn by_place(report: &serde_json::Value) -> BTreeMap<(String, u64), (String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                (
                    f["path"].as_str().unwrap().to_string(),
                    f["line"].as_u64().unwrap(),
                ),
                (
                    f["rule"].as_str().unwrap().to_string(),
                    f["confidence"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

/// Every finding in the sandbox's `tree/`, at every confidence, by place.
fn scan_tree_at_low(sb: &Sandbox) -> BTreeMap<(String, u64), (String, String)> {
    let r = sb.run(&[
        "scan",
        "tree",
        "--format",
        "json",
        "--min-confidence",
        "low",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    by_place(&r.json())
}

#[test]
fn the_value_and_its_place_move_a_findings_confidence() {
    let sb = Sandbox::new();
    let app = [
        // A generated-looking generic value in application code: medium.
        "DB_PASSWORD = \"ldYxfNpRS3nfCP&@MvkK\"".to_string(),
        // A generic value made of words and a number: low.
        "ADMIN_PASSWORD = \"Summer2024!Autumn\"".to_string(),
        // A chosen password in a URL: strong is medium, weak is low.
        "CACHE = \"redis://:TqvFLh6nfcaZa2Eu4y2L@cache.internal:6379/0\"".to_string(),
        "BROKER = \"redis://:tiger@cache.internal:6379/0\"".to_string(),
        // A JWT with claims keeps its rule's confidence; one without any is a fixture.
        format!(
            "SESSION = \"{}\"",
            jwt(r#"{"sub":"u-81","exp":4102444800}"#)
        ),
        format!("FIXTURE = \"{}\"", jwt(r#"{"foo":"bar"}"#)),
        // The specifications' own examples are no finding at all.
        "ACCESS_TOKEN = \"2YotnFZFEjr1zCsicMWpAA\"".to_string(),
        // A password on a curl command line, known by its context: one a person chose that
        // is not weak is medium; a weak one is low.
        "# curl -u reader:qgsnai0xokrw4j1 https://search.internal/_cat".to_string(),
        "# curl -u reader:Tiger2024x https://search.internal/_cat".to_string(),
    ];
    sb.write("tree/app/settings.py", app.join("\n") + "\n");
    // The same generated-looking value in a test: low.
    sb.write(
        "tree/tests/test_settings.py",
        "DB_PASSWORD = \"ldYxfNpRS3nfCP&@MvkK\"\n",
    );

    let got = scan_tree_at_low(&sb);
    let at = |path: &str, line: u64| {
        got.get(&(format!("tree/{path}"), line))
            .map(|(r, c)| (r.as_str(), c.as_str()))
    };
    assert_eq!(
        at("app/settings.py", 1),
        Some(("generic.password", "medium"))
    );
    assert_eq!(at("app/settings.py", 2), Some(("generic.password", "low")));
    assert_eq!(
        at("app/settings.py", 3),
        Some(("database.redis-url", "medium"))
    );
    assert_eq!(
        at("app/settings.py", 4),
        Some(("database.redis-url", "low"))
    );
    assert_eq!(at("app/settings.py", 5), Some(("jwt", "high")));
    assert_eq!(at("app/settings.py", 6), Some(("jwt", "low")));
    assert_eq!(at("app/settings.py", 7), None, "{got:?}");
    assert_eq!(
        at("app/settings.py", 8),
        Some(("curl.basic-auth-password", "medium"))
    );
    assert_eq!(
        at("app/settings.py", 9),
        Some(("curl.basic-auth-password", "low"))
    );
    assert_eq!(
        at("tests/test_settings.py", 1),
        Some(("generic.password", "low"))
    );
    let low = got.values().filter(|(_, c)| c == "low").count();
    assert_eq!(low, 5, "{got:?}");

    // `scan` reports from medium by default and counts what it left out.
    let default = sb.run(&["scan", "tree", "--format", "json"]);
    assert_eq!(default.code, 1, "{}", default.stderr);
    let report = default.json();
    let shown = by_place(&report);
    assert_eq!(shown.len(), got.len() - low, "{shown:?}");
    assert!(shown.values().all(|(_, c)| c != "low"), "{shown:?}");
    assert_eq!(report["summary"]["below_confidence"], low as u64);

    // Only low findings: exit 0 by default, as a pre-commit hook would see it.
    let quiet = sb.run(&["scan", "tree/tests", "--format", "json"]);
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert_eq!(quiet.json()["summary"]["below_confidence"], 1);
}

#[test]
fn password_hashes_are_medium_except_in_tests_docs_and_comments() {
    let sb = Sandbox::new();
    let hash = "$2b$12$NrWehkSfzcj1ZgCj0fnAfWeAdpJZqnLvlwTkgfy90M54SKDvDiK9P";
    sb.write(
        "tree/db/seed.sql",
        format!("INSERT INTO users VALUES ('ops', '{hash}');\n-- admin: '{hash}'\n"),
    );
    sb.write("tree/tests/vectors.txt", format!("{hash}\n"));
    let got = scan_tree_at_low(&sb);
    let medium = ("pwhash.bcrypt".to_string(), "medium".to_string());
    let low = ("pwhash.bcrypt".to_string(), "low".to_string());
    assert_eq!(got.get(&("tree/db/seed.sql".into(), 1)), Some(&medium));
    assert_eq!(got.get(&("tree/db/seed.sql".into(), 2)), Some(&low));
    assert_eq!(got.get(&("tree/tests/vectors.txt".into(), 1)), Some(&low));
    assert_eq!(got.len(), 3, "{got:?}");
}

#[test]
fn env_reports_every_confidence_by_default() {
    let sb = Sandbox::new();
    sb.write("dump.env", "ADMIN_PASSWORD=Summer2024!Autumn\n");
    let r = sb.run(&["env", "dump.env", "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f = &r.json()["findings"][0];
    assert_eq!(f["rule"], "generic.password");
    assert_eq!(f["confidence"], "low");
    let r = sb.run(&[
        "env",
        "dump.env",
        "--format",
        "json",
        "--min-confidence",
        "medium",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["summary"]["below_confidence"], 1);
}
