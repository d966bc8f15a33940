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
