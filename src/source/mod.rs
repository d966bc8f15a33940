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

/// One unit of input for the engine: bytes held in memory. Large inputs are never
/// memory-mapped (a file truncated while mapped raises SIGBUS); they are read and scanned in
/// chunks instead.
pub struct Blob {
    pub provenance: Provenance,
    pub data: Vec<u8>,
}
