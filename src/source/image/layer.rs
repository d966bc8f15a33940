//! Layers and the config: each layer walked as a tar as it streams (its digest checked as it
//! is read), whiteouts named; the config's scannable fields.

use super::*;

/// What walking a layer met.
pub enum LayerEvent {
    File {
        path: String,
        data: Vec<u8>,
    },
    /// A whiteout: `path` (a file or directory) is deleted from the layers below; with
    /// `opaque`, everything under the directory `path` is.
    Whiteout {
        path: String,
        opaque: bool,
    },
    /// A file over the size limit, not read.
    SkippedLarge {
        path: String,
        size: u64,
    },
}

/// Hashes what is read through it.
struct Hashing<R> {
    inner: R,
    hash: Sha256,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// Walk a layer: decompress (gzip, zstd or none, by its first bytes) and read the tar entry
/// by entry. Links, devices and directories are skipped; paths are reported, never used.
/// Returns a warning when the content does not match its digest.
pub fn walk_layer(
    r: Box<dyn Read + Send>,
    layer: &Layer,
    max_entry: Option<u64>,
    visit: &mut dyn FnMut(LayerEvent),
) -> Result<Option<String>, io::Error> {
    let mut hashing = Hashing {
        inner: r,
        hash: Sha256::new(),
    };
    let mut buffered = io::BufReader::with_capacity(256 << 10, &mut hashing);
    let head = io::BufRead::fill_buf(&mut buffered)?.to_vec();
    let kind = crate::source::archive::sniff(&head);
    let stream: Box<dyn Read> = match kind {
        Some(k @ (crate::source::archive::Kind::Gzip | crate::source::archive::Kind::Zstd)) => {
            crate::source::archive::decoder(k, &mut buffered)?
        }
        _ => Box::new(&mut buffered),
    };
    let mut tar = tar::Archive::new(stream);
    for e in tar.entries()? {
        let e = e?;
        let raw = String::from_utf8_lossy(&e.path_bytes()).into_owned();
        let path = normalise(&raw);
        let (dir, base) = match path.rsplit_once('/') {
            Some((d, b)) => (format!("{d}/"), b.to_string()),
            None => (String::new(), path.clone()),
        };
        if base == ".wh..wh..opq" {
            visit(LayerEvent::Whiteout {
                path: dir.trim_end_matches('/').to_string(),
                opaque: true,
            });
            continue;
        }
        if let Some(gone) = base.strip_prefix(".wh.") {
            visit(LayerEvent::Whiteout {
                path: format!("{dir}{gone}"),
                opaque: false,
            });
            continue;
        }
        if !e.header().entry_type().is_file() {
            continue;
        }
        let size = e.header().size().unwrap_or(0);
        if max_entry.is_some_and(|m| size > m) {
            visit(LayerEvent::SkippedLarge { path, size });
            continue;
        }
        let mut data = Vec::with_capacity(size.min(64 << 20) as usize);
        let mut e = e;
        e.read_to_end(&mut data)?;
        visit(LayerEvent::File { path, data });
    }
    drop(tar);
    // Read to the end so the digest covers the whole blob (tar padding, trailing bytes).
    io::copy(&mut buffered, &mut io::sink())?;
    drop(buffered);
    if !layer.verify {
        return Ok(None);
    }
    let got = format!("sha256:{}", hex(&hashing.hash.finalize()));
    Ok((got != layer.digest).then(|| {
        format!(
            "digest mismatch: expected {}, content is {got}",
            layer.digest
        )
    }))
}

/// A layer path as shown: `/`-rooted, without `./`. `..` is kept: it is only reported.
fn normalise(p: &str) -> String {
    let t = p.trim_start_matches("./").trim_start_matches('/');
    format!("/{}", t.trim_end_matches('/'))
}

pub use crate::model::whited_out;

/// The config's scannable fields, each as (name, text): Env, Cmd, Entrypoint, Labels and the
/// history's `created_by` lines (where build arguments and `RUN` secrets show up).
pub fn config_fields(config: &[u8]) -> Result<Vec<(String, String)>, ImageError> {
    let v = json(config, "image config")?;
    let c = &v["config"];
    let mut out = Vec::new();
    let strings = |x: &Value| -> Vec<String> {
        x.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let env = strings(&c["Env"]);
    if !env.is_empty() {
        out.push(("config.Env".to_string(), env.join("\n") + "\n"));
    }
    for f in ["Cmd", "Entrypoint"] {
        let parts = strings(&c[f]);
        if !parts.is_empty() {
            out.push((format!("config.{f}"), parts.join(" ") + "\n"));
        }
    }
    if let Some(labels) = c["Labels"].as_object() {
        let text: String = labels
            .iter()
            .map(|(k, v)| format!("{k}={}\n", v.as_str().unwrap_or("")))
            .collect();
        if !text.is_empty() {
            out.push(("config.Labels".to_string(), text));
        }
    }
    for (i, h) in v["history"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        if let Some(cb) = h["created_by"].as_str() {
            out.push((format!("history[{i}].created_by"), format!("{cb}\n")));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whiteouts() {
        let w = vec![
            ("/etc/secret".to_string(), false),
            ("/app".to_string(), true),
        ];
        assert!(whited_out("/etc/secret", &w));
        assert!(whited_out("/app/config.env", &w));
        assert!(!whited_out("/app", &w));
        assert!(!whited_out("/etc/secrets", &w));
    }
}
