//! The rule set a run uses, assembled in one place: the built-in rules, then each group of
//! the operator's rule files (leakhound rule files, or gitleaks configs with their global
//! allowlists and disabled rules), less the rules a config disables. The CLI, `rules check`
//! and the fuzz targets all load through [`load_set`].

use super::{builtin, disable, load_files, validator::HttpSpec, Rule, RuleError};
use std::path::PathBuf;

/// A loaded rule set, and what came with it.
#[derive(Debug)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    /// The declarative validators the operator's files define, for the validator registry
    /// (rules know nothing of validation: the caller registers them).
    pub validators: Vec<HttpSpec>,
    /// How gitleaks configs were carried over, for the operator.
    pub notes: Vec<String>,
}

/// Why a rule set could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    #[error(transparent)]
    Load(#[from] RuleError),
    #[error("a gitleaks config's allowlist targetRules or disabledRules: {0}")]
    Targets(String),
    #[error("rules.disable: {0}")]
    Disable(String),
}

/// A glob's error without the glob it quotes: what a rule id's glob is may be anything an
/// operator typed, and no message shows input.
pub fn glob_error(e: &globset::Error) -> String {
    e.kind().to_string()
}

/// The built-in rules with each group of `files` merged in turn (a group's global allowlists
/// reach the rules loaded so far), less the rules `disabled` names (globs over rule ids).
pub fn load_set(files: &[&[PathBuf]], disabled: &[String]) -> Result<RuleSet, SetError> {
    load_set_from(builtin(), files, disabled)
}

/// [`load_set`] over `base` in place of the built-in rules (a hook takes them without their
/// examples: `rules::builtin_without_examples`).
pub fn load_set_from(
    base: Vec<Rule>,
    files: &[&[PathBuf]],
    disabled: &[String],
) -> Result<RuleSet, SetError> {
    let mut out = RuleSet {
        rules: base,
        validators: Vec::new(),
        notes: Vec::new(),
    };
    for group in files {
        let loaded = load_files(group)?;
        out.notes.extend(loaded.notes.iter().cloned());
        out.validators.extend(loaded.validators.iter().cloned());
        loaded
            .merge_into(&mut out.rules)
            .map_err(|e| SetError::Targets(glob_error(&e)))?;
    }
    disable(&mut out.rules, disabled).map_err(|e| SetError::Disable(glob_error(&e)))?;
    Ok(out)
}
