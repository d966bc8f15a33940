//! Files and directories: a parallel walk (the `ignore` crate) that honours ignore files,
//! includes hidden files, never follows symlinks, and reads each regular file.
//!
//! Nothing is dropped without a word: files too large or unreadable are named; entries that
//! ignore files exclude are counted; well-known secret files (`.env`,
//! `*.pem`, `credentials`, ...) are read even when ignored (unless told otherwise). A file
//! found by the walk is opened without blocking and checked after opening, so a FIFO or
//! device swapped in after the listing is refused, never read; one named on the command line
//! is read with a time bound.

use super::{Blob, Provenance};
use crate::model::Shard;
use ignore::{WalkBuilder, WalkState};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Files larger than this are not held in memory: they are read and scanned in chunks.
pub const STREAM_AT: u64 = 64 << 20;
/// What is read of a file already larger than [`STREAM_AT`] before it goes on as a stream:
/// enough for the scanner's admission, which judges a file by its first 8 KiB.
const STREAM_HEAD: u64 = 64 << 10;
/// A pipe named on the command line: how long to wait for its next bytes.
pub const PIPE_IDLE: Duration = Duration::from_secs(10);

/// How to walk.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    pub paths: Vec<PathBuf>,
    /// Honour .gitignore, .ignore and git excludes.
    pub ignore_files: bool,
    /// Scan files that look binary (a NUL byte near the start); the scanner's admission
    /// reads it, as it does for every source.
    pub binary: bool,
    /// Skip files larger than this; `None` for no limit.
    pub max_file_size: Option<u64>,
    pub threads: usize,
    /// Read well-known secret files (`.env`, `*.pem`, ...) even when an ignore file lists
    /// them: in a runtime, ignored `.env` files are exactly where secrets are.
    pub ignored_secret_files: bool,
    /// Read only the files this shard owns (by path as reported); every shard walks the
    /// whole tree, which costs listings, not reads.
    pub shard: Shard,
}

impl WalkOptions {
    /// Whether this shard reads `path`; a whole run spends nothing on asking.
    fn owns(&self, path: &Path) -> bool {
        self.shard.is_whole() || self.shard.owns(&display_path(path))
    }
}

/// What the walk met.
pub enum Event {
    Blob(Blob),
    /// A file too large to hold, or a pipe named on the command line: scanned as it is read.
    Stream(Stream),
    /// A file over the size limit, not read: its size.
    TooLarge {
        path: PathBuf,
        size: u64,
    },
    /// Entries (files or whole directories) that ignore files excluded.
    Ignored(u64),
    /// An input that could not be read; the walk goes on. `named`: given on the command
    /// line (then the run fails).
    Error {
        path: PathBuf,
        message: String,
        named: bool,
    },
}

/// An input read as it is scanned.
pub struct Stream {
    pub provenance: Provenance,
    /// Bytes already read from its start.
    pub head: Vec<u8>,
    pub rest: Reader,
    /// Its size when it was opened (a regular file); it may shrink while read.
    pub size: Option<u64>,
}

/// Where the rest of a stream comes from.
pub enum Reader {
    File(File),
    Pipe(Bounded),
}

impl Reader {
    /// The file or pipe itself, to read from. Not a `Read` of its own: a reader with only
    /// `read` has every buffer it reads into zeroed first (`Read::read_buf`'s default), the
    /// whole of each file read and of each large file's chunks; a `File` reads into a
    /// buffer's spare capacity as it is.
    pub fn as_read(&mut self) -> &mut dyn Read {
        match self {
            Reader::File(f) => f,
            Reader::Pipe(p) => p,
        }
    }
}

/// A pipe read with a time bound: waiting longer than `idle` for the next bytes (or for a
/// writer to appear) is an error, never a hang.
pub struct Bounded {
    file: File,
    idle: Duration,
}

impl Bounded {
    pub fn new(file: File, idle: Duration) -> Bounded {
        Bounded { file, idle }
    }
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::fd::AsRawFd;
        loop {
            // Poll first: a FIFO opened without blocking reads as empty until a writer comes.
            let mut p = libc::pollfd {
                fd: self.file.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = self.idle.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd, for the duration of the call.
            let r = unsafe { libc::poll(&mut p, 1, ms) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "a pipe: no data for {} s; reading stopped",
                        self.idle.as_secs()
                    ),
                ));
            }
            match (&self.file).read(buf) {
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) =>
                {
                    continue
                }
                r => return r,
            }
        }
    }
}

/// Walk every path, calling `visit` from the walker's threads.
pub fn walk(opts: &WalkOptions, visit: &(dyn Fn(Event) + Sync)) {
    let Some((first, rest)) = opts.paths.split_first() else {
        return;
    };
    let mut b = WalkBuilder::new(first);
    for p in rest {
        b.add(p);
    }
    let secrets = opts.ignore_files && opts.ignored_secret_files;
    b.hidden(false)
        .ignore(opts.ignore_files)
        .git_ignore(opts.ignore_files)
        .git_global(opts.ignore_files)
        .git_exclude(opts.ignore_files)
        .parents(opts.ignore_files)
        .require_git(false)
        .follow_links(false)
        .threads(opts.threads)
        .filter_entry(move |e| {
            if e.depth() == 0 {
                return true;
            }
            // The object database is compressed and has its own scanner (`leakhound git`).
            if e.file_name() == ".git" {
                return false;
            }
            // Secret files are read from their directory's listing, ignored or not.
            !(secrets && e.file_type().is_some_and(|t| t.is_file()) && is_secret_file(e.path()))
        });
    // Children of every directory walked, against those the walker handed over: the
    // difference is what ignore files excluded.
    let listed = AtomicU64::new(0);
    let yielded = AtomicU64::new(0);
    b.build_parallel().run(|| {
        let (listed, yielded) = (&listed, &yielded);
        Box::new(move |entry| {
            match entry {
                Err(e) => {
                    let path = error_path(&e).unwrap_or_default();
                    if !opts.owns(&path) {
                        return WalkState::Continue;
                    }
                    let named = opts.paths.contains(&path);
                    visit(Event::Error {
                        path,
                        message: error_message(&e),
                        named,
                    });
                }
                Ok(entry) => {
                    let named = entry.depth() == 0;
                    if !named {
                        yielded.fetch_add(1, Relaxed);
                    }
                    let Some(ft) = entry.file_type() else {
                        return WalkState::Continue;
                    };
                    if ft.is_dir() {
                        if opts.ignore_files {
                            listed.fetch_add(list(entry.path(), secrets, opts, visit), Relaxed);
                        }
                        return WalkState::Continue;
                    }
                    if !opts.owns(entry.path()) {
                        return WalkState::Continue;
                    }
                    if named {
                        // Named on purpose: followed if a link, read if a pipe.
                        visit(read(entry.path(), opts, true));
                        return WalkState::Continue;
                    }
                    if ft.is_symlink() {
                        return WalkState::Continue;
                    }
                    if !ft.is_file() {
                        visit(Event::Error {
                            path: entry.path().to_path_buf(),
                            message: "not a regular file (FIFO, socket or device); skipped".into(),
                            named: false,
                        });
                        return WalkState::Continue;
                    }
                    visit(read(entry.path(), opts, false));
                }
            }
            WalkState::Continue
        })
    });
    // Every shard walks the whole tree and counts the same: the first reports it.
    if opts.ignore_files && opts.shard.first() {
        let ignored = listed.into_inner().saturating_sub(yielded.into_inner());
        if ignored > 0 {
            visit(Event::Ignored(ignored));
        }
    }
}

/// List a directory the walker entered: count the children it should hand over, and read
/// the well-known secret files among them here (the walker is told to leave them).
fn list(dir: &Path, secrets: bool, opts: &WalkOptions, visit: &(dyn Fn(Event) + Sync)) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        // The walker reports the same error.
        return 0;
    };
    let mut n = 0;
    for child in rd.flatten() {
        let name = child.file_name();
        if name == ".git" {
            continue;
        }
        if secrets
            && child.file_type().is_ok_and(|t| t.is_file())
            && is_secret_name(&name, || dir.file_name())
        {
            let path = child.path();
            if opts.owns(&path) {
                visit(read(&path, opts, false));
            }
            continue;
        }
        n += 1;
    }
    n
}

/// Names that hold credentials by convention: read even when an ignore file lists them.
pub fn is_secret_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| is_secret_name(name, || path.parent().and_then(Path::file_name)))
}

/// [`is_secret_file`] by a file's own name; `parent` gives its folder's name, asked only for
/// the two names that need it. Made for every file a scan lists, twice: reading the folder's
/// name from the path every time was most of its cost (1 % of a scan's instructions).
fn is_secret_name<'a>(name: &OsStr, parent: impl FnOnce() -> Option<&'a OsStr>) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    const NAMES: &[&str] = &[
        "credentials",
        "credentials.json",
        ".npmrc",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".git-credentials",
        ".pypirc",
        ".dockercfg",
        ".htpasswd",
        ".vault-token",
        "secrets.yml",
        "secrets.yaml",
        "secrets.json",
        "environ",
    ];
    const SUFFIXES: &[&str] = &[
        ".env", ".pem", ".key", ".p12", ".pfx", ".ppk", ".tfvars", ".tfstate",
    ];
    NAMES.contains(&name)
        || name.starts_with(".env")
        || SUFFIXES.iter().any(|s| name.ends_with(s))
        || ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
            .iter()
            .any(|k| name.starts_with(k))
        || match name {
            "config.json" => parent() == Some(OsStr::new(".docker")),
            "config" => parent() == Some(OsStr::new(".kube")),
            _ => false,
        }
}

/// The error without the path it names: the warning names the path once already.
fn error_message(e: &ignore::Error) -> String {
    match e {
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => error_message(err),
        other => other.to_string(),
    }
}

fn error_path(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}

/// Open an input without blocking (a FIFO swapped in waits for no writer) and without
/// becoming its terminal.
pub fn open(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// An opened input, by what it turned out to be.
pub enum Opened {
    File(File, u64),
    /// A FIFO or pipe named on purpose, read with a time bound.
    Pipe(Bounded),
}

/// Open `path` and check what was opened (not what the listing said): regular files, and
/// pipes when `named`; anything else is refused with the reason.
pub fn open_checked(path: &Path, named: bool) -> Result<Opened, String> {
    let file = open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(Opened::File(file, meta.len()));
    }
    if ft.is_fifo() && named {
        return Ok(Opened::Pipe(Bounded::new(file, PIPE_IDLE)));
    }
    Err(if ft.is_fifo() {
        "a FIFO, not a regular file (it changed after the directory was listed?); not read".into()
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device, not a regular file; not read".into()
    } else if ft.is_dir() {
        "a directory (it changed while walked?); not read".into()
    } else {
        "not a regular file; not read".into()
    })
}

/// Read one input into a blob (or a stream when large or a pipe), or say why not. What the
/// bytes are (binary, an archive, NUL-separated text) is for the scanner's admission.
pub fn read(path: &Path, opts: &WalkOptions, named: bool) -> Event {
    let err = |message: String| Event::Error {
        path: path.to_path_buf(),
        message,
        named,
    };
    let provenance = Provenance::File {
        path: display_path(path),
        variable: None,
    };
    let (mut rest, size) = match open_checked(path, named) {
        Ok(Opened::File(f, len)) => {
            // Checked before reading: a file over the limit is never read.
            if opts.max_file_size.is_some_and(|max| len > max) {
                return Event::TooLarge {
                    path: path.to_path_buf(),
                    size: len,
                };
            }
            (Reader::File(f), Some(len))
        }
        Ok(Opened::Pipe(p)) => {
            // Named on purpose: scanned as it comes, whatever it holds.
            return Event::Stream(Stream {
                provenance,
                head: Vec::new(),
                rest: Reader::Pipe(p),
                size: None,
            });
        }
        Err(m) => return err(m),
    };
    // Read whole up to the streaming size; a file that grows past it while read (or a pipe)
    // goes on as a stream. One already past it goes on as a stream from its first
    // [`STREAM_HEAD`] bytes: held whole, its first 64 MiB were a third of a large file's peak
    // memory, and fresh pages to fill and then copy into the chunks.
    let large = size.is_some_and(|len| len > STREAM_AT);
    let limit = if large { STREAM_HEAD } else { STREAM_AT + 1 };
    let mut data = Vec::with_capacity(size.unwrap_or(0).min(limit) as usize + 1);
    if let Err(e) = rest.as_read().take(limit).read_to_end(&mut data) {
        return err(e.to_string());
    }
    // A file that shrank while read (truncated under the scan, as logrotate's copytruncate
    // does) goes on as a stream too: the stream's end names the bytes that were lost, where
    // a blob would pass as the whole file.
    let shrank = size.is_some_and(|len| (data.len() as u64) < len);
    if large || data.len() as u64 > STREAM_AT || shrank {
        return Event::Stream(Stream {
            provenance,
            head: data,
            rest,
            size,
        });
    }
    Event::Blob(Blob { provenance, data })
}

pub fn display_path(p: &Path) -> String {
    let s = p.to_string_lossy();
    s.strip_prefix("./").unwrap_or(&s).to_string()
}
