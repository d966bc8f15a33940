//! Archives and compressed files: zip (jar, war, whl, apk, docx...), tar, gzip, bzip2, xz and
//! zstd, nested up to a depth. Entries are read in memory one at a time (streamed out of tar
//! and the compressors), never written anywhere; their names are only ever reported.
//!
//! Bombs are bounded: total inflated bytes per outermost archive, entries, and the ratio of
//! inflated to compressed bytes. Past a limit the rest of that archive is skipped with a
//! warning; the scan goes on.

mod compressed;
mod zip;

pub use compressed::decoder;
use compressed::{compressed, tar, tar_stream};
use zip::zip;

use std::cell::Cell;
use std::io::{self, Cursor, Read, Seek};
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
    /// Inflated bytes per compressed byte, measured as an entry inflates once it is past
    /// [`RATIO_FLOOR`]: past it, that entry is cut (the rest of the archive goes on).
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

/// The ratio is not checked below this many inflated bytes: small, very compressible files
/// (a blank image, a config of spaces) are common and harmless.
pub const RATIO_FLOOR: u64 = 8 << 20;
/// Entry bytes held in memory at once; a larger entry (when the size limit allows it) is
/// handed over as a stream and scanned in chunks.
pub const ENTRY_MEM: u64 = 64 << 20;

/// What expanding an archive met.
pub enum Event<'a> {
    /// A file inside: its path (`outer.zip!inner/file`) and bytes.
    File { path: String, data: Vec<u8> },
    /// A file inside too large to hold: its first bytes, then the rest to read.
    Stream {
        path: String,
        head: Vec<u8>,
        rest: &'a mut dyn Read,
    },
    /// A file inside larger than the size limit: not scanned.
    SkippedLarge { path: String, size: Option<u64> },
    /// A problem; the rest of the scan goes on.
    Warning { path: String, message: String },
}

/// Expand `data` (an archive or compressed file named `name`), handing each file inside to
/// `visit`. Nested archives are expanded up to the depth limit; at the limit they are handed
/// over as files.
pub fn expand(name: &str, data: &[u8], limits: &Limits, visit: &mut dyn FnMut(Event<'_>)) {
    let mut budget = Budget::new(limits);
    expand_at(name, data, 1, limits, &mut budget, visit)
}

/// [`expand`] for an archive too large to hold in memory, read from a seekable file (zip
/// needs to seek; the others are streamed), from its start wherever its position is.
pub fn expand_file(
    name: &str,
    file: &mut (impl Read + io::Seek),
    limits: &Limits,
    visit: &mut dyn FnMut(Event<'_>),
) {
    let mut budget = Budget::new(limits);
    let r = (|| -> io::Result<()> {
        // The caller has usually read the file's first bytes already (its first 64 KiB, or
        // 64 MiB when it grew past the streaming size while read): sniffed from where the
        // reading stopped, the magic bytes were never seen (#5).
        file.seek(io::SeekFrom::Start(0))?;
        let mut head = vec![0; 512];
        let mut got = 0;
        while got < head.len() {
            match file.read(&mut head[got..])? {
                0 => break,
                n => got += n,
            }
        }
        head.truncate(got);
        file.seek(io::SeekFrom::Start(0))?;
        let Some(kind) = sniff(&head) else {
            return Err(io::Error::other("not an archive"));
        };
        let r = io::BufReader::with_capacity(256 << 10, file);
        match kind {
            Kind::Zip => zip(name, r, 1, limits, &mut budget, visit),
            Kind::Tar => {
                let n = Rc::new(Cell::new(0));
                let c = Counting {
                    inner: r,
                    n: n.clone(),
                };
                tar_stream(name, c, n, 1, limits, &mut budget, visit)
            }
            _ => compressed(name, kind, r, 1, limits, &mut budget, visit),
        }
    })();
    if let Err(e) = r {
        visit(Event::Warning {
            path: name.to_string(),
            message: e.to_string(),
        });
    }
}

/// [`expand`] for an archive on a stream too large to hold (standard input): `head` is its
/// first bytes, `rest` the remainder. A tar or compressed stream is read as it comes; a zip
/// cannot be (its directory is at its end).
pub fn expand_stream(
    name: &str,
    head: Vec<u8>,
    rest: impl Read,
    limits: &Limits,
    visit: &mut dyn FnMut(Event<'_>),
) {
    let mut budget = Budget::new(limits);
    let kind = sniff(&head);
    let r = Cursor::new(head).chain(rest);
    let r = match kind {
        Some(Kind::Tar) => {
            let n = Rc::new(Cell::new(0));
            let c = Counting {
                inner: r,
                n: n.clone(),
            };
            tar_stream(name, c, n, 1, limits, &mut budget, visit)
        }
        Some(Kind::Zip) | None => Err(io::Error::other("not a streamable archive")),
        Some(kind) => compressed(name, kind, r, 1, limits, &mut budget, visit),
    };
    if let Err(e) = r {
        visit(Event::Warning {
            path: name.to_string(),
            message: e.to_string(),
        });
    }
}

struct Budget {
    left: u64,
    entries: usize,
    /// A limit was hit: nothing more from this archive.
    stopped: bool,
}

impl Budget {
    fn new(limits: &Limits) -> Budget {
        Budget {
            left: limits.total,
            entries: 0,
            stopped: false,
        }
    }
}

fn expand_at(
    name: &str,
    data: &[u8],
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event<'_>),
) {
    let Some(kind) = sniff(data) else {
        visit(Event::File {
            path: name.to_string(),
            data: data.to_vec(),
        });
        return;
    };
    let r = match kind {
        Kind::Zip => zip(name, Cursor::new(data), depth, limits, budget, visit),
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
    visit: &mut dyn FnMut(Event<'_>),
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

/// Why a guarded entry stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trip {
    /// Inflating past the ratio: a bomb, or a very repetitive file.
    Ratio,
    /// Past the bytes it may inflate to (the entry size limit or the archive's budget).
    Cap,
    /// The compressed data is damaged (bad CRC, truncated, garbage).
    Broken,
}

/// Reads an entry while measuring it: stops (as at its end) when the entry inflates past the
/// ratio, past its cap, or at damage, and says which.
struct Guard<'p, R> {
    inner: R,
    /// Compressed bytes this entry has used so far.
    packed: &'p dyn Fn() -> u64,
    inflated: u64,
    ratio: u64,
    cap: u64,
    trip: Option<Trip>,
    error: Option<io::Error>,
}

impl<R: Read> Read for Guard<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.trip.is_some() || buf.is_empty() {
            return Ok(0);
        }
        let n = loop {
            match self.inner.read(buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.trip = Some(Trip::Broken);
                    self.error = Some(e);
                    return Ok(0);
                }
            }
        };
        let mut n = n as u64;
        if self.inflated + n > self.cap {
            n = self.cap - self.inflated;
            self.trip = Some(Trip::Cap);
        }
        self.inflated += n;
        if self.inflated > RATIO_FLOOR && self.inflated / (self.packed)().max(1) > self.ratio {
            self.trip = Some(Trip::Ratio);
        }
        Ok(n as usize)
    }
}

/// Read one entry of `declared` bytes (if known) within the limits and hand it to `visit`:
/// whole, or as a stream when larger than [`ENTRY_MEM`]. An entry cut short (a bomb, damage)
/// is scanned as far as it was read, with a warning naming it. `Err` only when the whole
/// archive must stop (too many entries, its inflated budget spent).
#[allow(clippy::too_many_arguments)]
fn take_entry(
    path: String,
    r: impl Read,
    packed: &dyn Fn() -> u64,
    declared: Option<u64>,
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event<'_>),
) -> io::Result<()> {
    budget.entries += 1;
    if budget.entries > limits.entries {
        budget.stopped = true;
        return Err(limit(
            &path,
            format!("more than {} entries", limits.entries),
        ));
    }
    if let (Some(d), Some(m)) = (declared, limits.entry_size) {
        if d > m {
            visit(Event::SkippedLarge {
                path,
                size: Some(d),
            });
            return Ok(());
        }
    }
    let entry_cap = limits.entry_size.unwrap_or(u64::MAX);
    let mut g = Guard {
        inner: r,
        packed,
        inflated: 0,
        ratio: limits.ratio,
        cap: entry_cap.min(budget.left),
        trip: None,
        error: None,
    };
    let mut out = Vec::with_capacity(declared.unwrap_or(0).min(ENTRY_MEM) as usize);
    (&mut g).take(ENTRY_MEM + 1).read_to_end(&mut out)?;
    let mut streamed = false;
    if out.len() as u64 > ENTRY_MEM {
        streamed = true;
        if sniff(&out).is_some() {
            // Expanding it would mean holding it: name it rather than hold it.
            visit(Event::Warning {
                path: path.clone(),
                message: format!(
                    "archive inside an archive larger than {}; not expanded",
                    crate::model::human_bytes(ENTRY_MEM)
                ),
            });
        } else {
            visit(Event::Stream {
                path: path.clone(),
                head: std::mem::take(&mut out),
                rest: &mut g,
            });
        }
    }
    budget.left = budget.left.saturating_sub(g.inflated);
    let scanned = g.inflated;
    let (trip, error) = (g.trip, g.error.take());
    let whole = |out, budget: &mut Budget, visit: &mut dyn FnMut(Event<'_>)| {
        if !streamed {
            entry(path.clone(), out, depth, limits, budget, visit);
        }
    };
    match trip {
        None => whole(out, budget, visit),
        Some(Trip::Cap) if entry_cap <= budget.left + scanned && !streamed => {
            visit(Event::SkippedLarge {
                path,
                size: declared,
            })
        }
        Some(Trip::Cap) if entry_cap <= budget.left + scanned => visit(Event::Warning {
            path,
            message: format!(
                "larger than the size limit ({} bytes); only its first {scanned} bytes were scanned",
                entry_cap
            ),
        }),
        Some(Trip::Cap) => {
            budget.stopped = true;
            return Err(limit(
                &path,
                format!("more than {} inflated bytes in one archive", limits.total),
            ));
        }
        Some(Trip::Ratio) => {
            whole(out, budget, visit);
            visit(Event::Warning {
                path,
                message: format!(
                    "inflates more than {}:1 (a decompression bomb?); entry cut after {scanned} bytes, the rest of it not scanned",
                    limits.ratio
                ),
            });
        }
        Some(Trip::Broken) => {
            whole(out, budget, visit);
            let e = error.map(|e| e.to_string()).unwrap_or_default();
            visit(Event::Warning {
                path,
                message: format!(
                    "damaged after {scanned} inflated bytes ({e}); scanned up to the damage"
                ),
            });
        }
    }
    Ok(())
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

/// Counts the bytes read through it (the compressed side of a decoder); for a seekable
/// reader, its position.
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

impl<R: io::Seek> io::Seek for Counting<R> {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        let at = self.inner.seek(to)?;
        self.n.set(at);
        Ok(at)
    }
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
    fn a_file_is_expanded_from_its_start_wherever_it_was_read_to() {
        // Regression #5: the scanner reads a large file's head before handing it over, and
        // the archive was then sniffed from where that read stopped.
        use std::io::{Seek, Write};
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"TOKEN=x\n").unwrap();
        let mut file = Cursor::new(gz.finish().unwrap());
        file.seek(io::SeekFrom::End(0)).unwrap();
        let mut got = Vec::new();
        expand_file(
            "a.env.gz",
            &mut file,
            &Limits::default(),
            &mut |e| match e {
                Event::File { path, data } => got.push((path, data)),
                Event::Warning { message, .. } => panic!("{message}"),
                _ => {}
            },
        );
        assert_eq!(
            got,
            vec![("a.env.gz!a.env".to_string(), b"TOKEN=x\n".to_vec())]
        );
    }
}
