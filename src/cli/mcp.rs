//! `mcp-proxy`: the flags turned into a [`crate::filter::mcp::serve`] call.

use super::settings::McpSettings;
use super::setup::{open_output, Output};
use crate::filter::mcp;
use crate::model::Finding;
use anyhow::{Context as _, Result};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Where masked secrets are recorded: a report (replaced), an audit log (appended), notices
/// on stderr. Never the secret: every line is the redacted finding.
struct McpSink {
    report: Option<Mutex<Output>>,
    audit: Option<Mutex<std::fs::File>>,
    notify: bool,
}

impl crate::filter::Sink for McpSink {
    fn finding(&self, f: &Finding) {
        if self.notify {
            eprintln!("leakhound: masked {} from the {}", f.rule_id, f.path());
        }
        let line = f.to_json(false);
        if let Some(r) = &self.report {
            let mut out = crate::sync::lock(r);
            let w = out.writer();
            let _ = writeln!(w, "{line}").and_then(|_| w.flush());
        }
        if let Some(a) = &self.audit {
            let mut v = line;
            v["time"] = crate::model::now_rfc3339().into();
            v["event"] = "mcp-mask".into();
            let mut f = crate::sync::lock(a);
            let _ = writeln!(f, "{v}");
        }
    }
}

/// Open the audit log for appending (see [`crate::write::open_append`]).
fn open_audit(path: &Path) -> Result<std::fs::File> {
    crate::write::open_append(path).with_context(|| format!("--audit-log {}", path.display()))
}

fn warn(msg: &str) {
    eprintln!(
        "leakhound: warning: mcp-proxy: {}",
        crate::report::printable(msg)
    );
}

pub fn proxy(a: McpSettings) -> Result<i32> {
    let engine = Arc::new(a.rules.engine()?);
    let sink = McpSink {
        report: match &a.report {
            Some(p) => Some(Mutex::new(open_output(Some(p))?)),
            None => None,
        },
        audit: a
            .audit_log
            .as_deref()
            .map(open_audit)
            .transpose()?
            .map(Mutex::new),
        notify: a.notify,
    };
    let status = mcp::serve(engine, &a.cmd, a.serve, Arc::new(sink), warn)
        .with_context(|| format!("running the MCP server {:?}", a.cmd[0]))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
