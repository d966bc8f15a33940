//! Response to findings: the operator's hooks (from `leakhound.toml` only, never from a
//! scanned tree) and the audit log.
//!
//! A command hook gets the finding as JSON on stdin — redacted unless the hook sets
//! `with_secret` — and nothing secret in its argv or environment: the child inherits the
//! operator's environment minus the providers' credential variables
//! ([`crate::validate::operator_credential_vars`], unless `pass_env` names them). Each
//! (finding fingerprint, hook) runs at most once: a hook that succeeded is recorded under the
//! state directory and not run again by later runs.

mod rotate;

use crate::model::{Finding, HookRun, Status};
use crate::policy::{HookConfig, When};
use crate::validate::{Action, Checked, Credential, ReachChecked};
use globset::{Glob, GlobSet, GlobSetBuilder};

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
#[error("hooks: {0}")]
pub struct OperatorHookError(String);

/// An operator's hook (`[[hooks]]` in `leakhound.toml`) ready to run. Named apart from the
/// `hook` module, which answers coding agents' events and has nothing to do with these.
pub struct OperatorHook {
    pub name: String,
    /// `None`: any finding, validated or not (but `unknown`, see below).
    statuses: Option<Vec<Status>>,
    /// Whether `when` names `unknown`. `unknown` is "could not tell" (a network error, a
    /// build without the feature, an answer that proves nothing): a hook fires on it only
    /// when it asked for it by name, never through `any` (docs/security.md).
    unknown: bool,
    rules: Option<GlobSet>,
    kind: Kind,
    with_secret: bool,
    pass_env: Vec<String>,
    timeout: Duration,
    /// Where the command runs: the config file's directory.
    dir: PathBuf,
}

enum Kind {
    Command(Vec<String>),
    /// Built in, supplied by a provider's validator; the credential is checked again after.
    Action(&'static dyn Action),
    /// Built in, by `--rotate`: the key revokes itself with its provider's request.
    Revoke,
}

fn status(s: &str) -> Option<Status> {
    Some(match s {
        "live" => Status::Live,
        "invalid" => Status::Invalid,
        "secret-mismatch" => Status::SecretMismatch,
        "expired" => Status::Expired,
        "revoked" => Status::Revoked,
        "skipped" => Status::Skipped,
        "unknown" => Status::Unknown,
        _ => return None,
    })
}

/// `30s`, `500ms`, `2m`, `1h`, or plain seconds.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().ok()?;
    Some(match unit.trim() {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" => Duration::from_secs(n * 60),
        "h" => Duration::from_secs(n * 3600),
        _ => return None,
    })
}

impl OperatorHook {
    /// Check a configured hook; `dir` is where its command runs.
    pub fn new(c: &HookConfig, dir: &Path) -> Result<OperatorHook, OperatorHookError> {
        let err = |m: String| OperatorHookError(format!("hook {:?}: {m}", c.name));
        let kind = match (&c.command, c.action.as_deref()) {
            (Some(cmd), None) if !cmd.is_empty() => Kind::Command(cmd.clone()),
            (Some(_), None) => return Err(err("command is empty".into())),
            (None, Some(a)) => match crate::validate::action(a) {
                Some(action) => Kind::Action(action),
                None => {
                    let names: Vec<&str> = crate::validate::actions().map(|a| a.name()).collect();
                    // The value is not quoted: no message shows input.
                    return Err(err(format!(
                        "action is none of the built-in ones ({})",
                        names.join(", ")
                    )));
                }
            },
            (Some(_), Some(_)) => return Err(err("give command or action, not both".into())),
            (None, None) => return Err(err("needs a command or an action".into())),
        };
        if let Kind::Action(action) = kind {
            action
                .available()
                .map_err(|why| err(format!("action {:?}: {why}", action.name())))?;
        }
        let words = match &c.when {
            When::One(w) => vec![w.clone()],
            When::Many(ws) => ws.clone(),
        };
        let unknown = words.iter().any(|w| w == "unknown");
        let statuses = if words.iter().any(|w| w == "any") {
            None
        } else {
            Some(
                words
                    .iter()
                    .map(|w| {
                        status(w).ok_or_else(|| {
                            err("when: a value is not a status (live, invalid, secret-mismatch, expired, revoked, skipped, unknown, any)".into())
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            )
        };
        let rules = if c.rules.is_empty() {
            None
        } else {
            let mut b = GlobSetBuilder::new();
            for r in &c.rules {
                let glob = crate::rules::glob_error;
                b.add(Glob::new(r).map_err(|e| err(format!("rules: {}", glob(&e))))?);
            }
            Some(
                b.build()
                    .map_err(|e| err(format!("rules: {}", crate::rules::glob_error(&e))))?,
            )
        };
        let timeout = parse_duration(&c.timeout)
            .ok_or_else(|| err("timeout is not a duration: use e.g. 30s, 500ms, 2m".into()))?;
        Ok(OperatorHook {
            name: c.name.clone(),
            statuses,
            unknown,
            rules,
            kind,
            with_secret: c.with_secret,
            pass_env: c.pass_env.clone(),
            timeout,
            dir: dir.to_path_buf(),
        })
    }

    fn wants(&self, f: &Finding) -> bool {
        let status_ok = match (f.validation.as_ref().map(|v| v.status), &self.statuses) {
            (Some(Status::Unknown), _) => self.unknown,
            (_, None) => true,
            (Some(status), Some(s)) => s.contains(&status),
            (None, Some(_)) => false,
        };
        let kind_ok = match self.kind {
            Kind::Command(_) => true,
            Kind::Action(a) => a.takes(f),
            Kind::Revoke => rotate::wants(f),
        };
        kind_ok && status_ok && self.rules.as_ref().is_none_or(|r| r.is_match(&f.rule_id))
    }
}

/// Run every hook on the findings it wants, once per (fingerprint, hook) across runs.
/// `known` holds every secret value the run found (reported or not): no hook's environment
/// holds one (see [`execute`]).
pub fn run_hooks(
    findings: &mut [Finding],
    known: &crate::model::Known,
    hooks: &[OperatorHook],
    opts: &crate::validate::Options,
    audit: &mut Audit,
) {
    if hooks.is_empty() {
        return;
    }
    let state_dir = opts.cache_dir.as_deref();
    // Each finding's credential set, for actions that check a key again after acting.
    let creds = crate::validate::credentials(findings, &opts.key);
    let mut set_of: HashMap<usize, usize> = HashMap::new();
    for (c, cred) in creds.iter().enumerate() {
        for &i in &cred.members {
            set_of.insert(i, c);
        }
    }
    // Validations that changed because of an action, by credential.
    let mut changed: HashMap<usize, crate::model::Validation> = HashMap::new();
    let state_path = state_dir.map(|d| d.join("hooks-state.json"));
    let mut done: HashMap<String, String> = state_path
        .as_ref()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    // Runs in this invocation, by key: a fingerprint found in many places runs once.
    let mut this_run: HashMap<String, HookRun> = HashMap::new();
    // What hooks inherit and print is checked against every value the run found, a
    // generated one's pieces too (a token without its prefix in a variable, a part of it
    // echoed).
    let known = std::sync::Arc::new(known.with_pieces());
    for (i, f) in findings.iter_mut().enumerate() {
        let cred = set_of.get(&i).copied();
        let set = cred.map(|c| &creds[c]);
        let wanted: Vec<&OperatorHook> = hooks.iter().filter(|h| h.wants(f)).collect();
        for h in wanted {
            let key = format!("{}\0{}", f.fingerprint, h.name);
            let run = if let Some(r) = this_run.get(&key) {
                r.clone()
            } else if done.contains_key(&key) {
                HookRun {
                    name: h.name.clone(),
                    status: "done-before".into(),
                    exit_code: None,
                    duration_ms: 0,
                    detail: None,
                    status_after: None,
                }
            } else {
                let mut after = None;
                let r = execute(h, f, set, &known, opts, &mut after);
                if let (Some(v), Some(c)) = (after, cred) {
                    changed.insert(c, v);
                }
                audit.hook(f, &r);
                if r.status == "ok" {
                    done.insert(key.clone(), crate::model::now_rfc3339());
                }
                this_run.insert(key, r.clone());
                r
            };
            f.hooks.push(run);
        }
    }
    for (c, v) in changed {
        crate::validate::remember(&creds[c], &v, opts);
        for &i in &creds[c].members {
            findings[i].validation = Some(v.clone());
        }
    }
    if let (Some(p), false) = (&state_path, this_run.is_empty()) {
        if let Ok(body) = serde_json::to_vec(&done) {
            if let Err(e) = crate::write::private(p, &body) {
                eprintln!(
                    "leakhound: warning: cannot record hook runs in {}: {e}",
                    p.display()
                );
            }
        }
    }
}

fn execute(
    h: &OperatorHook,
    f: &Finding,
    set: Option<&Credential>,
    known: &std::sync::Arc<crate::model::Known>,
    opts: &crate::validate::Options,
    after: &mut Option<crate::model::Validation>,
) -> HookRun {
    let start = Instant::now();
    let ended = |status: &str, exit_code: Option<i32>| HookRun {
        name: h.name.clone(),
        status: status.into(),
        exit_code,
        duration_ms: start.elapsed().as_millis() as u64,
        detail: None,
        status_after: None,
    };
    let command = match &h.kind {
        Kind::Command(c) => c,
        Kind::Revoke => return rotate::run(f, set, opts, after),
        Kind::Action(action) => {
            let mut run = ended("ok", None);
            match action.act(f, opts) {
                Ok(done) => {
                    run.detail = Some(done);
                    // Check again with the leaked set itself: it should no longer work.
                    if let Some(set) = set {
                        let v = crate::validate::check_now(set, opts);
                        run.status_after = Some(v.status);
                        *after = Some(v);
                    }
                }
                Err(e) => {
                    run.status = "error".into();
                    run.detail = Some(e);
                }
            }
            run.duration_ms = start.elapsed().as_millis() as u64;
            return run;
        }
    };
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..])
        .current_dir(&h.dir)
        .stdin(Stdio::piped())
        // Through pipes that leakhound relays to its stderr (the report owns stdout): what a
        // hook leaves running in the background then holds a pipe leakhound can let go of,
        // not leakhound's own stderr, on which a capturing caller would wait for ever.
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A process group of its own, so a timeout kills what the hook started too.
        .process_group(0)
        .env("LEAKHOUND_HOOK", &h.name)
        // The key that makes fingerprints irreversible is not the hook's to hold.
        .env_remove(crate::policy::FINGERPRINT_KEY_VAR);
    // The operator's own provider credentials stay out of hooks unless passed on purpose,
    // and so does every variable that holds a secret the run found: a hook is handed the
    // secret on stdin only when it asks (`with_secret`), and an `env` audit finds them in
    // leakhound's own environment, which the hook would inherit.
    let passed = |v: &std::ffi::OsStr| h.pass_env.iter().any(|p| std::ffi::OsStr::new(p) == v);
    for v in crate::validate::operator_credential_vars() {
        if !passed(v.as_ref()) {
            cmd.env_remove(v);
        }
    }
    for (name, value) in std::env::vars_os() {
        if !passed(&name) && !known.find(value.as_encoded_bytes()).is_empty() {
            cmd.env_remove(name);
        }
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("leakhound: hook {:?} could not start: {e}", h.name);
            return ended("error", None);
        }
    };
    let (relayed, relays_done) = std::sync::mpsc::channel::<()>();
    let mut relays = 0;
    let outputs: [Option<Box<dyn std::io::Read + Send>>; 2] = [
        child.stdout.take().map(|o| Box::new(o) as _),
        child.stderr.take().map(|e| Box::new(e) as _),
    ];
    // What the hook prints is masked by every value the run found, the one it was handed
    // (with `with_secret`) among them, which it may echo: leakhound's stderr is a log like
    // any other.
    for from in outputs.into_iter().flatten() {
        let (done, known) = (relayed.clone(), known.clone());
        relays += 1;
        std::thread::spawn(move || {
            let _ = relay(std::io::BufReader::new(from), &known);
            let _ = done.send(());
        });
    }
    let mut body = f.to_json(h.with_secret).to_string();
    body.push('\n');
    // Written from a thread: a hook that never reads its stdin must not stall leakhound.
    if let Some(mut stdin) = child.stdin.take() {
        std::thread::spawn(move || {
            let _ = stdin.write_all(body.as_bytes());
        });
    }
    let deadline = start + h.timeout;
    let run = loop {
        match child.try_wait() {
            Ok(Some(s)) => {
                let status = if s.success() { "ok" } else { "failed" };
                break ended(status, s.code());
            }
            Ok(None) if Instant::now() >= deadline => {
                kill_group(&mut child);
                eprintln!("leakhound: hook {:?} killed after {:?}", h.name, h.timeout);
                break ended("timeout", None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => {
                kill_group(&mut child);
                break ended("error", None);
            }
        }
    };
    // The hook's last words, if its pipes close soon; a background process it left holding
    // them is not waited for (its later output is still relayed while leakhound runs).
    let drain_until = Instant::now() + HOOK_DRAIN;
    for _ in 0..relays {
        let left = drain_until.saturating_duration_since(Instant::now());
        if relays_done.recv_timeout(left).is_err() {
            break;
        }
    }
    run
}

/// How long a finished hook's output is awaited after the hook itself has exited.
const HOOK_DRAIN: Duration = Duration::from_millis(200);

/// Copy a hook's output to leakhound's stderr, line by line (a value is masked whole), with
/// each of `known` masked, until the pipe closes. A last line with no end that ends in the
/// beginning of a value (a hook cut off mid-secret) has that beginning masked too.
fn relay(mut from: impl std::io::BufRead, known: &crate::model::Known) -> std::io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        let cut = match line.last() {
            Some(b'\n') => None,
            _ => known.prefix_at_end(&line).map(|(start, _)| start),
        };
        let whole = &line[..cut.unwrap_or(line.len())];
        let mut out = Vec::with_capacity(line.len());
        let mut at = 0;
        for o in known.find(whole) {
            if o.end > at {
                out.extend_from_slice(&whole[at..o.start.max(at)]);
                out.extend_from_slice(b"[REDACTED]");
                at = o.end;
            }
        }
        out.extend_from_slice(&whole[at..]);
        if cut.is_some() {
            out.extend_from_slice(b"[REDACTED]");
        }
        let mut err = std::io::stderr().lock();
        err.write_all(&out)?;
        err.flush()?;
    }
}

/// End a hook and everything in its process group (grandchildren included), and reap it.
fn kill_group(child: &mut std::process::Child) {
    match libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the group the hook leads
        // (process_group(0) made its pid the group id); it touches no memory. The hook is not
        // reaped before this, so its id cannot have passed to another process.
        Ok(pgid) => unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        },
        Err(_) => {
            let _ = child.kill();
        }
    }
    let _ = child.wait();
}

/// `--audit-log FILE`: one JSON line per validation and per hook run, appended; never a
/// secret (public parts, such as key ids, are identifiers and are included).
#[derive(Default)]
pub struct Audit {
    file: Option<std::fs::File>,
}

impl Audit {
    pub fn open(path: Option<&Path>) -> std::io::Result<Audit> {
        let Some(path) = path else {
            return Ok(Audit::default());
        };
        let file = crate::write::open_append(path)?;
        Ok(Audit { file: Some(file) })
    }

    fn line(&mut self, v: serde_json::Value) {
        if let Some(f) = &mut self.file {
            let _ = writeln!(f, "{v}");
        }
    }

    pub fn validations(&mut self, checked: &[Checked]) {
        for c in checked {
            self.line(serde_json::json!({
                "time": crate::model::now_rfc3339(),
                "event": "validation",
                "fingerprint": c.fingerprint,
                "rule": c.rule,
                "key_id": c.key_id,
                "status": c.validation.status,
                "account": c.validation.account,
                "identity": c.validation.identity.as_ref().map(|i| i.display()),
                "reason": c.validation.reason,
                "cached": c.cached,
                "validator": c.validator,
                "request": c.endpoint.as_ref().map(|(e, _)| e),
                "endpoint_overridden": c.endpoint.as_ref().is_some_and(|(_, o)| *o),
            }));
        }
    }

    /// `--reach`: one line per request made (each a read), then one with the reach.
    pub fn reach(&mut self, reached: &[ReachChecked]) {
        for r in reached {
            for c in &r.reached.calls {
                self.line(serde_json::json!({
                    "time": crate::model::now_rfc3339(),
                    "event": "reach-call",
                    "fingerprint": r.fingerprint,
                    "rule": r.rule,
                    "key_id": r.key_id,
                    "action": c.action,
                    "target": c.target,
                    "outcome": c.outcome,
                }));
            }
            let reach = &r.reached.reach;
            self.line(serde_json::json!({
                "time": crate::model::now_rfc3339(),
                "event": "reach",
                "fingerprint": r.fingerprint,
                "rule": r.rule,
                "key_id": r.key_id,
                "identity": reach.identity,
                "level": reach.level,
                "flags": reach.flags,
                "severity": reach.severity,
                "reason": reach.reason,
                "calls": r.reached.calls.len(),
            }));
        }
    }

    /// What `leakhound hook` did with one agent event: one line per secret it masked or
    /// blocked, or one line without a finding when it withheld an output it could not scan.
    pub fn agent_hook(&mut self, agent: &str, event: &str, outcome: &str, f: Option<&Finding>) {
        // Only identifiers (public parts, such as key ids) are named; secrets never.
        let key_id = f.and_then(|f| f.public.then(|| f.secret.reveal()));
        self.line(serde_json::json!({
            "time": crate::model::now_rfc3339(),
            "event": "agent-hook",
            "agent": agent,
            "hook_event": event,
            "outcome": outcome,
            "fingerprint": f.map(|f| &f.fingerprint),
            "rule": f.map(|f| &f.rule_id),
            "key_id": key_id,
            "path": f.map(|f| f.path()),
            "line": f.map(|f| f.line),
            "column": f.map(|f| f.column),
        }));
    }

    fn hook(&mut self, f: &Finding, r: &HookRun) {
        // Only identifiers (public parts, such as key ids) are named; secrets never.
        let key_id = f.public.then(|| f.secret.reveal());
        self.line(serde_json::json!({
            "time": crate::model::now_rfc3339(),
            "event": "hook",
            "fingerprint": f.fingerprint,
            "rule": f.rule_id,
            "key_id": key_id,
            "status": f.validation.as_ref().map(|v| v.status),
            "hook": r.name,
            "outcome": r.status,
            "exit_code": r.exit_code,
            "duration_ms": r.duration_ms,
            "detail": r.detail,
            "status_after": r.status_after,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression #15: `any` fired on `unknown`, which docs/security.md says never fires a
    /// hook. Only a hook that names `unknown` gets it.
    #[test]
    fn unknown_fires_only_a_hook_that_names_it() {
        let hook = |when: When| {
            let c = HookConfig {
                name: "h".into(),
                when,
                rules: Vec::new(),
                command: Some(vec!["true".into()]),
                action: None,
                with_secret: false,
                pass_env: Vec::new(),
                timeout: "30s".into(),
            };
            OperatorHook::new(&c, Path::new(".")).unwrap()
        };
        let one = |w: &str| When::One(w.into());
        let many = |ws: &[&str]| When::Many(ws.iter().map(|w| w.to_string()).collect());
        let rules = crate::rules::builtin();
        let rule = rules.iter().find(|r| r.id == "github.pat").unwrap();
        let finding = |status: Option<Status>| {
            let key = crate::model::FingerprintKey::ephemeral();
            let mut f = Finding::from_report(rule, "ghp_fake", None, "a.sh", &key);
            f.validation = status.map(|s| crate::model::Validation {
                status: s,
                ..crate::model::Validation::skipped("test", None)
            });
            f
        };
        let unknown = finding(Some(Status::Unknown));
        let live = finding(Some(Status::Live));
        let unvalidated = finding(None);
        for when in [one("any"), one("live"), many(&["live", "invalid"])] {
            assert!(!hook(when).wants(&unknown));
        }
        for when in [
            one("unknown"),
            many(&["live", "unknown"]),
            many(&["any", "unknown"]),
        ] {
            assert!(hook(when).wants(&unknown));
        }
        assert!(hook(one("any")).wants(&live) && hook(one("any")).wants(&unvalidated));
        assert!(!hook(one("unknown")).wants(&live));
        assert!(!hook(one("live")).wants(&unvalidated));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("soon"), None);
    }
}
