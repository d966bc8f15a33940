//! Where a finding was: the place a blob came from.

use serde::{Deserialize, Serialize};

/// The commit that introduced a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    pub id: String,
    pub author: String,
    pub email: String,
    /// Author date, strict ISO 8601.
    pub date: String,
    pub subject: String,
}

/// Where a blob came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Provenance {
    File {
        path: String,
        /// In an env-shaped file (`.env`, `*.env`, `environ`), the variable the secret is in.
        #[serde(skip_serializing_if = "Option::is_none")]
        variable: Option<String>,
    },
    Stream {
        name: String,
    },
    /// A field of a Jupyter notebook: a cell's source, or one of its outputs.
    Notebook {
        path: String,
        cell: Option<usize>,
        output: Option<usize>,
        field: String,
    },
    /// A variable of an environment (this process's, a pid's, or a dump file's).
    Env {
        origin: String,
        variable: String,
    },
    /// A blob in a git repository, at the path where it was introduced.
    Git {
        path: String,
        blob: String,
        /// The commit that introduced the blob; `None` for the index (`git --staged`).
        commit: Option<Commit>,
        /// In an env-shaped file, the variable the secret is in (as for `File`).
        #[serde(skip_serializing_if = "Option::is_none")]
        variable: Option<String>,
        /// In a notebook, where the secret is (as for `Notebook`): its cell, output and field.
        #[serde(skip_serializing_if = "Option::is_none")]
        cell: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        output: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        field: Option<String>,
    },
    /// A file in a container image's layer, or a field of its config.
    Image {
        image: String,
        manifest: String,
        /// Index of the layer (from the bottom) and its digest; `None` for the config.
        layer: Option<usize>,
        layer_digest: Option<String>,
        /// The path in the layer (`/etc/app.env`, `archive.zip!inner`), or the config field
        /// (`config.Env`, `history[3].created_by`).
        path: String,
        /// A later layer deletes this file: it is not in the running container's filesystem,
        /// but it is still in the image.
        deleted: bool,
        /// In an env-shaped file, the variable the secret is in (as for `File`).
        #[serde(skip_serializing_if = "Option::is_none")]
        variable: Option<String>,
        /// In a notebook, where the secret is (as for `Notebook`): its cell, output and field.
        #[serde(skip_serializing_if = "Option::is_none")]
        cell: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        output: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        field: Option<String>,
    },
}

impl Provenance {
    /// The name a blob goes by within its source: the path of a file (a blob's, a layer's, as
    /// archive entries extend it), a stream's name, an environment's variable. What admission
    /// reads a kind from (`.env`, `.ipynb`, an archive's extension); a path only where there is
    /// one, hence not `path`.
    pub fn name(&self) -> &str {
        match self {
            Provenance::File { path, .. }
            | Provenance::Notebook { path, .. }
            | Provenance::Git { path, .. }
            | Provenance::Image { path, .. } => path,
            Provenance::Stream { name } => name,
            Provenance::Env { variable, .. } => variable,
        }
    }

    /// The commit a git blob was introduced in, if any.
    pub fn commit_id(&self) -> Option<&str> {
        match self {
            Provenance::Git {
                commit: Some(c), ..
            } => Some(&c.id),
            _ => None,
        }
    }

    /// The same origin at another path (a file inside an archive at this one).
    pub fn with_path(&self, p: String) -> Provenance {
        let mut out = self.clone();
        match &mut out {
            Provenance::File { path, variable } => {
                *path = p;
                *variable = None;
            }
            Provenance::Git {
                path,
                variable,
                cell,
                output,
                field,
                ..
            }
            | Provenance::Image {
                path,
                variable,
                cell,
                output,
                field,
                ..
            } => {
                // Another blob of the same origin: nothing of this one's content carries over.
                *path = p;
                (*variable, *cell, *output, *field) = (None, None, None, None);
            }
            _ => {
                return Provenance::File {
                    path: p,
                    variable: None,
                }
            }
        }
        out
    }

    /// The variable a secret is in: of an environment, or of an env-shaped file (a `.env` on
    /// disk, committed to git, or in an image layer). What credential pairing keys on.
    pub fn variable(&self) -> Option<&str> {
        match self {
            Provenance::Env { variable, .. } => Some(variable),
            Provenance::File { variable, .. }
            | Provenance::Git { variable, .. }
            | Provenance::Image { variable, .. } => variable.as_deref(),
            Provenance::Stream { .. } | Provenance::Notebook { .. } => None,
        }
    }

    /// Where in a notebook a secret is, as (cell, output, field): for a notebook file, and
    /// for a notebook committed to git or in an image layer. `None` outside notebooks.
    pub fn notebook_field(&self) -> Option<(Option<usize>, Option<usize>, &str)> {
        match self {
            Provenance::Notebook {
                cell,
                output,
                field,
                ..
            } => Some((*cell, *output, field)),
            Provenance::Git {
                cell,
                output,
                field: Some(field),
                ..
            }
            | Provenance::Image {
                cell,
                output,
                field: Some(field),
                ..
            } => Some((*cell, *output, field)),
            _ => None,
        }
    }

    /// The texts of the place that are not its address, each with whether it is prose (a
    /// commit's author, email and subject) or a name (a variable's, a notebook's field). A
    /// report masks a secret in them as in a context; paths, blob and commit ids and image
    /// names stay, as a report's reader and a baseline look the finding up by them.
    pub fn labels_mut(&mut self, mut f: impl FnMut(&mut String, bool)) {
        let mut name = |s: &mut String| f(s, false);
        match self {
            Provenance::File { variable, .. } => variable.iter_mut().for_each(name),
            Provenance::Stream { .. } => {}
            Provenance::Notebook { field, .. } => name(field),
            Provenance::Env { variable, .. } => name(variable),
            Provenance::Image {
                variable, field, ..
            } => variable.iter_mut().chain(field.iter_mut()).for_each(name),
            Provenance::Git {
                commit,
                variable,
                field,
                ..
            } => {
                variable.iter_mut().chain(field.iter_mut()).for_each(name);
                if let Some(c) = commit {
                    for s in [&mut c.author, &mut c.email, &mut c.subject] {
                        f(s, true);
                    }
                }
            }
        }
    }

    /// Every text of the place (a path, a variable, a commit's subject), for masking a
    /// secret an earlier report holds in clear wherever it shows.
    pub fn texts_mut(&mut self, mut f: impl FnMut(&mut String)) {
        let opt = |s: &mut Option<String>, f: &mut dyn FnMut(&mut String)| {
            if let Some(s) = s {
                f(s)
            }
        };
        match self {
            Provenance::File { path, variable } => {
                f(path);
                opt(variable, &mut f);
            }
            Provenance::Stream { name } => f(name),
            Provenance::Notebook { path, field, .. } => {
                f(path);
                f(field);
            }
            Provenance::Env { origin, variable } => {
                f(origin);
                f(variable);
            }
            Provenance::Git {
                path,
                blob,
                commit,
                variable,
                field,
                ..
            } => {
                f(path);
                f(blob);
                if let Some(c) = commit {
                    for s in [
                        &mut c.id,
                        &mut c.author,
                        &mut c.email,
                        &mut c.date,
                        &mut c.subject,
                    ] {
                        f(s);
                    }
                }
                opt(variable, &mut f);
                opt(field, &mut f);
            }
            Provenance::Image {
                image,
                manifest,
                layer_digest,
                path,
                variable,
                field,
                ..
            } => {
                f(image);
                f(manifest);
                f(path);
                opt(layer_digest, &mut f);
                opt(variable, &mut f);
                opt(field, &mut f);
            }
        }
    }

    /// Where offsets into the content compare: one blob. The same path in two commits, or in
    /// two layers of an image, is two places, and a credential's parts pair only within one.
    /// Borrowed where the name alone says it: a run's end groups thousands of findings by it.
    pub fn blob(&self) -> std::borrow::Cow<'_, str> {
        use std::borrow::Cow;
        match self {
            Provenance::Env { origin, .. } => Cow::Owned(format!("env:{origin}")),
            Provenance::Git { path, blob, .. } => Cow::Owned(format!("{path}\0{blob}")),
            Provenance::Image {
                layer_digest: Some(d),
                ..
            } => Cow::Owned(format!("{}\0{d}", self.display())),
            Provenance::Image { .. } => Cow::Owned(self.display()),
            Provenance::File { .. } | Provenance::Notebook { .. } | Provenance::Stream { .. } => {
                Cow::Borrowed(self.name())
            }
        }
    }

    /// The path-like name shown in reports.
    pub fn display(&self) -> String {
        match self {
            Provenance::File { path, .. } => path.clone(),
            Provenance::Stream { name } => name.clone(),
            Provenance::Notebook { path, .. } => path.clone(),
            Provenance::Env { origin, variable } => format!("{origin}:{variable}"),
            Provenance::Git { path, .. } => path.clone(),
            Provenance::Image { image, path, .. } => format!("{image}!{path}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(digest: &str, path: &str) -> Provenance {
        Provenance::Image {
            image: "registry.test/app:1".into(),
            manifest: "sha256:00".into(),
            layer: Some(1),
            layer_digest: Some(digest.into()),
            path: path.into(),
            deleted: false,
            variable: None,
            cell: None,
            output: None,
            field: None,
        }
    }

    #[test]
    fn one_path_in_two_blobs_is_two_places() {
        let git = |blob: &str| Provenance::Git {
            path: "app/.env".into(),
            blob: blob.into(),
            commit: None,
            variable: None,
            cell: None,
            output: None,
            field: None,
        };
        assert_ne!(git("aa").blob(), git("bb").blob());
        assert_eq!(git("aa").blob(), git("aa").blob());
        assert_ne!(
            layer("sha256:1", "/app/.env").blob(),
            layer("sha256:2", "/app/.env").blob()
        );
        assert_eq!(
            layer("sha256:1", "/app/.env").blob(),
            layer("sha256:1", "/app/.env").blob()
        );
        assert_ne!(
            layer("sha256:1", "/a").blob(),
            layer("sha256:1", "/b").blob()
        );
        let file = Provenance::File {
            path: "src/main.rs".into(),
            variable: None,
        };
        assert_eq!(file.blob(), "src/main.rs");
        let env = |origin: &str| Provenance::Env {
            origin: origin.into(),
            variable: "AWS_SECRET_ACCESS_KEY".into(),
        };
        assert_ne!(env("process:1").blob(), env("process:2").blob());
    }
}
