//! Container images: an OCI image layout (`oci:DIR[:TAG]`), an OCI archive
//! (`oci-archive:FILE[:TAG]`), a `docker save` tarball (`docker-archive:FILE[:TAG]`, legacy
//! and OCI-flavoured), or a registry (`[REGISTRY/]NAME[:TAG|@DIGEST]`) over the OCI
//! distribution API with anonymous, basic or bearer-token auth (the `registry` feature,
//! `registry.rs`).
//!
//! An image resolves to its config and its layers. Each layer is opened as its own stream
//! (a file, a member of a tarball, an HTTP response), so layers can be read in parallel;
//! each is decompressed and walked as a tar as it arrives, one entry in memory at a time, and
//! its digest is checked as it is read.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

// Pulling over HTTP is the only part of this module that needs a network client.
#[cfg(feature = "registry")]
mod registry;

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("bad image reference {0:?}: {1}")]
    Reference(String, String),
    #[error("{0}: {1}")]
    Io(String, io::Error),
    #[error("{0}")]
    Format(String),
    #[error("registry: {0}")]
    Registry(String),
}

const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

/// How to reach a registry.
#[derive(Debug, Clone, Default)]
pub struct RegistryOptions {
    /// `USER:PASS`; otherwise ~/.docker/config.json is consulted.
    pub creds: Option<String>,
    pub plain_http: bool,
    /// `os/arch[/variant]`.
    pub platform: String,
}

/// A resolved image: what to scan and how to open its layers.
pub struct Image {
    /// The reference as given.
    pub reference: String,
    pub manifest_digest: String,
    pub config: Vec<u8>,
    pub layers: Vec<Layer>,
    /// Problems met while resolving (a digest mismatch in the manifest or config).
    pub warnings: Vec<String>,
    opener: Arc<dyn Opener>,
}

#[derive(Debug, Clone)]
pub struct Layer {
    /// `sha256:...`, or for a legacy `docker save` layer its path in the tarball.
    pub digest: String,
    /// Check the content against `digest` while reading.
    pub verify: bool,
}

impl Image {
    /// Open layer `i` for reading (compressed or not, as stored).
    pub fn open_layer(&self, i: usize) -> Result<Box<dyn Read + Send>, ImageError> {
        self.opener.open(&self.layers[i].digest)
    }
}

/// Opens blobs by digest (or path, for legacy docker archives).
trait Opener: Send + Sync {
    fn open(&self, digest: &str) -> Result<Box<dyn Read + Send>, ImageError>;
}

/// Resolve `reference` to an image.
pub fn resolve(reference: &str, opts: &RegistryOptions) -> Result<Image, ImageError> {
    let bad = |why: &str| ImageError::Reference(reference.to_string(), why.to_string());
    if let Some(rest) = reference.strip_prefix("oci:") {
        let (dir, tag) = split_tag(rest, |p| Path::new(p).is_dir());
        let store = Arc::new(LayoutDir(PathBuf::from(dir)));
        return from_layout(reference, store, tag, opts);
    }
    if let Some(rest) = reference.strip_prefix("oci-archive:") {
        let (file, tag) = split_tag(rest, |p| Path::new(p).is_file());
        let store = Arc::new(Tarball::open(Path::new(file))?);
        return from_layout(reference, store, tag, opts);
    }
    if let Some(rest) = reference.strip_prefix("docker-archive:") {
        let (file, tag) = split_tag(rest, |p| Path::new(p).is_file());
        return from_docker_archive(reference, Path::new(file), tag);
    }
    if reference.contains("://") || reference.is_empty() {
        return Err(bad(
            "expected oci:, oci-archive:, docker-archive: or [REGISTRY/]NAME[:TAG|@DIGEST]",
        ));
    }
    #[cfg(feature = "registry")]
    return registry::resolve(reference, opts);
    #[cfg(not(feature = "registry"))]
    {
        parse_registry_ref(reference)?;
        Err(bad(
            "pulling from a registry needs the `registry` feature, which this leakhound was \
             built without: copy the image out first (skopeo copy docker://IMAGE \
             oci-archive:FILE) and scan oci-archive:FILE, or rebuild with --features registry",
        ))
    }
}

/// `PATH[:TAG]`: the longest prefix that exists is the path.
fn split_tag(s: &str, exists: impl Fn(&str) -> bool) -> (&str, Option<&str>) {
    if exists(s) {
        return (s, None);
    }
    match s.rsplit_once(':') {
        Some((p, t)) if exists(p) => (p, Some(t)),
        _ => (s, None),
    }
}

fn json(bytes: &[u8], what: &str) -> Result<Value, ImageError> {
    serde_json::from_slice(bytes)
        .map_err(|e| ImageError::Format(format!("{what}: not valid JSON: {e}")))
}

fn read_all(mut r: impl Read, what: &str, max: u64) -> Result<Vec<u8>, ImageError> {
    let mut v = Vec::new();
    (&mut r)
        .take(max + 1)
        .read_to_end(&mut v)
        .map_err(|e| ImageError::Io(what.to_string(), e))?;
    if v.len() as u64 > max {
        return Err(ImageError::Format(format!(
            "{what}: larger than {max} bytes"
        )));
    }
    Ok(v)
}

/// Manifests and configs are small; anything bigger is not one.
const MAX_DOC: u64 = 16 << 20;

pub fn sha256_digest(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    format!("sha256:{}", hex(&d))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `sha256:HEX` with a well-formed hex part: safe to use in a path or URL.
fn check_digest(d: &str) -> Result<(), ImageError> {
    let ok = d
        .strip_prefix("sha256:")
        .or_else(|| d.strip_prefix("sha512:"))
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if ok {
        Ok(())
    } else {
        Err(ImageError::Format(format!("bad digest {d:?}")))
    }
}

fn verify(bytes: &[u8], digest: &str, what: &str, warnings: &mut Vec<String>) {
    if digest.starts_with("sha256:") && sha256_digest(bytes) != digest {
        warnings.push(format!(
            "{what}: digest mismatch: expected {digest}, content is {}",
            sha256_digest(bytes)
        ));
    }
}

/// Pick the manifest for `platform` from an index / manifest list.
fn pick_platform(index: &Value, platform: &str) -> Result<String, ImageError> {
    let want: Vec<&str> = platform.split('/').collect();
    let manifests = index["manifests"].as_array().cloned().unwrap_or_default();
    let mut seen = Vec::new();
    for m in &manifests {
        let p = &m["platform"];
        let (os, arch) = (
            p["os"].as_str().unwrap_or(""),
            p["architecture"].as_str().unwrap_or(""),
        );
        let variant = p["variant"].as_str();
        seen.push(match variant {
            Some(v) => format!("{os}/{arch}/{v}"),
            None => format!("{os}/{arch}"),
        });
        let matches = want.first() == Some(&os)
            && want.get(1) == Some(&arch)
            && want.get(2).is_none_or(|w| variant == Some(*w));
        if matches {
            if let Some(d) = m["digest"].as_str() {
                return Ok(d.to_string());
            }
        }
    }
    Err(ImageError::Format(format!(
        "no manifest for platform {platform} (the index has: {})",
        if seen.is_empty() {
            "none".to_string()
        } else {
            seen.join(", ")
        }
    )))
}

fn is_index(v: &Value, media_type: Option<&str>) -> bool {
    let mt = media_type.or(v["mediaType"].as_str()).unwrap_or("");
    mt == OCI_INDEX || mt == DOCKER_LIST || (mt.is_empty() && v["manifests"].is_array())
}

/// From a manifest document: the config digest and the layers.
fn manifest_parts(m: &Value) -> Result<(String, Vec<Layer>), ImageError> {
    let config = m["config"]["digest"]
        .as_str()
        .ok_or_else(|| ImageError::Format("manifest has no config digest".into()))?
        .to_string();
    check_digest(&config)?;
    let mut layers = Vec::new();
    for l in m["layers"].as_array().cloned().unwrap_or_default() {
        let d = l["digest"]
            .as_str()
            .ok_or_else(|| ImageError::Format("layer without a digest".into()))?;
        check_digest(d)?;
        layers.push(Layer {
            digest: d.to_string(),
            verify: true,
        });
    }
    Ok((config, layers))
}

// ---- OCI layout: a directory, or the same inside a tarball ----

/// Blobs under `DIR/blobs/ALG/HEX`.
struct LayoutDir(PathBuf);

impl LayoutDir {
    fn path(&self, digest: &str) -> Result<PathBuf, ImageError> {
        check_digest(digest)?;
        let (alg, hex) = digest.split_once(':').expect("checked");
        Ok(self.0.join("blobs").join(alg).join(hex))
    }
}

impl Opener for LayoutDir {
    fn open(&self, digest: &str) -> Result<Box<dyn Read + Send>, ImageError> {
        let p = self.path(digest)?;
        let f = File::open(&p).map_err(|e| ImageError::Io(p.display().to_string(), e))?;
        Ok(Box::new(f))
    }
}

trait Files: Opener {
    /// A file of the layout or archive by its path inside it.
    fn file(&self, path: &str) -> Result<Vec<u8>, ImageError>;
}

impl Files for LayoutDir {
    fn file(&self, path: &str) -> Result<Vec<u8>, ImageError> {
        let p = self.0.join(path);
        let f = File::open(&p).map_err(|e| ImageError::Io(p.display().to_string(), e))?;
        read_all(f, &p.display().to_string(), MAX_DOC)
    }
}

/// A tarball indexed once; each member is read by seeking to it, so members can be read in
/// parallel through their own file handles.
struct Tarball {
    path: PathBuf,
    members: HashMap<String, (u64, u64)>,
}

impl Tarball {
    fn open(path: &Path) -> Result<Tarball, ImageError> {
        let io = |e| ImageError::Io(path.display().to_string(), e);
        let f = File::open(path).map_err(io)?;
        let mut a = tar::Archive::new(io::BufReader::new(f));
        let mut members = HashMap::new();
        for e in a.entries().map_err(io)? {
            let e = e.map_err(io)?;
            if !e.header().entry_type().is_file() {
                continue;
            }
            let name = String::from_utf8_lossy(&e.path_bytes()).into_owned();
            let name = name.trim_start_matches("./").to_string();
            members.insert(name, (e.raw_file_position(), e.size()));
        }
        Ok(Tarball {
            path: path.to_path_buf(),
            members,
        })
    }

    fn member(&self, name: &str) -> Result<Box<dyn Read + Send>, ImageError> {
        let &(at, len) = self.members.get(name).ok_or_else(|| {
            ImageError::Format(format!("{}: no member {name:?}", self.path.display()))
        })?;
        let io = |e| ImageError::Io(self.path.display().to_string(), e);
        let mut f = File::open(&self.path).map_err(io)?;
        f.seek(SeekFrom::Start(at)).map_err(io)?;
        Ok(Box::new(
            io::BufReader::with_capacity(256 << 10, f).take(len),
        ))
    }
}

impl Opener for Tarball {
    fn open(&self, digest: &str) -> Result<Box<dyn Read + Send>, ImageError> {
        if self.members.contains_key(digest) {
            // A legacy docker-archive layer, named by its path.
            return self.member(digest);
        }
        check_digest(digest)?;
        let (alg, hex) = digest.split_once(':').expect("checked");
        self.member(&format!("blobs/{alg}/{hex}"))
    }
}

impl Files for Tarball {
    fn file(&self, path: &str) -> Result<Vec<u8>, ImageError> {
        read_all(self.member(path)?, path, MAX_DOC)
    }
}

fn from_layout<S: Files + 'static>(
    reference: &str,
    store: Arc<S>,
    tag: Option<&str>,
    opts: &RegistryOptions,
) -> Result<Image, ImageError> {
    let index = json(&store.file("index.json")?, "index.json")?;
    let manifests = index["manifests"].as_array().cloned().unwrap_or_default();
    let chosen = match tag {
        Some(t) => manifests
            .iter()
            .find(|m| m["annotations"]["org.opencontainers.image.ref.name"].as_str() == Some(t))
            .ok_or_else(|| ImageError::Format(format!("no image tagged {t:?} in index.json")))?,
        None if manifests.len() == 1 => &manifests[0],
        None => {
            return Err(ImageError::Format(format!(
                "index.json lists {} images; name one with :TAG",
                manifests.len()
            )))
        }
    };
    let mut warnings = Vec::new();
    let mut digest = chosen["digest"]
        .as_str()
        .ok_or_else(|| ImageError::Format("index.json entry without a digest".into()))?
        .to_string();
    let mut doc = read_all(store.open(&digest)?, &digest, MAX_DOC)?;
    verify(&doc, &digest, "manifest", &mut warnings);
    let mut m = json(&doc, "manifest")?;
    if is_index(&m, chosen["mediaType"].as_str()) {
        digest = pick_platform(&m, &opts.platform)?;
        doc = read_all(store.open(&digest)?, &digest, MAX_DOC)?;
        verify(&doc, &digest, "manifest", &mut warnings);
        m = json(&doc, "manifest")?;
    }
    with_config(reference, digest, &m, store, warnings)
}

/// The image a manifest describes: its config read and checked, its layers listed.
fn with_config(
    reference: &str,
    manifest_digest: String,
    manifest: &Value,
    opener: Arc<dyn Opener>,
    mut warnings: Vec<String>,
) -> Result<Image, ImageError> {
    let (config_digest, layers) = manifest_parts(manifest)?;
    let config = read_all(opener.open(&config_digest)?, "config", MAX_DOC)?;
    verify(&config, &config_digest, "config", &mut warnings);
    Ok(Image {
        reference: reference.to_string(),
        manifest_digest,
        config,
        layers,
        warnings,
        opener,
    })
}

/// `docker save`: `manifest.json` names the config and the layers by their paths in the tar.
fn from_docker_archive(
    reference: &str,
    file: &Path,
    tag: Option<&str>,
) -> Result<Image, ImageError> {
    let store = Arc::new(Tarball::open(file)?);
    let doc = store.file("manifest.json")?;
    let list = json(&doc, "manifest.json")?;
    let entries = list.as_array().cloned().unwrap_or_default();
    let chosen = match tag {
        Some(t) => entries.iter().find(|e| {
            e["RepoTags"].as_array().is_some_and(|tags| {
                tags.iter()
                    .filter_map(Value::as_str)
                    .any(|x| x == t || x.rsplit_once(':').is_some_and(|(_, tt)| tt == t))
            })
        }),
        None => entries.first(),
    }
    .ok_or_else(|| ImageError::Format("manifest.json: no such image".into()))?;
    let config_path = chosen["Config"]
        .as_str()
        .ok_or_else(|| ImageError::Format("manifest.json: no Config".into()))?;
    let config = store.file(config_path)?;
    let layers = chosen["Layers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .map(|p| match p.strip_prefix("blobs/sha256/") {
            // OCI-flavoured saves name layers by digest: check them.
            Some(h) => Layer {
                digest: format!("sha256:{h}"),
                verify: true,
            },
            None => Layer {
                digest: p.to_string(),
                verify: false,
            },
        })
        .collect();
    Ok(Image {
        reference: reference.to_string(),
        manifest_digest: sha256_digest(&doc),
        config,
        layers,
        warnings: Vec::new(),
        opener: store,
    })
}

// ---- Registries ----

/// `[REGISTRY/]NAME[:TAG|@DIGEST]` split into registry host, repository and reference.
pub fn parse_registry_ref(s: &str) -> Result<(String, String, String), ImageError> {
    let bad = |why: &str| ImageError::Reference(s.to_string(), why.to_string());
    let (name, reference) = if let Some((n, d)) = s.split_once('@') {
        (n, d.to_string())
    } else {
        // A tag is after the last ':' that follows the last '/' (a port has a '/' after it).
        let slash = s.rfind('/').map_or(0, |i| i + 1);
        match s[slash..].rfind(':') {
            Some(i) => (&s[..slash + i], s[slash + i + 1..].to_string()),
            None => (s, "latest".to_string()),
        }
    };
    let (registry, repo) = match name.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            (first.to_string(), rest.to_string())
        }
        _ => ("docker.io".to_string(), name.to_string()),
    };
    let repo = if registry == "docker.io" && !repo.contains('/') {
        format!("library/{repo}")
    } else {
        repo
    };
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-/".contains(c);
    if repo.is_empty() || !repo.chars().all(valid) {
        return Err(bad(
            "repository names are lowercase letters, digits, . _ - /",
        ));
    }
    if reference.is_empty() || reference.contains('/') {
        return Err(bad("empty or malformed tag"));
    }
    if reference.contains(':') {
        check_digest(&reference)?;
    }
    let host = if registry == "docker.io" {
        "registry-1.docker.io".to_string()
    } else {
        registry
    };
    Ok((host, repo, reference))
}

// ---- Layers ----

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
    SkippedLarge,
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
    let kind = super::archive::sniff(&head);
    let stream: Box<dyn Read> = match kind {
        Some(k @ (super::archive::Kind::Gzip | super::archive::Kind::Zstd)) => {
            super::archive::decoder(k, &mut buffered)?
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
            visit(LayerEvent::SkippedLarge);
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

/// Is `path` deleted by one of `whiteouts` (paths, opaque flags) of a later layer?
pub fn whited_out(path: &str, whiteouts: &[(String, bool)]) -> bool {
    whiteouts.iter().any(|(w, opaque)| {
        let under = path.len() > w.len()
            && path.starts_with(w.as_str())
            && path.as_bytes()[w.len()] == b'/';
        under || (!opaque && path == w)
    })
}

// ---- The config ----

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
    fn registry_references() {
        let p = |s| parse_registry_ref(s).unwrap();
        assert_eq!(
            p("alpine"),
            (
                "registry-1.docker.io".into(),
                "library/alpine".into(),
                "latest".into()
            )
        );
        assert_eq!(
            p("127.0.0.1:5000/team/app:v1"),
            ("127.0.0.1:5000".into(), "team/app".into(), "v1".into())
        );
        let d = format!("sha256:{}", "a".repeat(64));
        assert_eq!(p(&format!("ghcr.io/o/r@{d}")).2, d);
        assert!(parse_registry_ref("Bad/Name").is_err());
        assert!(parse_registry_ref("x@sha256:zz").is_err());
    }

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

    #[test]
    fn platforms() {
        let idx: Value = serde_json::json!({"manifests": [
            {"digest": "sha256:aa", "platform": {"os": "linux", "architecture": "amd64"}},
            {"digest": "sha256:bb", "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}},
        ]});
        assert_eq!(pick_platform(&idx, "linux/arm64").unwrap(), "sha256:bb");
        assert_eq!(pick_platform(&idx, "linux/arm64/v8").unwrap(), "sha256:bb");
        let e = pick_platform(&idx, "linux/s390x").unwrap_err().to_string();
        assert!(e.contains("linux/amd64, linux/arm64/v8"), "{e}");
    }
}
