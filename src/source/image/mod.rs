//! Container images: an OCI image layout (`oci:DIR[:TAG]`), an OCI archive
//! (`oci-archive:FILE[:TAG]`), a `docker save` tarball (`docker-archive:FILE[:TAG]`, legacy
//! and OCI-flavoured), or a registry (`[REGISTRY/]NAME[:TAG|@DIGEST]`) over the OCI
//! distribution API with anonymous, basic or bearer-token auth.
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

mod layer;
mod layout;
// Pulling over HTTP is the only part of this module that needs a network client.
#[cfg(feature = "registry")]
mod registry;

pub use layer::{config_fields, walk_layer, whited_out, LayerEvent};
use layout::{from_docker_archive, from_layout, LayoutDir, Tarball};

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
    return registry::from_registry(reference, opts);
    #[cfg(not(feature = "registry"))]
    {
        let _ = opts;
        parse_registry_ref(reference)?;
        Err(ImageError::Reference(
            reference.to_string(),
            "pulling from a registry needs the `registry` feature, which this leakhound was \
             built without: copy the image out first (skopeo copy docker://IMAGE \
             oci-archive:FILE) and scan oci-archive:FILE, or rebuild with --features registry"
                .into(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
