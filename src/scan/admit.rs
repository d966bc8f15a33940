//! The admission: one decision per blob, keyed on its path and its first bytes, the same for
//! a file on disk, an archive entry, a git blob, a file in an image layer, an image config
//! field and standard input. It says whether the blob is scanned at all, opened as an
//! archive, or read as a notebook, an env-shaped file or text (NUL-separated or not).
//!
//! Only a prefix is looked at ([`SNIFF`] bytes), so deciding costs nothing next to the scan
//! and a blob too large to hold is decided by its head alone.

use crate::source::{archive, env};

/// How much of a blob's start is looked at to call it binary or NUL-separated text.
pub const SNIFF: usize = 8 << 10;

/// The operator's choices the admission applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Admit {
    /// Scan blobs that look binary too.
    pub binary: bool,
    /// Open archives and compressed files (else they are scanned as they are).
    pub archives: bool,
    /// Blobs larger than this are not scanned.
    pub max_size: Option<u64>,
}

impl Admit {
    /// Whether a blob of `size` bytes is over the limit. Sources that learn a size before
    /// reading (a file's metadata, git's object header, a tar header) ask this first, so
    /// what is too large is never read.
    pub fn too_large(&self, size: u64) -> bool {
        self.max_size.is_some_and(|max| size > max)
    }
}

/// What to do with one blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Not scanned, for this reason (named in the report).
    Skip(Skip),
    /// An archive or a compressed stream: each file inside is admitted in turn.
    Archive(archive::Kind),
    /// Scanned, read this way.
    Scan(Reading),
}

/// Why a blob is not scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    Binary,
    /// Over the size limit; its size when known.
    Large(Option<u64>),
}

/// How an admitted blob is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub form: Form,
    /// How its NUL bytes are read.
    pub nul: Nul,
}

impl Reading {
    /// Bytes read as they are: what cannot be judged by its head (a pipe) or opened (a zip
    /// on a stream) is scanned this way.
    pub const TEXT: Reading = Reading {
        form: Form::Text,
        nul: Nul::Kept,
    };
}

/// How the NUL bytes of admitted text are read. Each is replaced by one byte, so offsets
/// stay the blob's own; what changes is what a line is, for the rules (a value ends at a
/// line end), for line numbers and for contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nul {
    /// As they are: no NUL in the head, or the blob is UTF-16 or binary (admitted anyway).
    Kept,
    /// Text with a few NULs among its lines: each NUL is a line end too.
    LineEnds,
    /// NUL-separated records (an `environ` capture, `find -print0`): at least as many NULs
    /// as newlines. Each NUL ends a line and a newline inside a record is read as a space,
    /// so line N is record N, and a record's context is the record.
    Records,
}

impl Nul {
    /// Read `data` (a whole blob or any piece of one) this way, in place.
    pub fn apply(self, data: &mut [u8]) {
        match self {
            Nul::Kept => {}
            Nul::LineEnds => {
                for b in data.iter_mut().filter(|b| **b == 0) {
                    *b = b'\n';
                }
            }
            Nul::Records => {
                for b in data.iter_mut() {
                    *b = match *b {
                        0 => b'\n',
                        b'\n' => b' ',
                        b => b,
                    };
                }
            }
        }
    }
}

/// What a blob's name says its structure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Text,
    /// A Jupyter notebook: each finding maps to its cell, output and field.
    Notebook,
    /// `NAME=value` lines (`.env`, `*.env`, `environ`), or NUL-separated `NAME=value`
    /// records under any name (`cat /proc/PID/environ > capture`): each finding names its
    /// variable.
    Env,
}

/// The decision for a blob at `path` (as reported: `a/.env`, `x.zip!conf/.env`,
/// `/app/.env`) of `size` bytes whose first bytes are `head` (all of it when held whole).
pub fn admit(path: &str, head: &[u8], size: u64, opts: &Admit) -> Admission {
    if opts.too_large(size) {
        return Admission::Skip(Skip::Large(Some(size)));
    }
    // An archive looks binary: opened when asked, else scanned as it is (`--no-archives`
    // says so), never skipped for it.
    let archive = archive::sniff(head);
    if let Some(kind) = archive.filter(|_| opts.archives) {
        return Admission::Archive(kind);
    }
    // Binary: a NUL byte near the start, unless the text is UTF-16 (which is full of them)
    // or NUL-separated.
    let sniff = &head[..head.len().min(SNIFF)];
    let nul = nuls(sniff);
    let binary = has_nul(sniff) && nul == Nul::Kept && !crate::decode::looks_utf16(head);
    if binary && !opts.binary && archive.is_none() {
        return Admission::Skip(Skip::Binary);
    }
    // A capture of an environment is one whatever its name: its records say so.
    let form = match form(path) {
        Form::Text if nul == Nul::Records && env_records(sniff) => Form::Env,
        named => named,
    };
    Admission::Scan(Reading { form, nul })
}

/// How the NULs of a blob whose first bytes are `sniff` are read.
fn nuls(sniff: &[u8]) -> Nul {
    if !has_nul(sniff) || !nul_separated_text(sniff) {
        return Nul::Kept;
    }
    let (nul, newline) = (
        memchr::memchr_iter(0, sniff),
        memchr::memchr_iter(b'\n', sniff),
    );
    if nul.count() >= newline.count() {
        Nul::Records
    } else {
        Nul::LineEnds
    }
}

/// Whether NUL-separated records are an environment: nine in ten whole records of `sniff`
/// (the last piece may be cut) are `NAME=value`. A command line (`/proc/PID/cmdline`:
/// `java\0-Dkey=value`) or a list of paths is not.
fn env_records(sniff: &[u8]) -> bool {
    let mut records: Vec<&[u8]> = sniff.split(|&b| b == 0).collect();
    records.pop();
    records.retain(|r| !r.is_empty());
    let assignments = records.iter().filter(|r| env::is_assignment(r)).count();
    assignments > 0 && assignments * 10 >= records.len() * 9
}

/// What the name says: a notebook, an env-shaped file, or text.
pub fn form(path: &str) -> Form {
    if path.ends_with(".ipynb") {
        Form::Notebook
    } else if env::is_env_file(path) {
        Form::Env
    } else {
        Form::Text
    }
}

fn has_nul(b: &[u8]) -> bool {
    memchr::memchr(0, b).is_some()
}

/// Text whose entries end with NUL rather than a newline: UTF-8 with no other control
/// bytes, and NULs as separators (not runs of padding).
pub fn nul_separated_text(sniff: &[u8]) -> bool {
    let nuls = memchr::memchr_iter(0, sniff).count();
    if nuls == 0 || nuls * 4 > sniff.len() {
        return false;
    }
    if sniff
        .iter()
        .any(|&b| matches!(b, 1..=8 | 0x0e..=0x1a | 0x1c..=0x1f | 0x7f))
    {
        return false;
    }
    match std::str::from_utf8(sniff) {
        Ok(_) => true,
        // Only a character cut at the end of the sniffed bytes.
        Err(e) if e.error_len().is_none() => true,
        // An environment's values are bytes, not text: one stray byte in one value must not
        // make a whole capture "binary" and hide every secret in it (#16).
        Err(_) => env_records(sniff),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPEN: Admit = Admit {
        binary: false,
        archives: true,
        max_size: None,
    };

    fn scan(form: Form, nul: Nul) -> Admission {
        Admission::Scan(Reading { form, nul })
    }

    /// The same bytes under the name each source gives them: a file on disk, an entry of an
    /// archive, a git path, a path in an image layer. Only the file name decides the form.
    #[test]
    fn the_decision_depends_on_the_name_and_bytes_not_the_source() {
        let cases: [(&str, &[u8], Admission); 5] = [
            (".env", b"AWS_ACCESS_KEY_ID=x\n", scan(Form::Env, Nul::Kept)),
            (
                "nb.ipynb",
                b"{\"cells\": []}",
                scan(Form::Notebook, Nul::Kept),
            ),
            (
                "environ",
                b"PATH=/bin\0HOME=/root\0",
                scan(Form::Env, Nul::Records),
            ),
            ("app.py", b"x = 1\n", scan(Form::Text, Nul::Kept)),
            (
                "blob.bin",
                b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR",
                Admission::Skip(Skip::Binary),
            ),
        ];
        for (name, bytes, want) in cases {
            for path in [
                name.to_string(),
                format!("deploy/{name}"),
                format!("bundle.zip!conf/{name}"),
                format!("/app/{name}"),
                format!("sub/repo/{name}"),
            ] {
                let got = admit(&path, bytes, bytes.len() as u64, &OPEN);
                assert_eq!(got, want, "{path}");
            }
        }
    }

    #[test]
    fn archives_are_opened_or_scanned_as_they_are_never_skipped_as_binary() {
        let gz = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0, 0];
        assert_eq!(
            admit("a.gz", &gz, 12, &OPEN),
            Admission::Archive(archive::Kind::Gzip)
        );
        let closed = Admit {
            archives: false,
            ..OPEN
        };
        assert_eq!(admit("a.gz", &gz, 12, &closed), scan(Form::Text, Nul::Kept));
    }

    #[test]
    fn size_and_binary_choices_apply() {
        let limited = Admit {
            max_size: Some(4),
            ..OPEN
        };
        assert_eq!(
            admit("a.txt", b"12345", 5, &limited),
            Admission::Skip(Skip::Large(Some(5)))
        );
        assert_eq!(
            admit("a.txt", b"1234", 4, &limited),
            scan(Form::Text, Nul::Kept)
        );
        let binary = Admit {
            binary: true,
            ..OPEN
        };
        assert_eq!(
            admit("b", b"\x01\x02\0\0\x03", 5, &binary),
            scan(Form::Text, Nul::Kept)
        );
        // UTF-16 is text, full of NULs as it is.
        let utf16: Vec<u8> = "TOKEN=abcdefghijklmnop\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(
            admit("w.txt", &utf16, utf16.len() as u64, &OPEN),
            scan(Form::Text, Nul::Kept)
        );
    }

    /// NUL-separated text is read by its records: an environment whatever its name, other
    /// records as text, and text with a stray NUL keeps its lines.
    #[test]
    fn nul_separated_records_and_environment_captures() {
        let cases: [(&str, &[u8], Admission); 7] = [
            (
                "proc-1000-environ",
                b"PATH=/usr/bin\0AWS_SECRET_ACCESS_KEY=abc\0HOME=/root\0",
                scan(Form::Env, Nul::Records),
            ),
            // A value with a newline in it is still one record.
            (
                "capture.txt",
                b"A=1\0CERT=line one\nline two\0B=2\0",
                scan(Form::Env, Nul::Records),
            ),
            // A command line has `-Dkey=value` arguments, not variables.
            (
                "cmdline",
                b"java\0-Dtoken=abc\0-jar\0app.jar\0",
                scan(Form::Text, Nul::Records),
            ),
            (
                "files.txt",
                b"./a/b.txt\0./c=d/e.txt\0./f\0",
                scan(Form::Text, Nul::Records),
            ),
            (
                "notes.txt",
                b"line one\nline two\0\nA=1\n",
                scan(Form::Text, Nul::LineEnds),
            ),
            // Regression #16: one byte that is not UTF-8 in one value (or name) was enough
            // to call the capture binary and skip it.
            (
                "capture",
                b"PATH=/usr/bin\0LANG=caf\xe9\0AWS_SECRET_ACCESS_KEY=abc\0X\xff=1\0",
                scan(Form::Env, Nul::Records),
            ),
            // Binary with NULs and `NAME=value` strings in it is still binary.
            (
                "core.dump",
                b"\x7fELF\x02\x01\x01\0\0\0PATH=/bin\0HOME=/root\0",
                Admission::Skip(Skip::Binary),
            ),
        ];
        for (name, bytes, want) in cases {
            assert_eq!(
                admit(name, bytes, bytes.len() as u64, &OPEN),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn records_are_lines_and_offsets_stay() {
        let mut b = b"A=1\0CERT=x\ny\0".to_vec();
        Nul::Records.apply(&mut b);
        assert_eq!(b, b"A=1\nCERT=x y\n");
        let mut b = b"a\nb\0c".to_vec();
        Nul::LineEnds.apply(&mut b);
        assert_eq!(b, b"a\nb\nc");
    }

    #[test]
    fn env_shaped_names() {
        for p in [".env", "a/.env.local", "prod.env", "/proc/1/environ"] {
            assert_eq!(form(p), Form::Env, "{p}");
        }
        for p in ["envoy.yaml", "a/env.py", ".environment"] {
            assert_eq!(form(p), Form::Text, "{p}");
        }
    }
}
