//! A temporary directory and a way to run leakhound in it.

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
        c.args(args).stdin(if stdin.is_some() {
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

/// What `tests/run.sh` would do about a missing tool, said once, up front.
const INSTALL_ALL: &str = "tests/run.sh installs everything the tests need";

/// Panic with one line naming `tool` and how to install it, unless it is on PATH.
pub fn require_tool(tool: &str, install: &str) {
    let found = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(dir.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    });
    if !found {
        panic!("missing tool `{tool}`: install it with `{install}` ({INSTALL_ALL})");
    }
}

/// Panic with one line naming what to install, unless python3 can import every module.
pub fn require_python_modules(modules: &[&str], install: &str) {
    require_tool("python3", "apt-get install python3");
    let out = Command::new("python3")
        .arg("-c")
        .arg(format!("import {}", modules.join(", ")))
        .output()
        .expect("python3 runs");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("").trim();
        panic!(
            "missing Python modules ({}): install them with `{install}` ({INSTALL_ALL}); python3 said: {last}",
            modules.join(", ")
        );
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
