//! `leakhound runtime-audit` inside a simulated runtime: an instance metadata service and a
//! container credential endpoint (tests/metadata_server.py, speaking the documented
//! protocols) handing out credentials minted by moto's STS, a credential file under $HOME,
//! and another process's environment. Everything on 127.0.0.1.

use crate::util::{fake_aws, fake_github, require_moto, to_run, Run, Sandbox, Server};
use serde_json::Value;
use std::process::Command;

struct Runtime {
    _moto: Server,
    moto: String,
    metadata: Server,
}

fn start(v1: bool) -> Runtime {
    require_moto();
    let here = env!("CARGO_MANIFEST_DIR");
    let port_line = |line: &str| line.trim().parse::<u16>().ok().map(|p| p.to_string());
    let mut cmd = Command::new("python3");
    cmd.arg(format!("{here}/tests/moto_server.py"))
        .args(["-H", "127.0.0.1"]);
    let moto_server = Server::start("moto's server (tests/moto_server.py)", cmd, port_line);
    let moto = format!("http://127.0.0.1:{}", moto_server.announced);
    let mut cmd = Command::new("python3");
    cmd.arg(format!("{here}/tests/metadata_server.py"))
        .arg(&moto);
    if v1 {
        cmd.arg("--v1");
    }
    let metadata = Server::start("tests/metadata_server.py", cmd, port_line);
    Runtime {
        _moto: moto_server,
        moto,
        metadata,
    }
}

/// runtime-audit in `sb` with a clean environment: HOME in the sandbox, the endpoints and
/// STS pointed at the local servers.
fn audit(sb: &Sandbox, rt: Option<&Runtime>, extra: &[&str]) -> Run {
    to_run(audit_cmd(sb, rt, extra).output().unwrap())
}

/// The command [`audit`] runs, for a test to set more of its environment.
fn audit_cmd(sb: &Sandbox, rt: Option<&Runtime>, extra: &[&str]) -> Command {
    let mut c = sb.cmd();
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sb.path("home"))
        .env("XDG_STATE_HOME", sb.path("state"))
        .env("AWS_REGION", "us-east-1")
        .args(["runtime-audit", "--format", "json"])
        .args(extra);
    match rt {
        Some(rt) => {
            let base = format!("http://127.0.0.1:{}", rt.metadata.announced);
            c.env("AWS_ENDPOINT_URL_STS", &rt.moto)
                .env("AWS_ENDPOINT_URL_IAM", &rt.moto)
                .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", &base)
                .env(
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                    format!("{base}/ecs/creds"),
                )
                .env(
                    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
                    "ecs-test-authorization",
                );
        }
        None => {
            // Nothing listens there (and nothing can start to): the audit must say so and
            // go on.
            let port = crate::util::refused_port();
            c.env(
                "AWS_EC2_METADATA_SERVICE_ENDPOINT",
                format!("http://127.0.0.1:{port}"),
            );
        }
    }
    c
}

fn key_ids(doc: &Value) -> Vec<(String, String, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "aws.access-key-id")
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["credential_set"].as_str().unwrap_or("").to_string(),
                f["validation"]["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn every_credential_the_runtime_can_reach_is_found_paired_and_validated() {
    let rt = start(true);
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(81);
    sb.write(
        "home/.aws/credentials",
        format!("[default]\naws_access_key_id = {id}\naws_secret_access_key = {secret}\n"),
    );
    let r = audit(&sb, Some(&rt), &["--no-processes"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stderr, rt.metadata.log());
    let doc = r.json();
    let ids = key_ids(&doc);
    let imds = ids
        .iter()
        .find(|(p, _, _)| p.starts_with("imds http://127.0.0.1"))
        .unwrap_or_else(|| panic!("no instance role credential in {ids:?}"));
    let ecs = ids
        .iter()
        .find(|(p, _, _)| p.ends_with("/ecs/creds"))
        .unwrap_or_else(|| panic!("no container credential in {ids:?}"));
    assert!(
        ids.iter().any(|(p, _, _)| p.ends_with(".aws/credentials")),
        "{ids:?}"
    );
    // Each endpoint's key id, secret and session token are one set, checked live by STS.
    for (path, set, status) in [imds, ecs] {
        assert!(!set.is_empty(), "{path}: not paired");
        // Why not, when not: a run under full CI load once had the container's set skipped.
        let reasons: Vec<&Value> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["credential_set"] == set.as_str())
            .map(|f| &f["validation"])
            .collect();
        assert_eq!(status, "live", "{path}: {reasons:?}");
        let parts: Vec<&str> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["credential_set"] == set.as_str())
            .map(|f| f["rule"].as_str().unwrap())
            .collect();
        assert_eq!(parts.len(), 3, "{path}: {parts:?}");
    }
    let warnings = doc["warnings"].to_string();
    assert!(warnings.contains("IMDSv1"), "{warnings}");
    assert!(r.stderr.contains("IMDSv2"), "{}", r.stderr);
    // Nothing of a secret in the report or on stderr.
    assert!(!r.stdout.contains(&secret) && !r.stderr.contains(&secret));
}

#[test]
fn imdsv2_only_is_no_warning_and_a_bare_runtime_answers_clean() {
    let rt = start(false);
    let sb = Sandbox::new();
    let r = audit(&sb, Some(&rt), &["--no-processes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    assert!(
        !doc["warnings"].to_string().contains("IMDSv1"),
        "{}",
        doc["warnings"]
    );
    assert_eq!(key_ids(&doc).len(), 2);
    // Each live set's reach was read from its role's policies: the instance role may do
    // anything, the task role only read S3.
    let reach_of = |doc: &Value, source: &str| -> Vec<String> {
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["path"].as_str().unwrap().contains(source))
            .filter_map(|f| f["reach"]["level"].as_str().map(String::from))
            .collect()
    };
    let imds = reach_of(&doc, "imds ");
    assert!(
        !imds.is_empty() && imds.iter().all(|l| l == "admin"),
        "{imds:?}"
    );
    let ecs = reach_of(&doc, "/ecs/creds");
    assert!(
        !ecs.is_empty() && ecs.iter().all(|l| l == "read-only"),
        "{ecs:?}"
    );
    // An admin role behind the metadata service fails a runtime that allows less.
    let strict = audit(&sb, Some(&rt), &["--no-processes", "--max-reach", "write"]);
    assert_eq!(strict.code, 1, "{}", strict.stderr);
    let lenient = audit(&sb, Some(&rt), &["--no-processes", "--max-reach", "admin"]);
    assert_eq!(lenient.code, 0, "{}", lenient.stderr);
    // Without the metadata service, the read-only task role is within `read-only`.
    let mut no_imds = audit_cmd(
        &sb,
        Some(&rt),
        &["--no-processes", "--max-reach", "read-only"],
    );
    no_imds.env("AWS_EC2_METADATA_DISABLED", "true");
    let r = to_run(no_imds.output().unwrap());
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);

    let bare = audit(&sb, None, &["--no-processes"]);
    assert_eq!(bare.code, 0, "{}", bare.stderr);
    assert!(bare.stderr.contains("not reachable"), "{}", bare.stderr);
    assert_eq!(bare.json()["findings"], serde_json::json!([]));
}

#[test]
fn another_process_environment_is_read() {
    let sb = Sandbox::new();
    let token = fake_github(82);
    let mut child = Command::new("sleep")
        .arg("30")
        .env("GITHUB_TOKEN", &token)
        .spawn()
        .unwrap();
    let r = audit(&sb, None, &["--no-validate"]);
    let _ = child.kill();
    let _ = child.wait();
    let doc = r.json();
    let origin = format!("pid {}", child.id());
    let hit =
        doc["findings"].as_array().unwrap().iter().any(|f| {
            f["provenance"]["kind"] == "env" && f["provenance"]["origin"] == origin.as_str()
        });
    assert!(hit, "{origin} not in {:#}", doc["findings"]);
    assert!(!r.stdout.contains(&token));
}

/// Offline (STS refuses), with a key pair in the audited process's environment: the
/// reason names the call and its cause, not only "io error"; the human report says the
/// set's account once, not under each of its findings; and the run ends with what it read.
#[test]
fn offline_the_audit_names_what_failed_says_each_account_once_and_what_it_covered() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(83);
    let sts = format!("http://127.0.0.1:{}", crate::util::refused_port());
    let run = |format: &str, more: &[&str]| {
        let mut c = sb.cmd();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", sb.path("home"))
            .env("XDG_STATE_HOME", sb.path("state"))
            .env("AWS_REGION", "us-east-1")
            .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", &sts)
            .args(["runtime-audit", "--no-processes", "--format", format])
            .args(more)
            .env("AWS_ACCESS_KEY_ID", &id)
            .env("AWS_SECRET_ACCESS_KEY", &secret)
            .env("AWS_ENDPOINT_URL_STS", &sts)
            .env("AWS_ENDPOINT_URL_IAM", &sts);
        to_run(c.output().unwrap())
    };
    let r = run("json", &[]);
    let doc = r.json();
    let reasons: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["validation"]["reason"].as_str())
        .collect();
    assert!(!reasons.is_empty(), "{}\n{}", r.stdout, r.stderr);
    for why in &reasons {
        assert!(
            why.contains("STS GetCallerIdentity") && why.contains("onnection refused"),
            "the reason does not name what failed: {why}"
        );
    }
    let last = r.stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with("leakhound: runtime-audit read: this process's environment, no other process (--no-processes), 0 credential file(s), "),
        "{}",
        r.stderr
    );

    // Offline annotations (the account the key id carries) are the set's: said once, though
    // the key id, the secret and the token are each a variable of their own.
    let human = run("human", &["--no-validate"]);
    let account = human
        .stdout
        .lines()
        .filter(|l| l.contains("account"))
        .count();
    assert_eq!(account, 1, "{}", human.stdout);
    crate::util::assert_no_piece(&human.stdout, &secret, "runtime-audit human report");
    crate::util::assert_no_piece(&human.stderr, &secret, "runtime-audit stderr");
}
