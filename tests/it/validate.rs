//! `--validate` against moto's server (tests/moto_server.py) on 127.0.0.1 with authentication
//! enforced: every status from real STS calls.

use crate::util::{fake_aws, to_run, Run, Sandbox};
// What only the STS tests use: they need the `aws` feature.
#[cfg(feature = "aws")]
use crate::util::{require_moto, Server};
#[cfg(feature = "aws")]
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
#[cfg(feature = "aws")]
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[cfg(feature = "aws")]
/// moto on a port it picked itself, with the fixture's credentials.
pub(crate) struct Moto {
    pub(crate) server: Server,
    pub(crate) endpoint: String,
    pub(crate) creds: Value,
}

#[cfg(feature = "aws")]
impl Moto {
    fn start() -> Moto {
        Moto::with_fixture("aws_fixture.py")
    }

    /// moto, set up by `tests/FIXTURE` (a script that prints the credentials as JSON).
    pub(crate) fn with_fixture(fixture: &str) -> Moto {
        require_moto();
        let here = env!("CARGO_MANIFEST_DIR");
        let mut cmd = Command::new("python3");
        cmd.arg(format!("{here}/tests/moto_server.py"))
            .args(["-H", "127.0.0.1"])
            .env("INITIAL_NO_AUTH_ACTION_COUNT", "3");
        // tests/moto_server.py prints its port, alone on a line, once it listens.
        let server = Server::start("moto's server (tests/moto_server.py)", cmd, |line| {
            line.trim()
                .parse::<u16>()
                .ok()
                .map(|port| format!("127.0.0.1:{port}"))
        });
        let endpoint = format!("http://{}", server.announced);
        let out = Command::new("python3")
            .arg(format!("{here}/tests/{fixture}"))
            .arg(&endpoint)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tests/{fixture}: {}\nmoto said:\n{}",
            String::from_utf8_lossy(&out.stderr),
            server.log()
        );
        let creds = serde_json::from_slice(&out.stdout).unwrap();
        Moto {
            server,
            endpoint,
            creds,
        }
    }

    pub(crate) fn cred(&self, which: &str, i: usize) -> String {
        self.creds[which][i].as_str().unwrap().to_string()
    }

    /// Requests that reached moto so far, as the server itself counted them (it counts a
    /// request before answering it, so a client that has its answer is in the count).
    fn count(&self) -> usize {
        let body = http_get(&self.server.announced, "/__count");
        body.trim()
            .parse()
            .unwrap_or_else(|_| panic!("/__count answered {body:?}"))
    }
}

#[cfg(feature = "aws")]
/// The body of `GET path` on `addr`, over HTTP/1.0 so the server closes when done.
fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

/// A loopback port on which nothing can be listening: bound by this socket, which never
/// listens, so a connection is refused for as long as it is held (a port that was free a
/// moment ago may not be free now).
#[cfg(feature = "aws")]
struct Refusing {
    fd: libc::c_int,
    port: u16,
}

#[cfg(feature = "aws")]
impl Refusing {
    fn new() -> Refusing {
        // SAFETY: plain socket calls on a socket this function owns; `addr` and `len` are
        // valid for the sizes given.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
            assert!(fd >= 0);
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let p = &mut addr as *mut libc::sockaddr_in as *mut libc::sockaddr;
            assert_eq!(libc::bind(fd, p, len), 0);
            let mut got = len;
            assert_eq!(libc::getsockname(fd, p, &mut got), 0);
            Refusing {
                fd,
                port: u16::from_be(addr.sin_port),
            }
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

#[cfg(feature = "aws")]
impl Drop for Refusing {
    fn drop(&mut self) {
        // SAFETY: the socket is this struct's own.
        unsafe { libc::close(self.fd) };
    }
}

/// An HTTP server on a port the system picked, in a thread of the test: every request gets
/// `status` and `body`, and is counted.
struct Stub {
    endpoint: String,
    requests: Arc<AtomicUsize>,
}

impl Stub {
    fn start(status: &'static str, body: impl Into<String>) -> Stub {
        let body: String = body.into();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                if read_request(&mut conn).is_none() {
                    continue;
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status}\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Stub { endpoint, requests }
    }

    fn count(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Read one request (head and a Content-Length body); `None` if the client went away.
fn read_request(conn: &mut TcpStream) -> Option<()> {
    conn.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = conn.read(&mut buf).ok().filter(|&n| n > 0)?;
        got.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while got.len() < head_end + length {
        let n = conn.read(&mut buf).ok().filter(|&n| n > 0)?;
        got.extend_from_slice(&buf[..n]);
    }
    Some(())
}

#[cfg(feature = "aws")]
fn creds_file(id: &str, secret: &str, token: Option<&str>) -> String {
    let mut s = format!("aws_access_key_id = {id}\naws_secret_access_key = {secret}\n");
    if let Some(t) = token {
        s.push_str(&format!("aws_session_token = {t}\n"));
    }
    s
}

/// `leakhound scan . --validate` in `sb` against `endpoint`, with its own state directory.
fn validate(sb: &Sandbox, endpoint: &str, extra: &[&str]) -> Run {
    let mut c = sb.cmd();
    c.args(["scan", ".", "--validate", "--format", "json"])
        .args(extra)
        .env("AWS_ENDPOINT_URL_STS", endpoint)
        .env("AWS_REGION", "us-east-1")
        .env("XDG_STATE_HOME", sb.path("state"))
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY");
    to_run(c.output().unwrap())
}

#[cfg(feature = "aws")]
/// The validation of the key id finding in `file`.
fn status_of(doc: &Value, file: &str) -> Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == file && f["rule"] == "aws.access-key-id")
        .unwrap_or_else(|| panic!("no key id in {file}: {doc:#}"))["validation"]
        .clone()
}

#[test]
#[cfg(feature = "aws")]
fn every_status_comes_from_a_real_call() {
    let moto = Moto::start();
    let sb = Sandbox::new();
    let (id, secret) = (moto.cred("leaked", 0), moto.cred("leaked", 1));
    sb.write("live/creds", creds_file(&id, &secret, None));
    let wrong = fake_aws(70).1;
    sb.write("mismatch/creds", creds_file(&id, &wrong, None));
    let (unknown_id, unknown_secret) = fake_aws(71);
    sb.write(
        "invalid/creds",
        creds_file(&unknown_id, &unknown_secret, None),
    );
    let s = |i| moto.cred("session", i);
    // Expired already: tests/aws_fixture.py waited for STS to say so.
    sb.write("expired/creds", creds_file(&s(0), &s(1), Some(&s(2))));

    let r = validate(&sb, &moto.endpoint, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let live = status_of(&doc, "live/creds");
    assert_eq!(live["status"], "live", "{live:#}");
    assert_eq!(live["account"], "123456789012");
    assert_eq!(live["arn"], "arn:aws:iam::123456789012:user/leaky");
    assert!(live["checked_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        status_of(&doc, "mismatch/creds")["status"],
        "secret-mismatch"
    );
    assert_eq!(status_of(&doc, "invalid/creds")["status"], "invalid");
    assert_eq!(status_of(&doc, "expired/creds")["status"], "expired");
    // The secret finding of a set carries the same outcome.
    let secret_finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "live/creds" && f["rule"] != "aws.access-key-id")
        .unwrap();
    assert_eq!(secret_finding["validation"]["status"], "live");
    // No secret in any output.
    for out in [&r.stdout, &r.stderr] {
        assert!(!out.contains(&secret) && !out.contains(&s(1)) && !out.contains(&s(2)));
    }
    // --fail-on live: findings that are not live do not fail the run.
    std::fs::remove_dir_all(sb.path("live")).unwrap();
    let r = validate(&sb, &moto.endpoint, &["--fail-on", "live"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = validate(&sb, &moto.endpoint, &["--fail-on", "none"]);
    assert_eq!(r.code, 0);
}

#[test]
#[cfg(feature = "aws")]
fn canaries_are_never_called_and_a_set_is_checked_once() {
    let moto = Moto::start();
    let sb = Sandbox::new();
    // A key id of a canarytokens.org account (052310077262).
    let canary = "AKIAAYLPMN5HAAAAAAAA";
    sb.write("canary/creds", creds_file(canary, &fake_aws(72).1, None));
    let before = moto.count();
    let r = validate(&sb, &moto.endpoint, &[]);
    let v = status_of(&r.json(), "canary/creds");
    assert_eq!(v["status"], "skipped");
    assert_eq!(v["reason"], "canary");
    assert_eq!(v["account"], "052310077262");
    assert_eq!(moto.count(), before, "a canary key was sent to STS");

    // The same (invalid) set in 50 files: one request, and the next run none (disk cache).
    std::fs::remove_dir_all(sb.path("canary")).unwrap();
    let (id, secret) = fake_aws(73);
    for i in 0..50 {
        sb.write(&format!("copies/{i}/creds"), creds_file(&id, &secret, None));
    }
    let before = moto.count();
    let r = validate(&sb, &moto.endpoint, &[]);
    let doc = r.json();
    assert_eq!(status_of(&doc, "copies/7/creds")["status"], "invalid");
    assert_eq!(moto.count() - before, 1);
    let before = moto.count();
    let r = validate(&sb, &moto.endpoint, &[]);
    assert_eq!(status_of(&r.json(), "copies/3/creds")["status"], "invalid");
    assert_eq!(moto.count(), before, "the cached answer was asked again");
    // The cache holds no secret.
    let cache = std::fs::read_to_string(sb.path("state/leakhound/validation-cache.json")).unwrap();
    assert!(!cache.contains(&secret) && !cache.contains(&id));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(sb.path("state/leakhound/validation-cache.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0);
}

#[test]
#[cfg(feature = "aws")]
fn network_failures_and_server_errors_are_unknown_never_invalid() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(74);
    sb.write("a/creds", creds_file(&id, &secret, None));
    // Nothing listens.
    let closed = Refusing::new();
    let r = validate(&sb, &closed.endpoint(), &[]);
    let v = status_of(&r.json(), "a/creds");
    assert_eq!(v["status"], "unknown", "{v:#}");
    assert!(v["reason"].as_str().unwrap().contains("network"), "{v:#}");
    // A server that answers 500 to everything.
    let down = Stub::start("500 Internal Server Error", "<html>down</html>");
    let r = validate(&sb, &down.endpoint, &[]);
    let v = status_of(&r.json(), "a/creds");
    assert_eq!(v["status"], "unknown", "{v:#}");
    assert!(v["reason"].as_str().unwrap().contains("500"), "{v:#}");
    assert!(down.count() >= 1);
    // Without a secret nothing can be checked: skipped, and the account is still shown.
    std::fs::remove_dir_all(sb.path("a")).unwrap();
    sb.write("b/only-id", format!("aws_access_key_id = {id}\n"));
    let sts = Stub::start("500 Internal Server Error", "");
    let r = validate(&sb, &sts.endpoint, &[]);
    let doc = r.json();
    let f = &doc["findings"][0];
    assert_eq!(f["validation"]["status"], "skipped");
    assert_eq!(f["validation"]["reason"], "no pair");
    assert!(f["aws_account"].as_str().unwrap().len() == 12);
    assert_eq!(sts.count(), 0, "a lone key id was sent to STS");
}

/// A config whose hooks write what they get next to it.
fn hook_config(sb: &Sandbox, hooks: &str) -> String {
    let dir = sb.path("ops");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("leakhound.toml");
    std::fs::write(&p, hooks).unwrap();
    p.display().to_string()
}

fn scan_with(sb: &Sandbox, cfg: &str, extra: &[&str]) -> Run {
    let mut c = sb.cmd();
    c.args(["scan", "data", "--format", "json", "--config", cfg])
        .args(extra)
        .env("XDG_STATE_HOME", sb.path("state"))
        .env("AWS_SECRET_ACCESS_KEY", "operator-secret-must-not-leak")
        .env("AWS_ACCESS_KEY_ID", "AKIAOPERATOROWNKEY00");
    to_run(c.output().unwrap())
}

#[test]
fn hooks_run_once_per_finding_across_runs_and_get_no_secrets_unless_asked() {
    let sb = Sandbox::new();
    let token = crate::util::fake_github(80);
    sb.write("data/a.env", format!("GITHUB_TOKEN={token}\n"));
    sb.write("data/copy.env", format!("GITHUB_TOKEN={token}\n"));
    let cfg = hook_config(
        &sb,
        r#"
[[hooks]]
name = "record"
when = "any"
rules = ["github.*"]
command = ["sh", "-c", "cat >> redacted.jsonl; env > env.txt"]

[[hooks]]
name = "record-secret"
when = "any"
command = ["sh", "-c", "cat >> revealed.jsonl"]
with_secret = true

[[hooks]]
name = "not-for-github"
when = "any"
rules = ["aws.*"]
command = ["sh", "-c", "echo ran >> aws.txt"]
"#,
    );
    let r = scan_with(&sb, &cfg, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let hooks = &doc["findings"][0]["hooks"];
    assert_eq!(hooks[0]["name"], "record");
    assert_eq!(hooks[0]["status"], "ok");
    assert_eq!(hooks[0]["exit_code"], 0);
    assert!(hooks[0]["duration_ms"].is_u64());
    let ops = sb.path("ops");
    let redacted = std::fs::read_to_string(ops.join("redacted.jsonl")).unwrap();
    // Two files, one fingerprint: one run.
    assert_eq!(redacted.lines().count(), 1, "{redacted}");
    assert!(!redacted.contains(&token));
    let revealed = std::fs::read_to_string(ops.join("revealed.jsonl")).unwrap();
    assert!(revealed.contains(&token));
    let env = std::fs::read_to_string(ops.join("env.txt")).unwrap();
    assert!(
        !env.contains("operator-secret-must-not-leak") && !env.contains("AKIAOPERATOROWNKEY00")
    );
    assert!(env.contains("LEAKHOUND_HOOK=record"));
    assert!(!ops.join("aws.txt").exists());
    // A second run repeats nothing that succeeded.
    let r = scan_with(&sb, &cfg, &[]);
    assert_eq!(r.json()["findings"][0]["hooks"][0]["status"], "done-before");
    assert_eq!(
        std::fs::read_to_string(ops.join("redacted.jsonl"))
            .unwrap()
            .lines()
            .count(),
        1
    );
    // The report itself stays redacted.
    assert!(!r.stdout.contains(&token));
}

/// A config named by a bare file name (`--config op.toml`) runs its hooks in the current
/// directory, its own: the name's parent is "", which no command can be started in.
#[test]
fn a_config_given_by_a_bare_file_name_runs_its_hooks() {
    let sb = Sandbox::new();
    let token = crate::util::fake_github(83);
    sb.write("data/a.env", format!("GITHUB_TOKEN={token}\n"));
    sb.write(
        "op.toml",
        "[[hooks]]\nname = \"mark\"\nwhen = \"any\"\ncommand = [\"sh\", \"-c\", \"cat > /dev/null; echo ran > ran.txt\"]\n",
    );
    let r = scan_with(&sb, "op.toml", &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let hooks = &r.json()["findings"][0]["hooks"];
    assert_eq!(hooks[0]["status"], "ok", "{hooks}\n{}", r.stderr);
    assert!(sb.path("ran.txt").exists());
}

/// `env` audits leakhound's own environment, which a hook would inherit: no variable holding
/// a secret the run found (reported or only counted, like a weak password) is in a hook's
/// environment unless the hook passes it on purpose, and what a hook handed the secret prints
/// reaches leakhound's stderr masked.
#[test]
fn a_hook_inherits_no_secret_the_run_found_and_its_output_is_masked() {
    let sb = Sandbox::new();
    let token = crate::util::fake_github(82);
    let (_, aws) = crate::util::fake_aws(82);
    let cfg = hook_config(
        &sb,
        r#"
[[hooks]]
name = "notify"
when = "any"
command = ["sh", "-c", "cat > /dev/null; env > env-$LEAKHOUND_HOOK.txt"]

[[hooks]]
name = "passed"
when = "any"
rules = ["github.*"]
pass_env = ["GITHUB_TOKEN"]
command = ["sh", "-c", "cat > /dev/null; env > env-$LEAKHOUND_HOOK.txt"]

[[hooks]]
name = "echo"
when = "any"
rules = ["github.*"]
with_secret = true
command = ["sh", "-c", "cat; echo; cat ../others.txt; head -c 12 ../token.txt"]
"#,
    );
    // What the echo hook prints besides its own secret: the run's other secrets, a piece of
    // one, and at its very end the token's first 12 bytes with no line end.
    sb.write("others.txt", format!("{aws}\npiece {}\n", &aws[5..25]));
    sb.write("token.txt", &token);
    let mut c = sb.cmd();
    c.args(["env", "--config", &cfg, "--format", "json"])
        .env("XDG_STATE_HOME", sb.path("state"))
        .env("GITHUB_TOKEN", &token)
        .env("BUILD_SECRETS", format!("x aws_secret_access_key={aws}"))
        .env("DB_PASSWORD", "hunter2hunter")
        // Pieces of found secrets: the token without its prefix, 20 bytes of the AWS secret.
        .env("TOKEN_BODY", &token[4..])
        .env("AWS_PIECE", &aws[5..25])
        .env("PLAIN_SETTING", "kept");
    let r = to_run(c.output().unwrap());
    assert_eq!(r.code, 1, "{}", r.stderr);
    let ops = sb.path("ops");
    let env = std::fs::read_to_string(ops.join("env-notify.txt")).unwrap();
    for secret in [token.as_str(), aws.as_str(), "hunter2hunter"] {
        assert!(
            !env.contains(secret),
            "a found secret reached a hook's environment:\n{env}"
        );
    }
    for piece in ["TOKEN_BODY=", "AWS_PIECE="] {
        assert!(
            !env.contains(piece),
            "a piece reached a hook's environment:\n{env}"
        );
    }
    assert!(env.contains("PLAIN_SETTING=kept"), "{env}");
    let passed = std::fs::read_to_string(ops.join("env-passed.txt")).unwrap();
    assert!(
        passed.contains(&format!("GITHUB_TOKEN={token}")),
        "pass_env passes it on"
    );
    crate::util::assert_no_piece(&r.stderr, &token, "a hook's output on stderr");
    crate::util::assert_no_piece(&r.stderr, &aws, "a hook's output on stderr");
    assert!(!r.stderr.contains(&token[..12]), "{}", r.stderr);
    assert!(r.stderr.contains("piece [REDACTED]"), "{}", r.stderr);
}

#[test]
fn hooks_that_hang_fail_or_ignore_stdin_are_recorded() {
    let sb = Sandbox::new();
    sb.write(
        "data/a.env",
        format!("GITHUB_TOKEN={}\n", crate::util::fake_github(81)),
    );
    let cfg = hook_config(
        &sb,
        r#"
[[hooks]]
name = "hangs"
when = "any"
command = ["sleep", "30"]
timeout = "500ms"

[[hooks]]
name = "fails"
when = "any"
command = ["sh", "-c", "exit 3"]

[[hooks]]
name = "deaf"
when = "any"
command = ["true"]
"#,
    );
    let start = Instant::now();
    let r = scan_with(&sb, &cfg, &[]);
    assert!(start.elapsed() < Duration::from_secs(10));
    let hooks = r.json()["findings"][0]["hooks"].clone();
    let by = |n: &str| {
        hooks
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(by("hangs")["status"], "timeout");
    assert_eq!(by("fails")["status"], "failed");
    assert_eq!(by("fails")["exit_code"], 3);
    assert_eq!(by("deaf")["status"], "ok");
    // A failed hook is tried again next time; a successful one is not.
    let again = scan_with(&sb, &cfg, &[]).json()["findings"][0]["hooks"].clone();
    let status = |n: &str| {
        again
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == n)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status("fails"), "failed");
    assert_eq!(status("deaf"), "done-before");
}

/// A value a check refuses is named by its field, never quoted: an operator's config may hold
/// a secret where a word should be (a token pasted into `when`), and no message shows input.
#[test]
fn malformed_configs_are_errors_that_name_the_place() {
    let sb = Sandbox::new();
    sb.write("data/a.txt", "nothing\n");
    let token = crate::util::fake_github(83);
    let hook = |field: &str| {
        format!("[[hooks]]\nname = \"x\"\nwhen = \"any\"\ncommand = [\"true\"]\n{field}\n")
    };
    for (text, want) in [
        (
            "[[hooks]]\nname = \"x\"\ncommand = [\"true\"\n".to_string(),
            "line",
        ),
        (
            format!("[[hooks]]\nname = \"x\"\nwhen = \"{token}\"\ncommand = [\"true\"]\n"),
            "when",
        ),
        (hook(&format!("timeout = \"{token}\"")), "timeout"),
        (hook(&format!("rules = [\"{token}[\"]")), "rules"),
        (
            format!("[[hooks]]\nname = \"x\"\nwhen = \"any\"\naction = \"{token}\"\n"),
            "action",
        ),
        (
            format!("[validate]\ncanary_accounts = [\"{token}\"]\n"),
            "12-digit",
        ),
        (
            format!("[rules]\ndisable = [\"{token}[\"]\n"),
            "rules.disable",
        ),
    ] {
        let cfg = hook_config(&sb, &text);
        let r = scan_with(&sb, &cfg, &[]);
        assert_eq!(r.code, 2, "{text}");
        assert!(r.stderr.contains(want), "{text}: {}", r.stderr);
        crate::util::assert_no_piece(&r.stderr, &token, &text);
    }
}

#[test]
#[cfg(feature = "aws")]
fn the_audit_log_records_validations_and_hooks_without_secrets() {
    let moto = Moto::start();
    let sb = Sandbox::new();
    let (id, secret) = (moto.cred("leaked", 0), moto.cred("leaked", 1));
    sb.write("data/creds", creds_file(&id, &secret, None));
    let cfg = hook_config(
        &sb,
        "[[hooks]]\nname = \"notify\"\nwhen = \"live\"\ncommand = [\"sh\", \"-c\", \"cat > live.json\"]\n",
    );
    let log = sb.path("audit.jsonl");
    let r = to_run(
        sb.cmd()
            .args([
                "scan",
                "data",
                "--validate",
                "--format",
                "json",
                "--config",
                &cfg,
            ])
            .arg("--audit-log")
            .arg(&log)
            .env("AWS_ENDPOINT_URL_STS", &moto.endpoint)
            .env("AWS_REGION", "us-east-1")
            .env("XDG_STATE_HOME", sb.path("state"))
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(&secret), "secret in the audit log");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let v = lines.iter().find(|l| l["event"] == "validation").unwrap();
    assert_eq!(v["status"], "live");
    assert_eq!(v["key_id"], id.as_str());
    assert_eq!(v["account"], "123456789012");
    assert!(v["time"].as_str().unwrap().ends_with('Z'));
    let h = lines.iter().find(|l| l["event"] == "hook").unwrap();
    assert_eq!(h["hook"], "notify");
    assert_eq!(h["outcome"], "ok");
    assert_eq!(h["status"], "live");
    // The live hook got the finding, redacted, with its validation.
    let got: Value =
        serde_json::from_str(&std::fs::read_to_string(sb.path("ops/live.json")).unwrap()).unwrap();
    assert_eq!(got["validation"]["status"], "live");
    assert!(!got.to_string().contains(&secret));
}

#[test]
#[cfg(feature = "aws")]
fn deactivation_end_to_end_leaves_the_key_inactive_and_invalid() {
    let moto = Moto::start();
    let sb = Sandbox::new();
    let (id, secret) = (moto.cred("leaked", 0), moto.cred("leaked", 1));
    sb.write("data/creds", creds_file(&id, &secret, None));
    let cfg = hook_config(
        &sb,
        "[[hooks]]\nname = \"deactivate\"\nwhen = \"live\"\naction = \"aws-deactivate-key\"\n",
    );
    // The operator's own credentials (moto's admin), through the standard chain.
    let run = || {
        to_run(
            sb.cmd()
                .args([
                    "scan",
                    "data",
                    "--validate",
                    "--format",
                    "json",
                    "--config",
                    &cfg,
                ])
                .env("AWS_ENDPOINT_URL", &moto.endpoint)
                .env("AWS_REGION", "us-east-1")
                .env("AWS_ACCESS_KEY_ID", moto.cred("admin", 0))
                .env("AWS_SECRET_ACCESS_KEY", moto.cred("admin", 1))
                .env("AWS_CONFIG_FILE", "/dev/null")
                .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
                .env("XDG_STATE_HOME", sb.path("state"))
                .env_remove("AWS_ENDPOINT_URL_STS")
                .output()
                .unwrap(),
        )
    };
    let r = run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "aws.access-key-id")
        .unwrap()
        .clone();
    let hook = &f["hooks"][0];
    assert_eq!(hook["status"], "ok", "{hook:#}");
    assert_eq!(hook["status_after"], "invalid", "{hook:#}");
    assert!(hook["detail"].as_str().unwrap().contains("leaky"));
    // The finding now says what is true after the action.
    assert_eq!(f["validation"]["status"], "invalid");
    // IAM agrees: the key is Inactive.
    let here = env!("CARGO_MANIFEST_DIR");
    let check = Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import boto3; c = boto3.client('iam', endpoint_url='{}', region_name='us-east-1', \
             aws_access_key_id='{}', aws_secret_access_key='{}'); \
             print(c.list_access_keys(UserName='leaky')['AccessKeyMetadata'][0]['Status'])",
            moto.endpoint,
            moto.cred("admin", 0),
            moto.cred("admin", 1)
        ))
        .current_dir(here)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&check.stdout).trim(), "Inactive");
    // Nothing is repeated: the key is no longer live, so the hook does not apply.
    let again = run().json();
    let f = again["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "aws.access-key-id")
        .unwrap()
        .clone();
    assert_eq!(f["validation"]["status"], "invalid");
    assert!(f["hooks"].is_null());
}

#[test]
#[cfg(feature = "aws")]
fn validate_checks_an_earlier_report_and_keeps_it_redacted() {
    let moto = Moto::start();
    let sb = Sandbox::new();
    let (id, secret) = (moto.cred("leaked", 0), moto.cred("leaked", 1));
    sb.write("data/creds", creds_file(&id, &secret, None));
    let token = crate::util::fake_github(90);
    sb.write("data/gh.env", format!("GITHUB_TOKEN={token}\n"));
    let with = sb.path("with.jsonl");
    let without = sb.path("without.jsonl");
    for (path, show) in [(&with, true), (&without, false)] {
        let mut c = sb.cmd();
        c.args(["scan", "data", "--format", "jsonl", "-o"])
            .arg(path);
        if show {
            c.arg("--show-secrets");
        }
        assert_eq!(c.output().unwrap().status.code(), Some(1));
    }
    let run = |report: &std::path::Path, extra: &[&str]| {
        to_run(
            sb.cmd()
                .arg("validate")
                .arg(report)
                .args(extra)
                .env("AWS_ENDPOINT_URL_STS", &moto.endpoint)
                .env("AWS_REGION", "us-east-1")
                .env("XDG_STATE_HOME", sb.path("state"))
                .output()
                .unwrap(),
        )
    };
    let r = run(&with, &["--fail-on", "live"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines = r.jsonl();
    let key = lines
        .iter()
        .find(|l| l["rule"] == "aws.access-key-id")
        .unwrap();
    assert_eq!(key["validation"]["status"], "live");
    assert_eq!(key["secret"], id.as_str());
    assert!(lines.iter().any(|l| l["rule"] == "github.pat"));
    assert!(
        !r.stdout.contains(&secret) && !r.stdout.contains(&token),
        "{}",
        r.stdout
    );
    // A redacted report cannot be checked, and says so.
    let r = run(&without, &["--fail-on", "live"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = r.jsonl();
    let s = lines
        .iter()
        .find(|l| l["rule"] == "aws.secret-access-key")
        .unwrap();
    assert_eq!(s["validation"]["status"], "skipped");
    // Not a report: exit 2, naming the line.
    sb.write("bad.jsonl", "{\"rule\": \"x\"}\nnot json\n");
    let r = run(&sb.path("bad.jsonl"), &[]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("bad.jsonl:2"), "{}", r.stderr);
}

#[test]
fn incomplete_sets_are_skipped_without_a_request() {
    let sb = Sandbox::new();
    let (_, secret) = fake_aws(91);
    // A secret with no key id, and a session token with no secret: nothing to check with.
    sb.write(
        "a/secret-only",
        format!("aws_secret_access_key = {secret}\n"),
    );
    let token = format!("FwoGZXIvYXdzE{}", "Q".repeat(300));
    sb.write("b/token-only", format!("aws_session_token = {token}\n"));
    // Anything sent here would be counted (and make the status `unknown`).
    let sts = Stub::start("500 Internal Server Error", "");
    let r = validate(&sb, &sts.endpoint, &[]);
    let doc = r.json();
    let found = doc["findings"].as_array().unwrap();
    assert!(!found.is_empty(), "{doc:#}");
    for f in found {
        assert_eq!(f["validation"]["status"], "skipped", "{f:#}");
        assert_eq!(f["validation"]["reason"], "no pair");
    }
    assert!(!r.stderr.contains("validated"), "{}", r.stderr);
    assert_eq!(sts.count(), 0, "an incomplete set was sent to STS");
}

#[cfg(feature = "aws")]
/// A GetCallerIdentity answer in the awsQuery shape STS uses, around `result`.
fn caller_identity(result: &str) -> String {
    format!(
        "<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\
         {result}<ResponseMetadata><RequestId>0c6c1bd5-0000-4000-8000-000000000000</RequestId>\
         </ResponseMetadata></GetCallerIdentityResponse>"
    )
}

#[test]
#[cfg(feature = "aws")]
fn a_200_without_account_and_arn_is_unknown_uncached_and_fires_no_live_hook() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(92);
    // A key id in the format that carries its account (fifth character `Q`..`Z`, `2`..`7`).
    let id = format!("AKIAR{}", &id[5..]);
    let own = leakhound::validate::aws::owner_account(&id).unwrap();
    assert_ne!(own, "123456789012");
    sb.write("data/creds", creds_file(&id, &secret, None));
    let cfg = hook_config(
        &sb,
        "[[hooks]]\nname = \"on-live\"\nwhen = \"live\"\ncommand = [\"sh\", \"-c\", \"cat > fired.json\"]\n",
    );
    let sts = Stub::start("200 OK", caller_identity("<GetCallerIdentityResult/>"));
    let run = |endpoint: &str| {
        to_run(
            sb.cmd()
                .args(["scan", "data", "--validate", "--format", "json", "--config"])
                .arg(&cfg)
                .env("AWS_ENDPOINT_URL_STS", endpoint)
                .env("AWS_REGION", "us-east-1")
                .env("XDG_STATE_HOME", sb.path("state"))
                .env_remove("AWS_ENDPOINT_URL")
                .output()
                .unwrap(),
        )
    };
    let r = run(&sts.endpoint);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = status_of(&r.json(), "data/creds");
    assert_eq!(v["status"], "unknown", "{v:#}");
    assert!(v["account"].is_null() && v["arn"].is_null(), "{v:#}");
    assert!(
        v["reason"].as_str().unwrap().contains("not taken as live"),
        "{v:#}"
    );
    assert!(!sb.path("ops/fired.json").exists(), "a live hook fired");
    // Not cached: the next run asks again.
    let asked = sts.count();
    assert!(asked >= 1);
    let r = run(&sts.endpoint);
    assert_eq!(status_of(&r.json(), "data/creds")["status"], "unknown");
    assert!(sts.count() > asked, "an unproven answer was cached");

    // An ARN of another account, or a malformed one, proves nothing either; nor does a
    // well-formed answer about an account that is not the key id's own (#10).
    for result in [
        "<Arn>arn:aws:iam::123456789012:user/leaky</Arn><UserId>AIDAEXAMPLEUSERID0001</UserId>\
         <Account>123456789012</Account>",
        "<Account>123456789012</Account><UserId>AIDAX</UserId>",
        "<Account>123456789012</Account><Arn>arn:aws:iam::210987654321:user/x</Arn>",
        "<Account>123456789012</Account><Arn>leaky</Arn>",
    ] {
        let body = caller_identity(&format!(
            "<GetCallerIdentityResult>{result}</GetCallerIdentityResult>"
        ));
        let sts = Stub::start("200 OK", body);
        let v = status_of(&run(&sts.endpoint).json(), "data/creds");
        assert_eq!(v["status"], "unknown", "{result}: {v:#}");
    }
    assert!(!sb.path("ops/fired.json").exists(), "a live hook fired");

    let body = caller_identity(
        "<GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/leaky</Arn>\
         <UserId>AIDAEXAMPLEUSERID0001</UserId><Account>123456789012</Account>\
         </GetCallerIdentityResult>",
    );
    let v = status_of(
        &run(&Stub::start("200 OK", body).endpoint).json(),
        "data/creds",
    );
    let why = format!("named account 123456789012, not the key id's own account {own}");
    assert!(v["reason"].as_str().unwrap().contains(&why), "{v:#}");
    assert!(!v.to_string().contains(&secret[..8]), "{v:#}");

    // The same stub with proof says live (so the stub is not why the others are unknown).
    let proven = caller_identity(&format!(
        "<GetCallerIdentityResult><Arn>arn:aws:iam::{own}:user/leaky</Arn>\
         <UserId>AIDAEXAMPLEUSERID0001</UserId><Account>{own}</Account>\
         </GetCallerIdentityResult>",
    ));
    let sts = Stub::start("200 OK", proven);
    let r = run(&sts.endpoint);
    let v = status_of(&r.json(), "data/creds");
    assert_eq!(v["status"], "live", "{v:#}");
    assert_eq!(v["account"], own);
    assert_eq!(v["arn"], format!("arn:aws:iam::{own}:user/leaky"));
    assert!(
        sb.path("ops/fired.json").exists(),
        "the live hook did not fire"
    );
}

/// Processes alive (not zombies) whose process group is `pgid`, or whose pid is `pid`.
fn alive(pgid: i32, pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its `)`.
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let group: i32 = f.get(2).and_then(|g| g.parse().ok()).unwrap_or(0);
        if f[0] != "Z" && (group == pgid || p == pid) {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_timed_out_hook_is_killed_with_what_it_started_and_nothing_holds_the_output() {
    let sb = Sandbox::new();
    sb.write(
        "data/a.env",
        format!("GITHUB_TOKEN={}\n", crate::util::fake_github(93)),
    );
    let cfg = hook_config(
        &sb,
        r#"
[[hooks]]
name = "leaves-a-daemon"
when = "any"
command = ["sh", "-c", "echo hook-says-hello; echo hook-warns >&2; sleep 300 & echo $! > daemon"]

[[hooks]]
name = "forks-and-hangs"
when = "any"
command = ["sh", "-c", "echo $$ > group; sleep 300 & echo $! > background; sleep 300"]
timeout = "500ms"
"#,
    );
    let ops = sb.path("ops");
    // Captured the way CI captures a job: wait_with_output waits for every holder of the
    // pipes, grandchildren included, to close them.
    let child = sb
        .cmd()
        .args(["scan", "data", "--format", "json", "--config", &cfg])
        .env("XDG_STATE_HOME", sb.path("state"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let out = rx.recv_timeout(Duration::from_secs(30));
    let elapsed = start.elapsed();
    let pid = |f: &str| -> i32 {
        std::fs::read_to_string(ops.join(f))
            .unwrap_or_default()
            .trim()
            .parse()
            .unwrap_or(-1)
    };
    let (group, background, daemon) = (pid("group"), pid("background"), pid("daemon"));
    let survivors = alive(group, background);
    // Whatever the outcome, end what the hooks left (the daemon is left running on purpose).
    for p in survivors.iter().chain([&daemon]).filter(|&&p| p > 0) {
        // SAFETY: kill(2) on pids the hooks wrote; it touches no memory.
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
    assert!(
        group > 0 && background > 0 && daemon > 0,
        "the hooks did not run"
    );
    assert!(
        survivors.is_empty(),
        "left running after the timeout: {survivors:?}"
    );
    let out = out
        .unwrap_or_else(|_| panic!("leakhound's output was held open for {elapsed:?}"))
        .unwrap();
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    let r = crate::util::to_run(out);
    let hooks = r.json()["findings"][0]["hooks"].clone();
    assert_eq!(hooks[0]["name"], "leaves-a-daemon");
    assert_eq!(hooks[0]["status"], "ok", "{hooks:#}");
    assert_eq!(hooks[1]["name"], "forks-and-hangs");
    assert_eq!(hooks[1]["status"], "timeout", "{hooks:#}");
    // What a hook prints still reaches leakhound's stderr, never the report on stdout.
    assert!(r.stderr.contains("hook-says-hello"), "{}", r.stderr);
    assert!(r.stderr.contains("hook-warns"), "{}", r.stderr);
    assert!(!r.stdout.contains("hook-says"));
}
