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

/// Mask `input` into `output` until end of input, learning the secret values it meets and
/// masking every value in it. A partial line is forwarded after `idle` without new input.
/// Returns quietly when `output` is closed.
pub fn pump(
    engine: &Engine,
    name: &str,
    mut input: impl Read + Send,
    output: &mut dyn Write,
    idle: Duration,
    sink: &dyn Sink,
) -> io::Result<()> {
    let mut masker = Masker::new(engine, name);
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
    let streams = [
        Stream::new(
            Masker::sharing(engine, "stdout", known.clone()),
            out.into(),
            Box::new(io::stdout()),
        ),
        Stream::new(
            Masker::sharing(engine, "stderr", known),
            err.into(),
            Box::new(io::stderr()),
        ),
    ];
    let result = pump_child(streams, idle, sink);
    let status = child.wait();
    CHILD.store(0, Ordering::SeqCst);
    result?;
    status
}

/// One of a child's output streams: its pipe, its masker and where it goes.
struct Stream<'e> {
    masker: Masker<'e>,
    /// Non-blocking once [`pump_child`] starts; `None` once it ended or its destination
    /// closed.
    pipe: Option<std::fs::File>,
    output: Box<dyn Write>,
    /// An idle flush depends only on what is held: after one, wait for new input.
    idle_done: bool,
}

impl<'e> Stream<'e> {
    fn new(masker: Masker<'e>, pipe: std::os::fd::OwnedFd, output: Box<dyn Write>) -> Self {
        Stream {
            masker,
            pipe: Some(pipe.into()),
            output,
            idle_done: false,
        }
    }
}

/// Mask a child's streams into ours from one thread, so that what the child wrote on one
/// stream before it wrote on the other is learned before the other's text is forwarded:
/// `KEY=…` finished on stderr, then the value bare on stdout, is masked on stdout too. The
/// child's write to the first pipe was whole before its write to the second began, so once
/// a read of every pipe finds nothing after the last bytes read, everything written before
/// them is in hand; when more than one stream brought text, each stream's values are
/// learned before any is forwarded. Two threads, each reading and masking its own pipe,
/// raced there: stdout went out before stderr's masker had read its line.
fn pump_child(mut streams: [Stream<'_>; 2], idle: Duration, sink: &dyn Sink) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    for s in &streams {
        let fd = s.pipe.as_ref().map_or(-1, |p| p.as_raw_fd());
        // SAFETY: F_GETFL/F_SETFL on a pipe this function owns.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
    let mut buf = vec![0u8; 64 << 10];
    while streams.iter().any(|s| s.pipe.is_some()) {
        let waiting = streams
            .iter()
            .any(|s| s.pipe.is_some() && s.masker.has_pending() && !s.idle_done);
        let timeout = if waiting {
            i32::try_from(idle.as_millis()).unwrap_or(i32::MAX)
        } else {
            -1
        };
        let mut fds: Vec<libc::pollfd> = streams
            .iter()
            .map(|s| libc::pollfd {
                fd: s.pipe.as_ref().map_or(-1, |p| p.as_raw_fd()),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `fds` is a valid array of pollfd for its length; a negative fd is ignored.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            for s in streams
                .iter_mut()
                .filter(|s| s.masker.has_pending() && !s.idle_done)
            {
                let out = s.masker.idle();
                s.idle_done = true;
                send(s, out, sink)?;
            }
            continue;
        }
        // Read every pipe until a round finds nothing new (or a bound, for a child that
        // writes without pause): what was written before any byte in hand is in hand.
        let mut got: [Vec<u8>; 2] = Default::default();
        let mut ended = [false; 2];
        for _ in 0..64 {
            let mut any = false;
            for (i, s) in streams.iter().enumerate() {
                let Some(pipe) = &s.pipe else { continue };
                if ended[i] {
                    continue;
                }
                match read_some(pipe, &mut buf) {
                    Ok(Some(0)) => ended[i] = true,
                    Ok(Some(k)) => {
                        got[i].extend_from_slice(&buf[..k]);
                        any = true;
                    }
                    Ok(None) => {}
                    Err(e) => return Err(e),
                }
            }
            if !any {
                break;
            }
        }
        // What the other stream holds, a line not yet ended (`KEY=value` with no newline),
        // is learned before this one forwards: the value may be printed bare here meanwhile.
        let active = streams
            .iter()
            .zip(&got)
            .filter(|(s, g)| !g.is_empty() || s.masker.has_pending())
            .count();
        if active > 1 {
            for (s, g) in streams.iter().zip(&got) {
                s.masker.learn_ahead(g);
            }
        }
        for (i, s) in streams.iter_mut().enumerate() {
            if !got[i].is_empty() {
                s.idle_done = false;
                let out = s.masker.push(&got[i]);
                send(s, out, sink)?;
            }
            if ended[i] && s.pipe.is_some() {
                let out = s.masker.finish();
                send(s, out, sink)?;
                s.pipe = None;
            }
        }
    }
    Ok(())
}

/// Write a masker's output to its stream's destination. A destination that was closed (a
/// pager quit) closes the pipe: the child learns it as it would without us, and the other
/// stream goes on.
fn send(s: &mut Stream<'_>, out: (Vec<u8>, Vec<Finding>), sink: &dyn Sink) -> io::Result<()> {
    match emit(&mut s.output, out, sink) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            s.pipe = None;
            Ok(())
        }
        r => r,
    }
}

/// One non-blocking read: `None` when nothing is there yet, `Some(0)` at the end.
fn read_some(mut pipe: &std::fs::File, buf: &mut [u8]) -> io::Result<Option<usize>> {
    loop {
        match pipe.read(buf) {
            Ok(n) => return Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        }
    }
}
