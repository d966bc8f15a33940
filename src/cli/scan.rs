//! The commands that scan: files, git, images, environments; and the pre-commit hook.

use super::settings::{AuditSettings, EnvSettings, GitSettings, ImageSettings, ScanSettings};
use super::setup::{print_warning, Session};
use super::{EXIT_CLEAN, EXIT_FINDINGS};
use crate::model::{Shard, ShardNotes, Warning};
use crate::scan::ScanResults;
use crate::source::fs::{self, WalkOptions};
use crate::source::runtime;
use anyhow::{bail, Context as _, Result};
use std::path::{Path, PathBuf};

pub fn scan(a: ScanSettings) -> Result<i32> {
    let shard = a.shard;
    let paths = a.paths;
    // A missing path is reported by the walk, after the other paths are scanned (exit 2).
    let stdin = paths.iter().any(|p| p.as_os_str() == "-");
    if stdin && paths.len() > 1 {
        bail!("`-` (standard input) cannot be combined with other paths");
    }
    if stdin && !shard.is_whole() {
        bail!("`-` (standard input) is one stream and cannot be split into shards");
    }
    let threads = a.report.threads;
    let mut s = Session::new(a.report, &paths)?;
    s.scanner = s.scanner.with_archives(a.input.archives);
    let outcome = if stdin {
        s.scanner
            .stdin(&print_warning)
            .context("reading standard input")?
    } else {
        let opts = WalkOptions {
            paths,
            ignore_files: a.ignore_files,
            binary: a.input.binary,
            max_file_size: a.input.max_file_size,
            threads,
            ignored_secret_files: a.ignored_secret_files,
            shard,
        };
        s.scan(|sc| sc.paths(&opts, &print_warning))
    };
    s.deliver(noted(outcome, shard))
}

/// A shard's outcome carries its notes (which shard it is, at least) into its JSON report.
fn noted(mut o: ScanResults, shard: Shard) -> ScanResults {
    if !shard.is_whole() {
        o.notes.get_or_insert_with(|| ShardNotes::new(shard));
    }
    o
}

pub fn git(a: GitSettings) -> Result<i32> {
    use crate::source::git::Select;
    let shard = a.shard;
    let dirs = a.dirs;
    let scanned: Vec<PathBuf> = dirs.iter().map(|(d, _)| d.clone()).collect();
    let threads = a.report.threads;
    if let Some(file) = &a.write_listing {
        return write_listing(&dirs, &a.select, a.submodules, file);
    }
    // Read and checked whole before anything is scanned: a truncated or foreign file fails
    // the run at once.
    let listing = match &a.listing {
        Some(file) => Some(std::sync::Arc::new(
            crate::source::git::listing::Listing::open(file)?,
        )),
        None => None,
    };
    let mut s = Session::new(a.report, &scanned)?;
    s.scanner = s.scanner.with_archives(a.input.archives);
    let staged = matches!(a.select, Select::Staged);
    let opts = crate::scan::GitOptions {
        select: a.select,
        binary: a.input.binary,
        max_file_size: a.input.max_file_size,
        threads,
        submodules: a.submodules,
        shard,
        listing,
    };
    let outcome = s
        .scan(|sc| sc.git(&dirs, &opts, &print_warning))
        // Only a run of one repository fails on it: name it.
        .with_context(|| dirs[0].0.display().to_string())?;
    let done = s.delivered(noted(outcome, shard))?;
    if staged && done.code == EXIT_FINDINGS {
        // What the report showed: what it left out for its confidence is not counted.
        eprintln!(
            "leakhound: commit blocked: {} secret(s) in staged changes. Remove them (and rotate \
             any that are real), or mark a false positive with `leakhound:allow` on its line.",
            done.reported
        );
    }
    Ok(done.code)
}

/// `git --write-listing FILE`: the history of every repository listed once, for the shards
/// (`--listing FILE`); nothing scanned. Exit 0, or 2 when a repository could not be listed
/// (it is in the file as failed, and each shard reports it as a scan does).
fn write_listing(
    dirs: &[(PathBuf, String)],
    select: &crate::source::git::Select,
    submodules: bool,
    file: &Path,
) -> Result<i32> {
    let mut out = std::io::BufWriter::new(
        crate::write::open_private(file).with_context(|| file.display().to_string())?,
    );
    let w = crate::source::git::listing::write(dirs, select, submodules, &mut out, file)?;
    for (at, why) in &w.warnings {
        print_warning(&Warning {
            path: at.clone(),
            message: why.clone(),
        });
    }
    for (at, why) in &w.failed {
        print_warning(&Warning {
            path: at.clone(),
            message: format!("not listed: {why}"),
        });
    }
    super::setup::say(&format!(
        "listed {} blob(s) of {} repository(ies) into {}",
        w.blobs,
        w.repositories,
        file.display()
    ));
    Ok(if w.failed.is_empty() { 0 } else { 2 })
}

pub fn image(a: ImageSettings) -> Result<i32> {
    let shard = a.shard;
    let threads = a.report.threads;
    let mut s = Session::new(a.report, &[])?;
    s.scanner = s.scanner.with_archives(a.input.archives);
    // Layers are scanned in parallel on rayon's pool: size it as -j says.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
    let opts = crate::scan::ImageOptions {
        registry: a.registry,
        binary: a.input.binary,
        max_file_size: a.input.max_file_size,
        shard,
    };
    let outcome = s.scan(|sc| sc.images(&a.refs, &opts, &print_warning))?;
    s.deliver(noted(outcome, shard))
}

pub fn env(a: EnvSettings) -> Result<i32> {
    use crate::source::env::Environment;
    let shard = a.shard;
    let files = a.files;
    let s = Session::new(a.report, &files)?;
    let mut envs = Vec::new();
    for pid in a.pids.iter().filter(|p| shard.owns(&format!("pid:{p}"))) {
        envs.push(Environment::of_pid(*pid).with_context(|| {
            format!("cannot read the environment of pid {pid} (/proc/{pid}/environ)")
        })?);
    }
    // A dump is one unit of work: its shard is its path's.
    for f in files.iter().filter(|f| shard.owns(&fs::display_path(f))) {
        envs.push(Environment::from_file(f).with_context(|| format!("{}", f.display()))?);
    }
    if files.is_empty() && a.pids.is_empty() && shard.first() {
        envs.push(Environment::current());
    }
    let mut outcome = s.scanner.environments(&envs);
    if a.runtime {
        let home = credential_files(&s, runtime::home_files(&home()), shard);
        outcome = outcome.merge(home);
    }
    s.deliver(noted(outcome, shard))
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// Credential files scanned whole, ignore files or not.
fn credential_files(s: &Session, paths: Vec<PathBuf>, shard: Shard) -> ScanResults {
    let opts = WalkOptions {
        paths,
        ignore_files: false,
        binary: false,
        max_file_size: Some(64 << 20),
        threads: 2,
        ignored_secret_files: true,
        shard,
    };
    s.scanner.paths(&opts, &print_warning)
}

/// `runtime-audit`: what [`env`] with `--runtime` reads, plus every other process's
/// environment this one may read, the files the AWS credential chain names, and what the
/// instance metadata service and the container credential endpoint hand out; validated.
pub fn runtime_audit(a: AuditSettings) -> Result<i32> {
    use crate::source::env::Environment;
    let mut s = Session::new(a.report, &[])?;
    if let Some(max) = a.max_reach {
        s = s.fail_on(crate::deliver::FailOn::Reach(max));
    }
    let me = Environment::current();
    let mut envs = vec![];
    let mut warnings = Vec::new();
    let mut denied = 0;
    if a.processes {
        let (others, unreadable) = runtime::other_environments();
        denied = unreadable;
        if denied > 0 {
            warnings.push((
                "/proc".to_string(),
                format!("{denied} processes' environments are not readable by this user"),
            ));
        }
        envs.extend(others);
    }
    let mut files = runtime::home_files(&home());
    files.extend(
        runtime::aws_chain_files(&me)
            .into_iter()
            .filter(|p| p.exists()),
    );
    files.sort();
    files.dedup();
    let files_read = files.len();
    let cfg = runtime::EndpointConfig::from_env(&me, a.timeout);
    envs.insert(0, me);
    let mut outcome = s.scanner.environments(&envs);
    if !files.is_empty() {
        outcome = outcome.merge(credential_files(&s, files, Shard::WHOLE));
    }
    let found = if a.endpoints {
        endpoints(&cfg)
    } else {
        runtime::Endpoints::default()
    };
    for n in &found.notes {
        super::setup::say(&crate::report::printable(n));
    }
    // What was read and what was not, in one line at the end: an audit that found nothing
    // should say what "nothing" covered.
    let others = if a.processes {
        format!(
            "{} other process environment(s) ({denied} not readable by this user)",
            envs.len() - 1
        )
    } else {
        "no other process (--no-processes)".to_string()
    };
    let coverage = format!(
        "runtime-audit read: this process's environment, {others}, {files_read} credential \
         file(s), {}",
        if a.endpoints {
            format!(
                "{} credential document(s) from the metadata endpoints ({} note(s) above)",
                found.blobs.len(),
                found.notes.len()
            )
        } else {
            "no credential endpoint (--no-endpoints)".to_string()
        }
    );
    let imds_v1 = found.imds_v1.is_some();
    if let Some(v1) = found.imds_v1 {
        warnings.push(("instance metadata service".to_string(), v1));
    }
    outcome = outcome.merge(s.scanner.held(&found.blobs, &warnings));
    let code = s.deliver(outcome)?;
    super::setup::say(&coverage);
    // An IMDSv1 endpoint is an exposure of its own, with or without a role behind it today.
    Ok(if imds_v1 && code == EXIT_CLEAN {
        EXIT_FINDINGS
    } else {
        code
    })
}

/// The endpoints, asked only by a build that may open network connections.
#[cfg(feature = "aws")]
fn endpoints(cfg: &runtime::EndpointConfig) -> runtime::Endpoints {
    runtime::endpoints(cfg)
}

#[cfg(not(feature = "aws"))]
fn endpoints(_: &runtime::EndpointConfig) -> runtime::Endpoints {
    runtime::Endpoints {
        notes: vec![
            "built without network features: the credential endpoints were not asked".into(),
        ],
        ..Default::default()
    }
}

/// The hook `install-hook` writes. It prefers the binary that installed it and falls back to
/// `leakhound` on PATH if that one has moved.
fn hook_script(exe: &str) -> String {
    let quoted = format!("'{}'", exe.replace('\'', r"'\''"));
    format!(
        "#!/bin/sh\n\
         # Installed by `leakhound install-hook`: blocks commits that add secrets.\n\
         # Mark a false positive with `leakhound:allow` on its line.\n\
         LEAKHOUND={quoted}\n\
         [ -x \"$LEAKHOUND\" ] || LEAKHOUND=leakhound\n\
         exec \"$LEAKHOUND\" git --staged\n"
    )
}

pub fn install_hook(repo: Option<&Path>, force: bool) -> Result<i32> {
    use std::os::unix::fs::PermissionsExt;
    let dir = repo.unwrap_or(Path::new("."));
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--git-path", "hooks/pre-commit"])
        .output()
        .context("running git")?;
    if !out.status.success() {
        bail!(
            "{}: not a git repository: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    // `--git-path` answers relative to the directory git ran in, and honours core.hooksPath.
    let hook = dir.join(String::from_utf8_lossy(&out.stdout).trim());
    let exe = std::env::current_exe().context("locating the leakhound binary")?;
    let script = hook_script(&exe.to_string_lossy());
    match std::fs::read(&hook) {
        Ok(existing) if existing == script.as_bytes() => {
            eprintln!("leakhound: {} is already installed", hook.display());
            return Ok(EXIT_CLEAN);
        }
        Ok(_) if !force => bail!(
            "{} exists; not replacing it (use --force, or call `leakhound git --staged` from it)",
            hook.display()
        ),
        _ => {}
    }
    if let Some(parent) = hook.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("{}", parent.display()))?;
    }
    // Written beside it and renamed: a hook is never seen half-written.
    let keep = crate::write::Keep {
        permissions: Some(std::fs::Permissions::from_mode(0o755)),
        modified: None,
    };
    crate::write::replace(&hook, script.as_bytes(), keep, || Ok(true))
        .with_context(|| format!("{}", hook.display()))?;
    eprintln!("leakhound: installed {}", hook.display());
    Ok(EXIT_CLEAN)
}
