//! Masking secrets at rest: the transcripts and tool-result files coding agents keep, rewritten
//! in place with every secret the masker finds replaced by `[REDACTED:rule-id]`.
//!
//! Each file is masked in its own format, so the agent can still read it:
//! - JSON Lines (`.jsonl`, `.ndjson`): each line through [`filter::mask_json`], so it stays one
//!   valid JSON value with only masked strings changed; a line that is not JSON is masked as
//!   text and reported.
//! - JSON (`.json`): the whole document through [`filter::mask_json`].
//! - Notebooks (`.ipynb`): [`filter::redact_notebook`], then the JSON masker over what the
//!   notebook reader does not look at (metadata, escaped strings).
//! - Anything else that is not binary: [`filter::mask_text`].
//!
//! A file is replaced through a temporary file in its directory, renamed over it, with its
//! permissions and modification time. A file modified less than `min_age` ago is skipped
//! unless forced: a live session may be writing it. If it was rewritten while it was being
//! masked, it is left alone. Lines appended to it meanwhile, or after the rename by a writer
//! that holds the old file open (an agent's transcript), are never lost (#13): the old file is
//! kept open and followed until it is quiet, and what it gained is masked and appended to the
//! new one; when it will not go quiet, that is an error, not a success.

pub mod sqlite;

use crate::engine::Engine;
use crate::filter::{self, Masking};
use crate::model::Finding;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How a file is masked, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Jsonl,
    Json,
    Notebook,
    Text,
}

impl Kind {
    pub fn of(path: &Path) -> Kind {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("jsonl" | "ndjson") => Kind::Jsonl,
            Some("json") => Kind::Json,
            Some("ipynb") => Kind::Notebook,
            _ => Kind::Text,
        }
    }
}

/// One masked secret: the 1-based line it was on and its rule. Never the secret.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    pub line: usize,
    pub rule_id: String,
}

/// A masked copy of one file.
#[derive(Debug)]
pub struct Scrubbed {
    pub bytes: Vec<u8>,
    pub changes: Vec<Change>,
    /// JSON Lines lines that were not JSON and were masked as text (1-based).
    pub text_lines: Vec<usize>,
    /// A `.json` or `.ipynb` file that was not JSON, masked as text.
    pub as_text: bool,
}

impl Scrubbed {
    pub fn changed(&self, raw: &[u8]) -> bool {
        self.bytes != raw
    }
}

/// Errors masking one file; the others go on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: line {line}: masking left it invalid JSON; file not changed")]
    Broken { path: String, line: usize },
    #[error(
        "{path}: changed while it was being masked; not changed (run again when the agent is idle)"
    )]
    Raced { path: String },
    #[error(
        "{path}: masked, but a writer kept appending to the file it replaced: lines written \
         after {}s may be lost (run again when the agent is idle)", FOLLOW_MAX.as_secs()
    )]
    StillWritten { path: String },
    #[error("{path}: masked, but replaced by another writer before lines appended meanwhile could be added; they are not in it (run again when the agent is idle)")]
    Replaced { path: String },
}

/// How long the file a masked copy replaced is followed for lines a writer still appends to
/// it, at most; and how often, and how long it must stay quiet.
const FOLLOW_MAX: Duration = Duration::from_secs(10);
const FOLLOW_POLL: Duration = Duration::from_millis(50);
const FOLLOW_QUIET: u32 = 4;
/// A file modified this recently may have a writer: it is followed after the rename.
const LIVE: Duration = Duration::from_secs(120);

/// Mask `raw`, the contents of a file of `kind`. `name` labels findings. Masked by value:
/// every secret the file holds anywhere is masked wherever else it appears in it (a key set
/// on one line of a transcript and printed bare on another).
pub fn scrub(engine: &Engine, name: &str, kind: Kind, raw: &[u8]) -> Result<Scrubbed, Error> {
    let masking = Masking::new(engine);
    match kind {
        Kind::Jsonl => {
            for line in raw.split(|&b| b == b'\n') {
                masking.learn(line);
            }
        }
        _ => masking.learn(raw),
    }
    let mut s = match kind {
        Kind::Jsonl => scrub_lines(&masking, name, raw)?,
        Kind::Json => match masking.json(name, raw) {
            Some(m) => Scrubbed {
                changes: changes(&m.findings, None, m.bytes != raw),
                bytes: m.bytes,
                text_lines: Vec::new(),
                as_text: false,
            },
            None => as_text(&masking, name, raw, true),
        },
        Kind::Notebook => {
            let (redacted, _, valid) = filter::redact_notebook(engine, raw);
            if !valid {
                return Ok(as_text(&masking, name, raw, true));
            }
            // The notebook reader looks at cells and outputs; the JSON masker at every string.
            let bytes = match masking.json(name, &redacted) {
                Some(m) => m.bytes,
                None => redacted,
            };
            Scrubbed {
                changes: marker_changes(raw, &bytes),
                bytes,
                text_lines: Vec::new(),
                as_text: false,
            }
        }
        Kind::Text => as_text(&masking, name, raw, false),
    };
    if s.changes.is_empty() && s.changed(raw) {
        // Masked only where a value found elsewhere in the file repeats: no finding says
        // where, the markers do.
        s.changes = marker_changes(raw, &s.bytes);
    }
    Ok(s)
}

fn as_text(masking: &Masking, name: &str, raw: &[u8], fallback: bool) -> Scrubbed {
    let m = masking.text(name, raw);
    Scrubbed {
        changes: changes(&m.findings, None, m.bytes != raw),
        bytes: m.bytes,
        text_lines: Vec::new(),
        as_text: fallback,
    }
}

/// The changes the findings of one masked piece make: at `line` if given, else at each
/// finding's own line. None if the piece did not change (a match outside any string).
fn changes(findings: &[Finding], line: Option<usize>, changed: bool) -> Vec<Change> {
    if !changed {
        return Vec::new();
    }
    let mut out: Vec<Change> = findings
        .iter()
        .map(|f| Change {
            line: line.unwrap_or(f.line),
            rule_id: f.rule_id.clone(),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn scrub_lines(masking: &Masking, name: &str, raw: &[u8]) -> Result<Scrubbed, Error> {
    let mut out = Scrubbed {
        bytes: Vec::with_capacity(raw.len()),
        changes: Vec::new(),
        text_lines: Vec::new(),
        as_text: false,
    };
    for (i, line) in raw.split_inclusive(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let body_len = line.len()
            - if line.ends_with(b"\r\n") {
                2
            } else if line.ends_with(b"\n") {
                1
            } else {
                0
            };
        let (body, end) = line.split_at(body_len);
        if body.iter().all(u8::is_ascii_whitespace) {
            out.bytes.extend_from_slice(line);
            continue;
        }
        let masked = match masking.json(name, body) {
            Some(m) => {
                if m.bytes != body
                    && serde_json::from_slice::<serde::de::IgnoredAny>(&m.bytes).is_err()
                {
                    return Err(Error::Broken {
                        path: name.to_string(),
                        line: n,
                    });
                }
                m
            }
            None => {
                out.text_lines.push(n);
                masking.text(name, body)
            }
        };
        let mut changed = changes(&masked.findings, Some(n), masked.bytes != body);
        if changed.is_empty() && masked.bytes != body {
            changed = marker_changes(body, &masked.bytes)
                .into_iter()
                .map(|c| Change { line: n, ..c })
                .collect();
        }
        out.changes.extend(changed);
        out.bytes.extend_from_slice(&masked.bytes);
        out.bytes.extend_from_slice(end);
    }
    out.changes.dedup();
    Ok(out)
}

/// The masks in `after` that are not in `before`, line by line, for a masker that does not
/// say where it masked.
fn marker_changes(before: &[u8], after: &[u8]) -> Vec<Change> {
    fn markers(line: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = line;
        while let Some(p) = memchr::memmem::find(rest, b"[REDACTED:") {
            let tail = &rest[p + 10..];
            let Some(e) = memchr::memchr(b']', tail) else {
                break;
            };
            out.push(String::from_utf8_lossy(&tail[..e]).into_owned());
            rest = &tail[e..];
        }
        out
    }
    let b: Vec<&[u8]> = before.split(|&c| c == b'\n').collect();
    let mut out = Vec::new();
    for (i, line) in after.split(|&c| c == b'\n').enumerate() {
        let mut had = b.get(i).map(|l| markers(l)).unwrap_or_default();
        for m in markers(line) {
            if let Some(p) = had.iter().position(|h| *h == m) {
                had.remove(p);
            } else {
                out.push(Change {
                    line: i + 1,
                    rule_id: m,
                });
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

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
    if memchr::memchr(0, &raw[..raw.len().min(BINARY_PROBE)]).is_some() {
        return Ok(FileOutcome::Skipped("binary".into()));
    }
    let name = path.display().to_string();
    let kind = Kind::of(path);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{engine, KEY, SECRET};

    #[test]
    fn jsonl_lines_stay_json_and_untouched_lines_stay_equal() {
        let e = engine();
        let raw = format!(
            "{{\"a\": 1}}\r\n{{\"out\": \"aws_access_key_id={KEY}\\naws_secret_access_key={SECRET}\"}}\nnot json {KEY}\n\n"
        );
        let s = scrub(&e, "t", Kind::Jsonl, raw.as_bytes()).unwrap();
        let out = String::from_utf8(s.bytes).unwrap();
        assert!(!out.contains(KEY) && !out.contains(SECRET), "{out}");
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], "{\"a\": 1}\r");
        serde_json::from_str::<serde_json::Value>(lines[1]).unwrap();
        assert_eq!(s.text_lines, vec![3]);
        assert!(s.changes.iter().any(|c| c.line == 2));
        assert!(s.changes.iter().any(|c| c.line == 3));
        assert!(out.ends_with("\n\n"));
    }

    #[test]
    fn markers_are_counted_per_line() {
        let c = marker_changes(b"a [REDACTED:x]\nb", b"a [REDACTED:x]\nb [REDACTED:y]");
        assert_eq!(
            c,
            vec![Change {
                line: 2,
                rule_id: "y".into()
            }]
        );
    }
}
