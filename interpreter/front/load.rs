//! Loading: read a ruleset file, follow its `extends` and `import`s, and
//! merge everything into one list of items (overrides replace, removals
//! delete, `+=` rows are added, patched steps are inserted). The compiler
//! then sees one flat ruleset.

mod merge;

use crate::front::cache;
use crate::front::diagnostic::Diag;
use crate::front::source::{
    folder_or_here, read_text, FileKind, ReadError, Refused, Sources, Tree,
};
use crate::front::syntax::*;
use merge::Merged;
use std::path::{Path, PathBuf};

/// The standard library, embedded so that the binary runs from anywhere.
const STDLIB: &[(&str, &str)] = &[
    ("core", include_str!("../../stdlib/core.muster")),
    ("battle", include_str!("../../stdlib/battle.muster")),
];

/// Reusable hook helpers, written in rhai: every hook can call them, and a
/// hook may name one of these files as its script.
pub const STDLIB_SCRIPTS: &[(&str, &str)] =
    &[("hooks.rhai", include_str!("../../stdlib/hooks.rhai"))];

/// The text of a script file shipped in stdlib/.
pub fn stdlib_script(path: &str) -> Option<&'static str> {
    STDLIB_SCRIPTS
        .iter()
        .find(|(n, _)| *n == path)
        .map(|(_, t)| *t)
}

/// A ruleset's merged items, ready to compile.
#[derive(Debug, Default)]
pub struct Loaded {
    pub header: Option<Header>,
    pub items: Vec<Item>,
}

/// Load a ruleset from a path (following `extends` relative to it). The
/// file's folder is the tree the ruleset may read from.
pub fn load_path(path: &Path, sources: &mut Sources) -> Result<Loaded, Vec<Diag>> {
    load_path_noting(path, sources).map(|(l, _)| l)
}

/// How the loader came by one text of [`Sources`] (one per text, in the
/// order they were added): what [`reread`] follows again, without parsing,
/// to find the texts a load of the same files would read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Read {
    /// The ruleset file the load was given.
    Root,
    /// `extends "WRITTEN"` in a file of folder `here`.
    Extends { here: PathBuf, written: String },
    /// `import NAME`: a library of the standard library.
    Library(String),
    /// A hook's `script "WRITTEN"` in a file of `folder` (`None`: the
    /// standard library's): the file next to it, else stdlib/'s.
    Script {
        folder: Option<PathBuf>,
        written: String,
    },
}

/// [`load_path`], with how each text of `sources` was come by.
pub fn load_path_noting(
    path: &Path,
    sources: &mut Sources,
) -> Result<(Loaded, Vec<Read>), Vec<Diag>> {
    let shown = path.display().to_string();
    let text = read_text(path).map_err(|e| {
        let d = e.diag("muster::io", &shown);
        vec![match e {
            ReadError::Io(_) => d.help("check the path; rulesets live in rules/"),
            _ => d,
        }]
    })?;
    let real = path.canonicalize().ok();
    load_file(&shown, &text, path.parent(), real, sources)
}

/// The texts a load of the ruleset at `path` came by as `reads` says,
/// read again into `sources` as the loader reads them (the same files found
/// the same way, the same names), without parsing any; `None` when one
/// cannot be read or is found otherwise now (a script next to its ruleset
/// where stdlib/'s was read). A file's `extends`, `import`s and scripts
/// are fixed by its text: when every text read so is the one the load
/// read, the load would read these very files again.
pub fn reread(path: &Path, reads: &[Read], sources: &mut Sources) -> Option<()> {
    let dir = folder_or_here(path.parent());
    let tree = Tree::new(Some(dir));
    let nowhere = Span::default();
    for r in reads {
        match r {
            Read::Root => {
                let text = read_text(path).ok()?;
                sources.add_in(path.display().to_string(), text, Some(dir.to_path_buf()));
            }
            Read::Extends { here, written } => {
                let (p, _, text) = extends_text(&tree, here, written, nowhere).ok()?;
                sources.add_in(
                    p.display().to_string(),
                    text,
                    p.parent().map(Path::to_path_buf),
                );
            }
            Read::Library(k) => {
                let (_, t) = STDLIB.iter().find(|(n, _)| n == k)?;
                sources.add_in(format!("stdlib/{k}.muster"), *t, None);
            }
            Read::Script { folder, written } => {
                let (name, text) = script_text(&tree, folder.as_deref(), written, nowhere).ok()?;
                sources.add(name, text);
            }
        }
    }
    Some(())
}

/// The file `extends "WRITTEN"` names in a file of folder `here`: its
/// path as written (from `here`), its path with links followed, and its
/// text; else the diagnostics, at `span`.
fn extends_text(
    tree: &Tree,
    here: &Path,
    written: &str,
    span: Span,
) -> Result<(PathBuf, PathBuf, String), Vec<Diag>> {
    let label = "the ruleset this file extends";
    let cannot = |e: &dyn std::fmt::Display| {
        vec![
            Diag::new("muster::extends", format!("cannot read `{written}`: {e}"))
                .at(span, label)
                .help("paths in `extends` are relative to the file that names them"),
        ]
    };
    let real = match tree.resolve(here, written, FileKind::Ruleset) {
        Ok(real) => real,
        Err(Refused::Io(e)) => return Err(cannot(&e)),
        Err(r) => {
            let d = r.diag("muster::extends", written, FileKind::Ruleset);
            return Err(d.map(|d| d.at(span, label)).into_iter().collect());
        }
    };
    let text = match read_text(&real) {
        Ok(t) => t,
        Err(ReadError::Io(e)) => return Err(cannot(&e)),
        Err(e) => return Err(vec![e.diag("muster::extends", written).at(span, label)]),
    };
    Ok((here.join(written), real, text))
}

/// The text a hook's `script "WRITTEN"` in a file of `folder` names (a
/// .rhai file in the ruleset's tree next to that file, else stdlib/'s),
/// with its name; else the diagnostics, at `span`.
fn script_text(
    tree: &Tree,
    folder: Option<&Path>,
    path: &str,
    span: Span,
) -> Result<(String, String), Vec<Diag>> {
    let label = "the hook's script";
    let local = folder.map(|d| (d, tree.resolve(d, path, FileKind::Script)));
    match local {
        Some((d, Ok(real))) => match read_text(&real) {
            Ok(t) => Ok((d.join(path).display().to_string(), t)),
            Err(e) => {
                let d = e.diag("muster::hook", path).at(span, label);
                Err(vec![match e {
                    ReadError::Io(_) => d.help("check the file's permissions and encoding (UTF-8)"),
                    _ => d,
                }])
            }
        },
        // Not next to the file: the standard library's, if it has one.
        Some((_, Err(Refused::Io(e)))) if e.kind() == std::io::ErrorKind::NotFound => {
            stdlib_script_text(path, span)
        }
        None => stdlib_script_text(path, span),
        Some((_, Err(Refused::Io(e)))) => Err(vec![Diag::new(
            "muster::hook",
            format!("cannot read `{path}`: {e}"),
        )
        .at(span, label)
        .help("check the file's permissions and encoding (UTF-8)")]),
        Some((_, Err(r))) => {
            let d = r.diag("muster::hook", path, FileKind::Script);
            Err(d.map(|d| d.at(span, label)).into_iter().collect())
        }
    }
}

/// A script of stdlib/ by its file name, with its name; or a diagnostic.
fn stdlib_script_text(path: &str, span: Span) -> Result<(String, String), Vec<Diag>> {
    match stdlib_script(path) {
        Some(t) => Ok((format!("stdlib/{path}"), t.to_string())),
        None => Err(vec![Diag::new(
            "muster::hook",
            format!("there is no script `{path}`"),
        )
        .at(span, "not found next to this file nor in stdlib/")
        .help(
            "a hook's script file is named relative to the ruleset that declares it",
        )]),
    }
}

/// Load a ruleset from text; `dir` is where `extends` paths are looked up
/// (the current folder when `None`), and the tree the ruleset may read.
pub fn load_text(
    name: &str,
    text: &str,
    dir: Option<&Path>,
    sources: &mut Sources,
) -> Result<Loaded, Vec<Diag>> {
    load_file(name, text, dir, None, sources).map(|(l, _)| l)
}

fn load_file(
    name: &str,
    text: &str,
    dir: Option<&Path>,
    real: Option<PathBuf>,
    sources: &mut Sources,
) -> Result<(Loaded, Vec<Read>), Vec<Diag>> {
    let folder = folder_or_here(dir);
    let mut loader = Loader {
        sources,
        tree: Tree::new(Some(folder)),
        stack: Vec::new(),
        imported: Vec::new(),
        diags: Vec::new(),
        reads: Vec::new(),
    };
    let mut out = Draft::default();
    let file = Ruleset {
        name,
        text,
        folder: Some(folder.to_path_buf()),
        real,
        read: Read::Root,
    };
    loader.load(file, &mut out, None);
    if loader.diags.is_empty() {
        let loaded = Loaded {
            header: out.header,
            items: out.merged.finish(),
        };
        Ok((loaded, loader.reads))
    } else {
        Err(loader.diags)
    }
}

/// A ruleset being merged.
#[derive(Default)]
struct Draft {
    header: Option<Header>,
    merged: Merged,
}

/// One ruleset file to load.
struct Ruleset<'t> {
    /// As diagnostics name it.
    name: &'t str,
    text: &'t str,
    /// Where what it names is looked up (`None` for the standard library,
    /// which names no files).
    folder: Option<PathBuf>,
    /// Its path with links followed, when it was read from one.
    real: Option<PathBuf>,
    /// How it was come by.
    read: Read,
}

struct Loader<'a> {
    sources: &'a mut Sources,
    /// What the ruleset may read.
    tree: Tree,
    /// The files being loaded, outermost first: their names and real paths.
    stack: Vec<(String, Option<PathBuf>)>,
    imported: Vec<String>,
    diags: Vec<Diag>,
    /// How each text added to `sources` was come by.
    reads: Vec<Read>,
}

impl Loader<'_> {
    fn load(&mut self, file: Ruleset, out: &mut Draft, from: Option<Span>) {
        let Ruleset {
            name,
            text,
            folder,
            real,
            read,
        } = file;
        let again = self
            .stack
            .iter()
            .any(|(n, r)| n == name || (r.is_some() && *r == real));
        if again {
            let names: Vec<&str> = self.stack.iter().map(|(n, _)| n.as_str()).collect();
            let mut d = Diag::new(
                "muster::extends_cycle",
                format!("`{name}` extends itself through {}", names.join(" -> ")),
            )
            .help("a ruleset can extend another, but the chain must not loop back");
            if let Some(s) = from {
                d = d.at(s, "this extends closes the loop");
            }
            self.diags.push(d);
            return;
        }
        let file = self.sources.add_in(name, text, folder.clone());
        self.reads.push(read);
        // Through the parse cache when it is on, keyed by the real path
        // when there is one (the same file named two ways is one entry).
        let key = real.as_ref().map(|r| r.display().to_string());
        let parsed = match cache::parse(key.as_deref().unwrap_or(name), text, file) {
            Ok(f) => f,
            Err(d) => {
                self.diags.push(d);
                return;
            }
        };
        self.stack.push((name.to_string(), real));
        // The outermost file that names itself names the ruleset: a house
        // rule with its own `ruleset` line is itself, not its base.
        if out.header.is_none() {
            out.header = parsed.header.clone();
        }
        let extends_something = parsed
            .items
            .iter()
            .any(|i| matches!(i.kind, ItemKind::Extends(_)));
        out.merged.reserve(parsed.items.len());
        for item in parsed.items {
            match &item.kind {
                ItemKind::Extends(path) => self.extends(path, item.span, folder.as_deref(), out),
                ItemKind::Import(n) => self.import(n, out),
                _ => {
                    let mut item = item;
                    if let ItemKind::Hook(h) = &mut item.kind {
                        self.read_script(h, folder.as_deref());
                    }
                    out.merged.merge(item, extends_something, &mut self.diags)
                }
            }
        }
        self.stack.pop();
    }

    /// `extends "FILE"`: a .muster file in the ruleset's tree, named
    /// relative to the file that names it.
    fn extends(&mut self, written: &str, span: Span, folder: Option<&Path>, out: &mut Draft) {
        let here = folder.unwrap_or(Path::new("."));
        let (p, real, text) = match extends_text(&self.tree, here, written, span) {
            Ok(found) => found,
            Err(d) => return self.diags.extend(d),
        };
        let file = Ruleset {
            name: &p.display().to_string(),
            text: &text,
            folder: p.parent().map(Path::to_path_buf),
            real: Some(real),
            read: Read::Extends {
                here: here.to_path_buf(),
                written: written.to_string(),
            },
        };
        self.load(file, out, Some(span));
    }

    /// `import NAME`: a library of the standard library, merged once.
    fn import(&mut self, n: &Name, out: &mut Draft) {
        if self.imported.contains(&n.text) {
            return;
        }
        match STDLIB.iter().find(|(k, _)| *k == n.text) {
            Some((k, t)) => {
                self.imported.push(n.text.clone());
                let mut lib = Draft::default();
                let file = Ruleset {
                    name: &format!("stdlib/{k}.muster"),
                    text: t,
                    folder: None,
                    real: None,
                    read: Read::Library(k.to_string()),
                };
                self.load(file, &mut lib, Some(n.span));
                for item in lib.merged.finish() {
                    out.merged.push(item);
                }
            }
            None => self.diags.push(
                Diag::new(
                    "muster::import",
                    format!("there is no standard library `{}`", n.text),
                )
                .at(n.span, "unknown library")
                .help(format!(
                    "the standard library has: {}",
                    STDLIB
                        .iter()
                        .map(|(k, _)| *k)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            ),
        }
    }

    /// A hook's `script "FILE"`: read it (a .rhai file in the ruleset's
    /// tree, next to the file that names it, else from stdlib/) and make it
    /// an inline script in its own source.
    fn read_script(&mut self, h: &mut Hook, folder: Option<&Path>) {
        let Script::File { path, span } = &h.script else {
            return;
        };
        let (name, text) = match script_text(&self.tree, folder, path, *span) {
            Ok(found) => found,
            Err(d) => return self.diags.extend(d),
        };
        let len = text.len();
        let file = self.sources.add(name, text.as_str());
        self.reads.push(Read::Script {
            folder: folder.map(Path::to_path_buf),
            written: path.clone(),
        });
        h.script = Script::Inline {
            text,
            span: Span::new(file, 0, len),
        };
    }
}
