//! The coding agents leakhound hooks into: where each keeps its hook settings and its
//! transcripts, which of its hook events leakhound answers, and the edits that add and remove
//! leakhound's entries in a settings file without disturbing anything else in it.
//!
//! Every agent's format is its own documentation's:
//! - Claude Code: `~/.claude/settings.json`, `.claude/settings.json`:
//!   `hooks.<Event>[] = {matcher, hooks: [{type: "command", command}]}`.
//! - Codex: `~/.codex/hooks.json`, `.codex/hooks.json` (same shape as Claude's; Codex also reads
//!   inline `[hooks]` tables in `config.toml`, which are left alone).
//! - Gemini CLI: `~/.gemini/settings.json`, `.gemini/settings.json` (same shape; the hook may
//!   carry a `name`).
//! - Copilot CLI: every `*.json` in `~/.copilot/hooks/` and `.github/hooks/`:
//!   `{version: 1, hooks: {<event>: [{type: "command", bash}]}}`. leakhound keeps its own file,
//!   `leakhound.json`, there.
//! - Cursor: `~/.cursor/hooks.json`, `.cursor/hooks.json`:
//!   `{version: 1, hooks: {<event>: [{command}]}}`.
//!
//! leakhound's entries are the ones whose command holds `leakhound hook`.

pub mod codex;
mod json;
mod settings;
mod status;

pub use settings::{plan_install, plan_uninstall, Plan};
pub use status::{overlaps, status, State};

use std::path::{Path, PathBuf};

/// A coding agent leakhound hooks into: the one type that `agents` (install, status, scrub)
/// and `hook` (answering its events) share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
    Copilot,
    Cursor,
}

/// The user's own settings (under the home directory) or the project's (under the current
/// directory, usually committed with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// When in the agent's loop a hook runs; `leakhound hook AGENT` tells them apart by the
/// event's name in its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// A tool ran: its output may be masked before the model reads it.
    AfterTool,
    /// A tool is about to run: a call holding a secret is denied.
    BeforeTool,
    /// A prompt is about to be sent: one holding a secret is blocked.
    BeforePrompt,
}

/// One hook event of an agent's that `leakhound hook` answers: the agent's table of these
/// (`Agent::events`) is the one list both `agents install` (the rows with `install`) and
/// `hook` (every row) read, so an event cannot be installed and then refused, or answered
/// under a name that nothing installs without saying why.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub name: &'static str,
    pub stage: Stage,
    /// The tool matcher written with it (`None`: no matcher, which every agent here reads as
    /// "all tools" or, for prompt events, has none).
    pub matcher: Option<&'static str>,
    /// Whether `agents install` registers it. The rest are answered for a user who registers
    /// them by hand (docs/agents.md names each): the same event under a name another
    /// configuration of the agent sends, or one the install leaves out on purpose.
    pub install: bool,
}

/// An event `agents install` registers.
const fn ev(name: &'static str, stage: Stage, matcher: Option<&'static str>) -> Event {
    Event {
        name,
        stage,
        matcher,
        install: true,
    }
}

/// An event `hook` answers that `agents install` does not register.
const fn by_hand(name: &'static str, stage: Stage) -> Event {
    Event {
        name,
        stage,
        matcher: None,
        install: false,
    }
}

use Stage::{AfterTool, BeforePrompt, BeforeTool};

const CLAUDE: &[Event] = &[
    ev("PostToolUse", AfterTool, Some("*")),
    ev("PreToolUse", BeforeTool, Some("*")),
    ev("UserPromptSubmit", BeforePrompt, None),
];
// The prompt events too: without them a key pasted into a prompt reaches the model (seen
// with Codex 0.171 and Gemini CLI 0.61, whose answers to them `hook` already gives).
const CODEX: &[Event] = &[
    ev("PostToolUse", AfterTool, None),
    ev("PreToolUse", BeforeTool, None),
    ev("UserPromptSubmit", BeforePrompt, None),
];
const GEMINI: &[Event] = &[
    ev("AfterTool", AfterTool, None),
    ev("BeforeTool", BeforeTool, None),
    ev("BeforeAgent", BeforePrompt, None),
];
const COPILOT: &[Event] = &[
    ev("postToolUse", AfterTool, None),
    ev("preToolUse", BeforeTool, None),
    ev("userPromptSubmitted", BeforePrompt, None),
    // The VS Code-compatible names, sent when a hook is configured under them.
    by_hand("PostToolUse", AfterTool),
    by_hand("PreToolUse", BeforeTool),
    by_hand("UserPromptSubmit", BeforePrompt),
    // Copilot's rewritten prompt (docs/agents.md).
    by_hand("userPromptTransformed", BeforePrompt),
];
const CURSOR: &[Event] = &[
    ev("postToolUse", AfterTool, None),
    ev("beforeShellExecution", BeforeTool, None),
    ev("beforeMCPExecution", BeforeTool, None),
    ev("beforeSubmitPrompt", BeforePrompt, None),
    // Cursor's other names for tool events (docs/agents.md's manual set-up).
    by_hand("afterMCPExecution", AfterTool),
    by_hand("afterShellExecution", AfterTool),
    by_hand("preToolUse", BeforeTool),
    by_hand("beforeReadFile", BeforeTool),
];

/// How an agent's settings file holds hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `hooks.<Event>[] = {matcher?, hooks: [{type: "command", command, name?}]}`.
    Grouped { name: bool },
    /// `{version: 1, hooks: {<event>: [{type?: "command", <key>: command}]}}`.
    Flat { key: &'static str, typed: bool },
}

impl Agent {
    pub const ALL: [Agent; 5] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
        Agent::Cursor,
    ];

    /// The name `leakhound hook` and `--agent` take.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Copilot => "copilot",
            Agent::Cursor => "cursor",
        }
    }

    /// Every event `leakhound hook` answers for this agent: the installed ones first, in the
    /// order they are written.
    pub fn events(self) -> &'static [Event] {
        match self {
            Agent::Claude => CLAUDE,
            Agent::Codex => CODEX,
            Agent::Gemini => GEMINI,
            Agent::Copilot => COPILOT,
            Agent::Cursor => CURSOR,
        }
    }

    /// The events `agents install` registers, in the order they are written.
    pub fn installs(self) -> impl Iterator<Item = &'static Event> {
        self.events().iter().filter(|e| e.install)
    }

    /// The event called `name`, if leakhound answers it for this agent.
    pub fn event(self, name: &str) -> Option<&'static Event> {
        self.events().iter().find(|e| e.name == name)
    }

    pub(crate) fn layout(self) -> Layout {
        match self {
            Agent::Claude | Agent::Codex => Layout::Grouped { name: false },
            Agent::Gemini => Layout::Grouped { name: true },
            Agent::Copilot => Layout::Flat {
                key: "bash",
                typed: true,
            },
            Agent::Cursor => Layout::Flat {
                key: "command",
                typed: false,
            },
        }
    }

    /// The directory whose presence says the agent is used here.
    pub fn config_dir(self, scope: Scope, env: &Env) -> PathBuf {
        match (self, scope) {
            (Agent::Claude, Scope::User) => env.claude_home(),
            (Agent::Codex, Scope::User) => env.codex_home(),
            (Agent::Gemini, Scope::User) => env.home.join(".gemini"),
            (Agent::Copilot, Scope::User) => env.copilot_home(),
            (Agent::Cursor, Scope::User) => env.home.join(".cursor"),
            (Agent::Claude, Scope::Project) => env.project.join(".claude"),
            (Agent::Codex, Scope::Project) => env.project.join(".codex"),
            (Agent::Gemini, Scope::Project) => env.project.join(".gemini"),
            // `.github/` alone is every repository with workflows; Copilot's own files say
            // more.
            (Agent::Copilot, Scope::Project) => env.project.join(".github/hooks"),
            (Agent::Cursor, Scope::Project) => env.project.join(".cursor"),
        }
    }

    /// Whether the agent looks used at this scope.
    pub fn detected(self, scope: Scope, env: &Env) -> bool {
        self.config_dir(scope, env).is_dir()
            || (self == Agent::Copilot
                && scope == Scope::Project
                && env
                    .project
                    .join(".github/copilot-instructions.md")
                    .is_file())
    }

    /// The settings file leakhound edits.
    pub fn settings_file(self, scope: Scope, env: &Env) -> PathBuf {
        let dir = match (self, scope) {
            (Agent::Copilot, Scope::Project) => env.project.join(".github"),
            _ => self.config_dir(scope, env),
        };
        match self {
            Agent::Claude | Agent::Gemini => dir.join("settings.json"),
            Agent::Codex | Agent::Cursor => dir.join("hooks.json"),
            Agent::Copilot => dir.join("hooks").join("leakhound.json"),
        }
    }

    /// Where the agent keeps transcripts and tool results at rest (files or directories,
    /// existing or not): what `agents scrub` masks.
    pub fn transcripts(self, env: &Env) -> Vec<PathBuf> {
        match self {
            Agent::Claude => vec![
                env.claude_home().join("projects"),
                env.claude_home().join("history.jsonl"),
            ],
            Agent::Codex => {
                let mut v = vec![
                    env.codex_home().join("sessions"),
                    env.codex_home().join("archived_sessions"),
                    env.codex_home().join("history.jsonl"),
                ];
                // Its SQLite stores (state_5.sqlite, thread_history_1.sqlite, logs_2.sqlite…)
                // hold prompts and tool outputs too.
                let mut dbs: Vec<PathBuf> = std::fs::read_dir(env.codex_home())
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
                    .collect();
                dbs.sort();
                v.extend(dbs);
                v
            }
            Agent::Gemini => vec![env.home.join(".gemini/tmp")],
            Agent::Copilot => vec![
                env.copilot_home().join("session-state"),
                env.copilot_home().join("session-store.db"),
            ],
            Agent::Cursor => {
                // ~/.cursor/projects/*/agent-transcripts
                let projects = env.home.join(".cursor/projects");
                let mut dirs: Vec<PathBuf> = std::fs::read_dir(&projects)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path().join("agent-transcripts"))
                    .collect();
                dirs.sort();
                dirs
            }
        }
    }
}

/// Where things are: the home directory, the project (the current directory), and the
/// agents' own overrides of their home folders.
#[derive(Debug, Clone)]
pub struct Env {
    pub home: PathBuf,
    pub project: PathBuf,
    /// `CLAUDE_CONFIG_DIR`
    pub claude_dir: Option<PathBuf>,
    /// `CODEX_HOME`
    pub codex_home: Option<PathBuf>,
    /// `COPILOT_HOME`
    pub copilot_home: Option<PathBuf>,
}

impl Env {
    /// From this process's environment (`HOME` and the agents' variables) and current
    /// directory.
    pub fn from_process() -> std::io::Result<Env> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME")
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "HOME is not set"))?;
        Ok(Env {
            home,
            project: std::env::current_dir()?,
            claude_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            copilot_home: var("COPILOT_HOME"),
        })
    }

    /// Claude Code's config folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub fn claude_home(&self) -> PathBuf {
        self.claude_dir
            .clone()
            .unwrap_or_else(|| self.home.join(".claude"))
    }

    /// Codex's home: `CODEX_HOME`, else `~/.codex`.
    pub fn codex_home(&self) -> PathBuf {
        self.codex_home
            .clone()
            .unwrap_or_else(|| self.home.join(".codex"))
    }

    fn copilot_home(&self) -> PathBuf {
        self.copilot_home
            .clone()
            .unwrap_or_else(|| self.home.join(".copilot"))
    }
}

/// The command an agent runs for leakhound: `EXE hook AGENT`, the path quoted for a POSIX
/// shell when it needs it.
pub fn hook_command(exe: &Path, agent: Agent) -> String {
    let p = exe.to_string_lossy();
    let plain = p
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%".contains(&b));
    let quoted = if plain {
        p.to_string()
    } else {
        format!("'{}'", p.replace('\'', r"'\''"))
    };
    format!("{quoted} hook {}", agent.name())
}

/// Whether a hook command is leakhound's: it runs `leakhound hook` (quotes around the path
/// are ignored).
pub fn is_leakhound_command(cmd: &str) -> bool {
    cmd.replace(['\'', '"'], "").contains("leakhound hook")
}

/// Errors editing an agent's settings; each names its file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not plain JSON ({why}); not changed — add leakhound's hooks by hand (see docs/agents.md)")]
    NotJson { path: String, why: String },
    #[error("{path}: {what}; not changed")]
    Shape { path: String, what: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_quoted_and_recognised() {
        let c = hook_command(Path::new("/usr/local/bin/leakhound"), Agent::Claude);
        assert_eq!(c, "/usr/local/bin/leakhound hook claude");
        let c = hook_command(Path::new("/my tools/leakhound"), Agent::Cursor);
        assert_eq!(c, "'/my tools/leakhound' hook cursor");
        assert!(is_leakhound_command(&c));
        assert!(!is_leakhound_command("npx prettier --write"));
    }

    #[test]
    fn each_agent_names_an_event_once() {
        for agent in Agent::ALL {
            let mut names: Vec<&str> = agent.events().iter().map(|e| e.name).collect();
            names.sort();
            let n = names.len();
            names.dedup();
            assert_eq!(names.len(), n, "{} names an event twice", agent.name());
            assert!(agent.installs().all(|e| agent.event(e.name).is_some()));
        }
    }
}
