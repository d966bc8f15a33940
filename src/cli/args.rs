//! The one clap definition: every command and flag. Flag groups that several commands share
//! (rules and config, inputs, reporting) are one struct each, flattened where they apply.

use crate::deliver::FailOn;
use crate::report::Format;
use crate::rules::Confidence;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "leakhound",
    version = super::VERSION,
    about = "Find credentials leaking from AI code-interpreter runtimes",
    after_help = "Exit codes: 0 no findings, 1 findings, 2 error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// No warnings, notes or progress on standard error: only the report (or the masked
    /// stream), errors and the exit code. What a warning was about is still counted in the
    /// summary and listed in a JSON report.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Scan files and directories (`-` reads standard input).
    Scan(ScanArgs),
    /// Scan a git repository: its whole history (default), what a revision range introduced
    /// (`--since`, `--range`), or what the index adds (`--staged`, for a pre-commit hook).
    Git(GitArgs),
    /// Scan container images: config and every layer, including files later layers delete.
    Image(ImageArgs),
    /// Write a git pre-commit hook that runs `leakhound git --staged`.
    InstallHook {
        /// The repository (default: the one around the current directory).
        repo: Option<PathBuf>,
        /// Replace an existing pre-commit hook.
        #[arg(long)]
        force: bool,
    },
    /// Audit environments: this process's (default), another's (`--pid`), dump files, and
    /// with `--runtime` the credential files a runtime inherits under $HOME.
    Env(EnvArgs),
    /// Every credential this runtime can reach: environments (its own and every process's it
    /// may read), credential files under $HOME and those the AWS credential chain names, the
    /// instance metadata service and the container credential endpoint; each validated.
    RuntimeAudit(RuntimeAuditArgs),
    /// Copy stdin to stdout with every secret masked (`[REDACTED:rule]`).
    Filter(FilterArgs),
    /// Run a command with its stdout and stderr masked; exit with its status.
    Run {
        #[command(flatten)]
        filter: FilterArgs,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        cmd: Vec<String>,
    },
    /// Run a stdio MCP server behind a proxy that masks every secret in what it sends the
    /// client (tool results, resources, prompts, notifications); exit with its status.
    McpProxy(McpArgs),
    /// Write a copy of a Jupyter notebook with every secret masked.
    RedactNotebook {
        input: PathBuf,
        /// Where to write the copy (default: stdout).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        rules: RulesArgs,
    },
    /// Mask secrets at rest in agent transcripts and tool-result files (JSON Lines line by
    /// line, JSON, notebooks, text), rewriting each file in place.
    Scrub(ScrubArgs),
    /// Wire leakhound's hooks into the coding agents here (Claude Code, Codex, Gemini CLI,
    /// Copilot CLI, Cursor), report them, or scrub the agents' transcripts.
    #[command(subcommand)]
    Agents(AgentsCommand),
    /// Install, remove or report a Jupyter kernelspec whose kernel runs behind leakhound's
    /// masker: no message any client receives holds a secret. See docs/jupyter.md.
    #[command(subcommand)]
    Kernel(KernelCommand),
    /// Check the credentials in an earlier JSON Lines report (written with --show-secrets)
    /// and write it again with each one's `validation`.
    Validate {
        /// A report from `--format jsonl --show-secrets`.
        report: PathBuf,
        /// Write the report to FILE instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Keep secrets in the output (redacted by default).
        #[arg(long)]
        show_secrets: bool,
        /// What makes the exit code 1.
        #[arg(long, value_enum, default_value_t = FailOnArg::Any)]
        fail_on: FailOnArg,
        /// Append one JSON line per validation to FILE.
        #[arg(long, value_name = "FILE")]
        audit_log: Option<PathBuf>,
    },
    /// Answer one coding agent's hook event (JSON on stdin, the answer on stdout): mask the
    /// secrets in a tool's result before the model reads it, stop a prompt or tool call that
    /// holds one. See docs/agents.md.
    Hook(HookArgs),
    /// List or check rules.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Work with earlier reports.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Print a shell completion script (e.g. `leakhound completions bash > /etc/bash_completion.d/leakhound`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `leakhound man | man -l -`.
    Man,
}

/// Which rules, and the operator's config.
#[derive(Args)]
pub struct RulesArgs {
    /// Operator config file (default: ./leakhound.toml, unless it lies inside a scanned path;
    /// the maskers — filter, run, hook, mcp-proxy, scrub, redact-notebook — never read
    /// ./leakhound.toml, only the user's or system's config and this flag).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Extra rule files to load with the built-in set.
    #[arg(long = "rules", value_name = "FILE")]
    pub rule_files: Vec<PathBuf>,
}

/// What is scanned of each input: binary content, size, archives.
#[derive(Args)]
pub struct InputArgs {
    /// Scan content that looks binary too.
    #[arg(long)]
    pub binary: bool,
    /// Skip files and blobs larger than SIZE (e.g. 64MiB, 500K, 0 for no limit).
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    pub max_file_size: u64,
    /// Scan archives and compressed files as they are instead of opening them.
    #[arg(long)]
    pub no_archives: bool,
    /// How deep to open archives inside archives.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub archive_depth: usize,
}

impl InputArgs {
    /// The size limit, `None` for no limit.
    pub fn max_size(&self) -> Option<u64> {
        (self.max_file_size > 0).then_some(self.max_file_size)
    }

    /// How archives are opened; entries obey the size limit and the binary choice.
    pub fn archives(&self) -> Option<crate::scan::Archives> {
        (!self.no_archives).then(|| crate::scan::Archives {
            limits: crate::source::archive::Limits {
                depth: self.archive_depth.max(1),
                entry_size: self.max_size(),
                ..Default::default()
            },
            binary: self.binary,
        })
    }
}

/// Splitting the work between runs, and handing a run its inputs in a file.
#[derive(Args)]
pub struct ScaleArgs {
    /// Scan only shard K of N (0-based): a deterministic share of the work (git blobs by id,
    /// image layers by digest, files by path), so N runs with K = 0..N-1 scan every blob once
    /// between them; `report merge --shards` joins their JSON reports. `auto/N` (or `auto`)
    /// takes K from the scheduler: JOB_COMPLETION_INDEX (a Kubernetes Indexed Job),
    /// CI_NODE_INDEX/CI_NODE_TOTAL (GitLab), CIRCLE_NODE_INDEX, BUILDKITE_PARALLEL_JOB or
    /// LEAKHOUND_SHARD_INDEX.
    #[arg(long, value_name = "K/N|auto/N")]
    pub shard: Option<String>,
    /// Also scan the inputs listed in FILE, one a line (blank lines and `#` comments are
    /// skipped): paths, repositories or image references, as the command takes them.
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,
    /// Write to FILE what this run covered, one unit a line, sorted: a file's path, a git
    /// blob's id and path, an image layer's digest and the path in it (ids and paths only,
    /// never content). A unit skipped or not read ends in a tab and why (`skipped: binary`,
    /// `unreadable`, ...). The scanned lines are the summary's file count.
    #[arg(long, value_name = "FILE")]
    pub list_scanned: Option<PathBuf>,
}

impl ScaleArgs {
    /// `--shard`, with `auto` read from the scheduler's variables; the whole when not given.
    pub fn shard(&self) -> anyhow::Result<crate::model::Shard> {
        match &self.shard {
            None => Ok(crate::model::Shard::WHOLE),
            Some(spec) => Ok(crate::model::Shard::parse(spec, |v| std::env::var(v).ok())?),
        }
    }

    /// The lines of `--targets`, in order.
    pub fn targets(&self) -> anyhow::Result<Vec<String>> {
        use anyhow::Context as _;
        let Some(file) = &self.targets else {
            return Ok(Vec::new());
        };
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("--targets {}", file.display()))?;
        Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect())
    }
}

#[derive(Args)]
pub struct ScanArgs {
    /// Files or directories; `-` for standard input (default: `.`, unless --targets names
    /// the inputs).
    pub paths: Vec<PathBuf>,
    /// Do not honour .gitignore, .ignore and git excludes.
    #[arg(long)]
    pub no_ignore: bool,
    /// Let ignore files exclude well-known secret files too (`.env*`, `*.pem`, `*.key`,
    /// `credentials`, `.npmrc`, `.netrc`, ...); by default these are scanned even when ignored.
    #[arg(long)]
    pub no_ignored_secret_files: bool,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub scale: ScaleArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Args)]
pub struct GitArgs {
    /// The repository, work tree or bare (default: the one around the current directory).
    pub repo: Option<PathBuf>,
    /// Only what the index adds against HEAD: new files and added lines.
    #[arg(long, conflicts_with_all = ["since", "range"])]
    pub staged: bool,
    /// Only what the commits after REV introduced (REV..HEAD), on added lines.
    #[arg(long, value_name = "REV", conflicts_with = "range")]
    pub since: Option<String>,
    /// Only what the commits in A..B introduced, on added lines.
    #[arg(long, value_name = "A..B")]
    pub range: Option<String>,
    /// Also scan checked-out submodules.
    #[arg(long)]
    pub submodules: bool,
    /// Write the history's listing (one git log walk of every repository) to FILE and exit,
    /// for the shards to read with --listing instead of each walking it again.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["staged", "listing", "shard"])]
    pub write_listing: Option<PathBuf>,
    /// Read the history's listing from FILE (written by --write-listing) instead of running
    /// git log; refused if it was written for other repositories, refs or revisions.
    #[arg(long, value_name = "FILE", conflicts_with = "staged")]
    pub listing: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    /// With --targets, each repository's paths are reported under its line in the file.
    #[command(flatten)]
    pub scale: ScaleArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Args)]
pub struct ImageArgs {
    /// Images: oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:TAG], or
    /// [REGISTRY/]NAME[:TAG|@DIGEST] from a registry (or listed with --targets).
    #[arg(value_name = "REF")]
    pub images: Vec<String>,
    /// Registry credentials (default: ~/.docker/config.json, else anonymous).
    #[arg(
        long,
        value_name = "USER:PASS",
        env = "LEAKHOUND_REGISTRY_CREDS",
        hide_env_values = true
    )]
    pub creds: Option<String>,
    /// Talk to the registry over plain HTTP (a registry on loopback).
    #[arg(long)]
    pub plain_http: bool,
    /// The platform to pick from a multi-platform image.
    #[arg(long, value_name = "OS/ARCH[/VARIANT]", default_value = "linux/amd64")]
    pub platform: String,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub scale: ScaleArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Args)]
pub struct EnvArgs {
    /// Environment dumps: KEY=VALUE lines, NUL-separated (/proc/*/environ), export or
    /// declare -x lines, .env files.
    pub files: Vec<PathBuf>,
    /// Read /proc/N/environ.
    #[arg(long, value_name = "N")]
    pub pid: Vec<u32>,
    /// Also scan the credential files under $HOME that a runtime inherits (~/.aws, ~/.docker,
    /// ~/.netrc, ~/.git-credentials, ~/.npmrc, ~/.pypirc, ~/.kube, ~/.config/gcloud, ~/.azure).
    #[arg(long)]
    pub runtime: bool,
    #[command(flatten)]
    pub scale: ScaleArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Args)]
pub struct RuntimeAuditArgs {
    /// Do not ask the instance metadata service or the container credential endpoint.
    #[arg(long)]
    pub no_endpoints: bool,
    /// Do not read other processes' environments.
    #[arg(long)]
    pub no_processes: bool,
    /// Do not check found credentials with their provider (checked by default).
    #[arg(long)]
    pub no_validate: bool,
    /// Fail (exit 1) only for a live credential that reaches further than LEVEL (its reach
    /// read from its own policies; one whose reach cannot be read counts as admin), instead of
    /// for any finding: a sandbox refuses to start with an over-privileged role.
    #[arg(long, value_enum, value_name = "LEVEL", conflicts_with = "no_validate")]
    pub max_reach: Option<MaxReach>,
    /// Give up on an endpoint after this many milliseconds (connect, and each read).
    #[arg(long, value_name = "MS", default_value_t = 300)]
    pub timeout_ms: u64,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// `--max-reach`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MaxReach {
    None,
    ReadOnly,
    Write,
    Admin,
}

impl From<MaxReach> for crate::model::ReachLevel {
    fn from(m: MaxReach) -> crate::model::ReachLevel {
        use crate::model::ReachLevel;
        match m {
            MaxReach::None => ReachLevel::None,
            MaxReach::ReadOnly => ReachLevel::ReadOnly,
            MaxReach::Write => ReachLevel::Write,
            MaxReach::Admin => ReachLevel::Admin,
        }
    }
}

#[derive(Args)]
pub struct FilterArgs {
    /// Write each finding (JSON Lines, redacted) to FILE as it is masked.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print a one-line notice per masked secret on stderr.
    #[arg(long)]
    pub notify: bool,
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Forward a partial line after this many milliseconds without new output.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    pub idle_ms: u64,
}

#[derive(Args)]
pub struct HookArgs {
    /// The agent that sends the event.
    #[arg(value_enum)]
    pub agent: AgentArg,
    /// When the event cannot be scanned (not JSON, an unknown event, a broken config), let it
    /// through with a warning on stderr instead of withholding the output.
    #[arg(long)]
    pub fail_open: bool,
    /// Append each masked or blocked secret (JSON Lines, redacted) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Append one JSON line per masked, blocked or withheld secret to FILE.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Answer from a per-user hook server that keeps the rules loaded between events
    /// (docs/agents.md). `auto` (the default with no value): ask the server for these flags,
    /// start one in the background when none answers and answer this event in this process;
    /// `wait`: start one and wait for its answer (to check a set-up: a warning says why the
    /// server was not used).
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        num_args = 0..=1,
        default_missing_value = "auto",
        require_equals = true
    )]
    pub server: Option<ServerArg>,
    /// With --server: a server exits after this many seconds without an event.
    #[arg(long, value_name = "SECONDS", default_value_t = 600,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub server_idle: u64,
    /// Run as the hook server at SOCKET (what --server starts).
    #[arg(long, value_name = "SOCKET", hide = true)]
    pub serve_at: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServerArg {
    /// Ask the server; start one and answer in this process when none answers.
    Auto,
    /// Ask the server, starting one and waiting for it when none answers.
    Wait,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentArg {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    /// Cursor.
    Cursor,
}

#[derive(Args)]
pub struct McpArgs {
    /// Mask client requests too (tool-call arguments), not only what the server sends.
    #[arg(long)]
    pub mask_requests: bool,
    /// Forward a message that could not be scanned as it came (with a warning) instead of
    /// answering it with an error or withholding it.
    #[arg(long)]
    pub fail_open: bool,
    /// Write each masked secret (JSON Lines, redacted) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Append each masked secret (JSON Lines, redacted, with the time) to FILE.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Print a one-line notice per masked secret on stderr.
    #[arg(long)]
    pub notify: bool,
    #[command(flatten)]
    pub rules: RulesArgs,
    /// The MCP server's command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Args)]
pub struct ScrubArgs {
    /// Files and directories (walked; links are not followed).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub opts: ScrubOpts,
}

/// How `scrub` and `agents scrub` treat files.
#[derive(Args)]
pub struct ScrubOpts {
    /// List what would be masked (file, line, rule; never the secret) and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Skip files modified in the last SECS seconds: a live session may be writing them.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub min_age: u64,
    /// Scrub recently modified files too.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub rules: RulesArgs,
}

#[derive(Subcommand)]
pub enum KernelCommand {
    /// Write a kernelspec (default `leakhound-python3`) that starts the original kernel
    /// (default `python3`) behind a masking proxy.
    Install(KernelInstallArgs),
    /// Remove a kernelspec written by `kernel install`, and only such a one.
    Uninstall {
        /// The kernelspec to remove.
        #[arg(long, default_value = "leakhound-python3")]
        name: String,
        #[command(flatten)]
        place: KernelPlace,
        /// The Python whose Jupyter paths are used.
        #[arg(long, value_name = "PYTHON", default_value = "python3")]
        python: PathBuf,
    },
    /// Every leakhound kernelspec Jupyter would find (or those at the place given), with the
    /// kernel it wraps and whether its leakhound and Python still exist.
    Status {
        #[command(flatten)]
        place: KernelPlace,
        /// The Python whose Jupyter paths are searched.
        #[arg(long, value_name = "PYTHON", default_value = "python3")]
        python: PathBuf,
    },
    /// The masker behind the kernel proxy: one request per line on stdin, one answer per line
    /// on stdout, one masking context for the whole session (internal).
    #[command(hide = true)]
    Mask {
        #[command(flatten)]
        rules: RulesArgs,
    },
}

#[derive(Args)]
pub struct KernelInstallArgs {
    /// The kernelspec to wrap.
    #[arg(long = "from", value_name = "KERNEL", default_value = "python3")]
    pub from: String,
    /// The new kernelspec's name (default: leakhound-KERNEL).
    #[arg(long)]
    pub name: Option<String>,
    /// The name clients show (default: the wrapped kernel's, with " (leakhound)").
    #[arg(long, value_name = "TEXT")]
    pub display_name: Option<String>,
    #[command(flatten)]
    pub place: KernelPlace,
    /// The Python that finds the wrapped kernelspec and runs the proxy (needs jupyter_client
    /// and pyzmq).
    #[arg(long, value_name = "PYTHON", default_value = "python3")]
    pub python: PathBuf,
    /// The masker's config file, named in the kernelspec (default: the user's or system's).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    // No `--force`: installing again replaces a kernelspec leakhound wrote, as `jupyter
    // kernelspec install` does without being asked (its `--replace` is ignored), and one
    // leakhound did not write is never replaced; a flag could change nothing.
}

/// Where a kernelspec lives, as `jupyter kernelspec install` names it (default: the user's).
#[derive(Args)]
#[group(multiple = false)]
pub struct KernelPlace {
    /// The user's Jupyter data directory (~/.local/share/jupyter).
    #[arg(long)]
    pub user: bool,
    /// The Python environment's (sys.prefix/share/jupyter).
    #[arg(long)]
    pub sys_prefix: bool,
    /// DIR/share/jupyter.
    #[arg(long, value_name = "DIR")]
    pub prefix: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum AgentsCommand {
    /// Add leakhound's hooks (`leakhound hook AGENT`) to each agent's settings, keeping
    /// everything else in the file; a backup FILE.leakhound-backup is kept.
    Install(AgentsInstallArgs),
    /// Remove leakhound's hooks and only those; a file is put back as it was before install.
    Uninstall(AgentsArgs),
    /// Per agent and scope: whether its folder exists, which events have leakhound's hook, and
    /// the settings file.
    Status {
        /// Only this agent (repeatable).
        #[arg(long = "agent", value_enum, value_name = "AGENT")]
        agents: Vec<AgentArg>,
        /// Only this scope (default: both).
        #[arg(long, value_enum)]
        scope: Option<ScopeArg>,
    },
    /// Scrub every agent's transcript folders that exist (~/.claude/projects,
    /// ~/.codex/sessions, ~/.cursor/projects/*/agent-transcripts, ~/.copilot/session-state,
    /// ~/.gemini/tmp, and the prompt histories).
    Scrub {
        /// Only this agent's folders (repeatable).
        #[arg(long = "agent", value_enum, value_name = "AGENT")]
        agents: Vec<AgentArg>,
        #[command(flatten)]
        opts: ScrubOpts,
    },
}

#[derive(Args)]
pub struct AgentsArgs {
    /// The agent (repeatable). Default: every agent whose folder exists at the scope.
    #[arg(long = "agent", value_enum, value_name = "AGENT")]
    pub agents: Vec<AgentArg>,
    /// The user's settings (under $HOME) or the project's (under the current directory).
    #[arg(long, value_enum, default_value_t = ScopeArg::User)]
    pub scope: ScopeArg,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Args)]
pub struct AgentsInstallArgs {
    #[command(flatten)]
    pub agents: AgentsArgs,
    /// Install hooks that answer from a per-user hook server (`leakhound hook AGENT
    /// --server`): the rules loaded once, not once per tool call.
    #[arg(long)]
    pub server: bool,
}

impl From<AgentArg> for crate::agents::Agent {
    fn from(a: AgentArg) -> Self {
        use crate::agents::Agent;
        match a {
            AgentArg::Claude => Agent::Claude,
            AgentArg::Codex => Agent::Codex,
            AgentArg::Gemini => Agent::Gemini,
            AgentArg::Copilot => Agent::Copilot,
            AgentArg::Cursor => Agent::Cursor,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    User,
    Project,
}

impl From<ScopeArg> for crate::agents::Scope {
    fn from(s: ScopeArg) -> Self {
        match s {
            ScopeArg::User => crate::agents::Scope::User,
            ScopeArg::Project => crate::agents::Scope::Project,
        }
    }
}

#[derive(Subcommand)]
pub enum RulesCommand {
    /// List the rules in use.
    List {
        #[arg(long, value_enum, default_value_t = ListFormat::Human)]
        format: ListFormat,
        /// Extra rule files to load with the built-in set.
        #[arg(long = "rules", value_name = "FILE")]
        rule_files: Vec<PathBuf>,
    },
    /// Run every rule's examples and negatives through the engine. With FILEs, check those
    /// rule files instead of the built-in set.
    Check { files: Vec<PathBuf> },
    /// Convert a gitleaks or betterleaks TOML config into a leakhound rule file (printed, or
    /// written to -o FILE). `--rules` also reads such a config directly.
    Import {
        file: PathBuf,
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
pub enum ReportCommand {
    /// One entry per credential across reports (JSON or JSON Lines from scan, git, image,
    /// env, filter): every place it was found, with first and last seen. Exit 1 when there
    /// is any credential.
    Merge {
        /// The reports.
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = FormatArg::Human)]
        format: FormatArg,
        /// Write to FILE instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Keep secrets that a report shows in full (redacted by default, whatever the
        /// reports were written with).
        #[arg(long)]
        show_secrets: bool,
        /// The reports are the JSON reports of one run's shards (`--shard K/N`, every K
        /// once): write the report that run would have written whole (json, jsonl or sarif).
        #[arg(long)]
        shards: bool,
        /// With --shards: the rules the shards ran with, for SARIF's rule descriptions.
        #[command(flatten)]
        rules: RulesArgs,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Human,
    Json,
    /// A Markdown table per rule file, as docs/rules.md lists them.
    Markdown,
}

/// `--format`; the writers' own [`Format`] knows no flags.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Human,
    Json,
    Jsonl,
    Sarif,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Human => Format::Human,
            FormatArg::Json => Format::Json,
            FormatArg::Jsonl => Format::Jsonl,
            FormatArg::Sarif => Format::Sarif,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// `--fail-on`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    Live,
    Any,
    None,
}

impl From<FailOnArg> for FailOn {
    fn from(f: FailOnArg) -> FailOn {
        match f {
            FailOnArg::Live => FailOn::Live,
            FailOnArg::Any => FailOn::Any,
            FailOnArg::None => FailOn::None,
        }
    }
}

/// Options shared by every command that reports findings.
#[derive(Args)]
pub struct ReportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    pub format: FormatArg,
    /// Write the report to FILE instead of standard output (never through a symlink, FIFO or
    /// device).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Show secrets in full. Reports are redacted by default; a file written with this flag is
    /// created readable by its owner only.
    #[arg(long)]
    pub show_secrets: bool,
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Suppress the findings of an earlier JSON/JSONL report.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write every finding (including suppressed ones) as a JSON baseline to FILE.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Colour in human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Worker threads (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,
    /// Check whether found credentials are live (AWS: STS GetCallerIdentity; the endpoint comes
    /// from AWS_ENDPOINT_URL_STS or AWS_ENDPOINT_URL, the region from AWS_REGION).
    #[arg(long)]
    pub validate: bool,
    /// With --validate: for each live AWS credential, read what it can do with its own
    /// read-only IAM calls (its identity's policies) and report a reach summary
    /// (docs/reach.md). The IAM endpoint comes from AWS_ENDPOINT_URL_IAM or AWS_ENDPOINT_URL.
    #[arg(long, requires = "validate")]
    pub reach: bool,
    /// With --validate: check credentials that name their own host (a postgres:// URL) by
    /// logging in at that host. Without it they are `unknown`: the host comes from the
    /// scanned text.
    #[arg(long, requires = "validate")]
    pub validate_hosts: bool,
    /// With --validate: revoke each live credential whose provider lets a key revoke itself
    /// (GitHub, GitLab, Slack; docs/validators.md#rotation), at most once per finding, each
    /// revocation in the audit log.
    #[arg(long, requires = "validate")]
    pub rotate: bool,
    /// What makes the exit code 1: any finding, only a live credential (implies --validate),
    /// or nothing.
    #[arg(long, value_enum, default_value_t = FailOnArg::Any)]
    pub fail_on: FailOnArg,
    /// Append one JSON line per validation and per hook run to FILE (never a secret).
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Report only findings at least this sure: `high` (a provider format with a fixed
    /// prefix, a checksum or a paired structure), `medium`, `low` (a generic value known by
    /// its context alone, a weak password, a test fixture). Default: `medium` for `scan`,
    /// `git` and `image`, `low` for `env`. The summary counts what was left out.
    #[arg(long, value_enum)]
    pub min_confidence: Option<ConfidenceArg>,
    /// Fail the run (exit 2) when any input could not be read, a file inside a scanned tree
    /// included, not only one named on the command line: a gate should not pass what it did
    /// not scan. The summary counts them either way.
    #[arg(long)]
    pub strict: bool,
}

/// `--min-confidence`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConfidenceArg {
    Low,
    Medium,
    High,
}

impl From<ConfidenceArg> for Confidence {
    fn from(c: ConfidenceArg) -> Confidence {
        match c {
            ConfidenceArg::Low => Confidence::Low,
            ConfidenceArg::Medium => Confidence::Medium,
            ConfidenceArg::High => Confidence::High,
        }
    }
}

impl ReportArgs {
    /// Worker threads: `-j`, else one per core.
    pub fn threads(&self) -> usize {
        self.threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
    }
}

/// `64MiB`, `500K`, `2G`, `1000`: binary multiples; `0` means no limit.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("not a size: {s:?}"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("unknown size unit in {s:?} (use K, M or G)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size too large: {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("500K"), Ok(500 << 10));
        assert_eq!(parse_size("0"), Ok(0));
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("").is_err());
    }
}
