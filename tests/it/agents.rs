//! `agents install|uninstall|status|scrub` and `scrub`, end to end with HOME pointed at a
//! temporary directory: realistic settings files with other hooks survive an install and come
//! back byte for byte after uninstall; transcripts in each agent's line format lose every
//! planted secret and nothing else.

use crate::util::{bin, fake_aws, fake_github, missing_message, pin, to_run, Run};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// leakhound with `HOME=home` in `cwd`, none of the agents' own home variables set, and the
/// real `codex` (pinned in tests/run.sh) first on PATH: `agents install` asks it to trust
/// leakhound's hooks.
fn lh(home: &Path, cwd: &Path, args: &[&str]) -> Run {
    lh_path(home, cwd, args, &path_with_codex())
}

fn path_with_codex() -> String {
    let agents = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/e2e-agents/node_modules/.bin");
    assert!(
        agents.join("codex").exists(),
        "{}",
        missing_message(
            "Codex (npm) in target/e2e-agents",
            &format!(
                "npm install --prefix target/e2e-agents @openai/codex@{}",
                pin("CODEX")
            )
        )
    );
    format!(
        "{}:{}",
        agents.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn lh_path(home: &Path, cwd: &Path, args: &[&str], path: &str) -> Run {
    let out = Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env("PATH", path)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .env_remove("COPILOT_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    to_run(out)
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn backup(p: &Path) -> PathBuf {
    PathBuf::from(format!("{}.leakhound-backup", p.display()))
}

const CLAUDE: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "env": {
    "DISABLE_TELEMETRY": "1"
  },
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Write|Edit|MultiEdit",
        "hooks": [
          { "type": "command", "command": "npx prettier --write \"$(jq -r '.tool_input.file_path')\"", "timeout": 30 }
        ]
      }
    ],
    "Stop": [
      { "hooks": [ { "type": "command", "command": "notify-send 'Claude is done'" } ] }
    ]
  },
  "statusLine": { "type": "command", "command": "~/.claude/statusline.sh" },
  "cleanupPeriodDays": 30
}
"#;

// Four-space indentation and no newline at the end.
const CODEX: &str = r#"{
    "hooks": {
        "SessionStart": [
            {
                "matcher": "startup|resume",
                "hooks": [
                    {
                        "type": "command",
                        "command": "python3 ~/.codex/hooks/session_start.py",
                        "statusMessage": "Loading context"
                    }
                ]
            }
        ],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": "python3 ~/.codex/hooks/pre_tool_use.py",
                        "timeout": 10
                    }
                ]
            }
        ]
    }
}"#;

// No hooks at all yet.
const GEMINI: &str = r#"{
  "general": {
    "vimMode": true,
    "preferredEditor": "code"
  },
  "ui": { "theme": "GitHub" },
  "mcpServers": {
    "github": { "command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"] }
  },
  "tools": { "sandbox": false }
}
"#;

// Tabs, and an event leakhound also registers.
const CURSOR: &str = "{\n\t\"version\": 1,\n\t\"hooks\": {\n\t\t\"afterFileEdit\": [\n\t\t\t{ \"command\": \"./hooks/format.sh\" }\n\t\t],\n\t\t\"beforeShellExecution\": [\n\t\t\t{ \"command\": \"./hooks/audit-shell.sh\", \"timeout\": 5 }\n\t\t]\n\t}\n}\n";

// The user's own Copilot hook file next to the one leakhound writes.
const COPILOT_AUDIT: &str = r#"{
  "version": 1,
  "hooks": {
    "postToolUse": [
      { "type": "command", "bash": "./scripts/audit.sh", "timeoutSec": 10 }
    ]
  }
}
"#;

/// Every string value in a JSON document, for "nothing of the user's was lost".
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out)
        }),
        _ => {}
    }
}

/// The hook commands registered for `event` in a settings document (grouped or flat).
fn commands_for(doc: &Value, event: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in doc["hooks"][event].as_array().into_iter().flatten() {
        let inner: Vec<&Value> = match e["hooks"].as_array() {
            Some(hs) => hs.iter().collect(),
            None => vec![e],
        };
        for h in inner {
            for k in ["command", "bash"] {
                if let Some(c) = h[k].as_str() {
                    out.push(c.to_string());
                }
            }
        }
    }
    out
}

struct Case {
    agent: &'static str,
    file: &'static str,
    original: Option<&'static str>,
    events: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        agent: "claude",
        file: ".claude/settings.json",
        original: Some(CLAUDE),
        events: &["PostToolUse", "PreToolUse", "UserPromptSubmit"],
    },
    Case {
        agent: "codex",
        file: ".codex/hooks.json",
        original: Some(CODEX),
        events: &["PostToolUse", "PreToolUse", "UserPromptSubmit"],
    },
    Case {
        agent: "gemini",
        file: ".gemini/settings.json",
        original: Some(GEMINI),
        events: &["AfterTool", "BeforeTool", "BeforeAgent"],
    },
    Case {
        agent: "copilot",
        file: ".copilot/hooks/leakhound.json",
        original: None,
        events: &["postToolUse", "preToolUse", "userPromptSubmitted"],
    },
    Case {
        agent: "cursor",
        file: ".cursor/hooks.json",
        original: Some(CURSOR),
        events: &[
            "postToolUse",
            "beforeShellExecution",
            "beforeMCPExecution",
            "beforeSubmitPrompt",
        ],
    },
];

#[test]
fn install_then_uninstall_leaves_each_agents_file_byte_for_byte() {
    for case in CASES {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let h = home.path();
        let path = h.join(case.file);
        let agent_dir = h.join(Path::new(case.file).components().next().unwrap());
        std::fs::create_dir_all(&agent_dir).unwrap();
        let audit = h.join(".copilot/hooks/audit.json");
        if case.agent == "copilot" {
            write(&audit, COPILOT_AUDIT);
        }
        if let Some(o) = case.original {
            write(&path, o);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }

        // No --agent: the agent's folder is what selects it.
        let r = lh(h, work.path(), &["agents", "install"]);
        assert_eq!(r.code, 0, "{}: {}", case.agent, r.stderr);
        let installed = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}: {}", case.agent, r.stderr));
        let doc: Value = serde_json::from_str(&installed).unwrap();
        let want = format!("leakhound hook {}", case.agent);
        for ev in case.events {
            let cmds = commands_for(&doc, ev);
            assert_eq!(
                cmds.iter().filter(|c| c.contains(&want)).count(),
                1,
                "{}: {ev}: {cmds:?}\n{installed}",
                case.agent
            );
        }
        if let Some(o) = case.original {
            // Everything of the user's is still there, and the file kept its permissions.
            let mut before = Vec::new();
            strings(&serde_json::from_str(o).unwrap(), &mut before);
            let mut after = Vec::new();
            strings(&doc, &mut after);
            for s in &before {
                assert!(after.contains(s), "{}: lost {s:?}", case.agent);
            }
            assert_eq!(mode(&path), 0o600, "{}", case.agent);
            assert_eq!(std::fs::read_to_string(backup(&path)).unwrap(), o);
            assert_eq!(mode(&backup(&path)), 0o600);
            // The user's own lines are still where they were: the file starts the same.
            let first_line = o.lines().nth(1).unwrap();
            assert!(installed.contains(first_line), "{}", case.agent);
        }

        // Codex runs only hooks it trusts: install had Codex itself hash and trust each one.
        let codex_config = h.join(".codex/config.toml");
        if case.agent == "codex" {
            let config = std::fs::read_to_string(&codex_config).unwrap_or_default();
            assert_eq!(
                config.matches("trusted_hash = \"sha256:").count(),
                case.events.len(),
                "{config}\n{}",
                r.stderr
            );
            let st = lh(h, work.path(), &["agents", "status", "--agent", "codex"]);
            assert!(!st.stdout.contains("NOT PROTECTING"), "{}", st.stdout);
        }

        // Idempotent.
        let r = lh(h, work.path(), &["agents", "install"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stderr.contains("already installed"), "{}", r.stderr);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);

        let r = lh(h, work.path(), &["agents", "uninstall"]);
        assert_eq!(r.code, 0, "{}: {}", case.agent, r.stderr);
        match case.original {
            Some(o) => {
                assert_eq!(std::fs::read_to_string(&path).unwrap(), o, "{}", case.agent);
                assert_eq!(mode(&path), 0o600);
                assert!(
                    !backup(&path).exists(),
                    "{}: backup left behind",
                    case.agent
                );
            }
            None => assert!(!path.exists(), "{}: created file left behind", case.agent),
        }
        if case.agent == "copilot" {
            assert_eq!(std::fs::read_to_string(&audit).unwrap(), COPILOT_AUDIT);
        }
        // The trust entries went with the hooks (config.toml did not exist before).
        assert!(!codex_config.exists(), "{}", case.agent);
    }
}

/// Without Codex to ask for its hashes, installing for Codex protects nothing: it says so,
/// what to run, and exits 2; status warns until the hooks are trusted.
#[test]
fn codex_without_trust_is_not_called_installed() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::create_dir_all(h.join(".codex")).unwrap();
    let no_codex = "/usr/bin:/bin";
    let r = lh_path(h, h, &["agents", "install", "--agent", "codex"], no_codex);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("NOT PROTECTING"), "{}", r.stderr);
    assert!(r.stderr.contains("`codex` is not on PATH"), "{}", r.stderr);
    let st = lh_path(h, h, &["agents", "status", "--agent", "codex"], no_codex);
    assert!(st.stdout.contains("NOT PROTECTING"), "{}", st.stdout);
    // With Codex on PATH, installing again trusts the hooks already written.
    let r = lh(h, h, &["agents", "install", "--agent", "codex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("Codex trusts leakhound's 3 hooks"),
        "{}",
        r.stderr
    );
    let st = lh(h, h, &["agents", "status", "--agent", "codex"]);
    assert!(!st.stdout.contains("NOT PROTECTING"), "{}", st.stdout);
    // A changed command is a changed hash: Codex no longer trusts it, and status says so.
    let hooks = h.join(".codex/hooks.json");
    let text = std::fs::read_to_string(&hooks).unwrap();
    std::fs::write(
        &hooks,
        text.replacen("hook codex", "hook codex --fail-open", 1),
    )
    .unwrap();
    let st = lh(h, h, &["agents", "status", "--agent", "codex"]);
    assert!(
        st.stdout
            .contains("NOT PROTECTING: Codex trusts 2 of leakhound's 3 hooks"),
        "{}",
        st.stdout
    );
}

/// The diff `--dry-run` prints is masked by value: a password the settings name under its key
/// outside the lines shown is masked where a shown line repeats it bare.
#[test]
fn a_dry_run_diff_masks_a_value_the_settings_name_elsewhere() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let password = "Vpzz63FfkCzJr4i0B3";
    let settings = format!(
        "{{\n\"mcpServers\": {{\"db\": {{\"command\": \"db-mcp\",\n  \"env\": {{\"DB_PASSWORD\": \"{password}\"}},\n  \"cwd\": \".\",\n  \"timeout\": 5,\n  \"trust\": false,\n  \"description\": \"db\",\n  \"args\": [\"--dsn-pass\", \"{password}\"]}}}},\n\"hooks\": {{}}}}\n"
    );
    write(&h.join(".gemini/settings.json"), &settings);
    let r = lh(
        h,
        h,
        &["agents", "install", "--agent", "gemini", "--dry-run"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("--dsn-pass"),
        "the repeat is shown: {}",
        r.stdout
    );
    assert!(!r.stdout.contains(password), "{}", r.stdout);
}

#[test]
fn dry_run_prints_the_change_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let claude = h.join(".claude/settings.json");
    write(&claude, CLAUDE);
    let r = lh(
        h,
        h,
        &[
            "agents",
            "install",
            "--dry-run",
            "--agent",
            "claude",
            "--agent",
            "cursor",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("+++ /dev/null") || r.stdout.contains("--- /dev/null"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("leakhound hook claude\""), "{}", r.stdout);
    assert!(r.stdout.contains("leakhound hook cursor\""), "{}", r.stdout);
    assert!(r.stdout.contains("\n+      {\n"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), CLAUDE);
    assert!(!backup(&claude).exists());
    assert!(!h.join(".cursor/hooks.json").exists());
    assert!(!h.join(".cursor").exists());

    // The same for uninstall.
    let r = lh(h, h, &["agents", "install", "--agent", "claude"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let installed = std::fs::read_to_string(&claude).unwrap();
    let r = lh(h, h, &["agents", "uninstall", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("-            \"command\": \""),
        "{}",
        r.stdout
    );
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), installed);
}

#[test]
fn status_lists_agents_events_and_files_and_the_cursor_overlap() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    write(&h.join(".claude/settings.json"), CLAUDE);
    std::fs::create_dir_all(h.join(".cursor")).unwrap();
    std::fs::create_dir_all(h.join(".codex")).unwrap();
    let r = lh(h, h, &["agents", "status"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = |agent: &str, scope: &str| {
        r.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{agent:<8} {scope:<8}")))
            .unwrap_or_else(|| panic!("no {agent} {scope} line:\n{}", r.stdout))
            .to_string()
    };
    assert!(line("claude", "user").contains("found"));
    assert!(line("claude", "user").contains("not installed"));
    assert!(
        line("gemini", "user").contains(" -  "),
        "{}",
        line("gemini", "user")
    );
    assert!(!r.stdout.contains("note:"));

    let r = lh(
        h,
        h,
        &[
            "agents", "install", "--agent", "claude", "--agent", "cursor",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("Cursor also runs Claude Code's hooks"),
        "{}",
        r.stderr
    );
    let r = lh(h, h, &["agents", "status"]);
    let claude = r
        .stdout
        .lines()
        .find(|l| l.starts_with("claude   user"))
        .unwrap();
    assert!(
        claude.contains("installed: PostToolUse PreToolUse UserPromptSubmit"),
        "{claude}"
    );
    assert!(claude.ends_with(&h.join(".claude/settings.json").display().to_string()));
    let cursor = r
        .stdout
        .lines()
        .find(|l| l.starts_with("cursor   user"))
        .unwrap();
    assert!(
        cursor.contains(
            "installed: postToolUse beforeShellExecution beforeMCPExecution beforeSubmitPrompt"
        ),
        "{cursor}"
    );
    let codex = r
        .stdout
        .lines()
        .find(|l| l.starts_with("codex    user"))
        .unwrap();
    assert!(
        codex.contains("found") && codex.contains("not installed"),
        "{codex}"
    );
    assert!(
        r.stdout
            .contains("note: Cursor also runs Claude Code's hooks"),
        "{}",
        r.stdout
    );

    // One event taken out by hand: partial.
    let p = h.join(".claude/settings.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    doc["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("UserPromptSubmit");
    std::fs::write(&p, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let r = lh(
        h,
        h,
        &["agents", "status", "--agent", "claude", "--scope", "user"],
    );
    assert!(
        r.stdout
            .contains("partial: PostToolUse PreToolUse (missing UserPromptSubmit)"),
        "{}",
        r.stdout
    );
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout); // header, one row, the note
}

#[test]
fn uninstall_after_the_user_edited_keeps_their_edit_and_the_backup() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let p = h.join(".claude/settings.json");
    write(&p, CLAUDE);
    assert_eq!(lh(h, h, &["agents", "install"]).code, 0);
    let edited = std::fs::read_to_string(&p)
        .unwrap()
        .replace("\"model\": \"opus\"", "\"model\": \"sonnet\"");
    std::fs::write(&p, &edited).unwrap();
    let r = lh(h, h, &["agents", "uninstall"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        CLAUDE.replace("\"model\": \"opus\"", "\"model\": \"sonnet\"")
    );
    assert!(backup(&p).exists());
    assert!(r.stderr.contains("backup"), "{}", r.stderr);
}

#[test]
fn a_settings_file_linked_from_dotfiles_stays_a_link() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let real = h.join("dotfiles/claude/settings.json");
    write(&real, CLAUDE);
    std::fs::create_dir_all(h.join(".claude")).unwrap();
    let link = h.join(".claude/settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let r = lh(h, h, &["agents", "install", "--agent", "claude"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .contains("leakhound hook claude"));
    let r = lh(h, h, &["agents", "uninstall", "--agent", "claude"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), CLAUDE);
}

#[test]
fn a_settings_file_that_is_not_json_is_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let p = h.join(".gemini/settings.json");
    let with_comment = "{\n  // my theme\n  \"ui\": {\"theme\": \"GitHub\"}\n}\n";
    write(&p, with_comment);
    let r = lh(h, h, &["agents", "install"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("not plain JSON"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), with_comment);
    assert!(!backup(&p).exists());
}

#[test]
fn project_scope_writes_the_projects_files_only() {
    let home = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    let (h, w) = (home.path(), proj.path());
    write(&h.join(".claude/settings.json"), CLAUDE);
    std::fs::create_dir_all(w.join(".claude")).unwrap();
    std::fs::create_dir_all(w.join(".github/hooks")).unwrap();
    let r = lh(h, w, &["agents", "install", "--scope", "project"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(h.join(".claude/settings.json")).unwrap(),
        CLAUDE
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(w.join(".claude/settings.json")).unwrap())
            .unwrap();
    assert_eq!(commands_for(&doc, "PreToolUse").len(), 1);
    let cop: Value = serde_json::from_str(
        &std::fs::read_to_string(w.join(".github/hooks/leakhound.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(cop["version"], 1);
    assert!(commands_for(&cop, "userPromptSubmitted")[0].ends_with("leakhound hook copilot"));
    // Copilot CLI runs the repository's Claude hooks too.
    assert!(r.stderr.contains("Copilot CLI also runs"), "{}", r.stderr);
    let r = lh(h, w, &["agents", "uninstall", "--scope", "project"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!w.join(".claude/settings.json").exists());
    assert!(!w.join(".github/hooks/leakhound.json").exists());
}

// ---- scrub ----

/// Fake credentials planted in the fixtures, in every form they take there.
struct Planted {
    key: String,
    secret: String,
    secret_u: String,
    secret_uu: String,
    gh: String,
    gh_b64: String,
}

impl Planted {
    fn new(seed: u64) -> Planted {
        let (key, mut secret) = fake_aws(seed);
        // A `+` and a `/`, so the escaped form differs from the plain one.
        secret.replace_range(5..6, "+");
        secret.replace_range(20..21, "/");
        let secret_u = secret.replace('+', "\\u002B").replace('/', "\\/");
        // Escaped again, as in JSON kept inside a JSON string.
        let secret_uu = secret_u.replace('\\', "\\\\");
        let gh = fake_github(seed);
        let gh_b64 = crate::synth::base64(format!("token: {gh}").as_bytes());
        Planted {
            key,
            secret,
            secret_u,
            secret_uu,
            gh,
            gh_b64,
        }
    }

    fn fill(&self, template: &str) -> String {
        template
            .replace("{{AWS_KEY_ID}}", &self.key)
            .replace("{{AWS_SECRET_UU}}", &self.secret_uu)
            .replace("{{AWS_SECRET_U}}", &self.secret_u)
            .replace("{{AWS_SECRET}}", &self.secret)
            .replace("{{GITHUB_TOKEN_B64}}", &self.gh_b64)
            .replace("{{GITHUB_TOKEN}}", &self.gh)
    }

    /// The planted values a text still shows a piece of, by name (never the value): any run
    /// of 5 characters of a plain value (a half-masked secret is a leak), or an escaped form
    /// whole (its pieces around `\u002B` could be any JSON escape; the plain value's pieces
    /// between escapes are the same characters and are checked there).
    fn found_in(&self, text: &str) -> Vec<&'static str> {
        let piece = |v: &str| {
            v.as_bytes()
                .windows(5)
                .any(|w| text.contains(std::str::from_utf8(w).unwrap()))
        };
        let whole = |v: &str| text.contains(v);
        [
            ("aws key id", piece(&self.key)),
            ("aws secret", piece(&self.secret)),
            ("aws secret (escaped)", whole(&self.secret_u)),
            ("aws secret (escaped twice)", whole(&self.secret_uu)),
            ("github token", piece(&self.gh)),
            // Its first 8 characters encode `token:`, text around the token, not of it.
            ("github token (base64)", piece(&self.gh_b64[8..])),
        ]
        .into_iter()
        .filter(|(_, found)| *found)
        .map(|(n, _)| n)
        .collect()
    }

    fn any_in(&self, text: &str) -> bool {
        !self.found_in(text).is_empty()
    }
}

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Where each fixture lives under HOME.
const LAYOUT: &[(&str, &str)] = &[
    (
        "claude/session.jsonl",
        ".claude/projects/-home-dev-app/5f0c2a8e-3b1d-4c6e-9f7a-0d2b4e6f8a1c.jsonl",
    ),
    (
        "claude/tool-result.txt",
        ".claude/projects/-home-dev-app/5f0c2a8e-3b1d-4c6e-9f7a-0d2b4e6f8a1c/tool-results/toolu_01AbC.txt",
    ),
    (
        "codex/rollout.jsonl",
        ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
    ),
    (
        "cursor/transcript.jsonl",
        ".cursor/projects/home-dev-app/agent-transcripts/9b1d2c3e/9b1d2c3e.jsonl",
    ),
    (
        "cursor/legacy.txt",
        ".cursor/projects/home-dev-app/agent-transcripts/4a5b6c7d.txt",
    ),
    (
        "copilot/events.jsonl",
        ".copilot/session-state/7c9e6679-7425-40de-944b-e07fc1f90ae7/events.jsonl",
    ),
    (
        "gemini/session.json",
        ".gemini/tmp/8d1f0e2c/chats/session-2026-11-30T12-00-3f2b8a10.json",
    ),
];

fn age(p: &Path, by: Duration) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now() - by).unwrap();
}

/// Every string in a JSON value, decoded, and again for strings that are JSON themselves
/// (Codex keeps a tool's output as JSON inside a JSON string).
fn decoded_strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
            if let Ok(inner) = serde_json::from_str::<Value>(s) {
                if inner.is_object() || inner.is_array() {
                    decoded_strings(&inner, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| decoded_strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| decoded_strings(x, out)),
        _ => {}
    }
}

fn plant_transcripts(home: &Path, p: &Planted) -> Vec<(PathBuf, String)> {
    LAYOUT
        .iter()
        .map(|(src, dst)| {
            let path = home.join(dst);
            let text = p.fill(&fixture(src));
            assert!(p.any_in(&text), "{src} plants nothing");
            write(&path, &text);
            age(&path, Duration::from_secs(3600));
            (path, text)
        })
        .collect()
}

#[test]
fn agents_scrub_masks_every_agents_transcripts_and_nothing_else() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let p = Planted::new(1401);
    let files = plant_transcripts(h, &p);
    let private = &files[0].0;
    std::fs::set_permissions(private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mtimes: Vec<SystemTime> = files
        .iter()
        .map(|(f, _)| std::fs::metadata(f).unwrap().modified().unwrap())
        .collect();

    let r = lh(h, h, &["agents", "scrub"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        !p.any_in(&r.stdout) && !p.any_in(&r.stderr),
        "a secret in the output"
    );
    assert!(
        r.stderr.contains("7 file(s) scanned, 7 changed"),
        "{}",
        r.stderr
    );
    // The torn last line of Copilot's events is masked as text, and said so.
    assert!(
        r.stderr
            .contains("events.jsonl:7: not JSON; masked as text"),
        "{}",
        r.stderr
    );

    for ((path, before), mtime) in files.iter().zip(&mtimes) {
        let after = std::fs::read_to_string(path).unwrap();
        let name = path.display();
        assert!(
            !p.any_in(&after),
            "{name}: still holds {:?}",
            p.found_in(&after)
        );
        assert!(after.contains("[REDACTED:"), "{name}");
        assert_eq!(
            std::fs::metadata(path).unwrap().modified().unwrap(),
            *mtime,
            "{name}"
        );
        if path.extension().is_some_and(|e| e == "jsonl") {
            let (b, a): (Vec<&str>, Vec<&str>) =
                (before.lines().collect(), after.lines().collect());
            assert_eq!(b.len(), a.len(), "{name}");
            for (i, (lb, la)) in b.iter().zip(&a).enumerate() {
                if p.any_in(lb) {
                    assert_ne!(lb, la, "{name}:{}", i + 1);
                } else {
                    assert_eq!(lb, la, "{name}:{}: a line without a secret changed", i + 1);
                }
                let Ok(v) = serde_json::from_str::<Value>(la) else {
                    // Only the line that was not JSON before.
                    assert!(
                        serde_json::from_str::<Value>(lb).is_err(),
                        "{name}:{}",
                        i + 1
                    );
                    continue;
                };
                let mut text = String::new();
                decoded_strings(&v, &mut text);
                assert!(
                    !p.any_in(&text),
                    "{name}:{}: decoded, still {:?}",
                    i + 1,
                    p.found_in(&text)
                );
            }
        }
        if path.extension().is_some_and(|e| e == "json") {
            let v: Value = serde_json::from_str(&after).unwrap();
            let mut text = String::new();
            decoded_strings(&v, &mut text);
            assert!(
                !p.any_in(&text),
                "{name}: decoded, still {:?}",
                p.found_in(&text)
            );
        }
    }
    assert_eq!(mode(private), 0o600);

    // Scrubbed is scrubbed: a second run finds nothing and changes nothing.
    let again = lh(h, h, &["agents", "scrub"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.is_empty(), "{}", again.stdout);
}

#[test]
fn a_recent_file_is_skipped_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = Planted::new(1402);
    let f = d.join("live/session.jsonl");
    let text = p.fill(&fixture("claude/session.jsonl"));
    write(&f, &text);
    let r = lh(d, d, &["scrub", "live"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("skipped live/session.jsonl: modified"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    // Every file was skipped: said as such, not only as "0 changed".
    assert!(
        r.stderr
            .contains("nothing was scrubbed: every file (1) was skipped"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), text);

    let r = lh(d, d, &["scrub", "--force", "live"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stderr.contains("nothing was scrubbed"), "{}", r.stderr);
    assert!(!p.any_in(&std::fs::read_to_string(&f).unwrap()));
    // And --min-age 0 takes any file, however fresh.
    let g = d.join("fresh.txt");
    write(&g, &format!("GITHUB_TOKEN={}\n", p.gh));
    let r = lh(d, d, &["scrub", "--min-age", "0", "fresh.txt"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let masked = std::fs::read_to_string(&g).unwrap();
    assert!(
        masked.starts_with("GITHUB_TOKEN=[REDACTED:") && !p.any_in(&masked),
        "{masked}"
    );
}

#[test]
fn scrub_dry_run_lists_file_line_and_rule_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = Planted::new(1403);
    let f = d.join("rollout.jsonl");
    let text = p.fill(&fixture("codex/rollout.jsonl"));
    write(&f, &text);
    age(&f, Duration::from_secs(600));
    let r = lh(d, d, &["scrub", "--dry-run", "rollout.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
    assert!(!p.any_in(&r.stdout) && !p.any_in(&r.stderr));
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(!lines.is_empty());
    for l in &lines {
        let mut parts = l.splitn(3, ':');
        assert_eq!(parts.next(), Some("rollout.jsonl"), "{l}");
        let n: usize = parts.next().unwrap().parse().unwrap();
        assert!([4, 5].contains(&n), "{l}: line {n} holds no secret");
        assert!(
            parts.next().unwrap().trim().contains('.'),
            "{l}: no rule id"
        );
    }
    assert!(r.stderr.contains("1 would change"), "{}", r.stderr);
}

/// A text file in UTF-16 (what a Windows tool writes) is text, not binary: scrub masks it
/// through its characters and writes the markers in UTF-16, the byte-order mark kept. A
/// file with NULs that is not UTF-16 is still skipped as binary.
#[test]
fn scrub_masks_utf16_text_and_skips_binary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let token = fake_github(1404);
    let utf16 = |s: &str| {
        let mut b = vec![0xff, 0xfe];
        b.extend(s.encode_utf16().flat_map(u16::to_le_bytes));
        b
    };
    std::fs::write(d.join("log.txt"), utf16(&format!("token {token}\nok\n"))).unwrap();
    let mut binary = format!("token {token}\n").into_bytes();
    binary.extend([0, 1, 2, 0xff, 0, 0x80]);
    std::fs::write(d.join("blob.bin"), &binary).unwrap();
    let r = lh(d, d, &["scrub", "--force", "log.txt", "blob.bin"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        std::fs::read(d.join("log.txt")).unwrap(),
        utf16("token [REDACTED:github.pat]\nok\n")
    );
    assert!(r.stderr.contains("blob.bin: binary"), "{}", r.stderr);
    assert_eq!(std::fs::read(d.join("blob.bin")).unwrap(), binary);
}

#[test]
fn scrub_reports_a_missing_path_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = Planted::new(1404);
    let f = d.join("notes.txt");
    write(&f, &p.fill("deploy with {{GITHUB_TOKEN}}\n"));
    age(&f, Duration::from_secs(600));
    let nb = d.join("nb.ipynb");
    let cell = serde_json::json!({
        "cells": [{"cell_type": "code", "source": [format!("token = \"{}\"\n", p.gh)],
                   "metadata": {}, "outputs": [], "execution_count": null}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    });
    write(&nb, &serde_json::to_string_pretty(&cell).unwrap());
    age(&nb, Duration::from_secs(600));
    let r = lh(d, d, &["scrub", "missing-dir", "notes.txt", "nb.ipynb"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("missing-dir"), "{}", r.stderr);
    assert!(r.stderr.contains("1 error(s)"), "{}", r.stderr);
    assert!(!p.any_in(&std::fs::read_to_string(&f).unwrap()));
    let nb_after = std::fs::read_to_string(&nb).unwrap();
    assert!(!p.any_in(&nb_after));
    serde_json::from_str::<Value>(&nb_after).unwrap();
    assert!(r.stdout.contains("nb.ipynb:"), "{}", r.stdout);
}

#[test]
fn a_config_inside_the_scrubbed_folder_cannot_turn_masking_off() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = Planted::new(1405);
    // A transcript folder is written by the agent, so anything in it is input, not config.
    write(
        &d.join("leakhound.toml"),
        "[rules]\ndisable = [\"github.*\", \"generic.*\"]\n",
    );
    let f = d.join("log.txt");
    write(&f, &format!("GITHUB_TOKEN={}\n", p.gh));
    age(&f, Duration::from_secs(600));
    let r = lh(d, d, &["scrub", "."]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!p.any_in(&std::fs::read_to_string(&f).unwrap()));
}

/// Regression #13: `scrub --force` on a transcript a writer holds open lost every line the
/// writer appended after the masked copy was renamed over it (they went to the replaced
/// file), and said it succeeded. A writer appends through one open handle the whole time
/// scrub runs; every line it wrote must be in the final file, masked.
#[test]
fn scrub_force_keeps_every_line_a_writer_appends_meanwhile() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = d.join("live.jsonl");
    let token = |n: u64| fake_github(130_000 + n);
    let line = move |n: u64| {
        format!(
            "{{\"n\": \"line-{n}-end\", \"out\": \"GITHUB_TOKEN={}\"}}\n",
            token(n)
        )
    };
    // Enough to mask that the writer is still at it when the copy is renamed.
    let first = 3000;
    write(&f, &(0..first).map(line).collect::<String>());
    // The writer says when its first line is down, so scrub starts while it is writing
    // (rather than after a pause that may or may not have let it begin).
    let (started, writing) = std::sync::mpsc::channel();
    let writer = {
        let f = f.clone();
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
            let start = std::time::Instant::now();
            let mut n = first;
            while start.elapsed() < Duration::from_millis(1500) {
                w.write_all(line(n).as_bytes()).unwrap();
                if n == first {
                    started.send(()).unwrap();
                }
                n += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            n
        })
    };
    writing.recv().unwrap();
    let r = lh(d, d, &["scrub", "--force", "live.jsonl"]);
    let written = writer.join().unwrap();
    assert_eq!(r.code, 1, "{}", r.stderr);
    let text = std::fs::read_to_string(&f).unwrap();
    let missing: Vec<u64> = (0..written)
        .filter(|n| !text.contains(&format!("\"line-{n}-end\"")))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {written} lines lost (first {:?}); scrub said: {}",
        missing.len(),
        &missing[..missing.len().min(5)],
        r.stderr
    );
    let clear: Vec<u64> = (0..written).filter(|&n| text.contains(&token(n))).collect();
    assert!(
        clear.is_empty(),
        "{} lines not masked: {:?}",
        clear.len(),
        &clear[..clear.len().min(5)]
    );
    for l in text.lines() {
        serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"));
    }
}

/// Each agent has one table of events (`Agent::events`), read by both `agents install` and
/// `hook`: what install writes into a fresh settings file is exactly the table's `install`
/// rows, every row is answered (not refused as unknown), a name outside the table is refused,
/// and every agent installs an event of each stage, the prompt included (Codex and Gemini
/// once lacked theirs; Gemini's `BeforeAgent` was once answered but not installed).
#[test]
fn every_installed_event_is_answered_and_every_answered_event_is_in_the_table() {
    use leakhound::agents::{Agent, Env, Scope, Stage};
    let sb = crate::util::Sandbox::new();
    let home = tempfile::tempdir().unwrap();
    let env = Env {
        home: home.path().to_path_buf(),
        project: home.path().join("project"),
        claude_dir: None,
        codex_home: None,
        copilot_home: None,
    };
    let answered = |agent: Agent, name: &str| {
        let doc = serde_json::json!({"hook_event_name": name});
        let r = sb.run_stdin(&["hook", agent.name()], Some(doc.to_string().as_bytes()));
        let refused = r.stderr.contains("not one leakhound");
        assert!(
            refused || r.stderr.contains("the event has no"),
            "{} {name}: {}",
            agent.name(),
            r.stderr
        );
        !refused
    };
    for agent in Agent::ALL {
        let installs: Vec<&str> = agent.installs().map(|e| e.name).collect();
        for stage in [Stage::AfterTool, Stage::BeforeTool, Stage::BeforePrompt] {
            assert!(
                agent.installs().any(|e| e.stage == stage),
                "{} installs no {stage:?} event",
                agent.name()
            );
        }
        // What install writes: the `hooks` object's keys in a new settings file.
        let plan =
            leakhound::agents::plan_install(agent, Scope::User, &env, "leakhound hook x").unwrap();
        let written: serde_json::Value = serde_json::from_str(plan.after.as_deref().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", agent.name()));
        let mut keys: Vec<&str> = written["hooks"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut want = installs.clone();
        keys.sort();
        want.sort();
        assert_eq!(keys, want, "{} writes its install rows", agent.name());
        for e in agent.events() {
            assert!(
                answered(agent, e.name),
                "{} {} is answered",
                agent.name(),
                e.name
            );
        }
        // Names every other agent answers, and one no agent does: answered only if in this
        // agent's own table.
        let mut others: Vec<&str> = Agent::ALL
            .iter()
            .flat_map(|a| a.events().iter().map(|e| e.name))
            .collect();
        others.push("SessionStart");
        others.sort();
        others.dedup();
        for name in others {
            assert_eq!(
                answered(agent, name),
                agent.event(name).is_some(),
                "{} {name}",
                agent.name()
            );
        }
    }
}
