//! `mcp-proxy` between a real MCP client and server (the official Python SDK, `mcp` on PyPI,
//! pinned in tests/run.sh): tests/fixtures/mcp/server.py hands out a generated fake AWS key
//! pair in a tool result, a resource, a prompt, a log message and a progress notification;
//! tests/fixtures/mcp/client.py goes through one session and prints what it saw. The same
//! client without the proxy is the reference.

use crate::util::{bin, fake_aws, pin, require_python_modules, to_run, Sandbox};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp")
        .join(name)
        .display()
        .to_string()
}

/// The SDK, at the version tests/run.sh pins (its wire format is what the proxy sees).
#[track_caller]
fn require_mcp() {
    let want = pin("MCP");
    let found = require_python_modules(
        &["mcp"],
        &format!("pip install mcp=={want}"),
        "from importlib.metadata import version; print(version('mcp'))",
    );
    if found != want {
        eprintln!("note: mcp {found} is installed; the tests are pinned to {want} (tests/run.sh)");
    }
}

/// The client's command: `client.py [extra...] -- server`, the credential in its environment
/// (the server inherits it).
fn client(
    sb: &Sandbox,
    (id, secret): &(String, String),
    extra: &[&str],
    server: &[&str],
) -> Command {
    let mut c = Command::new("python3");
    c.arg(fixture("client.py"))
        .args(extra)
        .arg("--")
        .args(server)
        .current_dir(sb.dir.path())
        .env("LH_TEST_KEY_ID", id)
        .env("LH_TEST_SECRET", secret)
        .env("LH_TEST_RECEIVED", sb.path("received.txt"));
    c
}

#[test]
fn a_real_session_sees_every_secret_masked_and_everything_else_equal() {
    require_mcp();
    let sb = Sandbox::new();
    let cred = fake_aws(1401);
    let (id, secret) = &cred;
    let server = fixture("server.py");
    let direct = to_run(
        client(&sb, &cred, &[], &["python3", &server])
            .output()
            .unwrap(),
    );
    assert_eq!(direct.code, 0, "{}", direct.stderr);
    // The reference holds the credential in all ten places (text and structured result, log,
    // progress, prompt, resource): otherwise this test would prove little.
    assert_eq!(
        direct.stdout.matches(id.as_str()).count(),
        5,
        "{}",
        direct.stdout
    );
    assert_eq!(direct.stdout.matches(secret.as_str()).count(), 5);

    let report = sb.path("masked.jsonl");
    let proxied = to_run(
        client(
            &sb,
            &cred,
            &[],
            &[
                &bin().display().to_string(),
                "mcp-proxy",
                "--report",
                &report.display().to_string(),
                "--",
                "python3",
                &server,
            ],
        )
        .output()
        .unwrap(),
    );
    assert_eq!(proxied.code, 0, "{}", proxied.stderr);
    assert!(
        !proxied.stdout.contains(id) && !proxied.stdout.contains(&secret[..12]),
        "{}",
        proxied.stdout
    );
    let want = direct
        .stdout
        .replace(id, "[REDACTED:aws.access-key-id]")
        .replace(secret, "[REDACTED:aws.secret-access-key]");
    assert_eq!(proxied.stdout, want);
    // The server's stderr passed through.
    assert!(
        proxied
            .stderr
            .contains("leakhound-test server: starting (stderr)")
            && proxied
                .stderr
                .contains("leakhound-test server: done (stderr)"),
        "{}",
        proxied.stderr
    );
    // One redacted line per masked secret.
    let lines = std::fs::read_to_string(&report).unwrap();
    assert_eq!(lines.lines().count(), 10, "{lines}");
    assert!(!lines.contains(&secret[..12]));
}

#[test]
fn mask_requests_masks_tool_call_arguments_before_the_server_sees_them() {
    require_mcp();
    let cred = fake_aws(1402);
    let server = fixture("server.py");
    let leak = format!("deploy with aws_access_key_id={}", cred.0);
    let received = |flags: &[&str]| {
        let sb = Sandbox::new();
        let b = bin().display().to_string();
        let mut cmd = vec![b.as_str(), "mcp-proxy"];
        cmd.extend_from_slice(flags);
        cmd.extend(["--", "python3", &server]);
        let r = to_run(
            client(&sb, &cred, &["--echo", &leak], &cmd)
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        // What the client got back is masked either way: it came from the server.
        assert!(r
            .stdout
            .contains("received: deploy with aws_access_key_id=[REDACTED:"));
        std::fs::read_to_string(sb.path("received.txt")).unwrap()
    };
    assert_eq!(received(&[]), format!("{leak}\n"));
    assert_eq!(
        received(&["--mask-requests"]),
        "deploy with aws_access_key_id=[REDACTED:aws.access-key-id]\n"
    );
}

/// The proxy driven line by line: requests written to its stdin, its stdout read as lines.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Raw {
    fn start(flags: &[&str], server: &[&str], env: &[(&str, &str)]) -> Raw {
        let mut child = Command::new(bin())
            .arg("mcp-proxy")
            .args(flags)
            .arg("--")
            .args(server)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Raw {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let s = self.stdin.as_mut().unwrap();
        writeln!(s, "{line}").unwrap();
        s.flush().unwrap();
    }

    fn recv(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .expect("no line from the proxy within 30 s")
    }

    /// Close stdin (the client hangs up); the exit code and stderr.
    fn finish(mut self) -> (i32, String) {
        self.stdin.take();
        let out = self.child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

#[test]
fn a_line_that_is_not_json_is_forwarded_masked_and_the_session_goes_on() {
    require_mcp();
    let (id, secret) = fake_aws(1403);
    let noise = format!("debug: aws_secret_access_key={secret}");
    let server = fixture("server.py");
    let sb = Sandbox::new();
    let audit = sb.path("audit.jsonl").display().to_string();
    let mut p = Raw::start(
        &["--audit-log", &audit],
        &["python3", &server],
        &[
            ("LH_TEST_KEY_ID", &id),
            ("LH_TEST_SECRET", &secret),
            ("LH_TEST_STDOUT_NOISE", &noise),
        ],
    );
    assert_eq!(
        p.recv(),
        "debug: aws_secret_access_key=[REDACTED:aws.secret-access-key]"
    );
    p.send(INITIALIZE);
    let init: serde_json::Value = serde_json::from_str(&p.recv()).unwrap();
    // The id (a string) came back as the client wrote it.
    assert_eq!(init["id"], "init-1");
    assert_eq!(init["result"]["serverInfo"]["name"], "leakhound-test");
    let (code, stderr) = p.finish();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("not JSON"), "{stderr}");
    assert!(!stderr.contains(&secret[..12]), "{stderr}");
    // The audit log names the masked secret, redacted.
    let log = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert_eq!(lines[0]["event"], "mcp-mask");
    assert_eq!(lines[0]["rule"], "aws.secret-access-key");
    assert!(!log.contains(&secret[..12]), "{log}");
}

#[test]
fn a_command_without_dashes_gets_a_hint() {
    let r = Sandbox::new().run(&["mcp-proxy", "python3", "server.py"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("leakhound mcp-proxy [OPTIONS] -- python3 server.py"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_servers_exit_code_passes_through() {
    require_mcp();
    let (id, secret) = fake_aws(1404);
    let server = fixture("server.py");
    let mut p = Raw::start(
        &[],
        &["python3", &server],
        &[
            ("LH_TEST_KEY_ID", &id),
            ("LH_TEST_SECRET", &secret),
            ("LH_TEST_EXIT", "3"),
        ],
    );
    p.send(INITIALIZE);
    assert!(p.recv().contains("\"init-1\""));
    let (code, stderr) = p.finish();
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("leakhound-test server: done (stderr)"),
        "{stderr}"
    );
    // A server killed by a signal: 128 + its number, as a shell reports it.
    let p = Raw::start(
        &[],
        &[
            "python3",
            "-c",
            "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
        ],
        &[],
    );
    assert_eq!(p.finish().0, 128 + 9);
}
