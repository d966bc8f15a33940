//! Jupyter notebooks: the text of every cell's source and outputs, each with the raw span it
//! came from, so findings carry the notebook's own line numbers. Image and other binary
//! outputs are skipped.

use crate::decode::json::{strings, unescape, Step};
use crate::decode::View;

/// One scannable field of a notebook.
pub struct Part {
    pub cell: Option<usize>,
    pub output: Option<usize>,
    /// `source`, `text`, `traceback`, a MIME type such as `text/plain`, or a metadata path.
    pub field: String,
    pub view: View,
}

/// Output MIME types that hold no text worth scanning.
fn binary_mime(m: &str) -> bool {
    m.starts_with("image/")
        || m.starts_with("audio/")
        || m.starts_with("video/")
        || matches!(
            m,
            "application/pdf" | "application/octet-stream" | "application/zip"
        )
}

/// The parts of a notebook, or `None` when it is not valid JSON.
pub fn parts(doc: &[u8]) -> Option<Vec<Part>> {
    let mut out: Vec<Part> = Vec::new();
    for s in strings(doc)? {
        let (cell, output, field) = match s.path.as_slice() {
            [Step::Key(c), Step::Index(i), rest @ ..] if c == "cells" => match rest {
                [Step::Key(k), ..] if k == "attachments" => continue,
                [Step::Key(k), ..] if k == "source" => (Some(*i), None, "source".to_string()),
                [Step::Key(k), Step::Index(o), Step::Key(d), Step::Key(mime), ..]
                    if k == "outputs" && d == "data" =>
                {
                    if binary_mime(mime) {
                        continue;
                    }
                    (Some(*i), Some(*o), mime.clone())
                }
                [Step::Key(k), Step::Index(o), Step::Key(f), ..] if k == "outputs" => {
                    (Some(*i), Some(*o), f.clone())
                }
                other => (Some(*i), None, path_name(other)),
            },
            other => (None, None, path_name(other)),
        };
        let view = unescape(&doc[s.start..s.end], s.start);
        // Lines of one multi-line field are one text, so a secret may span them.
        match out.last_mut() {
            Some(p) if p.cell == cell && p.output == output && p.field == field => {
                p.view.extend(&view)
            }
            _ => out.push(Part {
                cell,
                output,
                field,
                view,
            }),
        }
    }
    Some(out)
}

fn path_name(steps: &[Step]) -> String {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Key(k) => Some(k.as_str()),
            Step::Index(_) => None,
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_outputs_and_images() {
        let nb = br#"{"cells": [
          {"cell_type": "code", "source": ["import os\n", "key = 1\n"],
           "outputs": [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]},
                       {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]}}]}
        ], "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4}"#;
        let p = super::parts(nb).unwrap();
        let fields: Vec<(Option<usize>, Option<usize>, &str)> = p
            .iter()
            .map(|p| (p.cell, p.output, p.field.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                (Some(0), None, "cell_type"),
                (Some(0), None, "source"),
                (Some(0), Some(0), "output_type"),
                (Some(0), Some(0), "name"),
                (Some(0), Some(0), "text"),
                (Some(0), Some(1), "output_type"),
                (Some(0), Some(1), "text/plain"),
                (None, None, "metadata.kernelspec.name"),
            ]
        );
        assert_eq!(p[1].view.bytes, b"import os\nkey = 1\n");
    }
}
