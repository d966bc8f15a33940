//! Formats read front to back: gzip (member after member), bzip2, xz and zstd streams, and
//! tar, whether plain or inside one of them.

use super::*;

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
pub(super) fn compressed(
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

pub(super) fn tar(
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
pub(super) fn tar_stream(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_names_lose_their_suffix() {
        assert_eq!(strip_suffix("a/b.txt.gz"), "a/b.txt");
        assert_eq!(strip_suffix("x.tgz"), "x.tar");
        assert_eq!(strip_suffix("x.tar.zst"), "x.tar");
        assert_eq!(strip_suffix("blob"), "content");
    }
}
