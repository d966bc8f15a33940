//! The real pre-commit framework (PyPI `pre-commit`) running this repository's
//! `.pre-commit-hooks.yaml` with `try-repo`.
//!
//! The suite runs the `leakhound-system` hook with the leakhound this test run built on
//! `PATH`: the framework, the hook's definition and `leakhound git --staged` are all real.
//! The `leakhound` hook (`language: rust`) runs the same entry after pre-commit has built
//! leakhound from source with cargo, as a user's `pre-commit install` does; that build is
//! the whole crate again (three minutes cold on two cores), so that test runs on request:
//! `tests/run.sh -- precommit -- --ignored`.

use crate::git::{git_cmd, Repo};
use crate::util::{bin, fake_github, to_run, Run};
use std::path::Path;

fn try_repo(r: &Repo, home: &Path, hook: &str) -> Run {
    let here = env!("CARGO_MANIFEST_DIR");
    crate::util::require_tool("pre-commit");
    // The system hook finds the binary under test first on PATH.
    let dir = bin().parent().unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The rust hook's build: a directory of its own (the test run holds the lock on
    // `target/`), kept between runs; optimisation is turned down because the hook's speed is
    // not what is tested here.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-build");
    let out = std::process::Command::new("pre-commit")
        .current_dir(&r.root)
        .args(["try-repo", here, hook, "--verbose"])
        .env("PATH", path)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("PRE_COMMIT_HOME", home)
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .unwrap();
    to_run(out)
}

/// A clean change passes; a staged secret fails the commit, named but not printed, and
/// stays staged.
fn blocks_a_staged_secret_and_passes_a_clean_change(hook: &str) {
    let r = Repo::new();
    r.commit(&[("README.md", "hello\n")], "start");
    let home = r.sb.path("pre-commit-home");

    r.write("notes.txt", "nothing secret here\n");
    r.git(&["add", "notes.txt"]);
    let pass = try_repo(&r, &home, hook);
    assert_eq!(pass.code, 0, "{}\n{}", pass.stdout, pass.stderr);
    // The hook ran and scanned the staged file: leakhound's own summary line, which
    // `--verbose` relays (pre-commit's status words are its text, not ours to read; and a
    // hook that pre-commit skipped also exits 0).
    assert!(
        pass.stdout.contains("0 findings in 1 file"),
        "{}",
        pass.stdout
    );

    let token = fake_github(31);
    r.write("deploy.env", &format!("GITHUB_TOKEN={token}\n"));
    r.git(&["add", "deploy.env"]);
    let block = try_repo(&r, &home, hook);
    assert_eq!(block.code, 1, "{}\n{}", block.stdout, block.stderr);
    assert!(block.stdout.contains("deploy.env"), "{}", block.stdout);
    assert!(block.stdout.contains("github.pat"), "{}", block.stdout);
    crate::util::assert_no_piece(&block.stdout, &token, "pre-commit's output");
    crate::util::assert_no_piece(&block.stderr, &token, "pre-commit's stderr");
    // The framework leaves the index as it was: the secret is still staged, not lost.
    let status = to_run(
        git_cmd(&r.root)
            .args(["diff", "--cached", "--name-only"])
            .output()
            .unwrap(),
    );
    assert!(status.stdout.contains("deploy.env"));
}

#[test]
fn the_pre_commit_framework_blocks_a_staged_secret_and_passes_a_clean_change() {
    blocks_a_staged_secret_and_passes_a_clean_change("leakhound-system");
}

#[test]
#[ignore = "pre-commit builds leakhound from source (about three minutes cold); run with --ignored"]
fn the_hook_built_from_source_by_pre_commit_blocks_a_staged_secret() {
    blocks_a_staged_secret_and_passes_a_clean_change("leakhound");
}

#[test]
fn the_hooks_file_is_a_valid_pre_commit_manifest_naming_both_hooks() {
    crate::util::require_tool("pre-commit");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = here.join(".pre-commit-hooks.yaml");
    let out = to_run(
        std::process::Command::new("pre-commit")
            .arg("validate-manifest")
            .arg(&manifest)
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let text = std::fs::read_to_string(&manifest).unwrap();
    for (id, language) in [("leakhound", "rust"), ("leakhound-system", "system")] {
        let at = text
            .find(&format!("- id: {id}\n"))
            .unwrap_or_else(|| panic!("no hook {id}"));
        let rest = &text[at..];
        let block = &rest[..rest[1..].find("\n- id:").map_or(rest.len(), |e| e + 1)];
        assert!(
            block.contains(&format!("language: {language}")),
            "{id}: {block}"
        );
        assert!(
            block.contains("entry: leakhound git --staged"),
            "{id}: {block}"
        );
    }
}
