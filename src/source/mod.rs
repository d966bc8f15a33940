//! Inputs: each kind yields blobs (bytes with provenance). Sources read; they do not scan or
//! format.

pub mod archive;
pub mod env;
pub mod fs;
pub mod git;
pub mod image;
pub mod notebook;
pub mod runtime;

pub use crate::model::Provenance;

/// Bytes of one input, held in memory. Large inputs are never memory-mapped (a file truncated
/// while mapped raises SIGBUS); they are read and scanned in chunks instead.
pub enum Data {
    Owned(Vec<u8>),
}

impl std::ops::Deref for Data {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Data::Owned(v) => v,
        }
    }
}

/// One unit of input for the engine.
pub struct Blob {
    pub provenance: Provenance,
    pub data: Data,
}
