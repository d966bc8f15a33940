//! The command line: arguments parsed once, checked, turned into a scanner and a writer.
//! Every subcommand lives here; the library modules know nothing of flags.

use crate::engine::Engine;
use crate::filter as leakhound_filter;
use crate::policy::{self, Config, Policy};
use crate::report::{self, Format, HumanOptions, Report};
use crate::rules;
use crate::scan::{Outcome, Scanner};
use crate::source::fs::WalkOptions;
use anyhow::{bail, Context as _, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

/// Exit codes.
pub const EXIT_CLEAN: i32 = 0;
pub const EXIT_FINDINGS: i32 = 1;
pub const EXIT_ERROR: i32 = 2;

#[derive(Parser)]
#[command(
    name = "leakhound",
    version = crate::rules::VERSION,
    about = "Find credentials leaking from AI code-interpreter runtimes",
    after_help = "Exit codes: 0 no findings, 1 findings, 2 error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    /// Write a copy of a Jupyter notebook with every secret masked.
    RedactNotebook {
        input: PathBuf,
        /// Where to write the copy (default: stdout).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Extra rule files to load with the built-in set.
        #[arg(long = "rules", value_name = "FILE")]
        rule_files: Vec<PathBuf>,
    },
    /// Check the AWS credentials in an earlier JSON Lines report (written with
    /// --show-secrets) and write it again with each one's `validation`.
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
        #[arg(long, value_enum, default_value_t = FailOn::Any)]
        fail_on: FailOn,
        /// Append one JSON line per validation to FILE.
        #[arg(long, value_name = "FILE")]
        audit_log: Option<PathBuf>,
    },
    /// List or check rules.
    #[command(subcommand)]
    Rules(RulesCommand),
}

#[derive(Args)]
struct GitArgs {
    /// The repository, work tree or bare (default: the one around the current directory).
    repo: Option<PathBuf>,
    /// Only what the index adds against HEAD: new files and added lines.
    #[arg(long, conflicts_with_all = ["since", "range"])]
    staged: bool,
    /// Only what the commits after REV introduced (REV..HEAD), on added lines.
    #[arg(long, value_name = "REV", conflicts_with = "range")]
    since: Option<String>,
    /// Only what the commits in A..B introduced, on added lines.
    #[arg(long, value_name = "A..B")]
    range: Option<String>,
    /// Also scan checked-out submodules.
    #[arg(long)]
    submodules: bool,
    /// Scan blobs that look binary too.
    #[arg(long)]
    binary: bool,
    /// Skip blobs larger than SIZE (e.g. 64MiB, 500K, 0 for no limit).
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    max_file_size: u64,
    #[command(flatten)]
    archives: ArchiveArgs,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Args)]
struct ImageArgs {
    /// Images: oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:TAG], or
    /// [REGISTRY/]NAME[:TAG|@DIGEST] from a registry.
    #[arg(required = true, value_name = "REF")]
    images: Vec<String>,
    /// Registry credentials (default: ~/.docker/config.json, else anonymous).
    #[arg(
        long,
        value_name = "USER:PASS",
        env = "LEAKHOUND_REGISTRY_CREDS",
        hide_env_values = true
    )]
    creds: Option<String>,
    /// Talk to the registry over plain HTTP (a registry on loopback).
    #[arg(long)]
    plain_http: bool,
    /// The platform to pick from a multi-platform image.
    #[arg(long, value_name = "OS/ARCH[/VARIANT]", default_value = "linux/amd64")]
    platform: String,
    /// Scan files that look binary too.
    #[arg(long)]
    binary: bool,
    /// Skip files larger than SIZE (e.g. 64MiB, 500K, 0 for no limit).
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    max_file_size: u64,
    #[command(flatten)]
    archives: ArchiveArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// How archives and compressed files are opened.
#[derive(Args)]
struct ArchiveArgs {
    /// Scan archives and compressed files as they are instead of opening them.
    #[arg(long)]
    no_archives: bool,
    /// How deep to open archives inside archives.
    #[arg(long, value_name = "N", default_value_t = 3)]
    archive_depth: usize,
}

/// Archive handling from the flags; entries obey the file size limit and binary choice.
fn archives(a: &ArchiveArgs, binary: bool, max_file_size: u64) -> Option<crate::scan::Archives> {
    (!a.no_archives).then(|| crate::scan::Archives {
        limits: crate::source::archive::Limits {
            depth: a.archive_depth.max(1),
            entry_size: (max_file_size > 0).then_some(max_file_size),
            ..Default::default()
        },
        binary,
    })
}

#[derive(Args)]
struct EnvArgs {
    /// Environment dumps: KEY=VALUE lines, NUL-separated (/proc/*/environ), export or
    /// declare -x lines, .env files.
    files: Vec<PathBuf>,
    /// Read /proc/N/environ.
    #[arg(long, value_name = "N")]
    pid: Vec<u32>,
    /// Also scan the credential files under $HOME that a runtime inherits (~/.aws, ~/.docker,
    /// ~/.netrc, ~/.git-credentials, ~/.npmrc, ~/.pypirc, ~/.kube, ~/.config/gcloud, ~/.azure).
    #[arg(long)]
    runtime: bool,
    #[command(flatten)]
    report: ReportArgs,
}

/// Where credentials live under $HOME, relative to it.
const RUNTIME_CREDENTIALS: &[&str] = &[
    ".aws/credentials",
    ".aws/config",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".kube/config",
    ".config/gcloud/application_default_credentials.json",
    ".config/gcloud/credentials.db",
    ".azure",
];

#[derive(Args)]
struct FilterArgs {
    /// Write each finding (JSON Lines, redacted) to FILE as it is masked.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Print a one-line notice per masked secret on stderr.
    #[arg(long)]
    notify: bool,
    /// Operator config file (default: ./leakhound.toml); its `[rules]` apply.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Extra rule files to load with the built-in set.
    #[arg(long = "rules", value_name = "FILE")]
    rule_files: Vec<PathBuf>,
    /// Forward a partial line after this many milliseconds without new output.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    idle_ms: u64,
}

#[derive(Subcommand)]
enum RulesCommand {
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
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ListFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Options shared by every command that reports findings.
#[derive(Args)]
struct ReportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write the report to FILE instead of standard output (never through a symlink, FIFO or
    /// device).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Show secrets in full. Reports are redacted by default; a file written with this flag is
    /// created readable by its owner only.
    #[arg(long)]
    show_secrets: bool,
    /// Operator config file (default: ./leakhound.toml, unless it lies inside a scanned path).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Suppress the findings of an earlier JSON/JSONL report.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write every finding (including suppressed ones) as a JSON baseline to FILE.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Extra rule files to load with the built-in set.
    #[arg(long = "rules", value_name = "FILE")]
    rule_files: Vec<PathBuf>,
    /// Colour in human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Worker threads (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
    /// Check whether found AWS credentials are live (STS GetCallerIdentity). The endpoint comes
    /// from AWS_ENDPOINT_URL_STS or AWS_ENDPOINT_URL, the region from AWS_REGION.
    #[arg(long)]
    validate: bool,
    /// What makes the exit code 1: any finding, only a live credential (implies --validate),
    /// or nothing.
    #[arg(long, value_enum, default_value_t = FailOn::Any)]
    fail_on: FailOn,
    /// Append one JSON line per validation and per hook run to FILE (never a secret).
    #[arg(long, value_name = "FILE")]
    audit_log: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FailOn {
    Live,
    Any,
    None,
}

#[derive(Args)]
struct ScanArgs {
    /// Files or directories; `-` for standard input.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Do not honour .gitignore, .ignore and git excludes.
    #[arg(long)]
    no_ignore: bool,
    /// Let ignore files exclude well-known secret files too (`.env*`, `*.pem`, `*.key`,
    /// `credentials`, `.npmrc`, `.netrc`, ...); by default these are scanned even when ignored.
    #[arg(long)]
    no_ignored_secret_files: bool,
    /// Scan files that look binary too.
    #[arg(long)]
    binary: bool,
    /// Skip files larger than SIZE (e.g. 64MiB, 500K, 0 for no limit).
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    max_file_size: u64,
    #[command(flatten)]
    archives: ArchiveArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// For `leakhound run CMD ARGS` (no `--`), which clap rejects as an unexpected argument:
/// a hint naming the fix, with the user's own command.
fn run_without_dashes(e: &clap::Error) -> Option<String> {
    use clap::error::ErrorKind;
    if !matches!(
        e.kind(),
        ErrorKind::UnknownArgument | ErrorKind::MissingRequiredArgument
    ) {
        return None;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let at = args.iter().position(|a| a == "run")?;
    if args.iter().any(|a| a == "--") {
        return None;
    }
    // The command starts at the argument clap did not expect.
    let unexpected = match e.get(clap::error::ContextKind::InvalidArg) {
        Some(clap::error::ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let cmd = unexpected
        .and_then(|u| args[at + 1..].iter().position(|a| *a == u))
        .map(|p| args[at + 1 + p..].join(" "))
        .unwrap_or_default();
    let shown = if cmd.is_empty() { "CMD ARGS..." } else { &cmd };
    Some(format!(
        "hint: put `--` before the command to run: leakhound run [OPTIONS] -- {shown}"
    ))
}

/// Run the command line and return the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            if let Some(hint) = run_without_dashes(&e) {
                eprintln!("{hint}");
            }
            return if e.use_stderr() {
                EXIT_ERROR
            } else {
                EXIT_CLEAN
            };
        }
    };
    let r = match cli.command {
        Command::Scan(a) => scan(a),
        Command::Env(a) => env(a),
        Command::Git(a) => git(a),
        Command::Image(a) => image(a),
        Command::InstallHook { repo, force } => install_hook(repo.as_deref(), force),
        Command::RedactNotebook {
            input,
            output,
            config,
            rule_files,
        } => redact_notebook(&input, output.as_deref(), config.as_deref(), &rule_files),
        Command::Filter(f) => filter(&f, None),
        Command::Run { filter: f, cmd } => filter(&f, Some(&cmd)),
        Command::Rules(RulesCommand::List { format, rule_files }) => {
            list_rules(format, &rule_files)
        }
        Command::Rules(RulesCommand::Check { files }) => check_rules(&files),
        Command::Validate {
            report,
            output,
            show_secrets,
            fail_on,
            audit_log,
        } => validate_report(
            &report,
            output.as_deref(),
            show_secrets,
            fail_on,
            audit_log.as_deref(),
        ),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return EXIT_CLEAN;
            }
            eprintln!("leakhound: error: {}", report::printable(&format!("{e:#}")));
            EXIT_ERROR
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `64MiB`, `500K`, `2G`, `1000`: binary multiples; `0` means no limit.
fn parse_size(s: &str) -> Result<u64, String> {
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

/// The rule set: built-ins plus the operator's files, minus disabled rules.
fn build_engine(cfg: &Config, extra: &[PathBuf]) -> Result<Engine> {
    let mut set = rules::builtin();
    set.extend(rules::load_files(&cfg.rules.files)?);
    set.extend(rules::load_files(extra)?);
    rules::disable(&mut set, &cfg.rules.disable).context("rules.disable")?;
    let engine = Engine::new(set)?;
    // The built-in rules are checked by the test suite; an operator's are checked here, so a
    // rule that cannot find its own examples fails loudly instead of finding nothing.
    let failures = rules::check(&engine, |r| !rules::is_builtin(r));
    if let Some(f) = failures.first() {
        bail!(
            "{f} ({} rule check(s) failed; see `leakhound rules check`)",
            failures.len()
        );
    }
    Ok(engine)
}

/// The operator's config: `--config`, or `./leakhound.toml` when it is not inside a scanned
/// path (a scanned tree must not be able to allow its own secrets).
fn load_config(explicit: Option<&Path>, scanned: &[PathBuf]) -> Result<(Config, String)> {
    if let Some(p) = explicit {
        return Ok((Config::load(p)?, p.display().to_string()));
    }
    let local = Path::new("leakhound.toml");
    if !local.is_file() {
        return Ok((Config::default(), String::new()));
    }
    let cwd = std::env::current_dir()?;
    let inside = scanned.iter().any(|p| {
        p.as_os_str() != "-"
            && p.canonicalize()
                .is_ok_and(|root| cwd.join(local).starts_with(root))
    });
    if inside {
        eprintln!(
            "leakhound: note: ./leakhound.toml lies inside the scanned tree and is not loaded; \
             pass --config leakhound.toml to use it"
        );
        return Ok((Config::default(), String::new()));
    }
    Ok((Config::load(local)?, "leakhound.toml".into()))
}

/// The scanner a reporting command uses: the operator's config (allowlists, rules), the
/// baseline, and the rule set.
fn scanner(r: &ReportArgs, scanned: &[PathBuf]) -> Result<(Scanner, Response)> {
    let (cfg, cfg_name) = load_config(r.config.as_deref(), scanned)?;
    use_fingerprint_key(&cfg)?;
    let mut policy = Policy::new(&cfg.allow, &cfg_name)?;
    if let Some(b) = &r.baseline {
        policy = policy.with_baseline(policy::read_baseline(b)?);
    }
    let hooks = cfg
        .hooks
        .iter()
        .map(|h| crate::respond::Hook::new(h, &cfg.dir))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| cfg_name.clone())?;
    let response = Response {
        hooks,
        canaries: cfg.validate.canary_accounts.clone(),
    };
    Ok((
        Scanner::new(build_engine(&cfg, &r.rule_files)?, policy),
        response,
    ))
}

/// Make every fingerprint of this run with the operator's key (see `policy::fingerprint_key`).
fn use_fingerprint_key(cfg: &Config) -> Result<()> {
    let (key, source) = policy::fingerprint_key(cfg)?;
    if let policy::KeySource::Ephemeral(why) = &source {
        eprintln!(
            "leakhound: note: no fingerprint key could be kept ({why}); fingerprints will differ \
             from run to run. Set {} to keep them stable.",
            policy::FINGERPRINT_KEY_VAR
        );
        return Ok(());
    }
    if !report::set_fingerprint_key(&key) {
        bail!("the fingerprint key changed during the run");
    }
    Ok(())
}

/// What the operator's config says to do about findings.
struct Response {
    hooks: Vec<crate::respond::Hook>,
    canaries: Vec<String>,
}

/// Worker threads (`-j`, default one per core); also sizes rayon's pool.
fn threads(r: &ReportArgs) -> usize {
    let n = r
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global();
    n
}

/// Per-file problems go to stderr as they happen (and into the report).
fn print_warning(w: &report::Warning) {
    eprintln!(
        "leakhound: warning: {}: {}",
        report::printable(&w.path),
        report::printable(&w.message)
    )
}

fn scan(a: ScanArgs) -> Result<i32> {
    let r = &a.report;
    // A missing path is reported by the walk, after the other paths are scanned (exit 2).
    let stdin = a.paths.iter().any(|p| p.as_os_str() == "-");
    if stdin && a.paths.len() > 1 {
        bail!("`-` (standard input) cannot be combined with other paths");
    }
    let (scanner, response) = scanner(r, &a.paths)?;
    let scanner = scanner.with_archives(archives(&a.archives, a.binary, a.max_file_size));
    let threads = threads(r);
    // Open the output before scanning: a bad -o path should fail fast, not after the work.
    let mut out = open_output(r.output.as_deref(), r.show_secrets)?;
    let outcome = if stdin {
        scanner
            .stdin(&print_warning)
            .context("reading standard input")?
    } else {
        let opts = WalkOptions {
            paths: a.paths.clone(),
            ignore_files: !a.no_ignore,
            binary: a.binary,
            max_file_size: (a.max_file_size > 0).then_some(a.max_file_size),
            threads,
            ignored_secret_files: !a.no_ignored_secret_files,
        };
        with_progress(&scanner, r.format, || scanner.paths(&opts, &print_warning))
    };
    let code = emit(&scanner, &response, &outcome, r, &mut out)?;
    // A named input that could not be read fails the run, findings or not.
    Ok(if outcome.summary.failed_inputs > 0 {
        EXIT_ERROR
    } else {
        code
    })
}

fn git(a: GitArgs) -> Result<i32> {
    use crate::source::git::{Repo, Select};
    let r = &a.report;
    let dir = a.repo.clone().unwrap_or_else(|| PathBuf::from("."));
    let (scanner, response) = scanner(r, std::slice::from_ref(&dir))?;
    let scanner = scanner.with_archives(archives(&a.archives, a.binary, a.max_file_size));
    let repo = Repo::open(&dir).with_context(|| format!("{}", dir.display()))?;
    let select = match (a.staged, &a.since, &a.range) {
        (true, _, _) => Select::Staged,
        (_, Some(rev), _) => Select::Range(rev.clone()),
        (_, _, Some(range)) => Select::Range(range.clone()),
        _ => Select::All,
    };
    let threads = threads(r);
    let mut out = open_output(r.output.as_deref(), r.show_secrets)?;
    let opts = crate::scan::GitOptions {
        select,
        binary: a.binary,
        max_file_size: (a.max_file_size > 0).then_some(a.max_file_size),
        threads,
        submodules: a.submodules,
    };
    let outcome = with_progress(&scanner, r.format, || {
        scanner.git(&repo, &opts, &print_warning)
    })
    .with_context(|| format!("{}", dir.display()))?;
    let code = emit(&scanner, &response, &outcome, r, &mut out)?;
    if a.staged && code == EXIT_FINDINGS {
        eprintln!(
            "leakhound: commit blocked: {} secret(s) in staged changes. Remove them (and rotate \
             any that are real), or mark a false positive with `leakhound:allow` on its line.",
            outcome.findings.len()
        );
    }
    Ok(code)
}

fn image(a: ImageArgs) -> Result<i32> {
    let r = &a.report;
    let (scanner, response) = scanner(r, &[])?;
    let scanner = scanner.with_archives(archives(&a.archives, a.binary, a.max_file_size));
    threads(r);
    let mut out = open_output(r.output.as_deref(), r.show_secrets)?;
    let opts = crate::scan::ImageOptions {
        registry: crate::source::image::RegistryOptions {
            creds: a.creds.clone(),
            plain_http: a.plain_http,
            platform: a.platform.clone(),
        },
        binary: a.binary,
        max_file_size: (a.max_file_size > 0).then_some(a.max_file_size),
    };
    let outcome = with_progress(&scanner, r.format, || {
        scanner.images(&a.images, &opts, &print_warning)
    })?;
    emit(&scanner, &response, &outcome, r, &mut out)
}

/// The hook `install-hook` writes. It prefers the binary that installed it and falls back to
/// `leakhound` on PATH if that one has moved.
fn hook_script(exe: &str) -> String {
    let quoted = format!("'{}'", exe.replace('\'', r"'\''"));
    format!(
        "#!/bin/sh\n\
         # Installed by `leakhound install-hook`: blocks commits that add secrets.\n\
         # Mark a false positive with `leakhound:allow` on its line.\n\
         LEAKHOUND={quoted}\n\
         [ -x \"$LEAKHOUND\" ] || LEAKHOUND=leakhound\n\
         exec \"$LEAKHOUND\" git --staged\n"
    )
}

fn install_hook(repo: Option<&Path>, force: bool) -> Result<i32> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = repo.unwrap_or(Path::new("."));
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--git-path", "hooks/pre-commit"])
        .output()
        .context("running git")?;
    if !out.status.success() {
        bail!(
            "{}: not a git repository: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    // `--git-path` answers relative to the directory git ran in, and honours core.hooksPath.
    let hook = dir.join(String::from_utf8_lossy(&out.stdout).trim());
    let exe = std::env::current_exe().context("locating the leakhound binary")?;
    let script = hook_script(&exe.to_string_lossy());
    match std::fs::read(&hook) {
        Ok(existing) if existing == script.as_bytes() => {
            eprintln!("leakhound: {} is already installed", hook.display());
            return Ok(EXIT_CLEAN);
        }
        Ok(_) if !force => bail!(
            "{} exists; not replacing it (use --force, or call `leakhound git --staged` from it)",
            hook.display()
        ),
        _ => {}
    }
    if let Some(parent) = hook.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("{}", parent.display()))?;
    }
    // Write beside it and rename: a hook is never seen half-written.
    let tmp = hook.with_extension("leakhound-tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .open(&tmp)
        .with_context(|| format!("{}", tmp.display()))?;
    f.write_all(script.as_bytes())
        .and_then(|_| f.sync_all())
        .with_context(|| format!("{}", tmp.display()))?;
    std::fs::rename(&tmp, &hook).with_context(|| format!("{}", hook.display()))?;
    eprintln!("leakhound: installed {}", hook.display());
    Ok(EXIT_CLEAN)
}

fn env(a: EnvArgs) -> Result<i32> {
    use crate::source::env::Environment;
    let r = &a.report;
    let (scanner, response) = scanner(r, &a.files)?;
    let mut envs = Vec::new();
    for pid in &a.pid {
        envs.push(Environment::of_pid(*pid).with_context(|| {
            format!("cannot read the environment of pid {pid} (/proc/{pid}/environ)")
        })?);
    }
    for f in &a.files {
        envs.push(Environment::from_file(f).with_context(|| format!("{}", f.display()))?);
    }
    if envs.is_empty() {
        envs.push(Environment::current());
    }
    let mut out = open_output(r.output.as_deref(), r.show_secrets)?;
    let mut outcome = scanner.environments(&envs);
    if a.runtime {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let paths: Vec<PathBuf> = RUNTIME_CREDENTIALS
            .iter()
            .map(|p| home.join(p))
            .filter(|p| p.exists())
            .collect();
        if !paths.is_empty() {
            let opts = WalkOptions {
                paths,
                ignore_files: false,
                binary: false,
                max_file_size: Some(64 << 20),
                threads: 2,
                ignored_secret_files: true,
            };
            outcome = outcome.merge(scanner.paths(&opts, &print_warning));
        }
    }
    emit(&scanner, &response, &outcome, r, &mut out)
}

/// Write the report (and a baseline, if asked) and pick the exit code.
fn emit(
    scanner: &Scanner,
    response: &Response,
    o: &Outcome,
    r: &ReportArgs,
    out: &mut Output,
) -> Result<i32> {
    let mut audit = crate::respond::Audit::open(r.audit_log.as_deref()).with_context(|| {
        format!(
            "--audit-log {}",
            r.audit_log.as_deref().unwrap_or(Path::new("")).display()
        )
    })?;
    let validated;
    let validate = r.validate || r.fail_on == FailOn::Live;
    let o = if validate || !response.hooks.is_empty() {
        let mut copy = Outcome {
            findings: o.findings.clone(),
            suppressed: Vec::new(),
            warnings: o.warnings.clone(),
            summary: o.summary.clone(),
        };
        let mut opts = crate::validate::Options::from_env();
        opts.canaries.extend(response.canaries.iter().cloned());
        let checked = if validate {
            crate::validate::validate(&mut copy.findings, &opts)
        } else {
            Vec::new()
        };
        audit.validations(&checked);
        let mut counts = std::collections::BTreeMap::new();
        for c in &checked {
            *counts.entry(c.validation.status.as_str()).or_insert(0) += 1;
        }
        if !checked.is_empty() {
            let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
            eprintln!(
                "leakhound: validated {} AWS credential set(s): {}",
                checked.len(),
                parts.join(", ")
            );
        }
        crate::respond::run_hooks(&mut copy.findings, &response.hooks, &opts, &mut audit);
        validated = Outcome {
            suppressed: o.suppressed.clone(),
            ..copy
        };
        &validated
    } else {
        o
    };
    let rules = scanner.engine().rules();
    let color = match r.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            out.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let report = Report {
        findings: &o.findings,
        warnings: &o.warnings,
        summary: &o.summary,
        rules,
        show_secrets: r.show_secrets,
    };
    report::write(r.format, &report, &HumanOptions { color }, out.writer())
        .context("writing the report")?;
    if let Some(path) = &r.write_baseline {
        let mut all: Vec<_> = o.findings.iter().chain(&o.suppressed).cloned().collect();
        all.sort_by_key(|f| (f.path(), f.start));
        let mut f = open_output(Some(path), false)?;
        report::write_baseline(&all, f.writer())
            .with_context(|| format!("writing the baseline {}", path.display()))?;
    }
    let failing = match r.fail_on {
        FailOn::Any => !o.findings.is_empty(),
        FailOn::Live => o.findings.iter().any(|f| {
            f.validation
                .as_ref()
                .is_some_and(|v| v.status == crate::validate::Status::Live)
        }),
        FailOn::None => false,
    };
    Ok(if failing { EXIT_FINDINGS } else { EXIT_CLEAN })
}

/// A progress line on stderr while a long scan runs, only when stderr is a terminal.
fn with_progress<T>(scanner: &Scanner, format: Format, f: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() || format != Format::Human {
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
                        report::human_bytes(p.bytes.load(Relaxed)),
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
enum Output {
    Stdout(std::io::Stdout),
    File(std::io::BufWriter<std::fs::File>),
}

impl Output {
    fn writer(&mut self) -> &mut dyn Write {
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
/// directory is refused rather than written through. Revealed reports are created 0600.
fn open_output(path: Option<&Path>, secret: bool) -> Result<Output> {
    let Some(path) = path else {
        return Ok(Output::Stdout(std::io::stdout()));
    };
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_file() {
            bail!(
                "{}: refusing to write: not a regular file (symlink, FIFO, device or directory)",
                path.display()
            );
        }
    }
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(if secret { 0o600 } else { 0o644 })
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("{}: cannot open for writing", path.display()))?;
    if secret {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("{}: cannot restrict permissions", path.display()))?;
    }
    Ok(Output::File(std::io::BufWriter::new(f)))
}

/// Findings from a filter: a JSONL report and/or notices on stderr. The secret is never
/// written: reports are always redacted.
struct FilterSink {
    report: Option<std::sync::Mutex<Output>>,
    notify: bool,
}

impl leakhound_filter::Sink for FilterSink {
    fn finding(&self, f: &report::Finding) {
        if self.notify {
            eprintln!(
                "leakhound: masked {} in {} at line {}",
                f.rule_id,
                f.path(),
                f.line
            );
        }
        if let Some(r) = &self.report {
            let mut out = r.lock().unwrap_or_else(|e| e.into_inner());
            let w = out.writer();
            let _ = serde_json::to_writer(&mut *w, &report::finding_json(f, false))
                .map_err(std::io::Error::from)
                .and_then(|_| writeln!(w))
                .and_then(|_| w.flush());
        }
    }
}

/// `filter` (no command) and `run` (a command).
fn filter(a: &FilterArgs, cmd: Option<&[String]>) -> Result<i32> {
    let (cfg, _) = load_config(a.config.as_deref(), &[])?;
    let engine = build_engine(&cfg, &a.rule_files)?.without_companions();
    let report = match &a.report {
        Some(p) => Some(std::sync::Mutex::new(open_output(Some(p), false)?)),
        None => None,
    };
    let sink = FilterSink {
        report,
        notify: a.notify,
    };
    let idle = Duration::from_millis(a.idle_ms);
    match cmd {
        None => {
            leakhound_filter::pump(
                &engine,
                "stdin",
                std::io::stdin(),
                &mut std::io::stdout(),
                idle,
                &sink,
            )
            .context("filter stopped; held output was withheld")?;
            Ok(EXIT_CLEAN)
        }
        Some(cmd) => {
            let status = leakhound_filter::run(&engine, cmd, idle, &sink)
                .with_context(|| format!("running {:?}", cmd[0]))?;
            use std::os::unix::process::ExitStatusExt;
            Ok(status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
        }
    }
}

fn redact_notebook(
    input: &Path,
    output: Option<&Path>,
    config: Option<&Path>,
    extra: &[PathBuf],
) -> Result<i32> {
    let (cfg, _) = load_config(config, &[])?;
    let engine = build_engine(&cfg, extra)?.without_companions();
    let raw = std::fs::read(input).with_context(|| format!("{}", input.display()))?;
    let (masked, n, valid) = leakhound_filter::redact_notebook(&engine, &raw);
    if !valid {
        eprintln!(
            "leakhound: warning: {}: not valid JSON; masked as plain text",
            input.display()
        );
    }
    let mut out = open_output(output, false)?;
    out.writer()
        .write_all(&masked)
        .and_then(|_| out.writer().flush())
        .context("writing the redacted notebook")?;
    eprintln!("leakhound: {n} secret(s) masked");
    Ok(EXIT_CLEAN)
}

fn validate_report(
    path: &Path,
    output: Option<&Path>,
    show: bool,
    fail_on: FailOn,
    audit_log: Option<&Path>,
) -> Result<i32> {
    use crate::report::{Finding, Secret};
    use serde_json::Value;
    use_fingerprint_key(&load_config(None, &[])?.0)?;
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let mut lines: Vec<Value> = Vec::new();
    for (n, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        lines.push(
            serde_json::from_str(l)
                .with_context(|| format!("{}:{}: not a JSON finding", path.display(), n + 1))?,
        );
    }
    // The AWS parts of the report, as findings; (line index, finding index).
    let mut findings = Vec::new();
    let mut at = Vec::new();
    for (i, v) in lines.iter().enumerate() {
        let rule = v["rule"].as_str().unwrap_or("");
        if !rule.starts_with("aws.") || v["redacted"] == Value::Bool(true) {
            continue;
        }
        let (Some(secret), set) = (v["secret"].as_str(), v["credential_set"].as_str()) else {
            continue;
        };
        findings.push(Finding::from_report(
            rule,
            secret,
            set.map(String::from),
            v["path"].as_str().unwrap_or(""),
        ));
        at.push(i);
    }
    let opts = crate::validate::Options::from_env();
    let checked = crate::validate::validate(&mut findings, &opts);
    crate::respond::Audit::open(audit_log)
        .with_context(|| "--audit-log".to_string())?
        .validations(&checked);
    for (f, &i) in findings.iter().zip(&at) {
        lines[i]["validation"] = serde_json::json!(f.validation);
    }
    // Every secret the report holds in clear, to mask wherever it shows: a context line can
    // hold another finding's secret (or a key id's finding, the secret beside it).
    let known: Vec<String> = lines
        .iter()
        .filter(|v| v["redacted"] != Value::Bool(true) && v["rule"] != "aws.access-key-id")
        .filter_map(|v| v["secret"].as_str().map(String::from))
        .collect();
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    let masker = (!show)
        .then(|| build_engine(&Config::default(), &[]).map(|e| Scanner::new(e, Policy::default())));
    let masker = masker.transpose()?;
    let mut live = false;
    for v in &mut lines {
        live |= v["validation"]["status"] == "live";
        if v["redacted"] == Value::Bool(true)
            && v["rule"].as_str().is_some_and(|r| r.starts_with("aws."))
        {
            // Nothing to check it with: say so.
            v["validation"] = serde_json::json!({
                "status": "skipped",
                "reason": "redacted in the report (write it with --show-secrets)",
                "checked_at": crate::validate::now_rfc3339(),
            });
        }
        let Some(masker) = &masker else { continue };
        // Redact as the writers do: the secret, and every secret in the context line,
        // whether this finding's or another's, key ids' findings included.
        if let Some(c) = v["context"].as_str() {
            v["context"] = Value::String(masker.mask_text(c, &known));
        }
        if v["rule"] != "aws.access-key-id" && v["redacted"] != Value::Bool(true) {
            if let Some(s) = v["secret"].as_str() {
                v["secret"] = Value::String(Secret::new(s.as_bytes()).redacted());
                v["redacted"] = Value::Bool(true);
            }
            if let Some(o) = v.as_object_mut() {
                o.remove("entropy");
            }
        }
    }
    let mut out = open_output(output, show)?;
    let w = out.writer();
    for v in &lines {
        writeln!(w, "{v}").context("writing the report")?;
    }
    w.flush().context("writing the report")?;
    let failing = match fail_on {
        FailOn::Any => !lines.is_empty(),
        FailOn::Live => live,
        FailOn::None => false,
    };
    Ok(if failing { EXIT_FINDINGS } else { EXIT_CLEAN })
}

fn list_rules(format: ListFormat, extra: &[PathBuf]) -> Result<i32> {
    let engine = build_engine(&Config::default(), extra)?;
    let mut out = std::io::stdout().lock();
    let r = (|| -> std::io::Result<()> {
        match format {
            ListFormat::Human => {
                for r in engine.rules() {
                    writeln!(out, "{:<44} {}", r.id, r.name)?;
                }
            }
            ListFormat::Json => {
                let v: Vec<_> = engine
                    .rules()
                    .iter()
                    .map(|r| {
                        serde_json::json!({
                            "id": r.id, "name": r.name, "description": r.description,
                            "keywords": r.keywords, "pattern": r.pattern, "entropy": r.entropy,
                            "generic": r.generic, "public": r.public, "origin": r.origin,
                        })
                    })
                    .collect();
                serde_json::to_writer_pretty(&mut out, &v)?;
                writeln!(out)?;
            }
        }
        out.flush()
    })();
    r.context("writing the rule list")?;
    Ok(EXIT_CLEAN)
}

fn check_rules(files: &[PathBuf]) -> Result<i32> {
    let set = if files.is_empty() {
        rules::builtin()
    } else {
        rules::load_files(files)?
    };
    let n = set.len();
    let engine = Engine::new(set)?;
    let failures = rules::check(&engine, |_| true);
    for f in &failures {
        eprintln!("leakhound: {f}");
    }
    if failures.is_empty() {
        println!("{n} rules: every example found, no negative matched");
        Ok(EXIT_CLEAN)
    } else {
        bail!("{} of {n} rules failed their checks", failures.len())
    }
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
