//! Files the command line writes for the user (the pictures of a battle):
//! into a folder the user names, replacing only the files it writes itself,
//! never deleting or overwriting anything else. A file is written beside
//! its final name under a name no one else uses, then renamed over it, so
//! a failure never leaves a half-written picture under the final name.

use crate::front::diagnostic::Diag;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The version of every JSON document the command line prints (docs/json.md
/// and the schemas in docs/schemas/): raised when a field changes meaning
/// or goes away, not when one is added.
pub const SCHEMA_VERSION: u32 = 1;

/// A JSON document the command line prints: `schema_version` and `kind`
/// (which command made it, and so which schema it follows) first, then
/// `fields` (an object) in their order.
pub fn json_document(kind: &str, fields: serde_json::Value) -> serde_json::Value {
    let mut doc = serde_json::Map::new();
    doc.insert("schema_version".into(), SCHEMA_VERSION.into());
    doc.insert("kind".into(), kind.into());
    if let serde_json::Value::Object(f) = fields {
        doc.extend(f);
    }
    serde_json::Value::Object(doc)
}

/// What [`write_into`] wrote, and what it found and left alone.
#[derive(Debug, Default)]
pub struct Written {
    /// The files written, in order.
    pub files: Vec<PathBuf>,
    /// Whether the folder was made for them.
    pub made_folder: bool,
    /// Files in the folder that `ours` claims but this run did not write
    /// (from an earlier, longer battle): left as they were.
    pub left: Vec<String>,
}

/// Write `files` (name, contents) into the folder `dir`, making it if it
/// is missing. A file of the same name is replaced; nothing else in the
/// folder is touched. `ours` says which names the program writes (e.g.
/// `turn-NN.svg`), to report those of an earlier run left in place.
///
/// Refused before anything is written: `dir` exists and is not a folder,
/// or one of the names is taken by something other than a plain file.
pub fn write_into(
    dir: &Path,
    files: &[(String, String)],
    ours: impl Fn(&str) -> bool,
) -> Result<Written, Diag> {
    let mut out = Written::default();
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => {
            return Err(Diag::new(
                "muster::output",
                format!("{} is not a folder", dir.display()),
            )
            .help(
                "name a folder (new or existing) for the pictures; a file there is never replaced",
            ))
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| cannot(dir, &e))?;
            out.made_folder = true;
        }
        Err(e) => return Err(cannot(dir, &e)),
    }
    for (name, _) in files {
        let path = dir.join(name);
        if let Ok(m) = std::fs::symlink_metadata(&path) {
            if !m.is_file() {
                return Err(Diag::new(
                    "muster::output",
                    format!("{} is in the way: it is not a plain file", path.display()),
                )
                .help(
                    "move it, or name another folder; the program replaces only files it writes",
                ));
            }
        }
    }
    for (name, text) in files {
        let path = dir.join(name);
        write_one(&path, text.as_bytes()).map_err(|e| cannot(&path, &e))?;
        out.files.push(path);
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut left: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| ours(n) && !files.iter().any(|(f, _)| f == n))
            .collect();
        left.sort();
        out.left = left;
    }
    Ok(out)
}

/// Write `text` to the file `path`, making its folder if missing. An
/// existing file is replaced only when `ours` says the program wrote it
/// (it is given the file's first 4 KiB); anything else there is refused
/// before anything is written.
pub fn write_file(path: &Path, text: &str, ours: impl Fn(&str) -> bool) -> Result<(), Diag> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(Diag::new(
                "muster::output",
                format!("{} is in the way: it is not a plain file", path.display()),
            )
            .help("name another file; the program replaces only files it wrote"))
        }
        Ok(_) => {
            let mut head = Vec::new();
            let read = std::fs::File::open(path).and_then(|f| {
                use std::io::Read;
                f.take(4096).read_to_end(&mut head)
            });
            if read.is_err() || !ours(&String::from_utf8_lossy(&head)) {
                return Err(Diag::new(
                    "muster::output",
                    format!(
                        "{} already exists and is not a file this program wrote",
                        path.display()
                    ),
                )
                .help("name a new file (or remove this one yourself); the program replaces only files it wrote"));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| cannot(dir, &e))?;
            }
        }
        Err(e) => return Err(cannot(path, &e)),
    }
    write_one(path, text.as_bytes()).map_err(|e| cannot(path, &e))
}

/// Write one file: to a new file beside it (created, never opened if it
/// exists), then renamed over the final name. The new file is removed if
/// anything fails.
fn write_one(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let mut k = 0u32;
    let (tmp, mut f) = loop {
        let tmp = dir.join(format!(".{name}.{}-{k}.partial", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && k < 100 => k += 1,
            Err(e) => return Err(e),
        }
    };
    let written = f
        .write_all(bytes)
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn cannot(path: &Path, e: &std::io::Error) -> Diag {
    Diag::new(
        "muster::output",
        format!("cannot write {}: {e}", path.display()),
    )
    .help("check that the folder can be written and the disk has room")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("muster-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn turn(n: &str) -> bool {
        n.starts_with("turn-") && n.ends_with(".svg")
    }

    #[test]
    fn writes_beside_what_is_there_and_keeps_it() {
        let d = scratch("keep");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        std::fs::write(d.join("turn-01.svg"), "old").unwrap();
        std::fs::write(d.join("turn-09.svg"), "older").unwrap();
        let files = vec![
            ("turn-00.svg".to_string(), "a".to_string()),
            ("turn-01.svg".to_string(), "b".to_string()),
        ];
        let w = write_into(&d, &files, turn).unwrap();
        assert!(!w.made_folder);
        assert_eq!(w.files.len(), 2);
        assert_eq!(w.left, vec!["turn-09.svg".to_string()]);
        assert_eq!(
            std::fs::read_to_string(d.join("notes.txt")).unwrap(),
            "mine"
        );
        assert_eq!(std::fs::read_to_string(d.join("turn-01.svg")).unwrap(), "b");
        assert_eq!(
            std::fs::read_to_string(d.join("turn-09.svg")).unwrap(),
            "older"
        );
        assert!(d.join("sub").is_dir());
        // Nothing else was left behind.
        let mut names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "notes.txt",
                "sub",
                "turn-00.svg",
                "turn-01.svg",
                "turn-09.svg"
            ]
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn refuses_a_file_and_a_folder_in_the_way() {
        let d = scratch("refuse");
        std::fs::create_dir_all(&d).unwrap();
        let file = d.join("pictures");
        std::fs::write(&file, "mine").unwrap();
        let files = vec![("turn-00.svg".to_string(), "a".to_string())];
        let e = write_into(&file, &files, turn).unwrap_err();
        assert!(e.message.ends_with("is not a folder"), "{}", e.message);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
        std::fs::create_dir_all(d.join("out/turn-00.svg")).unwrap();
        let e = write_into(&d.join("out"), &files, turn).unwrap_err();
        assert!(e.message.contains("is in the way"), "{}", e.message);
        assert!(d.join("out/turn-00.svg").is_dir());
        let names: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
        assert_eq!(names.len(), 2, "nothing written beside: {names:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn makes_a_missing_folder() {
        let d = scratch("make").join("a/b");
        let files = vec![("turn-00.svg".to_string(), "a".to_string())];
        let w = write_into(&d, &files, turn).unwrap();
        assert!(w.made_folder);
        assert_eq!(std::fs::read_to_string(d.join("turn-00.svg")).unwrap(), "a");
        std::fs::remove_dir_all(d.parent().unwrap().parent().unwrap()).unwrap();
    }
}
