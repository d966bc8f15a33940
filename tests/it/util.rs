//! A temporary directory and a way to run leakhound in it; the tools and servers tests need.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
    pub fn jsonl(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSONL line ({e}): {l}"))
            })
            .collect()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new(bin());
        c.current_dir(self.dir.path()).env_remove("NO_COLOR");
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_stdin(args, None)
    }

    pub fn run_stdin(&self, args: &[&str], stdin: Option<&[u8]>) -> Run {
        let mut c = self.cmd();
        c.args(args);
        run_with_stdin(c, stdin)
    }
}

/// Run `c` (a command set up with its own environment) with `stdin` written to it, or none.
pub fn run_with_stdin(mut c: Command, stdin: Option<&[u8]>) -> Run {
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    if let Some(input) = stdin {
        let mut s = child.stdin.take().unwrap();
        s.write_all(input).unwrap();
    }
    to_run(child.wait_with_output().unwrap())
}

/// What `out` (a child's stdout) writes, piece by piece as it arrives, on a channel that a
/// thread of its own fills until the stream ends.
pub fn arriving(
    mut out: impl std::io::Read + Send + 'static,
) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    rx
}

pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_leakhound"))
}

pub fn to_run(o: Output) -> Run {
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Fails when `out` holds any run of 5 or more characters of `secret`: the masking promise is
/// "no piece", not "not whole". A keyed hash a report prints (a 32-digit fingerprint, a
/// 12-digit key id) is random hex, and holds five digits of a secret now and then (a Slack
/// token's run of digits): such a run is passed over unless it is itself a piece of the
/// secret.
pub fn assert_no_piece(out: &str, secret: &str, what: &str) {
    let mut text = out.as_bytes().to_vec();
    let hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
    let mut at = 0;
    while at < text.len() {
        let len = text[at..].iter().take_while(|b| hex(b)).count();
        if len == 0 {
            at += 1;
            continue;
        }
        let run = &text[at..at + len];
        let glued = text.get(at + len).is_some_and(u8::is_ascii_alphanumeric)
            || (at > 0 && text[at - 1].is_ascii_alphanumeric());
        if !glued && matches!(len, 12 | 32) && !secret.contains(std::str::from_utf8(run).unwrap()) {
            text[at..at + len].fill(b'.');
        }
        at += len;
    }
    let text = String::from_utf8_lossy(&text);
    for w in secret.as_bytes().windows(5) {
        let piece = std::str::from_utf8(w).unwrap();
        assert!(
            !text.contains(piece),
            "{what}: a piece of a secret ({piece}) is in the output:\n{out}"
        );
    }
}

/// Fake credentials for tests, fresh per call.
pub fn fake_aws(seed: u64) -> (String, String) {
    let mut r = crate::synth::Rng::new(seed);
    (
        format!("AKIA{}", r.chars(crate::synth::BASE32, 16)),
        r.chars(crate::synth::B64, 40),
    )
}

pub fn fake_github(seed: u64) -> String {
    crate::synth::checksummed(&mut crate::synth::Rng::new(seed), "ghp_")
}

/// A port on 127.0.0.1 that refuses connections for as long as the returned socket lives:
/// bound, so no other process can take it, and never listening, so a connection to it is
/// refused at once. Neither a fixed port (something may listen there) nor a port bound and
/// let go (something may take it before the test connects).
pub fn refusing_port() -> (std::os::fd::OwnedFd, u16) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a socket this function owns; the fd is handed to an
    // OwnedFd at once, which closes it on drop.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let owned = std::os::fd::OwnedFd::from_raw_fd(fd);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let rc = libc::bind(fd, (&raw const addr).cast(), len);
        assert_eq!(rc, 0, "bind: {}", std::io::Error::last_os_error());
        let mut got = len;
        let rc = libc::getsockname(fd, (&raw mut addr).cast(), &mut got);
        assert_eq!(rc, 0, "getsockname: {}", std::io::Error::last_os_error());
        (owned, u16::from_be(addr.sin_port))
    }
}

/// One [`refusing_port`] for the whole test run, for tests that need "nothing answers there".
pub fn refused_port() -> u16 {
    static HELD: std::sync::OnceLock<(std::os::fd::OwnedFd, u16)> = std::sync::OnceLock::new();
    HELD.get_or_init(refusing_port).1
}

#[test]
fn a_refusing_port_refuses_and_stays_taken() {
    let (_held, port) = refusing_port();
    let e = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}");
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_err());
}

// ---- Tools the tests shell out to ----
//
// A test that needs a tool calls `require_tool` (or `require_moto`) before using it, so a
// machine without it fails with one line that names the tool and its install command, at the
// test's own line, not with a panic deep inside a helper.

/// Every tool a test runs that is not part of a base system, with its install command. The
/// pinned versions are read from tests/run.sh, which installs them all.
fn install_command(tool: &str) -> Option<String> {
    Some(match tool {
        "git" => "apt-get install git".into(),
        "openssl" => "apt-get install openssl".into(),
        "python3" => "apt-get install python3".into(),
        "skopeo" => "apt-get install skopeo".into(),
        "docker-registry" => "apt-get install docker-registry".into(),
        "htpasswd" => "apt-get install apache2-utils".into(),
        "initdb" => "apt-get install postgresql".into(),
        "pre-commit" => format!("pip install pre-commit=={}", pin("PRE_COMMIT")),
        "kubernetes-validate" => format!(
            "pip install kubernetes-validate=={}",
            pin("KUBERNETES_VALIDATE")
        ),
        "check-jsonschema" => format!("pip install check-jsonschema=={}", pin("CHECK_JSONSCHEMA")),
        _ => return None,
    })
}

/// A version pinned in tests/run.sh (`MOTO=5.2.5`): one place to change it.
pub fn pin(name: &str) -> &'static str {
    include_str!("../run.sh")
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("tests/run.sh pins no {name}"))
}

/// The one line a missing tool fails with. A Python tool or module may be installed after
/// all, in the project's venv (tests/run.sh makes it and puts it first on PATH): a plain
/// `cargo test` outside run.sh is told so.
pub fn missing_message(what: &str, install: &str) -> String {
    let mut line = format!(
        "missing {what}: install it with `{install}`, or everything the tests need with \
         `tests/run.sh --install-only`"
    );
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/venv/bin");
    if install.starts_with("pip ")
        && venv.is_dir()
        && std::env::var_os("LEAKHOUND_TEST_VENV").is_none()
    {
        line.push_str(&format!(
            " (its venv is {}: run the tests with tests/run.sh, or with that directory first on PATH)",
            venv.display()
        ));
    }
    line
}

/// Whether `tool` is an executable file in one of the directories of `path` (a PATH value).
fn found_in(tool: &str, path: &std::ffi::OsStr) -> bool {
    std::env::split_paths(path).any(|dir| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(dir.join(tool))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Whether `tool` is on PATH.
pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| found_in(tool, &p))
}

/// `Err` with the one line to fail with, unless `tool` is in `path`.
fn check_tool(tool: &str, path: &std::ffi::OsStr) -> Result<(), String> {
    let install = install_command(tool)
        .unwrap_or_else(|| panic!("require_tool({tool:?}): add its install command to util.rs"));
    if found_in(tool, path) {
        Ok(())
    } else {
        Err(missing_message(&format!("tool `{tool}`"), &install))
    }
}

/// Panic with one line naming `tool` and how to install it, unless it is on PATH.
#[track_caller]
pub fn require_tool(tool: &str) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if let Err(line) = check_tool(tool, &path) {
        panic!("{line}");
    }
}

/// Panic with one line naming what to install, unless python3 can import every module.
/// Returns what the last line of `print_after` printed (after the imports), if given.
#[track_caller]
pub fn require_python_modules(modules: &[&str], install: &str, print_after: &str) -> String {
    require_tool("python3");
    let out = Command::new("python3")
        .arg("-c")
        .arg(format!("import {}\n{print_after}", modules.join(", ")))
        .output()
        .unwrap_or_else(|e| panic!("python3 is on PATH but does not run: {e}"));
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("").trim().to_string();
        let what = format!("Python modules ({})", modules.join(", "));
        panic!("{}; python3 said: {last}", missing_message(&what, install));
    }
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// moto's server and boto3 (tests/moto_server.py, tests/aws_fixture.py), at the version
/// tests/run.sh pins: its error bodies shape what the validation tests see, so another
/// version is named up front, where a failure would otherwise be puzzling.
#[cfg(feature = "aws")]
#[track_caller]
pub fn require_moto() {
    let moto = pin("MOTO");
    let found = require_python_modules(
        &["moto", "moto.server", "flask", "flask_cors", "boto3"],
        &format!(
            "pip install 'moto[server]=={moto}' werkzeug=={}",
            pin("WERKZEUG")
        ),
        "print(moto.__version__)",
    );
    if found != moto {
        // Not fatal (a newer moto may well do), but the first thing to suspect if these
        // tests fail; shown with a failing test's output.
        eprintln!("note: moto {found} is installed; the tests are pinned to {moto} (tests/run.sh)");
    }
}

/// A server started by a test, which picks its own port and announces it in a line of its
/// output: no port is guessed and no wait is timed. The output is drained for as long as it
/// runs, its last lines kept for error messages. Killed on drop.
pub struct Server {
    pub child: std::process::Child,
    /// What `announce` took from the announcing line (an address or a port).
    pub announced: String,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Start `cmd` and wait for the line of its stdout or stderr from which `announce`
    /// takes something. If the server exits before that (a missing module, a bad config),
    /// panic at once with its status and what it printed.
    pub fn start(
        name: &str,
        mut cmd: Command,
        announce: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Server {
        use std::io::{BufRead, BufReader, Read};
        use std::sync::{mpsc, Arc, Mutex};
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let announce = Arc::new(announce);
        let (tx, rx) = mpsc::channel();
        let streams: [Box<dyn Read + Send>; 2] = [
            Box::new(child.stdout.take().unwrap()),
            Box::new(child.stderr.take().unwrap()),
        ];
        for stream in streams {
            let (tx, log, announce) = (tx.clone(), log.clone(), announce.clone());
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if let Some(found) = announce(&line) {
                        let _ = tx.send(found);
                    }
                    let mut log = log.lock().unwrap();
                    if log.len() >= 40 {
                        log.remove(0);
                    }
                    log.push(line);
                }
            });
        }
        drop(tx);
        // Generous: only a wedged server takes this long; one that exits is reported at once.
        match rx.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(announced) => Server {
                child,
                announced,
                log,
            },
            Err(e) => {
                let status = match e {
                    mpsc::RecvTimeoutError::Disconnected => child
                        .wait()
                        .map_or_else(|e| e.to_string(), |s| s.to_string()),
                    mpsc::RecvTimeoutError::Timeout => {
                        let _ = child.kill();
                        let _ = child.wait();
                        "no address announced within 60 s".into()
                    }
                };
                let said = log.lock().unwrap().join("\n");
                panic!("{name} did not start ({status}); it said:\n{said}");
            }
        }
    }

    /// Its last lines of output.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }
}

#[test]
fn a_missing_tool_is_named_in_one_line_with_its_install_command() {
    use std::ffi::OsStr;
    assert_eq!(
        check_tool("skopeo", OsStr::new("/nonexistent:/also-not-here")),
        Err(
            "missing tool `skopeo`: install it with `apt-get install skopeo`, or everything \
             the tests need with `tests/run.sh --install-only`"
                .to_string()
        )
    );
    let sh = Path::new("/bin/sh").parent().unwrap().as_os_str();
    assert!(found_in("sh", sh));
    // The pinned ones name the version tests/run.sh installs.
    let e = check_tool("pre-commit", OsStr::new("/nonexistent")).unwrap_err();
    assert!(
        e.contains(&format!("pip install pre-commit=={}", pin("PRE_COMMIT"))),
        "{e}"
    );
    assert!(
        pin("MOTO").split('.').all(|n| n.parse::<u32>().is_ok()),
        "{}",
        pin("MOTO")
    );
    // A tool the table does not know is a mistake in the test, said as such.
    let err = std::panic::catch_unwind(|| require_tool("skopeo-but-not-really"));
    let msg = panic_text(err.unwrap_err());
    assert!(msg.contains("add its install command"), "{msg}");
}

#[test]
fn a_missing_python_module_is_named_in_one_line() {
    if !on_path("python3") {
        return; // the line for python3 itself is require_tool's, tested above
    }
    let err = std::panic::catch_unwind(|| {
        require_python_modules(&["leakhound_test_no_such_module"], "pip install x", "")
    });
    let msg = panic_text(err.unwrap_err());
    assert!(
        msg.starts_with("missing Python modules (leakhound_test_no_such_module): install it with `pip install x`"),
        "{msg}"
    );
    assert!(msg.contains("tests/run.sh --install-only"), "{msg}");
    assert!(msg.contains("No module named"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn a_server_that_exits_before_listening_is_reported_at_once_with_what_it_said() {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "echo no config here >&2; exit 3"]);
    let start = std::time::Instant::now();
    let start_it = std::panic::AssertUnwindSafe(|| Server::start("a test server", cmd, |_| None));
    let msg = panic_text(std::panic::catch_unwind(start_it).map(|_| ()).unwrap_err());
    assert!(msg.contains("a test server did not start"), "{msg}");
    assert!(msg.contains("exit status: 3"), "{msg}");
    assert!(msg.contains("no config here"), "{msg}");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_server_announces_itself_and_its_output_is_kept() {
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "echo starting; echo listening on 127.0.0.1:4242; exec sleep 60",
    ]);
    let server = Server::start("a test server", cmd, |line| {
        line.strip_prefix("listening on ").map(String::from)
    });
    assert_eq!(server.announced, "127.0.0.1:4242");
    assert!(server.log().contains("starting"), "{}", server.log());
}

fn panic_text(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn under_tests_run_sh_python3_is_the_projects_venv_not_the_machines() {
    // tests/run.sh names its venv; a plain `cargo test` uses whatever python3 is on PATH.
    let Some(venv) = std::env::var_os("LEAKHOUND_TEST_VENV") else {
        return;
    };
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.prefix)"])
        .output()
        .unwrap();
    let prefix = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(
        std::fs::canonicalize(&prefix).unwrap(),
        std::fs::canonicalize(&venv).unwrap(),
        "python3 on PATH is not tests/run.sh's venv"
    );
}
