//! Replacing a file in place (an agent's settings, a transcript, a tool output it keeps): a
//! sibling written in full and renamed over it, so a reader sees the old file or the new one,
//! never half of either.

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

fn sibling(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.leakhound-tmp-{}", std::process::id()))
}
