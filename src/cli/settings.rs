//! The flags resolved once, as ripgrep turns its low-level arguments into high-level ones:
//! `cli::main` hands each command's clap struct ([`super::args`]) to its function here, and
//! the command's body reads only the settings value it gets back. No file of `cli/` but
//! `args.rs`, this one and `mod.rs` names the clap definition (`tests/it/architecture.rs`
//! checks).
//!
//! Resolving reads nothing but the flags and what they name directly (`--targets`, the
//! scheduler's variables for `--shard auto`): what takes more work is built from a settings
//! value where the command needs it — the engine ([`MaskerRules::engine`], and a reporting
//! command's `setup::Session`), the config, the report's output — so a hook still reads its
//! event before it builds its engine, and errors come in the order they always did.

use super::args::{
    AgentArg, AgentsArgs, AgentsInstallArgs, ColorChoice, EnvArgs, FilterArgs, GitArgs, HookArgs,
    ImageArgs, InputArgs, KernelInstallArgs, KernelPlace, ListFormat, McpArgs, ReportArgs,
    RulesArgs, RuntimeAuditArgs, ScaleArgs, ScanArgs, ScopeArg, ScrubOpts, ServerArg,
};
use crate::agents::{Agent, Scope};
use crate::deliver::FailOn;
use crate::engine::{Engine, Startup};
use crate::model::{ReachLevel, Shard};
use crate::report::Format;
use crate::rules::Confidence;
use crate::source::git::Select;
use anyhow::{bail, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Where a run's rules come from: `--config` (`None`: the command's usual place) and `--rules`.
#[derive(Clone, Default)]
pub struct RuleSources {
    pub config: Option<PathBuf>,
    pub rule_files: Vec<PathBuf>,
}

impl From<RulesArgs> for RuleSources {
    fn from(r: RulesArgs) -> RuleSources {
        RuleSources {
            config: r.config,
            rule_files: r.rule_files,
        }
    }
}

/// A masker's rules (filter, run, hook, mcp-proxy, scrub, redact-notebook, the kernel's
/// masker): where they come from, and what its engine is built for.
pub struct MaskerRules {
    pub sources: RuleSources,
    /// `Latency` for a process that masks one small input and exits (`hook`).
    pub startup: Startup,
}

impl MaskerRules {
    fn new(r: RulesArgs) -> MaskerRules {
        MaskerRules {
            sources: r.into(),
            startup: Startup::Throughput,
        }
    }

    /// The built-in rules with the user's or system's config: for masking what leakhound
    /// shows itself (the diff of `agents install --dry-run`), where no flag names others.
    pub fn built_in() -> MaskerRules {
        MaskerRules {
            sources: RuleSources::default(),
            startup: Startup::Throughput,
        }
    }

    /// The masking engine (see `setup::masking_engine`): the config is read and the rule set
    /// loaded here, when the command needs them.
    pub fn engine(&self) -> Result<Engine> {
        super::setup::masking_engine(&self.sources, self.startup)
    }
}

/// What a reporting command's flags ask of its session and the stages after the scan.
pub struct ReportSettings {
    pub rules: RuleSources,
    pub format: Format,
    pub output: Option<PathBuf>,
    /// `--color`: `None` is `auto`, decided by whether the report goes to a terminal.
    pub color: Option<bool>,
    pub show_secrets: bool,
    pub baseline: Option<PathBuf>,
    pub write_baseline: Option<PathBuf>,
    pub threads: usize,
    pub validate: bool,
    pub reach: bool,
    pub validate_hosts: bool,
    pub rotate: bool,
    pub fail_on: FailOn,
    pub audit_log: Option<PathBuf>,
    /// `--min-confidence`, else the command's default.
    pub min_confidence: Confidence,
    pub strict: bool,
    /// `--list-scanned`: where to write the units the run covered (commands that scan
    /// units: scan, git, image, env).
    pub list_scanned: Option<PathBuf>,
}

/// `confidence`: the command's default `--min-confidence`.
fn report(r: ReportArgs, confidence: Confidence) -> ReportSettings {
    ReportSettings {
        threads: r.threads(),
        format: r.format.into(),
        color: match r.color {
            ColorChoice::Always => Some(true),
            ColorChoice::Never => Some(false),
            ColorChoice::Auto => None,
        },
        min_confidence: r.min_confidence.map_or(confidence, Into::into),
        fail_on: r.fail_on.into(),
        rules: r.rules.into(),
        output: r.output,
        show_secrets: r.show_secrets,
        baseline: r.baseline,
        write_baseline: r.write_baseline,
        validate: r.validate,
        reach: r.reach,
        validate_hosts: r.validate_hosts,
        rotate: r.rotate,
        audit_log: r.audit_log,
        strict: r.strict,
        list_scanned: None,
    }
}

/// What is scanned of each input.
pub struct Input {
    pub binary: bool,
    /// `None`: no limit.
    pub max_file_size: Option<u64>,
    /// `None`: archives are scanned as they are (`--no-archives`).
    pub archives: Option<crate::scan::Archives>,
}

fn input(i: &InputArgs) -> Input {
    Input {
        binary: i.binary,
        max_file_size: i.max_size(),
        archives: i.archives(),
    }
}

/// `--shard` and the lines of `--targets`, in that order (a bad shard fails first).
fn scale(s: &ScaleArgs) -> Result<(Shard, Vec<String>)> {
    let shard = s.shard()?;
    Ok((shard, s.targets()?))
}

pub struct ScanSettings {
    /// The paths named and listed (`.` when none); `-` is standard input.
    pub paths: Vec<PathBuf>,
    pub ignore_files: bool,
    pub ignored_secret_files: bool,
    pub input: Input,
    pub shard: Shard,
    pub report: ReportSettings,
}

pub fn scan(a: ScanArgs) -> Result<ScanSettings> {
    let (shard, targets) = scale(&a.scale)?;
    let mut paths = a.paths;
    paths.extend(targets.into_iter().map(PathBuf::from));
    if paths.is_empty() {
        paths.push(PathBuf::from("."));
    }
    Ok(ScanSettings {
        paths,
        ignore_files: !a.no_ignore,
        ignored_secret_files: !a.no_ignored_secret_files,
        input: input(&a.input),
        shard,
        report: ReportSettings {
            list_scanned: a.scale.list_scanned,
            ..report(a.report, Confidence::Medium)
        },
    })
}

pub struct GitSettings {
    /// Each repository, and what its paths are reported under (with `--targets`, its line).
    pub dirs: Vec<(PathBuf, String)>,
    pub select: Select,
    pub submodules: bool,
    /// `--write-listing`: list the history into this file and scan nothing.
    pub write_listing: Option<PathBuf>,
    /// `--listing`: read the history's listing from this file instead of git log.
    pub listing: Option<PathBuf>,
    pub input: Input,
    pub shard: Shard,
    pub report: ReportSettings,
}

pub fn git(a: GitArgs) -> Result<GitSettings> {
    let (shard, targets) = scale(&a.scale)?;
    // With a target list, each repository's paths are reported under its line.
    let listed = !targets.is_empty();
    let mut dirs: Vec<(PathBuf, String)> = Vec::new();
    if let Some(d) = a.repo {
        let prefix = if listed {
            prefix(&d.to_string_lossy())
        } else {
            String::new()
        };
        dirs.push((d, prefix));
    }
    dirs.extend(targets.iter().map(|t| (PathBuf::from(t), prefix(t))));
    if dirs.is_empty() {
        dirs.push((PathBuf::from("."), String::new()));
    }
    let select = match (a.staged, a.since, a.range) {
        (true, _, _) => Select::Staged,
        (_, Some(rev), _) => Select::Range(rev),
        (_, _, Some(range)) => Select::Range(range),
        _ => Select::All,
    };
    Ok(GitSettings {
        dirs,
        select,
        submodules: a.submodules,
        write_listing: a.write_listing,
        listing: a.listing,
        input: input(&a.input),
        shard,
        report: ReportSettings {
            list_scanned: a.scale.list_scanned,
            ..report(a.report, Confidence::Medium)
        },
    })
}

/// Where a listed repository's paths are reported: under its line, as written.
fn prefix(target: &str) -> String {
    format!("{}/", target.trim_end_matches('/'))
}

pub struct ImageSettings {
    /// The references named and listed; never empty.
    pub refs: Vec<String>,
    pub registry: crate::source::image::RegistryOptions,
    pub input: Input,
    pub shard: Shard,
    pub report: ReportSettings,
}

pub fn image(a: ImageArgs) -> Result<ImageSettings> {
    let (shard, targets) = scale(&a.scale)?;
    let mut refs = a.images;
    refs.extend(targets);
    if refs.is_empty() {
        bail!("no image given (name one, or list them with --targets FILE)");
    }
    Ok(ImageSettings {
        refs,
        registry: crate::source::image::RegistryOptions {
            creds: a.creds,
            plain_http: a.plain_http,
            platform: a.platform,
        },
        input: input(&a.input),
        shard,
        report: ReportSettings {
            list_scanned: a.scale.list_scanned,
            ..report(a.report, Confidence::Medium)
        },
    })
}

pub struct EnvSettings {
    /// The dumps named and listed.
    pub files: Vec<PathBuf>,
    pub pids: Vec<u32>,
    /// `--runtime`: the credential files under $HOME too.
    pub runtime: bool,
    pub shard: Shard,
    pub report: ReportSettings,
}

pub fn env(a: EnvArgs) -> Result<EnvSettings> {
    let (shard, targets) = scale(&a.scale)?;
    let mut files = a.files;
    files.extend(targets.into_iter().map(PathBuf::from));
    Ok(EnvSettings {
        files,
        pids: a.pid,
        runtime: a.runtime,
        shard,
        report: ReportSettings {
            list_scanned: a.scale.list_scanned,
            ..report(a.report, Confidence::Low)
        },
    })
}

pub struct AuditSettings {
    pub report: ReportSettings,
    /// `--max-reach`: the command, not `--fail-on`, says what makes the exit code 1.
    pub max_reach: Option<ReachLevel>,
    pub endpoints: bool,
    pub processes: bool,
    /// Per endpoint: connect, and each read.
    pub timeout: Duration,
}

pub fn runtime_audit(a: RuntimeAuditArgs) -> AuditSettings {
    let mut report = report(a.report, Confidence::Low);
    // Validated (with reach) unless told not to.
    report.validate = !a.no_validate;
    report.reach = !a.no_validate;
    AuditSettings {
        report,
        max_reach: a.max_reach.map(Into::into),
        endpoints: !a.no_endpoints,
        processes: !a.no_processes,
        timeout: Duration::from_millis(a.timeout_ms.max(1)),
    }
}

/// `filter` and `run`.
pub struct FilterSettings {
    pub rules: MaskerRules,
    /// `--report`: each finding, redacted, as JSON Lines.
    pub report: Option<PathBuf>,
    pub notify: bool,
    /// How long a partial line waits for more.
    pub idle: Duration,
    /// `run`'s command; `None` for `filter`.
    pub cmd: Option<Vec<String>>,
}

pub fn filter(f: FilterArgs, cmd: Option<Vec<String>>) -> FilterSettings {
    FilterSettings {
        rules: MaskerRules::new(f.rules),
        report: f.report,
        notify: f.notify,
        idle: Duration::from_millis(f.idle_ms),
        cmd,
    }
}

pub struct McpSettings {
    pub rules: MaskerRules,
    pub report: Option<PathBuf>,
    pub audit_log: Option<PathBuf>,
    pub notify: bool,
    pub serve: crate::filter::mcp::Options,
    pub cmd: Vec<String>,
}

pub fn mcp(a: McpArgs) -> McpSettings {
    McpSettings {
        rules: MaskerRules::new(a.rules),
        report: a.report,
        audit_log: a.audit_log,
        notify: a.notify,
        serve: crate::filter::mcp::Options {
            mask_requests: a.mask_requests,
            fail_open: a.fail_open,
        },
        cmd: a.cmd,
    }
}

pub struct HookSettings {
    pub agent: Agent,
    pub fail_open: bool,
    pub report: Option<PathBuf>,
    pub audit_log: Option<PathBuf>,
    /// Built for latency when one process answers one event; for throughput in a hook server.
    pub rules: MaskerRules,
    pub server: HookServer,
}

/// Where a hook event is answered.
pub enum HookServer {
    /// In this process.
    No,
    /// By the hook server for these flags, started when none answers (`--server`); `wait`:
    /// for it to start.
    Ask { wait: bool },
    /// This process is that server, at this socket (`--serve-at`).
    Serve { socket: PathBuf, idle: Duration },
}

pub fn hook(a: HookArgs) -> HookSettings {
    let idle = Duration::from_secs(a.server_idle);
    let server = match (a.serve_at, a.server) {
        (Some(socket), _) => HookServer::Serve { socket, idle },
        (None, Some(mode)) => HookServer::Ask {
            wait: mode == ServerArg::Wait,
        },
        (None, None) => HookServer::No,
    };
    let startup = match server {
        HookServer::Serve { .. } => Startup::Throughput,
        _ => Startup::Latency,
    };
    HookSettings {
        agent: a.agent.into(),
        fail_open: a.fail_open,
        report: a.report,
        audit_log: a.audit_log,
        rules: MaskerRules {
            startup,
            ..MaskerRules::new(a.rules)
        },
        server,
    }
}

/// `scrub` and `agents scrub`.
pub struct ScrubSettings {
    pub rules: MaskerRules,
    pub options: crate::scrub::Options,
}

pub fn scrub(o: ScrubOpts) -> ScrubSettings {
    ScrubSettings {
        options: crate::scrub::Options {
            dry_run: o.dry_run,
            min_age: Duration::from_secs(o.min_age),
            force: o.force,
        },
        rules: MaskerRules::new(o.rules),
    }
}

/// A masker's rules from its flags alone (`redact-notebook`, `kernel mask`).
pub fn masker(r: RulesArgs) -> MaskerRules {
    MaskerRules::new(r)
}

/// The agents named (`--agent`), in [`Agent`]'s order, once each; empty: none named.
pub fn agents(named: Vec<AgentArg>) -> Vec<Agent> {
    let mut v: Vec<Agent> = named.into_iter().map(Into::into).collect();
    v.sort();
    v.dedup();
    v
}

/// `agents install` and `agents uninstall`.
pub struct AgentsSettings {
    /// Empty: every agent whose folder exists at the scope.
    pub agents: Vec<Agent>,
    pub scope: Scope,
    pub dry_run: bool,
    /// The hooks installed ask the hook server (`hook --server`).
    pub server: bool,
}

pub fn agents_change(a: AgentsArgs) -> AgentsSettings {
    AgentsSettings {
        agents: agents(a.agents),
        scope: a.scope.into(),
        dry_run: a.dry_run,
        server: false,
    }
}

pub fn agents_install(a: AgentsInstallArgs) -> AgentsSettings {
    AgentsSettings {
        server: a.server,
        ..agents_change(a.agents)
    }
}

/// `agents status --scope`: `None` is both.
pub fn scope(s: Option<ScopeArg>) -> Option<Scope> {
    s.map(Into::into)
}

/// Where a kernelspec lives.
pub enum Place {
    /// None named: the user's for a change; every place Jupyter searches for `status`.
    Default,
    User,
    SysPrefix,
    /// `--prefix DIR`: DIR/share/jupyter.
    Prefix(PathBuf),
}

pub fn place(p: KernelPlace) -> Place {
    match (p.prefix, p.user, p.sys_prefix) {
        (Some(dir), _, _) => Place::Prefix(dir),
        (None, true, _) => Place::User,
        (None, false, true) => Place::SysPrefix,
        (None, false, false) => Place::Default,
    }
}

pub struct KernelInstall {
    /// The kernelspec wrapped.
    pub from: String,
    pub name: Option<String>,
    pub display_name: Option<String>,
    pub place: Place,
    pub python: PathBuf,
    /// The masker's config, named in the kernelspec.
    pub config: Option<PathBuf>,
}

pub fn kernel_install(a: KernelInstallArgs) -> KernelInstall {
    KernelInstall {
        from: a.from,
        name: a.name,
        display_name: a.display_name,
        place: place(a.place),
        python: a.python,
        config: a.config,
    }
}

/// How `rules list` prints.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RuleListing {
    Human,
    Json,
    Markdown,
}

pub fn rule_listing(f: ListFormat) -> RuleListing {
    match f {
        ListFormat::Human => RuleListing::Human,
        ListFormat::Json => RuleListing::Json,
        ListFormat::Markdown => RuleListing::Markdown,
    }
}
