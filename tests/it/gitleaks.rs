//! A gitleaks config, as users have one: read directly with `--rules` and converted with
//! `rules import`, custom rules, per-rule and global allowlists and disabled rules included.

use crate::util::{fake_github, Sandbox};

const CONFIG: &str = r#"
title = "acme gitleaks config"

[extend]
useDefault = true
disabledRules = ["generic-api-key"]

[[rules]]
id = "acme-api-token"
description = "Acme API token"
regex = '''acme_(?:live|test)_([a-zA-Z0-9]{32})'''
keywords = ["acme_"]
entropy = 3.0
[[rules.allowlists]]
regexTarget = "line"
regexes = ['''acme-allow''']

[[rules]]
id = "internal-db-password"
description = "Internal DB password in YAML or env files"
regex = '''(?i)internal_db_pass(?:word)?\s*[:=]\s*['"]?([^\s'"]{12,64})'''
secretGroup = 1
keywords = ["internal_db_pass"]
path = '''(?i)\.(?:ya?ml|env)$'''

[allowlist]
description = "test fixtures"
paths = ['''(^|/)fixtures/''']
"#;

const TOKEN: &str = "acme_live_Q7vN2pL9wRt4ZkB8mHs3JdCxT5yUe7iO";
const DB: &str = "kT9#vQ2mLx8wRz4p";

fn tree(sb: &Sandbox) {
    sb.write(".gitleaks.toml", CONFIG);
    sb.write(
        "tree/app.py",
        format!(
            "TOKEN = \"{TOKEN}\"\nOTHER = \"{TOKEN}\"  # acme-allow\ninternal_db_password = \"{DB}\"\ndb_password = \"Zq8v!Lm3Tp0Wx9Rk\"\n"
        ),
    );
    sb.write("tree/config.yaml", format!("internal_db_password: {DB}\n"));
    sb.write(
        "tree/fixtures/sample.py",
        format!("TOKEN = \"{TOKEN}\"\nGH = \"{}\"\n", fake_github(7)),
    );
}

/// (path, line, rule) of every finding.
fn found(r: &crate::util::Run) -> Vec<(String, u64, String)> {
    let mut v: Vec<_> = r.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn expected() -> Vec<(String, u64, String)> {
    vec![
        ("tree/app.py".into(), 1, "acme-api-token".into()),
        ("tree/config.yaml".into(), 1, "internal-db-password".into()),
    ]
}

#[test]
fn a_gitleaks_config_works_unchanged() {
    let sb = Sandbox::new();
    tree(&sb);
    let r = sb.run(&[
        "scan",
        "tree",
        "--rules",
        ".gitleaks.toml",
        "--format",
        "json",
        "--min-confidence",
        "low",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    // Line 2 is allowed by the rule's allowlist, line 3 is outside the rule's path, line 4's
    // generic password is a disabled rule, and fixtures/ is allowed for every rule, the
    // built-in GitHub rule included.
    assert_eq!(found(&r), expected(), "{}", r.stdout);
    assert!(
        !r.stdout.contains(TOKEN) && !r.stdout.contains(DB),
        "redacted"
    );
}

#[test]
fn rules_import_writes_an_equivalent_leakhound_rule_file() {
    let sb = Sandbox::new();
    tree(&sb);
    let r = sb.run(&["rules", "import", ".gitleaks.toml", "-o", "acme.toml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("2 rule(s) converted"), "{}", r.stderr);
    let text = std::fs::read_to_string(sb.path("acme.toml")).unwrap();
    assert!(text.contains("(?P<secret>[a-zA-Z0-9]{32})"), "{text}");
    assert!(text.contains("disable = [\"generic.*\"]"), "{text}");
    let check = sb.run(&["rules", "check", "acme.toml"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    let r = sb.run(&["scan", "tree", "--rules", "acme.toml", "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    // The built-in rules' findings differ: the disabled rule and the global allowlist are
    // left to leakhound.toml there (the file says so).
    let custom: Vec<_> = found(&r)
        .into_iter()
        .filter(|(_, _, rule)| !rule.contains('.'))
        .collect();
    assert_eq!(custom, expected(), "{}", r.stdout);
}

#[test]
fn what_cannot_be_carried_over_is_a_clear_error() {
    let sb = Sandbox::new();
    sb.write("tree/a.txt", "nothing\n");
    for (name, rule, says) in [
        (
            "go-only.toml",
            "[[rules]]\nid = \"go-only\"\nregex = '''tok_\\C{20}'''\nkeywords = [\"tok_\"]\n",
            "rule \"go-only\": regex",
        ),
        (
            "path-only.toml",
            "[[rules]]\nid = \"pkcs12-file\"\npath = '''\\.p12$'''\n",
            "reports files by name",
        ),
        (
            "no-keywords.toml",
            "[[rules]]\nid = \"hex-anything\"\nregex = '''[a-f0-9]{40}'''\n",
            "add keywords",
        ),
    ] {
        sb.write(name, rule);
        let r = sb.run(&["scan", "tree", "--rules", name]);
        assert_eq!(r.code, 2, "{name}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{name}: {}", r.stderr);
    }
}
