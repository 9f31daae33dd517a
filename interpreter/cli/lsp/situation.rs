//! A situation file's odds in the editor: a situation (rules/situations/
//! *.toml) does not name its ruleset, so the server reads it against each
//! ruleset of its folder and the folder above (rules/situations/ sits in
//! rules/), and shows the exact odds under each that reads it, as
//! `muster odds` would print them.

use crate::cli::odds_report::Report;
use crate::run::odds::{ExactError, Method};
use std::path::{Path, PathBuf};

/// The odds of one situation under one ruleset.
pub struct Odds {
    /// The ruleset's file.
    pub ruleset: PathBuf,
    /// One line: the ruleset, the procedure and the first outcome's values
    /// with their exact chances (a code lens's title).
    pub line: String,
    /// The whole table `muster odds` prints (a hover shows it).
    pub table: String,
}

/// Whether `text` reads as a situation: a TOML file that names a procedure.
pub fn is_situation(path: &Path, text: &str) -> bool {
    path.extension().is_some_and(|e| e == "toml")
        && text
            .lines()
            .any(|l| l.trim_start().starts_with("procedure"))
}

/// The rulesets a situation at `path` may be read against: the .muster
/// files of its folder and of the folder above, in name order.
pub fn candidates(path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let here = path.parent();
    for dir in [here, here.and_then(Path::parent)].into_iter().flatten() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "muster") && p.is_file())
            .collect();
        found.sort();
        out.extend(found);
    }
    out
}

/// The situation `text` (the file at `path`) under each candidate ruleset
/// that reads it (see [`under`]); a ruleset that does not compile is left
/// out.
pub fn odds(path: &Path, text: &str) -> Vec<Odds> {
    candidates(path)
        .into_iter()
        .filter_map(|r| {
            let mut b = crate::build(&r).ok()?;
            under(&mut b, &r, path, text)
        })
        .collect()
}

/// The situation `text` (the file at `path`) under the ruleset `b` (the
/// file `ruleset`): exact odds, or its scripted rolls' result; none when
/// the ruleset does not read it. A situation too large to count exactly,
/// or whose run fails, says so in its line.
pub fn under(b: &mut crate::Build, ruleset: &Path, path: &Path, text: &str) -> Option<Odds> {
    let s = b.situation(&path.display().to_string(), text).ok()?;
    let stem = ruleset
        .file_stem()
        .map_or(String::new(), |s| s.to_string_lossy().into_owned());
    let result = if s.rolls.is_some() {
        b.scripted(&s).map_err(|d| d.message)
    } else {
        b.program(&s).map_err(|d| d.message).and_then(|prog| {
            match crate::run::odds::exact(&b.ruleset, &prog) {
                Ok(o) => Ok(o),
                Err(ExactError::TooMany(why)) => {
                    Err(format!("{why}; run `muster odds --samples N` to sample it"))
                }
                Err(ExactError::Fault(d)) => Err(d.message),
            }
        })
    };
    let procedure = s.procedure.map_or(String::new(), |p| {
        b.ruleset.procedures[p as usize].name.clone()
    });
    let (line, table) = match result {
        Ok(o) => {
            let report = Report::new(&b.ruleset, &s.world, &procedure, &o);
            (
                summary(&stem, &report),
                report.text(s.description.as_deref()),
            )
        }
        Err(why) => (format!("{stem}: {procedure}: {why}"), why),
    };
    Some(Odds {
        ruleset: ruleset.to_path_buf(),
        line,
        table,
    })
}

/// `ruleset: procedure (exact) winner: attacker 184/729 (25.2%), ...`: the
/// first outcome's values, each with its exact fraction where there is one.
fn summary(ruleset: &str, r: &Report) -> String {
    let method = match r.method {
        Method::Exact => "exact",
        Method::Scripted => "scripted",
        _ => "sampled",
    };
    let mut line = format!("{ruleset}: {} ({method})", r.procedure);
    if let Some(oc) = r.outcomes.first() {
        let values: Vec<String> = oc
            .rows
            .iter()
            .filter(|row| row.p.to_f64() > 0.0)
            .map(|row| {
                let pct = format!("{:.1}%", 100.0 * row.p.to_f64());
                match row.p.exact_text() {
                    Some(f) if f.contains('/') => format!("{} {f} ({pct})", row.label),
                    _ => format!("{} {pct}", row.label),
                }
            })
            .collect();
        line.push_str(&format!(" {}: {}", oc.name, values.join(", ")));
    }
    line
}
