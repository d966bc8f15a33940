//! `leakhound hook AGENT` on recorded events in each agent's documented shape
//! (tests/fixtures/agents/, sources in its README): the answer field by field, blocks that
//! name no secret, the no-op, failing closed and open, the report and audit log, and the
//! Claude fixtures and answers compiled against the Claude Agent SDK's own types.

use crate::util::{fake_aws, missing_message, pin, Run, Sandbox};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

// Cursor's events that had no fixture (hooks.rs is over 600 lines already).
mod cursor;

const WITHHELD: &str = "withheld: leakhound could not scan this output";
const KEY_MASK: &str = "[REDACTED:aws.access-key-id]";
const SECRET_MASK: &str = "[REDACTED:aws.secret-access-key]";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents")
}

/// A fixture with a fresh fake key pair in place of its placeholders.
struct Event {
    text: String,
    key: String,
    secret: String,
}

impl Event {
    fn load(agent: &str, name: &str, seed: u64) -> Event {
        let (key, secret) = fake_aws(seed);
        Event::with(agent, name, &key, &secret)
    }

    fn with(agent: &str, name: &str, key: &str, secret: &str) -> Event {
        let raw = std::fs::read_to_string(fixtures().join(agent).join(format!("{name}.json")))
            .unwrap_or_else(|e| panic!("fixture {agent}/{name}: {e}"));
        // The secret may hold `/` and `+`, which need no escaping inside a JSON string.
        let text = raw
            .replace("@@AWS_KEY_ID@@", key)
            .replace("@@AWS_SECRET@@", secret);
        Event {
            text,
            key: key.into(),
            secret: secret.into(),
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap()
    }

    /// `s` as the masker must leave it: each secret replaced by its marker, nothing else.
    fn masked(&self, s: &str) -> String {
        s.replace(&self.key, KEY_MASK)
            .replace(&self.secret, SECRET_MASK)
    }

    /// Whether any part of the key pair (8 characters or more) is in `out`.
    fn leaks(&self, out: &str) -> bool {
        [&self.key, &self.secret].iter().any(|s| {
            s.as_bytes()
                .windows(8)
                .any(|w| out.contains(std::str::from_utf8(w).unwrap()))
        })
    }
}

fn hook(sb: &Sandbox, agent: &str, ev: &str, args: &[&str]) -> Run {
    let mut all = vec!["hook", agent];
    all.extend_from_slice(args);
    sb.run_stdin(&all, Some(ev.as_bytes()))
}

/// Run, expect exit 0 and one JSON document on stdout.
fn answer(sb: &Sandbox, agent: &str, ev: &Event, args: &[&str]) -> Value {
    let r = hook(sb, agent, &ev.text, args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!ev.leaks(&r.stdout), "a secret in the answer: {}", r.stdout);
    assert!(!ev.leaks(&r.stderr), "a secret on stderr: {}", r.stderr);
    r.json()
}

/// `masked` is `orig` with the key pair masked in every string and every other value, key
/// and type the same.
fn assert_masked_copy(ev: &Event, orig: &Value, masked: &Value, at: &str) {
    match (orig, masked) {
        (Value::Object(a), Value::Object(b)) => {
            let ka: Vec<_> = a.keys().collect();
            let kb: Vec<_> = b.keys().collect();
            assert_eq!(ka, kb, "keys at {at}");
            for (k, v) in a {
                assert_masked_copy(ev, v, &b[k], &format!("{at}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "length at {at}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_masked_copy(ev, x, y, &format!("{at}[{i}]"));
            }
        }
        (Value::String(a), Value::String(b)) => assert_eq!(&ev.masked(a), b, "at {at}"),
        (a, b) => assert_eq!(a, b, "at {at}"),
    }
}

#[test]
fn claude_post_tool_use_gets_the_same_shape_back_with_both_keys_masked() {
    let sb = Sandbox::new();
    for (i, name) in [
        "post_tool_use_bash",
        "post_tool_use_read",
        "post_tool_use_mcp",
    ]
    .iter()
    .enumerate()
    {
        let ev = Event::load("claude", name, 900 + i as u64);
        let orig = &ev.json()["tool_response"];
        assert!(ev.text.contains(&ev.key) && ev.text.contains(&ev.secret));
        let a = answer(&sb, "claude", &ev, &[]);
        let hso = &a["hookSpecificOutput"];
        assert_eq!(hso["hookEventName"], "PostToolUse", "{name}");
        assert_masked_copy(&ev, orig, &hso["updatedToolOutput"], name);
        assert_ne!(
            orig, &hso["updatedToolOutput"],
            "{name}: nothing was masked"
        );
        // MCP tools: also the field Claude Code before 2.1.121 reads.
        if name.ends_with("mcp") {
            assert_eq!(hso["updatedMCPToolOutput"], hso["updatedToolOutput"]);
        } else {
            assert!(hso.get("updatedMCPToolOutput").is_none());
        }
    }
}

#[test]
fn claude_persisted_output_is_masked_in_place_with_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let (key, secret) = fake_aws(910);
    let full =
        format!("step 1\naws_access_key_id = {key}\naws_secret_access_key = {secret}\ndone\n");
    let file = sb.write("claude/projects/-app/s1/tool-results/toolu_01.txt", &full);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let mut ev = Event::with("claude", "post_tool_use_bash_persisted", &key, &secret);
    ev.text = ev.text.replace("@@PERSISTED@@", file.to_str().unwrap());
    let r = persisted_hook(&sb, &ev);
    // The inline preview holds no secret: nothing to replace there.
    assert_eq!(r.json(), json!({}));
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(after, ev.masked(&full));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "a temporary file was left behind");
}

/// `hook claude` on `ev` with Claude's config folder at `claude/` in the sandbox.
fn persisted_hook(sb: &Sandbox, ev: &Event) -> Run {
    let mut c = sb.cmd();
    c.args(["hook", "claude"])
        .env("CLAUDE_CONFIG_DIR", sb.path("claude"));
    let r = crate::util::run_with_stdin(c, Some(ev.text.as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!ev.leaks(&r.stdout), "a secret in the answer: {}", r.stdout);
    assert!(!ev.leaks(&r.stderr), "a secret on stderr: {}", r.stderr);
    r
}

/// Regression #12: the hook rewrote whatever file `persistedOutputPath` named. Only a file
/// in a `tool-results` folder under Claude's config folder is; others are left as they are,
/// with a note that does not repeat the path.
#[test]
fn a_persisted_output_path_outside_claudes_tool_results_is_left_alone() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.path("claude/projects")).unwrap();
    let (key, secret) = fake_aws(911);
    let full = format!("aws_access_key_id = {key}\naws_secret_access_key = {secret}\n");
    let outside = sb.write("project/tool-results/notes.txt", &full);
    let not_results = sb.write("claude/settings.local.txt", &full);
    let results = sb.path("claude/projects/-app/s1/tool-results");
    std::fs::create_dir_all(&results).unwrap();
    let link = results.join("link.txt");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    for (path, why) in [
        (
            outside.to_str().unwrap().to_string(),
            "the path is outside Claude's config folder",
        ),
        (
            not_results.to_str().unwrap().to_string(),
            "the path is not in a tool-results folder",
        ),
        (
            link.to_str().unwrap().to_string(),
            "the path is not a regular file",
        ),
        (
            "project/tool-results/notes.txt".to_string(),
            "the path is not absolute",
        ),
    ] {
        let mut ev = Event::with("claude", "post_tool_use_bash_persisted", &key, &secret);
        ev.text = ev.text.replace("@@PERSISTED@@", &path);
        let r = persisted_hook(&sb, &ev);
        assert_eq!(r.json(), json!({}), "{path}");
        assert!(r.stderr.contains(why), "{path}: {}", r.stderr);
        assert!(!r.stderr.contains("notes.txt"), "{}", r.stderr);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), full, "{path}");
        assert_eq!(
            std::fs::read_to_string(&not_results).unwrap(),
            full,
            "{path}"
        );
    }
}

#[test]
fn codex_gemini_copilot_and_cursor_get_the_masked_output_in_their_own_shapes() {
    let sb = Sandbox::new();

    let ev = Event::load("codex", "post_tool_use", 920);
    let a = answer(&sb, "codex", &ev, &[]);
    let orig = ev.json()["tool_response"].as_str().unwrap().to_string();
    assert_eq!(a, json!({"decision": "block", "reason": ev.masked(&orig)}));

    let ev = Event::load("gemini", "after_tool", 921);
    let a = answer(&sb, "gemini", &ev, &[]);
    let text = ev.masked(ev.json()["tool_response"]["llmContent"].as_str().unwrap());
    assert_eq!(
        a,
        json!({"decision": "deny", "reason": text,
               "hookSpecificOutput": {"hookEventName": "AfterTool", "tool_output": text}})
    );

    for (name, field) in [
        ("post_tool_use", "toolResult"),
        ("post_tool_use_vscode", "tool_result"),
    ] {
        let ev = Event::load("copilot", name, 922);
        let a = answer(&sb, "copilot", &ev, &[]);
        let orig = ev.json()[field]
            .as_object()
            .and_then(|o| o.values().find_map(|v| v.as_str().filter(|s| s.len() > 20)))
            .unwrap()
            .to_string();
        assert_eq!(
            a,
            json!({"modifiedResult": {"resultType": "success", "textResultForLlm": ev.masked(&orig)}}),
            "{name}"
        );
    }

    let ev = Event::load("cursor", "post_tool_use_mcp", 923);
    let a = answer(&sb, "cursor", &ev, &[]);
    let orig: Value = serde_json::from_str(ev.json()["tool_output"].as_str().unwrap()).unwrap();
    assert_eq!(a.as_object().unwrap().len(), 1, "{a}");
    assert_masked_copy(
        &ev,
        &orig,
        &a["updated_mcp_tool_output"],
        "updated_mcp_tool_output",
    );
    assert_ne!(orig, a["updated_mcp_tool_output"]);
}

#[test]
fn cursor_cannot_replace_shell_output_and_says_so() {
    let sb = Sandbox::new();
    let ev = Event::load("cursor", "post_tool_use_shell", 930);
    let r = hook(&sb, "cursor", &ev.text, &[]);
    assert_eq!(r.code, 0);
    let a = r.json();
    assert!(!ev.leaks(&r.stdout) && !ev.leaks(&r.stderr));
    let ctx = a["additional_context"].as_str().unwrap();
    assert!(
        ctx.contains("aws.access-key-id") && ctx.contains("rotate"),
        "{ctx}"
    );
    assert!(a.get("updated_mcp_tool_output").is_none());
    assert!(
        r.stderr.contains("does not let a hook replace"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_prompt_with_a_secret_is_blocked_with_a_reason_that_holds_no_secret() {
    let sb = Sandbox::new();
    let cases = [
        ("claude", "user_prompt_submit", "reason"),
        ("codex", "user_prompt_submit", "reason"),
        ("gemini", "before_agent", "reason"),
        ("cursor", "before_submit_prompt", "user_message"),
    ];
    for (i, (agent, name, field)) in cases.iter().enumerate() {
        let ev = Event::load(agent, name, 940 + i as u64);
        let a = answer(&sb, agent, &ev, &[]);
        let why = a[field].as_str().unwrap_or_else(|| panic!("{agent}: {a}"));
        assert!(
            why.contains("aws.access-key-id in prompt at line 1, column 31")
                && why.contains("aws.secret-access-key"),
            "{agent}: {why}"
        );
        match *agent {
            "claude" => {
                assert_eq!(a["decision"], "block");
                assert_eq!(a["hookSpecificOutput"]["suppressOriginalPrompt"], true);
            }
            "codex" => assert_eq!(a["decision"], "block"),
            "gemini" => assert_eq!(a["decision"], "deny"),
            _ => assert_eq!(a["continue"], false),
        }
    }
    // Copilot cannot block a prompt; it can rewrite what the model receives.
    let ev = Event::load("copilot", "user_prompt_transformed", 945);
    let a = answer(&sb, "copilot", &ev, &[]);
    let orig = ev.json()["transformedPrompt"].as_str().unwrap().to_string();
    assert_eq!(a, json!({"modifiedTransformedPrompt": ev.masked(&orig)}));
}

#[test]
fn a_tool_call_with_a_secret_is_denied_with_a_reason_that_holds_no_secret() {
    let sb = Sandbox::new();
    let cases = [
        ("claude", "pre_tool_use_bash"),
        ("codex", "pre_tool_use"),
        ("gemini", "before_tool"),
        ("copilot", "pre_tool_use"),
        ("cursor", "before_shell_execution"),
        ("cursor", "before_mcp_execution"),
    ];
    for (i, (agent, name)) in cases.iter().enumerate() {
        let ev = Event::load(agent, name, 950 + i as u64);
        let a = answer(&sb, agent, &ev, &[]);
        let why = match *agent {
            "claude" | "codex" => {
                let h = &a["hookSpecificOutput"];
                assert_eq!(h["hookEventName"], "PreToolUse");
                assert_eq!(h["permissionDecision"], "deny");
                h["permissionDecisionReason"].clone()
            }
            "gemini" => {
                assert_eq!(a["decision"], "deny");
                a["reason"].clone()
            }
            "copilot" => {
                assert_eq!(a["permissionDecision"], "deny");
                a["permissionDecisionReason"].clone()
            }
            _ => {
                assert_eq!(a["permission"], "deny");
                assert_eq!(a["agent_message"], a["user_message"]);
                a["agent_message"].clone()
            }
        };
        let why = why
            .as_str()
            .unwrap_or_else(|| panic!("{agent} {name}: {a}"));
        assert!(
            why.contains("aws.access-key-id in "),
            "{agent} {name}: {why}"
        );
    }
}

#[test]
fn no_secret_gets_the_no_op_answer() {
    let sb = Sandbox::new();
    let all = [
        ("claude", "post_tool_use_bash"),
        ("claude", "user_prompt_submit"),
        ("claude", "pre_tool_use_bash"),
        ("codex", "post_tool_use"),
        ("gemini", "after_tool"),
        ("copilot", "post_tool_use"),
        ("copilot", "user_prompt_transformed"),
        ("cursor", "post_tool_use_mcp"),
        ("cursor", "before_shell_execution"),
    ];
    for (agent, name) in all {
        let ev = Event::with(agent, name, "KEY_ID_FROM_VAULT", "see-the-vault");
        let r = hook(&sb, agent, &ev.text, &[]);
        assert_eq!(
            (r.code, r.stdout.trim()),
            (0, "{}"),
            "{agent} {name}: {}",
            r.stderr
        );
    }
}

#[test]
fn an_unreadable_event_fails_closed_in_valid_json_and_open_with_a_warning() {
    let sb = Sandbox::new();
    for agent in ["claude", "codex", "gemini", "copilot", "cursor"] {
        let r = hook(
            &sb,
            agent,
            "{\"hook_event_name\": \"PostToolUse\", \"tool_",
            &[],
        );
        assert_eq!(r.code, 0, "{agent}");
        let a = r.json();
        assert_ne!(a, json!({}), "{agent}: let through");
        assert!(r.stdout.contains(WITHHELD), "{agent}: {}", r.stdout);
        assert!(
            r.stderr.contains("withheld (fail closed)"),
            "{agent}: {}",
            r.stderr
        );

        let r = hook(
            &sb,
            agent,
            "not json",
            &["--fail-open", "--audit-log", "audit.jsonl"],
        );
        assert_eq!((r.code, r.json()), (0, json!({})), "{agent}");
        assert!(r.stderr.contains("--fail-open"), "{agent}: {}", r.stderr);
    }
    // What was let through unscanned is on record.
    let audit = std::fs::read_to_string(sb.path("audit.jsonl")).unwrap();
    let outcomes: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["outcome"].clone())
        .collect();
    assert_eq!(outcomes, vec![json!("unscanned"); 5]);
    // An event leakhound does not answer is an error too.
    let r = hook(
        &sb,
        "claude",
        r#"{"hook_event_name": "SessionStart", "source": "startup"}"#,
        &[],
    );
    assert_eq!(r.json()["continue"], false, "{}", r.stdout);
}

/// Regression #14: an event name leakhound does not know was echoed into the answer and on
/// stderr, and an agent (or an attacker feeding it) can put anything in it.
#[test]
fn an_unknown_event_name_holding_a_secret_is_not_echoed() {
    let sb = Sandbox::new();
    let (key, secret) = fake_aws(940);
    let ev = json!({"hook_event_name": format!("{key} {secret}"), "prompt": "hi"}).to_string();
    for args in [&[][..], &["--fail-open"][..]] {
        let r = hook(&sb, "claude", &ev, args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json();
        assert!(
            r.stderr.contains("not one leakhound answers"),
            "{}",
            r.stderr
        );
        for piece in [&key, &secret].iter().flat_map(|s| s.as_bytes().windows(5)) {
            let piece = std::str::from_utf8(piece).unwrap();
            assert!(!r.stdout.contains(piece), "{piece:?} in {}", r.stdout);
            assert!(!r.stderr.contains(piece), "{piece:?} in {}", r.stderr);
        }
    }
}

#[test]
fn output_that_cannot_be_scanned_is_withheld_in_the_agents_shape() {
    let sb = Sandbox::new();
    // A config that does not exist: no engine, so nothing can be scanned.
    let broken = ["--config", "missing.toml"];
    let ev = Event::load("claude", "post_tool_use_bash", 960);
    let a = answer(&sb, "claude", &ev, &broken);
    assert_eq!(
        a["hookSpecificOutput"]["updatedToolOutput"],
        json!({"stdout": WITHHELD, "stderr": WITHHELD, "interrupted": false,
               "isImage": false, "noOutputExpected": false})
    );
    let ev = Event::load("copilot", "post_tool_use", 961);
    let a = answer(&sb, "copilot", &ev, &broken);
    assert_eq!(a["modifiedResult"]["textResultForLlm"], WITHHELD);
    let ev = Event::load("cursor", "post_tool_use_mcp", 962);
    let a = answer(&sb, "cursor", &ev, &broken);
    assert_eq!(
        a["updated_mcp_tool_output"],
        json!({"content": [{"type": "text", "text": WITHHELD}]})
    );
    let ev = Event::load("claude", "pre_tool_use_bash", 963);
    let a = answer(&sb, "claude", &ev, &broken);
    assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");

    let ev = Event::load("claude", "post_tool_use_bash", 964);
    let r = hook(
        &sb,
        "claude",
        &ev.text,
        &["--config", "missing.toml", "--fail-open"],
    );
    assert_eq!((r.code, r.json()), (0, json!({})));
    assert!(r.stderr.contains("missing.toml"), "{}", r.stderr);
}

#[test]
fn the_report_and_audit_log_record_each_masked_secret_redacted() {
    let sb = Sandbox::new();
    let ev = Event::load("claude", "post_tool_use_bash", 970);
    answer(
        &sb,
        "claude",
        &ev,
        &["--report", "found.jsonl", "--audit-log", "audit.jsonl"],
    );
    let ev2 = Event::load("cursor", "before_shell_execution", 971);
    answer(
        &sb,
        "cursor",
        &ev2,
        &["--report", "found.jsonl", "--audit-log", "audit.jsonl"],
    );
    let report = std::fs::read_to_string(sb.path("found.jsonl")).unwrap();
    let rules: Vec<String> = report
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["rule"]
                .as_str()
                .unwrap()
                .into()
        })
        .collect();
    assert_eq!(rules.len(), 4, "{report}");
    assert!(
        rules.iter().any(|r| r == "aws.secret-access-key"),
        "{rules:?}"
    );
    let audit = std::fs::read_to_string(sb.path("audit.jsonl")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "{audit}");
    assert_eq!(lines[0]["agent"], "claude");
    assert_eq!(lines[0]["outcome"], "masked");
    assert_eq!(lines[3]["agent"], "cursor");
    assert_eq!(lines[3]["outcome"], "blocked");
    // AWS key ids are identifiers and may be named; the secret never.
    for text in [&report, &audit] {
        assert!(
            !text.contains(&ev.secret[..12]) && !text.contains(&ev2.secret[..12]),
            "{text}"
        );
    }
}

// ---- Claude's own types ----

/// Where tests/run.sh installs TypeScript and the Claude Agent SDK (outside the sources).
fn agent_types() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-types")
}

fn require_tsc() -> PathBuf {
    let tsc = agent_types().join("node_modules/.bin/tsc");
    let sdk = agent_types().join("node_modules/@anthropic-ai/claude-agent-sdk/sdk.d.ts");
    if !tsc.exists() || !sdk.exists() {
        panic!(
            "{}",
            missing_message(
                "TypeScript and the Claude Agent SDK types (npm) in target/agent-types",
                &format!(
                    "npm install --prefix target/agent-types --omit=optional typescript@{} \
                     @anthropic-ai/claude-agent-sdk@{}",
                    pin("TYPESCRIPT"),
                    pin("CLAUDE_AGENT_SDK")
                )
            )
        );
    }
    tsc
}

#[test]
fn claude_fixtures_and_answers_type_check_against_the_agent_sdk() {
    let tsc = require_tsc();
    let sb = Sandbox::new();
    let file = sb.write("tool-results/out.txt", "nothing\n");
    let mut ts = String::from(
        "import type { PostToolUseHookInput, PreToolUseHookInput, UserPromptSubmitHookInput,\n\
         SyncHookJSONOutput } from \"@anthropic-ai/claude-agent-sdk\";\n\
         import type { BashInput, BashOutput, FileReadInput, FileReadOutput, McpInput, McpOutput }\n\
         from \"@anthropic-ai/claude-agent-sdk/sdk-tools\";\n",
    );
    let mut n = 0;
    let mut constant = |ts: &mut String, ty: &str, v: &Value| {
        n += 1;
        ts.push_str(&format!("export const c{n}: {ty} = {v};\n"));
    };
    let names = [
        "post_tool_use_bash",
        "post_tool_use_bash_persisted",
        "post_tool_use_read",
        "post_tool_use_mcp",
        "post_tool_use_clean",
        "pre_tool_use_bash",
        "user_prompt_submit",
    ];
    for (i, name) in names.iter().enumerate() {
        let mut ev = Event::load("claude", name, 980 + i as u64);
        ev.text = ev.text.replace("@@PERSISTED@@", file.to_str().unwrap());
        let doc = ev.json();
        let (tool_in, tool_out) = match doc["tool_name"].as_str() {
            Some("Bash") => ("BashInput", "BashOutput"),
            Some("Read") => ("FileReadInput", "FileReadOutput"),
            _ => ("McpInput", "McpOutput"),
        };
        let event_ty = match doc["hook_event_name"].as_str().unwrap() {
            "PostToolUse" => "PostToolUseHookInput",
            "PreToolUse" => "PreToolUseHookInput",
            _ => "UserPromptSubmitHookInput",
        };
        constant(&mut ts, event_ty, &doc);
        if doc.get("tool_input").is_some() {
            constant(&mut ts, tool_in, &doc["tool_input"]);
        }
        if doc.get("tool_response").is_some() {
            constant(&mut ts, tool_out, &doc["tool_response"]);
        }
        for args in [&[][..], &["--config", "missing.toml"][..]] {
            let a = answer(&sb, "claude", &ev, args);
            constant(&mut ts, "SyncHookJSONOutput", &a);
            let updated = &a["hookSpecificOutput"]["updatedToolOutput"];
            if !updated.is_null() {
                constant(&mut ts, tool_out, updated);
            }
        }
    }
    let unreadable = hook(&sb, "claude", "{", &[]).json();
    constant(&mut ts, "SyncHookJSONOutput", &unreadable);
    // The checker is live: a Bash result with a field it does not have must be refused.
    ts.push_str(
        "// @ts-expect-error an unknown field\n\
         export const wrong: BashOutput = {stdout: \"\", stderr: \"\", interrupted: false, extra: 1};\n",
    );
    // Module resolution walks up from the file to target/agent-types/node_modules.
    let dir = agent_types().join(format!("check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("claude.ts"), &ts).unwrap();
    std::fs::write(
        dir.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true, "noEmit": true, "module": "nodenext",
            "moduleResolution": "nodenext", "target": "es2022", "skipLibCheck": true,
            "types": []}, "files": ["claude.ts"]}"#,
    )
    .unwrap();
    let out = std::process::Command::new(&tsc)
        .arg("-p")
        .arg(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "tsc refused a fixture or an answer:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        ts
    );
}

/// Regression #7: `--audit-log` naming a FIFO blocked the hook in `open` until something read
/// it, and the agent waited with it. The FIFO is refused at once and the event answered.
#[test]
fn a_fifo_at_the_audit_log_is_refused_and_the_hook_still_answers() {
    use std::io::Write;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let sb = Sandbox::new();
    let fifo = sb.path("audit.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // An unreadable event: withheld, and that outcome is recorded in the audit log.
    let mut child = sb
        .cmd()
        .args(["hook", "claude", "--audit-log"])
        .arg(&fifo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"not json").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the hook hung on the FIFO");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let r = crate::util::to_run(child.wait_with_output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(WITHHELD), "{}", r.stdout);
    assert!(
        r.stderr.contains("--audit-log") && r.stderr.contains("not a regular file"),
        "{}",
        r.stderr
    );
}
