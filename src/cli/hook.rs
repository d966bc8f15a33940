//! `leakhound hook AGENT`: one event on stdin, the agent's answer on stdout, one process per
//! event. The answer is always one valid JSON document and the exit code 0: the agents read
//! a non-zero exit as a failed hook (most then go on as if it had not run), so a decision is
//! only ever given in the JSON.

use super::args::HookArgs;
use super::setup::quick_masking_engine;
use super::EXIT_CLEAN;
use crate::engine::Engine;
use crate::hook::{self, Agent, Answer, Event, Outcome};
use crate::model::Finding;
use crate::respond::Audit;
use anyhow::{Context as _, Result};
use std::io::{Read, Write};
use std::path::Path;

pub fn hook(a: &HookArgs) -> Result<i32> {
    let agent: Agent = a.agent.into();
    let mut input = Vec::new();
    let event = std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| hook::HookError::NotJson(format!("reading stdin: {e}")))
        .and_then(|_| hook::parse(agent, &input));
    let event = match event {
        Ok(ev) => ev,
        Err(e) => {
            warn(&format!("{}: {e}", agent.name()), a.fail_open);
            let (out, outcome) = if a.fail_open {
                (serde_json::json!({}), Outcome::Unscanned)
            } else {
                (hook::unreadable(agent, &e), Outcome::Withheld)
            };
            record(a, agent.name(), "(unreadable)", outcome, &[]);
            return print(&out);
        }
    };
    let engine = quick_masking_engine(&a.rules).context("building the rule engine");
    let answered = engine.and_then(|engine| {
        let answer = event.answer(&engine)?;
        Ok((engine, answer))
    });
    let (engine, mut answer) = match answered {
        Ok(done) => done,
        Err(e) => {
            warn(
                &format!("{} {}: {e:#}", agent.name(), event.name()),
                a.fail_open,
            );
            if a.fail_open {
                record(a, agent.name(), event.name(), Outcome::Unscanned, &[]);
                return print(&serde_json::json!({}));
            }
            let answer = event.withheld();
            record(a, agent.name(), event.name(), answer.outcome, &[]);
            return print(&answer.stdout);
        }
    };
    if let Some(path) = answer.persisted.take() {
        mask_persisted(&engine, Path::new(&path), &event, &mut answer);
    }
    if let Some(note) = &answer.note {
        eprintln!("leakhound: note: {note}");
    }
    record(
        a,
        agent.name(),
        event.name(),
        answer.outcome,
        &answer.findings,
    );
    // The process ends after this answer: freeing the engine's automata and compiled rules
    // would only add to the agent's wait.
    std::mem::forget(engine);
    print(&answer.stdout)
}

fn warn(what: &str, fail_open: bool) {
    let then = if fail_open {
        "let through unscanned (--fail-open)"
    } else {
        "withheld (fail closed)"
    };
    eprintln!(
        "leakhound: warning: {}; {then}",
        crate::report::printable(what)
    );
}

fn print(v: &serde_json::Value) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, v)?;
    writeln!(out)?;
    out.flush()?;
    Ok(EXIT_CLEAN)
}

/// Mask the file an agent keeps a long tool output in (Claude's `persistedOutputPath`), in
/// place: the model can read it later, and it stays on disk. Written to a sibling and renamed
/// over, with the file's permissions; a symlink or special file is left alone.
fn mask_persisted(engine: &Engine, path: &Path, event: &Event, answer: &mut Answer) {
    let result = (|| -> Result<Vec<Finding>> {
        let meta = std::fs::symlink_metadata(path)?;
        if !meta.file_type().is_file() {
            anyhow::bail!("not a regular file");
        }
        let raw = std::fs::read(path)?;
        let name = path.display().to_string();
        let m = crate::filter::mask_text(engine, &name, &raw);
        if m.findings.is_empty() {
            return Ok(m.findings);
        }
        let keep = crate::write::Keep {
            permissions: Some(meta.permissions()),
            modified: None,
        };
        crate::write::replace(path, &m.bytes, keep, || Ok(true))?;
        Ok(m.findings)
    })();
    match result {
        Ok(found) => {
            if !found.is_empty() && answer.outcome == Outcome::Clean {
                answer.outcome = Outcome::Masked;
            }
            answer.findings.extend(found);
        }
        Err(e) => eprintln!(
            "leakhound: warning: {} {}: could not mask the persisted output {}: {e:#}",
            event.agent().name(),
            event.name(),
            crate::report::printable(&path.display().to_string())
        ),
    }
}

/// The report (`--report`) and the audit log (`--audit-log`). A failure to write either is a
/// warning: the answer to the agent matters more than its record.
fn record(a: &HookArgs, agent: &str, event: &str, outcome: Outcome, findings: &[Finding]) {
    if let Some(p) = &a.report {
        if !findings.is_empty() {
            let written = append(p, findings);
            if let Err(e) = written {
                eprintln!("leakhound: warning: --report {}: {e:#}", p.display());
            }
        }
    }
    if a.audit_log.is_some() && outcome != Outcome::Clean {
        match Audit::open(a.audit_log.as_deref()) {
            Ok(mut audit) if findings.is_empty() => {
                audit.agent_hook(agent, event, outcome.name(), None)
            }
            Ok(mut audit) => {
                for f in findings {
                    audit.agent_hook(agent, event, outcome.name(), Some(f));
                }
            }
            Err(e) => eprintln!("leakhound: warning: --audit-log: {e}"),
        }
    }
}

/// Append findings (redacted) to a JSON Lines report: one process per event, so each adds to
/// what the earlier ones wrote.
fn append(path: &Path, findings: &[Finding]) -> Result<()> {
    let f = crate::write::open_append(path)?;
    let mut w = std::io::BufWriter::new(f);
    for f in findings {
        serde_json::to_writer(&mut w, &f.to_json(false))?;
        writeln!(w)?;
    }
    w.flush()?;
    Ok(())
}
