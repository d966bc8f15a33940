//! Installing and removing leakhound's hook entries in one agent's settings file (reading
//! what is installed is `status.rs`).
//!
//! Edits are made on the text (see [`super::json`]): everything but leakhound's entries keeps
//! its bytes. A file is written atomically (a temporary file in the same directory, renamed
//! over it) with its permissions, and the first change to an existing file keeps a copy as
//! `FILE.leakhound-backup`. Uninstalling takes out exactly what installing put in; when the
//! file is still what installing made of the backup, the backup's bytes are put back (and a
//! file that installing created is removed).

use super::json::{self, Node, Style};
use super::{is_leakhound_command, Agent, Env, Error, Layout, Scope};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// What installing or uninstalling would do to one file.
#[derive(Debug, Clone)]
pub struct Plan {
    pub agent: Agent,
    pub scope: Scope,
    pub path: PathBuf,
    /// The file as it is (`None`: it does not exist).
    pub before: Option<String>,
    /// The file as it would be (`None`: removed).
    pub after: Option<String>,
    /// Keep a copy of `before` as the backup first.
    backup: bool,
    /// Remove the backup afterwards (the file is back to it).
    drop_backup: bool,
}

impl Plan {
    /// Whether the file would change.
    pub fn changes(&self) -> bool {
        self.before != self.after
    }

    pub fn backup_path(&self) -> PathBuf {
        backup_path(&self.path)
    }

    /// What would be written, as a unified diff (empty when nothing changes).
    pub fn diff(&self) -> String {
        if !self.changes() {
            return String::new();
        }
        let name = self.path.display().to_string();
        let old = self.before.as_deref().unwrap_or("");
        let new = self.after.as_deref().unwrap_or("");
        let (a, b) = (
            if self.before.is_some() {
                name.clone()
            } else {
                "/dev/null".into()
            },
            if self.after.is_some() {
                name
            } else {
                "/dev/null".into()
            },
        );
        unified_diff(old, new, &a, &b)
    }

    /// Carry it out.
    pub fn apply(&self) -> Result<(), Error> {
        if !self.changes() {
            return Ok(());
        }
        let io = |source| Error::Io {
            path: self.path.display().to_string(),
            source,
        };
        let mode = std::fs::metadata(&self.path).ok().map(|m| m.permissions());
        if self.backup {
            if let Some(before) = &self.before {
                write_atomic(&self.backup_path(), before.as_bytes(), mode.clone()).map_err(
                    |source| Error::Io {
                        path: self.backup_path().display().to_string(),
                        source,
                    },
                )?;
            }
        }
        match &self.after {
            Some(after) => {
                if let Some(dir) = self.path.parent() {
                    std::fs::create_dir_all(dir).map_err(io)?;
                }
                // A settings file linked from a dotfiles repository stays a link: the file it
                // names is the one replaced.
                let target = match std::fs::symlink_metadata(&self.path) {
                    Ok(m) if m.file_type().is_symlink() => {
                        std::fs::canonicalize(&self.path).map_err(io)?
                    }
                    _ => self.path.clone(),
                };
                write_atomic(&target, after.as_bytes(), mode).map_err(io)?;
            }
            None => std::fs::remove_file(&self.path).map_err(io)?,
        }
        if self.drop_backup {
            let _ = std::fs::remove_file(self.backup_path());
        }
        Ok(())
    }
}

/// A unified diff of two texts by lines, two lines of context around each change.
fn unified_diff(old: &str, new: &str, a: &str, b: &str) -> String {
    let o: Vec<&str> = old.split_inclusive('\n').collect();
    let n: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &o, &n);
    let mut out = format!("--- {a}\n+++ {b}\n");
    for group in similar::group_diff_ops(ops, 2) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o1, n1) = (first.old_range().start, first.new_range().start);
        let (o2, n2) = (last.old_range().end, last.new_range().end);
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            o1 + 1,
            o2 - o1,
            n1 + 1,
            n2 - n1
        ));
        for op in &group {
            let (tag, old_r, new_r) = op.as_tag_tuple();
            let mut emit = |mark: char, lines: &[&str]| {
                for l in lines {
                    out.push(mark);
                    out.push_str(l);
                    if !l.ends_with('\n') {
                        out.push_str("\n\\ No newline at end of file\n");
                    }
                }
            };
            match tag {
                similar::DiffTag::Equal => emit(' ', &o[old_r]),
                _ => {
                    emit('-', &o[old_r]);
                    emit('+', &n[new_r]);
                }
            }
        }
    }
    out
}

fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".leakhound-backup");
    path.with_file_name(name)
}

/// Write `bytes` to `path` by [`crate::write::replace`], with `mode` (the file's permissions
/// before) if given.
fn write_atomic(
    path: &Path,
    bytes: &[u8],
    mode: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let keep = crate::write::Keep {
        permissions: mode,
        modified: None,
    };
    crate::write::replace(path, bytes, keep, || Ok(true)).map(drop)
}

pub(super) fn read(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read(path) {
        Ok(b) => String::from_utf8(b).map(Some).map_err(|_| Error::NotJson {
            path: path.display().to_string(),
            why: "not UTF-8".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// The plan that adds leakhound's hooks (running `command`) to `agent`'s file at `scope`.
pub fn plan_install(agent: Agent, scope: Scope, env: &Env, command: &str) -> Result<Plan, Error> {
    let path = agent.settings_file(scope, env);
    let before = read(&path)?;
    let after = install_text(agent, before.as_deref(), command, &path)?;
    // The first change keeps the file as it was: a file with none of leakhound's entries.
    let fresh = match &before {
        Some(b) => remove_text(agent, b, &path)? == *b,
        None => false,
    };
    Ok(Plan {
        agent,
        scope,
        backup: fresh && before.as_ref() != Some(&after),
        drop_backup: false,
        after: Some(after),
        before,
        path,
    })
}

/// The plan that takes leakhound's hooks out of `agent`'s file at `scope`. `commands` are
/// what installing would write now (with and without `--server`): when the file is exactly
/// what installing one of them made of the backup (or of nothing), the backup comes back byte
/// for byte (or the file goes).
pub fn plan_uninstall(
    agent: Agent,
    scope: Scope,
    env: &Env,
    commands: &[String],
) -> Result<Plan, Error> {
    let path = agent.settings_file(scope, env);
    let before = read(&path)?;
    let mut plan = Plan {
        agent,
        scope,
        after: before.clone(),
        before: before.clone(),
        backup: false,
        drop_backup: false,
        path: path.clone(),
    };
    let Some(text) = before else {
        return Ok(plan);
    };
    let removed = remove_text(agent, &text, &path)?;
    if removed == text {
        return Ok(plan);
    }
    let backup = read(&backup_path(&path)).ok().flatten();
    let made = |from: Option<&str>| {
        commands
            .iter()
            .any(|c| install_text(agent, from, c, &path).ok().as_ref() == Some(&text))
    };
    match &backup {
        Some(b) if made(Some(b)) => {
            plan.after = Some(b.clone());
            plan.drop_backup = true;
        }
        None if made(None) || is_skeleton(&removed) => {
            // Installing created it, and nothing else was added since.
            plan.after = None;
        }
        _ => plan.after = Some(removed),
    }
    Ok(plan)
}

/// Whether a settings file holds nothing but an empty hooks table (and Copilot's and Cursor's
/// `version`).
fn is_skeleton(text: &str) -> bool {
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    m.iter().all(|(k, v)| match k.as_str() {
        "version" => v == &json!(1),
        "hooks" => v.as_object().is_some_and(|h| h.is_empty()),
        _ => false,
    })
}

/// What a new file starts as, and the style it is written in.
fn skeleton(agent: Agent) -> (&'static str, Style) {
    let text = match agent.layout() {
        Layout::Grouped { .. } => "{}\n",
        Layout::Flat { .. } => "{\n  \"version\": 1\n}\n",
    };
    let style = Style {
        unit: "  ".into(),
        newline: "\n",
        colon: ": ".into(),
    };
    (text, style)
}

/// The entry leakhound writes for `event`.
fn entry(agent: Agent, event: &super::Event, command: &str) -> Value {
    match agent.layout() {
        Layout::Grouped { name } => {
            let mut hook = Map::new();
            hook.insert("type".into(), json!("command"));
            if name {
                hook.insert("name".into(), json!("leakhound"));
            }
            hook.insert("command".into(), json!(command));
            let mut group = Map::new();
            if let Some(m) = event.matcher {
                group.insert("matcher".into(), json!(m));
            }
            group.insert("hooks".into(), Value::Array(vec![Value::Object(hook)]));
            Value::Object(group)
        }
        Layout::Flat { key, typed } => {
            let mut hook = Map::new();
            if typed {
                hook.insert("type".into(), json!("command"));
            }
            hook.insert(key.into(), json!(command));
            Value::Object(hook)
        }
    }
}

fn shape(path: &Path, what: impl Into<String>) -> Error {
    Error::Shape {
        path: path.display().to_string(),
        what: what.into(),
    }
}

/// Parse a settings file: checked by `serde_json` (for its message), then for spans.
pub(super) fn parse(text: &str, path: &Path) -> Result<Node, Error> {
    if let Err(e) = serde_json::from_str::<Value>(text) {
        return Err(Error::NotJson {
            path: path.display().to_string(),
            why: e.to_string(),
        });
    }
    let root = json::parse(text).ok_or_else(|| Error::NotJson {
        path: path.display().to_string(),
        why: "unreadable".into(),
    })?;
    if root.members().is_none() {
        return Err(shape(path, "the top level is not an object"));
    }
    Ok(root)
}

/// The commands of a hook entry (a group's inner hooks, or the entry itself).
fn commands(agent: Agent, v: &Value) -> Vec<String> {
    let key = match agent.layout() {
        Layout::Grouped { .. } => "command",
        Layout::Flat { key, .. } => key,
    };
    // Copilot entries may carry `command` too (the cloud agent's spelling).
    [key, "command"]
        .iter()
        .filter_map(|k| v.get(*k).and_then(Value::as_str))
        .map(String::from)
        .collect()
}

fn is_ours(agent: Agent, v: &Value) -> bool {
    commands(agent, v).iter().any(|c| is_leakhound_command(c))
}

fn value_of(text: &str, n: &Node) -> Value {
    serde_json::from_str(&text[n.start..n.end]).unwrap_or(Value::Null)
}

/// Whether an event's array holds a leakhound entry.
pub(super) fn array_has_ours(agent: Agent, text: &str, arr: &Node) -> bool {
    arr.items().into_iter().flatten().any(|item| {
        let v = value_of(text, item);
        match agent.layout() {
            Layout::Grouped { .. } => v
                .get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|hs| hs.iter().any(|h| is_ours(agent, h))),
            Layout::Flat { .. } => is_ours(agent, &v),
        }
    })
}

/// `before` (or a new file) with leakhound's entry added to every event that lacks one.
fn install_text(
    agent: Agent,
    before: Option<&str>,
    command: &str,
    path: &Path,
) -> Result<String, Error> {
    let (mut text, style) = match before {
        Some(t) if !t.trim().is_empty() => (t.to_string(), Style::of(t)),
        _ => {
            let (t, s) = skeleton(agent);
            (t.to_string(), s)
        }
    };
    for event in agent.installs() {
        let root = parse(&text, path)?;
        let e = entry(agent, event, command);
        let Some(hooks) = root.get("hooks") else {
            let mut m = Map::new();
            m.insert(event.name.into(), Value::Array(vec![e]));
            text = json::append(&text, &root, &style, |ind| {
                style.member("hooks", &Value::Object(m.clone()), ind)
            });
            continue;
        };
        if hooks.value.members().is_none() {
            return Err(shape(path, "`hooks` is not an object"));
        }
        match hooks.value.get(event.name) {
            None => {
                text = json::append(&text, &hooks.value, &style, |ind| {
                    style.member(event.name, &Value::Array(vec![e.clone()]), ind)
                });
            }
            Some(m) if m.value.items().is_none() => {
                return Err(shape(path, format!("`hooks.{}` is not a list", event.name)));
            }
            Some(m) if array_has_ours(agent, &text, &m.value) => {}
            Some(m) => {
                text = json::append(&text, &m.value, &style, |ind| style.render(&e, ind));
            }
        }
    }
    Ok(text)
}

/// `text` without leakhound's entries: a group whose hooks are all leakhound's goes whole, a
/// mixed group loses only leakhound's hooks; an event left with no entries goes, and so does
/// a `hooks` table left empty by this.
fn remove_text(agent: Agent, text: &str, path: &Path) -> Result<String, Error> {
    // An empty file is taken as an empty object by install; it holds nothing to remove.
    if text.trim().is_empty() {
        return Ok(text.to_string());
    }
    let root = parse(text, path)?;
    let Some(hooks) = root.get("hooks") else {
        return Ok(text.to_string());
    };
    let Some(events) = hooks.value.members() else {
        return Ok(text.to_string());
    };
    let mut changed = false;
    let mut keep_events: Vec<Option<String>> = Vec::new();
    for ev in events {
        let member_text = text[ev.start..ev.value.end].to_string();
        let Some(items) = ev.value.items() else {
            keep_events.push(Some(member_text));
            continue;
        };
        let mut keep: Vec<Option<String>> = Vec::new();
        for item in items {
            keep.push(keep_item(agent, text, item));
        }
        let item_text = |n: &Node| text[n.start..n.end].to_string();
        if keep
            .iter()
            .zip(items)
            .all(|(k, n)| k.as_deref() == Some(&item_text(n)))
        {
            keep_events.push(Some(member_text));
            continue;
        }
        changed = true;
        if keep.iter().all(Option::is_none) {
            keep_events.push(None);
        } else {
            let arr = json::retain(text, &ev.value, &keep);
            keep_events.push(Some(format!("{}{arr}", &text[ev.start..ev.value.start])));
        }
    }
    if !changed {
        return Ok(text.to_string());
    }
    let new_root = if keep_events.iter().all(Option::is_none) {
        // The hooks table is empty now: it goes too (installing added it, or the backup
        // brings an empty one back).
        let keep_root: Vec<Option<String>> = root
            .members()
            .unwrap_or_default()
            .iter()
            .map(|m| (m.key != "hooks").then(|| text[m.start..m.value.end].to_string()))
            .collect();
        json::retain(text, &root, &keep_root)
    } else {
        let new_hooks = json::retain(text, &hooks.value, &keep_events);
        format!(
            "{}{new_hooks}{}",
            &text[root.start..hooks.value.start],
            &text[hooks.value.end..root.end]
        )
    };
    Ok(json::replace(text, &root, &new_root))
}

/// An event's entry without leakhound's parts: `None` if nothing else is left.
fn keep_item(agent: Agent, text: &str, item: &Node) -> Option<String> {
    let whole = text[item.start..item.end].to_string();
    match agent.layout() {
        Layout::Flat { .. } => (!is_ours(agent, &value_of(text, item))).then_some(whole),
        Layout::Grouped { .. } => {
            let Some(inner) = item.get("hooks").map(|m| &m.value) else {
                return Some(whole);
            };
            let Some(hs) = inner.items() else {
                return Some(whole);
            };
            let keep: Vec<Option<String>> = hs
                .iter()
                .map(|h| {
                    (!is_ours(agent, &value_of(text, h))).then(|| text[h.start..h.end].to_string())
                })
                .collect();
            if keep.iter().all(Option::is_some) {
                return Some(whole);
            }
            if keep.iter().all(Option::is_none) {
                return None;
            }
            let arr = json::retain(text, inner, &keep);
            Some(format!(
                "{}{arr}{}",
                &text[item.start..inner.start],
                &text[inner.end..item.end]
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/opt/leakhound hook claude";

    fn roundtrip(agent: Agent, original: &str) {
        let p = Path::new("settings.json");
        let installed = install_text(agent, Some(original), CMD, p).unwrap();
        assert_ne!(installed, original);
        serde_json::from_str::<Value>(&installed).unwrap();
        assert_eq!(
            install_text(agent, Some(&installed), CMD, p).unwrap(),
            installed
        );
        assert_eq!(
            remove_text(agent, &installed, p).unwrap(),
            original,
            "{installed}"
        );
    }

    #[test]
    fn text_edits_round_trip() {
        roundtrip(Agent::Claude, "{\n  \"model\": \"opus\"\n}\n");
        roundtrip(Agent::Claude, "{\"model\":\"opus\",\"n\":1.50}");
        roundtrip(
            Agent::Claude,
            "{\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}\n        ]\n    }\n}",
        );
        roundtrip(
            Agent::Cursor,
            "{\n\t\"version\": 1,\n\t\"hooks\": {\n\t\t\"stop\": [{\"command\": \"y\"}]\n\t}\n}\n",
        );
    }

    #[test]
    fn a_mixed_group_keeps_the_users_hook() {
        let text = format!(
            r#"{{"hooks": {{"PostToolUse": [{{"hooks": [{{"type": "command", "command": "fmt"}}, {{"type": "command", "command": "{CMD}"}}]}}]}}}}"#
        );
        let out = remove_text(Agent::Claude, &text, Path::new("s")).unwrap();
        assert_eq!(
            out,
            r#"{"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "fmt"}]}]}}"#
        );
    }

    #[test]
    fn skeletons() {
        assert!(is_skeleton("{\"version\": 1, \"hooks\": {}}"));
        assert!(is_skeleton("{}"));
        assert!(!is_skeleton("{\"model\": 1}"));
    }
}
