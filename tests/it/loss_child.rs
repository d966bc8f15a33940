//! Running leakhound for the loss tests: a deadline, stdin fed from a thread, and memory
//! held by the kernel.

use crate::util::Sandbox;
use serde_json::Value;
use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

/// How a child ended and what it wrote.
pub(super) struct Ended {
    /// Exit code; `None` when killed by a signal or timed out.
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Ended {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// Run leakhound in `sb` with `args`, feeding stdin from `feed` (if any); killed after
/// `limit`. With `memory_mib`, the kernel holds it to that much memory (see [`limit_memory`]):
/// an allocation past it fails, the run aborts, and its exit code shows it.
pub(super) fn run_with(
    sb: &Sandbox,
    args: &[&str],
    feed: Option<Box<dyn FnOnce(std::process::ChildStdin) + Send>>,
    limit: Duration,
    memory_mib: Option<u64>,
) -> Ended {
    let mut c = sb.cmd();
    c.args(args)
        .stdin(if feed.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(mib) = memory_mib {
        limit_memory(&mut c, mib);
    }
    let mut child = c.spawn().unwrap();
    let feeder = feed.map(|f| {
        let stdin = child.stdin.take().unwrap();
        std::thread::spawn(move || f(stdin))
    });
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let outs = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let errs = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    // The child is waited for on a thread of its own, so the deadline is a channel's timeout
    // rather than a polling loop.
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let mut timed_out = false;
    let status = match rx.recv_timeout(limit) {
        Ok(st) => st,
        Err(_) => {
            timed_out = true;
            // SAFETY: kill with the pid of our own child, still running a moment ago (its
            // waiter had sent no status).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            rx.recv().unwrap()
        }
    }
    .unwrap();
    waiter.join().unwrap();
    if let Some(f) = feeder {
        let _ = f.join();
    }
    Ended {
        code: status.code().filter(|_| !timed_out),
        timed_out,
        stdout: String::from_utf8_lossy(&outs.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&errs.join().unwrap()).into_owned(),
    }
}

/// Hold the child to `mib` MiB of memory, enforced by the kernel from its first instruction:
/// `RLIMIT_DATA`, set between fork and exec. It counts what a process can write to (heap,
/// anonymous maps, thread stacks) and not address space it only reserves, so unlike
/// `RLIMIT_AS` it does not grow with the 64 MiB that glibc reserves per malloc arena (per
/// thread): the memory tests also pin `-j 2`, so the limit does not depend on the machine's
/// core count. Sampling the peak instead would miss a spike between two samples.
pub(super) fn limit_memory(c: &mut std::process::Command, mib: u64) {
    use std::os::unix::process::CommandExt;
    let bytes = mib << 20;
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Assert that `r` exited with `code`, naming the memory limit when the run died of it.
#[track_caller]
pub(super) fn assert_exit(r: &Ended, code: i32, mib: u64) {
    assert!(
        !r.stderr.contains("memory allocation of"),
        "over the {mib} MiB memory limit: {}",
        r.stderr
    );
    assert_eq!(r.code, Some(code), "{}", r.stderr);
}

pub(super) fn run(sb: &Sandbox, args: &[&str]) -> Ended {
    run_with(sb, args, None, Duration::from_secs(120), None)
}

/// `run` held to `mib` MiB of memory.
pub(super) fn run_in(sb: &Sandbox, args: &[&str], mib: u64) -> Ended {
    run_with(sb, args, None, Duration::from_secs(120), Some(mib))
}
