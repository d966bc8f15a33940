//! The commands that mask rather than report: `filter`, `run`, `redact-notebook`.

use super::settings::{FilterSettings, MaskerRules};
use super::setup::{open_output, Output};
use super::EXIT_CLEAN;
use anyhow::{Context as _, Result};
use std::io::ErrorKind;
use std::path::Path;

/// Findings from a filter: a JSONL report and/or notices on stderr. The secret is never
/// written: reports are always redacted.
struct FilterSink {
    report: Option<std::sync::Mutex<Output>>,
    notify: bool,
}

impl crate::filter::Sink for FilterSink {
    fn finding(&self, f: &crate::model::Finding) {
        if self.notify {
            eprintln!(
                "leakhound: masked {} in {} at line {}",
                f.rule_id,
                f.path(),
                f.line
            );
        }
        if let Some(r) = &self.report {
            let mut out = crate::sync::lock(r);
            let w = out.writer();
            let _ = serde_json::to_writer(&mut *w, &f.to_json(false))
                .map_err(std::io::Error::from)
                .and_then(|_| writeln!(w))
                .and_then(|_| w.flush());
        }
    }
}

/// `filter` (no command) and `run` (a command).
pub fn filter(a: FilterSettings) -> Result<i32> {
    let engine = a.rules.engine()?;
    let report = match &a.report {
        Some(p) => Some(std::sync::Mutex::new(open_output(Some(p))?)),
        None => None,
    };
    let sink = FilterSink {
        report,
        notify: a.notify,
    };
    let idle = a.idle;
    match a.cmd.as_deref() {
        None => {
            crate::filter::pump(
                &engine,
                "stdin",
                std::io::stdin(),
                &mut std::io::stdout(),
                idle,
                &sink,
            )
            .context("filter stopped; held output was withheld")?;
            Ok(EXIT_CLEAN)
        }
        Some(cmd) => {
            let status = match crate::filter::run(&engine, cmd, idle, &sink) {
                Ok(s) => s,
                // As a shell says it, and with its codes: a wrapper must not turn "no such
                // command" into the code of a run that found or failed something.
                Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::PermissionDenied) => {
                    let (code, what) = if e.kind() == ErrorKind::NotFound {
                        (127, "command not found")
                    } else {
                        (126, "permission denied")
                    };
                    // The name is what the agent wrote, masked as its output would be: a
                    // shell's `TOKEN=… cmd` given to `run` makes the assignment the name.
                    let name = crate::filter::mask_text(&engine, "argv", cmd[0].as_bytes());
                    eprintln!(
                        "leakhound: error: {}: {what}",
                        crate::report::printable(&String::from_utf8_lossy(&name.bytes))
                    );
                    return Ok(code);
                }
                Err(e) => return Err(e).with_context(|| format!("running {:?}", cmd[0])),
            };
            use std::os::unix::process::ExitStatusExt;
            Ok(status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
        }
    }
}

pub fn redact_notebook(input: &Path, output: Option<&Path>, rules: &MaskerRules) -> Result<i32> {
    let engine = rules.engine()?;
    let raw = std::fs::read(input).with_context(|| format!("{}", input.display()))?;
    let (masked, n, valid) = crate::filter::redact_notebook(&engine, &raw);
    if !valid {
        eprintln!(
            "leakhound: warning: {}: not valid JSON; masked as plain text",
            input.display()
        );
    }
    let mut out = open_output(output)?;
    out.writer()
        .write_all(&masked)
        .and_then(|_| out.writer().flush())
        .context("writing the redacted notebook")?;
    eprintln!("leakhound: {n} secret(s) masked");
    Ok(EXIT_CLEAN)
}
