//! `leakhound report merge`: reports of a directory scan, a git history and an environment
//! dump, one credential found in all three, merged into one entry per credential.

use crate::git::Repo;
use crate::util::{assert_no_piece, fake_aws, fake_github, Run};
use serde_json::Value;

const KEY: &str = "merge-test-fingerprint-key-0123456789";

fn leakhound(repo: &Repo, args: &[&str]) -> Run {
    leakhound_keyed(repo, KEY, args)
}

/// [`leakhound`] with another fingerprint key.
fn leakhound_keyed(repo: &Repo, key: &str, args: &[&str]) -> Run {
    let o = repo
        .sb
        .cmd()
        .current_dir(repo.sb.dir.path())
        .env("LEAKHOUND_FINGERPRINT_KEY", key)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(args)
        .output()
        .unwrap();
    crate::util::to_run(o)
}

/// Three reports: `files.json` (a directory), `git.jsonl` (a history), `env.jsonl` (a dump);
/// the GitHub token is in all three, the AWS pair only in the directory.
fn three_reports(repo: &Repo) -> (String, String) {
    let token = fake_github(71);
    let (id, secret) = fake_aws(72);
    repo.commit(
        &[("deploy.sh", &format!("export GITHUB_TOKEN={token}\n"))],
        "deploy",
    );
    repo.sb.write(
        "tree/settings.py",
        format!("GITHUB_TOKEN = \"{token}\"\naws_access_key_id = \"{id}\"\naws_secret_access_key = \"{secret}\"\n"),
    );
    repo.sb
        .write("dump.env", format!("HOME=/root\nGH_TOKEN={token}\n"));
    for (args, out) in [
        (vec!["scan", "tree", "--format", "json"], "files.json"),
        (vec!["git", "repo", "--format", "jsonl"], "git.jsonl"),
        (vec!["env", "dump.env", "--format", "jsonl"], "env.jsonl"),
    ] {
        let mut a = args.clone();
        a.extend(["-o", out]);
        let r = leakhound(repo, &a);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
    }
    (token, secret)
}

#[test]
fn one_entry_per_credential_across_files_git_and_env() {
    let repo = Repo::new();
    let (token, secret) = three_reports(&repo);
    let r = leakhound(
        &repo,
        &[
            "report",
            "merge",
            "files.json",
            "git.jsonl",
            "env.jsonl",
            "--format",
            "json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        !r.stdout.contains(&token) && !r.stdout.contains(&secret),
        "a secret in the merge"
    );
    let v = r.json();
    let creds = v["credentials"].as_array().unwrap();
    // The token, the key id, the secret key: three credentials however many places.
    assert_eq!(creds.len(), 3, "{:#}", v["credentials"]);
    let gh = creds
        .iter()
        .find(|c| c["rule"].as_str().unwrap().starts_with("github"))
        .unwrap();
    let kinds: Vec<&str> = gh["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["provenance"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        gh["surfaces"],
        serde_json::json!(["env", "file", "git"]),
        "{kinds:?}"
    );
    // The commit's author date is the earliest sighting; the reports were written today.
    assert_eq!(gh["first_seen"], "2026-01-02T03:04:05Z");
    assert!(gh["last_seen"].as_str().unwrap() > "2026-01-02T03:04:05Z");
    assert_eq!(v["summary"]["reports"], 3);
    assert_eq!(v["summary"]["credentials"], 3);
    let aws = creds
        .iter()
        .find(|c| c["rule"] == "aws.access-key-id")
        .unwrap();
    assert_eq!(aws["locations"].as_array().unwrap().len(), 1);
    assert!(aws["aws_account"].is_string(), "{aws:#}");

    // The order of the inputs does not matter.
    let again = leakhound(
        &repo,
        &[
            "report",
            "merge",
            "env.jsonl",
            "git.jsonl",
            "files.json",
            "--format",
            "jsonl",
        ],
    );
    let lines: Vec<Value> = again.jsonl();
    assert_eq!(Value::Array(lines), v["credentials"]);

    // Human: one line per credential, then its places.
    let h = leakhound(
        &repo,
        &["report", "merge", "files.json", "git.jsonl", "env.jsonl"],
    );
    assert_eq!(h.code, 1);
    assert!(h.stdout.contains("3 places"), "{}", h.stdout);
    assert!(
        h.stdout
            .ends_with("3 credentials in 5 findings from 3 reports\n"),
        "{}",
        h.stdout
    );
    let sarif = leakhound(
        &repo,
        &[
            "report",
            "merge",
            "files.json",
            "git.jsonl",
            "env.jsonl",
            "--format",
            "sarif",
        ],
    )
    .json();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert!(results
        .iter()
        .any(|r| r["locations"].as_array().unwrap().len() == 3));
}

#[test]
fn reports_made_with_different_keys_or_not_reports_are_refused() {
    let repo = Repo::new();
    three_reports(&repo);
    let other = leakhound_keyed(
        &repo,
        "another-key-entirely-0123456789",
        &["scan", "tree", "--format", "json", "-o", "other.json"],
    );
    assert_eq!(other.code, 1);
    let r = leakhound(&repo, &["report", "merge", "files.json", "other.json"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("other.json") && r.stderr.contains("fingerprint key"),
        "{}",
        r.stderr
    );

    repo.sb.write("notes.txt", "hello\n");
    let r = leakhound(&repo, &["report", "merge", "git.jsonl", "notes.txt"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("notes.txt:1"), "{}", r.stderr);
    let r = leakhound(&repo, &["report", "merge", "missing.jsonl"]);
    assert_eq!(r.code, 2);
}

fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Regression #4: a record without `redacted` (or one that says so falsely) holding a secret
/// whole, in its context and in a field the merge does not know, was printed whole and
/// labelled redacted. Every reader of earlier reports masks whatever the record's flags say.
#[test]
fn readers_of_earlier_reports_mask_whatever_the_records_say() {
    let repo = Repo::new();
    let token = fake_github(4401);
    let other = fake_github(4402);
    // A forged record holds its secret in its rule's id and name, its fingerprint and its
    // credential set too.
    let forged = fake_github(4403);
    let record = |fp: &str, secret: &str, flag: Option<bool>| {
        let (rule, name) = if secret == forged {
            (forged.clone(), format!("named {forged}"))
        } else {
            ("github.pat".to_string(), "GitHub token".to_string())
        };
        let mut v = serde_json::json!({
            "rule": rule, "name": name, "confidence": "high",
            "path": "deploy.sh", "line": 1, "column": 14, "fingerprint": fp,
            "secret": secret, "entropy": 4.7,
            "context": format!("export GITHUB_TOKEN={token} OTHER={other}"),
            "provenance": {"kind": "file", "path": "deploy.sh"},
            "note": format!("copied from {token}"),
        });
        if let Some(f) = flag {
            v["redacted"] = Value::Bool(f);
        }
        if secret == forged {
            v["credential_set"] = Value::String(forged.clone());
        }
        v.to_string()
    };
    // A secret repeated encoded in its own context: a URL's percent-encoded copy, base64.
    let (_, aws) = crate::util::fake_aws(4404);
    let pct = aws.replace('/', "%2F").replace('+', "%2B");
    let b64 = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&aws)
    };
    let encoded = serde_json::json!({
        "rule": "aws.secret-access-key", "name": "AWS secret", "confidence": "high",
        "path": "app.log", "line": 1, "column": 1, "fingerprint": "f4", "secret": aws,
        "context": format!("aws_secret_access_key = {aws} url=https://h/?s={pct} b64={b64}"),
    });
    assert_ne!(pct, aws, "the secret has a character a URL encodes");
    repo.sb.write(
        "hand.jsonl",
        format!(
            "{}\n{}\n{}\n{encoded}\n",
            record("f1", &token, None),
            record("f2", &other, Some(true)),
            record(&forged, &forged, None)
        ),
    );
    for format in ["human", "json", "jsonl", "sarif"] {
        let out = format!("merged.{format}");
        let r = leakhound(
            &repo,
            &[
                "report",
                "merge",
                "hand.jsonl",
                "--format",
                format,
                "-o",
                &out,
            ],
        );
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        let path = repo.sb.path(&out);
        let text = std::fs::read_to_string(&path).unwrap();
        for s in [&token, &other, &forged, &aws] {
            assert_no_piece(&text, s, &format!("merge --format {format}"));
            assert_no_piece(&r.stderr, s, "merge stderr");
        }
        assert!(
            !text.contains(&b64[..12]),
            "merge --format {format}: {text}"
        );
        assert_eq!(mode(&path), 0o600, "{format}");
    }
    // `validate REPORT` (no validator for these: no network) masks them too.
    let r = leakhound(&repo, &["validate", "hand.jsonl", "-o", "checked.jsonl"]);
    let path = repo.sb.path("checked.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    for s in [&token, &other, &forged, &aws] {
        assert_no_piece(&text, s, "validate REPORT");
        assert_no_piece(&r.stderr, s, "validate stderr");
    }
    assert!(!text.contains(&b64[..12]), "validate REPORT: {text}");
    assert_eq!(mode(&path), 0o600);
    // Only the reading command's own --show-secrets reveals.
    let r = leakhound(
        &repo,
        &[
            "report",
            "merge",
            "hand.jsonl",
            "--format",
            "jsonl",
            "--show-secrets",
        ],
    );
    assert!(r.stdout.contains(&token), "{}", r.stdout);
}

/// Regression #4: shards written with --show-secrets, merged without it, were written whole
/// into a 0644 file.
#[test]
fn shards_written_revealed_are_merged_masked_into_a_private_file() {
    let repo = Repo::new();
    let token = fake_github(4403);
    let (id, secret) = fake_aws(4404);
    repo.sb
        .write("tree/a/deploy.sh", format!("export GITHUB_TOKEN={token}\n"));
    repo.sb.write(
        "tree/b/settings.py",
        format!("aws_access_key_id = \"{id}\"\naws_secret_access_key = \"{secret}\"\n"),
    );
    let mut shards = Vec::new();
    for k in 0..2 {
        let out = format!("shard{k}.json");
        let shard = format!("{k}/2");
        let r = leakhound(
            &repo,
            &[
                "scan",
                "tree",
                "--format",
                "json",
                "--show-secrets",
                "--shard",
                &shard,
                "-o",
                &out,
            ],
        );
        assert!(r.code <= 1, "{}", r.stderr);
        shards.push(out);
    }
    let all = [&shards[0], &shards[1]]
        .map(|s| std::fs::read_to_string(repo.sb.path(s)).unwrap())
        .join("");
    assert!(
        all.contains(&token) && all.contains(&secret),
        "revealing shards"
    );
    for format in ["json", "jsonl", "sarif"] {
        let out = format!("merged.{format}");
        let mut args = vec![
            "report", "merge", "--shards", "--format", format, "-o", &out,
        ];
        args.extend(shards.iter().map(String::as_str));
        let r = leakhound(&repo, &args);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        let path = repo.sb.path(&out);
        let text = std::fs::read_to_string(&path).unwrap();
        for s in [&token, &secret] {
            assert_no_piece(&text, s, &format!("merge --shards --format {format}"));
        }
        assert!(text.contains(&id), "key ids stay readable: {text}");
        assert_eq!(mode(&path), 0o600, "{format}");
    }
    let mut args = vec![
        "report",
        "merge",
        "--shards",
        "--format",
        "jsonl",
        "--show-secrets",
    ];
    args.extend(shards.iter().map(String::as_str));
    let r = leakhound(&repo, &args);
    assert!(r.stdout.contains(&token), "{}", r.stderr);
}
