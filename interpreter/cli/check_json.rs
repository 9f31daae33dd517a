//! `muster check --message-format json`: what `check` finds, for tools (an
//! editor's problem matcher, a CI annotation): one JSON document of kind
//! `check` (docs/json.md), each diagnostic with its file, its place as
//! 1-based line and column (columns count characters) and its related
//! places.

use crate::front::diagnostic::Diag;
use crate::front::source::Sources;
use crate::front::syntax::Span;
use serde_json::{json, Value};

/// The place of `span`: its file's name and the 1-based line and column of
/// its start and end.
pub fn place(sources: &Sources, span: Span) -> Value {
    let src = sources.get(span.file);
    let at = |offset: u32| {
        let mut o = (offset as usize).min(src.text.len());
        while !src.text.is_char_boundary(o) {
            o -= 1;
        }
        let before = &src.text[..o];
        let line = before.matches('\n').count() + 1;
        let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
            .chars()
            .count()
            + 1;
        (line, col)
    };
    let (line, column) = at(span.start);
    let (end_line, end_column) = at(span.end.max(span.start));
    json!({
        "file": src.name,
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
    })
}

/// One diagnostic: `severity` (`error` or `warning`), `code`, `message`, `label`, `help` (null when none),
/// `place` (null when it has none) and `related` (`[{place, message}]`).
pub fn diagnostic(sources: &Sources, d: &Diag) -> Value {
    let related: Vec<Value> = d
        .notes
        .iter()
        .map(|(s, m)| json!({"place": place(sources, *s), "message": m}))
        .collect();
    json!({
        "severity": d.severity.name(),
        "code": d.code,
        "message": d.message,
        "label": d.label,
        "help": d.help,
        "place": d.span.map(|s| place(sources, s)),
        "related": related,
    })
}

/// One ruleset's entry: its `file`, whether it is `ok` (no errors; it may
/// have warnings) and its `diagnostics`.
pub fn ruleset(file: &str, diags: &[Diag], sources: &Sources) -> Value {
    let ds: Vec<Value> = diags.iter().map(|d| diagnostic(sources, d)).collect();
    let ok = !diags.iter().any(Diag::is_error);
    json!({"file": file, "ok": ok, "diagnostics": ds})
}
