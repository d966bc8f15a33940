//! Files and directories: a parallel walk (the `ignore` crate) that honours ignore files,
//! includes hidden files, never follows symlinks, and reads each regular file.

use super::{Blob, Data, Provenance};
use ignore::{WalkBuilder, WalkState};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files at least this large are memory-mapped rather than read.
const MMAP_AT: u64 = 16 << 20;
/// How much of a file's start is looked at to call it binary.
const BINARY_SNIFF: usize = 8 << 10;

/// How to walk.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    pub paths: Vec<PathBuf>,
    /// Honour .gitignore, .ignore and git excludes.
    pub ignore_files: bool,
    /// Scan files that look binary (a NUL byte near the start).
    pub binary: bool,
    /// Skip files larger than this; `None` for no limit.
    pub max_file_size: Option<u64>,
    pub threads: usize,
}

/// What the walk met.
pub enum Event {
    Blob(Blob),
    SkippedBinary,
    SkippedLarge(PathBuf),
    /// An input that could not be read; the walk goes on.
    Error {
        path: PathBuf,
        message: String,
    },
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
    b.hidden(false)
        .ignore(opts.ignore_files)
        .git_ignore(opts.ignore_files)
        .git_global(opts.ignore_files)
        .git_exclude(opts.ignore_files)
        .parents(opts.ignore_files)
        .require_git(false)
        .follow_links(false)
        .threads(opts.threads)
        // The object database is compressed and has its own scanner (`leakhound git`).
        .filter_entry(|e| !(e.depth() > 0 && e.file_name() == ".git"));
    b.build_parallel().run(|| {
        Box::new(move |entry| {
            match entry {
                Err(e) => {
                    let path = error_path(&e).unwrap_or_default();
                    visit(Event::Error {
                        path,
                        message: e.to_string(),
                    });
                }
                Ok(entry) => {
                    let Some(ft) = entry.file_type() else {
                        return WalkState::Continue;
                    };
                    if ft.is_dir() || ft.is_symlink() {
                        return WalkState::Continue;
                    }
                    if !ft.is_file() {
                        visit(Event::Error {
                            path: entry.path().to_path_buf(),
                            message: "not a regular file (FIFO, socket or device); skipped".into(),
                        });
                        return WalkState::Continue;
                    }
                    visit(read(entry.path(), opts));
                }
            }
            WalkState::Continue
        })
    });
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

/// Read one regular file into a blob, or say why not.
pub fn read(path: &Path, opts: &WalkOptions) -> Event {
    let err = |e: std::io::Error| Event::Error {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return err(e),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return err(e),
    };
    if !meta.is_file() {
        return Event::Error {
            path: path.to_path_buf(),
            message: "not a regular file; skipped".into(),
        };
    }
    if opts.max_file_size.is_some_and(|max| meta.len() > max) {
        return Event::SkippedLarge(path.to_path_buf());
    }
    let data = if meta.len() >= MMAP_AT {
        // SAFETY: the map is read-only and private; a concurrent truncation can raise SIGBUS,
        // the documented risk of mapping, accepted for files too large to copy.
        match unsafe { memmap2::Mmap::map(&file) } {
            Ok(m) => Data::Mapped(m),
            Err(e) => return err(e),
        }
    } else {
        let mut buf = Vec::with_capacity(meta.len() as usize + 1);
        if let Err(e) = (&file).read_to_end(&mut buf) {
            return err(e);
        }
        Data::Owned(buf)
    };
    // Archives look binary; the scanner opens them.
    if !opts.binary && is_binary(&data) && super::archive::sniff(&data).is_none() {
        return Event::SkippedBinary;
    }
    Event::Blob(Blob {
        provenance: Provenance::File {
            path: display_path(path),
            variable: None,
        },
        data,
    })
}

/// A NUL byte near the start, unless the text is UTF-16 (which is full of them).
pub fn is_binary(data: &[u8]) -> bool {
    memchr::memchr(0, &data[..data.len().min(BINARY_SNIFF)]).is_some()
        && !crate::decode::looks_utf16(data)
}

fn display_path(p: &Path) -> String {
    let s = p.to_string_lossy();
    s.strip_prefix("./").unwrap_or(&s).to_string()
}
