//! Driving a [`Masker`] over real streams: `leakhound filter` (stdin to stdout) and
//! `leakhound run` (a child's stdout and stderr, each through its own masker, the two
//! sharing the values they learn).
//!
//! Fail closed by construction: output is only ever written from what a masker returned, so
//! if scanning fails (a read error, a panic) the held bytes are never forwarded unmasked.

use super::Masker;
use crate::engine::Engine;
use crate::model::Finding;
use crate::model::Known;
use std::io::{self, Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// Where findings go as they are masked (a report file, notices on stderr).
pub trait Sink: Sync {
    fn finding(&self, f: &Finding);
}

/// Mask `input` into `output` until end of input, learning the secret values it meets into
/// `known` and masking every value in it. A partial line is forwarded after `idle` without
/// new input. Returns quietly when `output` is closed.
pub fn pump(
    engine: &Engine,
    name: &str,
    known: Arc<Mutex<Known>>,
    mut input: impl Read + Send,
    output: &mut dyn Write,
    idle: Duration,
    sink: &dyn Sink,
) -> io::Result<()> {
    let mut masker = Masker::sharing(engine, name, known);
    let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(4);
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match input.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if tx.send(Ok(buf[..n].to_vec())).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        break;
                    }
                }
            }
        });
        let result = (|| -> io::Result<()> {
            // An idle flush depends only on what is held: after one, wait for new input.
            let mut idle_done = false;
            loop {
                let next = if masker.has_pending() && !idle_done {
                    match rx.recv_timeout(idle) {
                        Ok(v) => Some(v),
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            emit(output, masker.idle(), sink)?;
                            idle_done = true;
                            continue;
                        }
                        Err(mpsc::RecvTimeoutError::Disconnected) => None,
                    }
                } else {
                    rx.recv().ok()
                };
                match next {
                    Some(chunk) => {
                        idle_done = false;
                        emit(output, masker.push(&chunk?), sink)?
                    }
                    None => return emit(output, masker.finish(), sink),
                }
            }
        })();
        // Unblock the reader if we stopped early (closed output): it ends at its next send.
        drop(rx);
        match result {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            r => r,
        }
    })
}

fn emit(
    out: &mut dyn Write,
    (bytes, findings): (Vec<u8>, Vec<Finding>),
    sink: &dyn Sink,
) -> io::Result<()> {
    for f in &findings {
        sink.finding(f);
    }
    if !bytes.is_empty() {
        out.write_all(&bytes)?;
        out.flush()?;
    }
    Ok(())
}

/// The running child, for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Signals the terminal sends reach the child's process group directly; forward only the
    // ones sent to us alone (kill(1), a supervisor), so the child never gets one twice.
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 && code <= 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Forward SIGINT, SIGTERM and SIGHUP sent to us alone to the child [`set_child`] names.
pub(super) fn install_forwarding() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a valid handler and SA_SIGINFO is well-formed; the
        // handler only reads an atomic and calls kill.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The child signals are forwarded to (0: none).
pub(super) fn set_child(pid: u32) {
    CHILD.store(i32::try_from(pid).unwrap_or(0), Ordering::SeqCst);
}

/// Run `cmd` with its stdout and stderr masked into ours; returns the child's exit status.
pub fn run(
    engine: &Engine,
    cmd: &[String],
    idle: Duration,
    sink: &dyn Sink,
) -> io::Result<ExitStatus> {
    let (prog, args) = cmd
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    install_forwarding();
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    // One child's two streams share what they learn: a secret it printed named on stdout is
    // masked where it prints it bare on stderr, and the other way round.
    let known: Arc<Mutex<Known>> = Arc::default();
    let results = std::thread::scope(|s| {
        let k = known.clone();
        let o = s.spawn(|| pump(engine, "stdout", k, out, &mut io::stdout(), idle, sink));
        let e = s.spawn(|| pump(engine, "stderr", known, err, &mut io::stderr(), idle, sink));
        (o.join(), e.join())
    });
    let status = child.wait();
    CHILD.store(0, Ordering::SeqCst);
    for r in [results.0, results.1] {
        match r {
            Ok(r) => r?,
            Err(_) => {
                return Err(io::Error::other(
                    "the filter thread failed; output withheld",
                ))
            }
        }
    }
    status
}
