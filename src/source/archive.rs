//! Archives and compressed files: zip (jar, war, whl, apk, docx...), tar, gzip, bzip2, xz and
//! zstd, nested up to a depth. Entries are read in memory one at a time (streamed out of tar
//! and the compressors), never written anywhere; their names are only ever reported.
//!
//! Bombs are bounded: total inflated bytes per outermost archive, entries, and the ratio of
//! inflated to compressed bytes. Past a limit the rest of that archive is skipped with a
//! warning; the scan goes on.

use std::cell::Cell;
use std::io::{self, Cursor, Read};
use std::rc::Rc;

/// Container and compression formats, told apart by their first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Zip,
    Tar,
    Gzip,
    Bzip2,
    Xz,
    Zstd,
}

/// What the bytes are, if an archive or a compressed stream.
pub fn sniff(head: &[u8]) -> Option<Kind> {
    let kind = match head {
        [b'P', b'K', 3, 4, ..] | [b'P', b'K', 5, 6, ..] => Kind::Zip,
        [0x1f, 0x8b, ..] => Kind::Gzip,
        [b'B', b'Z', b'h', b'1'..=b'9', ..] => Kind::Bzip2,
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => Kind::Xz,
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Kind::Zstd,
        _ if is_tar(head) => Kind::Tar,
        _ => return None,
    };
    Some(kind)
}

/// A POSIX or GNU tar header: `ustar` at offset 257.
fn is_tar(head: &[u8]) -> bool {
    head.len() >= 512 && &head[257..262] == b"ustar"
}

/// Guards against decompression bombs.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Archives inside archives, counting the outermost as 1.
    pub depth: usize,
    /// Inflated bytes per outermost archive.
    pub total: u64,
    pub entries: usize,
    /// Inflated bytes per compressed byte, checked once an entry is past 1 MiB.
    pub ratio: u64,
    /// Entries larger than this are skipped (as `--max-file-size` skips files).
    pub entry_size: Option<u64>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            depth: 3,
            total: 4 << 30,
            entries: 100_000,
            ratio: 200,
            entry_size: Some(64 << 20),
        }
    }
}

/// What expanding an archive met.
pub enum Event {
    /// A file inside: its path (`outer.zip!inner/file`) and bytes.
    File {
        path: String,
        data: Vec<u8>,
    },
    SkippedLarge,
    /// A problem; the rest of the scan goes on.
    Warning {
        path: String,
        message: String,
    },
}

/// Expand `data` (an archive or compressed file named `name`), handing each file inside to
/// `visit`. Nested archives are expanded up to the depth limit; at the limit they are handed
/// over as files.
pub fn expand(name: &str, data: &[u8], limits: &Limits, visit: &mut dyn FnMut(Event)) {
    let mut budget = Budget {
        left: limits.total,
        entries: 0,
        stopped: false,
    };
    expand_at(name, data, 1, limits, &mut budget, visit)
}

struct Budget {
    left: u64,
    entries: usize,
    /// A limit was hit: nothing more from this archive.
    stopped: bool,
}

fn expand_at(
    name: &str,
    data: &[u8],
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event),
) {
    let Some(kind) = sniff(data) else {
        visit(Event::File {
            path: name.to_string(),
            data: data.to_vec(),
        });
        return;
    };
    let r = match kind {
        Kind::Zip => zip(name, data, depth, limits, budget, visit),
        Kind::Tar => tar(name, data, depth, limits, budget, visit),
        _ => compressed(name, kind, data, depth, limits, budget, visit),
    };
    if let Err(e) = r {
        visit(Event::Warning {
            path: name.to_string(),
            message: e.to_string(),
        });
    }
}

/// A nested entry: expanded if it is an archive and the depth allows, else a file.
fn entry(
    path: String,
    data: Vec<u8>,
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event),
) {
    if sniff(&data).is_none() {
        visit(Event::File { path, data });
    } else if depth < limits.depth {
        expand_at(&path, &data, depth + 1, limits, budget, visit);
    } else {
        visit(Event::Warning {
            path,
            message: format!(
                "archive nested more than {} deep; not expanded",
                limits.depth
            ),
        });
    }
}

/// Read an entry of `declared` bytes (if known) into memory, within the limits. `packed`
/// says how many compressed bytes the entry has used so far. `Ok(None)` when it is larger
/// than an entry may be.
fn read_entry(
    path: &str,
    r: impl Read,
    packed: impl Fn() -> u64,
    declared: Option<u64>,
    limits: &Limits,
    budget: &mut Budget,
) -> io::Result<Option<Vec<u8>>> {
    budget.entries += 1;
    if budget.entries > limits.entries {
        budget.stopped = true;
        return Err(limit(path, format!("more than {} entries", limits.entries)));
    }
    if declared.zip(limits.entry_size).is_some_and(|(d, m)| d > m) {
        return Ok(None);
    }
    let cap = limits.entry_size.unwrap_or(u64::MAX).min(budget.left);
    let mut out = Vec::with_capacity(declared.unwrap_or(0).min(cap).min(64 << 20) as usize);
    let mut r = r.take(cap.saturating_add(1));
    let mut buf = [0u8; 64 << 10];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        let inflated = out.len() as u64;
        if inflated > 1 << 20 && inflated / packed().max(1) > limits.ratio {
            budget.stopped = true;
            return Err(limit(
                path,
                format!(
                    "inflates more than {}:1 (a decompression bomb?)",
                    limits.ratio
                ),
            ));
        }
    }
    if out.len() as u64 > cap {
        if cap == budget.left {
            budget.stopped = true;
            return Err(limit(
                path,
                format!("more than {} inflated bytes in one archive", limits.total),
            ));
        }
        return Ok(None);
    }
    budget.left -= out.len() as u64;
    Ok(Some(out))
}

/// Compressed bytes read since now.
fn since(n: &Rc<Cell<u64>>) -> impl Fn() -> u64 {
    let (n, start) = (n.clone(), n.get());
    move || n.get() - start
}

fn limit(path: &str, what: String) -> io::Error {
    io::Error::other(format!(
        "{path}: limit reached, rest of the archive skipped: {what}"
    ))
}

/// Counts the bytes read through it (the compressed side of a decoder).
struct Counting<R> {
    inner: R,
    n: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.n.set(self.n.get() + n as u64);
        Ok(n)
    }
}

/// A decoder for a compressed stream.
pub fn decoder<'a>(kind: Kind, r: impl Read + 'a) -> io::Result<Box<dyn Read + 'a>> {
    Ok(match kind {
        Kind::Gzip => Box::new(flate2::read::MultiGzDecoder::new(r)),
        Kind::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(r)),
        Kind::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(r)),
        Kind::Zstd => Box::new(zstd::stream::read::Decoder::new(r)?),
        Kind::Zip | Kind::Tar => return Err(io::Error::other("not a compressed stream")),
    })
}

/// gzip, bzip2, xz, zstd: one stream holding a tar, or a single file (`a.txt.gz!a.txt`).
fn compressed(
    name: &str,
    kind: Kind,
    data: &[u8],
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event),
) -> io::Result<()> {
    let n = Rc::new(Cell::new(0));
    let dec = decoder(
        kind,
        Counting {
            inner: data,
            n: n.clone(),
        },
    )?;
    let mut dec = io::BufReader::with_capacity(64 << 10, dec);
    let head = io::BufRead::fill_buf(&mut dec)?.to_vec();
    // A tar inside is read entry by entry, never whole.
    if head.len() >= 512 && is_tar(&head) || head.len() < 512 && tar_prefix(&head) {
        return tar_stream(name, dec, n, depth, limits, budget, visit);
    }
    let base = name.rsplit(['/', '!']).next().unwrap_or(name);
    let inner = format!("{name}!{}", strip_suffix(base));
    match read_entry(&inner, dec, since(&n), None, limits, budget)? {
        Some(d) => entry(inner, d, depth, limits, budget, visit),
        None => visit(Event::SkippedLarge),
    }
    Ok(())
}

/// A short first read may hold only part of a tar header; check what there is.
fn tar_prefix(head: &[u8]) -> bool {
    head.len() >= 262 && &head[257..262] == b"ustar"
}

fn strip_suffix(name: &str) -> String {
    for s in [".tgz", ".tbz2", ".txz", ".tzst"] {
        if let Some(stem) = name.strip_suffix(s) {
            return format!("{stem}.tar");
        }
    }
    for s in [".gz", ".bz2", ".xz", ".zst", ".zstd"] {
        if let Some(stem) = name.strip_suffix(s) {
            return stem.to_string();
        }
    }
    "content".to_string()
}

fn tar(
    name: &str,
    data: &[u8],
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event),
) -> io::Result<()> {
    let n = Rc::new(Cell::new(0));
    let r = Counting {
        inner: data,
        n: n.clone(),
    };
    tar_stream(name, r, n, depth, limits, budget, visit)
}

/// A tar's regular files, streamed. Links, devices and directories are skipped; paths are
/// reported as written in the archive (absolute or with `..`), never used.
fn tar_stream(
    name: &str,
    r: impl Read,
    compressed: Rc<Cell<u64>>,
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event),
) -> io::Result<()> {
    let mut archive = tar::Archive::new(r);
    for e in archive.entries()? {
        if budget.stopped {
            break;
        }
        let e = e?;
        if !e.header().entry_type().is_file() {
            continue;
        }
        let path = format!("{name}!{}", String::from_utf8_lossy(&e.path_bytes()));
        let size = e.header().size().ok();
        match read_entry(&path, e, since(&compressed), size, limits, budget)? {
            Some(d) => entry(path, d, depth, limits, budget, visit),
            None => visit(Event::SkippedLarge),
        }
    }
    Ok(())
}

fn zip(
    name: &str,
    data: &[u8],
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event),
) -> io::Result<()> {
    let mut z = zip::ZipArchive::new(Cursor::new(data)).map_err(io::Error::other)?;
    for i in 0..z.len() {
        if budget.stopped {
            break;
        }
        let f = match z.by_index(i) {
            Ok(f) => f,
            Err(e) => {
                visit(Event::Warning {
                    path: format!("{name}!#{i}"),
                    message: format!("unreadable zip entry: {e}"),
                });
                continue;
            }
        };
        if !f.is_file() {
            continue;
        }
        let path = format!("{name}!{}", String::from_utf8_lossy(f.name_raw()));
        if f.encrypted() {
            visit(Event::Warning {
                path,
                message: "encrypted zip entry; not scanned".into(),
            });
            continue;
        }
        // The entry's compressed size is known up front: the ratio is measured against it.
        let packed = f.compressed_size();
        match read_entry(&path, f, || packed, None, limits, budget) {
            Ok(Some(d)) => entry(path, d, depth, limits, budget, visit),
            Ok(None) => visit(Event::SkippedLarge),
            Err(e) if budget.stopped => return Err(e),
            Err(e) => visit(Event::Warning {
                path,
                message: e.to_string(),
            }),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_formats_by_their_first_bytes() {
        assert_eq!(sniff(b"PK\x03\x04rest"), Some(Kind::Zip));
        assert_eq!(sniff(&[0x1f, 0x8b, 8, 0]), Some(Kind::Gzip));
        assert_eq!(sniff(b"BZh91AY"), Some(Kind::Bzip2));
        assert_eq!(sniff(b"hello"), None);
        let mut t = vec![0u8; 512];
        t[257..262].copy_from_slice(b"ustar");
        assert_eq!(sniff(&t), Some(Kind::Tar));
    }

    #[test]
    fn compressed_names_lose_their_suffix() {
        assert_eq!(strip_suffix("a/b.txt.gz"), "a/b.txt");
        assert_eq!(strip_suffix("x.tgz"), "x.tar");
        assert_eq!(strip_suffix("x.tar.zst"), "x.tar");
        assert_eq!(strip_suffix("blob"), "content");
    }
}
