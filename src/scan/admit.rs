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
    /// NUL-separated text (an `environ` capture, `find -print0`): NULs are read as line
    /// ends, so lines and contexts are its entries.
    pub nul_text: bool,
}

impl Reading {
    /// Bytes read as they are: what cannot be judged by its head (a pipe) or opened (a zip
    /// on a stream) is scanned this way.
    pub const TEXT: Reading = Reading {
        form: Form::Text,
        nul_text: false,
    };
}

/// What a blob's name says its structure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Text,
    /// A Jupyter notebook: each finding maps to its cell, output and field.
    Notebook,
    /// `NAME=value` lines (`.env`, `*.env`, `environ`): each finding names its variable.
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
    let nul_text = has_nul(sniff) && nul_separated_text(sniff);
    let binary = has_nul(sniff) && !nul_text && !crate::decode::looks_utf16(head);
    if binary && !opts.binary && archive.is_none() {
        return Admission::Skip(Skip::Binary);
    }
    Admission::Scan(Reading {
        form: form(path),
        nul_text,
    })
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
        Err(e) => e.error_len().is_none(),
    }
}

/// NUL separators as line ends, so lines and contexts are entries.
pub fn nul_to_newline(data: &mut [u8]) {
    for b in data.iter_mut() {
        if *b == 0 {
            *b = b'\n';
        }
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

    fn scan(form: Form, nul_text: bool) -> Admission {
        Admission::Scan(Reading { form, nul_text })
    }

    /// The same bytes under the name each source gives them: a file on disk, an entry of an
    /// archive, a git path, a path in an image layer. Only the file name decides the form.
    #[test]
    fn the_decision_depends_on_the_name_and_bytes_not_the_source() {
        let cases: [(&str, &[u8], Admission); 5] = [
            (".env", b"AWS_ACCESS_KEY_ID=x\n", scan(Form::Env, false)),
            ("nb.ipynb", b"{\"cells\": []}", scan(Form::Notebook, false)),
            ("environ", b"PATH=/bin\0HOME=/root\0", scan(Form::Env, true)),
            ("app.py", b"x = 1\n", scan(Form::Text, false)),
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
        assert_eq!(admit("a.gz", &gz, 12, &closed), scan(Form::Text, false));
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
            scan(Form::Text, false)
        );
        let binary = Admit {
            binary: true,
            ..OPEN
        };
        assert_eq!(
            admit("b", b"\x01\x02\0\0\x03", 5, &binary),
            scan(Form::Text, false)
        );
        // UTF-16 is text, full of NULs as it is.
        let utf16: Vec<u8> = "TOKEN=abcdefghijklmnop\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(
            admit("w.txt", &utf16, utf16.len() as u64, &OPEN),
            scan(Form::Text, false)
        );
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
