//! Reading blobs: one `git cat-file --batch-command` process, started at the first request
//! and started again after git dies on a corrupt object.

use super::{GitError, Repo};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// What reading one object gave.
pub enum Object {
    Blob(Vec<u8>),
    /// Larger than the limit: not read.
    TooLarge(u64),
    Missing,
    /// git could not read it (a corrupt object); the message says why.
    Broken(String),
}

/// A `git cat-file --batch-command` process. A corrupt object kills git; the next request
/// starts a new one, so one bad object costs only itself.
pub struct Objects {
    repo_cmd: Command,
    proc: Option<Proc>,
}

struct Proc {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Objects {
    /// The process starts at the first request.
    pub(super) fn new(repo: &Repo) -> Objects {
        let mut c = repo.command();
        // `--buffer`: answers come when asked for with `flush`, in few large writes.
        c.args(["cat-file", "--batch-command", "--buffer"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        Objects {
            repo_cmd: c,
            proc: None,
        }
    }

    fn proc(&mut self) -> Result<&mut Proc, GitError> {
        if self.proc.is_none() {
            let mut child = self.repo_cmd.spawn().map_err(GitError::Spawn)?;
            let input = child.stdin.take().expect("piped");
            let output = BufReader::with_capacity(1 << 16, child.stdout.take().expect("piped"));
            self.proc = Some(Proc {
                child,
                input,
                output,
            });
        }
        Ok(self.proc.as_mut().expect("started"))
    }

    /// The blob `id`, unless it is larger than `max`.
    pub fn get(&mut self, id: &str, max: Option<u64>) -> Object {
        match self.try_get(id, max) {
            Ok(o) => o,
            Err(e) => {
                self.proc = None;
                Object::Broken(match e {
                    GitError::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                        "git could not read the object (corrupt?)".into()
                    }
                    e => e.to_string(),
                })
            }
        }
    }

    fn try_get(&mut self, id: &str, max: Option<u64>) -> Result<Object, GitError> {
        let p = self.proc()?;
        write!(p.input, "info {id}\nflush\n")?;
        p.input.flush()?;
        let Some(size) = header(&mut p.output)? else {
            return Ok(Object::Missing);
        };
        if max.is_some_and(|m| size > m) {
            return Ok(Object::TooLarge(size));
        }
        write!(p.input, "contents {id}\nflush\n")?;
        p.input.flush()?;
        read_blob(&mut p.output)
    }

    /// Every blob in `ids`, handed to `f` one at a time in order, without a round trip per
    /// object: all sizes are asked for at once, then all contents. Only one blob is in memory
    /// at a time. If git fails part-way (a corrupt object), the rest are read one by one, so
    /// only the bad object is lost.
    pub fn each(&mut self, ids: &[&str], max: Option<u64>, mut f: impl FnMut(usize, Object)) {
        let mut done = 0;
        if self.try_each(ids, max, &mut done, &mut f).is_err() {
            self.proc = None;
        }
        for (i, id) in ids.iter().enumerate().skip(done) {
            f(i, self.get(id, max));
        }
    }

    fn try_each(
        &mut self,
        ids: &[&str],
        max: Option<u64>,
        done: &mut usize,
        f: &mut impl FnMut(usize, Object),
    ) -> Result<(), GitError> {
        let p = self.proc()?;
        let mut asks = String::new();
        for id in ids {
            asks.push_str(&format!("info {id}\n"));
        }
        asks.push_str("flush\n");
        p.input.write_all(asks.as_bytes())?;
        p.input.flush()?;
        let mut sizes = Vec::with_capacity(ids.len());
        for _ in ids {
            sizes.push(header(&mut p.output)?);
        }
        let wanted = |s: &Option<u64>| s.is_some_and(|s| max.is_none_or(|m| s <= m));
        let mut asks = String::new();
        for (id, s) in ids.iter().zip(&sizes) {
            if wanted(s) {
                asks.push_str(&format!("contents {id}\n"));
            }
        }
        asks.push_str("flush\n");
        p.input.write_all(asks.as_bytes())?;
        p.input.flush()?;
        for (i, s) in sizes.iter().enumerate() {
            let o = match s {
                None => Object::Missing,
                Some(n) if !wanted(s) => Object::TooLarge(*n),
                Some(_) => read_blob(&mut p.output)?,
            };
            *done = i + 1;
            f(i, o);
        }
        Ok(())
    }
}

/// One `contents` answer: a header line, the bytes, a newline.
fn read_blob(r: &mut impl BufRead) -> Result<Object, GitError> {
    let Some(size) = header(r)? else {
        return Ok(Object::Missing);
    };
    let mut buf = vec![0; size as usize];
    r.read_exact(&mut buf)?;
    let mut nl = [0u8; 1];
    r.read_exact(&mut nl)?;
    Ok(Object::Blob(buf))
}

/// `<id> <type> <size>` or `<id> missing`; the size of a blob.
fn header(r: &mut impl BufRead) -> Result<Option<u64>, GitError> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
    }
    let parts: Vec<&str> = line.split_whitespace().collect();
    match parts.as_slice() {
        [_, "blob", size] => size
            .parse()
            .map(Some)
            .map_err(|_| GitError::Git(format!("unexpected cat-file output: {line:?}"))),
        [_, "missing"] | [_, "ambiguous"] => Ok(None),
        [_, kind, _] => Err(GitError::Git(format!("object is a {kind}, not a blob"))),
        _ => Err(GitError::Git(format!(
            "unexpected cat-file output: {line:?}"
        ))),
    }
}
