//! The command line: flags parsed once ([`args`]), turned into library calls by one module
//! per kind of command. The library knows nothing of flags; nothing here decides what is a
//! secret, how a finding is written or what the exit code is.

mod agents;
mod args;
mod hook;
mod kernel;
mod mcp;
mod scan;
mod settings;
mod setup;
mod stream;
mod tools;

use args::{AgentsCommand, Cli, Command, KernelCommand, ReportCommand, RulesCommand};
use clap::Parser;

pub use crate::deliver::{EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS};

/// What `--version` prints: the crate version and the embedded rule set's.
pub const VERSION: &str = crate::rules::VERSION;

/// The clap definition, for completions and the manual page.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
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
    setup::set_quiet(cli.quiet);
    let r = run(cli.command);
    match r {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return EXIT_CLEAN;
            }
            eprintln!("leakhound: error: {}", error_text(&e));
            EXIT_ERROR
        }
    }
}

/// An error for the terminal: control characters escaped (a file name cannot move the
/// cursor), but the lines of a multi-line message (a regex error's caret under the pattern)
/// kept as lines rather than shown as a literal `\n`.
fn error_text(e: &anyhow::Error) -> String {
    format!("{e:#}")
        .split('\n')
        .map(crate::report::printable)
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Each command's flags resolved once into its settings (`settings`), then its body run on
/// them: no command reads a clap struct.
fn run(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Scan(a) => scan::scan(settings::scan(a)?),
        Command::Git(a) => scan::git(settings::git(a)?),
        Command::Image(a) => scan::image(settings::image(a)?),
        Command::Env(a) => scan::env(settings::env(a)?),
        Command::RuntimeAudit(a) => scan::runtime_audit(settings::runtime_audit(a)),
        Command::InstallHook { repo, force } => scan::install_hook(repo.as_deref(), force),
        Command::Filter(f) => stream::filter(settings::filter(f, None)),
        Command::Run { filter: f, cmd } => stream::filter(settings::filter(f, Some(cmd))),
        Command::McpProxy(a) => mcp::proxy(settings::mcp(a)),
        Command::RedactNotebook {
            input,
            output,
            rules,
        } => stream::redact_notebook(&input, output.as_deref(), &settings::masker(rules)),
        Command::Scrub(a) => agents::scrub(&a.paths, &settings::scrub(a.opts)),
        Command::Agents(AgentsCommand::Install(a)) => agents::install(&settings::agents_install(a)),
        Command::Agents(AgentsCommand::Uninstall(a)) => {
            agents::uninstall(&settings::agents_change(a))
        }
        Command::Agents(AgentsCommand::Status { agents: a, scope }) => {
            agents::status(&settings::agents(a), settings::scope(scope))
        }
        Command::Agents(AgentsCommand::Scrub { agents: a, opts }) => {
            agents::scrub_agents(&settings::agents(a), &settings::scrub(opts))
        }
        Command::Kernel(KernelCommand::Install(a)) => kernel::install(&settings::kernel_install(a)),
        Command::Kernel(KernelCommand::Uninstall {
            name,
            place,
            python,
        }) => kernel::uninstall(&name, &settings::place(place), &python),
        Command::Kernel(KernelCommand::Status { place, python }) => {
            kernel::status(&settings::place(place), &python)
        }
        Command::Kernel(KernelCommand::Mask { rules }) => kernel::mask(&settings::masker(rules)),
        Command::Validate {
            report,
            output,
            show_secrets,
            fail_on,
            audit_log,
        } => tools::validate_report(
            &report,
            output.as_deref(),
            show_secrets,
            fail_on.into(),
            audit_log.as_deref(),
        ),
        Command::Hook(h) => hook::hook(&settings::hook(h)),
        Command::Rules(RulesCommand::List { format, rule_files }) => {
            tools::list_rules(settings::rule_listing(format), &rule_files)
        }
        Command::Rules(RulesCommand::Check { files }) => tools::check_rules(&files),
        Command::Rules(RulesCommand::Import { file, output }) => {
            tools::import_rules(&file, output.as_deref())
        }
        Command::Report(ReportCommand::Merge {
            reports,
            format,
            output,
            show_secrets,
            shards: true,
            rules,
        }) => tools::merge_shards(
            &reports,
            format.into(),
            output.as_deref(),
            show_secrets,
            &rules.into(),
        ),
        Command::Report(ReportCommand::Merge {
            reports,
            format,
            output,
            show_secrets,
            ..
        }) => tools::merge_reports(&reports, format.into(), output.as_deref(), show_secrets),
        Command::Completions { shell } => tools::completions(shell),
        Command::Man => tools::man(),
    }
}

/// For `leakhound run CMD ARGS` or `leakhound mcp-proxy CMD ARGS` (no `--`), which clap
/// rejects as an unexpected argument: a hint naming the fix, with the user's own command.
fn run_without_dashes(e: &clap::Error) -> Option<String> {
    use clap::error::ErrorKind;
    if !matches!(
        e.kind(),
        ErrorKind::UnknownArgument | ErrorKind::MissingRequiredArgument
    ) {
        return None;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let at = args.iter().position(|a| a == "run" || a == "mcp-proxy")?;
    let sub = args[at].clone();
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
        "hint: put `--` before the command to run: leakhound {sub} [OPTIONS] -- {shown}"
    ))
}
