//! Environments: the current process's, another process's (`/proc/PID/environ`), and dumps
//! in the usual shapes (`KEY=VALUE` lines, NUL-separated, `export`/`declare -x` lines, `.env`
//! files with quotes and comments).
//!
//! An environment becomes one blob of `NAME=VALUE` lines, so the variable name is context for
//! the rules (`AWS_SECRET_ACCESS_KEY=...`, `*_TOKEN=...`), and each line maps back to its
//! variable.

use super::{Blob, Data, Provenance};

/// Variables of one environment, in order.
pub struct Environment {
    /// Where it came from: `environment`, `pid 1234`, a file path.
    pub origin: String,
    pub vars: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Environment {
    /// This process's environment.
    pub fn current() -> Environment {
        use std::os::unix::ffi::OsStrExt;
        Environment {
            origin: "environment".into(),
            vars: std::env::vars_os()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect(),
        }
    }

    /// `/proc/PID/environ`.
    pub fn of_pid(pid: u32) -> std::io::Result<Environment> {
        let bytes = std::fs::read(format!("/proc/{pid}/environ"))?;
        Ok(Environment {
            origin: format!("pid {pid}"),
            vars: parse(&bytes),
        })
    }

    /// A dump file in any of the supported shapes.
    pub fn from_file(path: &std::path::Path) -> std::io::Result<Environment> {
        let bytes = std::fs::read(path)?;
        Ok(Environment {
            origin: path.display().to_string(),
            vars: parse(&bytes),
        })
    }

    /// One blob of `NAME=VALUE` lines. Newlines inside values are kept as `\n` escapes so
    /// that line N is always variable N.
    pub fn blob(&self) -> Blob {
        let mut text = Vec::new();
        for (k, v) in &self.vars {
            text.extend_from_slice(k);
            text.push(b'=');
            for &b in v {
                match b {
                    b'\n' => text.extend_from_slice(b"\\n"),
                    b'\r' => text.extend_from_slice(b"\\r"),
                    _ => text.push(b),
                }
            }
            text.push(b'\n');
        }
        Blob {
            provenance: Provenance::Stream {
                name: self.origin.clone(),
            },
            data: Data::Owned(text),
        }
    }

    /// The variable on 1-based `line` of [`Environment::blob`].
    pub fn variable(&self, line: usize) -> Option<String> {
        self.vars
            .get(line.checked_sub(1)?)
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
    }
}

/// Parse an environment dump. NUL-separated when it holds a NUL, else lines; `export ` and
/// `declare -x ` prefixes, comments and blank lines are dropped; one pair of matching quotes
/// around a value is removed.
pub fn parse(bytes: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let sep = if bytes.contains(&0) { 0 } else { b'\n' };
    bytes
        .split(|&b| b == sep)
        .filter_map(|entry| {
            let mut e = entry
                .strip_suffix(b"\r")
                .unwrap_or(entry)
                .trim_ascii_start();
            for prefix in [&b"export "[..], b"declare -x ", b"set "] {
                if let Some(rest) = e.strip_prefix(prefix) {
                    e = rest.trim_ascii_start();
                }
            }
            if e.is_empty() || e[0] == b'#' {
                return None;
            }
            let eq = e.iter().position(|&b| b == b'=')?;
            let name = e[..eq].trim_ascii();
            if name.is_empty()
                || !name
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
            {
                return None;
            }
            let mut value = e[eq + 1..].trim_ascii();
            if value.len() >= 2
                && (value[0] == b'"' || value[0] == b'\'')
                && value[value.len() - 1] == value[0]
            {
                value = &value[1..value.len() - 1];
            }
            Some((name.to_vec(), value.to_vec()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn shapes() {
        let text = b"# comment\nexport A=1\ndeclare -x B=\"two words\"\nC='x=y'\n\nnot a var\n";
        let v = super::parse(text);
        let names: Vec<&[u8]> = v.iter().map(|(k, _)| k.as_slice()).collect();
        assert_eq!(names, [&b"A"[..], b"B", b"C"]);
        assert_eq!(v[1].1, b"two words");
        assert_eq!(v[2].1, b"x=y");
        let nul = super::parse(b"A=1\0B=2\0");
        assert_eq!(nul.len(), 2);
    }
}
