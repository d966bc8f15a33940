//! Coding agents' hooks: one event in, the agent's own answer out, with every secret in a
//! tool's result masked before the model reads it, and a prompt or tool call that holds one
//! stopped.
//!
//! Each agent (Claude Code, Codex, Gemini CLI, GitHub Copilot CLI, Cursor) sends an event as
//! one JSON document and reads a JSON answer; the events mean the same three things and only
//! their shapes differ:
//! - after a tool ran: the result is masked with [`crate::filter::mask_value`] (a structural
//!   copy: keys, types and every string without a secret stay as they were) and handed back
//!   in the field the agent replaces the result with;
//! - before a prompt is sent: a prompt with a secret is blocked (or rewritten where the agent
//!   can only rewrite), with a reason naming rule and position, never the secret;
//! - before a tool runs: a call whose input holds a secret is denied, with the same reason.
//!
//! Nothing here reads or writes: the caller passes the event's bytes and the engine, prints
//! [`Answer::stdout`], masks [`Answer::persisted`] and records [`Answer::findings`]. The
//! shapes, and where they come from, are in `docs/agents.md`.

mod answer;

use crate::agents::{Agent, Stage};
use crate::engine::Engine;
use crate::filter::Masking;
use crate::model::Finding;
use serde_json::Value;

/// The notice a tool's output is replaced with when it could not be scanned (fail closed).
pub const WITHHELD: &str = "withheld: leakhound could not scan this output";

/// Why an event could not be answered. Messages never quote the event's content (it may be
/// the very secret), only field and event names.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("the event is not JSON ({0})")]
    NotJson(String),
    #[error("the event is not a JSON object")]
    NotObject,
    /// Only the name's length: an unknown name is the event's own text, and it may be a
    /// secret (#14).
    #[error("{agent} event with a name of {len} characters is not one leakhound answers")]
    Unknown { agent: &'static str, len: usize },
    #[error("the event has no {0} (or it has the wrong type)")]
    Field(&'static str),
    #[error("{0} could not be masked")]
    Mask(&'static str),
}

/// One event, parsed.
/// No derived `Debug`: the document is the agent's event, secrets and all.
pub struct Event {
    agent: Agent,
    /// The event's name as the agent spells it (`PostToolUse`, `postToolUse`,
    /// `beforeShellExecution`).
    name: String,
    stage: Stage,
    doc: serde_json::Map<String, Value>,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("agent", &self.agent)
            .field("name", &self.name)
            .field("stage", &self.stage)
            .field("doc", &format_args!("<{} fields>", self.doc.len()))
            .finish()
    }
}

/// What was done with an event, for the audit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// No secret: the agent's no-op answer.
    Clean,
    /// The result (or prompt) goes on with its secrets masked.
    Masked,
    /// The prompt or tool call is stopped.
    Blocked,
    /// The agent cannot replace this output: it is only told a secret is in it.
    Warned,
    /// The output could not be scanned and is replaced by [`WITHHELD`].
    Withheld,
    /// The event could not be scanned and was let through (`--fail-open`).
    Unscanned,
}

impl Disposition {
    pub fn name(self) -> &'static str {
        match self {
            Disposition::Clean => "clean",
            Disposition::Masked => "masked",
            Disposition::Blocked => "blocked",
            Disposition::Warned => "warned",
            Disposition::Withheld => "withheld",
            Disposition::Unscanned => "unscanned",
        }
    }
}

/// The answer to one event.
#[derive(Debug)]
pub struct Answer {
    /// The JSON to print on stdout (`{}` when there is nothing to change).
    pub stdout: Value,
    pub outcome: Disposition,
    /// What was masked or found (redacted in every rendering).
    pub findings: Vec<Finding>,
    /// A file that holds the tool's full output (Claude's `persistedOutputPath`): the caller
    /// masks it in place, as the model may read it later.
    pub persisted: Option<String>,
    /// A line for stderr: what the agent cannot be made to do.
    pub note: Option<String>,
}

impl Answer {
    fn clean() -> Answer {
        Answer {
            stdout: Value::Object(Default::default()),
            outcome: Disposition::Clean,
            findings: Vec::new(),
            persisted: None,
            note: None,
        }
    }
}

/// Parse one event for `agent`: JSON, an object, an event leakhound answers.
pub fn parse(agent: Agent, input: &[u8]) -> Result<Event, HookError> {
    let doc: Value = serde_json::from_slice(input).map_err(|e| {
        // serde's message names a position and a category, never the input's text.
        HookError::NotJson(e.to_string())
    })?;
    let Value::Object(doc) = doc else {
        return Err(HookError::NotObject);
    };
    let (name, stage) = answer::classify(agent, &doc)?;
    Ok(Event {
        agent,
        name,
        stage,
        doc,
    })
}

impl Event {
    pub fn agent(&self) -> Agent {
        self.agent
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The answer to this event: masked output, a block, or the agent's no-op. Every secret
    /// the event holds anywhere (a tool's input, its output, a key) is masked by value in
    /// what goes back.
    pub fn answer(&self, engine: &Engine) -> Result<Answer, HookError> {
        // The field an answer masks learns its own values as it is masked, so the context
        // learns only the rest of the event first (a value named in the tool's input is then
        // masked in its output). Learning the whole event detected a large output twice.
        let masking = match answer::masked_field(self) {
            Some(field) => self.masking_without(engine, field)?,
            None => self.masking(engine)?,
        };
        answer::answer(self, &masking)
    }

    /// A masking context that knows the values of every top-level field but `field`.
    fn masking_without<'e>(
        &self,
        engine: &'e Engine,
        field: &str,
    ) -> Result<Masking<'e>, HookError> {
        learned(engine, &Without(&self.doc, field))
    }
    /// A masking context that knows every secret value this event holds, for masking any
    /// part of it or a file it names.
    pub fn masking<'e>(&self, engine: &'e Engine) -> Result<Masking<'e>, HookError> {
        learned(engine, &self.doc)
    }

    /// The answer when the event could not be scanned (no engine, a masker failure): the
    /// output replaced by [`WITHHELD`], a prompt or tool call stopped.
    pub fn withheld(&self) -> Answer {
        answer::withheld(self)
    }

    fn str_field(&self, key: &'static str) -> Result<&str, HookError> {
        self.doc
            .get(key)
            .and_then(Value::as_str)
            .ok_or(HookError::Field(key))
    }

    fn field(&self, key: &'static str) -> Result<&Value, HookError> {
        self.doc.get(key).ok_or(HookError::Field(key))
    }
}

/// A masking context that has learned the values `doc` holds.
fn learned<'e>(engine: &'e Engine, doc: &impl serde::Serialize) -> Result<Masking<'e>, HookError> {
    let masking = Masking::new(engine);
    let bytes = serde_json::to_vec(doc).map_err(|_| HookError::Mask("the event"))?;
    masking.learn(&bytes);
    Ok(masking)
}

/// An event's fields but one, serialized in their order without copying the event.
struct Without<'a>(&'a serde_json::Map<String, Value>, &'a str);

impl serde::Serialize for Without<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.0.iter().filter(|(k, _)| *k != self.1) {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The answer to an event that could not even be parsed, for a command that must fail
/// closed: one that every event of `agent` honours as "stop" and none reads as "go on".
pub fn unreadable(agent: Agent, why: &HookError) -> Value {
    answer::unreadable(agent, &format!("{WITHHELD}: {why}"))
}

/// `value` masked: a string as a whole text, anything else as a JSON structure (keys give
/// their values context), in `masking`'s context (values the rest of the event holds are
/// masked too). `name` is where findings say they were. Returns the masked copy, the
/// findings in `value`, and whether anything changed: a value the event holds elsewhere
/// (a secret set in the command, printed bare in its output) changes the copy with no
/// finding of its own.
fn mask(
    masking: &Masking,
    name: &'static str,
    value: &Value,
) -> Result<(Value, Vec<Finding>, bool), HookError> {
    let (masked, findings) = match value {
        Value::String(s) => {
            let m = masking.text(name, s.as_bytes());
            // A mask that ends inside a multi-byte character leaves a broken piece of it,
            // which becomes U+FFFD rather than withholding the whole output.
            let text = String::from_utf8_lossy(&m.bytes).into_owned();
            (Value::String(text), m.findings)
        }
        other => masking.value(name, other).ok_or(HookError::Mask(name))?,
    };
    let changed = masked != *value;
    Ok((masked, findings, changed))
}

/// Why a prompt or tool call is stopped: each secret's rule and position (never the secret),
/// at most ten, and what to do.
fn reason(what: &str, findings: &[Finding]) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let mut parts = Vec::new();
    for f in findings {
        let at = format!(
            "{} in {} at line {}, column {}",
            f.rule_id,
            f.path(),
            f.line,
            f.column
        );
        if seen.insert(at.clone()) {
            parts.push(at);
        }
    }
    let shown = parts.len().min(10);
    let more = if parts.len() > shown {
        format!(" and {} more", parts.len() - shown)
    } else {
        String::new()
    };
    format!(
        "leakhound: {what} holds {} secret(s): {}{more}. Remove them (use an environment \
         variable or a secret store) and try again; a secret already sent should be rotated.",
        parts.len(),
        parts[..shown].join("; ")
    )
}

/// The rule ids of `findings`, each once, in order.
fn rules_of(findings: &[Finding]) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for f in findings {
        if !ids.contains(&f.rule_id.as_str()) {
            ids.push(&f.rule_id);
        }
    }
    ids.join(", ")
}

/// A tool result as the text a model reads: a string as it is, MCP-style content blocks as
/// their texts, anything else as compact JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items)
            if !items.is_empty()
                && items
                    .iter()
                    .all(|i| i.get("text").is_some_and(Value::is_string)) =>
        {
            items
                .iter()
                .filter_map(|i| i.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        }
        Value::Object(o) if o.get("content").is_some_and(Value::is_array) => text_of(&o["content"]),
        other => other.to_string(),
    }
}

/// A copy of `v` with every string replaced by [`WITHHELD`], except the short ones that name
/// a kind (`"type": "text"`), so the agent still recognises the shape.
fn withheld_copy(v: &Value) -> Value {
    match v {
        Value::String(_) => Value::String(WITHHELD.into()),
        Value::Array(a) => Value::Array(a.iter().map(withheld_copy).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| {
                    let keep = matches!(
                        k.as_str(),
                        "type" | "mimeType" | "resultType" | "result_type"
                    ) && v.is_string();
                    (k.clone(), if keep { v.clone() } else { withheld_copy(v) })
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{KEY, SECRET};

    fn engine() -> Engine {
        crate::testing::engine().without_companions()
    }
    use serde_json::json;

    #[test]
    fn a_claude_bash_result_keeps_its_shape() {
        let e = engine();
        let event = json!({
            "session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": "env"}, "tool_use_id": "t1",
            "tool_response": {"stdout": format!("AWS_ACCESS_KEY_ID={KEY}\nAWS_SECRET_ACCESS_KEY={SECRET}\n"),
                              "stderr": "", "interrupted": false, "isImage": false}
        });
        let ev = parse(Agent::Claude, event.to_string().as_bytes()).unwrap();
        let a = ev.answer(&e).unwrap();
        assert_eq!(a.outcome, Disposition::Masked);
        let out = &a.stdout["hookSpecificOutput"]["updatedToolOutput"];
        assert_eq!(out["interrupted"], json!(false));
        assert_eq!(out["stderr"], json!(""));
        let stdout = out["stdout"].as_str().unwrap();
        assert!(
            !stdout.contains(KEY) && !stdout.contains(SECRET),
            "{stdout}"
        );
        assert!(
            stdout.starts_with("AWS_ACCESS_KEY_ID=[REDACTED:"),
            "{stdout}"
        );
    }

    #[test]
    fn a_prompt_reason_names_rule_and_position_not_the_secret() {
        let e = engine();
        let event = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
            "transcript_path": "/t", "cwd": "/", "prompt": format!("use key {KEY} and {SECRET}")});
        let a = parse(Agent::Claude, event.to_string().as_bytes())
            .unwrap()
            .answer(&e)
            .unwrap();
        assert_eq!(a.outcome, Disposition::Blocked);
        let reason = a.stdout["reason"].as_str().unwrap();
        assert!(
            reason.contains("aws.access-key-id in prompt at line 1, column 9"),
            "{reason}"
        );
        assert!(
            !reason.contains(KEY) && !reason.contains(&SECRET[..8]),
            "{reason}"
        );
    }

    #[test]
    fn unknown_and_unreadable_events_are_errors() {
        assert!(matches!(
            parse(Agent::Claude, b"{\"a\":"),
            Err(HookError::NotJson(_))
        ));
        assert!(matches!(
            parse(Agent::Claude, b"[1]"),
            Err(HookError::NotObject)
        ));
        assert!(matches!(
            parse(Agent::Gemini, br#"{"hook_event_name":"SessionStart"}"#),
            Err(HookError::Unknown { .. })
        ));
    }

    #[test]
    fn an_unknown_event_name_is_not_echoed() {
        // Regression #14: the name was quoted in the error, the answer and stderr.
        let name = format!("{KEY}:{SECRET}");
        let event = json!({"hook_event_name": name, "tool_response": "x"});
        for agent in [Agent::Claude, Agent::Copilot, Agent::Cursor] {
            let err = parse(agent, event.to_string().as_bytes()).unwrap_err();
            assert!(matches!(err, HookError::Unknown { len: 61, .. }), "{err}");
            let shown = format!("{err} {err:?} {}", unreadable(agent, &err));
            for piece in [KEY, SECRET].iter().flat_map(|s| s.as_bytes().windows(5)) {
                let piece = std::str::from_utf8(piece).unwrap();
                assert!(!shown.contains(piece), "{piece:?} in {shown}");
            }
        }
    }

    #[test]
    fn an_events_debug_shows_no_field_of_it() {
        let event = json!({"hook_event_name": "UserPromptSubmit", "prompt": format!("k {SECRET}")});
        let ev = parse(Agent::Claude, event.to_string().as_bytes()).unwrap();
        let shown = format!("{ev:?}");
        assert!(
            !shown.contains(&SECRET[..5]) && shown.contains("UserPromptSubmit"),
            "{shown}"
        );
    }

    #[test]
    fn a_withheld_copy_keeps_kinds_and_types() {
        let v = json!({"type": "text", "file": {"content": "x", "numLines": 3}});
        assert_eq!(
            withheld_copy(&v),
            json!({"type": "text", "file": {"content": WITHHELD, "numLines": 3}})
        );
    }
}
