//! The commands around scans: `validate REPORT`, `report merge`, `rules`, `completions`, `man`.

use super::settings::{RuleListing, RuleSources};
use super::setup::{checked_engine, config, fingerprint_key, open_output, rule_set};
use super::EXIT_CLEAN;
use crate::deliver::FailOn;
use crate::engine::{Engine, FingerprintKey};
use crate::policy::{Config, Policy};
use crate::rules;
use crate::scan::Scanner;
use anyhow::{bail, Context as _, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `validate REPORT`: see [`crate::deliver::revalidate`].
pub fn validate_report(
    path: &Path,
    output: Option<&Path>,
    show: bool,
    fail_on: FailOn,
    audit_log: Option<&Path>,
) -> Result<i32> {
    let (cfg, _) = config(None, &[])?;
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let mut audit =
        crate::respond::Audit::open(audit_log).with_context(|| "--audit-log".to_string())?;
    let masker = (!show).then(masker).transpose()?;
    let mut opts = crate::validate::Options::from_env();
    opts.key = fingerprint_key(&cfg)?;
    let done = crate::deliver::revalidate(
        &text,
        &rules::builtin(),
        masker.as_ref(),
        &opts,
        &mut audit,
        fail_on,
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "{}:{}: not a leakhound finding ({})",
            path.display(),
            e.line,
            e.why
        )
    })?;
    let mut out = open_output(output)?;
    let w = out.writer();
    for r in &done.lines {
        serde_json::to_writer(&mut *w, r).context("writing the report")?;
        writeln!(w).context("writing the report")?;
    }
    w.flush().context("writing the report")?;
    Ok(done.code)
}

/// What masks an earlier report's context lines: the built-in rules, and no configuration
/// from the working directory (the report may come from anywhere).
fn masker() -> Result<Scanner> {
    Ok(Scanner::new(
        // It masks and fingerprints nothing kept: a key of this process is enough.
        checked_engine(
            rule_set(&Config::default(), &[])?,
            FingerprintKey::ephemeral(),
        )?,
        Policy::default(),
    ))
}

/// The rules whose values are identifiers shown whole (AWS key ids).
fn public_rules() -> std::collections::HashSet<String> {
    rules::builtin()
        .into_iter()
        .filter(|r| r.public)
        .map(|r| r.id)
        .collect()
}

/// `report merge`: see [`crate::report::merge`].
pub fn merge_reports(
    reports: &[PathBuf],
    format: crate::report::Format,
    output: Option<&Path>,
    show: bool,
) -> Result<i32> {
    let mut merger = crate::report::merge::Merger::new(show, public_rules());
    for path in reports {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).with_context(|| name.clone())?;
        // A report's own time: when it was written, for places without a date of their own.
        let seen = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| crate::model::rfc3339(d.as_secs()));
        merger.add(&name, std::io::BufReader::new(file), seen.as_deref())?;
    }
    let mut out = open_output(output)?;
    merger
        .write(format, out.writer())
        .context("writing the merged report")?;
    Ok(if merger.is_empty() {
        EXIT_CLEAN
    } else {
        crate::deliver::EXIT_FINDINGS
    })
}

/// `report merge --shards`: the shards' JSON reports as the one report of the whole run.
pub fn merge_shards(
    reports: &[PathBuf],
    format: crate::report::Format,
    output: Option<&Path>,
    show: bool,
    r: &RuleSources,
) -> Result<i32> {
    if format == crate::report::Format::Human {
        bail!("--shards writes the report of the shards' run: add --format json, jsonl or sarif");
    }
    let mut shards = crate::report::shards::Shards::default();
    for path in reports {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).with_context(|| name.clone())?;
        shards.add(&name, &text)?;
    }
    // Only SARIF describes the rules; no engine is needed for that.
    let rules = if format == crate::report::Format::Sarif {
        let (cfg, _) = config(r.config.as_deref(), &[])?;
        rule_set(&cfg, &r.rule_files)?
    } else {
        Vec::new()
    };
    let masker = (!show).then(masker).transpose()?;
    let public = public_rules();
    let is_public = |r: &str| public.contains(r);
    let context = |c: &str, known: &crate::model::Known| {
        masker
            .as_ref()
            .map_or(c.to_string(), |m| m.mask_text(c, known))
    };
    let redact = crate::report::Redact {
        public: &is_public,
        context: &context,
    };
    let mut out = open_output(output)?;
    let (findings, failed) = shards.write(
        format,
        &rules,
        masker.is_some().then_some(&redact),
        out.writer(),
    )?;
    let judged = (0..findings).map(|_| (None, None));
    Ok(crate::deliver::exit_code(FailOn::Any, judged, failed))
}

pub fn list_rules(format: RuleListing, extra: &[PathBuf]) -> Result<i32> {
    // Listing rules fingerprints nothing.
    let engine = checked_engine(
        rule_set(&Config::default(), extra)?,
        FingerprintKey::ephemeral(),
    )?;
    let mut out = std::io::stdout().lock();
    let r = (|| -> std::io::Result<()> {
        match format {
            RuleListing::Human => {
                for r in engine.rules() {
                    writeln!(out, "{:<44} {}", r.id, r.name)?;
                }
            }
            RuleListing::Markdown => {
                let mut file = "";
                for r in engine.rules() {
                    let from = r.origin.rsplit('/').next().unwrap_or(&r.origin);
                    if from != file {
                        file = from;
                        writeln!(out, "\n### `{file}`\n")?;
                        writeln!(out, "| id | name | confidence | keywords |")?;
                        writeln!(out, "|---|---|---|---|")?;
                    }
                    let keywords: Vec<String> =
                        r.keywords.iter().map(|k| format!("`{k}`")).collect();
                    writeln!(
                        out,
                        "| `{}` | {} | {} | {} |",
                        r.id,
                        r.name.replace('|', "\\|"),
                        r.confidence().as_str(),
                        keywords.join(" ").replace('|', "\\|")
                    )?;
                }
            }
            RuleListing::Json => {
                let v: Vec<_> = engine
                    .rules()
                    .iter()
                    .map(|r| {
                        serde_json::json!({
                            "id": r.id, "name": r.name, "description": r.description,
                            "keywords": r.keywords, "pattern": r.pattern, "entropy": r.entropy,
                            "generic": r.generic, "public": r.public, "origin": r.origin,
                            "validator": r.validator.as_ref().map(|v| serde_json::json!({
                                "name": v.name,
                                "kind": crate::validate::validator(&v.name)
                                    .map_or("unknown", |x| x.kind()),
                                "part": v.part,
                            })),
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

pub fn check_rules(files: &[PathBuf]) -> Result<i32> {
    // Files are checked beside the built-in set, as a scan that loads them checks them: a
    // built-in rule that takes an example's secret first fails the example here too.
    let loaded = rules::load_set(&[files], &[])?;
    for n in &loaded.notes {
        eprintln!("leakhound: note: {n}");
    }
    crate::validate::http::register(loaded.validators);
    let set = loaded.rules;
    let n = if files.is_empty() {
        set.len()
    } else {
        set.iter().filter(|r| !rules::is_builtin(r)).count()
    };
    let unknown = crate::validate::check_rules(&set);
    // Checking examples keeps no fingerprint.
    let engine = Engine::new(set, FingerprintKey::ephemeral())?;
    let only_files = !files.is_empty();
    let failures: Vec<String> =
        crate::engine::check(&engine, |r| !only_files || !rules::is_builtin(r))
            .iter()
            .map(|f| f.to_string())
            .chain(unknown)
            .collect();
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

/// `rules import`: a gitleaks config as a leakhound rule file, checked like any other.
pub fn import_rules(file: &Path, output: Option<&Path>) -> Result<i32> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {name}"))?;
    if !rules::gitleaks::detect(&text) {
        bail!(
            "{name}: not a gitleaks config (no [[rules]] with `regex`, no [extend] or [allowlist])"
        );
    }
    let converted = rules::gitleaks::convert(&name, &text)?;
    let mut set = rules::builtin();
    set.extend(converted.rules.iter().cloned());
    checked_engine(set, FingerprintKey::ephemeral())?;
    let toml = rules::gitleaks::to_toml(&converted).context("writing the rules as TOML")?;
    match output {
        Some(p) => {
            std::fs::write(p, toml).with_context(|| format!("cannot write {}", p.display()))?
        }
        None => std::io::stdout()
            .lock()
            .write_all(toml.as_bytes())
            .context("writing the rules")?,
    }
    eprintln!(
        "leakhound: {} rule(s) converted from {name}",
        converted.rules.len()
    );
    Ok(EXIT_CLEAN)
}

/// A completion script for `shell`, generated from the clap definition.
pub fn completions(shell: clap_complete::Shell) -> Result<i32> {
    let mut cmd = super::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut cmd, "leakhound", &mut out);
    out.flush().context("writing the completion script")?;
    Ok(EXIT_CLEAN)
}

/// The manual page (roff), generated from the clap definition: the command, then each
/// subcommand with its options.
pub fn man() -> Result<i32> {
    let cmd = super::command();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut page)
        .context("rendering the manual page")?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let about = sub.get_long_about().or(sub.get_about());
        let about = about.map(|a| a.to_string()).unwrap_or_default();
        // roff: a leading dot or quote would be read as a request.
        let about = about.replace('\\', "\\\\").replace("\n.", "\n\\&.");
        writeln!(
            page,
            ".SH \"LEAKHOUND {}\"\n{about}",
            sub.get_name().to_uppercase()
        )
        .context("rendering the manual page")?;
        clap_mangen::Man::new(sub.clone())
            .render_options_section(&mut page)
            .context("rendering the manual page")?;
    }
    let mut out = std::io::stdout().lock();
    out.write_all(&page)
        .and_then(|_| out.flush())
        .context("writing the manual page")?;
    Ok(EXIT_CLEAN)
}
