//! Each agent's event names and answer shapes. Sources (and the versions they were read at)
//! are listed in `docs/agents.md`; the fixtures in `tests/fixtures/agents/` follow them.

use super::{
    mask, reason, rules_of, text_of, withheld_copy, Answer, Disposition, Event, HookError, WITHHELD,
};
use crate::agents::{Agent, Stage};
use crate::filter::Masking;
use serde_json::{json, Map, Value};

/// The event's name and what it is about. Copilot's camelCase payloads carry no name (the
/// hook is configured under one), so it is told from their fields.
pub(super) fn classify(
    agent: Agent,
    doc: &Map<String, Value>,
) -> Result<(String, Stage), HookError> {
    let name = match doc.get("hook_event_name") {
        Some(Value::String(n)) => n.clone(),
        Some(_) => return Err(HookError::Field("hook_event_name")),
        None if agent == Agent::Copilot => copilot_event(doc).to_string(),
        None => return Err(HookError::Field("hook_event_name")),
    };
    // `agents`' table is the one list of what is answered, installed or not.
    let stage = agent
        .event(&name)
        .map(|e| e.stage)
        .ok_or(HookError::Unknown {
            agent: agent.name(),
            len: name.chars().count(),
        })?;
    Ok((name, stage))
}

/// A Copilot camelCase payload's event, from the fields only it has.
fn copilot_event(doc: &Map<String, Value>) -> &'static str {
    let has = |k: &str| doc.contains_key(k);
    if has("toolResult") {
        "postToolUse"
    } else if has("transformedPrompt") {
        "userPromptTransformed"
    } else if has("prompt") {
        "userPromptSubmitted"
    } else if has("toolName") && has("toolArgs") && !has("error") {
        "preToolUse"
    } else {
        "(a camelCase event leakhound does not answer)"
    }
}

pub(super) fn answer(ev: &Event, masking: &Masking) -> Result<Answer, HookError> {
    match ev.stage {
        Stage::AfterTool => after_tool(ev, masking),
        Stage::BeforePrompt => before_prompt(ev, masking),
        Stage::BeforeTool => before_tool(ev, masking),
    }
}

fn tool_name(ev: &Event) -> &str {
    ["tool_name", "toolName"]
        .iter()
        .find_map(|k| ev.doc.get(*k).and_then(Value::as_str))
        // Cursor's afterShellExecution names no tool: the event is the shell's.
        .unwrap_or(if ev.name == "afterShellExecution" {
            "Shell"
        } else {
            ""
        })
}

/// Whether a Cursor tool is an MCP tool, whose output Cursor lets a hook replace.
fn cursor_mcp(ev: &Event) -> bool {
    ev.name == "afterMCPExecution" || tool_name(ev).starts_with("MCP:")
}

/// A value that Cursor passes as a JSON document inside a string, parsed; anything else as
/// it is.
fn unwrap_json_string(v: &Value) -> Value {
    match v {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(inner @ (Value::Object(_) | Value::Array(_))) => inner,
            _ => v.clone(),
        },
        other => other.clone(),
    }
}

/// The top-level field of `ev` that its answer masks (a tool's result), if it masks one.
pub(super) fn masked_field(ev: &Event) -> Option<&'static str> {
    if ev.stage != Stage::AfterTool {
        return None;
    }
    Some(match ev.agent {
        Agent::Claude | Agent::Codex | Agent::Gemini => "tool_response",
        Agent::Copilot if !ev.doc.contains_key("toolResult") => "tool_result",
        Agent::Copilot => "toolResult",
        Agent::Cursor => match ev.name.as_str() {
            "afterMCPExecution" => "result_json",
            "afterShellExecution" => "output",
            _ => "tool_output",
        },
    })
}

fn after_tool(ev: &Event, masking: &Masking) -> Result<Answer, HookError> {
    let mut answer = Answer::clean();
    let key = masked_field(ev).unwrap_or("tool_response");
    let (masked, findings, changed) = match ev.agent {
        Agent::Claude => {
            let resp = ev.field(key)?;
            answer.persisted = resp
                .get("persistedOutputPath")
                .and_then(Value::as_str)
                .map(String::from);
            mask(masking, key, resp)?
        }
        Agent::Codex | Agent::Gemini => mask(masking, key, ev.field(key)?)?,
        Agent::Copilot => {
            let result = ev.doc.get(key).ok_or(HookError::Field("toolResult"))?;
            mask(masking, "toolResult", result)?
        }
        Agent::Cursor => mask(masking, key, &unwrap_json_string(ev.field(key)?))?,
    };
    if !changed {
        return Ok(answer);
    }
    answer.outcome = Disposition::Masked;
    answer.stdout = match ev.agent {
        Agent::Claude => claude_output(ev, masked),
        Agent::Codex => json!({"decision": "block", "reason": text_of(&masked)}),
        Agent::Gemini => gemini_output(&text_of(masked.get("llmContent").unwrap_or(&masked))),
        Agent::Copilot => {
            let text = ["textResultForLlm", "text_result_for_llm"]
                .iter()
                .find_map(|k| masked.get(*k).and_then(Value::as_str))
                .map_or_else(|| text_of(&masked), String::from);
            copilot_output(&text)
        }
        Agent::Cursor if cursor_mcp(ev) => json!({"updated_mcp_tool_output": mcp_result(masked)}),
        Agent::Cursor => {
            answer.outcome = Disposition::Warned;
            let tool = tool_name(ev);
            answer.note = Some(format!(
                "Cursor does not let a hook replace the output of {tool:?} (only MCP tools'): \
                 the model saw {} secret(s) ({}); rotate them",
                findings.len(),
                rules_of(&findings)
            ));
            json!({"additional_context": format!(
                "leakhound: this {tool} output holds {} secret(s) ({}) that Cursor does not let a \
                 hook mask. Do not repeat, store or use them; tell the user to rotate them.",
                findings.len(),
                rules_of(&findings)
            )})
        }
    };
    answer.findings = findings;
    Ok(answer)
}

/// Claude's replacement: the same shape as `tool_response` (Claude Code 2.1.121 and later
/// take it for every tool); MCP tools' results also go in the older MCP-only field.
fn claude_output(ev: &Event, output: Value) -> Value {
    let mut hso = json!({"hookEventName": "PostToolUse"});
    if tool_name(ev).starts_with("mcp__") {
        hso["updatedMCPToolOutput"] = output.clone();
    }
    hso["updatedToolOutput"] = output;
    json!({"hookSpecificOutput": hso})
}

/// Gemini CLI documents `hookSpecificOutput.tool_output` as the replacement; the releases
/// read so far (0.61.0) honour only `decision: "deny"`, whose `reason` replaces the result.
/// Both carry the same masked text.
fn gemini_output(text: &str) -> Value {
    json!({
        "decision": "deny",
        "reason": text,
        "hookSpecificOutput": {"hookEventName": "AfterTool", "tool_output": text},
    })
}

fn copilot_output(text: &str) -> Value {
    json!({"modifiedResult": {"resultType": "success", "textResultForLlm": text}})
}

/// An MCP result in the shape Cursor takes (an object): a bare text becomes one text block.
fn mcp_result(v: Value) -> Value {
    match v {
        o @ Value::Object(_) => o,
        other => json!({"content": [{"type": "text", "text": text_of(&other)}]}),
    }
}

fn before_prompt(ev: &Event, masking: &Masking) -> Result<Answer, HookError> {
    let mut answer = Answer::clean();
    // Copilot's command hooks cannot block a prompt; they can rewrite what the model gets.
    if ev.agent == Agent::Copilot {
        let transformed = ev.name == "userPromptTransformed";
        let key = if transformed {
            "transformedPrompt"
        } else {
            "prompt"
        };
        let (masked, findings, changed) =
            mask(masking, key, &Value::String(ev.str_field(key)?.into()))?;
        if !changed {
            return Ok(answer);
        }
        answer.outcome = Disposition::Masked;
        // Copilot CLI 1.0.102 run against a fake model honours `modifiedPrompt` from a
        // command hook on userPromptSubmitted, whatever its docs say.
        answer.stdout = if transformed {
            json!({"modifiedTransformedPrompt": masked})
        } else {
            json!({"modifiedPrompt": masked})
        };
        answer.findings = findings;
        return Ok(answer);
    }
    let (_, findings, _) = mask(
        masking,
        "prompt",
        &Value::String(ev.str_field("prompt")?.into()),
    )?;
    if findings.is_empty() {
        return Ok(answer);
    }
    answer.outcome = Disposition::Blocked;
    answer.stdout = block_prompt(ev.agent, &reason("the prompt", &findings));
    answer.findings = findings;
    Ok(answer)
}

fn block_prompt(agent: Agent, why: &str) -> Value {
    match agent {
        // Without the original prompt in the block message: it holds the secret.
        Agent::Claude => json!({
            "decision": "block",
            "reason": why,
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "suppressOriginalPrompt": true},
        }),
        Agent::Codex => json!({"decision": "block", "reason": why}),
        Agent::Gemini => json!({"decision": "deny", "reason": why}),
        Agent::Cursor => json!({"continue": false, "user_message": why}),
        // Not reached for a prompt Copilot lets a hook rewrite; a stop for the others.
        Agent::Copilot => {
            json!({"modifiedPrompt": WITHHELD, "modifiedTransformedPrompt": WITHHELD})
        }
    }
}

fn before_tool(ev: &Event, masking: &Masking) -> Result<Answer, HookError> {
    let mut answer = Answer::clean();
    let (key, subject): (&'static str, Value) = match (ev.agent, ev.name.as_str()) {
        (Agent::Cursor, "beforeShellExecution") => ("command", ev.field("command")?.clone()),
        (Agent::Cursor, "beforeReadFile") => ("content", ev.field("content")?.clone()),
        (Agent::Cursor, _) => ("tool_input", unwrap_json_string(ev.field("tool_input")?)),
        (Agent::Copilot, _) if ev.doc.contains_key("toolArgs") => {
            ("toolArgs", ev.field("toolArgs")?.clone())
        }
        _ => ("tool_input", ev.field("tool_input")?.clone()),
    };
    let (_, findings, _) = mask(masking, key, &subject)?;
    if findings.is_empty() {
        return Ok(answer);
    }
    answer.outcome = Disposition::Blocked;
    let what = if ev.name == "beforeReadFile" {
        "the file to be read"
    } else {
        "the tool call"
    };
    answer.stdout = deny_tool(ev, &reason(what, &findings));
    answer.findings = findings;
    Ok(answer)
}

fn deny_tool(ev: &Event, why: &str) -> Value {
    match ev.agent {
        Agent::Claude | Agent::Codex => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": why,
        }}),
        Agent::Gemini => json!({"decision": "deny", "reason": why}),
        Agent::Copilot => {
            let mut v = json!({"permissionDecision": "deny", "permissionDecisionReason": why});
            // The VS Code-compatible (PascalCase) form reads Claude's shape.
            if ev.name == "PreToolUse" {
                v["hookSpecificOutput"] = json!({
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": why,
                });
            }
            v
        }
        Agent::Cursor => json!({"permission": "deny", "user_message": why, "agent_message": why}),
    }
}

/// Fail closed: the output replaced by the notice in the agent's shape; a prompt or tool
/// call stopped.
pub(super) fn withheld(ev: &Event) -> Answer {
    let mut answer = Answer::clean();
    answer.outcome = Disposition::Withheld;
    answer.stdout = match ev.stage {
        Stage::AfterTool => match ev.agent {
            Agent::Claude => {
                let copy = ev
                    .doc
                    .get("tool_response")
                    .map_or(Value::String(WITHHELD.into()), withheld_copy);
                claude_output(ev, copy)
            }
            Agent::Codex => json!({"decision": "block", "reason": WITHHELD}),
            Agent::Gemini => gemini_output(WITHHELD),
            Agent::Copilot => copilot_output(WITHHELD),
            Agent::Cursor if cursor_mcp(ev) => {
                json!({"updated_mcp_tool_output": mcp_result(Value::String(WITHHELD.into()))})
            }
            Agent::Cursor => {
                answer.outcome = Disposition::Warned;
                json!({"additional_context": format!(
                    "{WITHHELD}, and Cursor does not let a hook withhold it: treat any \
                     credential in it as exposed"
                )})
            }
        },
        Stage::BeforePrompt => match ev.agent {
            Agent::Copilot if ev.name == "userPromptTransformed" => {
                json!({"modifiedTransformedPrompt": WITHHELD})
            }
            Agent::Copilot => json!({"modifiedPrompt": WITHHELD}),
            agent => block_prompt(
                agent,
                "leakhound could not scan this prompt; it was not sent",
            ),
        },
        Stage::BeforeTool => deny_tool(
            ev,
            "leakhound could not scan this tool call; it did not run",
        ),
    };
    answer
}

/// For an event that could not be parsed: an answer every event of the agent reads as a stop.
pub(super) fn unreadable(agent: Agent, why: &str) -> Value {
    match agent {
        Agent::Claude | Agent::Codex | Agent::Gemini => {
            json!({"continue": false, "stopReason": why})
        }
        Agent::Copilot => json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": why,
            "modifiedResult": {"resultType": "success", "textResultForLlm": why},
        }),
        Agent::Cursor => json!({
            "continue": false,
            "permission": "deny",
            "user_message": why,
            "agent_message": why,
        }),
    }
}
