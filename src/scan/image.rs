//! Driving container images: each config's fields and every layer's files, admitted like
//! files, including files a later layer deletes (whiteouts). A layer is scanned once per run,
//! however many images share it; its findings are repeated for each image that holds it.

use super::admit::{Admit, Skip};
use super::run::{self, Run};
use super::{ScanResults, Scanner};
use crate::model::{ImageLayers, Shard, ShardNotes, Warning, Whiteouts};
use crate::source::{image, Blob, Provenance};
use rayon::prelude::*;
use std::collections::HashMap;

/// What `Scanner::images` reads.
#[derive(Debug, Clone, Default)]
pub struct ImageOptions {
    pub registry: image::RegistryOptions,
    pub binary: bool,
    pub max_file_size: Option<u64>,
    /// Scan only the layers (by digest) and configs (by digest) this shard owns.
    pub shard: Shard,
}

impl Scanner {
    /// Scan container images: each config's fields and every layer's files, including files a
    /// later layer deletes. A layer is scanned once per run, however many images share it.
    pub fn images(
        &self,
        refs: &[String],
        opts: &ImageOptions,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) -> Result<ScanResults, image::ImageError> {
        let run = self.run(on_warning).keeping_all();
        let admit = self.admit_opts(opts.binary, opts.max_file_size);
        // Layer digest -> (the image that scanned it, its whiteouts).
        let mut scanned: HashMap<String, (String, Whiteouts)> = HashMap::new();
        for r in refs {
            let img = image::resolve(r, &opts.registry)?;
            // Every shard resolves every image; the config's owner reports on the image.
            let config =
                opts.shard.is_whole() || opts.shard.owns(&image::sha256_digest(&img.config));
            if config {
                for w in &img.warnings {
                    run.warn(r.clone(), w.clone());
                }
                match image::config_fields(&img.config) {
                    Ok(fields) => {
                        for (field, text) in fields {
                            let blob = Blob {
                                provenance: at(&img, None, field),
                                data: text.into_bytes(),
                            };
                            self.file(&run, blob, &admit);
                        }
                    }
                    Err(e) => run.warn(format!("{r}!config"), e.to_string()),
                }
            }
            // Layers in parallel; each is one stream, decompressed on its worker.
            let fresh: Vec<usize> = (0..img.layers.len())
                .filter(|&i| {
                    let d = &img.layers[i].digest;
                    !scanned.contains_key(d) && opts.shard.owns(d)
                })
                .collect();
            let whiteouts: Vec<(usize, Whiteouts)> = fresh
                .par_iter()
                .map(|&i| (i, self.layer(&run, &img, i, &admit)))
                .collect();
            for (i, w) in whiteouts {
                scanned.insert(img.layers[i].digest.clone(), (r.clone(), w));
            }
            let mut c = run.collected();
            if !opts.shard.is_whole() {
                // Another shard may read the layer that deletes a file found here: the notes
                // let the merge of the shards' reports say so.
                let notes = c.notes.get_or_insert_with(|| ShardNotes::new(opts.shard));
                notes.images.push(ImageLayers {
                    image: img.reference.clone(),
                    manifest: img.manifest_digest.clone(),
                    layers: img.layers.iter().map(|l| l.digest.clone()).collect(),
                });
                for &i in &fresh {
                    let d = &img.layers[i].digest;
                    notes.whiteouts.insert(d.clone(), scanned[d].1.clone());
                }
            }
            // Layers another image scanned first: their findings again, for this image.
            let mut again = Vec::new();
            for (i, l) in img.layers.iter().enumerate() {
                // A layer another shard owns is not here at all.
                let Some((first, _)) = scanned.get(&l.digest) else {
                    continue;
                };
                if fresh.contains(&i) {
                    continue;
                }
                for f in c.findings.iter().chain(&c.suppressed) {
                    if let Provenance::Image {
                        image,
                        layer_digest: Some(d),
                        ..
                    } = &f.provenance
                    {
                        if image == first && d == &l.digest {
                            let mut f = f.clone();
                            in_image(&mut f.provenance, &img, i);
                            again.push(f);
                        }
                    }
                }
            }
            run.keep(&mut c, again);
            // Files that a later layer deletes are still in the image: say so.
            let later = |i: usize| -> Whiteouts {
                img.layers[i + 1..]
                    .iter()
                    .filter_map(|l| scanned.get(&l.digest))
                    .flat_map(|(_, w)| w.iter().cloned())
                    .collect()
            };
            let c = &mut *c;
            for f in c.findings.iter_mut().chain(c.suppressed.iter_mut()) {
                if let Provenance::Image {
                    image,
                    manifest,
                    layer: Some(i),
                    path,
                    deleted,
                    ..
                } = &mut f.provenance
                {
                    if *image == img.reference && *manifest == img.manifest_digest {
                        let file = path.split('!').next().unwrap_or(path);
                        *deleted = image::whited_out(file, &later(*i));
                    }
                }
            }
        }
        Ok(run.finish())
    }

    /// One layer's files, admitted and scanned as they stream out; returns its whiteouts.
    fn layer(&self, run: &Run, img: &image::Image, i: usize, admit: &Admit) -> Whiteouts {
        let layer = &img.layers[i];
        let name = format!("{}!layer {i} ({})", img.reference, layer.digest);
        let mut whiteouts = Vec::new();
        let r = match img.open_layer(i) {
            Ok(r) => r,
            Err(e) => {
                run.failed(layer.digest.clone(), "error: layer unreadable");
                run.warn(name, e.to_string());
                return whiteouts;
            }
        };
        // The tar header's size is checked first: a file over the limit is never read.
        let walked = image::walk_layer(r, layer, admit.max_size, &mut |e| match e {
            image::LayerEvent::File { path, data } => {
                let blob = Blob {
                    provenance: at(img, Some(i), path),
                    data,
                };
                self.file(run, blob, admit);
            }
            image::LayerEvent::Whiteout { path, opaque } => whiteouts.push((path, opaque)),
            image::LayerEvent::SkippedLarge { path, size } => {
                let prov = at(img, Some(i), path);
                let shown = prov.display();
                if !self.policy.path_allowed(&shown) {
                    run.skip_as(run::unit(&prov), shown, Skip::Large(Some(size)));
                }
            }
        });
        match walked {
            Ok(None) => {}
            Ok(Some(mismatch)) => run.warn(name, mismatch),
            Err(e) => {
                // The files before the fault are listed scanned; the layer says it stopped.
                run.failed(layer.digest.clone(), "error: layer truncated or corrupt");
                run.warn(
                    name,
                    format!("layer unreadable (truncated or corrupt?); files before the fault were scanned: {e}"),
                )
            }
        }
        whiteouts
    }
}

/// A place in `img`: a file of layer `layer`, or (`None`) a field of its config.
fn at(img: &image::Image, layer: Option<usize>, path: String) -> Provenance {
    Provenance::Image {
        image: img.reference.clone(),
        manifest: img.manifest_digest.clone(),
        layer,
        layer_digest: layer.map(|i| img.layers[i].digest.clone()),
        path,
        deleted: false,
        variable: None,
        cell: None,
        output: None,
        field: None,
    }
}

/// A finding's place moved to layer `i` of `img` (a layer it shares with an image scanned
/// before), keeping where in the file it is (its variable, its notebook cell).
fn in_image(p: &mut Provenance, img: &image::Image, i: usize) {
    if let Provenance::Image {
        image,
        manifest,
        layer,
        layer_digest,
        deleted,
        ..
    } = p
    {
        *image = img.reference.clone();
        *manifest = img.manifest_digest.clone();
        *layer = Some(i);
        *layer_digest = Some(img.layers[i].digest.clone());
        *deleted = false;
    }
}
