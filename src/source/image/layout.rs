//! Images on disk: an OCI layout (a directory, or the same inside a tarball) and a
//! `docker save` tarball, legacy or OCI-flavoured.

use super::*;

/// Blobs under `DIR/blobs/ALG/HEX`.
pub(super) struct LayoutDir(pub(super) PathBuf);

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

pub(super) trait Files: Opener {
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
pub(super) struct Tarball {
    path: PathBuf,
    members: HashMap<String, (u64, u64)>,
}

impl Tarball {
    pub(super) fn open(path: &Path) -> Result<Tarball, ImageError> {
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

pub(super) fn from_layout<S: Files + 'static>(
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

/// `docker save`: `manifest.json` names the config and the layers by their paths in the tar.
pub(super) fn from_docker_archive(
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
