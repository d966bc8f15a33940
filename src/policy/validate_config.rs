//! The config's `[validate]` table: canaries, endpoint overrides, timeouts.

use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidateConfig {
    /// AWS accounts whose keys are canaries (honeytokens), added to the built-in list.
    #[serde(default)]
    pub canary_accounts: Vec<String>,
    /// Regexes over a secret that mark it a canary for every declarative validator: such a
    /// secret is never sent.
    #[serde(default)]
    pub canary_patterns: Vec<String>,
    /// Provider id to base URL (`github = "https://ghe.example.com/api/v3"`): where that
    /// provider's check goes instead of its documented host. Honoured only from a config
    /// named with `--config`, and printed in the report when used.
    #[serde(default)]
    pub endpoints: std::collections::BTreeMap<String, String>,
    /// Per request, in milliseconds (default 10 s).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Retries of a rate-limited, 5xx or failed request (default 3).
    #[serde(default)]
    pub retries: Option<u32>,
}

/// A base URL for `[validate.endpoints]`: `http(s)://HOST[:PORT][/PATH]`, with no user, query
/// or fragment (a secret goes nowhere the operator cannot read at a glance).
fn check_base(base: &str) -> Result<(), String> {
    let rest = base
        .strip_prefix("https://")
        .or_else(|| base.strip_prefix("http://"))
        .ok_or("not an http(s):// URL")?;
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() || host.contains('@') {
        return Err("no host, or a user in it".into());
    }
    if rest.contains(['?', '#']) || base.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("a query, fragment or space in it".into());
    }
    Ok(())
}

impl ValidateConfig {
    /// What is wrong with the table, as a message naming the key.
    pub(super) fn check(&self) -> Result<(), String> {
        for (name, base) in &self.endpoints {
            check_base(base).map_err(|why| format!("validate.endpoints.{name}: {why}"))?;
        }
        for c in &self.canary_patterns {
            regex::Regex::new(c).map_err(|e| {
                let e = crate::rules::regex_error(&e.to_string());
                format!("validate.canary_patterns: {e}")
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_endpoint_is_a_plain_base_url() {
        for ok in ["http://127.0.0.1:8080", "https://ghe.example.com/api/v3"] {
            assert_eq!(super::check_base(ok), Ok(()), "{ok}");
        }
        for bad in [
            "ghe.example.com",
            "ftp://x",
            "https://user@evil",
            "https://x/?a=b",
            "https://",
        ] {
            assert!(super::check_base(bad).is_err(), "{bad}");
        }
    }
}
