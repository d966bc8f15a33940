//! Environments: the current process's, another process's (`/proc/PID/environ`), and dumps
//! in the usual shapes (`KEY=VALUE` lines, NUL-separated, `export`/`declare -x` lines, `.env`
//! files with quotes and comments).
//!
//! An environment becomes one blob of `NAME=VALUE` lines, so the variable name is context for
//! the rules (`AWS_SECRET_ACCESS_KEY=...`, `*_TOKEN=...`), and each line maps back to its
//! variable.

use super::{Blob, Provenance};

/// Variables of one environment, in order.
pub struct Environment {
    /// Where it came from: `environment`, `pid 1234`, a file path.
    pub origin: String,
    pub vars: Vec<(Vec<u8>, Vec<u8>)>,
    /// For a dump file: the file's line of each variable, and the file's size, so findings
    /// and totals speak of the file, not of the `NAME=VALUE` text it became.
    pub file: Option<(Vec<usize>, u64)>,
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
            file: None,
        }
    }

    /// `/proc/PID/environ`.
    pub fn of_pid(pid: u32) -> std::io::Result<Environment> {
        let path = format!("/proc/{pid}/environ");
        let bytes = read_bounded(std::fs::File::open(&path)?)?;
        Ok(Environment {
            origin: format!("pid {pid}"),
            vars: parse(&bytes),
            file: None,
        })
    }

    /// A dump file in any of the supported shapes. A FIFO or pipe is read with a time
    /// bound, a device is refused, and anything larger than [`MAX_DUMP`] is refused: an
    /// environment is small, and parsing one costs a few times its size.
    pub fn from_file(path: &std::path::Path) -> std::io::Result<Environment> {
        use super::fs::{open_checked, Opened};
        let bytes = match open_checked(path, true).map_err(std::io::Error::other)? {
            Opened::File(f, _) => read_bounded(f)?,
            Opened::Pipe(p) => read_bounded(p)?,
        };
        Ok(Environment::from_dump(path.display().to_string(), &bytes))
    }

    /// A dump's bytes, read from `origin`.
    pub fn from_dump(origin: String, bytes: &[u8]) -> Environment {
        let vars = parse(bytes);
        let lines = file_lines(bytes, &vars);
        Environment {
            origin,
            vars,
            file: Some((lines, bytes.len() as u64)),
        }
    }

    /// One blob of `NAME=VALUE` lines. Newlines inside values, and names (a JSON dump's
    /// `"name"` may hold one), are kept as `\n` escapes so that line N is always variable N.
    pub fn blob(&self) -> Blob {
        fn escaped(text: &mut Vec<u8>, s: &[u8]) {
            for &b in s {
                match b {
                    b'\n' => text.extend_from_slice(b"\\n"),
                    b'\r' => text.extend_from_slice(b"\\r"),
                    _ => text.push(b),
                }
            }
        }
        let mut text = Vec::new();
        for (k, v) in &self.vars {
            escaped(&mut text, k);
            text.push(b'=');
            escaped(&mut text, v);
            text.push(b'\n');
        }
        Blob {
            provenance: Provenance::Stream {
                name: self.origin.clone(),
            },
            data: text,
        }
    }

    /// Where 1-based `line` of [`Environment::blob`] is in the dump file (the same line for
    /// an environment that is not a file).
    pub fn file_line(&self, line: usize) -> usize {
        match &self.file {
            Some((lines, _)) => lines.get(line.wrapping_sub(1)).copied().unwrap_or(line),
            None => line,
        }
    }

    /// The names that are not UTF-8, as reported (each byte that is not replaced by U+FFFD),
    /// so the report can say its names are not quite the environment's own.
    pub fn unreadable_names(&self) -> Vec<String> {
        self.vars
            .iter()
            .filter(|(k, _)| std::str::from_utf8(k).is_err())
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
            .collect()
    }

    /// The variable on 1-based `line` of [`Environment::blob`].
    pub fn variable(&self, line: usize) -> Option<String> {
        self.vars
            .get(line.checked_sub(1)?)
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
    }
}

/// The 1-based line of `bytes` where each variable is: where its value is first found after
/// the previous variable (else its name; else the previous variable's line). The parsers
/// read many shapes (JSON, YAML, tables, UTF-16); finding each value again in order maps
/// them all back without each parser counting lines. In a NUL-separated dump a line is a
/// record, as `scan` counts them.
fn file_lines(bytes: &[u8], vars: &Vars) -> Vec<usize> {
    let decoded = crate::decode::utf16_text(bytes);
    let text = decoded.as_deref().unwrap_or(bytes);
    // The separator `assignments` split on.
    let sep = if text.contains(&0) { 0 } else { b'\n' };
    let mut at = 0;
    let mut line = 1;
    let mut out = Vec::with_capacity(vars.len());
    for (k, v) in vars {
        let first_line = v.split(|&b| b == b'\n').next().unwrap_or(v);
        let found = [first_line, k.as_slice()]
            .into_iter()
            .filter(|n| !n.is_empty())
            .find_map(|n| memchr::memmem::find(&text[at..], n));
        if let Some(p) = found {
            line += memchr::memchr_iter(sep, &text[at..at + p]).count();
            at += p;
        }
        out.push(line);
    }
    out
}

/// Largest environment dump read (a process's environment is limited to a few MiB).
pub const MAX_DUMP: u64 = 16 << 20;

/// All of `r`, or an error when it holds more than [`MAX_DUMP`] bytes.
fn read_bounded(r: impl std::io::Read) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    r.take(MAX_DUMP + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_DUMP {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: not an environment dump (use `leakhound scan` for large files)",
            MAX_DUMP >> 20
        )));
    }
    Ok(bytes)
}

/// Whether a file name says it holds an environment: `.env`, `*.env`, `.env.*`, `environ`.
/// The name is what follows the last `/` or `!` (an archive entry: `a.tar.gz!environ`).
pub fn is_env_file(path: &str) -> bool {
    let name = path.rsplit(['/', '!']).next().unwrap_or(path);
    name == ".env" || name.ends_with(".env") || name.starts_with(".env.") || name == "environ"
}

/// Whether one record of a NUL-separated capture is a variable: `NAME=value`, the name a
/// letter or `_` then letters, digits, `_`, `.` or `-` (as [`parse`] reads names). A command
/// line's arguments (`-Dkey=value`, `--opt=value`) and paths are not.
pub fn is_assignment(record: &[u8]) -> bool {
    let Some(eq) = record.iter().position(|&b| b == b'=') else {
        return false;
    };
    let name = &record[..eq];
    name.first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_' || !b.is_ascii())
        && name.iter().all(|&b| name_byte(b))
}

/// A byte a variable's name may hold. A name is bytes to the kernel: one that is not
/// ASCII (or not UTF-8) is still a variable, read and reported lossily, never dropped with
/// its value unscanned (#16).
fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-') || !b.is_ascii()
}

/// The variable assigned on the line of `hay` that holds byte `at` (`NAME=...`, with an
/// optional `export ` or `declare -x ` prefix).
pub fn variable_at(hay: &[u8], at: usize) -> Option<String> {
    let start = hay[..at]
        .iter()
        .rposition(|&b| b == b'\n' || b == 0)
        .map_or(0, |p| p + 1);
    assignments(&hay[start..at])
        .into_iter()
        .next()
        .map(|(k, _)| String::from_utf8_lossy(&k).into_owned())
}

type Vars = Vec<(Vec<u8>, Vec<u8>)>;

/// Parse an environment dump in any of the shapes below; UTF-16 (PowerShell's default) is
/// decoded first.
/// - JSON: `docker inspect` (`"Env": ["K=V", ...]`) and Kubernetes `env: [{name, value}]`;
/// - YAML Kubernetes `env:` lists (`- name: K` then `value: V`);
/// - PowerShell `Get-ChildItem Env:` tables (`Name  Value` header);
/// - `KEY=VALUE` lines or NUL-separated entries, with `export `/`declare -x ` prefixes,
///   comments, and quotes around values (`.env` files).
pub fn parse(bytes: &[u8]) -> Vars {
    let decoded = crate::decode::utf16_text(bytes);
    let bytes = decoded.as_deref().unwrap_or(bytes);
    let t = bytes.trim_ascii_start();
    if t.starts_with(b"{") || t.starts_with(b"[") {
        if let Some(v) = json_env(bytes) {
            return v;
        }
    }
    let text = String::from_utf8_lossy(bytes);
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if first.split_whitespace().collect::<Vec<_>>() == ["Name", "Value"] {
        return powershell_table(&text);
    }
    let yaml = yaml_env(&text);
    if !yaml.is_empty() {
        return yaml;
    }
    assignments(bytes)
}

/// `docker inspect` and Kubernetes JSON: `K=V` strings under an `Env`/`env` key, and
/// `{"name": K, "value": V}` objects in an `env` list.
fn json_env(doc: &[u8]) -> Option<Vars> {
    use crate::decode::json::{strings, unescape, Step};
    let mut out = Vec::new();
    let mut names: std::collections::HashMap<Vec<Step>, Vec<u8>> = Default::default();
    let mut values: Vec<(Vec<Step>, Vec<u8>)> = Vec::new();
    for s in strings(doc)? {
        let text = unescape(&doc[s.start..s.end], s.start).bytes;
        let under_env = s
            .path
            .iter()
            .any(|p| matches!(p, Step::Key(k) if k.eq_ignore_ascii_case("env")));
        if !under_env {
            continue;
        }
        match s.path.last() {
            Some(Step::Index(_)) => out.extend(assignments(&text)),
            Some(Step::Key(k)) if k == "name" => {
                names.insert(s.path[..s.path.len() - 1].to_vec(), text);
            }
            Some(Step::Key(k)) if k == "value" => {
                values.push((s.path[..s.path.len() - 1].to_vec(), text))
            }
            _ => {}
        }
    }
    for (obj, value) in values {
        if let Some(name) = names.get(&obj) {
            out.push((name.clone(), value));
        }
    }
    Some(out)
}

/// Kubernetes YAML `env:` entries: `- name: K` followed by `value: V`.
fn yaml_env(text: &str) -> Vars {
    let mut out = Vec::new();
    let mut name: Option<&str> = None;
    for line in text.lines() {
        let l = line.trim();
        if let Some(n) = l.strip_prefix("- name:") {
            name = Some(n.trim());
        } else if let (Some(n), Some(v)) = (name, l.strip_prefix("value:")) {
            out.push((
                unquote(n.as_bytes()).to_vec(),
                unquote(v.trim().as_bytes()).to_vec(),
            ));
            name = None;
        }
    }
    out
}

/// PowerShell `Get-ChildItem Env:` output: a `Name  Value` header, a dashes line, then rows.
fn powershell_table(text: &str) -> Vars {
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("----"))
        .skip(1)
        .filter_map(|l| {
            let l = l.trim();
            let split = l.find(char::is_whitespace)?;
            let (name, value) = l.split_at(split);
            Some((name.as_bytes().to_vec(), value.trim().as_bytes().to_vec()))
        })
        .collect()
}

fn unquote(v: &[u8]) -> &[u8] {
    if v.len() >= 2 && (v[0] == b'"' || v[0] == b'\'') && v[v.len() - 1] == v[0] {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// `KEY=VALUE` lines or NUL-separated entries; `export ` and `declare -x ` prefixes, comments
/// and blank lines are dropped; one pair of matching quotes around a value is removed.
fn assignments(bytes: &[u8]) -> Vars {
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
            if name.is_empty() || !name.iter().all(|&b| name_byte(b)) {
                return None;
            }
            Some((name.to_vec(), unquote(e[eq + 1..].trim_ascii()).to_vec()))
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

    /// Regression #16: a variable whose name is not UTF-8 was dropped, its value unscanned.
    #[test]
    fn a_name_that_is_not_utf8_is_kept_and_read_lossily() {
        let env = super::Environment::from_dump("dump".into(), b"A=1\0T\xffK=v\xfe2\0B=3\0");
        assert_eq!(names(&env.vars), ["A=1", "T\u{fffd}K=v\u{fffd}2", "B=3"]);
        assert_eq!(env.variable(2).as_deref(), Some("T\u{fffd}K"));
        assert_eq!(env.unreadable_names(), ["T\u{fffd}K"]);
        assert!(super::is_assignment(b"T\xffK=1") && !super::is_assignment(b"-Dx=1"));
    }

    fn names(v: &super::Vars) -> Vec<String> {
        v.iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    String::from_utf8_lossy(k),
                    String::from_utf8_lossy(v)
                )
            })
            .collect()
    }

    #[test]
    fn docker_kubernetes_and_powershell() {
        let docker =
            br#"[{"Id": "abc", "Config": {"Env": ["PATH=/bin", "TOKEN=x1"], "Cmd": ["sh"]}}]"#;
        assert_eq!(names(&super::parse(docker)), ["PATH=/bin", "TOKEN=x1"]);
        let k8s = br#"{"spec": {"containers": [{"env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {}}]}]}}"#;
        assert_eq!(names(&super::parse(k8s)), ["A=1"]);
        let yaml =
            b"spec:\n  containers:\n  - env:\n    - name: DB_PASSWORD\n      value: \"s3cr3t\"\n";
        assert_eq!(names(&super::parse(yaml)), ["DB_PASSWORD=s3cr3t"]);
        let ps: Vec<u8> = "\r\nName                           Value\r\n----                           -----\r\nAPPDATA                        C:\\Users\\a\r\nGH_TOKEN                       abc123\r\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(
            names(&super::parse(&ps)),
            ["APPDATA=C:\\Users\\a", "GH_TOKEN=abc123"]
        );
    }
}
