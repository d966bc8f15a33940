//! `leakhound hook AGENT`: one event on stdin, the agent's answer on stdout, one process per
//! event. The answer is always one valid JSON document and the exit code 0: the agents read
//! a non-zero exit as a failed hook (most then go on as if it had not run), so a decision is
//! only ever given in the JSON.
//!
//! With `--server` the event is answered by a hook server ([`server`]): the same [`answer`],
//! in a process that keeps the rules loaded between events.

mod server;

use super::settings::{HookServer, HookSettings, MaskerRules};
use super::EXIT_CLEAN;
use crate::agents::Agent;
use crate::engine::Engine;
use crate::hook::{self, Answer, Disposition, Event};
use crate::model::Finding;
use crate::respond::Audit;
use anyhow::{Context as _, Result};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub fn hook(a: &HookSettings) -> Result<i32> {
    if let HookServer::Serve { socket, idle } = &a.server {
        return server::serve(a, socket, *idle);
    }
    let mut input = Vec::new();
    let read = std::io::stdin().read_to_end(&mut input).map(|_| input);
    if let (HookServer::Ask { wait }, Ok(input)) = (&a.server, &read) {
        match server::ask(a, input, *wait) {
            Ok(reply) => return emit(&reply),
            // Not started yet: this event is answered here while it starts.
            Err(server::Unanswered::Starting) => {}
            Err(server::Unanswered::Failed(why)) => {
                eprintln!("leakhound: warning: hook server not used: {why}")
            }
        }
    }
    let engine = Lazy::new(&a.rules);
    let reply = answer(a, read, &engine);
    // The process ends after this answer: freeing the engine's automata and compiled rules
    // would only add to the agent's wait.
    std::mem::forget(engine);
    emit(&reply)
}

/// One event's answer: what goes to stdout and stderr (the exit code is always 0, see the
/// module's comment). Made the same way in this process and in a hook server.
pub(super) struct Reply {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

fn emit(reply: &Reply) -> Result<i32> {
    std::io::stderr().write_all(&reply.stderr)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&reply.stdout)?;
    out.flush()?;
    Ok(EXIT_CLEAN)
}

/// Where [`answer`] gets its engine, once it has an event to answer: built then (one process
/// per event), or built before (a hook server).
pub(super) trait Engines {
    /// The engine, or why it could not be built; what building it said on stderr goes to
    /// `err`.
    fn engine(&self, err: &mut Vec<u8>) -> Result<&Engine, &anyhow::Error>;
}

/// The engine built on first use, its messages written to stderr as they come.
pub(super) struct Lazy<'a> {
    rules: &'a MaskerRules,
    built: OnceLock<Result<Engine>>,
}

impl<'a> Lazy<'a> {
    pub fn new(rules: &'a MaskerRules) -> Lazy<'a> {
        Lazy {
            rules,
            built: OnceLock::new(),
        }
    }
}

impl Engines for Lazy<'_> {
    fn engine(&self, _: &mut Vec<u8>) -> Result<&Engine, &anyhow::Error> {
        self.built
            .get_or_init(|| self.rules.engine().context("building the rule engine"))
            .as_ref()
    }
}

/// The answer to the event read (or not) into `input`.
pub(super) fn answer(
    a: &HookSettings,
    input: std::io::Result<Vec<u8>>,
    engines: &dyn Engines,
) -> Reply {
    let agent: Agent = a.agent;
    let mut err = Vec::new();
    let event = input
        .map_err(|e| hook::HookError::NotJson(format!("reading stdin: {e}")))
        .and_then(|input| hook::parse(agent, &input));
    let event = match event {
        Ok(ev) => ev,
        Err(e) => {
            warn(&mut err, &format!("{}: {e}", agent.name()), a.fail_open);
            let (out, outcome) = if a.fail_open {
                (serde_json::json!({}), Disposition::Unscanned)
            } else {
                (hook::unreadable(agent, &e), Disposition::Withheld)
            };
            record(&mut err, a, agent.name(), "(unreadable)", outcome, &[]);
            return reply(&out, err);
        }
    };
    let engine = match engines.engine(&mut err) {
        Ok(engine) => engine,
        Err(e) => return failed(a, &event, e, err),
    };
    let mut answer = match event.answer(engine) {
        Ok(answer) => answer,
        Err(e) => return failed(a, &event, &e.into(), err),
    };
    if let Some(path) = answer.persisted.take() {
        let home = crate::agents::Env::from_process().map(|env| env.claude_home());
        let target = home
            .map_err(|_| "Claude's config folder could not be placed (HOME not set?)")
            .and_then(|home| persisted_target(&path, &home));
        match target {
            Ok(real) => mask_persisted(&mut err, engine, &real, &event, &mut answer),
            // The path is the event's text: not repeated.
            Err(why) => {
                let _ = writeln!(
                    err,
                    "leakhound: note: {} {}: the persisted output was not masked: {why} (only \
                     a file in a tool-results folder under CLAUDE_CONFIG_DIR or ~/.claude is \
                     rewritten)",
                    agent.name(),
                    event.name()
                );
            }
        }
    }
    if let Some(note) = &answer.note {
        let _ = writeln!(err, "leakhound: note: {note}");
    }
    record(
        &mut err,
        a,
        agent.name(),
        event.name(),
        answer.outcome,
        &answer.findings,
    );
    reply(&answer.stdout, err)
}

/// The answer when the event could not be scanned: let through (`--fail-open`) or withheld.
fn failed(a: &HookSettings, event: &Event, e: &anyhow::Error, mut err: Vec<u8>) -> Reply {
    let agent = a.agent.name();
    warn(
        &mut err,
        &format!("{agent} {}: {e:#}", event.name()),
        a.fail_open,
    );
    if a.fail_open {
        record(
            &mut err,
            a,
            agent,
            event.name(),
            Disposition::Unscanned,
            &[],
        );
        return reply(&serde_json::json!({}), err);
    }
    let answer = event.withheld();
    record(&mut err, a, agent, event.name(), answer.outcome, &[]);
    reply(&answer.stdout, err)
}

fn warn(err: &mut Vec<u8>, what: &str, fail_open: bool) {
    let then = if fail_open {
        "let through unscanned (--fail-open)"
    } else {
        "withheld (fail closed)"
    };
    let _ = writeln!(
        err,
        "leakhound: warning: {}; {then}",
        crate::report::printable(what)
    );
}

fn reply(v: &serde_json::Value, stderr: Vec<u8>) -> Reply {
    let mut stdout = serde_json::to_vec(v).expect("a JSON value serializes");
    stdout.push(b'\n');
    Reply { stdout, stderr }
}

/// The file a Claude event names as its persisted output, if it is one leakhound may
/// rewrite: Claude Code keeps a long output in a `tool-results` folder under its config
/// folder (`~/.claude/projects/PROJECT/SESSION/tool-results/`, or under
/// `CLAUDE_CONFIG_DIR`). Any other path would let whoever wrote the event have leakhound
/// rewrite any file the user can (#12). So: an absolute path, to a regular file (not a
/// symlink), whose canonical form (every symlink on the way resolved) is in a
/// `tool-results` folder under the canonical config folder. The canonical path is returned,
/// so what is rewritten is what was checked. Errors never quote the path.
fn persisted_target(path: &str, claude_home: &Path) -> Result<PathBuf, &'static str> {
    let path = Path::new(path);
    if !path.is_absolute() {
        return Err("the path is not absolute");
    }
    let meta = std::fs::symlink_metadata(path).map_err(|_| "the path cannot be read")?;
    if !meta.file_type().is_file() {
        return Err("the path is not a regular file (a symlink?)");
    }
    let real = path
        .canonicalize()
        .map_err(|_| "the path cannot be resolved")?;
    let home = claude_home
        .canonicalize()
        .map_err(|_| "Claude's config folder does not exist")?;
    let inside = real
        .strip_prefix(&home)
        .map_err(|_| "the path is outside Claude's config folder")?;
    let in_results = inside
        .parent()
        .is_some_and(|dir| dir.components().any(|c| c.as_os_str() == "tool-results"));
    if !in_results {
        return Err("the path is not in a tool-results folder");
    }
    Ok(real)
}

/// Mask the file an agent keeps a long tool output in (Claude's `persistedOutputPath`), in
/// place: the model can read it later, and it stays on disk. Written to a sibling and renamed
/// over, with the file's permissions; a symlink or special file is left alone.
fn mask_persisted(
    err: &mut Vec<u8>,
    engine: &Engine,
    path: &Path,
    event: &Event,
    answer: &mut Answer,
) {
    let result = (|| -> Result<Vec<Finding>> {
        let meta = std::fs::symlink_metadata(path)?;
        if !meta.file_type().is_file() {
            anyhow::bail!("not a regular file");
        }
        let raw = std::fs::read(path)?;
        let name = path.display().to_string();
        // With the event's values: the file holds the same output the event does.
        let m = event.masking(engine)?.text(&name, &raw);
        if m.bytes == raw {
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
            if !found.is_empty() && answer.outcome == Disposition::Clean {
                answer.outcome = Disposition::Masked;
            }
            answer.findings.extend(found);
        }
        Err(e) => {
            let _ = writeln!(
                err,
                "leakhound: warning: {} {}: could not mask the persisted output {}: {e:#}",
                event.agent().name(),
                event.name(),
                crate::report::printable(&path.display().to_string())
            );
        }
    }
}

/// The report (`--report`) and the audit log (`--audit-log`). A failure to write either is a
/// warning: the answer to the agent matters more than its record.
fn record(
    err: &mut Vec<u8>,
    a: &HookSettings,
    agent: &str,
    event: &str,
    outcome: Disposition,
    findings: &[Finding],
) {
    if let Some(p) = &a.report {
        if !findings.is_empty() {
            let written = append(p, findings);
            if let Err(e) = written {
                let _ = writeln!(err, "leakhound: warning: --report {}: {e:#}", p.display());
            }
        }
    }
    if a.audit_log.is_some() && outcome != Disposition::Clean {
        match Audit::open(a.audit_log.as_deref()) {
            Ok(mut audit) if findings.is_empty() => {
                audit.agent_hook(agent, event, outcome.name(), None)
            }
            Ok(mut audit) => {
                for f in findings {
                    audit.agent_hook(agent, event, outcome.name(), Some(f));
                }
            }
            Err(e) => {
                let _ = writeln!(err, "leakhound: warning: --audit-log: {e}");
            }
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

#[cfg(test)]
mod tests {
    use super::persisted_target;
    use std::path::Path;

    #[test]
    fn only_a_file_in_claudes_tool_results_is_rewritten() {
        // Regression #12: any path the event named was rewritten, relative ones against the
        // current directory.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let write = |rel: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
            p
        };
        let home = root.join("claude");
        let good = write("claude/projects/-app/s1/tool-results/toolu_01.txt");
        let outside = write("elsewhere/tool-results/toolu_02.txt");
        let settings = write("claude/settings.json");
        let at = |p: &Path| persisted_target(p.to_str().unwrap(), &home);
        assert_eq!(at(&good), Ok(good.clone()));
        // Through a symlinked config folder (a dotfiles checkout) it is the same file.
        std::os::unix::fs::symlink(&home, root.join("dot-claude")).unwrap();
        assert_eq!(
            persisted_target(good.to_str().unwrap(), &root.join("dot-claude")),
            Ok(good.clone())
        );

        let rel = "claude/projects/-app/s1/tool-results/toolu_01.txt";
        assert_eq!(
            persisted_target(rel, &home),
            Err("the path is not absolute")
        );
        assert_eq!(
            at(&outside),
            Err("the path is outside Claude's config folder")
        );
        assert_eq!(
            at(&settings),
            Err("the path is not in a tool-results folder")
        );
        let dotdot = home.join(
            "projects/-app/s1/tool-results/../../../../../elsewhere/tool-results/toolu_02.txt",
        );
        assert_eq!(
            at(&dotdot),
            Err("the path is outside Claude's config folder")
        );
        // A symlink, as the file or as a folder on the way, is never followed out.
        let results = good.parent().unwrap();
        let link = results.join("link.txt");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert_eq!(
            at(&link),
            Err("the path is not a regular file (a symlink?)")
        );
        let dir_link = home.join("projects/-app/s2");
        std::os::unix::fs::symlink(root.join("elsewhere"), &dir_link).unwrap();
        assert_eq!(
            at(&dir_link.join("tool-results/toolu_02.txt")),
            Err("the path is outside Claude's config folder")
        );
        assert_eq!(
            at(&home.join("projects/-app/s1/tool-results/missing.txt")),
            Err("the path cannot be read")
        );
    }
}
