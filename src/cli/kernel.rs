//! `kernel install|uninstall|status`, and the masker behind the kernel proxy (`kernel mask`).
//!
//! The kernelspec starts `cli/kernel/leakhound_kernel.py` (embedded here, written next to
//! `kernel.json`), a Python proxy that sits between a Jupyter client and the original kernel,
//! relays the five channels, and has every message the kernel sends masked by one
//! `leakhound kernel mask` process for the whole session (see docs/jupyter.md). The proxy
//! is Python because it needs ZeroMQ and Jupyter's wire protocol, which the kernel's own
//! Python already has (ipykernel depends on pyzmq and jupyter_client); what is a secret is
//! decided here, by the same engine and masker as `filter`.

use super::settings::{KernelInstall, MaskerRules, Place};
use super::{EXIT_CLEAN, EXIT_ERROR};
use crate::filter::{Masker, Masking};
use crate::report::printable;
use anyhow::{bail, Context as _, Result};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The proxy, written into each kernelspec this binary installs.
const PROXY: &str = include_str!("kernel/leakhound_kernel.py");
const PROXY_FILE: &str = "leakhound_kernel.py";

/// What the Python that will run the proxy knows: its own path, Jupyter's data directories,
/// and the kernelspec to wrap. Run rather than re-implemented: Jupyter's search path
/// (JUPYTER_PATH, the user's and the environment's directories, ipykernel's built-in
/// `python3`) is the one clients use, and it is that Python's.
const JUPYTER_INFO: &str = r#"
import json, os, sys
out = {"executable": sys.executable, "sys_prefix": os.path.join(sys.prefix, "share", "jupyter")}
try:
    import zmq, jupyter_client
    from jupyter_core.paths import jupyter_data_dir, jupyter_path
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
except ImportError as e:
    out["missing"] = str(e)
else:
    out["user"] = jupyter_data_dir()
    out["path"] = jupyter_path()
    if len(sys.argv) > 1:
        try:
            s = KernelSpecManager().get_kernel_spec(sys.argv[1])
            out["spec"] = {"argv": s.argv, "env": s.env, "display_name": s.display_name,
                           "language": s.language, "interrupt_mode": s.interrupt_mode,
                           "metadata": s.metadata, "resource_dir": s.resource_dir}
        except NoSuchKernel:
            out["spec"] = None
print(json.dumps(out))
"#;

struct Jupyter {
    executable: PathBuf,
    user: PathBuf,
    sys_prefix: PathBuf,
    path: Vec<PathBuf>,
    spec: Option<serde_json::Value>,
}

fn jupyter(python: &Path, spec: Option<&str>) -> Result<Jupyter> {
    let out = Command::new(python)
        .arg("-c")
        .arg(JUPYTER_INFO)
        .args(spec)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok().with_context(|| {
        let err = String::from_utf8_lossy(&out.stderr);
        format!(
            "{} could not list Jupyter's paths: {}",
            python.display(),
            printable(err.lines().last().unwrap_or("no output"))
        )
    })?;
    if let Some(m) = v["missing"].as_str() {
        bail!(
            "{} cannot run the kernel proxy ({}): install ipykernel (it brings jupyter_client \
             and pyzmq) into it, or name another Python with --python",
            python.display(),
            printable(m)
        );
    }
    let path = |k: &str| PathBuf::from(v[k].as_str().unwrap_or_default());
    Ok(Jupyter {
        executable: path("executable"),
        user: path("user"),
        sys_prefix: path("sys_prefix"),
        path: v["path"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str().map(PathBuf::from))
            .collect(),
        spec: v.get("spec").filter(|s| !s.is_null()).cloned(),
    })
}

/// The `kernels` directory a place names.
fn kernels_dir(place: &Place, j: &Jupyter) -> Result<PathBuf> {
    Ok(match place {
        Place::Prefix(p) => std::path::absolute(p)
            .context("--prefix")?
            .join("share/jupyter/kernels"),
        Place::SysPrefix => j.sys_prefix.join("kernels"),
        Place::User | Place::Default => j.user.join("kernels"),
    })
}

/// Jupyter's own rule for kernel names; it also keeps a name from leaving its directory.
fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if !ok {
        bail!("kernel name {name:?}: use letters, digits, '.', '_' and '-'");
    }
    Ok(())
}

/// A kernelspec's `kernel.json`, if it is one `kernel install` wrote.
fn ours(dir: &Path) -> Option<serde_json::Value> {
    let raw = std::fs::read(dir.join("kernel.json")).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&raw).ok()?;
    v["metadata"].get("leakhound").is_some().then_some(v)
}

pub fn install(a: &KernelInstall) -> Result<i32> {
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("leakhound-{}", a.from));
    check_name(&name)?;
    if name == a.from {
        bail!("--name {name} would replace the kernelspec it wraps; choose another name");
    }
    let j = jupyter(&a.python, Some(&a.from))?;
    let Some(spec) = &j.spec else {
        bail!(
            "no kernelspec named {:?} (see `jupyter kernelspec list`); name one with --from",
            a.from
        );
    };
    if spec["metadata"].get("leakhound").is_some() {
        bail!("{:?} already runs behind leakhound", a.from);
    }
    let leakhound = std::env::current_exe().context("finding leakhound's own path")?;
    let dir = kernels_dir(&a.place, &j)?.join(&name);
    if dir.exists() {
        if ours(&dir).is_none() {
            bail!(
                "{} holds a kernelspec leakhound did not write; remove it or choose another --name",
                dir.display()
            );
        }
        std::fs::remove_dir_all(&dir).with_context(|| format!("replacing {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;

    let resource_dir = spec["resource_dir"].as_str().unwrap_or_default();
    // `{connection_file}` stays for the client to fill in (the proxy swaps in the inner
    // kernel's); `{resource_dir}` would be filled with ours, so it is resolved now.
    let inner: Vec<String> = spec["argv"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str())
        .map(|s| s.replace("{resource_dir}", resource_dir))
        .collect();
    let mut inner = inner;
    match inner.first().map(String::as_str) {
        None => bail!("the kernelspec {:?} has no argv", a.from),
        // jupyter_client runs a bare `python` as its own interpreter; the proxy is started
        // by this Python, so the kernel it starts is this Python's as well.
        Some(p)
            if p.strip_prefix("python")
                .is_some_and(|v| v.bytes().all(|b| b.is_ascii_digit() || b == b'.')) =>
        {
            inner[0] = j.executable.display().to_string();
        }
        Some(_) => {}
    }
    let mut argv = vec![
        j.executable.display().to_string(),
        dir.join(PROXY_FILE).display().to_string(),
        "-f".into(),
        "{connection_file}".into(),
        "--leakhound".into(),
        leakhound.display().to_string(),
        "--interrupt-mode".into(),
        spec["interrupt_mode"]
            .as_str()
            .unwrap_or("signal")
            .to_string(),
    ];
    if let Some(c) = &a.config {
        let c = std::path::absolute(c).context("--config")?;
        argv.extend(["--config".into(), c.display().to_string()]);
    }
    argv.push("--".into());
    argv.extend(inner);
    let mut metadata = spec["metadata"].as_object().cloned().unwrap_or_default();
    // The proxy speaks plain ZeroMQ to the client; it cannot offer the kernel's encryption.
    metadata.remove("supported_encryption");
    metadata.insert(
        "leakhound".into(),
        serde_json::json!({"from": a.from, "version": env!("CARGO_PKG_VERSION")}),
    );
    let display = a.display_name.clone().unwrap_or_else(|| {
        let shown = spec["display_name"].as_str().unwrap_or(&a.from);
        format!(
            "{} (leakhound)",
            shown.strip_suffix(" (ipykernel)").unwrap_or(shown)
        )
    });
    let mut kernel = serde_json::json!({
        "argv": argv,
        "display_name": display,
        "language": spec["language"],
        // The client sends interrupts as messages, which the proxy turns into what the
        // wrapped kernel expects: a signal to its process group, or the message itself.
        "interrupt_mode": "message",
        "metadata": metadata,
    });
    if spec["env"].as_object().is_some_and(|e| !e.is_empty()) {
        kernel["env"] = spec["env"].clone();
    }
    std::fs::write(dir.join(PROXY_FILE), PROXY)
        .and_then(|_| {
            std::fs::write(
                dir.join("kernel.json"),
                serde_json::to_string_pretty(&kernel)? + "\n",
            )
        })
        .with_context(|| format!("writing {}", dir.display()))?;
    // The wrapped kernel's logos, so clients show the language's icon.
    if let Ok(entries) = std::fs::read_dir(resource_dir) {
        for e in entries.flatten() {
            let n = e.file_name();
            if n.to_string_lossy().starts_with("logo-") && e.path().is_file() {
                let _ = std::fs::copy(e.path(), dir.join(&n));
            }
        }
    }
    println!(
        "installed kernelspec {name} ({}) in {}, wrapping {}",
        printable(&display),
        printable(&dir.display().to_string()),
        a.from
    );
    Ok(EXIT_CLEAN)
}

pub fn uninstall(name: &str, place: &Place, python: &Path) -> Result<i32> {
    check_name(name)?;
    let dir = match place {
        Place::Prefix(_) => kernels_dir(place, &no_python())?,
        _ => kernels_dir(place, &jupyter(python, None)?)?,
    }
    .join(name);
    if std::fs::symlink_metadata(&dir).is_err() {
        eprintln!("leakhound: no kernelspec {name} in {}", dir.display());
        return Ok(EXIT_ERROR);
    }
    if ours(&dir).is_none() {
        bail!(
            "{} is not a kernelspec leakhound wrote; left as it is",
            dir.display()
        );
    }
    std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    println!("removed kernelspec {name} from {}", dir.display());
    Ok(EXIT_CLEAN)
}

/// For `--prefix`, which needs no Python to say where kernelspecs go.
fn no_python() -> Jupyter {
    Jupyter {
        executable: PathBuf::new(),
        user: PathBuf::new(),
        sys_prefix: PathBuf::new(),
        path: Vec::new(),
        spec: None,
    }
}

pub fn status(place: &Place, python: &Path) -> Result<i32> {
    let any_place = matches!(place, Place::Default);
    let j = match place {
        Place::Prefix(_) => no_python(),
        _ => jupyter(python, None)?,
    };
    let dirs = if any_place {
        j.path.iter().map(|p| p.join("kernels")).collect()
    } else {
        vec![kernels_dir(place, &j)?]
    };
    let me = std::env::current_exe().ok();
    let mut found = 0;
    for d in &dirs {
        let Ok(entries) = std::fs::read_dir(d) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for dir in entries {
            let Some(spec) = ours(&dir) else { continue };
            found += 1;
            let argv: Vec<&str> = spec["argv"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str())
                .collect();
            let after = |flag: &str| {
                argv.iter()
                    .position(|a| *a == flag)
                    .map(|i| argv.get(i + 1))
            };
            let lh = after("--leakhound").flatten().copied().unwrap_or("");
            let inner = argv
                .iter()
                .position(|a| *a == "--")
                .map(|i| argv[i + 1..].join(" "))
                .unwrap_or_default();
            let exists = |p: &str| {
                if Path::new(p).is_file() {
                    "ok"
                } else {
                    "MISSING"
                }
            };
            let lh_state = match (exists(lh), &me) {
                ("ok", Some(m)) if Path::new(lh) == m => "ok, this binary",
                (s, _) => s,
            };
            let name = dir.file_name().unwrap_or_default().to_string_lossy();
            println!(
                "{}  {}\n  display name: {}\n  wraps {}: {}\n  leakhound: {} ({lh_state})\n  python: {} ({})\n  proxy: {}",
                printable(&name),
                printable(&dir.display().to_string()),
                printable(spec["display_name"].as_str().unwrap_or("")),
                printable(spec["metadata"]["leakhound"]["from"].as_str().unwrap_or("?")),
                printable(&inner),
                printable(lh),
                printable(argv.first().copied().unwrap_or("")),
                exists(argv.first().copied().unwrap_or("")),
                exists(&dir.join(PROXY_FILE).display().to_string()),
            );
        }
    }
    if found == 0 {
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        println!(
            "no leakhound kernelspec in {}",
            printable(&shown.join(", "))
        );
    }
    Ok(EXIT_CLEAN)
}

/// The masker behind the proxy: one request per line on stdin, one answer per line on
/// stdout, flushed. One masking context for the session, so a value seen as a secret once (a
/// named `aws_secret_access_key = …` line) is masked wherever it appears later, bare.
///
/// Requests (the first byte says which):
/// - `D` + a JSON document: answered `D` + the document masked (only strings change; a clean
///   document comes back byte for byte), or `E` when it is not JSON.
/// - `B` + base64: a binary buffer, masked as text, answered `B` + base64.
/// - `P` + stream name + TAB + a JSON string: text pushed to that stream's streaming masker;
///   `I` + name: the stream is idle; `F` + name: the stream's output so far ends (a tail that
///   could begin a secret is masked as `[REDACTED:partial]`). Each is answered `T`, then `1`
///   if the stream still holds text back (`0` if not), then a JSON string: the text that may
///   go out now. A character cut in two by the masker waits for its other half.
///
/// Anything else is answered `E`. The reason never quotes the input.
pub fn mask(rules: &MaskerRules) -> Result<i32> {
    let engine = rules.engine()?;
    let masking = Masking::new(&engine);
    let mut streams: HashMap<String, Stream> = HashMap::new();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(EXIT_CLEAN);
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        let answer = answer(&masking, &mut streams, &line);
        out.write_all(&answer)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
}

/// One output stream's masker, and the start of a character it cut off.
struct Stream<'e> {
    masker: Masker<'e>,
    carry: Vec<u8>,
}

fn answer<'e>(
    masking: &Masking<'e>,
    streams: &mut HashMap<String, Stream<'e>>,
    line: &[u8],
) -> Vec<u8> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let Some((&kind, rest)) = line.split_first() else {
        return b"E empty request".to_vec();
    };
    let (op, name, text) = match kind {
        b'D' => {
            return match masking.json("kernel", rest) {
                Some(m) => {
                    notify(&m.findings);
                    [b"D", &m.bytes[..]].concat()
                }
                None => b"E not JSON".to_vec(),
            }
        }
        b'B' => {
            let Ok(raw) = b64.decode(rest) else {
                return b"E not base64".to_vec();
            };
            let m = masking.text("kernel buffer", &raw);
            notify(&m.findings);
            return [b"B", b64.encode(&m.bytes).as_bytes()].concat();
        }
        b'P' => {
            let Some(tab) = rest.iter().position(|&b| b == b'\t') else {
                return b"E no stream name".to_vec();
            };
            let Ok(text) = serde_json::from_slice::<String>(&rest[tab + 1..]) else {
                return b"E not a JSON string".to_vec();
            };
            (kind, &rest[..tab], text)
        }
        b'I' | b'F' => (kind, rest, String::new()),
        _ => return b"E unknown request".to_vec(),
    };
    let name = String::from_utf8_lossy(name).into_owned();
    let s = streams.entry(name.clone()).or_insert_with(|| Stream {
        masker: masking.stream(&name),
        carry: Vec::new(),
    });
    let (bytes, findings) = match op {
        b'P' => s.masker.push(text.as_bytes()),
        b'I' => s.masker.idle(),
        _ => s.masker.finish(),
    };
    notify(&findings);
    s.carry.extend_from_slice(&bytes);
    let cut = if op == b'F' {
        s.carry.len()
    } else {
        complete_len(&s.carry)
    };
    let text = String::from_utf8_lossy(&s.carry[..cut]).into_owned();
    s.carry.drain(..cut);
    let held = s.masker.has_pending() || !s.carry.is_empty();
    let mut a = vec![b'T', if held { b'1' } else { b'0' }];
    // A String always serialises.
    a.extend(serde_json::to_vec(&text).unwrap_or_default());
    a
}

/// How much of `b` is whole UTF-8 characters: all of it but a last character whose
/// remaining bytes have not come yet.
fn complete_len(b: &[u8]) -> usize {
    let n = b.len();
    for back in 1..=n.min(4) {
        let c = b[n - back];
        if c & 0xC0 == 0x80 {
            continue;
        }
        let need = match c {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if need > back { n - back } else { n };
    }
    n
}

/// One line per masked secret on stderr, which Jupyter keeps in its server log: the rule,
/// never the value.
fn notify(findings: &[crate::model::Finding]) {
    for f in findings {
        eprintln!("leakhound: kernel: masked {}", f.rule_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_cut_in_two_waits_for_its_other_half() {
        let e = "é€😀".as_bytes();
        assert_eq!(complete_len(e), e.len());
        assert_eq!(complete_len(&e[..1]), 0);
        assert_eq!(complete_len(&e[..4]), 2);
        assert_eq!(complete_len(&e[..e.len() - 1]), 5);
        assert_eq!(complete_len(b"plain"), 5);
    }

    #[test]
    fn kernel_names_stay_in_their_directory() {
        assert!(check_name("leakhound-python3").is_ok());
        for bad in ["", "..", "a/b", "a b", "x\n"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
