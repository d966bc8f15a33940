//! Findings grouped by file, for a person at a terminal.

use super::{Report, Summary};
use std::io::{self, Write};

/// Presentation choices that are not part of the report itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct HumanOptions {
    pub color: bool,
}

struct Style(bool);

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

pub(super) fn write(r: &Report<'_>, opts: &HumanOptions, out: &mut dyn Write) -> io::Result<()> {
    let st = Style(opts.color);
    let mut last_path: Option<String> = None;
    // A set's reach is shown once, under the first of its findings; so is what its
    // validation or offline annotations say (the account, the ARN): the key id, the secret
    // and the session token of one set share them, and three equal lines read as three
    // accounts.
    let mut reach_shown = std::collections::HashSet::new();
    let mut set_shown = std::collections::HashSet::new();
    for f in r.findings {
        let path = f.path();
        if last_path.as_deref() != Some(&path) {
            if last_path.is_some() {
                writeln!(out)?;
            }
            writeln!(out, "{}", st.paint("1", &printable(&path)))?;
            last_path = Some(path);
        }
        writeln!(
            out,
            "  {:>9}  {}  {}  {} ({})",
            format!("{}:{}", f.line, f.column),
            st.paint("33", &f.rule_id),
            st.paint("31", &f.display_secret(r.show_secrets)),
            st.paint("2", &f.rule_name),
            st.paint("2", f.confidence.as_str()),
        )?;
        let ctx = f.context.render(r.show_secrets);
        let ctx = ctx.trim();
        if !ctx.is_empty() {
            writeln!(out, "  {:>9}  {}", "", st.paint("2", ctx))?;
        }
        // A notebook's field, on disk, committed to git or in an image layer.
        if let Some((cell, output, field)) = f.provenance.notebook_field() {
            // As a JSON path into the notebook, indexes from 0 as in the JSON report.
            let mut at = match cell {
                Some(c) => format!("cells[{c}]"),
                None => "notebook".to_string(),
            };
            if let Some(o) = output {
                at.push_str(&format!(".outputs[{o}]"));
            }
            at.push_str(&format!(" {}", printable(field)));
            writeln!(out, "  {:>9}  {}", "", st.paint("36", &at))?;
        }
        if let crate::model::Provenance::Git { commit, .. } = &f.provenance {
            let origin = match commit {
                Some(c) => format!(
                    "commit {} {} {} <{}>: {}",
                    &c.id[..c.id.len().min(12)],
                    c.date.get(..10).unwrap_or(&c.date),
                    c.author,
                    c.email,
                    c.subject
                ),
                None => "staged".to_string(),
            };
            writeln!(out, "  {:>9}  {}", "", st.paint("36", &origin))?;
        }
        let first_of_set = f
            .credential_set
            .as_ref()
            .is_none_or(|s| set_shown.insert(s.clone()));
        if !first_of_set {
            // Said under the set's first finding; pointed to where that is another file
            // (each variable of an environment is one).
            if f.validation.is_some() || !f.annotations.is_empty() {
                writeln!(
                    out,
                    "  {:>9}  {}",
                    "",
                    st.paint("36", "(its credential set: above)")
                )?;
            }
        } else if let Some(v) = &f.validation {
            let mut line = format!("validation: {}", v.status.as_str());
            for (k, x) in [
                ("account", &v.account),
                ("arn", &v.arn),
                ("reason", &v.reason),
            ] {
                if let Some(x) = x {
                    line.push_str(&format!(", {k} {x}"));
                }
            }
            if let Some(id) = &v.identity {
                line.push_str(&format!(", as {}", id.display()));
                for (k, x) in [
                    ("org", &id.org),
                    ("mode", &id.mode),
                    ("expires", &id.expires),
                ] {
                    if let Some(x) = x {
                        line.push_str(&format!(", {k} {x}"));
                    }
                }
                if let Some(sc) = &id.scopes {
                    line.push_str(&format!(", scopes [{}]", sc.join(" ")));
                }
            }
            // What a provider answered is shown, not acted on by the terminal.
            let line = printable(&line);
            let code = if v.status == crate::model::Status::Live {
                "1;31"
            } else {
                "36"
            };
            writeln!(out, "  {:>9}  {}", "", st.paint(code, &line))?;
            if let Some(reach) = &f.reach {
                if reach_shown.insert(
                    f.credential_set
                        .clone()
                        .unwrap_or_else(|| f.fingerprint.clone()),
                ) {
                    let code = match reach.severity {
                        crate::model::Severity::Critical | crate::model::Severity::High => "1;31",
                        _ => "36",
                    };
                    let line = printable(&reach.summary());
                    writeln!(out, "  {:>9}  {}", "", st.paint(code, &line))?;
                }
            }
        } else {
            for a in &f.annotations {
                let line = format!("{} {}", a.label, a.value);
                writeln!(out, "  {:>9}  {}", "", st.paint("36", &line))?;
            }
        }
        if let crate::model::Provenance::Image {
            layer: Some(n),
            layer_digest: Some(d),
            deleted,
            ..
        } = &f.provenance
        {
            let short = d.get(..19).unwrap_or(d);
            let gone = if *deleted {
                " (deleted by a later layer; still in the image)"
            } else {
                ""
            };
            writeln!(
                out,
                "  {:>9}  {}",
                "",
                st.paint("36", &format!("layer {n} {short}{gone}"))
            )?;
        }
    }
    if !r.findings.is_empty() {
        writeln!(out)?;
    }
    for o in &r.summary.endpoint_overrides {
        writeln!(
            out,
            "validation endpoint overridden by --config: {}",
            printable(o)
        )?;
    }
    writeln!(out, "{}", summary_line(r.summary, r.findings.len()))
}

/// `s` safe for a terminal: control characters (an escape sequence or a newline in a file
/// name) shown escaped instead of acted on.
pub fn printable(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn summary_line(s: &Summary, findings: usize) -> String {
    let mut line = format!(
        "{} in {} ({}) in {:.2}s",
        plural(findings as u64, "finding"),
        plural(s.files, "file"),
        crate::model::human_bytes(s.bytes),
        s.elapsed.as_secs_f64()
    );
    for (n, what) in [
        (s.suppressed, "suppressed"),
        (s.below_confidence, "below --min-confidence"),
        (s.warnings, "warnings"),
        (s.skipped_binary, "binary skipped"),
        (s.skipped_large, "too large skipped"),
        (s.skipped_ignored, "ignored skipped"),
        (s.skipped_unreadable, "could not be read"),
    ] {
        if n > 0 {
            line.push_str(&format!(", {n} {what}"));
        }
    }
    line
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
