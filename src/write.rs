//! The one home of how leakhound writes files, and of "private" (0600, never through a
//! symlink, never half-written):
//! - [`replace`]: a file replaced in place (an agent's settings, a transcript, a tool output
//!   it keeps, the git hook `install-hook` writes): a sibling written in full and renamed over
//!   it, so a reader sees the old file or the new one, never half of either;
//! - [`private`]: state replaced the same way, created 0600 in a 0700 directory (the
//!   validation cache, the hook runs);
//! - [`create_private`]: state made once (the fingerprint key): linked into place only if
//!   nothing is there, so two runs starting at once agree on one;
//! - [`open_private`]: a report's `-o PATH`, truncated, 0600, a regular file only;
//! - [`open_append`]: a log to append to (`--audit-log`, a hook's `--report`, the MCP proxy's
//!   audit), 0600, a regular file only.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What the new file keeps of the old one.
#[derive(Default)]
pub struct Keep {
    /// Set before a byte is written, so the content is never more readable than these allow.
    pub permissions: Option<std::fs::Permissions>,
    pub modified: Option<SystemTime>,
}

/// Write `bytes` to a new sibling of `path` (created exclusively), then rename it over `path`
/// if `ready` says so; a caller that must check the file did not change meanwhile does it
/// there, as late as it can be. Whether it was replaced; the sibling is removed otherwise.
pub fn replace(
    path: &Path,
    bytes: &[u8],
    keep: Keep,
    ready: impl FnOnce() -> io::Result<bool>,
) -> io::Result<bool> {
    let tmp = sibling(path);
    let result = (|| {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        // Created no more readable than it will be (umask aside), then set exactly.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(
                keep.permissions
                    .as_ref()
                    .map_or(0o666, |p| p.mode() & 0o777),
            )
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        if let Some(p) = keep.permissions {
            f.set_permissions(p)?;
        }
        f.write_all(bytes)?;
        if let Some(m) = keep.modified {
            f.set_times(std::fs::FileTimes::new().set_modified(m))?;
        }
        f.sync_all()?;
        if !ready()? {
            return Ok(false);
        }
        std::fs::rename(&tmp, path)?;
        Ok(true)
    })();
    if !matches!(result, Ok(true)) {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Replace `path` with `body`, private: its directory created 0700 if missing, the file
/// 0600, written in full beside it and renamed over it.
pub fn private(path: &Path, body: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let keep = Keep {
        permissions: Some(std::fs::Permissions::from_mode(0o600)),
        modified: None,
    };
    replace(path, body, keep, || Ok(true)).map(drop)
}

/// Create `path` holding `body`, 0600, only if nothing is there: written in full to a
/// private sibling and hard-linked into place, so a reader never sees it half-written and of
/// two runs making it at once, one wins. Whether this call made it (`false`: it was there).
pub fn create_private(path: &Path, body: &[u8]) -> io::Result<bool> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = sibling(path);
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(body)?;
        f.sync_all()
    })();
    let linked = written.and_then(|_| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Open `path` to write a report to: a regular file is truncated, a new one created; a
/// symlink, FIFO, device or directory is refused rather than written through. Created 0600,
/// and an existing file made 0600.
pub fn open_private(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_file() {
            return Err(io::Error::other(
                "refusing to write: not a regular file (symlink, FIFO, device or directory)",
            ));
        }
    }
    let because = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| because("cannot open for writing", e))?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| because("cannot restrict permissions", e))?;
    Ok(f)
}

/// Open `path` to append to (an audit log, a JSON Lines report): created 0600, never through
/// a symlink, and only a regular file. Opened without blocking, so a FIFO put there fails at
/// once rather than waiting for a reader: `hook` and `mcp-proxy` would hang, and the agent
/// with them (#7). Writes to a regular file do not block either way.
pub fn open_append(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let not_regular = |what: &str| io::Error::other(format!("{what}, not a regular file"));
    let f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // What a FIFO without a reader (or a socket) answers a non-blocking open.
            Some(libc::ENXIO) => not_regular("a FIFO or socket"),
            Some(libc::ELOOP) => not_regular("a symlink"),
            _ => e,
        })?;
    let t = f.metadata()?.file_type();
    if !t.is_file() {
        return Err(not_regular(if t.is_fifo() {
            "a FIFO"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else if t.is_dir() {
            "a directory"
        } else {
            "something else"
        }));
    }
    Ok(f)
}

fn sibling(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.leakhound-tmp-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_symlink_is_refused_at_once_and_a_file_appended_to() {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Regression #7: without a reader this blocked for ever.
        let e = open_append(&fifo).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        // With a reader the open succeeds; the file type check still refuses it.
        let _reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let e = open_append(&fifo).unwrap_err();
        assert!(e.to_string().contains("a FIFO, not a regular file"), "{e}");

        let log = dir.path().join("audit.jsonl");
        std::os::unix::fs::symlink(&log, dir.path().join("link")).unwrap();
        let e = open_append(&dir.path().join("link")).unwrap_err();
        assert!(e.to_string().contains("a symlink"), "{e}");
        for line in ["a\n", "b\n"] {
            open_append(&log)
                .unwrap()
                .write_all(line.as_bytes())
                .unwrap();
        }
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\nb\n");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&log).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn private_files_are_0600_made_once_and_never_written_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let state = dir.path().join("state/leakhound/cache.json");
        private(&state, b"one").unwrap();
        private(&state, b"two").unwrap();
        assert_eq!(std::fs::read(&state).unwrap(), b"two");
        assert_eq!(mode(&state), 0o600);
        assert_eq!(mode(state.parent().unwrap()), 0o700);

        let key = dir.path().join("fingerprint.key");
        assert!(create_private(&key, b"first").unwrap());
        assert!(
            !create_private(&key, b"second").unwrap(),
            "the first one stays"
        );
        assert_eq!(std::fs::read(&key).unwrap(), b"first");
        assert_eq!(mode(&key), 0o600);

        let target = dir.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("report.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = open_private(&link).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        let out = dir.path().join("out.json");
        std::fs::write(&out, "old").unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
        open_private(&out).unwrap().write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
        assert_eq!(mode(&out), 0o600);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        // state/, fingerprint.key, target, report.json, out.json.
        assert_eq!(names.len(), 5, "no temporary file is left behind");
    }
}
