//! The real pre-commit framework (PyPI `pre-commit`) running this repository's
//! `.pre-commit-hooks.yaml` with `try-repo`: the `leakhound` hook is built from source by
//! cargo, offline, exactly as a user's `pre-commit install` would build it.

use crate::git::{git_cmd, Repo};
use crate::util::{fake_github, to_run, Run};
use std::path::Path;

fn try_repo(r: &Repo, home: &Path) -> Run {
    let here = env!("CARGO_MANIFEST_DIR");
    // A build directory of its own (the test run holds the lock on `target/`), kept between
    // runs; optimisation is turned down because the hook's speed is not what is tested here.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-build");
    crate::util::require_tool("pre-commit");
    let out = std::process::Command::new("pre-commit")
        .current_dir(&r.root)
        .args(["try-repo", here, "leakhound", "--verbose"])
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

#[test]
fn the_pre_commit_framework_blocks_a_staged_secret_and_passes_a_clean_change() {
    let r = Repo::new();
    r.commit(&[("README.md", "hello\n")], "start");
    let home = r.sb.path("pre-commit-home");

    r.write("notes.txt", "nothing secret here\n");
    r.git(&["add", "notes.txt"]);
    let pass = try_repo(&r, &home);
    assert_eq!(pass.code, 0, "{}\n{}", pass.stdout, pass.stderr);
    assert!(pass.stdout.contains("Passed"), "{}", pass.stdout);

    let token = fake_github(31);
    r.write("deploy.env", &format!("GITHUB_TOKEN={token}\n"));
    r.git(&["add", "deploy.env"]);
    let block = try_repo(&r, &home);
    assert_eq!(block.code, 1, "{}\n{}", block.stdout, block.stderr);
    assert!(block.stdout.contains("Failed"), "{}", block.stdout);
    assert!(block.stdout.contains("deploy.env"), "{}", block.stdout);
    assert!(block.stdout.contains("github.pat"), "{}", block.stdout);
    assert!(!block.stdout.contains(&token), "the secret was printed");
    // The framework leaves the index as it was: the secret is still staged, not lost.
    let status = to_run(
        git_cmd(&r.root)
            .args(["diff", "--cached", "--name-only"])
            .output()
            .unwrap(),
    );
    assert!(status.stdout.contains("deploy.env"));
}
