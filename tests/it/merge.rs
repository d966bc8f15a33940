//! `leakhound report merge`: reports of a directory scan, a git history and an environment
//! dump, one credential found in all three, merged into one entry per credential.

use crate::git::Repo;
use crate::util::{fake_aws, fake_github, Run};
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
