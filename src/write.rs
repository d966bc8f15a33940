//! Replacing a file in place (an agent's settings, a transcript, a tool output it keeps): a
//! sibling written in full and renamed over it, so a reader sees the old file or the new one,
//! never half of either. And opening a log to append to ([`open_append`]).

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
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
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
}
