//! leakhound finds credentials that leak where an AI code interpreter works: its output
//! streams, environment, images, the repositories it reads and writes.
//!
//! Data flows one way: [`source`] yields blobs, the [`engine`] finds matches in their bytes,
//! [`report`] turns them into findings and writes them. [`rules`] holds the rule model and the
//! embedded default set; [`policy`] the operator's allowlists and baselines; [`scan`] wires the
//! stages together; [`cli`] is the command line.

pub mod agents;
pub mod cli;
pub mod decode;
pub mod deliver;
pub mod detect;
pub mod engine;
pub mod filter;
#[doc(hidden)]
pub mod fuzzing;
pub mod hook;
pub mod model;
pub mod policy;
pub mod report;
pub mod respond;
pub mod rules;
pub mod scan;
pub mod scrub;
pub mod source;
pub mod sync;
#[cfg(test)]
mod testing;
pub mod validate;
pub mod write;
