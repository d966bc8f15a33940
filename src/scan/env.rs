//! Driving environments: each is already parsed into variables, so it skips the admission
//! (its origin may be any file name) and goes straight to the content pipeline as text.

use super::{ScanResults, Scanner};
use crate::source::{env::Environment, Provenance};

impl Scanner {
    /// Scan environments; each finding names its variable.
    pub fn environments(&self, envs: &[Environment]) -> ScanResults {
        // Parsing an environment warns about nothing; the dumps were read by the caller.
        let run = self.run(&|_| {});
        for env in envs {
            for name in env.unreadable_names() {
                run.warn(
                    env.origin.clone(),
                    format!(
                        "variable {name:?}: its name is not UTF-8; scanned, and named with \
                         U+FFFD for each byte that is not"
                    ),
                );
            }
            let blob = env.blob();
            let found = self
                .whole(&run, &blob)
                .into_iter()
                .map(|mut f| {
                    f.provenance = Provenance::Env {
                        origin: env.origin.clone(),
                        variable: env.variable(f.line).unwrap_or_default(),
                    };
                    let line = env.file_line(f.line);
                    f.end_line = line + (f.end_line - f.line);
                    f.line = line;
                    f
                })
                .collect();
            let n = env.file.as_ref().map_or(blob.data.len() as u64, |f| f.1);
            run.scanned(&blob.provenance, n, found);
        }
        run.finish()
    }

    /// Scan blobs held in memory (what a runtime's credential endpoints answered), each as
    /// text; `warnings` (path, message) join the report.
    pub fn held(
        &self,
        blobs: &[crate::source::Blob],
        warnings: &[(String, String)],
    ) -> ScanResults {
        let run = self.run(&|_| {});
        for (path, message) in warnings {
            run.warn(path.clone(), message.clone());
        }
        for blob in blobs {
            run.scanned(
                &blob.provenance,
                blob.data.len() as u64,
                self.whole(&run, blob),
            );
        }
        run.finish()
    }
}
