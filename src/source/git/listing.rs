//! A history's listing written once and read by every shard: `leakhound git --write-listing
//! FILE` runs the one `git log` walk, and `--shard K/N --listing FILE` reads it instead of
//! walking the history again in each of N jobs.
//!
//! The file holds, per repository (keyed by the prefix its paths are reported under, so a
//! `--targets` list and its submodules fit in one file), git's raw listing as a scan reads
//! it, and what it was listed from: the selection (`all` or a range) and a digest of the
//! state the walk's result depends on (every ref and its id, HEAD, the stash's entries; a
//! range's two ends). A shard computes that digest again with a few cheap git calls (no
//! history walk) and refuses a listing of another repository or of refs that have moved
//! since: a stale listing would silently leave the newest commits unscanned. A listing
//! that is truncated, altered or written by another leakhound is refused too: each part
//! carries its length and SHA-256, and the file ends with a count of its parts.
//!
//! The listing names commits, paths, authors and subjects, never content; it is written
//! private (0600) like a report with secrets.

use super::{GitError, Repo, Revs, Select};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The first line of a listing: what it is, its format and the leakhound that wrote it.
fn magic() -> String {
    format!("leakhound git listing 1 {}\n", env!("CARGO_PKG_VERSION"))
}

#[derive(Debug, thiserror::Error)]
pub enum ListingError {
    #[error("{file}: {cause}")]
    Io { file: String, cause: std::io::Error },
    #[error("{file}: not a git listing of this leakhound ({found:?}); write it again with `leakhound git --write-listing`")]
    Foreign { file: String, found: String },
    #[error(
        "{file}: truncated or altered ({why}); write it again with `leakhound git --write-listing`"
    )]
    Corrupt { file: String, why: String },
    #[error("{file} has no listing of {repo}: it was written for other repositories")]
    Missing { file: String, repo: String },
    #[error("{file} lists {written} of {repo}, and this run asks for {asked}")]
    Selection {
        file: String,
        repo: String,
        written: String,
        asked: String,
    },
    #[error("{file} was written for {dir} at HEAD {then}, and {repo} is at HEAD {now} with other refs: another repository, or its history moved since; write the listing again")]
    Stale {
        file: String,
        dir: String,
        repo: String,
        then: String,
        now: String,
    },
}

/// One repository's part of a listing: what it was listed from, then `bytes` of git's raw
/// listing.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Part {
    prefix: String,
    dir: String,
    select: String,
    state: String,
    head: Option<String>,
    warnings: Vec<String>,
    /// Listing it failed with this error (which every shard then reports as a scan does).
    error: Option<String>,
    bytes: u64,
    sha256: String,
}

/// The last line: how many parts came before it.
#[derive(Serialize, Deserialize)]
struct End {
    end: usize,
}

fn digest(b: &[u8]) -> String {
    format!("{:x}", Sha256::digest(b))
}

/// What writing a listing covered.
#[derive(Debug, Default)]
pub struct Written {
    pub repositories: usize,
    pub blobs: usize,
    /// Repositories that could not be listed: `(where, why)`.
    pub failed: Vec<(String, String)>,
    pub warnings: Vec<(String, String)>,
}

/// List each repository (with the prefix its paths are reported under) and, with
/// `submodules`, its checked-out submodules, into `out`. A repository that cannot be opened
/// or listed is written as failed, so that the shards report it as a scan would.
pub fn write(
    repos: &[(PathBuf, String)],
    select: &Select,
    submodules: bool,
    out: &mut dyn Write,
    file: &Path,
) -> Result<Written, ListingError> {
    let io = |cause| ListingError::Io {
        file: file.display().to_string(),
        cause,
    };
    out.write_all(magic().as_bytes()).map_err(io)?;
    let mut w = Written::default();
    let mut parts = 0;
    let mut list = |dir: &Path, prefix: &str, w: &mut Written| -> std::io::Result<Option<Repo>> {
        let name = dir.display().to_string();
        let listed = Repo::open(dir).and_then(|repo| {
            let revs = repo.revs(select)?;
            let (raw, warnings) = repo.log_raw(&revs)?;
            Ok((repo, revs, raw, warnings))
        });
        parts += 1;
        let (part, raw, repo) = match listed {
            Ok((repo, revs, raw, warnings)) => {
                w.repositories += 1;
                w.blobs += super::each_change(&raw[..], repo.null_id(), |_| {})?;
                w.warnings
                    .extend(warnings.iter().map(|m| (name.clone(), m.clone())));
                let part = Part {
                    prefix: prefix.to_string(),
                    dir: name,
                    select: revs.select.clone(),
                    state: digest(revs.state.as_bytes()),
                    head: revs.head.clone(),
                    warnings,
                    error: None,
                    bytes: raw.len() as u64,
                    sha256: digest(&raw),
                };
                (part, raw, Some(repo))
            }
            Err(e) => {
                w.failed.push((name.clone(), e.to_string()));
                let part = Part {
                    prefix: prefix.to_string(),
                    dir: name,
                    select: String::new(),
                    state: String::new(),
                    head: None,
                    warnings: Vec::new(),
                    error: Some(e.to_string()),
                    bytes: 0,
                    sha256: digest(b""),
                };
                (part, Vec::new(), None)
            }
        };
        serde_json::to_writer(&mut *out, &part)?;
        out.write_all(b"\n")?;
        out.write_all(&raw)?;
        out.write_all(b"\n")?;
        Ok(repo)
    };
    for (dir, prefix) in repos {
        let repo = list(dir, prefix, &mut w).map_err(io)?;
        if let (true, Some(repo)) = (submodules, repo) {
            for (path, dir) in repo.submodules() {
                list(&dir, &format!("{prefix}{path}/"), &mut w).map_err(io)?;
            }
        }
    }
    serde_json::to_writer(&mut *out, &End { end: parts }).map_err(|e| io(e.into()))?;
    out.write_all(b"\n").map_err(io)?;
    out.flush().map_err(io)?;
    Ok(w)
}

/// A listing file, checked whole when opened (its format, its writer, every part's length
/// and its end), each part read and checked against its digest when a repository asks.
#[derive(Debug)]
pub struct Listing {
    path: PathBuf,
    /// Each part by prefix, with where its raw listing begins in the file.
    parts: HashMap<String, (Part, u64)>,
}

impl Listing {
    pub fn open(path: &Path) -> Result<Listing, ListingError> {
        let file = path.display().to_string();
        let io = |cause| ListingError::Io {
            file: file.clone(),
            cause,
        };
        let corrupt = |why: &str| ListingError::Corrupt {
            file: file.clone(),
            why: why.to_string(),
        };
        let mut r = BufReader::new(std::fs::File::open(path).map_err(io)?);
        let mut line = Vec::new();
        r.read_until(b'\n', &mut line).map_err(io)?;
        if line != magic().as_bytes() {
            let found = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
            return Err(ListingError::Foreign {
                file: file.clone(),
                found: found.trim_end().to_string(),
            });
        }
        let mut at = line.len() as u64;
        let mut parts = HashMap::new();
        let mut count = 0;
        loop {
            line.clear();
            let n = r.read_until(b'\n', &mut line).map_err(io)?;
            if n == 0 || line.last() != Some(&b'\n') {
                return Err(corrupt("it ends before its last line"));
            }
            at += n as u64;
            if let Ok(end) = serde_json::from_slice::<End>(&line) {
                if end.end != count {
                    return Err(corrupt("parts are missing"));
                }
                if r.fill_buf().map_err(io)?.is_empty() {
                    break;
                }
                return Err(corrupt("something follows its last line"));
            }
            let part: Part = serde_json::from_slice(&line)
                .map_err(|_| corrupt("a part's header is unreadable"))?;
            let body = at;
            // Past the raw listing to its closing newline; a short file ends here.
            r.seek_relative(part.bytes as i64).map_err(io)?;
            let mut nl = [0u8; 1];
            match r.read_exact(&mut nl) {
                Ok(()) if nl == *b"\n" => {}
                Ok(()) => return Err(corrupt("a part's length is wrong")),
                Err(_) => return Err(corrupt("it ends inside a part")),
            }
            at += part.bytes + 1;
            count += 1;
            parts.insert(part.prefix.clone(), (part, body));
        }
        Ok(Listing {
            path: path.to_path_buf(),
            parts,
        })
    }

    /// The raw listing of `repo` (its paths reported under `prefix`) for `select`, and the
    /// warnings git gave when it was written; refused when the listing has no part for it,
    /// was written for another selection, or for another state of its refs.
    pub fn take(
        &self,
        prefix: &str,
        repo: &Repo,
        select: &Select,
    ) -> Result<(Vec<u8>, Vec<String>), GitError> {
        let file = self.path.display().to_string();
        let name = repo.dir().display().to_string();
        let Some((part, at)) = self.parts.get(prefix) else {
            return Err(ListingError::Missing { file, repo: name }.into());
        };
        if let Some(e) = &part.error {
            return Err(GitError::Git(e.clone()));
        }
        let revs: Revs = repo.revs(select)?;
        if revs.select != part.select {
            return Err(ListingError::Selection {
                file,
                repo: name,
                written: part.select.clone(),
                asked: revs.select,
            }
            .into());
        }
        if digest(revs.state.as_bytes()) != part.state {
            let head = |h: &Option<String>| h.clone().unwrap_or_else(|| "(none)".into());
            return Err(ListingError::Stale {
                file,
                dir: part.dir.clone(),
                repo: name,
                then: head(&part.head),
                now: head(&revs.head),
            }
            .into());
        }
        let io = |cause| ListingError::Io {
            file: file.clone(),
            cause,
        };
        let mut f = std::fs::File::open(&self.path).map_err(io)?;
        f.seek(SeekFrom::Start(*at)).map_err(io)?;
        let mut raw = Vec::with_capacity(part.bytes as usize);
        f.take(part.bytes).read_to_end(&mut raw).map_err(io)?;
        if digest(&raw) != part.sha256 {
            return Err(ListingError::Corrupt {
                file,
                why: format!("the listing of {name} does not match its digest"),
            }
            .into());
        }
        Ok((raw, part.warnings.clone()))
    }
}
