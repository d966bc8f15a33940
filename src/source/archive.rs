//! Archives and compressed files: zip (jar, war, whl, apk, docx...), tar, gzip, bzip2, xz and
//! zstd, nested up to a depth. Entries are read in memory one at a time (streamed out of tar
//! and the compressors), never written anywhere; their names are only ever reported.
//!
//! Bombs are bounded: total inflated bytes per outermost archive, entries, and the ratio of
//! inflated to compressed bytes. Past a limit the rest of that archive is skipped with a
//! warning; the scan goes on.

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
/// needs to seek; the others are streamed). `head` is its first bytes, for sniffing.
pub fn expand_file(
    name: &str,
    file: &mut (impl Read + io::Seek),
    limits: &Limits,
    visit: &mut dyn FnMut(Event<'_>),
) {
    let mut budget = Budget::new(limits);
    let r = (|| -> io::Result<()> {
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

/// gzip members one after another, as `gzip -d` reads them: zero bytes after the last member
/// (padding, which `gzip -t` accepts) end the stream; anything else after it is damage.
struct Gz<R: io::BufRead> {
    member: Option<flate2::bufread::GzDecoder<R>>,
}

impl<R: io::BufRead> Read for Gz<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(m) = self.member.as_mut() else {
                return Ok(0);
            };
            let n = m.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let Some(m) = self.member.take() else {
                return Ok(0);
            };
            let mut r = m.into_inner();
            let rest = r.fill_buf()?;
            if rest.is_empty() {
                return Ok(0);
            }
            if rest.starts_with(&[0x1f, 0x8b]) || rest.len() == 1 && rest[0] == 0x1f {
                self.member = Some(flate2::bufread::GzDecoder::new(r));
                continue;
            }
            loop {
                let rest = r.fill_buf()?;
                if rest.is_empty() {
                    return Ok(0);
                }
                if rest.iter().any(|&b| b != 0) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "garbage after the last gzip member",
                    ));
                }
                let n = rest.len();
                r.consume(n);
            }
        }
    }
}

/// gzip, bzip2, xz, zstd: one stream holding a tar, or a single file (`a.txt.gz!a.txt`).
fn compressed(
    name: &str,
    kind: Kind,
    data: impl Read,
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event<'_>),
) -> io::Result<()> {
    let n = Rc::new(Cell::new(0));
    let counted = Counting {
        inner: data,
        n: n.clone(),
    };
    let dec: Box<dyn Read> = if kind == Kind::Gzip {
        let r = io::BufReader::with_capacity(64 << 10, counted);
        Box::new(Gz {
            member: Some(flate2::bufread::GzDecoder::new(r)),
        })
    } else {
        decoder(kind, counted)?
    };
    let mut dec = io::BufReader::with_capacity(64 << 10, dec);
    // Damage in the first block leaves nothing to scan: say so, and scan what came out.
    let head = match io::BufRead::fill_buf(&mut dec) {
        Ok(h) => h.to_vec(),
        Err(e) => {
            return Err(io::Error::other(format!(
                "damaged from the start ({e}); nothing could be read"
            )))
        }
    };
    // A tar inside is read entry by entry, never whole.
    if head.len() >= 512 && is_tar(&head) || head.len() < 512 && tar_prefix(&head) {
        return tar_stream(name, dec, n, depth, limits, budget, visit);
    }
    let base = name.rsplit(['/', '!']).next().unwrap_or(name);
    let inner = format!("{name}!{}", strip_suffix(base));
    take_entry(inner, dec, &since(&n), None, depth, limits, budget, visit)
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
    visit: &mut dyn FnMut(Event<'_>),
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
    visit: &mut dyn FnMut(Event<'_>),
) -> io::Result<()> {
    let mut archive = tar::Archive::new(r);
    for e in archive.entries()? {
        if budget.stopped {
            break;
        }
        let e = e.map_err(|e| {
            io::Error::other(format!(
                "damaged ({e}); the entries before the damage were scanned"
            ))
        })?;
        if !e.header().entry_type().is_file() {
            continue;
        }
        let path = format!("{name}!{}", String::from_utf8_lossy(&e.path_bytes()));
        let size = e.header().size().ok();
        take_entry(
            path,
            e,
            &since(&compressed),
            size,
            depth,
            limits,
            budget,
            visit,
        )?;
    }
    Ok(())
}

fn zip<R: Read + io::Seek>(
    name: &str,
    data: R,
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event<'_>),
) -> io::Result<()> {
    // The reader's position, to measure each entry's compressed bytes as it inflates.
    let at = Rc::new(Cell::new(0));
    let mut data = Counting {
        inner: data,
        n: at.clone(),
    };
    let mut z = match zip::ZipArchive::new(&mut data) {
        Ok(z) => z,
        Err(e) => {
            // The central directory is damaged or missing (a cut download): the entries are
            // still there, each behind its local header.
            visit(Event::Warning {
                path: name.to_string(),
                message: format!("damaged zip ({e}); entries recovered from their local headers"),
            });
            return local_headers(name, &mut data, &at, depth, limits, budget, visit);
        }
    };
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
        let header = f.header_start();
        let packed = || at.get().saturating_sub(header);
        // The declared size is not trusted (a bomb lies): the guard measures what inflates.
        take_entry(path, f, &packed, None, depth, limits, budget, visit)?;
    }
    Ok(())
}

/// A zip's entries read from their local headers, front to back, skipping anything that is
/// not one (damage, a data-descriptor entry whose size is unknown here).
fn local_headers<R: Read + io::Seek>(
    name: &str,
    r: &mut Counting<R>,
    at: &Rc<Cell<u64>>,
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event<'_>),
) -> io::Result<()> {
    let mut pos = 0;
    let mut found = 0;
    while !budget.stopped {
        let Some(start) = next_local_header(r, pos)? else {
            break;
        };
        r.seek(io::SeekFrom::Start(start))?;
        pos = start + 4;
        let f = match zip::read::read_zipfile_from_stream(r) {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(_) => continue,
        };
        found += 1;
        if !f.is_file() {
            drop(f);
            pos = pos.max(at.get());
            continue;
        }
        let path = format!("{name}!{}", String::from_utf8_lossy(f.name_raw()));
        if f.encrypted() {
            visit(Event::Warning {
                path,
                message: "encrypted zip entry; not scanned".into(),
            });
        } else if f.compressed_size() == 0 && f.compression() != zip::CompressionMethod::Stored {
            visit(Event::Warning {
                path,
                message: "entry sized only in its data descriptor; not recoverable without the central directory".into(),
            });
        } else {
            let packed = || at.get().saturating_sub(start);
            take_entry(path, f, &packed, None, depth, limits, budget, visit)?;
        }
        pos = pos.max(at.get());
    }
    if found == 0 {
        return Err(io::Error::other("no readable zip entry"));
    }
    Ok(())
}

/// Offset of the next `PK\3\4` at or after `from`.
fn next_local_header(r: &mut (impl Read + io::Seek), from: u64) -> io::Result<Option<u64>> {
    const SIG: &[u8] = b"PK\x03\x04";
    r.seek(io::SeekFrom::Start(from))?;
    let mut buf = vec![0u8; 64 << 10];
    let (mut base, mut kept) = (from, 0);
    loop {
        let n = r.read(&mut buf[kept..])?;
        if n == 0 {
            return Ok(None);
        }
        let end = kept + n;
        if let Some(p) = memchr::memmem::find(&buf[..end], SIG) {
            return Ok(Some(base + p as u64));
        }
        // Keep the last bytes: a signature may straddle two reads.
        let keep = (SIG.len() - 1).min(end);
        buf.copy_within(end - keep..end, 0);
        base += (end - keep) as u64;
        kept = keep;
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
    fn compressed_names_lose_their_suffix() {
        assert_eq!(strip_suffix("a/b.txt.gz"), "a/b.txt");
        assert_eq!(strip_suffix("x.tgz"), "x.tar");
        assert_eq!(strip_suffix("x.tar.zst"), "x.tar");
        assert_eq!(strip_suffix("blob"), "content");
    }
}
