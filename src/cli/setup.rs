//! What every reporting command sets up the same way: the operator's config, the rule set,
//! the scanner, the output, a progress line, and the hand-over to [`crate::deliver`].

use super::settings::{ReportSettings, RuleSources};
use crate::deliver::Delivery;
use crate::engine::{Engine, FingerprintKey, Startup};
use crate::model::Warning;
use crate::policy::{self, Config, Policy};
use crate::report::{printable, HumanOptions};
use crate::respond::{Audit, OperatorHook};
use crate::rules;
use crate::scan::{ScanResults, Scanner};
use anyhow::{bail, Context as _, Result};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

/// `--quiet`: set once, before any command runs; read wherever a warning or note is printed.
static QUIET: AtomicBool = AtomicBool::new(false);

pub fn set_quiet(q: bool) {
    QUIET.store(q, Relaxed);
}

pub fn quiet() -> bool {
    QUIET.load(Relaxed)
}

/// A warning or note for the operator on stderr (`leakhound: LINE`), unless `--quiet`.
/// Errors are not said through this: they are printed whatever the flags.
pub fn say(line: &str) {
    if !quiet() {
        eprintln!("leakhound: {line}");
    }
}

/// The operator's config (see [`Config::find`]), its name, and the fingerprint key in use.
pub fn config(explicit: Option<&Path>, scanned: &[PathBuf]) -> Result<(Config, String)> {
    let found = Config::find(explicit, scanned)?;
    if let Some(note) = &found.note {
        say(&format!("note: {note}"));
    }
    Ok((found.config, found.name))
}

/// Validation settings: the operator's environment, then the config's `[validate]` table.
/// Endpoint overrides count only from a config named with `--config` (`explicit`): a
/// `leakhound.toml` that happens to be in the working directory must not send secrets
/// elsewhere. An override for a provider no validator checks (a typo) is an error, as an
/// unknown key is: it would move nothing. Called once the rules' validators are registered.
pub fn validation_options(cfg: &Config, explicit: bool) -> Result<crate::validate::Options> {
    let v = &cfg.validate;
    let mut o = crate::validate::Options::from_env();
    o.canaries.extend(v.canary_accounts.iter().cloned());
    // Checked when the config was loaded.
    o.canary_patterns = v
        .canary_patterns
        .iter()
        .filter_map(|c| regex::Regex::new(c).ok())
        .collect();
    if let Some(ms) = v.timeout_ms {
        o.timeout = std::time::Duration::from_millis(ms.max(1));
    }
    if let Some(n) = v.retries {
        o.retries = n;
    }
    if let Some(name) = v
        .endpoints
        .keys()
        .find(|n| crate::validate::validator(n).is_none())
    {
        anyhow::bail!("validate.endpoints.{name}: no validator checks a provider of that name");
    }
    if explicit {
        o.endpoints = v.endpoints.clone();
    } else if !v.endpoints.is_empty() {
        eprintln!(
            "leakhound: note: validate.endpoints is honoured only from a config named with \
             --config; ignored"
        );
    }
    Ok(o)
}

/// The rule set: built-ins plus the operator's files, minus disabled rules.
pub fn engine(cfg: &Config, extra: &[PathBuf]) -> Result<Engine> {
    engine_for(cfg, extra, Startup::Throughput)
}

fn engine_for(cfg: &Config, extra: &[PathBuf], startup: Startup) -> Result<Engine> {
    let set = rule_set(cfg, extra)?;
    checked_engine_for(set, startup, fingerprint_key(cfg)?)
}

/// The rule set `rules::load_set` loads: the built-in rules with the config's and `extra`
/// rule files, less the disabled ones; its notes said, its validators registered. The
/// built-in rules come without their examples: only the operator's rules are checked against
/// theirs (`checked_engine_for`), and the built-in rules' 4,000 are not parsed at every start
/// (~1 ms of a pre-commit run's; `rules check` loads them through `rules::load_set`).
pub fn rule_set(cfg: &Config, extra: &[PathBuf]) -> Result<Vec<rules::Rule>> {
    let base = rules::builtin_without_examples();
    let set = rules::load_set_from(base, &[&cfg.rules.files, extra], &cfg.rules.disable)?;
    for n in &set.notes {
        say(&format!("note: {n}"));
    }
    crate::validate::http::register(set.validators);
    Ok(set.rules)
}

/// The engine for `set`, after the operator's rules (all but the built-in ones) passed their
/// checks: known validators, and their examples and negatives through the whole engine.
pub fn checked_engine(set: Vec<rules::Rule>, key: FingerprintKey) -> Result<Engine> {
    checked_engine_for(set, Startup::Throughput, key)
}

fn checked_engine_for(
    set: Vec<rules::Rule>,
    startup: Startup,
    key: FingerprintKey,
) -> Result<Engine> {
    // The built-in rules and validators are checked by the test suite (and `rules check`);
    // checking them at every start would build every validator, and an agent hook starts a
    // process per event.
    let operators =
        crate::validate::http::operators_registered() || set.iter().any(|r| !rules::is_builtin(r));
    if let Some(e) = operators
        .then(|| crate::validate::check_rules(&set))
        .and_then(|problems| problems.into_iter().next())
    {
        bail!("{e}");
    }
    let engine = Engine::with_startup(set, startup, key)?;
    // The built-in rules are checked by the test suite; an operator's are checked here, so a
    // rule that cannot find its own examples fails loudly instead of finding nothing.
    let failures = crate::engine::check(&engine, |r| !rules::is_builtin(r));
    if let Some(f) = failures.first() {
        bail!(
            "{f} ({} rule check(s) failed; see `leakhound rules check`)",
            failures.len()
        );
    }
    Ok(engine)
}

/// The engine for a command that masks rather than reports (filter, run, redact-notebook,
/// mcp-proxy, scrub, hook), from the masker's config ([`masker_config`]); `Latency` for a
/// process that masks one small input and exits (`hook`): quicker to build, a little slower
/// to search.
pub fn masking_engine(r: &RuleSources, startup: Startup) -> Result<Engine> {
    let (cfg, name) = masker_config(r.config.as_deref())?;
    // A masker masks what an allow list accepts too, but a config with a broken allow list is
    // as wrong here as under `scan`: said, not passed over.
    Policy::new(&cfg.allow, &name)?;
    let set = rule_set(&cfg, &r.rule_files)?;
    // Nor are its hooks and validation settings, which a masker does not use: a mistake in
    // them (`when = "bogus"`, an endpoint for no provider) fails `scan` with the same config.
    for h in &cfg.hooks {
        OperatorHook::new(h, &cfg.dir).with_context(|| name.clone())?;
    }
    validation_options(&cfg, true).with_context(|| name.clone())?;
    if !name.is_empty() || !r.rule_files.is_empty() {
        if let Some(less) = masks_less(&set, rules::builtin_without_examples()) {
            let from = match (name.is_empty(), r.rule_files.is_empty()) {
                (false, true) => name,
                (true, false) => "--rules".to_string(),
                _ => format!("{name} and --rules"),
            };
            eprintln!("leakhound: warning: {from} makes masking weaker: {less}");
        }
    }
    Ok(checked_engine_for(set, startup, fingerprint_key(&cfg)?)?.without_companions())
}

/// Where a masker looks for its config when not given `--config`: the user's, then the
/// system's. Never the working directory: an agent's workspace is a repository someone else
/// may control, and a `leakhound.toml` there must not switch masking off.
pub fn masker_config_paths() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let user = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")));
    if let Some(dir) = user {
        out.push(dir.join("leakhound").join("leakhound.toml"));
    }
    out.push(PathBuf::from("/etc/leakhound/leakhound.toml"));
    out
}

/// The masker's config and its name (empty: none): `explicit`, else the first of
/// [`masker_config_paths`] that exists. A `./leakhound.toml` is passed over, with a note.
pub fn masker_config(explicit: Option<&Path>) -> Result<(Config, String)> {
    let found = match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => masker_config_paths().into_iter().find(|p| p.is_file()),
    };
    if explicit.is_none() && Path::new("leakhound.toml").is_file() {
        eprintln!(
            "leakhound: note: ./leakhound.toml is not read by a masker (the working directory \
             may be a workspace someone else controls); pass --config leakhound.toml, or put \
             it in {}",
            masker_config_paths()[0].display()
        );
    }
    let (cfg, name) = match found {
        Some(p) => (Config::load(&p)?, p.display().to_string()),
        None => (Config::default(), String::new()),
    };
    Ok((cfg, name))
}

/// What in `set` masks less than the built-in rules: built-in rules left out, and built-in
/// rules changed (an allowlist or a pattern from a merged gitleaks config). `None`: nothing.
fn masks_less(set: &[rules::Rule], builtin: Vec<rules::Rule>) -> Option<String> {
    let ours: std::collections::HashMap<&str, &rules::Rule> =
        set.iter().map(|r| (r.id.as_str(), r)).collect();
    let (mut gone, mut changed) = (Vec::new(), Vec::new());
    for b in builtin {
        match ours.get(b.id.as_str()) {
            None => gone.push(b.id.clone()),
            Some(r) if format!("{r:?}") != format!("{b:?}") => changed.push(b.id.clone()),
            Some(_) => {}
        }
    }
    let list = |ids: &[String]| {
        let shown: Vec<&str> = ids.iter().take(8).map(String::as_str).collect();
        let more = ids.len().saturating_sub(shown.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    };
    let mut parts = Vec::new();
    if !gone.is_empty() {
        parts.push(format!(
            "{} built-in rule(s) disabled ({})",
            gone.len(),
            list(&gone)
        ));
    }
    if !changed.is_empty() {
        parts.push(format!(
            "{} built-in rule(s) changed, e.g. allowlisted ({})",
            changed.len(),
            list(&changed)
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The run's fingerprint key from the operator's (see `policy::fingerprint_key`): a value the
/// run's engine carries to every finding, its validation options and its report.
pub fn fingerprint_key(cfg: &Config) -> Result<FingerprintKey> {
    let (key, source) = policy::fingerprint_key(cfg)?;
    if let policy::KeySource::Ephemeral(why) = &source {
        eprintln!(
            "leakhound: note: no fingerprint key could be kept ({why}); fingerprints will differ \
             from run to run. Set {} to keep them stable.",
            policy::FINGERPRINT_KEY_VAR
        );
        return Ok(FingerprintKey::ephemeral());
    }
    Ok(FingerprintKey::new(&key))
}

/// A reporting command's run: the scanner, what to do after the scan, and the report's
/// output, opened before any work so a bad `-o` fails fast.
pub struct Session {
    pub scanner: Scanner,
    hooks: Vec<OperatorHook>,
    validation: crate::validate::Options,
    pub out: Output,
    /// The report flags, resolved once (`settings::ReportSettings`): no clap type reaches
    /// [`Session::deliver`].
    settings: ReportSettings,
    /// `--color`, with `auto` decided by where the report goes.
    color: bool,
    /// What makes the exit code 1 when a command decides it rather than `--fail-on`.
    fail_on: Option<crate::deliver::FailOn>,
}

impl Session {
    /// From the operator's config (allowlists, rules, hooks) and the report's settings.
    pub fn new(r: ReportSettings, scanned: &[PathBuf]) -> Result<Session> {
        let (cfg, cfg_name) = config(r.rules.config.as_deref(), scanned)?;
        let engine = engine(&cfg, &r.rules.rule_files)?;
        let mut policy = Policy::new(&cfg.allow, &cfg_name)?;
        if let Some(b) = &r.baseline {
            let key_id = engine.fingerprint_key().id();
            policy = policy.with_baseline(policy::read_baseline(b, &key_id)?);
        }
        let mut hooks = cfg
            .hooks
            .iter()
            .map(|h| OperatorHook::new(h, &cfg.dir))
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| cfg_name.clone())?;
        if r.rotate {
            hooks.push(OperatorHook::rotate());
        }
        let scanner = Scanner::new(engine, policy)
            .listing_units(r.list_scanned.is_some())
            .reporting(r.min_confidence);
        let out = open_output(r.output.as_deref())?;
        let color = r.color.unwrap_or_else(|| {
            out.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        });
        Ok(Session {
            scanner,
            hooks,
            validation: crate::validate::Options {
                validate_hosts: r.validate_hosts,
                ..validation_options(&cfg, r.rules.config.is_some())
                    .with_context(|| cfg_name.clone())?
            },
            settings: r,
            color,
            out,
            fail_on: None,
        })
    }

    /// Run `scan` with a progress line on a terminal.
    pub fn scan<T>(&self, scan: impl FnOnce(&Scanner) -> T) -> T {
        let progress = self.settings.format == crate::report::Format::Human;
        with_progress(&self.scanner, progress, || scan(&self.scanner))
    }

    /// Let the command, not `--fail-on`, say what makes the exit code 1.
    pub fn fail_on(mut self, f: crate::deliver::FailOn) -> Session {
        self.fail_on = Some(f);
        self
    }

    /// Hand the outcome to the stages after the scan; the exit code.
    pub fn deliver(self, o: ScanResults) -> Result<i32> {
        Ok(self.delivered(o)?.code)
    }

    /// [`Session::deliver`], with how many findings the report showed.
    pub fn delivered(mut self, mut o: ScanResults) -> Result<crate::deliver::Delivered> {
        let r = &self.settings;
        list_scanned(r.list_scanned.as_deref(), &o)?;
        if r.strict {
            // Any input not read fails the run, as one named on the command line does.
            o.summary.failed_inputs = o.summary.failed_inputs.max(o.summary.skipped_unreadable);
        }
        let audit = Audit::open(r.audit_log.as_deref()).with_context(|| {
            format!(
                "--audit-log {}",
                r.audit_log.as_deref().unwrap_or(Path::new("")).display()
            )
        })?;
        let mut validation = self.validation.clone();
        validation.key = self.scanner.engine().fingerprint_key().clone();
        let delivery = Delivery {
            validate: r.validate,
            validation,
            reach: r.reach,
            hooks: &self.hooks,
            audit,
            fail_on: self.fail_on.unwrap_or(r.fail_on),
            format: r.format,
            human: HumanOptions { color: self.color },
            show_secrets: r.show_secrets,
            min_confidence: r.min_confidence,
        };
        let mut baseline = match &r.write_baseline {
            Some(p) => Some((open_output(Some(p))?, p)),
            None => None,
        };
        let rules = self.scanner.engine().rules();
        let done = crate::deliver::deliver(
            &mut o,
            rules,
            delivery,
            self.out.writer(),
            baseline.as_mut().map(|(b, _)| b.writer()),
        )
        .context("writing the report")?;
        if let Some((mut b, p)) = baseline {
            b.writer()
                .flush()
                .with_context(|| format!("writing the baseline {}", p.display()))?;
        }
        if !done.validated.is_empty() {
            let n: usize = done.validated.values().sum();
            let parts: Vec<String> = done
                .validated
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            say(&format!(
                "validated {n} credential set(s): {}",
                parts.join(", ")
            ));
        }
        // The process ends after the report: a run's findings, and the scanner with its
        // rules' regexes and their caches, are let go of on a thread of their own, not freed
        // one by one while it waits (~25 ms and ~20 ms at the end of a scan of 20k files with
        // thousands of findings). Neither holds anything that must be closed or removed.
        // (Should no thread start, they are dropped here, with the closure.)
        let scanner = self.scanner;
        let _ = std::thread::Builder::new().spawn(move || drop((o, scanner)));
        Ok(done)
    }
}

/// Per-input problems go to stderr as they happen (and into the report).
pub fn print_warning(w: &Warning) {
    if quiet() {
        return;
    }
    eprintln!(
        "leakhound: warning: {}: {}",
        printable(&w.path),
        printable(&w.message)
    )
}

/// A progress line on stderr while a long scan runs (`shown`: the report is human), only when
/// stderr is a terminal.
fn with_progress<T>(scanner: &Scanner, shown: bool, f: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() || !shown || quiet() {
        return f();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut waited = Duration::ZERO;
            let tick = Duration::from_millis(200);
            let mut shown = false;
            while !done.load(Relaxed) {
                std::thread::sleep(tick);
                waited += tick;
                if waited >= Duration::from_secs(1) {
                    let p = &scanner.progress;
                    eprint!(
                        "\r\x1b[Kscanning: {} files, {}, {} findings",
                        p.files.load(Relaxed),
                        crate::model::human_bytes(p.bytes.load(Relaxed)),
                        p.findings.load(Relaxed)
                    );
                    shown = true;
                }
            }
            if shown {
                eprint!("\r\x1b[K");
            }
        });
        let r = f();
        done.store(true, Relaxed);
        r
    })
}

/// Standard output or a file opened safely.
pub enum Output {
    Stdout(std::io::Stdout),
    File(std::io::BufWriter<std::fs::File>),
}

impl Output {
    pub fn writer(&mut self) -> &mut dyn Write {
        match self {
            Output::Stdout(s) => s,
            Output::File(f) => f,
        }
    }

    fn is_terminal(&self) -> bool {
        matches!(self, Output::Stdout(s) if s.is_terminal())
    }
}

/// Open `-o PATH`: a regular file is replaced, a new one created; a symlink, FIFO, device or
/// directory is refused rather than written through. Created 0600, and an existing file made
/// 0600: every report holds context lines, masked or not, and a revealed one or a merge of
/// earlier reports holds secrets; which is which should not depend on remembering a flag.
pub fn open_output(path: Option<&Path>) -> Result<Output> {
    let Some(path) = path else {
        return Ok(Output::Stdout(std::io::stdout()));
    };
    let f = crate::write::open_private(path).with_context(|| format!("{}", path.display()))?;
    // A report of thousands of findings is megabytes: written in 64 KiB, not 8 KiB, pieces,
    // an eighth of the system calls at the end of a run, when nothing else runs.
    Ok(Output::File(std::io::BufWriter::with_capacity(1 << 16, f)))
}

/// `--list-scanned FILE`: the units the run covered, one a line, before the report is
/// delivered (a list that cannot be written fails the run, exit 2).
fn list_scanned(file: Option<&Path>, o: &ScanResults) -> Result<()> {
    let Some(file) = file else {
        return Ok(());
    };
    let mut text = String::new();
    for line in &o.units {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(file, text).with_context(|| format!("--list-scanned {}", file.display()))
}
