//! Zip: entries by the central directory, or (when it is damaged or missing) recovered
//! from their local headers.

use super::*;

pub(super) fn zip<R: Read + io::Seek>(
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
    let mut z = match ::zip::ZipArchive::new(&mut data) {
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
    // Where each entry the central directory lists lies (its local header to the end of its
    // data): a local header anywhere else is an entry no extractor shows.
    let mut listed: Vec<(u64, u64)> = Vec::with_capacity(z.len());
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
        // Opening it read its local header: where its data starts is known.
        let data = f.data_start().unwrap_or(f.header_start() + 30);
        listed.push((f.header_start(), data.saturating_add(f.compressed_size())));
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
    drop(z);
    if !budget.stopped {
        orphans(name, &mut data, &at, &listed, depth, limits, budget, visit)?;
    }
    Ok(())
}

/// Entries behind a local header that the central directory does not list (#16): an
/// extractor never shows them, so nothing else looks there. Each is scanned from its local
/// header and named in a warning, and their count is given.
#[allow(clippy::too_many_arguments)]
fn orphans<R: Read + io::Seek>(
    name: &str,
    r: &mut Counting<R>,
    at: &Rc<Cell<u64>>,
    listed: &[(u64, u64)],
    depth: usize,
    limits: &Limits,
    budget: &mut Budget,
    visit: &mut dyn FnMut(Event<'_>),
) -> io::Result<()> {
    let mut pos = 0;
    let mut found: Vec<String> = Vec::new();
    while !budget.stopped {
        let Some(start) = next_local_header(r, pos)? else {
            break;
        };
        // A listed entry's data may hold the signature (a stored zip inside): skip it whole.
        if let Some(&(_, end)) = listed.iter().find(|(s, e)| (*s..*e).contains(&start)) {
            pos = end.max(start + 4);
            continue;
        }
        r.seek(io::SeekFrom::Start(start))?;
        pos = start + 4;
        let f = match ::zip::read::read_zipfile_from_stream(r) {
            Ok(Some(f)) => f,
            Ok(None) | Err(_) => continue,
        };
        let entry = String::from_utf8_lossy(f.name_raw()).into_owned();
        let path = format!("{name}!{entry}");
        found.push(entry);
        let not_listed = "not in the zip's central directory (no extractor shows it)";
        if !f.is_file() {
            drop(f);
        } else if f.encrypted() {
            visit(Event::Warning {
                path,
                message: format!("{not_listed}; encrypted, not scanned"),
            });
        } else if f.compressed_size() == 0 && f.compression() != ::zip::CompressionMethod::Stored {
            visit(Event::Warning {
                path,
                message: format!("{not_listed}; sized only in its data descriptor, not scanned"),
            });
        } else {
            visit(Event::Warning {
                path: path.clone(),
                message: format!("{not_listed}; scanned from its local header"),
            });
            let packed = || at.get().saturating_sub(start);
            take_entry(path, f, &packed, None, depth, limits, budget, visit)?;
        }
        pos = pos.max(at.get());
    }
    if !found.is_empty() {
        let names: Vec<String> = found.iter().map(|n| format!("{n:?}")).collect();
        visit(Event::Warning {
            path: name.to_string(),
            message: format!(
                "{} entr{} behind a local header but not in the central directory: {}",
                found.len(),
                if found.len() == 1 { "y" } else { "ies" },
                names.join(", ")
            ),
        });
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
        let f = match ::zip::read::read_zipfile_from_stream(r) {
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
        } else if f.compressed_size() == 0 && f.compression() != ::zip::CompressionMethod::Stored {
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
