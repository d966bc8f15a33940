//! `leakhound git` and `install-hook` against repositories built with the real `git`.

use crate::util::{fake_aws, fake_github, to_run, Run, Sandbox};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A repository in a sandbox, with git isolated from the user's configuration.
pub struct Repo {
    pub sb: Sandbox,
    pub root: PathBuf,
}

pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let o = git_cmd(dir).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

pub fn git_cmd(dir: &Path) -> Command {
    crate::util::require_tool("git");
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada Dev")
        .env("GIT_AUTHOR_EMAIL", "ada@example.org")
        .env("GIT_COMMITTER_NAME", "Ada Dev")
        .env("GIT_COMMITTER_EMAIL", "ada@example.org")
        .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE");
    c
}

impl Repo {
    pub fn new() -> Repo {
        let sb = Sandbox::new();
        let root = sb.path("repo");
        std::fs::create_dir_all(&root).unwrap();
        git_in(&root, &["init", "-q", "-b", "main"]);
        Repo { sb, root }
    }

    pub fn git(&self, args: &[&str]) -> String {
        git_in(&self.root, args)
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// Write files, stage everything, commit; the new commit's id.
    pub fn commit(&self, files: &[(&str, &str)], message: &str) -> String {
        for (p, c) in files {
            self.write(p, c);
        }
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    pub fn leakhound(&self, args: &[&str]) -> Run {
        let o = self
            .sb
            .cmd()
            .current_dir(&self.root)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(args)
            .output()
            .unwrap();
        to_run(o)
    }

    /// `leakhound git ARGS --format json`: the findings, after checking the exit code.
    pub fn findings(&self, args: &[&str], code: i32) -> Vec<Value> {
        let mut all = vec!["git"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--format", "json"]);
        let r = self.leakhound(&all);
        assert_eq!(r.code, code, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
        r.json()["findings"].as_array().unwrap().clone()
    }
}

fn aws_file(seed: u64) -> (String, String) {
    let (id, secret) = fake_aws(seed);
    (
        id.clone(),
        format!("aws_access_key_id = \"{id}\"\naws_secret_access_key = \"{secret}\"\n"),
    )
}

fn ghp_line(seed: u64) -> (String, String) {
    let t = fake_github(seed);
    (t.clone(), format!("GITHUB_TOKEN={t}\n"))
}

/// (rule, path, commit id) of each finding.
fn places(found: &[Value]) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = found
        .iter()
        .map(|f| {
            let p = &f["provenance"];
            assert_eq!(p["kind"], "git");
            (
                f["rule"].as_str().unwrap().to_string(),
                p["path"].as_str().unwrap().to_string(),
                p["commit"]["id"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_deleted_secret_is_found_once_with_the_commit_that_added_it() {
    let r = Repo::new();
    r.commit(&[("README.md", "hello\n")], "start");
    let (id, cfg) = aws_file(1);
    let added = r.commit(&[("app/config.py", &cfg)], "add config");
    // Touch the file again (the secret stays), rename it, then delete it.
    r.commit(
        &[("app/config.py", &format!("{cfg}debug = True\n"))],
        "debug",
    );
    // Renamed and edited in one commit: measured against the old file, nothing new.
    r.git(&["mv", "app/config.py", "app/settings.py"]);
    r.commit(
        &[("app/settings.py", &format!("{cfg}debug = True\nmore = 1\n"))],
        "rename",
    );
    r.git(&["rm", "-q", "app/settings.py"]);
    r.commit(&[], "remove the key");

    let found = r.findings(&[], 1);
    let ids: Vec<&Value> = found
        .iter()
        .filter(|f| f["rule"] == "aws.access-key-id")
        .collect();
    // Three blobs held the key: it is reported once, for the commit that added it.
    assert_eq!(ids.len(), 1, "{found:#?}");
    let first = ids[0];
    assert_eq!(first["provenance"]["commit"]["id"], added.as_str());
    assert_eq!(first["secret"], id.as_str());
    assert_eq!(first["path"], "app/config.py");
    assert_eq!(first["line"], 1);
    let c = &first["provenance"]["commit"];
    assert_eq!(c["author"], "Ada Dev");
    assert_eq!(c["email"], "ada@example.org");
    assert_eq!(c["subject"], "add config");
    assert!(c["date"]
        .as_str()
        .unwrap()
        .starts_with("2026-01-02T03:04:05"));
    assert!(found
        .iter()
        .all(|f| f["provenance"]["path"] != "app/settings.py"));
    // The secret itself is redacted, and so is the human report.
    let secret = found
        .iter()
        .find(|f| f["rule"] == "aws.secret-access-key")
        .unwrap();
    assert_eq!(secret["redacted"], true);
    let human = r.leakhound(&["git"]);
    assert_eq!(human.code, 1);
    assert!(human.stdout.contains("add config"), "{}", human.stdout);
    assert!(human.stdout.contains(&added[..12]));
}

#[test]
fn since_reports_only_lines_the_range_added() {
    let r = Repo::new();
    let (old_id, old_cfg) = aws_file(2);
    r.commit(&[("config.py", &old_cfg)], "old secret");
    let base = r.git(&["rev-parse", "HEAD"]);
    // In the range: the old file changes (its secret stays put), and a new secret arrives.
    r.commit(
        &[("config.py", &format!("# settings\n{old_cfg}extra = 1\n"))],
        "touch config",
    );
    let (token, line) = ghp_line(3);
    let added = r.commit(&[("deploy.env", &line)], "deploy");

    let found = r.findings(&["--since", &base], 1);
    assert_eq!(
        places(&found),
        [(
            "github.pat".to_string(),
            "deploy.env".to_string(),
            added.clone()
        )],
        "{found:#?}"
    );
    assert!(!found.iter().any(|f| f["secret"] == old_id.as_str()));
    let _ = token;
    // `--range A..B` is the same thing spelled out; an empty range finds nothing.
    let same = r.findings(&["--range", &format!("{base}..HEAD")], 1);
    assert_eq!(places(&same), places(&found));
    assert!(r.findings(&["--since", "HEAD"], 0).is_empty());
    // A revision that does not exist is an error, not an empty scan.
    let bad = r.leakhound(&["git", "--since", "no-such-branch"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("no-such-branch"), "{}", bad.stderr);
}

/// "commit blocked: N" counts what the report shows: a value found only at `low` (a
/// password by its name alone) is left out of the report and of the count alike.
#[test]
fn a_blocked_commit_counts_only_the_reported_secrets() {
    let r = Repo::new();
    let (_, line) = ghp_line(6);
    r.write(
        "b.env",
        &format!("{line}db_password = \"Quartz-Lamp-93\"\n"),
    );
    r.git(&["add", "b.env"]);
    let shown = r.findings(&["--staged"], 1).len();
    let all = r
        .findings(&["--staged", "--min-confidence", "low"], 1)
        .len();
    assert!(
        all > shown,
        "the password is not found at low: {all} / {shown}"
    );
    let human = r.leakhound(&["git", "--staged"]);
    let said = format!("commit blocked: {shown} secret(s)");
    assert!(human.stderr.contains(&said), "{}", human.stderr);
}

#[test]
fn staged_scans_the_index_not_the_work_tree() {
    let r = Repo::new();
    // Before the first commit: everything staged is new.
    let (_, cfg) = aws_file(4);
    r.write("a.py", &cfg);
    r.git(&["add", "a.py"]);
    let found = r.findings(&["--staged"], 1);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0]["provenance"]["commit"].is_null());
    r.git(&["commit", "-q", "-m", "first"]);

    // Nothing staged: clean, even with a secret in an unstaged edit.
    let (_, line) = ghp_line(5);
    r.write("b.env", &line);
    assert!(r.findings(&["--staged"], 0).is_empty());
    // An edit staged next to an old secret does not report the old one.
    r.write("a.py", &format!("{cfg}x = 2\n"));
    r.git(&["add", "a.py"]);
    assert!(r.findings(&["--staged"], 0).is_empty());
    // Staging the new secret blocks, and says how to get past a false positive.
    r.git(&["add", "b.env"]);
    let found = r.findings(&["--staged"], 1);
    assert_eq!(
        places(&found),
        [("github.pat".into(), "b.env".into(), String::new())]
    );
    let human = r.leakhound(&["git", "--staged"]);
    assert!(human.stderr.contains("commit blocked"), "{}", human.stderr);
    assert!(human.stderr.contains("leakhound:allow"));
    // The escape hatch works on the staged line.
    r.write("b.env", &line.replace('\n', " # leakhound:allow\n"));
    r.git(&["add", "b.env"]);
    assert!(r.findings(&["--staged"], 0).is_empty());
}

#[test]
fn merges_attribute_branch_secrets_to_the_branch_and_evil_merges_to_the_merge() {
    let r = Repo::new();
    r.commit(&[("shared.txt", "a\nb\nc\n")], "base");
    r.git(&["checkout", "-q", "-b", "feature"]);
    let (_, line) = ghp_line(6);
    let on_branch = r.commit(&[("feature.env", &line)], "feature work");
    r.git(&["checkout", "-q", "main"]);
    r.commit(&[("main.txt", "main\n")], "main work");
    r.git(&["merge", "-q", "--no-ff", "--no-commit", "feature"]);
    // The merge itself adds a secret neither parent had.
    let (_, evil) = aws_file(7);
    r.write("shared.txt", &format!("a\nb\nc\n{evil}"));
    r.git(&["add", "shared.txt"]);
    r.git(&["commit", "-q", "-m", "merge feature"]);
    let merge = r.git(&["rev-parse", "HEAD"]);

    let found = r.findings(&[], 1);
    let p = places(&found);
    assert!(
        p.contains(&("github.pat".into(), "feature.env".into(), on_branch.clone())),
        "{p:?}"
    );
    assert!(
        p.contains(&(
            "aws.access-key-id".into(),
            "shared.txt".into(),
            merge.clone()
        )),
        "{p:?}"
    );
    assert_eq!(p.len(), 3, "{p:?}");
    // A CI range over the merge reports both, each once, on the lines they added.
    let base = r.git(&["rev-parse", "HEAD~1"]);
    let ranged = r.findings(&["--since", &base], 1);
    let rp = places(&ranged);
    assert!(
        rp.contains(&("github.pat".into(), "feature.env".into(), on_branch)),
        "{rp:?}"
    );
    assert!(
        rp.contains(&("aws.access-key-id".into(), "shared.txt".into(), merge)),
        "{rp:?}"
    );
}

#[test]
fn empty_bare_and_shallow_repositories() {
    let r = Repo::new();
    let run = r.leakhound(&["git"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("0 findings"));

    let (_, line) = ghp_line(8);
    r.commit(&[("one.env", &line)], "one");
    let (_, line2) = ghp_line(9);
    r.commit(&[("two.env", &line2)], "two");
    let bare = r.sb.path("bare.git");
    let shallow = r.sb.path("shallow");
    let url = format!("file://{}", r.root.display());
    git_in(
        r.sb.dir.path(),
        &["clone", "-q", "--bare", &url, bare.to_str().unwrap()],
    );
    git_in(
        r.sb.dir.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    assert_eq!(r.findings(&[bare.to_str().unwrap()], 1).len(), 2);
    // A shallow clone holds both files at its one commit; both are found, attributed to it.
    let found = r.findings(&[shallow.to_str().unwrap()], 1);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found
        .iter()
        .all(|f| f["provenance"]["commit"]["subject"] == "two"));
}

#[test]
fn a_corrupt_blob_is_a_warning_and_the_rest_is_scanned() {
    let r = Repo::new();
    r.commit(&[("broken.txt", "this blob will be corrupted\n")], "first");
    let (_, line) = ghp_line(10);
    r.commit(&[("fine.env", &line)], "second");
    let id = r.git(&["rev-parse", "HEAD~1:broken.txt"]);
    let obj = r.root.join(".git/objects").join(&id[..2]).join(&id[2..]);
    let mut perm = std::fs::metadata(&obj).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&obj, perm).unwrap();
    std::fs::write(&obj, b"not zlib at all").unwrap();

    let run = r.leakhound(&["git", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc = run.json();
    assert_eq!(doc["findings"].as_array().unwrap().len(), 1);
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w["path"] == "broken.txt"),
        "{warnings:#?}"
    );
    assert!(run.stderr.contains("broken.txt"));
}

/// A corrupt commit at a branch's tip makes `git log --all` fail before it lists anything;
/// the other refs are still scanned, and a warning names those left out. That is history not
/// scanned: `--strict` fails the run. With every ref corrupt, the run fails.
#[test]
fn a_corrupt_commit_leaves_out_its_refs_and_the_rest_is_scanned() {
    let r = Repo::new();
    let (_, line) = ghp_line(12);
    r.commit(&[("kept.env", &line)], "first");
    r.git(&["branch", "keep"]);
    r.commit(&[("later.txt", "nothing here\n")], "second");
    let corrupt = |id: &str| {
        let obj = r.root.join(".git/objects").join(&id[..2]).join(&id[2..]);
        let mut perm = std::fs::metadata(&obj).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(false);
        std::fs::set_permissions(&obj, perm).unwrap();
        std::fs::write(&obj, b"").unwrap();
    };
    corrupt(&r.git(&["rev-parse", "HEAD"]));

    let run = r.leakhound(&["git", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc = run.json();
    assert_eq!(doc["findings"].as_array().unwrap().len(), 1, "{doc:#}");
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| {
            let m = w["message"].as_str().unwrap();
            m.contains("left out") && m.contains("HEAD") && !m.contains("refs/heads/keep")
        }),
        "{warnings:#?}"
    );
    assert_eq!(doc["summary"]["skipped_unreadable"], 1, "{doc:#}");
    assert_eq!(r.leakhound(&["git", "--strict"]).code, 2);

    corrupt(&r.git(&["rev-parse", "keep"]));
    let run = r.leakhound(&["git"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("empty"), "{}", run.stderr);
}

#[test]
fn lfs_pointers_large_and_binary_blobs_are_reported_not_scanned() {
    let r = Repo::new();
    let (_, line) = ghp_line(11);
    r.commit(
        &[
            (
                "model.bin",
                "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a2146\nsize 1234\n",
            ),
            ("big.env", &format!("{line}{}", "x".repeat(4096))),
        ],
        "assets",
    );
    std::fs::write(
        r.root.join("blob.dat"),
        // Binary: NULs among control bytes (a PNG header), not NUL-separated text.
        [&b"\x89PNG\r\n\x1a\n\0\0\0"[..], line.as_bytes()].concat(),
    )
    .unwrap();
    r.commit(&[], "binary");
    let run = r.leakhound(&["git", "--max-file-size", "1K", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = run.json();
    let w = doc["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w["path"] == "model.bin" && w["message"].as_str().unwrap().contains("LFS")),
        "{w:#?}"
    );
    assert_eq!(doc["summary"]["skipped_large"], 1);
    assert_eq!(doc["summary"]["skipped_binary"], 1);
    // Without the limit, and with --binary, both secrets are found.
    assert_eq!(r.findings(&["--binary"], 1).len(), 2);
}

#[test]
fn the_stash_and_every_branch_are_covered() {
    let r = Repo::new();
    r.commit(&[("a.txt", "a\n")], "base");
    r.git(&["checkout", "-q", "-b", "side"]);
    let (_, line) = ghp_line(12);
    r.commit(&[("side.env", &line)], "side");
    r.git(&["checkout", "-q", "main"]);
    let (_, stashed) = ghp_line(13);
    r.write("a.txt", &stashed);
    r.git(&["stash", "-q"]);
    let (_, older) = ghp_line(14);
    r.write("a.txt", &older);
    r.git(&["stash", "-q"]);
    let found = r.findings(&[], 1);
    assert_eq!(found.len(), 3, "{found:#?}");
}

#[test]
fn baseline_and_allow_paths_apply_to_history() {
    let r = Repo::new();
    let (_, line) = ghp_line(15);
    r.commit(&[("a.env", &line)], "one");
    let base = r.sb.path("baseline.json");
    let run = r.leakhound(&["git", "--write-baseline", base.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    let run = r.leakhound(&["git", "--baseline", base.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let cfg = r.sb.write("lh.toml", "[allow]\npaths = [\"*.env\"]\n");
    let run = r.leakhound(&["git", "--config", cfg.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    // SARIF names the introducing commit.
    let run = r.leakhound(&["git", "--format", "sarif"]);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let props = &doc["runs"][0]["results"][0]["properties"];
    assert_eq!(props["subject"], "one");
}

#[test]
fn submodules_are_followed_only_when_asked() {
    let r = Repo::new();
    let sub = Repo::new();
    let (_, line) = ghp_line(16);
    sub.commit(&[("inner.env", &line)], "inner");
    r.commit(&[("top.txt", "top\n")], "top");
    let url = format!("file://{}", sub.root.display());
    r.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        &url,
        "vendor/sub",
    ]);
    r.commit(&[], "add submodule");
    assert!(r.findings(&[], 0).is_empty());
    let found = r.findings(&["--submodules"], 1);
    assert_eq!(found[0]["path"], "vendor/sub/inner.env");
}

#[test]
fn install_hook_blocks_a_commit_with_a_secret_and_refuses_to_overwrite() {
    let r = Repo::new();
    r.commit(&[("a.txt", "a\n")], "base");
    let run = r.leakhound(&["install-hook"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let hook = r.root.join(".git/hooks/pre-commit");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&hook).unwrap().permissions().mode() & 0o111,
        0o111
    );
    // Installing again is a no-op; another hook is not replaced without --force.
    assert_eq!(r.leakhound(&["install-hook"]).code, 0);
    std::fs::write(&hook, "#!/bin/sh\nexit 0\n").unwrap();
    let refused = r.leakhound(&["install-hook"]);
    assert_eq!(refused.code, 2);
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    assert_eq!(r.leakhound(&["install-hook", "--force"]).code, 0);

    // A secret blocks the commit; a clean change goes through.
    let (token, line) = ghp_line(17);
    r.write("leak.env", &line);
    r.git(&["add", "leak.env"]);
    let blocked = to_run(
        git_cmd(&r.root)
            .args(["commit", "-q", "-m", "leak"])
            .output()
            .unwrap(),
    );
    assert_ne!(blocked.code, 0);
    // git sends a hook's output, stdout included, to its own stderr: the report is there.
    assert!(
        blocked.stderr.contains("commit blocked"),
        "{}",
        blocked.stderr
    );
    assert!(
        blocked.stderr.contains("leak.env") && blocked.stderr.contains("github.pat"),
        "the finding is not named: {}",
        blocked.stderr
    );
    // Redacted: no 8 characters of the token past its `ghp_` prefix, anywhere.
    for out in [&blocked.stdout, &blocked.stderr] {
        for piece in token.as_bytes()[4..].windows(8) {
            let piece = std::str::from_utf8(piece).unwrap();
            assert!(!out.contains(piece), "secret shown ({piece}): {out}");
        }
    }
    // The commit did not happen.
    let head = to_run(
        git_cmd(&r.root)
            .args(["log", "--format=%s"])
            .output()
            .unwrap(),
    );
    assert!(!head.stdout.contains("leak"), "{}", head.stdout);
    r.git(&["rm", "-q", "--cached", "leak.env"]);
    r.write("ok.txt", "nothing to see\n");
    r.git(&["add", "ok.txt"]);
    r.git(&["commit", "-q", "-m", "clean"]);
}

#[test]
fn a_generated_history_has_every_planted_secret_at_its_introducing_commit() {
    let sb = Sandbox::new();
    let dir = sb.path("repo");
    let truths = crate::history::generate(&dir, 150, 7).unwrap();
    assert!(truths.len() > 20 && truths.iter().any(|t| t.deleted));
    let r = to_run(
        sb.cmd()
            .args(["git", "--format", "jsonl", "--show-secrets"])
            .arg(&dir)
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let found = r.jsonl();
    for t in &truths {
        assert!(
            found.iter().any(|f| f["secret"] == t.secret.as_str()
                && f["provenance"]["commit"]["id"] == t.commit.as_str()
                && f["provenance"]["path"] == t.path.as_str()),
            "{} planted in {} at {} not found there",
            t.rule,
            t.path,
            t.commit
        );
    }
    // Each once: edits, renames and deletions after the introducing commit add nothing.
    assert_eq!(found.len(), truths.len());
}

#[test]
fn archives_in_history_are_opened() {
    let r = Repo::new();
    let (_, line) = ghp_line(18);
    let zip = crate::archive::zip_of(&[("conf/prod.env", line.as_bytes())]);
    std::fs::write(r.root.join("bundle.zip"), zip).unwrap();
    let added = r.commit(&[], "vendor a bundle");
    let found = r.findings(&[], 1);
    assert_eq!(
        places(&found),
        [(
            "github.pat".into(),
            "bundle.zip!conf/prod.env".into(),
            added
        )]
    );
    assert!(r.findings(&["--no-archives"], 0).is_empty());
}

/// A report shows the introducing commit's author and subject beside each finding: a secret
/// written there is masked in every format, whether the content holds it too (a token
/// committed with its own name in the message) or only the commit does (a key pasted into the
/// subject, a token in the author's name). The rest of the subject stays readable.
#[test]
fn a_secret_in_a_commit_subject_or_author_is_masked_in_every_format() {
    use crate::synth::{Rng, ALNUM, DIGITS};
    let repo = Repo::new();
    let (token, line) = ghp_line(620);
    let (_, aws) = fake_aws(620);
    let mut r = Rng::new(620);
    let slack = format!(
        "xoxb-{}-{}-{}",
        r.chars(DIGITS, 11),
        r.chars(DIGITS, 12),
        r.chars(ALNUM, 24)
    );
    repo.write("token.env", &line);
    repo.git(&["add", "-A"]);
    let author = format!("ci {slack} <ci@example.org>");
    let subject = format!("add token {token} and aws_secret_access_key={aws}");
    repo.git(&["commit", "-q", "--author", &author, "-m", &subject]);
    for format in ["human", "json", "jsonl", "sarif"] {
        let r = repo.leakhound(&["git", "--format", format]);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        let out = format!("{}{}", r.stdout, r.stderr);
        for secret in [&token, &aws, &slack] {
            crate::util::assert_no_piece(&out, secret, format);
        }
        if format != "sarif" {
            assert!(
                out.contains("add token "),
                "{format}: the subject is still shown\n{out}"
            );
        }
    }
    let f = &repo.findings(&[], 1)[0];
    let commit = &f["provenance"]["commit"];
    assert_eq!(
        commit["subject"],
        "add token ******** and aws_secret_access_key=********"
    );
    assert_eq!(commit["author"], "ci ********");
}
