//! The writers: human, json, jsonl, sarif, baselines, and the merge of earlier reports. Sinks: they format the findings
//! they are given and never decide what is a secret.

mod human;
mod json;
pub mod merge;
mod sarif;
pub mod shards;

use crate::model::{Finding, ShardNotes, Summary, Warning};
use crate::rules::Rule;
use std::io::{self, Write};

pub use human::{printable, HumanOptions};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Jsonl,
    Sarif,
}

/// Everything a writer needs.
pub struct Report<'a> {
    pub findings: &'a [Finding],
    pub warnings: &'a [Warning],
    pub summary: &'a Summary,
    pub rules: &'a [Rule],
    pub show_secrets: bool,
    /// A shard's notes, kept in its JSON report for the merge.
    pub notes: Option<&'a ShardNotes>,
}

/// Write `report` in `format`. A broken pipe is not an error.
pub fn write(
    format: Format,
    report: &Report<'_>,
    human: &HumanOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    let r = match format {
        Format::Human => human::write(report, human, out),
        Format::Json => json::write_json(report, out),
        Format::Jsonl => json::write_jsonl(report, out),
        Format::Sarif => sarif::write(report, out),
    }
    .and_then(|_| out.flush());
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

pub use json::write_baseline;
