//! Driving archives: each file inside is a blob of its own, named `outer!inner`, at the
//! outer blob's origin (a file, a commit, a layer), admitted like any other.

use super::admit::{self, Admission, Admit};
use super::run::{self, Run};
use super::{Archives, Scanner};
use crate::source::{self, archive::Event, Blob, Provenance};

impl Scanner {
    /// Each file inside an archive held whole.
    pub(super) fn archive(&self, run: &Run, blob: &Blob) {
        let Some(a) = &self.archives else {
            return;
        };
        let inside = |p| blob.provenance.with_path(p);
        let outer = blob.provenance.name();
        source::archive::expand(outer, &blob.data, &a.limits, &mut |e| {
            self.archive_event(run, a, &inside, e)
        });
    }

    /// One thing an archive held: a file scanned (whole or in chunks), a skip, a warning.
    pub(super) fn archive_event(
        &self,
        run: &Run,
        a: &Archives,
        provenance: &dyn Fn(String) -> Provenance,
        e: Event<'_>,
    ) {
        // Entries are admitted as files are; the archive's own limits bound their size.
        let opts = Admit {
            binary: a.binary,
            archives: true,
            max_size: None,
        };
        match e {
            Event::File { path, data } => {
                let blob = Blob {
                    provenance: provenance(path),
                    data,
                };
                self.file(run, blob, &opts);
            }
            Event::Stream { path, head, rest } => {
                let prov = provenance(path);
                let shown = prov.display();
                if self.policy.path_allowed(&shown) {
                    return;
                }
                let how = match admit::admit(prov.name(), &head, head.len() as u64, &opts) {
                    Admission::Skip(why) => return run.skip_as(run::unit(&prov), shown, why),
                    // The archive module names a nested archive too large to hold instead
                    // of handing it over; one that slips through is scanned as it is.
                    Admission::Archive(_) => admit::Reading::TEXT,
                    Admission::Scan(how) => how,
                };
                let (found, n, _) = self.chunked(run, &prov, head, rest, how);
                run.scanned(&prov, n, found);
            }
            Event::SkippedLarge { path, size } => {
                let prov = provenance(path);
                run.skip_as(run::unit(&prov), prov.display(), admit::Skip::Large(size))
            }
            Event::Warning { path, message } => run.warn(provenance(path).display(), message),
        }
    }
}
