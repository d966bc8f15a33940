//! Reading what is installed: leakhound's entries in one agent's settings file, event by
//! event, with the commands whose program no longer exists, and where one agent would run
//! another's hooks.

use super::settings::{array_has_ours, parse, read};
use super::{is_leakhound_command, Agent, Env, Scope};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One agent's hooks at one scope, as found.
#[derive(Debug, Clone)]
pub struct State {
    pub agent: Agent,
    pub scope: Scope,
    pub path: PathBuf,
    /// The agent's folder exists at this scope.
    pub detected: bool,
    pub file_exists: bool,
    /// The events that have a leakhound entry, and those that lack one.
    pub installed: Vec<&'static str>,
    pub missing: Vec<&'static str>,
    /// leakhound commands found whose program does not exist (a moved binary).
    pub stale: Vec<String>,
    /// The file could not be read as settings.
    pub error: Option<String>,
}

impl State {
    pub fn is_installed(&self) -> bool {
        !self.installed.is_empty()
    }
}

/// What is installed for `agent` at `scope`.
pub fn status(agent: Agent, scope: Scope, env: &Env) -> State {
    let path = agent.settings_file(scope, env);
    let mut st = State {
        agent,
        scope,
        detected: agent.detected(scope, env),
        file_exists: path.is_file(),
        installed: Vec::new(),
        missing: agent.installs().map(|e| e.name).collect(),
        stale: Vec::new(),
        error: None,
        path: path.clone(),
    };
    let text = match read(&path) {
        Ok(Some(t)) => t,
        Ok(None) => return st,
        Err(e) => {
            st.error = Some(e.to_string());
            return st;
        }
    };
    let root = match parse(&text, &path) {
        Ok(r) => r,
        Err(e) => {
            st.error = Some(e.to_string());
            return st;
        }
    };
    let hooks = root.get("hooks").map(|m| &m.value);
    for event in agent.installs() {
        let Some(arr) = hooks.and_then(|h| h.get(event.name)).map(|m| &m.value) else {
            continue;
        };
        if arr.items().is_some() && array_has_ours(agent, &text, arr) {
            st.installed.push(event.name);
            st.missing.retain(|n| *n != event.name);
        }
    }
    // Every leakhound command in the file: does its program still exist?
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let mut cmds = Vec::new();
    collect_commands(&v, &mut cmds);
    for c in cmds.into_iter().filter(|c| is_leakhound_command(c)) {
        let program = program_of(&c);
        if program.starts_with('/') && !Path::new(&program).exists() && !st.stale.contains(&c) {
            st.stale.push(c);
        }
    }
    st
}

fn collect_commands(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("command" | "bash", Value::String(s)) => out.push(s.clone()),
                    _ => collect_commands(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_commands(x, out)),
        _ => {}
    }
}

/// The program a command runs: its first word, unquoted.
fn program_of(cmd: &str) -> String {
    let c = cmd.trim_start();
    if let Some(rest) = c.strip_prefix('\'') {
        return rest.split_once('\'').map_or(rest, |(p, _)| p).to_string();
    }
    c.split_whitespace().next().unwrap_or("").to_string()
}

/// Where one agent runs another's hooks, so leakhound would answer the same event twice:
/// Cursor runs Claude Code's hooks (user and project) when its third-party hooks setting is
/// on, and Copilot CLI runs the hooks in a repository's `.claude/settings.json`.
pub fn overlaps(states: &[State]) -> Vec<String> {
    let on = |a: Agent, s: Option<Scope>| {
        states
            .iter()
            .any(|st| st.agent == a && s.is_none_or(|s| st.scope == s) && st.is_installed())
    };
    let mut notes = Vec::new();
    if on(Agent::Cursor, None) && on(Agent::Claude, None) {
        notes.push(
            "Cursor also runs Claude Code's hooks when \"Include third-party Plugins, Skills, and \
             other configs\" is on: leakhound then runs twice per event in Cursor. Cursor's own \
             hooks take precedence, so the answer is Cursor's; the Claude copy only costs time. \
             Turn that setting off, or uninstall one of them (--agent), to run once."
                .to_string(),
        );
    }
    if on(Agent::Copilot, None) && on(Agent::Claude, Some(Scope::Project)) {
        notes.push(
            "Copilot CLI also runs the hooks in this repository's .claude/settings.json: \
             leakhound then runs twice per event in Copilot, once with Claude's answer shape. \
             Uninstall one of them (--agent) to run once."
                .to_string(),
        );
    }
    notes
}
