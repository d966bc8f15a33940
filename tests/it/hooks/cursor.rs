//! Cursor's afterMCPExecution, afterShellExecution and beforeReadFile: the events its hook
//! documentation lists that had no fixture. Cursor is a desktop application, not on npm, so
//! no real Cursor holds these fixtures; their shape is the documentation's (see
//! tests/fixtures/agents/README.md).

use super::{answer, assert_masked_copy, hook, Event};
use crate::util::Sandbox;
use serde_json::Value;

/// Cursor's afterMCPExecution, afterShellExecution and beforeReadFile, in the shape its hook
/// documentation gives (cursor.com/docs/agent/hooks as integrators quote it: `result_json`,
/// `output`, `content`). Cursor is not on npm, so no real Cursor holds these fixtures.
#[test]
fn cursors_mcp_shell_and_read_file_events_are_masked_warned_and_denied() {
    let sb = Sandbox::new();
    let ev = Event::load("cursor", "after_mcp_execution", 933);
    let a = answer(&sb, "cursor", &ev, &[]);
    let orig: Value = serde_json::from_str(ev.json()["result_json"].as_str().unwrap()).unwrap();
    assert_eq!(a.as_object().unwrap().len(), 1, "{a}");
    let masked = &a["updated_mcp_tool_output"];
    assert_masked_copy(&ev, &orig, masked, "updated_mcp_tool_output");
    assert_ne!(&orig, masked);

    let ev = Event::load("cursor", "after_shell_execution", 934);
    let r = hook(&sb, "cursor", &ev.text, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!ev.leaks(&r.stdout) && !ev.leaks(&r.stderr));
    let a = r.json();
    let ctx = a["additional_context"]
        .as_str()
        .unwrap_or_else(|| panic!("{a}"));
    assert!(
        ctx.contains("this Shell output") && ctx.contains("aws.access-key-id"),
        "{ctx}"
    );
    assert!(
        r.stderr
            .contains("does not let a hook replace the output of \"Shell\""),
        "{}",
        r.stderr
    );

    let ev = Event::load("cursor", "before_read_file", 935);
    let a = answer(&sb, "cursor", &ev, &[]);
    assert_eq!(a["permission"], "deny", "{a}");
    let why = a["user_message"].as_str().unwrap();
    assert!(
        why.contains("aws.access-key-id in ") && why.contains("file to be read"),
        "{why}"
    );

    for name in [
        "after_mcp_execution",
        "after_shell_execution",
        "before_read_file",
    ] {
        let ev = Event::with("cursor", name, "KEY_ID_FROM_VAULT", "see-the-vault");
        let r = hook(&sb, "cursor", &ev.text, &[]);
        assert_eq!((r.code, r.stdout.trim()), (0, "{}"), "{name}: {}", r.stderr);
    }
}
