//! Decoded views of encoded text whose matches map back to spans of the original input.
//! A view is the decoded bytes plus, for every decoded byte, its offset in the original (and
//! one more entry: the original end), so a match `[s, e)` in the view is `[map[s], map[e])`.

pub mod json;

/// Decoded bytes and the map back to the original.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    pub bytes: Vec<u8>,
    /// `map[i]` is where decoded byte `i` starts in the original; `map[bytes.len()]` is the
    /// original end.
    pub map: Vec<usize>,
}

impl View {
    /// The original span of decoded span `[s, e)`.
    pub fn original(&self, s: usize, e: usize) -> (usize, usize) {
        (self.map[s], self.map[e])
    }

    /// Append another view (the next line of a notebook cell, say).
    pub fn extend(&mut self, other: &View) {
        self.map.pop();
        self.bytes.extend_from_slice(&other.bytes);
        self.map.extend_from_slice(&other.map);
    }
}
