//! `--validate` against moto's server (tests/moto_server.py) on 127.0.0.1 with authentication
//! enforced: every status from real STS calls.

use crate::util::{fake_aws, to_run, Run, Sandbox};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// moto on a free port; counts the requests it serves (from its request log).
struct Moto {
    child: Child,
    endpoint: String,
    requests: Arc<AtomicUsize>,
    creds: Value,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(addr: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {addr}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Moto {
    fn start() -> Moto {
        let port = free_port();
        let here = env!("CARGO_MANIFEST_DIR");
        let mut child = Command::new("python3")
            .arg(format!("{here}/tests/moto_server.py"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .env("INITIAL_NO_AUTH_ACTION_COUNT", "3")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 with moto[server] (.ci/run installs it)");
        // werkzeug logs one line per request on stderr.
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if line.contains("\"POST ") || line.contains("\"GET ") {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        let addr = format!("127.0.0.1:{port}");
        wait_for(&addr);
        let endpoint = format!("http://{addr}");
        let out = Command::new("python3")
            .arg(format!("{here}/tests/aws_fixture.py"))
            .arg(&endpoint)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let creds = serde_json::from_slice(&out.stdout).unwrap();
        Moto {
            child,
            endpoint,
            requests,
            creds,
        }
    }

    fn cred(&self, which: &str, i: usize) -> String {
        self.creds[which][i].as_str().unwrap().to_string()
    }

    /// Requests served so far, once the log has caught up.
    fn count(&self) -> usize {
        std::thread::sleep(Duration::from_millis(300));
        self.requests.load(Ordering::SeqCst)
    }
}

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
    sb.write("expired/creds", creds_file(&s(0), &s(1), Some(&s(2))));
    std::thread::sleep(Duration::from_secs(3));

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
fn network_failures_and_server_errors_are_unknown_never_invalid() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(74);
    sb.write("a/creds", creds_file(&id, &secret, None));
    // Nothing listens.
    let r = validate(&sb, &format!("http://127.0.0.1:{}", free_port()), &[]);
    let v = status_of(&r.json(), "a/creds");
    assert_eq!(v["status"], "unknown", "{v:#}");
    assert!(v["reason"].as_str().unwrap().contains("network"), "{v:#}");
    // A server that answers 500 to everything.
    let port = free_port();
    let mut server = Command::new("python3")
        .args([
            "-c",
            "import http.server,sys\n\
             class H(http.server.BaseHTTPRequestHandler):\n\
             \x20   def do_POST(self):\n\
             \x20       self.send_response(500); self.end_headers(); self.wfile.write(b'<html>down</html>')\n\
             \x20   def log_message(self, *a): pass\n\
             http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()",
            &port.to_string(),
        ])
        .spawn()
        .unwrap();
    wait_for(&format!("127.0.0.1:{port}"));
    let r = validate(&sb, &format!("http://127.0.0.1:{port}"), &[]);
    let _ = server.kill();
    let _ = server.wait();
    let v = status_of(&r.json(), "a/creds");
    assert_eq!(v["status"], "unknown", "{v:#}");
    assert!(v["reason"].as_str().unwrap().contains("500"), "{v:#}");
    // Without a secret nothing can be checked: skipped, and the account is still shown.
    std::fs::remove_dir_all(sb.path("a")).unwrap();
    sb.write("b/only-id", format!("aws_access_key_id = {id}\n"));
    let r = validate(&sb, "http://127.0.0.1:9", &[]);
    let doc = r.json();
    let f = &doc["findings"][0];
    assert_eq!(f["validation"]["status"], "skipped");
    assert_eq!(f["validation"]["reason"], "no pair");
    assert!(f["aws_account"].as_str().unwrap().len() == 12);
}
