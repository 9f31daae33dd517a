//! The texts a ruleset was built from (the file itself, what it extends and
//! imports, the situation file), so that every diagnostic can show its span;
//! and how the program reads a file: every input goes through
//! [`read_text`] (a size cap, UTF-8), and every file a ruleset names goes
//! through [`Tree::resolve`] first (its own folder tree only).

use crate::front::diagnostic::Diag;
use crate::front::syntax::{FileId, Span};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// One loaded text.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: Arc<str>,
    /// The folder of the file the text was read from, when it is a ruleset
    /// file (what it names, e.g. its `default_scenario`, is found from here).
    pub folder: Option<PathBuf>,
}

/// All loaded texts, indexed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct Sources {
    files: Vec<Source>,
}

impl Sources {
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        self.add_in(name, text, None)
    }
    /// Add a text read from a file in `folder`.
    pub fn add_in(
        &mut self,
        name: impl Into<String>,
        text: impl Into<Arc<str>>,
        folder: Option<PathBuf>,
    ) -> FileId {
        self.files.push(Source {
            name: name.into(),
            text: text.into(),
            folder,
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

// ------------------------------------------------------------ reading files

/// The most bytes the program reads from any one input file (a ruleset,
/// what it extends, a hook's script, a scenario, a situation, a roster):
/// 16 MiB, hundreds of times the largest shipped ruleset, yet small enough
/// that a file naming `/dev/zero` or an endless pipe stops at once.
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// Why a file could not be read as text.
#[derive(Debug)]
pub enum ReadError {
    /// The system refused: missing, no permission, ...
    Io(io::Error),
    /// A folder, not a file.
    Folder,
    /// More than [`MAX_FILE_BYTES`].
    TooLarge,
    /// Not UTF-8 text: the offset of the first byte that is not.
    NotUtf8(usize),
}

impl ReadError {
    /// The diagnostic for a file the user knows as `shown` (the caller adds
    /// the place that names the file, when there is one).
    pub fn diag(&self, code: &'static str, shown: &str) -> Diag {
        match self {
            ReadError::Io(e) => Diag::new(code, format!("cannot read `{shown}`: {e}"))
                .help("check the path and the file's permissions"),
            ReadError::Folder => Diag::new(code, format!("`{shown}` is a folder, not a file"))
                .help("name a file inside it"),
            ReadError::TooLarge => Diag::new(
                code,
                format!(
                    "`{shown}` is larger than {} MiB, the most read from one file",
                    MAX_FILE_BYTES >> 20
                ),
            )
            .help("no ruleset, scenario, situation or roster is nearly this large; check that the path names the file you meant"),
            ReadError::NotUtf8(at) => Diag::new(
                code,
                format!("`{shown}` is not UTF-8 text (byte {at} is not)"),
            )
            .help("check the path: it may name the wrong file, or one that is not text at all (a binary, an image, a compressed file); a text file in another encoding, save as UTF-8"),
        }
    }
}

/// Read a text file for the program: at most [`MAX_FILE_BYTES`] (read
/// through `take`, so that a device or a pipe that never ends cannot feed it
/// forever), a folder refused, invalid UTF-8 an error. Any readable file
/// may be given (even `/dev/stdin`); files a ruleset names are checked by
/// [`Tree::resolve`] before they get here.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    if let Some(text) = overlaid(path) {
        return Ok(text);
    }
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_dir() {
        return Err(ReadError::Folder);
    }
    let cap = MAX_FILE_BYTES as u64;
    // A regular file's size is known: refuse a large one without reading it.
    if meta.is_file() && meta.len() > cap {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8(e.utf8_error().valid_up_to()))
}

thread_local! {
    /// Texts an editor holds unsaved (`muster lsp`), by canonical path:
    /// read in place of the files on this thread, so that a house rule is
    /// checked against the base as the editor shows it. Empty elsewhere.
    static OVERLAY: std::cell::RefCell<std::collections::HashMap<PathBuf, Arc<str>>> =
        Default::default();
}

/// Read `texts` (canonical path, text) in place of those files on this
/// thread until the next call (see [`read_text`]); the language server
/// sets it before each analysis and never writes a file.
pub fn set_overlay(texts: std::collections::HashMap<PathBuf, Arc<str>>) {
    OVERLAY.with(|o| *o.borrow_mut() = texts);
}

/// The unsaved text standing in for `path`, if any.
fn overlaid(path: &Path) -> Option<String> {
    OVERLAY.with(|o| {
        let o = o.borrow();
        if o.is_empty() {
            return None;
        }
        let real = path.canonicalize().ok()?;
        o.get(&real).map(|t| t.to_string())
    })
}

// ------------------------------------------------- what a ruleset may read

/// The kinds of file a ruleset names, each read only from a regular file
/// with its own extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `extends "FILE.muster"`
    Ruleset,
    /// a hook's `script "FILE.rhai"`
    Script,
    /// `default_scenario "FILE.toml"`
    Scenario,
}

impl FileKind {
    fn extension(self) -> &'static str {
        match self {
            FileKind::Ruleset => "muster",
            FileKind::Script => "rhai",
            FileKind::Scenario => "toml",
        }
    }
    fn reads(self) -> &'static str {
        match self {
            FileKind::Ruleset => "`extends` reads only rulesets (.muster files)",
            FileKind::Script => "a hook's `script` reads only rhai scripts (.rhai files)",
            FileKind::Scenario => "`default_scenario` reads only scenario files (.toml files)",
        }
    }
}

/// Why a file a ruleset names is not read.
#[derive(Debug)]
pub enum Refused {
    /// An absolute path.
    Absolute,
    /// A `..` that leaves the tree.
    Leaves,
    /// A symbolic link (the file or a folder on its way) that leads out of
    /// the tree.
    LinksOut,
    /// Not the kind's extension (`target` when a link leads to it).
    Extension { target: Option<PathBuf> },
    /// A folder, a device, a pipe or a socket.
    NotAFile { folder: bool },
    /// The path cannot be followed (missing, no permission, ...).
    Io(io::Error),
}

/// Why rulesets may not read outside their tree, said in every refusal.
const CONFINED: &str = "shared rulesets may read only their own folder tree and stdlib/";

impl Refused {
    /// The diagnostic for `written`, as the ruleset names it (the caller
    /// adds the place). `Io` is the caller's to word (`None` here).
    pub fn diag(&self, code: &'static str, written: &str, kind: FileKind) -> Option<Diag> {
        let ext = kind.extension();
        Some(match self {
            Refused::Absolute => Diag::new(code, format!("`{written}` is an absolute path"))
                .help(format!("{CONFINED}: name the file relative to the ruleset's folder")),
            Refused::Leaves => Diag::new(code, format!("`{written}` leads out of the ruleset's folder"))
                .help(format!("{CONFINED}: put the file inside the folder of the ruleset you run (a house rule beside the ruleset it extends)")),
            Refused::LinksOut => Diag::new(code, format!("`{written}` leads out of the ruleset's folder through a symbolic link"))
                .help(format!("{CONFINED}: copy the file into the folder instead of linking to it")),
            Refused::Extension { target: None } => Diag::new(code, format!("`{written}` is not a .{ext} file"))
                .help(kind.reads().to_string()),
            Refused::Extension { target: Some(t) } => Diag::new(code, format!("`{written}` is a link to `{}`, not a .{ext} file", t.display()))
                .help(kind.reads().to_string()),
            Refused::NotAFile { folder: true } => Diag::new(code, format!("`{written}` is a folder, not a file"))
                .help(format!("{}; name a file", kind.reads())),
            Refused::NotAFile { folder: false } => Diag::new(code, format!("`{written}` is not a regular file (a device, a pipe or a socket)"))
                .help(format!("{} from regular files", kind.reads())),
            Refused::Io(_) => return None,
        })
    }
}

/// The folder tree a ruleset may read from: the folder of the ruleset file
/// the user named. `extends`, a hook's `script` and `default_scenario`
/// resolve inside it (stdlib/ is embedded in the program and needs no path).
#[derive(Clone, Debug)]
pub struct Tree {
    /// The folder with symbolic links followed; `Err` when it cannot be.
    root: Result<PathBuf, String>,
}

impl Tree {
    /// The tree under `folder` (`None` or an empty path: the current folder).
    pub fn new(folder: Option<&Path>) -> Tree {
        let folder = folder_or_here(folder);
        Tree {
            root: folder.canonicalize().map_err(|e| e.to_string()),
        }
    }

    /// The file `written` names, as a file in folder `from` (inside the
    /// tree) names it: checked without opening anything, so that nothing
    /// of a refused file is read. Refused: an absolute path; a `..` that
    /// leaves the tree (at any point of the path); another extension than
    /// the kind's; a symbolic link leading out of the tree; anything but a
    /// regular file. The path returned has its links followed.
    pub fn resolve(&self, from: &Path, written: &str, kind: FileKind) -> Result<PathBuf, Refused> {
        let rel = Path::new(written);
        if rel.has_root() || rel.is_absolute() {
            return Err(Refused::Absolute);
        }
        let root = self
            .root
            .as_ref()
            .map_err(|e| Refused::Io(io::Error::other(format!("the ruleset's folder: {e}"))))?;
        let from = folder_or_here(Some(from));
        let mut at = from.canonicalize().map_err(Refused::Io)?;
        if !at.starts_with(root) {
            return Err(Refused::Leaves);
        }
        for c in rel.components() {
            match c {
                Component::Normal(part) => at.push(part),
                Component::ParentDir => {
                    at.pop();
                    if !at.starts_with(root) {
                        return Err(Refused::Leaves);
                    }
                }
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => return Err(Refused::Absolute),
            }
        }
        if !has_extension(rel, kind) {
            return Err(Refused::Extension { target: None });
        }
        let real = from.join(rel).canonicalize().map_err(Refused::Io)?;
        if !real.starts_with(root) {
            return Err(Refused::LinksOut);
        }
        if !has_extension(&real, kind) {
            let shown = real.strip_prefix(root).unwrap_or(&real).to_path_buf();
            return Err(Refused::Extension {
                target: Some(shown),
            });
        }
        let meta = std::fs::metadata(&real).map_err(Refused::Io)?;
        if !meta.is_file() {
            return Err(Refused::NotAFile {
                folder: meta.is_dir(),
            });
        }
        Ok(real)
    }
}

/// A folder to look things up from: an empty path (a bare file name's
/// parent) is the current folder.
pub fn folder_or_here(folder: Option<&Path>) -> &Path {
    match folder {
        Some(f) if !f.as_os_str().is_empty() => f,
        _ => Path::new("."),
    }
}

fn has_extension(path: &Path, kind: FileKind) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case(kind.extension()))
}
