//! A large input scanned in chunks on every core: one thread reads (it holds the reader,
//! which need not be `Send`), workers scan whole chunks (matches and their findings),
//! and the findings come back in order, their lines and columns moved to where each chunk
//! begins. Memory stays bounded whatever the size: a few chunk buffers circulate, and a
//! chunk's findings are kept only until the ones before it are in.

use super::admit::{Form, Reading};
use super::content::{name_variables, notebook_as_text, OVERLAP};
use super::{run::Run, Scanner};
use crate::detect::Detection;
use crate::model::{Finding, Origin};
use crate::source::Provenance;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::mpsc;

/// Bytes a chunk reports matches for (its own part); each buffer also holds `OVERLAP` on
/// either side. About a core's L2 (2 MB here): a chunk is read again after the walk (the
/// hits' bytes, the windows' searches, the findings' lines), and at 8 MiB those reads missed
/// it; the 1 GiB file took 4–7 % less time at 2 MiB (RESULTS part AC), its peak
/// 20 MB less. At 1 MiB the overlap, rescanned on both sides (32 KiB each), cost more than
/// that gained.
const CHUNK: usize = 2 << 20;

/// One chunk handed to a worker: its bytes (from `base`), which of them it reports
/// (`own_from..own_to`, offsets in the input) and where the next chunk begins.
struct Piece {
    index: usize,
    buf: Vec<u8>,
    base: usize,
    own_from: usize,
    own_to: usize,
    next: usize,
}

/// What a worker gives back: the chunk's findings with lines and columns counted from its
/// first byte (line 1, column 1), how far it moves the origin, and its buffer for reuse.
struct Scanned {
    index: usize,
    found: Vec<Finding>,
    step: Origin,
    buf: Vec<u8>,
}

impl Scanner {
    /// A large input read and scanned chunk by chunk: `head` (its first bytes, already read)
    /// then `r` to its end, read as admitted. Each chunk's matches are the ones that start in
    /// its own part; the overlap gives every such match its full window and context, so the
    /// findings do not depend on where chunks begin. A file that shrinks while read just ends
    /// early (no mapping, so no SIGBUS). Large inputs skip the content cache, and a notebook
    /// this large is read as text. Returns the findings, the bytes read, and the read error
    /// that ended it early, if any.
    pub(super) fn chunked(
        &self,
        run: &Run,
        provenance: &Provenance,
        head: Vec<u8>,
        r: &mut dyn Read,
        how: Reading,
    ) -> (Vec<Finding>, u64, Option<std::io::Error>) {
        if how.form == Form::Notebook {
            run.warn(provenance.display(), notebook_as_text());
        }
        // UTF-16 text, told by its head, is read as text in every chunk: as bytes, its NULs
        // hide every keyword. Its chunks begin at even offsets, on a character.
        let utf16 = crate::decode::looks_utf16(&head);
        let mut input = HeadThen {
            head,
            at: 0,
            rest: r,
        };
        let workers = rayon::current_num_threads().max(1);
        // Buffers in flight: one per worker, one queued for each, one being read.
        let buffers = 2 * workers + 1;
        let (to_work, work) = crossbeam_channel::bounded::<Piece>(workers);
        let (to_done, done) = mpsc::channel::<Scanned>();
        std::thread::scope(|s| {
            for _ in 0..workers {
                let (work, to_done) = (work.clone(), to_done.clone());
                s.spawn(move || {
                    for p in work {
                        let mut result = self.piece(run, provenance, how.form, utf16, p);
                        // What the report leaves out is let go here, chunk by chunk, not
                        // held to the end of the input.
                        run.thin(&mut result.found);
                        if to_done.send(result).is_err() {
                            break;
                        }
                    }
                });
            }
            drop((work, to_done));
            let mut pool: Vec<Vec<u8>> = Vec::new();
            let mut made = 0;
            let mut order = InOrder::default();
            let mut buf = Vec::with_capacity(CHUNK + 2 * OVERLAP);
            let (mut base, mut own_from, mut index) = (0, 0, 0);
            let (mut eof, mut error) = (false, None);
            loop {
                if !eof && buf.len() < CHUNK + 2 * OVERLAP {
                    let at = buf.len();
                    (eof, error) = input.fill(&mut buf, CHUNK + 2 * OVERLAP);
                    how.nul.apply(&mut buf[at..]);
                }
                let len = base + buf.len();
                let own_to = if eof { len } else { len - OVERLAP };
                let mut next = if eof { len } else { own_to - OVERLAP };
                if utf16 && !eof {
                    next &= !1;
                }
                // Never inside a UTF-8 character: columns count characters, and one cut in
                // two would count twice.
                while !eof
                    && !utf16
                    && next > base
                    && buf[next - base] & 0xC0 == 0x80
                    && own_to - next < OVERLAP + 3
                {
                    next -= 1;
                }
                // The next buffer starts with this one's tail: its leading overlap.
                let tail = buf.get(next - base..).unwrap_or_default();
                let mut fresh = match pool.pop() {
                    Some(b) => b,
                    None if made + 1 < buffers => {
                        made += 1;
                        Vec::with_capacity(CHUNK + 2 * OVERLAP)
                    }
                    // Every buffer is out: wait for a worker to give one back.
                    None => {
                        let back = done.recv().expect("a worker holds every buffer");
                        order.add(back, &mut pool);
                        pool.pop().expect("a buffer came back")
                    }
                };
                fresh.clear();
                if !eof {
                    fresh.extend_from_slice(tail);
                }
                let piece = Piece {
                    index,
                    buf: std::mem::replace(&mut buf, fresh),
                    base,
                    own_from,
                    own_to,
                    next,
                };
                to_work
                    .send(piece)
                    .expect("workers run until the sender is dropped");
                // Collect what is ready without waiting, so finished buffers return.
                while let Ok(back) = done.try_recv() {
                    order.add(back, &mut pool);
                }
                index += 1;
                if eof {
                    drop(to_work);
                    for back in done.iter() {
                        order.add(back, &mut pool);
                    }
                    return (order.out, len as u64, error);
                }
                (base, own_from) = (next, own_to);
            }
        })
    }

    /// One chunk scanned whole: its matches mask the contexts; it reports the ones that
    /// start in its own part. A chunk gets no decoded views, as no input over
    /// `decode::views`' limit does: a large file is a log or a dump more than an encoded
    /// secret's place. But a chunk of UTF-16 text is read as the text it is, with the views
    /// of that text (`detect`): a few megabytes each, their maps kept as runs.
    fn piece(
        &self,
        run: &Run,
        provenance: &Provenance,
        form: Form,
        utf16: bool,
        p: Piece,
    ) -> Scanned {
        let hay = &p.buf[..];
        let mut scanned = if utf16 {
            crate::detect::detect(&self.engine, hay)
        } else {
            Detection {
                plain: self.engine.scan(hay),
                decoded: Vec::new(),
            }
        };
        let all = scanned.spans();
        scanned.retain(|m| (p.own_from..p.own_to).contains(&(p.base + m.start)));
        let from = Origin {
            offset: p.base,
            ..Origin::START
        };
        let mut found = self.found(run, hay, &scanned, &all, provenance, from);
        if form == Form::Env {
            name_variables(&mut found, hay, p.base);
        }
        // Lines and columns of UTF-16 text are the text's, as its findings' are.
        let before_next = &hay[..p.next - p.base];
        let step = match utf16
            .then(|| crate::decode::utf16_text(before_next))
            .flatten()
        {
            Some(text) => {
                let mut step = Origin::START;
                step.advance(&text);
                step.offset = before_next.len();
                step
            }
            None => {
                let next = p.next - p.base;
                // The last finding before `next`: where it starts in `hay`, and its line.
                let last = found
                    .iter()
                    .filter(|f| (p.base..p.base + next).contains(&f.start))
                    .max_by_key(|f| f.start)
                    .map(|f| (f.start - p.base, f.line));
                step_past(hay, next, last)
            }
        };
        Scanned {
            index: p.index,
            found,
            step,
            buf: p.buf,
        }
    }
}

/// The origin of `hay[..next]`'s end, counted from line 1, column 1 at `hay`'s first byte,
/// given the line of some offset before it (`last`, the last finding's start): newlines are
/// counted from there on, as the findings' own lines counted those before it. Two passes
/// over each chunk of a large file were a tenth of its scan. The column is
/// [`Origin::advance`]'s over the last line, counted from its start as a whole count does.
fn step_past(hay: &[u8], next: usize, last: Option<(usize, usize)>) -> Origin {
    let (from, line) = last.unwrap_or((0, 1));
    let seg = &hay[..next];
    let mut last_line = Origin::START;
    last_line.advance(&seg[memchr::memrchr(b'\n', seg).map_or(0, |p| p + 1)..]);
    Origin {
        offset: next,
        line: line + memchr::memchr_iter(b'\n', &seg[from..]).count(),
        column: last_line.column,
    }
}

/// Chunks' findings put back in order, each chunk's positions moved to where it begins.
#[derive(Default)]
struct InOrder {
    out: Vec<Finding>,
    /// Where the next chunk in order begins.
    origin: Option<Origin>,
    next: usize,
    waiting: BTreeMap<usize, Scanned>,
}

impl InOrder {
    /// Take one chunk's result: its buffer back into `pool` at once (a later chunk may
    /// finish first), its findings out once every chunk before it is in.
    fn add(&mut self, mut s: Scanned, pool: &mut Vec<Vec<u8>>) {
        pool.push(std::mem::take(&mut s.buf));
        self.waiting.insert(s.index, s);
        while let Some(mut s) = self.waiting.remove(&self.next) {
            let origin = self.origin.unwrap_or(Origin::START);
            for f in &mut s.found {
                at_origin(f, origin);
            }
            self.out.append(&mut s.found);
            self.origin = Some(then(origin, s.step));
            self.next += 1;
        }
    }
}

/// `f`, found with its chunk's first byte at line 1, column 1, placed where the chunk
/// begins: the same line and column counting the whole input from its start gives, since
/// both count newlines and characters from the last one.
fn at_origin(f: &mut Finding, origin: Origin) {
    if f.line == 1 {
        f.column += origin.column - 1;
    }
    f.line += origin.line - 1;
    f.end_line += origin.line - 1;
}

/// `origin` moved by `step` (a segment's own advance from line 1, column 1).
fn then(origin: Origin, step: Origin) -> Origin {
    Origin {
        offset: origin.offset + step.offset,
        line: origin.line + step.line - 1,
        column: if step.line > 1 {
            step.column
        } else {
            origin.column + step.column - 1
        },
    }
}

/// The bytes already read (an input's head), then the rest of it; the head is freed once
/// it has been copied out.
struct HeadThen<'a> {
    head: Vec<u8>,
    at: usize,
    rest: &'a mut dyn Read,
}

impl HeadThen<'_> {
    /// Fill `buf` up to `want` bytes. Returns whether the input ended, and the read error
    /// that ended it, if any.
    fn fill(&mut self, buf: &mut Vec<u8>, want: usize) -> (bool, Option<std::io::Error>) {
        if self.at < self.head.len() {
            let n = (want - buf.len()).min(self.head.len() - self.at);
            buf.extend_from_slice(&self.head[self.at..self.at + n]);
            self.at += n;
            if self.at == self.head.len() {
                self.head = Vec::new();
            }
        }
        if buf.len() >= want {
            return (false, None);
        }
        // Into the buffer's spare capacity, never zeroed first (`read_to_end` through `take`
        // fills it as the reader delivers); it retries interruptions itself.
        let left = (want - buf.len()) as u64;
        match Read::take(&mut *self.rest, left).read_to_end(buf) {
            Ok(n) => ((n as u64) < left, None),
            Err(e) => (true, Some(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting a whole input from its start and counting each chunk from line 1, column 1
    /// then moving it give the same origin, wherever the input is cut between characters (chunks are).
    #[test]
    fn origins_compose_as_one_count() {
        let text = "ab\ncdé\n\nfg hij\nk€lmn\nopq".as_bytes();
        let cuts = (0..=text.len()).filter(|&c| c == text.len() || text[c] & 0xC0 != 0x80);
        for cut in cuts {
            let mut whole = Origin::START;
            whole.advance(text);
            let (mut a, mut b) = (Origin::START, Origin::START);
            a.advance(&text[..cut]);
            b.advance(&text[cut..]);
            assert_eq!(then(a, b), whole, "cut at {cut}");
        }
    }

    /// A chunk's step counted on from any offset whose line is known is the step counted
    /// from its start, wherever the chunk ends.
    #[test]
    fn a_step_counted_on_from_a_known_line_is_the_whole_count() {
        let text = "ab\ncdé\n\nfg hij\nk€lmn\nopq\n".as_bytes();
        for next in 0..=text.len() {
            let mut whole = Origin::START;
            whole.advance(&text[..next]);
            assert_eq!(step_past(text, next, None), whole, "next {next}");
            for from in 0..=next {
                let line = 1 + text[..from].iter().filter(|&&b| b == b'\n').count();
                let got = step_past(text, next, Some((from, line)));
                assert_eq!(got, whole, "next {next}, from {from}");
            }
        }
    }
}
