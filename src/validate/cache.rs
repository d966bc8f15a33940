//! Validation results by credential hash, in memory and in `validation-cache.json` under the
//! state directory: definitive answers only, for `cache_ttl`.

use super::Options;
use crate::model::{unix_now, Validation};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// Results by set hash, in memory and in `validation-cache.json` under the state directory.
pub(super) struct Cache {
    path: Option<PathBuf>,
    ttl: Duration,
    entries: HashMap<String, (u64, Validation)>,
    dirty: bool,
}

impl Cache {
    pub(super) fn load(opts: &Options) -> Cache {
        let path = opts
            .cache_dir
            .as_ref()
            .map(|d| d.join("validation-cache.json"));
        let entries = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Cache {
            path,
            ttl: opts.cache_ttl,
            entries,
            dirty: false,
        }
    }

    pub(super) fn get(&self, hash: &str) -> Option<Validation> {
        let (at, v) = self.entries.get(hash)?;
        (unix_now().saturating_sub(*at) < self.ttl.as_secs()).then(|| v.clone())
    }

    pub(super) fn put(&mut self, hash: &str, v: &Validation) {
        self.entries
            .insert(hash.to_string(), (unix_now(), v.clone()));
        self.dirty = true;
    }

    /// Best effort: a cache that cannot be written costs only repeated requests.
    pub(super) fn save(&mut self) {
        let Some(path) = &self.path else { return };
        if !self.dirty {
            return;
        }
        let now = unix_now();
        let ttl = self.ttl.as_secs();
        self.entries
            .retain(|_, (at, _)| now.saturating_sub(*at) < ttl);
        let Ok(body) = serde_json::to_vec(&self.entries) else {
            return;
        };
        let _ = crate::write::private(path, &body);
    }
}
