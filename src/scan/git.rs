//! Driving a git repository: each blob a selection covers, once, attributed to the commit
//! that introduced it, admitted like a file, with findings kept on the lines that commit
//! added. LFS pointers are named, submodules scanned as repositories of their own, blobs
//! read by parallel workers each with its own `git cat-file`.

use super::admit::{Admit, Skip};
use super::{run::Run, ScanResults, Scanner};
use crate::model::{Shard, Warning};
use crate::source::{git, Blob, Provenance};
use std::path::PathBuf;

/// Blobs a git worker asks for at once: enough to keep git's pipe full, few enough that
/// workers share the tail of the work evenly.
const GIT_BATCH: usize = 64;

/// What `Scanner::git` reads.
#[derive(Debug, Clone)]
pub struct GitOptions {
    pub select: git::Select,
    /// Scan blobs that look binary too.
    pub binary: bool,
    pub max_file_size: Option<u64>,
    pub threads: usize,
    /// Also scan checked-out submodules (each as its own repository).
    pub submodules: bool,
    /// Scan only the blobs this shard owns (by blob id).
    pub shard: Shard,
    /// Read the history's listing from this file (`--listing`), written once by
    /// `--write-listing`, instead of running git log.
    pub listing: Option<std::sync::Arc<git::listing::Listing>>,
}

impl Scanner {
    /// Scan git repositories (each opened here), each with the prefix its paths are reported
    /// under: each blob `opts.select` covers, once, attributed to the commit that introduced
    /// it, with findings on the lines that commit added. One repository that cannot be opened
    /// or listed fails the run; of several, it is warned about and counted, and the others
    /// are scanned.
    pub fn git(
        &self,
        repos: &[(PathBuf, String)],
        opts: &GitOptions,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) -> Result<ScanResults, git::GitError> {
        let run = self.run(on_warning);
        for (dir, prefix) in repos {
            let scanned = git::Repo::open(dir).and_then(|repo| {
                self.git_repo(&run, &repo, opts, prefix)?;
                Ok(repo)
            });
            let repo = match scanned {
                Ok(repo) => repo,
                Err(e) if repos.len() == 1 => return Err(e),
                Err(e) => {
                    // Every shard meets the same error; the one that owns the repository
                    // says so.
                    if opts.shard.owns(prefix) {
                        let name = dir.display().to_string();
                        run.warn(name.clone(), format!("not scanned: {e}"));
                        run.unreadable(name, true);
                    }
                    continue;
                }
            };
            if opts.submodules {
                for (path, dir) in repo.submodules() {
                    let path = format!("{prefix}{path}");
                    let sub = git::Repo::open(&dir)
                        .and_then(|sub| self.git_repo(&run, &sub, opts, &format!("{path}/")));
                    if let Err(e) = sub {
                        if opts.shard.first() {
                            run.warn(path, format!("submodule not scanned: {e}"));
                        }
                    }
                }
            }
        }
        Ok(run.finish())
    }

    fn git_repo(
        &self,
        run: &Run,
        repo: &git::Repo,
        opts: &GitOptions,
        prefix: &str,
    ) -> Result<(), git::GitError> {
        // Changes go to the workers in batches as they are listed: git log streams what it
        // works out commit by commit, and the first blobs are scanned while it goes on.
        let (to_work, work) = crossbeam_channel::unbounded::<Vec<git::Change>>();
        let admit = self.admit_opts(opts.binary, opts.max_file_size);
        let listed = std::thread::scope(|s| {
            for _ in 0..opts.threads.max(1) {
                let work = work.clone();
                s.spawn(|| {
                    let work = work;
                    // Each worker has its own cat-file processes (started at its first
                    // request): git inflates objects on as many cores as there are workers.
                    // One streams the blobs to scan, the other is asked for a parent's blob
                    // when a change needs its diff.
                    let mut objects = repo.objects();
                    let mut parents = None;
                    for batch in work {
                        let ids: Vec<&str> = batch.iter().map(|ch| ch.blob.as_str()).collect();
                        // git is told the size limit: a blob over it is never inflated.
                        objects.each(&ids, admit.max_size, |i, object| {
                            let at = Change {
                                change: &batch[i],
                                repo,
                                prefix,
                            };
                            self.git_change(run, &at, object, &mut parents, &admit);
                        });
                    }
                });
            }
            drop(work);
            let mut batch = Vec::with_capacity(GIT_BATCH);
            let mut add = |c: git::Change| {
                if opts.shard.owns(&c.blob) {
                    batch.push(c);
                    if batch.len() == GIT_BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(GIT_BATCH));
                        // The workers hold the receiver until the sender is dropped.
                        let _ = to_work.send(full);
                    }
                }
            };
            let listed = match (&opts.select, &opts.listing) {
                (git::Select::Staged, _) => repo.changes(&opts.select).map(|(changes, w)| {
                    changes.into_iter().for_each(&mut add);
                    w
                }),
                (_, Some(listing)) => {
                    listing
                        .take(prefix, repo, &opts.select)
                        .and_then(|(raw, warnings)| {
                            git::each_change(&raw[..], repo.null_id(), &mut add)?;
                            Ok(warnings)
                        })
                }
                (_, None) => repo
                    .revs(&opts.select)
                    .and_then(|revs| repo.each_change(&revs, &mut add)),
            };
            if !batch.is_empty() {
                let _ = to_work.send(batch);
            }
            drop(to_work);
            listed
        });
        // Every shard lists the whole history; the first reports what went wrong listing it.
        let problems = listed?;
        if opts.shard.first() {
            // History git could not list (a corrupt commit, refs left out) is history not
            // scanned: counted as unreadable, so that `--strict` fails the run.
            for p in problems {
                let dir = repo.dir().display().to_string();
                run.warn(dir.clone(), p);
                run.unreadable(dir, false);
            }
        }
        Ok(())
    }

    fn git_change(
        &self,
        run: &Run,
        at: &Change<'_>,
        object: git::Object,
        parents: &mut Option<git::Objects>,
        opts: &Admit,
    ) {
        let change = at.change;
        let path = format!("{}{}", at.prefix, change.path);
        if self.policy.path_allowed(&path) {
            return;
        }
        // As `run::unit` names a git blob, for the outcomes that never build its provenance.
        let unit = format!("{} {path}", change.blob);
        let data = match object {
            git::Object::Blob(d) => d,
            git::Object::TooLarge(n) => return run.skip_as(unit, path, Skip::Large(Some(n))),
            git::Object::Missing => {
                let msg = format!("blob {} is missing from the object database", change.blob);
                run.failed(unit, "error: missing");
                return run.warn(path, msg);
            }
            git::Object::Broken(why) => {
                run.failed(unit, "error: unreadable");
                return run.warn(path, format!("blob {}: {why}", change.blob));
            }
        };
        if let Some(oid) = git::lfs_pointer(&data) {
            let msg = format!(
                "Git LFS pointer ({oid}): the content is on an LFS server, not in the repository; not scanned"
            );
            run.failed(unit, "not scanned: LFS pointer");
            return run.warn(path, msg);
        }
        let blob = Blob {
            provenance: Provenance::Git {
                path,
                blob: change.blob.clone(),
                commit: change.commit.as_deref().cloned(),
                variable: None,
                cell: None,
                output: None,
                field: None,
            },
            data,
        };
        // An archive committed is new content as a whole: every file in it is scanned (the
        // admission opens it and files what it holds).
        let Some((blob, mut found, nul)) = self.take(run, blob, opts) else {
            return;
        };
        // Only lines this change added: a secret that stays in a file through later edits
        // belongs to the commit that first wrote it, not to every version after.
        if !found.is_empty() {
            // A parent that cannot be read counts as absent: its lines are reported as added.
            let objects = parents.get_or_insert_with(|| at.repo.objects());
            let olds: Vec<Vec<u8>> = change
                .parents
                .iter()
                .filter_map(|id| match objects.get(id, None) {
                    git::Object::Blob(mut d) => {
                        // Compared as the new version was read: NULs as line ends.
                        nul.apply(&mut d);
                        Some(d)
                    }
                    _ => None,
                })
                .collect();
            let added = git::added_lines(&blob.data, &olds);
            found.retain(|f| (f.line..=f.end_line).any(|l| added.get(l - 1) == Some(&true)));
        }
        // The commit's author and subject are shown beside its findings: a secret written
        // there is masked in them, as a value known from the content is.
        if let Some(c) = change.commit.as_deref().filter(|_| !found.is_empty()) {
            let header = format!("{}\n{}\n{}", c.author, c.email, c.subject);
            let d = crate::detect::detect(&self.engine, header.as_bytes());
            run.learn_values(d.values(header.as_bytes()));
        }
        run.scanned(&blob.provenance, blob.data.len() as u64, found);
    }
}

/// One change and where it is: its repository, and the path of that repository in the
/// one scanned (a submodule's prefix).
struct Change<'a> {
    change: &'a git::Change,
    repo: &'a git::Repo,
    prefix: &'a str,
}
