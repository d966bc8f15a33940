//! The optional features (`aws`, `registry`, both on by default) and what a build without
//! them does instead. The `cfg(not(...))` tests run only in such a build:
//! `cargo test --no-default-features --test it features`, which `.ci/run` runs.

use crate::util::{fake_aws, Sandbox};

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
#[cfg(not(feature = "aws"))]
fn without_aws_validate_marks_sets_unknown_and_sends_nothing() {
    let (sb, _) = with_creds(701);
    // Anything sent to STS would connect here.
    let sts = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    sts.set_nonblocking(true).unwrap();
    let out = sb
        .cmd()
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
#[cfg(not(feature = "aws"))]
fn without_aws_the_iam_actions_are_refused_when_the_config_is_loaded() {
    let (sb, _) = with_creds(702);
    let cfg = action_config(&sb);
    // Refused before anything is scanned, whatever the findings.
    let r = sb.run(&["scan", "data", "--config", &cfg]);
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
    let r = sb.run(&["scan", "data", "--config", &cfg]);
    assert_eq!(r.code, 1, "{}", r.stderr);
}

#[test]
#[cfg(not(feature = "registry"))]
fn without_registry_a_registry_image_is_an_error_that_says_why() {
    let sb = Sandbox::new();
    for reference in ["alpine:3", "127.0.0.1:5000/team/app:v1"] {
        let r = sb.run(&["image", reference]);
        assert_eq!(r.code, 2, "{reference}: {}", r.stderr);
        assert!(r.stderr.contains("`registry` feature"), "{}", r.stderr);
        assert!(r.stderr.contains("oci-archive:"), "{}", r.stderr);
    }
}
