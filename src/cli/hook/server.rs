//! The hook server (`hook --server`): a process per user and set of flags that keeps the rules
//! loaded, so that an event costs a process start and a round trip on a socket rather than
//! loading some 900 rules and compiling the regexes of those its output hits.
//!
//! Whom it trusts: the socket is in a folder only this user can enter (`$XDG_RUNTIME_DIR/
//! leakhound`, else `leakhound-UID` in the temporary folder; made 0700, and refused unless it
//! is this user's, not a symlink and closed to others), and the server answers only a peer of
//! its own uid. What it answers: the socket's name is a hash ([`key`]) of everything an
//! answer depends on (the binary, the flags, the working directory, the variables a hook
//! reads, and the config files' identities and times), and the server is started with exactly
//! those, so a change to any of them is a new server and the old one idles out. Its answer is
//! made by the same [`answer`] as one process per event.

use super::{answer, Engines, Reply};
use crate::cli::settings::HookSettings;
use crate::engine::Engine;
use anyhow::{Context as _, Result};
use std::ffi::OsString;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

const ASK: &[u8; 4] = b"LHQ1";
const REPLY: &[u8; 4] = b"LHA1";
/// A reply's status byte: answered, or the server is not the one for this key.
const ANSWERED: u8 = 0;
const OTHER_KEY: u8 = 1;
/// How long `--server=wait` waits for a server it started.
const WAIT: Duration = Duration::from_secs(5);
/// How long the server lets a read or write stall; how long a client waits for an answer
/// (a large output takes a while to scan; the agents' own hook timeouts are about a minute).
const SERVER_IO: Duration = Duration::from_secs(30);
const CLIENT_IO: Duration = Duration::from_secs(60);

/// The variables a hook reads (the agents' homes, where the config, state and socket live,
/// the fingerprint key), and those its children may need: all a server is started with, and
/// part of its key. Anything else in the agent's environment stays out of the server.
const ENV: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "COPILOT_HOME",
    "LEAKHOUND_FINGERPRINT_KEY",
    "TMPDIR",
    "PATH",
    "LANG",
    "LC_ALL",
];

/// Why [`ask`] brings no answer.
pub enum Unanswered {
    /// No server was listening; one is starting (answer in this process meanwhile).
    Starting,
    /// Something is wrong with the set-up, said in a warning.
    Failed(String),
}

/// The answer of the server for this process's flags, starting one when none listens. With
/// `wait`, waits for the one it started.
pub fn ask(a: &HookSettings, input: &[u8], wait: bool) -> Result<Reply, Unanswered> {
    let dir = socket_dir().map_err(Unanswered::Failed)?;
    let key = key(a);
    let socket = dir.join(format!("hook-{}.sock", crate::model::hex(&key)));
    let failed = |why: String| Unanswered::Failed(format!("{}: {why}", socket.display()));
    match exchange(&socket, &key, input) {
        Ok(reply) => return Ok(reply),
        Err(Exchange::NotListening) => {}
        Err(Exchange::Broken(why)) => return Err(failed(why)),
    }
    start(&socket).map_err(|e| failed(format!("starting the server: {e}")))?;
    if !wait {
        return Err(Unanswered::Starting);
    }
    let deadline = Instant::now() + WAIT;
    loop {
        std::thread::sleep(Duration::from_millis(10));
        match exchange(&socket, &key, input) {
            Ok(reply) => return Ok(reply),
            Err(Exchange::NotListening) if Instant::now() < deadline => {}
            Err(Exchange::NotListening) => {
                return Err(failed(format!(
                    "no server answered within {} s",
                    WAIT.as_secs()
                )))
            }
            Err(Exchange::Broken(why)) => return Err(failed(why)),
        }
    }
}

enum Exchange {
    /// No server there (or one that closed as it ended): start one.
    NotListening,
    Broken(String),
}

/// One event sent, its reply read.
fn exchange(socket: &Path, key: &[u8; 16], input: &[u8]) -> Result<Reply, Exchange> {
    let stream = match UnixStream::connect(socket) {
        Ok(s) => s,
        Err(e) if is_absent(&e) => return Err(Exchange::NotListening),
        Err(e) => return Err(Exchange::Broken(format!("connecting: {e}"))),
    };
    let broken = |e: std::io::Error| Exchange::Broken(format!("asking: {e}"));
    stream.set_read_timeout(Some(CLIENT_IO)).map_err(broken)?;
    stream.set_write_timeout(Some(CLIENT_IO)).map_err(broken)?;
    let mut w = BufWriter::new(&stream);
    let sent = (|| {
        w.write_all(ASK)?;
        w.write_all(key)?;
        write_bytes(&mut w, input)?;
        w.flush()
    })();
    drop(w);
    let mut r = BufReader::new(&stream);
    let mut head = [0u8; 5];
    match r.read_exact(&mut head) {
        Ok(()) => {}
        // Closed before a word: a server ending as this connected.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Err(Exchange::NotListening)
        }
        Err(e) => return Err(broken(sent.err().unwrap_or(e))),
    }
    if &head[..4] != REPLY {
        return Err(Exchange::Broken("not a leakhound hook server".into()));
    }
    if head[4] == OTHER_KEY {
        return Err(Exchange::Broken(
            "the server there answers for other flags".into(),
        ));
    }
    let stdout = read_bytes(&mut r).map_err(broken)?;
    let stderr = read_bytes(&mut r).map_err(broken)?;
    Ok(Reply { stdout, stderr })
}

fn is_absent(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), NotFound | ConnectionRefused)
}

fn write_bytes(w: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    w.write_all(&(bytes.len() as u64).to_le_bytes())?;
    w.write_all(bytes)
}

/// Bytes written by [`write_bytes`]. Read as they come rather than into a buffer of the
/// announced length, so a length that lies costs no more than the bytes sent.
fn read_bytes(r: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 8];
    r.read_exact(&mut len)?;
    let len = u64::from_le_bytes(len);
    let mut out = Vec::new();
    r.take(len).read_to_end(&mut out)?;
    if out.len() as u64 != len {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(out)
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The folder the sockets are in, made if need be; an error if it is not this user's alone.
fn socket_dir() -> Result<PathBuf, String> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|d| d.is_dir());
    let dir = match runtime {
        Some(d) => d.join("leakhound"),
        None => std::env::temp_dir().join(format!("leakhound-{}", euid())),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    }
    private_dir(&dir)?;
    Ok(dir)
}

/// Whether `dir` is a folder (not a symlink) of this user's that no one else may enter.
fn private_dir(dir: &Path) -> Result<(), String> {
    let m = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !m.is_dir() || m.uid() != euid() || m.mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a folder of this user's alone (mode 0700)",
            dir.display()
        ));
    }
    Ok(())
}

/// Everything an answer depends on, hashed: see the module's comment. The `--server` flag is
/// left out, so that `--server` and `--server=wait` share a server, and so is the server's
/// own `--serve-at`.
fn key(a: &HookSettings) -> [u8; 16] {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut put = |b: &[u8]| {
        h.update(&(b.len() as u64).to_le_bytes());
        h.update(b);
    };
    let exe = std::env::current_exe().unwrap_or_default();
    put(exe.as_os_str().as_encoded_bytes());
    put(&identity(&exe));
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_encoded_bytes() {
            b"--serve-at" => {
                args.next();
            }
            a if a == b"--server" || a.starts_with(b"--server=") => {}
            a => put(a),
        }
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    put(cwd.as_os_str().as_encoded_bytes());
    for k in ENV {
        put(k.as_bytes());
        match std::env::var_os(k) {
            Some(v) => put(v.as_encoded_bytes()),
            None => put(b"\xff"),
        }
    }
    let mut files = crate::cli::setup::masker_config_paths();
    files.push(cwd.join("leakhound.toml"));
    files.extend(a.rules.sources.config.iter().cloned());
    files.extend(a.rules.sources.rule_files.iter().cloned());
    files.extend(crate::policy::state_dir().map(|d| d.join("fingerprint.key")));
    for f in files {
        put(f.as_os_str().as_encoded_bytes());
        put(&identity(&f));
    }
    h.digest128().to_le_bytes()
}

/// A file's identity and times (empty when it does not exist): a file edited, replaced or
/// made unreadable since the server started changes the key.
fn identity(path: &Path) -> Vec<u8> {
    let Ok(m) = std::fs::metadata(path) else {
        return Vec::new();
    };
    [
        m.dev(),
        m.ino(),
        m.size(),
        m.mode().into(),
        m.mtime() as u64,
        m.mtime_nsec() as u64,
        m.ctime() as u64,
        m.ctime_nsec() as u64,
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect()
}

/// Starts the server for this process's flags at `socket`, in a session of its own, with
/// only the [`ENV`] variables; not waited for.
fn start(socket: &Path) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    let env: Vec<(&str, OsString)> = ENV
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (*k, v)))
        .collect();
    let mut cmd = std::process::Command::new(exe);
    cmd.args(std::env::args_os().skip(1))
        .arg("--serve-at")
        .arg(socket)
        .env_clear()
        .envs(env)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: setsid is async-signal-safe; it detaches the server from the agent's terminal
    // and process group, so it outlives the hook that started it.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn().map(drop)
}

/// The engine built before the first event, with what building it said on stderr: said
/// again with every answer, as one process per event says it.
struct Built {
    engine: Result<Engine>,
    said: Vec<u8>,
}

impl Engines for Built {
    fn engine(&self, err: &mut Vec<u8>) -> Result<&Engine, &anyhow::Error> {
        err.extend_from_slice(&self.said);
        self.engine.as_ref()
    }
}

/// What `f` writes to stderr (file descriptor 2) while it runs, and its result.
fn capturing_stderr<T>(f: impl FnOnce() -> T) -> std::io::Result<(T, Vec<u8>)> {
    let (mut reader, writer) = std::io::pipe()?;
    // SAFETY: dup and dup2 on descriptors this process owns; 2 is put back before returning.
    let saved = unsafe { libc::dup(2) };
    if saved < 0 {
        return Err(std::io::Error::last_os_error());
    }
    unsafe { libc::dup2(writer.as_raw_fd(), 2) };
    drop(writer);
    let drain = std::thread::spawn(move || {
        let mut said = Vec::new();
        let _ = reader.read_to_end(&mut said);
        said
    });
    let out = f();
    // Closing the pipe's last writer ends the drain.
    unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
    }
    Ok((out, drain.join().unwrap_or_default()))
}

/// Seconds since the server started at which the last event ended, and events in progress:
/// the idle watch reads them.
static LAST: AtomicU64 = AtomicU64::new(0);
static BUSY: AtomicUsize = AtomicUsize::new(0);

/// Runs the hook server at `socket` until it has been `idle` with no event, or its socket is
/// gone or replaced. Another server holding the socket's lock is left to answer.
pub fn serve(a: &HookSettings, socket: &Path, idle: Duration) -> Result<i32> {
    let dir = socket.parent().context("the socket has no folder")?;
    private_dir(dir).map_err(anyhow::Error::msg)?;
    let lock_path = socket.with_extension("lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock_path)
        .with_context(|| format!("{}", lock_path.display()))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(super::EXIT_CLEAN),
        Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
    }
    lock.set_len(0)?;
    let tally = Tally {
        lock: std::sync::Mutex::new((lock, 0)),
    };
    tally.add(0)?;
    // The key as the client that started this server saw it: building the engine may make
    // a file it names (the fingerprint key, on first use), and later clients then ask
    // another server.
    let key = key(a);
    let (engine, said) = capturing_stderr(|| a.rules.engine().context("building the rule engine"))?;
    let built = Built { engine, said };
    // Bound only now: an event that comes while the rules load is answered by its own
    // process, not kept waiting.
    match std::fs::remove_file(socket) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.into()),
    }
    let listener = UnixListener::bind(socket).with_context(|| format!("{}", socket.display()))?;
    std::fs::set_permissions(socket, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    let bound = std::fs::symlink_metadata(socket)?.ino();
    let started = Instant::now();
    let now = move || started.elapsed().as_secs();
    std::thread::scope(|s| {
        s.spawn(|| watch(socket, bound, idle, now));
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            BUSY.fetch_add(1, SeqCst);
            let (built, key, tally) = (&built, &key, &tally);
            s.spawn(move || {
                // A connection that fails mid-way fails alone; its client answers the event
                // in its own process.
                let _ = handle(&stream, a, key, built, tally);
                LAST.store(now(), SeqCst);
                BUSY.fetch_sub(1, SeqCst);
            });
        }
    });
    Ok(super::EXIT_CLEAN)
}

/// Ends the server when it has been idle for `idle`, or its socket is no longer the one it
/// bound (removed, or another server's).
fn watch(socket: &Path, bound: u64, idle: Duration, now: impl Fn() -> u64) {
    loop {
        std::thread::sleep(Duration::from_millis(500).min(idle.max(Duration::from_millis(50))));
        let ours = std::fs::symlink_metadata(socket).is_ok_and(|m| m.ino() == bound);
        if !ours {
            std::process::exit(0);
        }
        if BUSY.load(SeqCst) == 0 && now().saturating_sub(LAST.load(SeqCst)) >= idle.as_secs() {
            // The lock file too. A server starting meanwhile that had opened it finds it
            // held and ends, or takes it once this one ends and serves on with its lock file
            // out of sight: rare, and it changes nothing of an answer.
            let _ = std::fs::remove_file(socket);
            let _ = std::fs::remove_file(socket.with_extension("lock"));
            std::process::exit(0);
        }
    }
}

/// The lock file, which says the server's process (for whoever wants to stop it) and how
/// many events it has answered (to tell whether the hooks reach it): `PID EVENTS`.
struct Tally {
    lock: std::sync::Mutex<(std::fs::File, u64)>,
}

impl Tally {
    fn add(&self, events: u64) -> std::io::Result<()> {
        let mut held = crate::sync::lock(&self.lock);
        held.1 += events;
        // The line only grows: written over in place, nothing of the last one is left.
        let line = format!("{} {}\n", std::process::id(), held.1);
        std::os::unix::fs::FileExt::write_all_at(&held.0, line.as_bytes(), 0)
    }
}

/// Answers one connection's event.
fn handle(
    stream: &UnixStream,
    a: &HookSettings,
    key: &[u8; 16],
    built: &Built,
    tally: &Tally,
) -> Result<()> {
    stream.set_read_timeout(Some(SERVER_IO))?;
    stream.set_write_timeout(Some(SERVER_IO))?;
    if peer_uid(stream) != Some(euid()) {
        return Ok(());
    }
    let mut r = BufReader::new(stream);
    let mut head = [0u8; 20];
    r.read_exact(&mut head)?;
    if &head[..4] != ASK {
        anyhow::bail!("not a hook event");
    }
    let mut w = BufWriter::new(stream);
    if head[4..] != key[..] {
        w.write_all(REPLY)?;
        w.write_all(&[OTHER_KEY])?;
        return Ok(w.flush()?);
    }
    let input = read_bytes(&mut r)?;
    let reply = answer(a, Ok(input), built);
    // Counted before it is sent: whoever reads the count after the client is done sees it.
    tally.add(1)?;
    w.write_all(REPLY)?;
    w.write_all(&[ANSWERED])?;
    write_bytes(&mut w, &reply.stdout)?;
    write_bytes(&mut w, &reply.stderr)?;
    Ok(w.flush()?)
}

/// The uid of the process at the other end.
#[cfg(target_os = "linux")]
fn peer_uid(stream: &UnixStream) -> Option<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: u32::MAX,
        gid: u32::MAX,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: SO_PEERCRED fills a ucred of the length given.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(cred.uid)
}

/// Elsewhere the socket's folder (0700, this user's) is the check.
#[cfg(not(target_os = "linux"))]
fn peer_uid(_: &UnixStream) -> Option<u32> {
    Some(euid())
}
