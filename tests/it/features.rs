//! The optional features (`aws`, `registry`, both on by default) and what a build without
//! them does instead. The `without_*` tests run that build: this test binary's own leakhound
//! when it was built without the feature, else the binary LEAKHOUND_OFFLINE_BIN names (a
//! `cargo build --release --no-default-features`, which `.ci/run` builds anyway and hands
//! over: no second test binary to compile). Without either they say so and pass, except
//! under `.ci/run` (LEAKHOUND_CI=1), where a missing offline binary fails them.

use crate::util::{fake_aws, Sandbox};
use std::path::PathBuf;
use std::process::Command;

/// The leakhound built without `feature`, if there is one to run.
fn without(feature: &str, built_with: bool) -> Option<PathBuf> {
    if !built_with {
        return Some(crate::util::bin().to_path_buf());
    }
    if let Some(p) = std::env::var_os("LEAKHOUND_OFFLINE_BIN") {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "LEAKHOUND_OFFLINE_BIN={} is not a file",
            p.display()
        );
        return Some(p);
    }
    assert!(
        std::env::var_os("LEAKHOUND_CI").is_none(),
        "LEAKHOUND_CI is set but LEAKHOUND_OFFLINE_BIN is not: the build without `{feature}` \
         would go untested"
    );
    eprintln!(
        "note: not run: no leakhound built without `{feature}` (set LEAKHOUND_OFFLINE_BIN to a \
         cargo build --release --no-default-features)"
    );
    None
}

/// `bin ARGS` in the sandbox, as [`Sandbox::run`] runs this build's.
fn run_in(sb: &Sandbox, bin: &std::path::Path, args: &[&str]) -> crate::util::Run {
    crate::util::to_run(cmd_in(sb, bin).args(args).output().unwrap())
}

fn cmd_in(sb: &Sandbox, bin: &std::path::Path) -> Command {
    let mut c = Command::new(bin);
    c.current_dir(sb.dir.path()).env_remove("NO_COLOR");
    c
}

/// A sandbox holding one complete AWS credential set in `data/creds`.
fn with_creds(seed: u64) -> (Sandbox, String) {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(seed);
    sb.write(
        "data/creds",
        format!("aws_access_key_id = {id}\naws_secret_access_key = {secret}\n"),
    );
    (sb, id)
}

/// A hook config using the built-in IAM action, outside the scanned tree.
fn action_config(sb: &Sandbox) -> String {
    let p = sb.write(
        "ops/leakhound.toml",
        "[[hooks]]\nname = \"contain\"\naction = \"aws-deactivate-key\"\n",
    );
    p.display().to_string()
}

#[test]
fn every_build_finds_an_aws_key_in_a_file() {
    let (sb, id) = with_creds(700);
    let r = sb.run(&["scan", "data", "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let rules: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"aws.access-key-id"), "{rules:?}");
    assert!(
        rules.iter().any(|r| r.starts_with("aws.secret-access-key")),
        "{rules:?}"
    );
    assert!(r.stdout.contains(&id));
}

#[test]
#[cfg(feature = "aws")]
fn with_aws_the_iam_actions_are_accepted_when_the_config_is_loaded() {
    let sb = Sandbox::new();
    sb.write("data/a.txt", "nothing\n");
    let cfg = action_config(&sb);
    let r = sb.run(&["scan", "data", "--config", &cfg]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn without_aws_validate_marks_sets_unknown_and_sends_nothing() {
    let Some(offline) = without("aws", cfg!(feature = "aws")) else {
        return;
    };
    let (sb, _) = with_creds(701);
    // Anything sent to STS would connect here.
    let sts = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    sts.set_nonblocking(true).unwrap();
    let out = cmd_in(&sb, &offline)
        .args(["scan", "data", "--validate", "--format", "json"])
        .env(
            "AWS_ENDPOINT_URL_STS",
            format!("http://{}", sts.local_addr().unwrap()),
        )
        .env("XDG_STATE_HOME", sb.path("state"))
        .output()
        .unwrap();
    let r = crate::util::to_run(out);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let found = doc["findings"].as_array().unwrap();
    assert_eq!(found.len(), 2, "{doc:#}");
    for f in found {
        let v = &f["validation"];
        assert_eq!(v["status"], "unknown", "{v:#}");
        let why = v["reason"].as_str().unwrap();
        assert!(why.contains("built without the aws feature"), "{why}");
    }
    let err = sts.accept().map(|_| ()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock, "STS was called");
}

#[test]
fn without_aws_the_iam_actions_are_refused_when_the_config_is_loaded() {
    let Some(offline) = without("aws", cfg!(feature = "aws")) else {
        return;
    };
    let (sb, _) = with_creds(702);
    let cfg = action_config(&sb);
    // Refused before anything is scanned, whatever the findings.
    let r = run_in(&sb, &offline, &["scan", "data", "--config", &cfg]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    for want in [
        "contain",
        "aws-deactivate-key",
        "built without the aws feature",
    ] {
        assert!(r.stderr.contains(want), "{want}: {}", r.stderr);
    }
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    // A command hook needs no SDK.
    sb.write(
        "ops/leakhound.toml",
        "[[hooks]]\nname = \"note\"\nwhen = \"any\"\ncommand = [\"true\"]\n",
    );
    let r = run_in(&sb, &offline, &["scan", "data", "--config", &cfg]);
    assert_eq!(r.code, 1, "{}", r.stderr);
}

#[test]
fn without_registry_a_registry_image_is_an_error_that_says_why() {
    let Some(offline) = without("registry", cfg!(feature = "registry")) else {
        return;
    };
    let sb = Sandbox::new();
    for reference in ["alpine:3", "127.0.0.1:5000/team/app:v1"] {
        let r = run_in(&sb, &offline, &["image", reference]);
        assert_eq!(r.code, 2, "{reference}: {}", r.stderr);
        assert!(r.stderr.contains("`registry` feature"), "{}", r.stderr);
        assert!(r.stderr.contains("oci-archive:"), "{}", r.stderr);
    }
}
