//! `muster check --watch`: check the rulesets, and work out the exact odds
//! of the situations that read against each (the situation files of the
//! ruleset's folder and of its situations/ folder), then again on every
//! save in those folders, printing only what changed: a ruleset's verdict
//! (ok, or its diagnostics) and each situation's odds line.

use crate::cli::lsp::situation;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long to wait after a change for the others of the same save (an
/// editor writes a file, then renames it, then touches it).
const SETTLE: Duration = Duration::from_millis(150);

/// What was last shown, by what it is about (a ruleset, or a situation
/// under a ruleset), in the order shown.
type Shown = BTreeMap<(String, String), String>;

/// Watch `rulesets` until the program is stopped or `print` fails (it
/// returns false); the first report shows everything, each later one only
/// what changed.
pub fn run(rulesets: &[PathBuf], print: &mut dyn FnMut(&str) -> bool) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher = notify::recommended_watcher(tx).map_err(|e| e.to_string())?;
    use notify::Watcher;
    let mut folders: Vec<PathBuf> = rulesets.iter().map(|r| folder(r)).collect();
    folders.sort();
    folders.dedup();
    for f in &folders {
        watcher
            .watch(f, notify::RecursiveMode::Recursive)
            .map_err(|e| format!("cannot watch `{}`: {e}", f.display()))?;
    }
    let mut shown = Shown::new();
    loop {
        let now = report(rulesets);
        for (key, text) in &now {
            if shown.get(key) != Some(text) && !print(text) {
                return Ok(());
            }
        }
        for key in shown.keys() {
            if !now.contains_key(key) && !print(&format!("{}: no longer read", key.1)) {
                return Ok(());
            }
        }
        shown = now;
        // Wait for a save: a change to a file, not a read of one.
        loop {
            match rx.recv() {
                Ok(Ok(e)) if saved(&e) => break,
                Ok(_) => {}
                Err(_) => return Err("the file watcher stopped".into()),
            }
        }
        while rx.recv_timeout(SETTLE).is_ok() {}
    }
}

/// The folder a ruleset lives in (`.` for a bare file name).
fn folder(ruleset: &Path) -> PathBuf {
    match ruleset.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether an event is a change to a ruleset, situation or script.
fn saved(e: &notify::Event) -> bool {
    use notify::EventKind;
    matches!(
        e.kind,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
    ) && e.paths.iter().any(|p| {
        p.extension()
            .is_some_and(|x| x == "muster" || x == "toml" || x == "rhai")
    })
}

/// Everything to show now: each ruleset's verdict, then the odds line of
/// each situation it reads.
fn report(rulesets: &[PathBuf]) -> Shown {
    let mut out = Shown::new();
    for r in rulesets {
        let name = r.display().to_string();
        match crate::check(r) {
            Err((d, s)) => {
                let n = crate::problems(&d);
                let text = format!(
                    "{name}: {n} problem{}\n{}",
                    if n == 1 { "" } else { "s" },
                    crate::front::diagnostic::render_plain(&d, &s).trim_end()
                );
                out.insert((name.clone(), String::new()), text);
            }
            Ok(mut b) => {
                out.insert((name.clone(), String::new()), format!("{name}: ok"));
                for s in situations(r) {
                    let Ok(text) = crate::front::source::read_text(&s) else {
                        continue;
                    };
                    if !situation::is_situation(&s, &text) {
                        continue;
                    }
                    if let Some(o) = situation::under(&mut b, r, &s, &text) {
                        let shown = s.display().to_string();
                        out.insert(
                            (name.clone(), shown.clone()),
                            format!("{shown}: {}", o.line),
                        );
                    }
                }
            }
        }
    }
    out
}

/// The .toml files of a ruleset's folder and of its situations/ folder.
fn situations(ruleset: &Path) -> Vec<PathBuf> {
    let dir = folder(ruleset);
    let mut out = Vec::new();
    for d in [dir.clone(), dir.join("situations")] {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        out.extend(
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml")),
        );
    }
    out.sort();
    out
}
