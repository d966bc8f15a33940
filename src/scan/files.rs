//! Driving files, directories and standard input: what the walk reads is admitted and
//! scanned; what is too large to hold is admitted by its head and scanned as it is read.

use super::admit::{self, Admission, Admit};
use super::content::STREAM_CHUNK;
use super::{run::Run, ScanResults, Scanner};
use crate::model::Warning;
use crate::source::fs::{self, Event, Reader};
use crate::source::{self, Blob, Provenance};
use std::io::Read;

impl Scanner {
    /// Scan files and directories.
    pub fn paths(
        &self,
        opts: &fs::WalkOptions,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) -> ScanResults {
        let run = self.run(on_warning);
        let admit = self.admit_opts(opts.binary, opts.max_file_size);
        fs::walk(opts, &|event| match event {
            Event::Blob(b) => self.file(&run, b, &admit),
            Event::Stream(s) => self.stream(&run, s, &admit),
            Event::TooLarge { path, size } => {
                run.skip(fs::display_path(&path), admit::Skip::Large(Some(size)))
            }
            Event::Ignored(n) => run.collected().summary.skipped_ignored += n,
            Event::Error {
                path,
                message,
                named,
            } => {
                let path = path.display().to_string();
                run.warn(path.clone(), message);
                run.unreadable(path, named);
            }
        });
        run.finish()
    }

    /// A file or pipe too large to hold (or a pipe named on the command line), admitted by
    /// its head: an archive on disk is opened in place, anything else scanned in chunks.
    fn stream(&self, run: &Run, mut s: fs::Stream, opts: &Admit) {
        let path = s.provenance.display();
        if self.policy.path_allowed(&path) {
            return;
        }
        let pipe = matches!(s.rest, Reader::Pipe(_));
        let size = s.size.unwrap_or(s.head.len() as u64);
        let admission = if pipe {
            // Named on purpose and read as it comes: no head to judge, scanned as text.
            Admission::Scan(admit::Reading::TEXT)
        } else {
            admit::admit(s.provenance.name(), &s.head, size, opts)
        };
        let how = match admission {
            Admission::Skip(why) => return run.skip(path, why),
            Admission::Archive(_) => match (&self.archives, &mut s.rest) {
                (Some(a), Reader::File(f)) => {
                    // The head is not needed to open it: free it (up to 64 MiB) for the
                    // entries.
                    drop(std::mem::take(&mut s.head));
                    let prov = s.provenance.clone();
                    let inside = |p| prov.with_path(p);
                    source::archive::expand_file(&path, f, &a.limits, &mut |e| {
                        self.archive_event(run, a, &inside, e)
                    });
                    return;
                }
                // Only a file on disk can be opened in place.
                _ => admit::Reading::TEXT,
            },
            Admission::Scan(how) => how,
        };
        let (found, n, error) = self.chunked(run, &s.provenance, s.head, s.rest.as_read(), how);
        run.scanned(&s.provenance, n, found);
        if let Some(e) = error {
            if pipe {
                run.collected().summary.failed_inputs += 1;
            }
            let msg = format!("reading stopped after {n} bytes ({e}); scanned what was read");
            run.warn(path.clone(), msg);
        }
        if let Some(size) = s.size.filter(|&size| n < size) {
            let msg = format!(
                "shrank from {size} to {n} bytes while read (truncated?); scanned what was read"
            );
            run.warn(path, msg);
        }
    }

    /// Scan standard input: whole when it fits in a chunk, else a chunk at a time (memory
    /// stays bounded whatever its size).
    pub fn stdin(&self, on_warning: &(dyn Fn(&Warning) + Sync)) -> std::io::Result<ScanResults> {
        let run = self.run(on_warning);
        let provenance = Provenance::Stream {
            name: "<stdin>".into(),
        };
        // Named on purpose, like a pipe on the command line: scanned whatever it holds.
        let opts = self.admit_opts(true, None);
        let mut r = std::io::stdin().lock();
        let head = read_at_most(&mut r, STREAM_CHUNK + 1)?;
        if head.len() <= STREAM_CHUNK {
            let blob = Blob {
                provenance,
                data: head,
            };
            self.file(&run, blob, &opts);
            return Ok(run.finish());
        }
        let size = head.len() as u64;
        let how = match admit::admit(provenance.name(), &head, size, &opts) {
            // A zip's directory is at its end: it cannot be read as it streams.
            Admission::Archive(k) if k != source::archive::Kind::Zip => {
                if let Some(a) = &self.archives {
                    let inside = |p| provenance.with_path(p);
                    source::archive::expand_stream("<stdin>", head, r, &a.limits, &mut |e| {
                        self.archive_event(&run, a, &inside, e)
                    });
                }
                return Ok(run.finish());
            }
            Admission::Scan(how) => how,
            Admission::Archive(_) | Admission::Skip(_) => admit::Reading::TEXT,
        };
        let (found, n, error) = self.chunked(&run, &provenance, head, &mut r, how);
        run.scanned(&provenance, n, found);
        match error {
            Some(e) => Err(e),
            None => Ok(run.finish()),
        }
    }
}

/// Up to `limit` bytes of `r`, in a buffer that grows to no more than `limit`. A plain
/// `read_to_end` through `take` doubles its buffer past the limit when it reaches it: for the
/// head of a large standard input, 128 MiB held where 64 MiB are used, until the head is
/// scanned.
fn read_at_most(r: &mut impl Read, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    while out.len() < limit {
        let want = (2 * out.len()).max(64 << 10).min(limit);
        out.reserve_exact(want - out.len());
        // Filled to its capacity at most: `read_to_end` grows a buffer only past the
        // capacity it started with.
        Read::take(&mut *r, (want - out.len()) as u64).read_to_end(&mut out)?;
        if out.len() < want {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::read_at_most;

    /// The head of a large input takes the bytes asked for, in a buffer no larger.
    #[test]
    fn a_head_is_read_into_no_more_than_its_limit() {
        let input: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        for limit in [
            1,
            65_536,
            65_537,
            1 << 20,
            (1 << 21) + 1,
            2_999_999,
            3_000_000,
        ] {
            let head = read_at_most(&mut &input[..], limit).unwrap();
            assert_eq!(head, input[..limit], "{limit}");
            assert!(
                head.capacity() <= limit.max(64 << 10),
                "{limit}: {}",
                head.capacity()
            );
        }
        let all = read_at_most(&mut &input[..], 4_000_000).unwrap();
        assert_eq!(all, input);
    }
}
