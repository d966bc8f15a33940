//! A generated git history with planted fake credentials, written with `git fast-import`:
//! files are added, edited, renamed and deleted; some commits plant a credential and some
//! later commits delete one again. Used by the `gen-repo` example and by the tests.

use crate::synth;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// A planted secret and the commit that introduced it.
pub struct HistoryTruth {
    pub commit: String,
    pub path: String,
    pub rule: &'static str,
    pub secret: String,
    /// A later commit removed it: it is only in history.
    pub deleted: bool,
}

/// Build a repository of `commits` commits in `dir` (created, must not exist).
pub fn generate(dir: &Path, commits: usize, seed: u64) -> std::io::Result<Vec<HistoryTruth>> {
    let git = |args: &[&str]| -> std::io::Result<()> {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()?
            .success();
        ok.then_some(())
            .ok_or_else(|| std::io::Error::other(format!("git {args:?} failed")))
    };
    std::fs::create_dir_all(dir)?;
    git(&["init", "-q", "-b", "main"])?;
    let marks = dir.join(".git/leakhound-marks");
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["fast-import", "--quiet"])
        .arg(format!("--export-marks={}", marks.display()))
        .stdin(Stdio::piped())
        .spawn()?;
    let mut input = std::io::BufWriter::new(child.stdin.take().expect("piped"));

    let mut rng = synth::Rng::new(seed);
    // path -> (content, planted secrets in it: (rule, secret, truth index))
    let mut files: BTreeMap<String, (String, Vec<usize>)> = BTreeMap::new();
    let mut truths: Vec<(usize, HistoryTruth)> = Vec::new();
    let exts = ["py", "js", "go", "yaml", "ts", "env", "md"];
    for n in 1..=commits {
        let mut changes: Vec<String> = Vec::new();
        let mut subject = String::from("update");
        for _ in 0..1 + rng.below(3) {
            let action = if files.len() < 20 { 0 } else { rng.below(10) };
            match action {
                // A new file; one in five holds a credential.
                0..=2 => {
                    let path = format!(
                        "src/m{:02}/f{n:05}_{}.{}",
                        rng.below(40),
                        rng.below(100),
                        exts[rng.below(exts.len())]
                    );
                    let every = if rng.below(5) == 0 {
                        30 + rng.below(60)
                    } else {
                        0
                    };
                    let size = 2048 + rng.below(24 << 10);
                    let (text, planted) = synth::text(&mut rng, size, every);
                    let mut ids = Vec::new();
                    for (_, rule, secret) in planted {
                        ids.push(truths.len());
                        truths.push((
                            n,
                            HistoryTruth {
                                commit: String::new(),
                                path: path.clone(),
                                rule,
                                secret,
                                deleted: false,
                            },
                        ));
                    }
                    if !ids.is_empty() {
                        subject = format!("add {path}");
                    }
                    changes.push(modify(&path, &text));
                    files.insert(path, (text, ids));
                }
                // Edit a file: append lines; its secrets stay where they are.
                3..=6 => {
                    let path = nth_key(&files, rng.below(files.len()));
                    let (text, _) = files.get_mut(&path).expect("exists");
                    for _ in 0..1 + rng.below(20) {
                        synth::filler_line(&mut rng, text);
                    }
                    changes.push(modify(&path, text));
                }
                // Remove a file's secrets (the lines holding them), keeping the file.
                7 => {
                    let path = nth_key(&files, rng.below(files.len()));
                    let (text, ids) = files.get_mut(&path).expect("exists");
                    for &i in ids.iter() {
                        let s = &truths[i].1.secret;
                        *text = text
                            .split_inclusive('\n')
                            .filter(|l| !l.contains(s.as_str()))
                            .collect();
                        truths[i].1.deleted = true;
                    }
                    ids.clear();
                    changes.push(modify(&path, text));
                    subject = format!("remove secrets from {path}");
                }
                // Rename a file.
                8 => {
                    let from = nth_key(&files, rng.below(files.len()));
                    let to = format!("moved/{n:05}_{}", from.rsplit('/').next().unwrap_or("f"));
                    let entry = files.remove(&from).expect("exists");
                    changes.push(format!("D {from}\n"));
                    changes.push(modify(&to, &entry.0));
                    files.insert(to, entry);
                }
                // Delete a file (and whatever it held).
                _ => {
                    let path = nth_key(&files, rng.below(files.len()));
                    let (_, ids) = files.remove(&path).expect("exists");
                    for i in ids {
                        truths[i].1.deleted = true;
                    }
                    changes.push(format!("D {path}\n"));
                }
            }
        }
        let when = 1_700_000_000 + n as u64 * 3600;
        let msg = format!("{subject} ({n})\n");
        write!(
            input,
            "commit refs/heads/main\nmark :{n}\n\
             author Dev {n} <dev{}@example.org> {when} +0000\n\
             committer Dev <dev@example.org> {when} +0000\n\
             data {}\n{msg}",
            n % 7,
            msg.len()
        )?;
        for c in changes {
            input.write_all(c.as_bytes())?;
        }
        input.write_all(b"\n")?;
    }
    input.flush()?;
    drop(input);
    if !child.wait()?.success() {
        return Err(std::io::Error::other("git fast-import failed"));
    }
    git(&["reset", "-q", "--hard", "main"])?;
    let mut ids: BTreeMap<usize, String> = BTreeMap::new();
    for line in std::fs::read_to_string(&marks)?.lines() {
        if let Some((m, id)) = line.strip_prefix(':').and_then(|l| l.split_once(' ')) {
            ids.insert(m.parse().unwrap_or(0), id.to_string());
        }
    }
    Ok(truths
        .into_iter()
        .map(|(n, mut t)| {
            t.commit = ids.get(&n).cloned().unwrap_or_default();
            t
        })
        .collect())
}

fn modify(path: &str, text: &str) -> String {
    format!("M 100644 inline {path}\ndata {}\n{text}\n", text.len())
}

fn nth_key<V>(m: &BTreeMap<String, V>, i: usize) -> String {
    m.keys().nth(i).cloned().expect("index in range")
}
