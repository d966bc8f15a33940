//! Masking files in place: which files, the binary and SQLite checks, the atomic replacement,
//! and following a file a live writer still appends to (the module's description says how).

use super::{as_text, scrub, scrub_lines, sqlite, Change, Error, Kind, Scrubbed};
use crate::engine::Engine;
use crate::filter::Masking;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long the file a masked copy replaced is followed for lines a writer still appends to
/// it, at most; and how often, and how long it must stay quiet.
pub(super) const FOLLOW_MAX: Duration = Duration::from_secs(10);
const FOLLOW_POLL: Duration = Duration::from_millis(50);
const FOLLOW_QUIET: u32 = 4;
/// A file modified this recently may have a writer: it is followed after the rename.
const LIVE: Duration = Duration::from_secs(120);

/// How files are treated.
#[derive(Debug, Clone)]
pub struct Options {
    /// Report what would change; write nothing.
    pub dry_run: bool,
    /// Skip a file modified less than this long ago (unless `force`).
    pub min_age: Duration,
    pub force: bool,
}

/// What happened to one file.
#[derive(Debug)]
pub enum FileOutcome {
    /// Read and masked; nothing to hide.
    Clean,
    /// Secrets masked (or, in a dry run, would be); the file is rewritten unless dry.
    Changed(Scrubbed),
    /// A SQLite database: the rows masked (or, in a dry run, that would be).
    Database(sqlite::Rows),
    /// Not read, and why.
    Skipped(String),
}

/// Bytes read from the start of a file to tell whether it is binary.
const BINARY_PROBE: usize = 8192;

/// Mask one file in place (see the module's description).
pub fn scrub_file(engine: &Engine, path: &Path, opts: &Options) -> Result<FileOutcome, Error> {
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    // Before anything is read: masking the database may have emptied or removed it already.
    if let Some(db) = sqlite_log_of(path) {
        return Ok(FileOutcome::Skipped(format!(
            "SQLite's log of {}: masked through the database",
            db.display()
        )));
    }
    let meta = std::fs::symlink_metadata(path).map_err(io)?;
    if meta.file_type().is_symlink() {
        // Renaming over a link would replace the link, not the file it names.
        return Ok(FileOutcome::Skipped("a symbolic link".into()));
    }
    if !meta.is_file() {
        return Ok(FileOutcome::Skipped("not a regular file".into()));
    }
    let modified = meta.modified().map_err(io)?;
    if !opts.force {
        let age = SystemTime::now()
            .duration_since(modified)
            .unwrap_or(Duration::ZERO);
        if age < opts.min_age {
            return Ok(FileOutcome::Skipped(format!(
                "modified {}s ago, maybe by a live session (--force to scrub it anyway)",
                age.as_secs()
            )));
        }
    }
    // Kept open: after the rename it is the file a writer that holds it open still appends to.
    let mut file = open_original(path).map_err(io)?;
    // A database is masked through SQLite, which reads it itself: not read whole here.
    if is_sqlite(&file) {
        drop(file);
        let rows = sqlite::scrub_db(&Masking::new(engine), path, opts.dry_run)?;
        return Ok(if rows.changes.is_empty() && rows.errors.is_empty() {
            FileOutcome::Clean
        } else {
            FileOutcome::Database(rows)
        });
    }
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut raw).map_err(io)?;
    // UTF-16 text (a log or a transcript a Windows tool wrote) has NULs and is text: the
    // masker reads it as its characters and writes its markers in UTF-16.
    let utf16 = crate::decode::looks_utf16(&raw);
    if !utf16 && memchr::memchr(0, &raw[..raw.len().min(BINARY_PROBE)]).is_some() {
        return Ok(FileOutcome::Skipped("binary".into()));
    }
    let name = path.display().to_string();
    let kind = if utf16 { Kind::Text } else { Kind::of(path) };
    let mut s = scrub(engine, &name, kind, &raw)?;
    if !s.changed(&raw) {
        return Ok(FileOutcome::Clean);
    }
    if !opts.dry_run {
        let grew = replace(path, &s.bytes, &meta, &file, raw.len())?;
        let live = SystemTime::now()
            .duration_since(modified)
            .map_or(true, |age| age < LIVE);
        follow(engine, path, kind, &file, raw, &mut s, grew || live)?;
    }
    Ok(FileOutcome::Changed(s))
}

/// The database a `-wal`, `-shm` or `-journal` file belongs to, when it is one.
fn sqlite_log_of(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let db = ["-wal", "-shm", "-journal"]
        .iter()
        .find_map(|s| name.strip_suffix(s))?;
    let db = path.with_file_name(db);
    is_sqlite(&std::fs::File::open(&db).ok()?).then_some(db)
}

/// Whether `f` starts with SQLite's header.
fn is_sqlite(f: &std::fs::File) -> bool {
    let mut head = [0u8; 16];
    read_full_at(f, &mut head, 0).is_ok_and(|n| n == head.len()) && head == sqlite::MAGIC
}

/// `path` opened to read, never through a symlink, and not waiting on a FIFO.
fn open_original(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Put `bytes` in place of `path` with the file's permissions and modification time, unless
/// the file was rewritten since it was read (`meta`, `len`): another file there now, or one
/// shorter. One that only grew is replaced all the same (its new lines are added by
/// [`follow`]); whether it grew.
fn replace(
    path: &Path,
    bytes: &[u8],
    meta: &std::fs::Metadata,
    file: &std::fs::File,
    len: usize,
) -> Result<bool, Error> {
    use std::os::unix::fs::MetadataExt;
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    let keep = crate::write::Keep {
        permissions: Some(meta.permissions()),
        modified: meta.modified().ok(),
    };
    let mut grew = false;
    let unchanged = || {
        let there = std::fs::symlink_metadata(path)?;
        let ours = file.metadata()?;
        if (there.dev(), there.ino()) != (ours.dev(), ours.ino()) || ours.len() < len as u64 {
            return Ok(false);
        }
        grew = ours.len() > len as u64 || ours.modified().ok() != meta.modified().ok();
        Ok(true)
    };
    if crate::write::replace(path, bytes, keep, unchanged).map_err(io)? {
        Ok(grew)
    } else {
        Err(Error::Raced {
            path: path.display().to_string(),
        })
    }
}

/// After the rename: what was appended to the replaced file (`old`, still open) beyond the
/// `raw` bytes masked, masked the same way and appended to the new file. With `live`, the
/// old file is watched until it stays quiet, as a writer that holds it open goes on writing
/// there; else it is looked at once, and watched only if it grew.
fn follow(
    engine: &Engine,
    path: &Path,
    kind: Kind,
    old: &std::fs::File,
    raw: Vec<u8>,
    s: &mut Scrubbed,
    live: bool,
) -> Result<(), Error> {
    use std::io::Write;
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    let name = path.display().to_string();
    let masking = Masking::new(engine);
    let learn = |b: &[u8]| b.split(|&c| c == b'\n').for_each(|l| masking.learn(l));
    let mut done = raw.len() as u64;
    let mut line = memchr::memchr_iter(b'\n', &raw).count();
    let mut new: Option<std::fs::File> = None;
    let mut learned = false;
    let (start, mut quiet, mut watch) = (std::time::Instant::now(), 0, live);
    loop {
        let len = old.metadata().map_err(io)?.len();
        let mut tail = vec![0u8; len.saturating_sub(done) as usize];
        let n = read_full_at(old, &mut tail, done).map_err(io)?;
        tail.truncate(n);
        // Whole lines only while the writer may be in the middle of one; all of it at the end.
        let last = quiet + 1 >= FOLLOW_QUIET || !watch;
        let cut = if last {
            tail.len()
        } else {
            memchr::memrchr(b'\n', &tail).map_or(0, |p| p + 1)
        };
        tail.truncate(cut);
        if tail.is_empty() {
            quiet += 1;
        } else {
            quiet = 0;
            watch = true;
            if !learned {
                learn(&raw);
                learned = true;
            }
            learn(&tail);
            let masked = match kind {
                Kind::Jsonl => scrub_lines(&masking, &name, &tail)?,
                _ => as_text(&masking, &name, &tail, false),
            };
            if new.is_none() {
                new = Some(
                    open_replacement(path, &s.bytes)
                        .map_err(io)?
                        .ok_or_else(|| Error::Replaced { path: name.clone() })?,
                );
            }
            let f = new.as_mut().expect("opened above");
            f.write_all(&masked.bytes).map_err(io)?;
            s.changes.extend(masked.changes.into_iter().map(|c| Change {
                line: c.line + line,
                ..c
            }));
            s.bytes.extend_from_slice(&masked.bytes);
            done += tail.len() as u64;
            line += memchr::memchr_iter(b'\n', &tail).count();
        }
        if !watch || quiet >= FOLLOW_QUIET {
            return Ok(());
        }
        if start.elapsed() > FOLLOW_MAX {
            return Err(Error::StillWritten { path: name });
        }
        std::thread::sleep(FOLLOW_POLL);
    }
}

/// `buf.len()` bytes of `f` from `at`, or fewer at its end.
fn read_full_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], at + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The file now at `path`, opened to append, if it is still the masked copy (it begins with
/// `masked`): not another writer's replacement.
fn open_replacement(path: &Path, masked: &[u8]) -> std::io::Result<Option<std::fs::File>> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let mut head = vec![0u8; masked.len()];
    let n = read_full_at(&f, &mut head, 0)?;
    Ok((f.metadata()?.is_file() && n == masked.len() && head == masked).then_some(f))
}

/// Every file under `paths` (a named file is itself), in name order; links are not followed,
/// no ignore file is honoured, hidden files are included. An error names its path.
pub fn files(paths: &[PathBuf], mut visit: impl FnMut(Result<PathBuf, (PathBuf, String)>)) {
    for root in paths {
        let walk = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .hidden(false)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for entry in walk {
            match entry {
                Ok(e) => {
                    let is_file = e.file_type().is_some_and(|t| !t.is_dir());
                    let ours = e.file_name().to_string_lossy().contains(".leakhound-tmp-");
                    if is_file && !ours {
                        visit(Ok(e.into_path()));
                    }
                }
                Err(err) => {
                    let path = match &err {
                        ignore::Error::WithPath { path, .. } => path.clone(),
                        _ => root.clone(),
                    };
                    let msg = match err.io_error() {
                        Some(io) => io.to_string(),
                        None => err.to_string(),
                    };
                    visit(Err((path, msg)));
                }
            }
        }
    }
}
