//! A git history's listing written once (`git --write-listing FILE`) and read by every shard
//! (`--listing FILE`, issue 31): the shards still scan every blob once between them and merge
//! to the whole run's report, none of them walks the history again (a wrapper around the
//! real git records every command it is given), and a listing that no longer fits the
//! repository is refused, never read as a partial history.

use crate::git::git_in;
use crate::shard::{lh, shards_equal_whole_with};
use crate::util::{fake_github, Sandbox};
use std::path::Path;
use std::process::Command;

/// A directory holding `git`: a script that appends its arguments to `log` and runs the
/// real git.
fn recording_git(sb: &Sandbox, log: &Path) -> std::path::PathBuf {
    let out = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(!real.is_empty(), "git is not on PATH");
    let script = sb.write(
        "bin/git",
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.parent().unwrap().to_path_buf()
}

/// The git subcommands that walk history: what a shard with a listing must not run.
fn walks(line: &str) -> bool {
    line.split(' ').any(|a| a == "log" || a == "rev-list")
}

/// `git TARGET --write-listing LISTING` through `c`, which must succeed.
fn write_listing(mut c: Command, target: &[&str], listing: &Path) {
    let o = c
        .arg("git")
        .args(target)
        .arg("--write-listing")
        .arg(listing)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn with_path(c: &mut Command, bin: &Path) {
    let path = std::env::var("PATH").unwrap_or_default();
    c.env("PATH", format!("{}:{path}", bin.display()));
}

#[test]
fn shards_read_one_listing_and_never_walk_the_history_again() {
    let sb = Sandbox::new();
    let dir = sb.path("repo");
    let truths = crate::history::generate(&dir, 80, 23).unwrap();
    assert!(truths.len() > 5);
    let calls = sb.path("git-calls.txt");
    let bin = recording_git(&sb, &calls);
    let listing = sb.path("history.listing");
    let repo = dir.display().to_string();
    let mut w = lh(&sb);
    with_path(&mut w, &bin);
    write_listing(w, &[&repo], &listing);
    // The wrapper is in use, and the one walk is the listing's.
    let written = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(written.lines().filter(|l| walks(l)).count(), 1, "{written}");
    std::fs::remove_file(&calls).unwrap();
    let listed = listing.display().to_string();
    let (whole, _) = shards_equal_whole_with(&sb, &["git", &repo], &[1, 3], &|c| {
        c.args(["--listing", &listed]);
        with_path(c, &bin);
    });
    assert_eq!(whole["findings"].as_array().unwrap().len(), truths.len());
    let shards = std::fs::read_to_string(&calls).unwrap();
    assert!(
        shards.lines().any(|l| l.contains("cat-file")),
        "the shards ran git through the wrapper: {shards}"
    );
    let walked: Vec<&str> = shards.lines().filter(|l| walks(l)).collect();
    assert!(walked.is_empty(), "a shard walked the history: {walked:?}");
}

#[test]
fn a_stale_foreign_altered_or_truncated_listing_is_refused() {
    let sb = Sandbox::new();
    let (dir, other) = (sb.path("repo"), sb.path("other"));
    crate::history::generate(&dir, 20, 29).unwrap();
    crate::history::generate(&other, 10, 31).unwrap();
    let listing = sb.path("l.listing");
    write_listing(lh(&sb), &[&dir.display().to_string()], &listing);
    let good = std::fs::read(&listing).unwrap();
    let run = |repo: &Path, file: &Path, extra: &[&str]| {
        let o = lh(&sb)
            .args(["git", &repo.display().to_string(), "--format", "json"])
            .arg("--listing")
            .arg(file)
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        (o.status.code(), o.stdout.is_empty(), err)
    };
    let (code, _, err) = run(&dir, &listing, &[]);
    assert_eq!(code, Some(1), "the listing as written: {err}");
    let refused = |case: &str, (code, silent, err): (Option<i32>, bool, String), says: &str| {
        assert_eq!(code, Some(2), "{case}: {err}");
        assert!(silent, "{case}: a report was written");
        assert!(err.contains(says), "{case}: {err}");
    };
    refused(
        "another repository",
        run(&other, &listing, &[]),
        "another repository, or its history moved",
    );
    refused(
        "another selection",
        run(&dir, &listing, &["--since", "HEAD~3"]),
        "lists all of",
    );
    let cut = sb.write("cut.listing", &good[..good.len() - 40]);
    refused("truncated", run(&dir, &cut, &[]), "truncated or altered");
    let mut bad = good.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x20;
    let bad = sb.write("bad.listing", &bad);
    refused("altered", run(&dir, &bad, &[]), "truncated or altered");
    let notes = sb.write("notes.txt", "a shopping list\n");
    refused("no listing", run(&dir, &notes, &[]), "not a git listing");
    // A commit after the listing was written: its blobs are not in it.
    std::fs::write(
        dir.join("late.cfg"),
        format!("TOKEN = {}\n", fake_github(77)),
    )
    .unwrap();
    git_in(&dir, &["add", "late.cfg"]);
    git_in(&dir, &["commit", "-q", "-m", "late"]);
    refused("stale", run(&dir, &listing, &[]), "its history moved since");
}

/// The listing of a `--targets` list: one file for every repository, each part keyed by
/// the repository's line; a shard run with a repository the listing lacks names it as a
/// failed input (exit 2) and scans the others from the listing.
#[test]
fn one_listing_covers_a_target_list() {
    let sb = Sandbox::new();
    let (a, b, c) = (sb.path("a"), sb.path("b"), sb.path("c"));
    let ta = crate::history::generate(&a, 30, 37).unwrap();
    let tb = crate::history::generate(&b, 30, 41).unwrap();
    crate::history::generate(&c, 10, 43).unwrap();
    sb.write("repos.txt", format!("{}\n{}\n", a.display(), b.display()));
    let listing = sb.path("org.listing");
    write_listing(lh(&sb), &["--targets", "repos.txt"], &listing);
    let listed = listing.display().to_string();
    let (whole, _) =
        shards_equal_whole_with(&sb, &["git", "--targets", "repos.txt"], &[2], &|cmd| {
            cmd.args(["--listing", &listed]);
        });
    assert_eq!(
        whole["findings"].as_array().unwrap().len(),
        ta.len() + tb.len()
    );
    sb.write(
        "more.txt",
        format!("{}\n{}\n{}\n", a.display(), b.display(), c.display()),
    );
    let o = lh(&sb)
        .args([
            "git",
            "--targets",
            "more.txt",
            "--format",
            "json",
            "--listing",
        ])
        .arg(&listing)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("has no listing of"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["failed_inputs"], 1);
    assert_eq!(
        v["findings"].as_array().unwrap().len(),
        ta.len() + tb.len(),
        "the listed repositories are scanned"
    );
}
