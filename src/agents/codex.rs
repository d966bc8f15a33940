//! Codex's trust in leakhound's hooks.
//!
//! Codex runs a hook from `hooks.json` only once it is trusted, and skips an untrusted one
//! without a word (a headless `codex exec` too): installed but untrusted, leakhound protects
//! nothing. Trust lives in Codex's `config.toml` as
//! `[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`, the hash
//! being Codex's own, of the hook as it read it. leakhound does not compute that hash: it asks
//! Codex's app server (`codex app-server`, JSON-RPC over stdio, `hooks/list`) for each of its
//! own hooks' key and `currentHash`, writes them, and asks again to check that Codex now calls
//! them trusted. Only hooks whose command is leakhound's and whose file is the one `install`
//! wrote are trusted; anything else in the list is left as it was.

use super::{is_leakhound_command, Env};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the app server may take to start and list the hooks.
const LIST_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("`codex` is not on PATH, so leakhound cannot ask it for the hooks' hashes")]
    NoCodex,
    #[error("`codex app-server` {0}")]
    AppServer(String),
    #[error("Codex does not list leakhound's hooks from {0}")]
    NotListed(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("after writing the hashes, Codex still calls {0} of leakhound's hooks untrusted")]
    StillUntrusted(usize),
}

/// One hook as Codex's app server lists it.
#[derive(Debug, Clone)]
pub struct Listed {
    pub key: String,
    pub command: String,
    pub source_path: String,
    pub current_hash: String,
    pub trusted: bool,
}

/// Where trust stands for the hooks in one hooks.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trust {
    /// leakhound's hooks Codex lists from the file.
    pub hooks: usize,
    /// Of those, the ones Codex trusts.
    pub trusted: usize,
}

impl Trust {
    pub fn complete(self) -> bool {
        self.hooks > 0 && self.trusted == self.hooks
    }
}

/// `codex` on PATH.
pub fn find_codex() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("codex"))
        .find(|p| p.is_file())
}

/// The hooks Codex reads for `env`'s home and project, from its app server.
pub fn list(codex: &Path, env: &Env) -> Result<Vec<Listed>, TrustError> {
    let mut child = Command::new(codex)
        .arg("app-server")
        .env("CODEX_HOME", env.codex_home())
        .current_dir(&env.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| TrustError::AppServer(format!("could not start: {e}")))?;
    let result = converse(&mut child, &env.project);
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn converse(child: &mut Child, cwd: &Path) -> Result<Vec<Listed>, TrustError> {
    let mut stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    // A reader thread, so a server that never answers costs the timeout and not a hang.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |v: Value| -> Result<(), TrustError> {
        writeln!(stdin, "{v}")
            .and_then(|_| stdin.flush())
            .map_err(|e| TrustError::AppServer(format!("closed its input: {e}")))
    };
    let deadline = Instant::now() + LIST_TIMEOUT;
    let wait_for = |id: u64| -> Result<Value, TrustError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx.recv_timeout(left).map_err(|e| match e {
                mpsc::RecvTimeoutError::Timeout => {
                    TrustError::AppServer(format!("gave no answer in {} s", LIST_TIMEOUT.as_secs()))
                }
                mpsc::RecvTimeoutError::Disconnected => {
                    TrustError::AppServer("exited before answering".into())
                }
            })?;
            let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                continue; // a line that is not JSON-RPC: not the answer
            };
            if msg.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(err) = msg.get("error") {
                    let what = err.get("message").and_then(Value::as_str).unwrap_or("?");
                    return Err(TrustError::AppServer(format!("answered an error: {what}")));
                }
                return Ok(msg.get("result").cloned().unwrap_or(Value::Null));
            }
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"clientInfo": {"name": "leakhound", "version": env!("CARGO_PKG_VERSION")}}}))?;
    wait_for(1)?;
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}))?;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list",
        "params": {"cwds": [cwd.to_string_lossy()]}}))?;
    let result = wait_for(2)?;
    let mut out = Vec::new();
    for data in result
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for h in data
            .get("hooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let s = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            out.push(Listed {
                key: s("key"),
                command: s("command"),
                source_path: s("sourcePath"),
                current_hash: s("currentHash"),
                trusted: matches!(s("trustStatus").as_str(), "trusted" | "managed"),
            });
        }
    }
    Ok(out)
}

/// leakhound's hooks from `hooks_json` in Codex's list.
fn ours<'a>(listed: &'a [Listed], hooks_json: &Path) -> Vec<&'a Listed> {
    let file = hooks_json.to_string_lossy();
    let mut v: Vec<&Listed> = listed
        .iter()
        .filter(|h| h.source_path == file && is_leakhound_command(&h.command) && !h.key.is_empty())
        .collect();
    v.sort_by(|a, b| a.key.cmp(&b.key));
    v.dedup_by(|a, b| a.key == b.key);
    v
}

/// Where trust stands for leakhound's hooks in `hooks_json`, as Codex itself says.
pub fn status(codex: &Path, env: &Env, hooks_json: &Path) -> Result<Trust, TrustError> {
    let listed = list(codex, env)?;
    let ours = ours(&listed, hooks_json);
    Ok(Trust {
        hooks: ours.len(),
        trusted: ours.iter().filter(|h| h.trusted).count(),
    })
}

/// Trust leakhound's hooks in `hooks_json`: write Codex's own hash of each into its
/// `config.toml`, then check with Codex that it trusts them all.
pub fn trust(codex: &Path, env: &Env, hooks_json: &Path) -> Result<Trust, TrustError> {
    let listed = list(codex, env)?;
    let ours = ours(&listed, hooks_json);
    if ours.is_empty() {
        return Err(TrustError::NotListed(hooks_json.display().to_string()));
    }
    let todo: Vec<(&str, &str)> = ours
        .iter()
        .filter(|h| !h.trusted)
        .map(|h| (h.key.as_str(), h.current_hash.as_str()))
        .collect();
    if !todo.is_empty() {
        rewrite_config(env, |mut text| {
            for (key, hash) in &todo {
                text = set_trusted_hash(&text, key, hash);
            }
            text
        })?;
    }
    let after = status(codex, env, hooks_json)?;
    if !after.complete() {
        return Err(TrustError::StillUntrusted(after.hooks - after.trusted));
    }
    Ok(after)
}

/// What [`untrust`] did to config.toml.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untrusted {
    /// No entry of leakhound's was there (or no config.toml).
    Unchanged,
    /// leakhound's entries were taken out; the rest stays.
    Rewritten,
    /// It held only leakhound's entries (install had created it): removed.
    Removed,
}

/// Take the trust entries of leakhound's former hooks (`keys`, from [`keys_in`]) out of
/// Codex's config.toml.
pub fn untrust(env: &Env, keys: &[String]) -> Result<Untrusted, TrustError> {
    let mut emptied = false;
    let changed = rewrite_config(env, |text| {
        let after = without_trust(&text, keys);
        emptied = after != text && after.trim().is_empty();
        after
    })?;
    if !changed {
        return Ok(Untrusted::Unchanged);
    }
    if emptied {
        let config = env.codex_home().join("config.toml");
        std::fs::remove_file(&config).map_err(|source| TrustError::Io {
            path: config.display().to_string(),
            source,
        })?;
        return Ok(Untrusted::Removed);
    }
    Ok(Untrusted::Rewritten)
}

/// Apply `edit` to Codex's config.toml (empty when there is none) and write the result back
/// atomically with the file's permissions, if it changed. Whether it did.
fn rewrite_config(env: &Env, edit: impl FnOnce(String) -> String) -> Result<bool, TrustError> {
    let config = env.codex_home().join("config.toml");
    let io = |source| TrustError::Io {
        path: config.display().to_string(),
        source,
    };
    let (before, permissions) = match std::fs::read_to_string(&config) {
        Ok(t) => (t, std::fs::metadata(&config).ok().map(|m| m.permissions())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), None),
        Err(e) => return Err(io(e)),
    };
    let after = edit(before.clone());
    if after == before {
        return Ok(false);
    }
    let keep = crate::write::Keep {
        permissions,
        modified: None,
    };
    crate::write::replace(&config, after.as_bytes(), keep, || Ok(true)).map_err(io)?;
    Ok(true)
}

/// The TOML header of one hook's trust table: the key as a basic string (a JSON string is
/// one, for every character a path holds).
fn header(key: &str) -> String {
    format!("[hooks.state.{}]", Value::String(key.to_string()))
}

/// `config` with `trusted_hash = hash` in the table for `key`: the line replaced where the
/// table has one, added under its header where it has none, the table appended where there is
/// none. Every other byte stays.
pub fn set_trusted_hash(config: &str, key: &str, hash: &str) -> String {
    let head = header(key);
    let line = format!("trusted_hash = {}", Value::String(hash.to_string()));
    let Some((start, end)) = table(config, &head) else {
        let mut out = config.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{head}\n{line}\n"));
        return out;
    };
    let body = &config[start..end];
    let mut lines: Vec<String> = body.split_inclusive('\n').map(str::to_string).collect();
    match lines.iter().position(|l| is_hash_line(l)) {
        Some(i) => lines[i] = format!("{line}\n"),
        None => lines.insert(0, format!("{line}\n")),
    }
    format!("{}{}{}", &config[..start], lines.concat(), &config[end..])
}

fn is_hash_line(line: &str) -> bool {
    line.trim_start().starts_with("trusted_hash")
}

/// The byte range of the body of the table headed `head` (after its header line, up to the
/// next table header or the end).
fn table(config: &str, head: &str) -> Option<(usize, usize)> {
    let mut pos = 0;
    let mut start = None;
    for l in config.split_inclusive('\n') {
        let t = l.trim();
        if let Some(s) = start {
            if t.starts_with('[') {
                return Some((s, pos));
            }
        } else if t == head {
            start = Some(pos + l.len());
        }
        pos += l.len();
    }
    start.map(|s| (s, config.len()))
}

/// `config` without the trust tables of `keys` (uninstall): each table whose header names
/// one of them, up to the next header. Every other byte stays.
pub fn without_trust(config: &str, keys: &[String]) -> String {
    let heads: Vec<String> = keys.iter().map(|k| header(k)).collect();
    let mut out = String::with_capacity(config.len());
    let mut skipping = false;
    for l in config.split_inclusive('\n') {
        let t = l.trim();
        if t.starts_with('[') {
            skipping = heads.iter().any(|h| h == t);
        }
        if !skipping {
            out.push_str(l);
        }
    }
    out
}

/// Whether Codex's config.toml holds a trusted hash for each of leakhound's hooks in
/// `hooks_json` (when Codex itself cannot be asked, the best that can be told: whether the
/// hashes are Codex's current ones only Codex knows).
pub fn config_holds_hashes(env: &Env, hooks_json: &Path) -> bool {
    let (Ok(hooks), Ok(config)) = (
        std::fs::read_to_string(hooks_json),
        std::fs::read_to_string(env.codex_home().join("config.toml")),
    ) else {
        return false;
    };
    let keys = keys_in(hooks_json, &hooks);
    !keys.is_empty()
        && keys.iter().all(|k| {
            table(&config, &header(k)).is_some_and(|(s, e)| config[s..e].lines().any(is_hash_line))
        })
}

/// The keys Codex gives leakhound's hooks in a hooks.json (`<file>:<event>:<group>:<handler>`,
/// the event in snake case), read from the file itself: uninstall needs them after Codex can
/// no longer list the hooks.
pub fn keys_in(hooks_json: &Path, text: &str) -> Vec<String> {
    let Ok(root) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut keys = Vec::new();
    let Some(events) = root.get("hooks").and_then(Value::as_object) else {
        return keys;
    };
    for (event, groups) in events {
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            for (h, hook) in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let cmd = hook.get("command").and_then(Value::as_str).unwrap_or("");
                if is_leakhound_command(cmd) {
                    keys.push(format!("{}:{}:{g}:{h}", hooks_json.display(), snake(event)));
                }
            }
        }
    }
    keys
}

fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "/h/.codex/hooks.json:post_tool_use:0:0";

    #[test]
    fn a_hash_is_added_replaced_and_taken_out_with_every_other_byte_kept() {
        let config = "model = \"x\"\n\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n";
        let once = set_trusted_hash(config, KEY, "sha256:aa");
        assert_eq!(
            once,
            format!("{config}\n[hooks.state.\"{KEY}\"]\ntrusted_hash = \"sha256:aa\"\n")
        );
        let twice = set_trusted_hash(&once, KEY, "sha256:bb");
        assert_eq!(twice, once.replace("sha256:aa", "sha256:bb"));
        assert_eq!(set_trusted_hash(&twice, KEY, "sha256:bb"), twice);
        // A table of the user's after ours survives, and so does one with only other fields.
        let with_more = format!("{twice}[other]\nvalue = 1\n");
        let out = without_trust(&with_more, &[KEY.to_string()]);
        assert_eq!(out, format!("{config}\n[other]\nvalue = 1\n"));
        let bare = format!("[hooks.state.\"{KEY}\"]\nenabled = true\n");
        assert_eq!(
            set_trusted_hash(&bare, KEY, "sha256:cc"),
            format!("[hooks.state.\"{KEY}\"]\ntrusted_hash = \"sha256:cc\"\nenabled = true\n")
        );
    }

    #[test]
    fn keys_follow_codex_positions_for_leakhound_hooks_only() {
        let text = r#"{"hooks": {
            "PostToolUse": [{"hooks": [{"type": "command", "command": "mine"}]},
                            {"hooks": [{"type": "command", "command": "x"},
                                       {"type": "command", "command": "/b/leakhound hook codex"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "/b/leakhound hook codex"}]}]}}"#;
        let keys = keys_in(Path::new("/h/hooks.json"), text);
        assert_eq!(
            keys,
            [
                "/h/hooks.json:post_tool_use:1:1",
                "/h/hooks.json:user_prompt_submit:0:0"
            ]
        );
    }
}
