//! The texts a ruleset was built from (the file itself, what it extends and
//! imports, the situation file), so that every diagnostic can show its span.

use crate::syntax::{FileId, Span};
use std::sync::Arc;

/// One loaded text.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: Arc<str>,
}

/// All loaded texts, indexed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct Sources {
    files: Vec<Source>,
}

impl Sources {
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        self.files.push(Source {
            name: name.into(),
            text: text.into(),
        });
        FileId(self.files.len() as u32 - 1)
    }
    pub fn get(&self, id: FileId) -> &Source {
        &self.files[id.0 as usize]
    }
    /// The text a span covers.
    pub fn slice(&self, span: Span) -> &str {
        let text = &self.get(span.file).text;
        text.get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }
    pub fn len(&self) -> usize {
        self.files.len()
    }
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}
