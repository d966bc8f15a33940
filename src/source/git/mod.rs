//! Git repositories, read through the `git` binary: `git log --raw` lists which commit
//! introduced each blob, `git cat-file --batch-command` streams the blobs.
//!
//! The history listing is one pass over commits oldest first (`--topo-order --reverse`), so
//! the first time a blob id appears is the commit that introduced it. Merge commits are listed
//! in combined form (`-c`): only paths whose result differs from every parent, which is what a
//! merge itself adds. Renames are detected (`-M`), so a file renamed and edited in one commit
//! is measured against its old self. Each change carries its parents' blobs at the same (or
//! the renamed-from) path, so the scanner can keep only the lines the change added.
//!
//! The repository is untrusted input: git is run so that it executes nothing the repository
//! configures (no fsmonitor, no pager, no diff drivers or text conversion) and never prompts.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git (is it installed and on PATH?): {0}")]
    Spawn(std::io::Error),
    #[error("{0}")]
    Git(String),
    #[error("reading git output: {0}")]
    Io(#[from] std::io::Error),
    /// A listing written by `--write-listing` that does not fit this repository.
    #[error(transparent)]
    Listing(#[from] Box<listing::ListingError>),
}

impl From<listing::ListingError> for GitError {
    fn from(e: listing::ListingError) -> GitError {
        GitError::Listing(Box::new(e))
    }
}

pub use crate::model::Commit;

pub mod listing;
mod objects;
pub use objects::{Object, Objects};

/// What to list.
#[derive(Debug, Clone)]
pub enum Select {
    /// Every blob reachable from any ref and from the stash's entries.
    All,
    /// What the commits in a revision range introduced (`REV..HEAD`, `A..B`).
    Range(String),
    /// What the index adds against HEAD (or against nothing, before the first commit).
    Staged,
}

/// One blob a commit (or the index) put at a path.
#[derive(Debug, Clone)]
pub struct Change {
    /// `None` for the index.
    pub commit: Option<Arc<Commit>>,
    pub path: String,
    pub blob: String,
    /// The blob at the same path in each parent that had one: what the new lines are
    /// measured against. Empty for a file that is new.
    pub parents: Vec<String>,
}

/// What a history listing walks, and what that walk's result depends on.
#[derive(Debug, Clone)]
pub struct Revs {
    /// What was asked for, as a listing names it: `all`, or `range A..B`.
    pub select: String,
    /// The revisions given to git log.
    args: Vec<String>,
    /// What the walk's result depends on (every ref and its id, HEAD, the stash's entries;
    /// a range's ends): equal states list the same blobs.
    pub state: String,
    /// HEAD's commit, for messages; `None` before the first commit.
    pub head: Option<String>,
    /// For the whole history: what `--all` walks (HEAD, every ref, the stash's entries), one
    /// by one, should git fail on the whole before listing anything ([`Repo::walkable`]).
    each: Vec<String>,
}

/// A repository (work tree or bare) that git can open.
pub struct Repo {
    dir: PathBuf,
    /// The all-zero id of this repository's hash (40 or 64 hex digits).
    null: String,
}

impl Repo {
    /// Open the repository at or around `dir`.
    pub fn open(dir: &Path) -> Result<Repo, GitError> {
        let mut repo = Repo {
            dir: dir.to_path_buf(),
            null: String::new(),
        };
        let fmt = repo.output(&["rev-parse", "--show-object-format"])?;
        let len = if fmt.trim() == "sha256" { 64 } else { 40 };
        repo.null = "0".repeat(len);
        Ok(repo)
    }

    /// Where git was pointed: shown in messages.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self) -> Command {
        let mut c = Command::new("git");
        c.arg("-C")
            .arg(&self.dir)
            .args([
                "--no-pager",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.untrackedCache=false",
                "-c",
                "log.showSignature=false",
            ])
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .stdin(Stdio::null());
        c
    }

    /// Run git to completion; its stdout, or its stderr as the error.
    fn output(&self, args: &[&str]) -> Result<String, GitError> {
        let out = self
            .command()
            .args(args)
            .stderr(Stdio::piped())
            .stdout(Stdio::piped())
            .output()
            .map_err(GitError::Spawn)?;
        if !out.status.success() {
            return Err(GitError::Git(first_line(&out.stderr)));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Does HEAD name a commit? (Not in a repository without commits.)
    fn has_head(&self) -> bool {
        self.output(&["rev-parse", "--verify", "-q", "HEAD^{commit}"])
            .is_ok()
    }

    /// The blobs `select` covers, each listed once, in the order they were introduced; and
    /// warnings (git failing part-way, on a corrupt commit or tree, leaves what was listed).
    pub fn changes(&self, select: &Select) -> Result<(Vec<Change>, Vec<String>), GitError> {
        if let Select::Staged = select {
            return Ok((self.staged()?, Vec::new()));
        }
        let mut changes = Vec::new();
        let warnings = self.each_change(&self.revs(select)?, |c| changes.push(c))?;
        Ok((changes, warnings))
    }

    /// What `select` (a history, not the index) asks git log to walk, and the state of the
    /// repository that decides what that walk lists: its refs (with HEAD and the stash's
    /// older entries) for the whole history, a range's two ends for a range.
    pub fn revs(&self, select: &Select) -> Result<Revs, GitError> {
        let head = self
            .output(&["rev-parse", "--verify", "-q", "HEAD^{commit}"])
            .map(|h| h.trim().to_string())
            .ok();
        match select {
            Select::Staged => Err(GitError::Git(
                "the staged changes are read from the index, not listed from history".into(),
            )),
            Select::All => {
                let mut args = vec!["--all".to_string()];
                // Older stash entries live only in the stash's reflog.
                let stash = self
                    .output(&["reflog", "show", "--format=%H", "refs/stash", "--"])
                    .unwrap_or_default();
                args.extend(stash.lines().map(str::to_string));
                let refs = self.output(&["for-each-ref", "--format=%(objectname) %(refname)"])?;
                let state = format!(
                    "all\nHEAD {}\n{refs}stash\n{stash}",
                    head.as_deref().unwrap_or("-")
                );
                let each = std::iter::once("HEAD")
                    .chain(
                        refs.lines()
                            .filter_map(|l| l.split_once(' ').map(|(_, r)| r)),
                    )
                    .chain(stash.lines())
                    .map(str::to_string)
                    .collect();
                Ok(Revs {
                    select: "all".into(),
                    args,
                    state,
                    head,
                    each,
                })
            }
            Select::Range(range) => {
                // Resolve first: a bad revision should be a clear error, not an empty scan.
                let spec = if range.contains("..") {
                    range.clone()
                } else {
                    format!("{range}..HEAD")
                };
                let ends = self
                    .output(&["rev-parse", "--revs-only", &spec, "--"])
                    .map_err(|e| GitError::Git(format!("bad revision range {spec:?}: {e}")))?;
                Ok(Revs {
                    select: format!("range {spec}"),
                    state: format!("range {spec}\n{ends}"),
                    args: vec![spec],
                    head,
                    each: Vec::new(),
                })
            }
        }
    }

    /// `git log`'s listing of `revs`, raw (as [`each_change`] reads it), and its warnings:
    /// what a listing file keeps.
    pub fn log_raw(&self, revs: &Revs) -> Result<(Vec<u8>, Vec<String>), GitError> {
        let mut raw = Vec::new();
        let null = self.null.clone();
        let warnings = self.log(revs, |out| {
            // Read again, after a failed listing of nothing, from the refs that walk.
            raw.clear();
            out.read_to_end(&mut raw)?;
            // Listed anything: as a scan counts it, so both fail alike.
            Ok(each_change(&raw[..], &null, |_| {})? > 0)
        })?;
        Ok((raw, warnings))
    }

    /// Each change `revs` lists, handed to `f` as git writes it: the blobs of the first
    /// commits are read and scanned while git still works out the later ones. Returns the
    /// warnings.
    pub fn each_change(
        &self,
        revs: &Revs,
        mut f: impl FnMut(Change),
    ) -> Result<Vec<String>, GitError> {
        let null = self.null.clone();
        self.log(revs, |out| Ok(each_change(out, &null, &mut f)? > 0))
    }

    /// Run git log over `revs`, its output read by `read` (which says whether it listed
    /// anything); the warnings, or the error when git failed before listing anything. When
    /// git fails on the whole history before listing anything (a corrupt commit at a
    /// branch's tip), the refs it can walk are listed without the others, which a warning
    /// names: a repository without commits is the only whole history with none.
    fn log(
        &self,
        revs: &Revs,
        mut read: impl FnMut(&mut dyn Read) -> std::io::Result<bool>,
    ) -> Result<Vec<String>, GitError> {
        let stopped =
            |msg: String| format!("git log stopped early; history listed up to there: {msg}");
        let failed = match self.log_of(&revs.args, &mut read)? {
            None => return Ok(Vec::new()),
            Some((msg, true)) => return Ok(vec![stopped(msg)]),
            Some((msg, false)) => msg,
        };
        // Not one ref, and HEAD not born: a repository without commits.
        if revs.each == ["HEAD"] && revs.head.is_none() {
            return Ok(Vec::new());
        }
        let (good, bad): (Vec<String>, Vec<String>) =
            revs.each.iter().cloned().partition(|r| self.walkable(r));
        if good.is_empty() {
            return Err(GitError::Git(failed));
        }
        let mut warnings = vec![format!(
            "git log failed on the whole history ({failed}); left out what cannot be walked: {}",
            bad.join(", ")
        )];
        match self.log_of(&good, &mut read)? {
            None => {}
            Some((msg, true)) => warnings.push(stopped(msg)),
            Some((msg, false)) => return Err(GitError::Git(msg)),
        }
        Ok(warnings)
    }

    /// Whether git can walk `rev`'s history, every commit of it readable.
    fn walkable(&self, rev: &str) -> bool {
        self.output(&["rev-list", "--quiet", rev, "--"]).is_ok()
    }

    /// One git log over `args`, read by `read`: `None` when git succeeded, else its message
    /// and whether anything was listed before it failed.
    fn log_of(
        &self,
        args: &[String],
        read: &mut impl FnMut(&mut dyn Read) -> std::io::Result<bool>,
    ) -> Result<Option<(String, bool)>, GitError> {
        let mut child = self
            .command()
            .args([
                "log",
                "--topo-order",
                "--reverse",
                "--root",
                "-c",
                "--raw",
                "-M",
                "--no-abbrev",
                "--no-ext-diff",
                "--no-textconv",
                "--no-color",
                "-z",
                "--format=%x01%H%x00%an%x00%ae%x00%aI%x00%s",
            ])
            .args(args)
            .arg("--")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(GitError::Spawn)?;
        let mut stderr = child.stderr.take().expect("piped");
        let err = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = stderr.read_to_end(&mut s);
            s
        });
        let mut out = child.stdout.take().expect("piped");
        let listed = read(&mut out);
        // Closed before waiting: git must not block on a pipe no one reads.
        drop(out);
        let status = child.wait()?;
        let err = err.join().unwrap_or_default();
        let listed = listed?;
        Ok((!status.success()).then(|| (first_line(&err), listed)))
    }

    /// The all-zero id of this repository's hash, which a raw listing uses for "no blob".
    pub fn null_id(&self) -> &str {
        &self.null
    }

    fn staged(&self) -> Result<Vec<Change>, GitError> {
        let base = if self.has_head() {
            "HEAD".to_string()
        } else {
            // Before the first commit everything in the index is new: compare with the empty
            // tree (whose id depends on the repository's hash).
            self.output(&["hash-object", "-t", "tree", "/dev/null"])?
                .trim()
                .to_string()
        };
        let raw = self.output(&[
            "diff-index",
            "--cached",
            "--raw",
            "-z",
            "-M",
            "--no-abbrev",
            "--diff-filter=AMRT",
            &base,
            "--",
        ])?;
        Ok(parse_entries(raw.as_bytes(), None, &self.null))
    }

    /// Checked-out submodules under HEAD's tree: (path in the repository, directory).
    pub fn submodules(&self) -> Vec<(String, PathBuf)> {
        let Ok(out) = self.output(&["ls-files", "-s", "-z"]) else {
            return Vec::new();
        };
        out.split('\0')
            .filter_map(|e| {
                let (meta, path) = e.split_once('\t')?;
                meta.starts_with("160000 ").then(|| path.to_string())
            })
            .map(|p| {
                let dir = self.dir.join(&p);
                (p, dir)
            })
            .filter(|(_, d)| d.join(".git").exists())
            .collect()
    }

    /// A reader of objects by id.
    pub fn objects(&self) -> Objects {
        Objects::new(self)
    }
}

/// `git log -z --raw` output: per commit a header (after \x01), then raw entries.
/// Public only for the fuzz targets ([`crate::fuzzing`]).
#[doc(hidden)]
pub fn parse_log(raw: &[u8], null: &str) -> Vec<Change> {
    let mut out = Vec::new();
    // Reading a slice cannot fail.
    let _ = each_change(raw, null, |c| out.push(c));
    out
}

/// [`parse_log`] as the output arrives: each change handed to `f` once its commit is
/// complete, at the first (introducing) appearance of its blob only. Returns how many.
pub fn each_change(
    mut r: impl Read,
    null: &str,
    mut f: impl FnMut(Change),
) -> std::io::Result<usize> {
    let mut first = HashSet::new();
    let mut n = 0;
    let mut commit = |chunk: &[u8]| {
        for c in parse_commit(chunk, null) {
            if first.insert(c.blob.clone()) {
                n += 1;
                f(c);
            }
        }
    };
    let mut pending: Vec<u8> = Vec::new();
    let mut read = vec![0u8; 1 << 16];
    loop {
        let got = match r.read(&mut read) {
            Ok(0) => break,
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let from = pending.len();
        pending.extend_from_slice(&read[..got]);
        // Every commit before the last \x01 is complete. What comes before the first \x01
        // is no commit (and after a drain, nothing does).
        let Some(last) = pending[from..].iter().rposition(|&b| b == 1) else {
            continue;
        };
        let last = from + last;
        for chunk in pending[..last].split(|&b| b == 1).skip(1) {
            commit(chunk);
        }
        pending.drain(..last);
    }
    for chunk in pending.split(|&b| b == 1).skip(1) {
        commit(chunk);
    }
    Ok(n)
}

/// One commit's part of the listing (after its \x01): its header, then its raw entries.
fn parse_commit(chunk: &[u8], null: &str) -> Vec<Change> {
    let mut fields = chunk.splitn(6, |&b| b == 0);
    let mut next = || String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let commit = Arc::new(Commit {
        id: next(),
        author: next(),
        email: next(),
        date: next(),
        subject: next(),
    });
    let rest = fields.next().unwrap_or_default();
    parse_entries(rest, Some(&commit), null)
}

/// Raw diff entries (`-z`): `:M M A B S\0path\0`, `:M M A B R90\0from\0to\0` for a rename or
/// copy and, for merges, `::M M M A B C SS\0path\0`. Keeps regular files (and executables)
/// that now hold a blob.
fn parse_entries(raw: &[u8], commit: Option<&Arc<Commit>>, null: &str) -> Vec<Change> {
    let mut out = Vec::new();
    let mut tokens = raw.split(|&b| b == 0);
    while let Some(t) = tokens.next() {
        let t = t.trim_ascii_start();
        if !t.starts_with(b":") {
            continue;
        }
        let Some(mut path) = tokens.next() else { break };
        let meta = String::from_utf8_lossy(t);
        let colons = meta.bytes().take_while(|&b| b == b':').count();
        let parts: Vec<&str> = meta[colons..].split(' ').collect();
        // colons parents: modes for each parent and the result, ids likewise, then status.
        let n = colons + 1;
        if parts.len() < 2 * n {
            continue;
        }
        if parts
            .get(2 * n)
            .is_some_and(|s| s.starts_with('R') || s.starts_with('C'))
        {
            // The destination follows the source.
            let Some(to) = tokens.next() else { break };
            path = to;
        }
        let new_mode = parts[n - 1];
        let new_id = parts[2 * n - 1];
        // Regular files only: a symlink's blob is its target path, a gitlink (160000) a
        // submodule's commit.
        if !new_mode.starts_with("100") || new_id == null {
            continue;
        }
        let parents = parts[n..2 * n - 1]
            .iter()
            .zip(&parts[..n - 1])
            .filter(|(id, mode)| **id != null && mode.starts_with("100"))
            .map(|(id, _)| id.to_string())
            .collect();
        out.push(Change {
            commit: commit.cloned(),
            path: String::from_utf8_lossy(path).into_owned(),
            blob: new_id.to_string(),
            parents,
        });
    }
    out
}

fn first_line(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    let l = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("git failed");
    l.trim()
        .trim_start_matches("fatal: ")
        .trim_start_matches("error: ")
        .to_string()
}

/// A Git LFS pointer file: the content lives on an LFS server, not in the repository.
pub fn lfs_pointer(data: &[u8]) -> Option<String> {
    if data.len() > 1024 || !data.starts_with(b"version https://git-lfs.github.com/spec/") {
        return None;
    }
    let text = std::str::from_utf8(data).ok()?;
    let oid = text.lines().find_map(|l| l.strip_prefix("oid "))?;
    Some(oid.to_string())
}

/// Which lines of `new` (0-based) are not in any of `olds`, by a line diff against each:
/// the lines a change added. A new file (no `olds`) is all added lines.
pub fn added_lines(new: &[u8], olds: &[Vec<u8>]) -> Vec<bool> {
    fn lines(b: &[u8]) -> Vec<&[u8]> {
        b.split_inclusive(|&c| c == b'\n').collect()
    }
    let new_lines = lines(new);
    let mut added = vec![true; new_lines.len()];
    for old in olds {
        let old_lines = lines(old);
        let mut this = vec![false; new_lines.len()];
        // A deadline keeps a pathological diff bounded; past it, `similar` gives a coarser
        // (still correct) diff.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        for op in similar::capture_diff_slices_deadline(
            similar::Algorithm::Myers,
            &old_lines,
            &new_lines,
            Some(deadline),
        ) {
            let r = op.new_range();
            if matches!(
                op.tag(),
                similar::DiffTag::Insert | similar::DiffTag::Replace
            ) {
                this[r].iter_mut().for_each(|a| *a = true);
            }
        }
        for (a, t) in added.iter_mut().zip(this) {
            *a &= t;
        }
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_lines_against_one_and_two_parents() {
        let old = b"a\nb\nc\n".to_vec();
        assert_eq!(
            added_lines(b"a\nX\nb\nc\nY", std::slice::from_ref(&old)),
            [false, true, false, false, true]
        );
        // A merge adds only what neither parent had.
        let other = b"a\nX\n".to_vec();
        assert_eq!(
            added_lines(b"a\nX\nb\nc\nY", &[old, other]),
            [false, false, false, false, true]
        );
        assert_eq!(added_lines(b"k\n", &[]), [true]);
    }

    #[test]
    fn raw_entries_keep_files_and_their_parents() {
        let z = "0".repeat(40);
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let c = "c".repeat(40);
        let raw = format!(
            "\n:000000 100644 {z} {a} A\0new.txt\0:100644 000000 {a} {z} D\0gone\0\
             :160000 160000 {a} {b} M\0sub\0::100644 100644 100644 {a} {b} {c} MM\0m.txt\0\
             :100644 100644 {b} {c} R087\0old.txt\0new.txt\0"
        );
        let got = parse_entries(raw.as_bytes(), None, &z);
        let got: Vec<_> = got
            .iter()
            .map(|c| (c.path.as_str(), c.blob.as_str(), c.parents.len()))
            .collect();
        assert_eq!(
            got,
            [
                ("new.txt", a.as_str(), 0),
                ("m.txt", c.as_str(), 2),
                ("new.txt", c.as_str(), 1)
            ]
        );
    }

    #[test]
    fn lfs_pointers_are_recognised() {
        let p = b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n";
        assert_eq!(lfs_pointer(p).as_deref(), Some("sha256:abc"));
        assert_eq!(lfs_pointer(b"version 1\n"), None);
    }
}
