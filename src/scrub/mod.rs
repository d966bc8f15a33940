//! Masking secrets at rest: the transcripts and tool-result files coding agents keep, rewritten
//! in place with every secret the masker finds replaced by `[REDACTED:rule-id]`.
//!
//! Each file is masked in its own format, so the agent can still read it:
//! - JSON Lines (`.jsonl`, `.ndjson`): each line through [`crate::filter::mask_json`], so it stays one
//!   valid JSON value with only masked strings changed; a line that is not JSON is masked as
//!   text and reported.
//! - JSON (`.json`): the whole document through [`crate::filter::mask_json`].
//! - Notebooks (`.ipynb`): [`Masking::notebook`], the JSON masker with each multi-line field
//!   read as the one text a notebook reader shows.
//! - Anything else that is not binary: [`crate::filter::mask_text`].
//!
//! A file is replaced through a temporary file in its directory, renamed over it, with its
//! permissions and modification time. A file modified less than `min_age` ago is skipped
//! unless forced: a live session may be writing it. If it was rewritten while it was being
//! masked, it is left alone. Lines appended to it meanwhile, or after the rename by a writer
//! that holds the old file open (an agent's transcript), are never lost (#13): the old file is
//! kept open and followed until it is quiet, and what it gained is masked and appended to the
//! new one; when it will not go quiet, that is an error, not a success.

mod file;
pub mod sqlite;

pub use file::{files, scrub_file, FileOutcome, Options};

use crate::engine::Engine;
use crate::filter::Masking;
use crate::model::Finding;
use std::path::Path;

/// How a file is masked, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Jsonl,
    Json,
    Notebook,
    Text,
}

impl Kind {
    pub fn of(path: &Path) -> Kind {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("jsonl" | "ndjson") => Kind::Jsonl,
            Some("json") => Kind::Json,
            Some("ipynb") => Kind::Notebook,
            _ => Kind::Text,
        }
    }
}

/// One masked secret: the 1-based line it was on and its rule. Never the secret.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    pub line: usize,
    pub rule_id: String,
}

/// A masked copy of one file.
#[derive(Debug)]
pub struct Scrubbed {
    pub bytes: Vec<u8>,
    pub changes: Vec<Change>,
    /// JSON Lines lines that were not JSON and were masked as text (1-based).
    pub text_lines: Vec<usize>,
    /// A `.json` or `.ipynb` file that was not JSON, masked as text.
    pub as_text: bool,
}

impl Scrubbed {
    pub fn changed(&self, raw: &[u8]) -> bool {
        self.bytes != raw
    }
}

/// Errors masking one file; the others go on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: line {line}: masking left it invalid JSON; file not changed")]
    Broken { path: String, line: usize },
    #[error(
        "{path}: changed while it was being masked; not changed (run again when the agent is idle)"
    )]
    Raced { path: String },
    #[error(
        "{path}: masked, but a writer kept appending to the file it replaced: lines written \
         after {}s may be lost (run again when the agent is idle)", file::FOLLOW_MAX.as_secs()
    )]
    StillWritten { path: String },
    #[error("{path}: masked, but replaced by another writer before lines appended meanwhile could be added; they are not in it (run again when the agent is idle)")]
    Replaced { path: String },
}

/// Mask `raw`, the contents of a file of `kind`. `name` labels findings. Masked by value:
/// every secret the file holds anywhere is masked wherever else it appears in it (a key set
/// on one line of a transcript and printed bare on another).
pub fn scrub(engine: &Engine, name: &str, kind: Kind, raw: &[u8]) -> Result<Scrubbed, Error> {
    let masking = Masking::new(engine);
    match kind {
        Kind::Jsonl => {
            for line in raw.split(|&b| b == b'\n') {
                masking.learn(line);
            }
        }
        _ => masking.learn(raw),
    }
    let mut s = match kind {
        Kind::Jsonl => scrub_lines(&masking, name, raw)?,
        Kind::Json => match masking.json(name, raw) {
            Some(m) => Scrubbed {
                changes: changes(&m.findings, None, m.bytes != raw),
                bytes: m.bytes,
                text_lines: Vec::new(),
                as_text: false,
            },
            None => as_text(&masking, name, raw, true),
        },
        Kind::Notebook => match masking.notebook(name, raw) {
            Some(m) => Scrubbed {
                changes: marker_changes(raw, &m.bytes),
                bytes: m.bytes,
                text_lines: Vec::new(),
                as_text: false,
            },
            None => as_text(&masking, name, raw, true),
        },
        Kind::Text => as_text(&masking, name, raw, false),
    };
    if s.changes.is_empty() && s.changed(raw) {
        // Masked only where a value found elsewhere in the file repeats: no finding says
        // where, the markers do.
        s.changes = marker_changes(raw, &s.bytes);
    }
    Ok(s)
}

fn as_text(masking: &Masking, name: &str, raw: &[u8], fallback: bool) -> Scrubbed {
    let m = masking.text(name, raw);
    Scrubbed {
        changes: changes(&m.findings, None, m.bytes != raw),
        bytes: m.bytes,
        text_lines: Vec::new(),
        as_text: fallback,
    }
}

/// The changes the findings of one masked piece make: at `line` if given, else at each
/// finding's own line. None if the piece did not change (a match outside any string).
fn changes(findings: &[Finding], line: Option<usize>, changed: bool) -> Vec<Change> {
    if !changed {
        return Vec::new();
    }
    let mut out: Vec<Change> = findings
        .iter()
        .map(|f| Change {
            line: line.unwrap_or(f.line),
            rule_id: f.rule_id.clone(),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn scrub_lines(masking: &Masking, name: &str, raw: &[u8]) -> Result<Scrubbed, Error> {
    let mut out = Scrubbed {
        bytes: Vec::with_capacity(raw.len()),
        changes: Vec::new(),
        text_lines: Vec::new(),
        as_text: false,
    };
    for (i, line) in raw.split_inclusive(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let body_len = line.len()
            - if line.ends_with(b"\r\n") {
                2
            } else if line.ends_with(b"\n") {
                1
            } else {
                0
            };
        let (body, end) = line.split_at(body_len);
        if body.iter().all(u8::is_ascii_whitespace) {
            out.bytes.extend_from_slice(line);
            continue;
        }
        let masked = match masking.json(name, body) {
            Some(m) => {
                if m.bytes != body
                    && serde_json::from_slice::<serde::de::IgnoredAny>(&m.bytes).is_err()
                {
                    return Err(Error::Broken {
                        path: name.to_string(),
                        line: n,
                    });
                }
                m
            }
            None => {
                out.text_lines.push(n);
                masking.text(name, body)
            }
        };
        let mut changed = changes(&masked.findings, Some(n), masked.bytes != body);
        if changed.is_empty() && masked.bytes != body {
            changed = marker_changes(body, &masked.bytes)
                .into_iter()
                .map(|c| Change { line: n, ..c })
                .collect();
        }
        out.changes.extend(changed);
        out.bytes.extend_from_slice(&masked.bytes);
        out.bytes.extend_from_slice(end);
    }
    out.changes.dedup();
    Ok(out)
}

/// The masks in `after` that are not in `before`, line by line, for a masker that does not
/// say where it masked.
fn marker_changes(before: &[u8], after: &[u8]) -> Vec<Change> {
    fn markers(line: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = line;
        while let Some(p) = memchr::memmem::find(rest, b"[REDACTED:") {
            let tail = &rest[p + 10..];
            let Some(e) = memchr::memchr(b']', tail) else {
                break;
            };
            out.push(String::from_utf8_lossy(&tail[..e]).into_owned());
            rest = &tail[e..];
        }
        out
    }
    let b: Vec<&[u8]> = before.split(|&c| c == b'\n').collect();
    let mut out = Vec::new();
    for (i, line) in after.split(|&c| c == b'\n').enumerate() {
        let mut had = b.get(i).map(|l| markers(l)).unwrap_or_default();
        for m in markers(line) {
            if let Some(p) = had.iter().position(|h| *h == m) {
                had.remove(p);
            } else {
                out.push(Change {
                    line: i + 1,
                    rule_id: m,
                });
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{engine, KEY, SECRET};

    #[test]
    fn jsonl_lines_stay_json_and_untouched_lines_stay_equal() {
        let e = engine();
        let raw = format!(
            "{{\"a\": 1}}\r\n{{\"out\": \"aws_access_key_id={KEY}\\naws_secret_access_key={SECRET}\"}}\nnot json {KEY}\n\n"
        );
        let s = scrub(&e, "t", Kind::Jsonl, raw.as_bytes()).unwrap();
        let out = String::from_utf8(s.bytes).unwrap();
        assert!(!out.contains(KEY) && !out.contains(SECRET), "{out}");
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], "{\"a\": 1}\r");
        serde_json::from_str::<serde_json::Value>(lines[1]).unwrap();
        assert_eq!(s.text_lines, vec![3]);
        assert!(s.changes.iter().any(|c| c.line == 2));
        assert!(s.changes.iter().any(|c| c.line == 3));
        assert!(out.ends_with("\n\n"));
    }

    #[test]
    fn markers_are_counted_per_line() {
        let c = marker_changes(b"a [REDACTED:x]\nb", b"a [REDACTED:x]\nb [REDACTED:y]");
        assert_eq!(
            c,
            vec![Change {
                line: 2,
                rule_id: "y".into()
            }]
        );
    }
}
