//! The real coding agents, end to end: Claude Code, Codex, Gemini CLI and Copilot CLI from npm
//! (pinned in tests/run.sh, installed under target/e2e-agents), each run headless against a
//! fake model server on 127.0.0.1 that asks for one tool call after another (tests/e2e/).
//!
//! Each agent runs twice. Without leakhound, every credential a tool printed must reach the
//! fake model whole: the proof that the harness would see a leak. After `leakhound agents
//! install --agent NAME` and nothing else, no request may hold an 8-character piece of any of
//! them, raw or in any JSON string, and the agent must still get through every tool call.
//! The harness prints what failed (never a credential); its exit code is the verdict. Claude
//! Code runs once more with the hooks installed with `--server` (the hook server).

use crate::util::{bin, missing_message, pin, require_python_modules, Sandbox};
use std::path::{Path, PathBuf};
use std::process::Command;

fn agents_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/e2e-agents/node_modules/.bin")
}

/// Run the harness for `agent`; with `record`, also hold the hook fixtures against the events
/// the real agent sent (agent_fixtures.rs).
#[track_caller]
fn run(agent: &str, package: &str, pin_name: &str, record: bool) {
    run_with(agent, package, pin_name, record, &[]);
}

#[track_caller]
fn run_with(agent: &str, package: &str, pin_name: &str, record: bool, extra: &[&str]) {
    let dir = agents_bin();
    let version = pin(pin_name);
    let manifest = dir.join(format!("../{package}/package.json"));
    let installed = std::fs::read_to_string(&manifest).unwrap_or_default();
    assert!(
        installed.contains(&format!("\"version\": \"{version}\"")),
        "{}",
        missing_message(
            &format!("{package}@{version} (npm) in target/e2e-agents"),
            &format!("npm install --prefix target/e2e-agents {package}@{version}")
        )
    );
    require_python_modules(
        &["mcp"],
        &format!("pip install mcp=={}", pin("MCP")),
        "print('ok')",
    );
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/agents.py");
    let sb = Sandbox::new();
    let events = sb.path("events.jsonl");
    let mut c = Command::new("python3");
    c.arg(harness)
        .args(["--agent", agent, "--leakhound"])
        .arg(bin())
        .arg("--bin-dir")
        .arg(&dir)
        .args(extra);
    if record {
        c.arg("--record").arg(&events);
    }
    let out = c.output().expect("running tests/e2e/agents.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the real-agent run failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains(&format!("{agent}: ok")),
        "the harness did not report success:\n{stdout}\n{stderr}"
    );
    if record {
        crate::agent_fixtures::check(agent, &events);
    }
}

#[test]
fn claude_code_masks_with_nothing_added_by_hand() {
    run("claude", "@anthropic-ai/claude-code", "CLAUDE_CODE", false);
}

/// The hooks installed with `--server`: the events after the first are answered by the hook
/// server the first one started (the harness requires that it answered some), and nothing
/// reaches the model either way.
#[test]
fn claude_code_masks_through_the_hook_server() {
    run_with(
        "claude",
        "@anthropic-ai/claude-code",
        "CLAUDE_CODE",
        false,
        &["--mode", "protected", "--server"],
    );
}

#[test]
fn codex_masks_with_nothing_added_by_hand() {
    run("codex", "@openai/codex", "CODEX", false);
}

#[test]
fn gemini_cli_masks_with_nothing_added_by_hand() {
    run("gemini", "@google/gemini-cli", "GEMINI_CLI", true);
}

#[test]
fn copilot_cli_masks_with_nothing_added_by_hand() {
    run("copilot", "@github/copilot", "COPILOT_CLI", true);
}
