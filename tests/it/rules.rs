//! The rule set: every rule's examples and negatives through the whole engine, coverage of
//! the providers we promise, and `rules check` on operators' files.

use crate::util::Sandbox;
use leakhound::engine::Engine;

#[test]
fn every_builtin_rule_passes_its_examples_and_negatives() {
    let engine = Engine::new(
        leakhound::rules::builtin(),
        leakhound::engine::FingerprintKey::ephemeral(),
    )
    .unwrap();
    let failures = leakhound::engine::check(&engine, |_| true);
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Regression #11: a URL's userinfo runs to the last `@` before the host, so `@` and `'` in
/// a password are part of it; the secret stopped at the first of them and the rest of the
/// password was left unmasked.
#[test]
fn a_url_password_runs_to_the_last_at_before_the_host() {
    let engine = Engine::new(
        leakhound::rules::builtin(),
        leakhound::engine::FingerprintKey::ephemeral(),
    )
    .unwrap();
    for (line, rule, password) in [
        (
            "https://user:p@ss'w@rd@host/",
            "url.basic-auth",
            "p@ss'w@rd",
        ),
        (
            "git clone https://deploy:Tq8@vRz'2Lm@9xW@git.example.org/repo.git",
            "url.basic-auth",
            "Tq8@vRz'2Lm@9xW",
        ),
        (
            "DATABASE_URL=postgres://app:Hk7'pQ@9vLw2@db.internal:5432/app",
            "database.postgres-url",
            "Hk7'pQ@9vLw2",
        ),
        (
            "REDIS_URL='rediss://app:Hk7@pQ9vLw2@cache.internal:6380'",
            "database.redis-url",
            "Hk7@pQ9vLw2",
        ),
    ] {
        let found: Vec<(&str, &str)> = engine
            .scan(line.as_bytes())
            .iter()
            .map(|m| (engine.rules()[m.rule].id.as_str(), &line[m.span()]))
            .collect();
        assert!(found.contains(&(rule, password)), "{line}: {found:?}");
        assert!(
            found
                .iter()
                .all(|(_, s)| !password.contains(s) || *s == password),
            "{line}: a piece of the password: {found:?}"
        );
    }
}

#[test]
fn rule_set_covers_the_promised_providers() {
    let rules = leakhound::rules::builtin();
    assert!(rules.len() >= 150, "{} rules", rules.len());
    for prefix in [
        "aws.access-key-id",
        "aws.secret-access-key",
        "aws.session-token",
        "github.pat",
        "github.fine-grained-pat",
        "gitlab.",
        "slack.bot-token",
        "slack.webhook-url",
        "stripe.",
        "google.api-key",
        "google.service-account-private-key",
        "google.oauth-client-secret",
        "azure.storage-account-key",
        "azure.sas-token",
        "openai.",
        "anthropic.",
        "huggingface.",
        "npm.",
        "pypi.",
        "dockerhub.",
        "twilio.",
        "sendgrid.",
        "mailgun.",
        "datadog.",
        "newrelic.",
        "shopify.",
        "square.",
        "heroku.",
        "digitalocean.",
        "atlassian.",
        "okta.",
        "vault.",
        "terraform.",
        "doppler.",
        "private-key.rsa",
        "private-key.ec",
        "private-key.dsa",
        "private-key.openssh",
        "private-key.pgp",
        "private-key.pkcs8",
        "jwt",
        "database.postgres-url",
        "database.mysql-url",
        "database.mongodb-url",
        "database.redis-url",
        "database.amqp-url",
        "url.basic-auth",
        "generic.password",
        "generic.secret",
        "generic.token",
        "generic.api-key",
    ] {
        assert!(
            rules.iter().any(|r| r.id.starts_with(prefix)),
            "no rule for {prefix}"
        );
    }
    // Every AWS key id prefix is a keyword of the key id rule; the unique ids of users, roles,
    // groups, instance profiles, policies and public keys are not keys (issue 27).
    let aws = rules.iter().find(|r| r.id == "aws.access-key-id").unwrap();
    for p in ["akia", "asia", "abia", "acca", "a3t"] {
        assert!(aws.keywords.iter().any(|k| k == p), "{p}");
    }
    for p in ["agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka"] {
        assert!(!aws.keywords.iter().any(|k| k == p), "{p}");
    }
}

#[test]
fn rules_check_and_list_on_the_command_line() {
    let sb = Sandbox::new();
    let r = sb.run(&["rules", "check"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let list = sb.run(&["rules", "list", "--format", "json"]).json();
    assert!(list.as_array().unwrap().len() >= 150);
    let human = sb.run(&["rules", "list"]);
    assert!(human.stdout.contains("aws.access-key-id"));
}

#[test]
fn the_version_names_the_rule_set_the_binary_holds() {
    let sb = Sandbox::new();
    let version = sb.run(&["--version"]);
    assert_eq!(version.code, 0, "{}", version.stderr);
    let listed = sb.run(&["rules", "list", "--format", "json"]).json();
    let count = listed.as_array().unwrap().len();
    // `leakhound 0.1.0 (rules 202, set 1a2b3c4d5e6f)`
    let re = regex::Regex::new(r"^leakhound \S+ \(rules (\d+), set ([0-9a-f]{12})\)$").unwrap();
    let c = re
        .captures(version.stdout.trim())
        .unwrap_or_else(|| panic!("unexpected --version: {:?}", version.stdout));
    assert_eq!(c[1].parse::<usize>().unwrap(), count, "{}", version.stdout);
    assert_eq!(&c[2], leakhound::rules::RULESET);
    // The report names the same set.
    sb.write("a.txt", "nothing here\n");
    let report = sb.run(&["scan", "a.txt", "--format", "json"]).json();
    assert_eq!(report["rules_version"], &c[2]);
}

#[test]
fn rules_check_names_file_rule_and_field() {
    let sb = Sandbox::new();
    let good = r#"
[[rules]]
id = "acme.token"
name = "Acme token"
keywords = ["acme_"]
pattern = '\b(?P<secret>acme_[a-z0-9]{16})\b'
examples = ["t = acme_k3j5h7g9f2d4s6a8"]
negatives = ["acme_short"]
"#;
    sb.write("good.toml", good);
    assert_eq!(sb.run(&["rules", "check", "good.toml"]).code, 0);

    // Neutral file names: a needle must come from the message, never from the path.
    let cases: &[(&str, &str, &str)] = &[
        (
            "case1.toml",
            &good.replace("acme_k3j5h7g9f2d4s6a8", "nothing"),
            "examples[0]: not found",
        ),
        (
            "case2.toml",
            &good.replace("acme_short", "acme_q1w2e3r4t5y6u7i8"),
            "negatives[0]: matched",
        ),
        (
            "case3.toml",
            &good.replace("?P<secret>", ""),
            "no capture group named `secret`",
        ),
        (
            "case4.toml",
            &good.replace("{16}", "+"),
            "match length is unbounded",
        ),
        (
            "case5.toml",
            &good.replace("[a-z0-9]", "[a-z0-9"),
            "unclosed character class",
        ),
        (
            "case6.toml",
            &good.replace("[\"acme_\"]", "[\"zzz\"]"),
            "none of the keywords (zzz) occurs",
        ),
        ("case7.toml", &good.replace("name =", "nmae ="), "nmae"),
    ];
    for (file, text, needle) in cases {
        assert!(!file.contains(needle));
        sb.write(file, text);
        let r = sb.run(&["rules", "check", file]);
        assert_eq!(r.code, 2, "{file}: {}", r.stderr);
        assert!(r.stderr.contains(file), "{file}: {}", r.stderr);
        assert!(
            r.stderr.contains(needle),
            "{file} should say {needle:?}: {}",
            r.stderr
        );
        // A scan that loads the broken file fails the same way.
        let scan = sb.run(&["scan", ".", "--rules", file]);
        assert_eq!(scan.code, 2, "{file}: {}", scan.stderr);
        assert!(scan.stderr.contains(file), "{file}: {}", scan.stderr);
    }
    let r = sb.run(&["rules", "check", "case1.toml"]);
    assert!(r.stderr.contains("acme.token"), "{}", r.stderr);
}

#[test]
fn operator_rules_join_the_builtin_set() {
    let sb = Sandbox::new();
    sb.write(
        "rules/acme.toml",
        r#"[[rules]]
id = "acme.token"
name = "Acme token"
keywords = ["acme_"]
pattern = '\b(?P<secret>acme_[a-z0-9]{16})\b'
examples = ["acme_k3j5h7g9f2d4s6a8"]
"#,
    );
    sb.write("src/x.py", "T = 'acme_p0o9i8u7y6t5r4e3'\n");
    let r = sb.run(&[
        "scan",
        "src",
        "--rules",
        "rules/acme.toml",
        "--format",
        "jsonl",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(r.jsonl()[0]["rule"], "acme.token");
    sb.write("ops/lh.toml", "[rules]\nfiles = [\"../rules/acme.toml\"]\n");
    let r = sb.run(&["scan", "src", "--config", "ops/lh.toml"]);
    assert_eq!(r.code, 1, "rules.files is relative to the config file");
}

/// docs/rules.md lists every built-in rule, generated from the rule data: it cannot go stale.
#[test]
fn rules_doc_lists_every_builtin_rule() {
    let sb = crate::util::Sandbox::new();
    let r = sb.run(&["rules", "list", "--format", "markdown"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = ("<!-- rules:begin -->\n", "<!-- rules:end -->");
    let (head, rest) = doc.split_once(begin).expect("begin marker");
    let (listed, tail) = rest.split_once(end).expect("end marker");
    let want = format!("{}\n", r.stdout.trim());
    if crate::golden::update_requested() {
        std::fs::write(&path, format!("{head}{begin}{want}{end}{tail}")).unwrap();
        return;
    }
    // The first line that differs, not two lists of hundreds of rules.
    let differs = listed.lines().zip(want.lines()).find(|(a, b)| a != b);
    assert!(
        listed == want,
        "docs/rules.md's rule list is stale ({differs:?}): UPDATE_GOLDEN=1 cargo test --test it rules_doc"
    );
    let ids = r.stdout.lines().filter(|l| l.starts_with("| `")).count();
    let builtin = sb.run(&["rules", "list"]).stdout.lines().count();
    assert_eq!(ids, builtin);
}
