//! `agents install|uninstall|status|scrub` and `scrub`: flags in, library calls out, one line
//! per thing done.

use super::settings::{AgentsSettings, MaskerRules, ScrubSettings};
use super::{EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS};
use crate::agents::{self, Agent, Env, Plan, Scope};
use crate::report::printable;
use crate::scrub::{self, FileOutcome};
use anyhow::{Context as _, Result};
use std::io::Write;
use std::path::PathBuf;

fn env() -> Result<Env> {
    Env::from_process().context("finding the home and current directories")
}

fn shown(p: &std::path::Path) -> String {
    printable(&p.display().to_string())
}

/// The agents named, else those `present` says are here.
fn chosen(named: &[Agent], present: impl Fn(Agent) -> bool) -> Vec<Agent> {
    if named.is_empty() {
        Agent::ALL.into_iter().filter(|a| present(*a)).collect()
    } else {
        named.to_vec()
    }
}

fn command_for(agent: Agent, server: bool) -> Result<String> {
    let exe = std::env::current_exe().context("finding leakhound's own path")?;
    let command = agents::hook_command(&exe, agent);
    Ok(if server {
        format!("{command} --server")
    } else {
        command
    })
}

/// A diff for the terminal: the user's settings may hold keys of their own (an `env` block),
/// and the context lines would show them. Masked by value too: a secret the file names
/// outside the lines the diff shows (`"DB_PASSWORD": …`) is masked where a shown line repeats
/// it bare (`"args": ["--dsn-pass", …]`).
fn masked_diff(plan: &Plan) -> Result<String> {
    let engine = MaskerRules::built_in().engine()?;
    let masking = crate::filter::Masking::new(&engine);
    for file in [&plan.before, &plan.after].into_iter().flatten() {
        masking.learn(file.as_bytes());
    }
    let d = plan.diff();
    Ok(String::from_utf8_lossy(&masking.text("diff", d.as_bytes()).bytes).into_owned())
}

pub fn install(a: &AgentsSettings) -> Result<i32> {
    let env = env()?;
    let scope = a.scope;
    let list = chosen(&a.agents, |ag| ag.detected(scope, &env));
    if list.is_empty() {
        eprintln!(
            "leakhound: no agent folder found at {} scope; name one with --agent",
            scope.name()
        );
        return Ok(EXIT_CLEAN);
    }
    let code = apply(
        a,
        &list,
        |agent| {
            agents::plan_install(agent, scope, &env, &command_for(agent, a.server)?)
                .map_err(Into::into)
        },
        "already installed in",
        |agent, plan| {
            let events: Vec<&str> = agent.installs().map(|e| e.name).collect();
            let backup = if plan.before.is_some() && plan.backup_path().exists() {
                format!(" (backup: {})", shown(&plan.backup_path()))
            } else {
                String::new()
            };
            eprintln!(
                "leakhound: {}: installed {} in {}{backup}",
                agent.name(),
                events.join(", "),
                shown(&plan.path)
            );
        },
    )?;
    if a.dry_run {
        return Ok(code);
    }
    let mut code = code;
    let codex_hooks = Agent::Codex.settings_file(scope, &env);
    if list.contains(&Agent::Codex) && codex_hooks.is_file() {
        code = code.max(trust_codex(&env, &codex_hooks));
    }
    notes(&env)?;
    Ok(code)
}

/// Have Codex trust the hooks just installed (it skips untrusted ones without a word); when
/// that cannot be done, say that Codex is not protected and exactly what to run.
fn trust_codex(env: &Env, hooks_json: &std::path::Path) -> i32 {
    let result = match agents::codex::find_codex() {
        Some(codex) => agents::codex::trust(&codex, env, hooks_json),
        None => Err(agents::codex::TrustError::NoCodex),
    };
    match result {
        Ok(t) => {
            eprintln!(
                "leakhound: codex: Codex trusts leakhound's {} hooks (their hashes, from `codex \
                 app-server`, are in {})",
                t.hooks,
                shown(&env.codex_home().join("config.toml"))
            );
            EXIT_CLEAN
        }
        Err(e) => {
            eprintln!(
                "leakhound: error: codex: NOT PROTECTING: the hooks are written but Codex has not \
                 trusted them, and Codex skips an untrusted hook without a word (`codex exec` \
                 too). {}. Put `codex` on PATH and run `leakhound agents install --agent codex` \
                 again, or run `codex`, open /hooks and trust leakhound's hooks; `leakhound \
                 agents status` says when it is done",
                printable(&e.to_string())
            );
            EXIT_ERROR
        }
    }
}

pub fn uninstall(a: &AgentsSettings) -> Result<i32> {
    let env = env()?;
    let scope = a.scope;
    let list = chosen(&a.agents, |ag| {
        ag.detected(scope, &env) || ag.settings_file(scope, &env).exists()
    });
    // Codex's trust in the hooks, keyed by their places in hooks.json: read before they go.
    let codex_hooks = Agent::Codex.settings_file(scope, &env);
    let codex_keys = match list.contains(&Agent::Codex) {
        true => std::fs::read_to_string(&codex_hooks)
            .map(|t| agents::codex::keys_in(&codex_hooks, &t))
            .unwrap_or_default(),
        false => Vec::new(),
    };
    let code = apply(
        a,
        &list,
        |agent| {
            // Installing with or without --server: either may have made the file.
            let commands = [command_for(agent, false)?, command_for(agent, true)?];
            Ok(agents::plan_uninstall(agent, scope, &env, &commands)?)
        },
        "not installed in",
        |agent, plan| {
            let what = match (&plan.after, plan.backup_path().exists()) {
                (None, _) => "removed it (install had created it)".to_string(),
                (Some(_), true) => format!(
                    "removed leakhound's hooks; the file changed since install, so the backup {} is kept",
                    shown(&plan.backup_path())
                ),
                (Some(_), false) => "removed leakhound's hooks".to_string(),
            };
            eprintln!("leakhound: {}: {}: {what}", agent.name(), shown(&plan.path));
        },
    )?;
    if !a.dry_run && !codex_keys.is_empty() {
        untrust_codex(&env, &codex_keys);
    }
    Ok(code)
}

/// Take the trust entries of leakhound's former Codex hooks out of config.toml.
fn untrust_codex(env: &Env, keys: &[String]) {
    let config = shown(&env.codex_home().join("config.toml"));
    match agents::codex::untrust(env, keys) {
        Ok(agents::codex::Untrusted::Unchanged) => {}
        Ok(agents::codex::Untrusted::Rewritten) => {
            eprintln!("leakhound: codex: {config}: removed the trust of leakhound's hooks")
        }
        Ok(agents::codex::Untrusted::Removed) => eprintln!(
            "leakhound: codex: {config}: removed it (it held only the trust of leakhound's hooks)"
        ),
        Err(e) => eprintln!(
            "leakhound: warning: codex: could not remove the trust of leakhound's hooks: {}",
            printable(&e.to_string())
        ),
    }
}

/// Plan each agent's change, then show it (`--dry-run`) or make it and say what was done; an
/// agent whose file cannot be changed is an error of its own and the others go on.
fn apply(
    a: &AgentsSettings,
    list: &[Agent],
    plan_for: impl Fn(Agent) -> Result<Plan>,
    unchanged: &str,
    done: impl Fn(Agent, &Plan),
) -> Result<i32> {
    let mut errors = 0;
    let mut out = std::io::stdout().lock();
    let failed = |agent: Agent, e: &dyn std::fmt::Display| {
        eprintln!(
            "leakhound: error: {}: {}",
            agent.name(),
            printable(&e.to_string())
        );
    };
    for &agent in list {
        let plan = match plan_for(agent) {
            Ok(p) => p,
            Err(e) => {
                failed(agent, &e);
                errors += 1;
                continue;
            }
        };
        if !plan.changes() {
            eprintln!(
                "leakhound: {}: {unchanged} {}",
                agent.name(),
                shown(&plan.path)
            );
            continue;
        }
        if a.dry_run {
            out.write_all(masked_diff(&plan)?.as_bytes())?;
            continue;
        }
        if let Err(e) = plan.apply() {
            failed(agent, &e);
            errors += 1;
            continue;
        }
        done(agent, &plan);
    }
    Ok(if errors > 0 { EXIT_ERROR } else { EXIT_CLEAN })
}

/// Why Codex does not run leakhound's hooks in `hooks_json`, if it does not: Codex's own
/// answer when `codex` is on PATH, else whether config.toml holds a hash for each of them.
fn codex_untrusted(env: &Env, hooks_json: &std::path::Path) -> Option<String> {
    let Some(codex) = agents::codex::find_codex() else {
        return (!agents::codex::config_holds_hashes(env, hooks_json)).then(|| {
            "config.toml holds no trusted hash for leakhound's hooks (`codex` is not on PATH \
             to ask)"
                .to_string()
        });
    };
    match agents::codex::status(&codex, env, hooks_json) {
        Ok(t) if t.complete() => None,
        Ok(t) => Some(format!(
            "Codex trusts {} of leakhound's {} hooks",
            t.trusted, t.hooks
        )),
        Err(e) => Some(format!(
            "could not ask Codex: {}",
            printable(&e.to_string())
        )),
    }
}

/// Agents that run each other's hooks, when leakhound is installed in both.
fn notes(env: &Env) -> Result<()> {
    let states: Vec<_> = Agent::ALL
        .into_iter()
        .flat_map(|a| [Scope::User, Scope::Project].map(|s| agents::status(a, s, env)))
        .collect();
    for n in agents::overlaps(&states) {
        eprintln!("leakhound: note: {n}");
    }
    Ok(())
}

pub fn status(named: &[Agent], scope: Option<Scope>) -> Result<i32> {
    let env = env()?;
    let scopes: Vec<Scope> = match scope {
        Some(s) => vec![s],
        None => vec![Scope::User, Scope::Project],
    };
    let list = chosen(named, |_| true);
    let all: Vec<_> = Agent::ALL
        .into_iter()
        .flat_map(|a| [Scope::User, Scope::Project].map(|s| agents::status(a, s, &env)))
        .collect();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<8} {:<8} {:<7} {:<58} FILE",
        "AGENT", "SCOPE", "FOLDER", "HOOKS"
    )?;
    for st in all
        .iter()
        .filter(|s| list.contains(&s.agent) && scopes.contains(&s.scope))
    {
        let hooks = if let Some(e) = &st.error {
            format!("unreadable: {e}")
        } else if st.installed.is_empty() {
            "not installed".to_string()
        } else if st.missing.is_empty() {
            format!("installed: {}", st.installed.join(" "))
        } else {
            format!(
                "partial: {} (missing {})",
                st.installed.join(" "),
                st.missing.join(" ")
            )
        };
        writeln!(
            out,
            "{:<8} {:<8} {:<7} {:<58} {}",
            st.agent.name(),
            st.scope.name(),
            if st.detected { "found" } else { "-" },
            printable(&hooks),
            shown(&st.path)
        )?;
        if st.agent == Agent::Codex && !st.installed.is_empty() {
            if let Some(why) = codex_untrusted(&env, &st.path) {
                writeln!(
                    out,
                    "  warning: codex: NOT PROTECTING: {why}; Codex skips an untrusted hook \
                     without a word. Run `leakhound agents install --agent codex` with `codex` \
                     on PATH, or run `codex`, then /hooks, and trust leakhound's hooks"
                )?;
            }
        }
        for c in &st.stale {
            writeln!(
                out,
                "  warning: {} runs a program that no longer exists: {}; run `leakhound agents install` again",
                st.agent.name(),
                printable(c)
            )?;
        }
    }
    for n in agents::overlaps(&all) {
        writeln!(out, "note: {n}")?;
    }
    Ok(EXIT_CLEAN)
}

pub fn scrub_agents(named: &[Agent], opts: &ScrubSettings) -> Result<i32> {
    let env = env()?;
    let list = chosen(named, |_| true);
    let paths: Vec<PathBuf> = list
        .iter()
        .flat_map(|a| a.transcripts(&env))
        .filter(|p| p.exists())
        .collect();
    if paths.is_empty() {
        eprintln!(
            "leakhound: no agent transcripts found under {}",
            shown(&env.home)
        );
        return Ok(EXIT_CLEAN);
    }
    for p in &paths {
        super::setup::say(&format!("scrubbing {}", shown(p)));
    }
    scrub(&paths, opts)
}

pub fn scrub(paths: &[PathBuf], opts: &ScrubSettings) -> Result<i32> {
    let engine = opts.rules.engine()?;
    let options = &opts.options;
    let (mut scanned, mut changed, mut skipped, mut errors, mut masked) = (0, 0, 0, 0, 0);
    let mut out = std::io::stdout().lock();
    let mut result = Ok(());
    scrub::files(paths, |entry| {
        let path = match entry {
            Ok(p) => p,
            Err((p, msg)) => {
                eprintln!("leakhound: error: {}: {}", shown(&p), printable(&msg));
                errors += 1;
                return;
            }
        };
        match scrub::scrub_file(&engine, &path, options) {
            Ok(FileOutcome::Clean) => scanned += 1,
            Ok(FileOutcome::Changed(s)) => {
                scanned += 1;
                changed += 1;
                masked += s.changes.len();
                for n in &s.text_lines {
                    eprintln!("leakhound: {}:{n}: not JSON; masked as text", shown(&path));
                }
                if s.as_text {
                    eprintln!("leakhound: {}: not JSON; masked as text", shown(&path));
                }
                for c in &s.changes {
                    if result.is_ok() {
                        result = writeln!(out, "{}:{}: {}", shown(&path), c.line, c.rule_id);
                    }
                }
            }
            Ok(FileOutcome::Database(rows)) => {
                scanned += 1;
                if !rows.changes.is_empty() {
                    changed += 1;
                }
                masked += rows.changes.len();
                for (table, c) in &rows.changes {
                    if result.is_ok() {
                        result = writeln!(
                            out,
                            "{}: table {} row {}: {}",
                            shown(&path),
                            printable(table),
                            c.line,
                            c.rule_id
                        );
                    }
                }
                for e in &rows.errors {
                    errors += 1;
                    eprintln!("leakhound: error: {}: {}", shown(&path), printable(e));
                }
            }
            Ok(FileOutcome::Skipped(why)) => {
                skipped += 1;
                super::setup::say(&format!("skipped {}: {why}", shown(&path)));
            }
            Err(e) => {
                errors += 1;
                eprintln!("leakhound: error: {}", printable(&e.to_string()));
            }
        }
    });
    result?;
    let verb = if options.dry_run {
        "would change"
    } else {
        "changed"
    };
    eprintln!(
        "leakhound: scrub: {scanned} file(s) scanned, {changed} {verb} ({masked} secret(s)), {skipped} skipped, {errors} error(s)"
    );
    if scanned == 0 && skipped > 0 && errors == 0 {
        // "0 changed" would read as "clean": say that nothing was looked at. Still exit 0:
        // skipping a file a live session may be writing is the safe choice, not a failure.
        eprintln!(
            "leakhound: scrub: nothing was scrubbed: every file ({skipped}) was skipped, \
             so none of them is known to be clean (see why above; --force scrubs recent files)"
        );
    }
    Ok(if errors > 0 {
        EXIT_ERROR
    } else if changed > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    })
}
