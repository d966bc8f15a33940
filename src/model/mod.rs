//! The finding model: what every stage after the engine fills in and every writer reads.
//! Plain data and the rules that make it (fingerprints, contexts, redaction); it knows no
//! stage, source or flag.

mod provenance;

pub use provenance::{Commit, Provenance};
