//! How deep rules may nest, and the stack every recursive pass runs on.
//!
//! The parser, the syntax builder, the compiler and the evaluators walk
//! rules recursively, one call (or several) a level of nesting. Input from
//! a shared ruleset or a situation file must not be able to overflow the
//! stack, so three guards stand before that recursion:
//!
//! - [`scan`]: before the grammar runs, a pass over the tokens bounds how
//!   deep the grammar may recurse (brackets, and the words that open a
//!   construct the grammar nests: `if`, the quantifiers, `scoring`) and
//!   refuses text nested deeper than [`MAX_NESTING`] levels with a
//!   diagnostic at the first token past the limit.
//! - The syntax builder refuses an expression whose tree is deeper than
//!   [`MAX_EXPR_DEPTH`] (a flat `1 + 1 + ... + 1` is as deep as it has
//!   terms), so every later pass over a tree is bounded too.
//! - [`guarded`]: a recursive pass calls it at each level; it moves the
//!   work onto a fresh stack segment when the thread's stack runs low
//!   (any thread: the main one, a test's 2 MiB one, a worker's), so the
//!   bounds above never depend on the thread's stack size.

use crate::front::diagnostic::Diag;
use crate::front::syntax::{FileId, Span};

/// The deepest a ruleset or a situation may nest brackets and the
/// constructs the grammar nests (see [`scan`]). Far above what any book
/// needs (the shipped rulesets reach 11, stdlib/ included).
pub const MAX_NESTING: usize = 128;

/// The deepest one expression's tree may be. A chain of operators counts
/// a level an operator: `a or b or c` is three deep. The shipped rulesets
/// reach 19.
pub const MAX_EXPR_DEPTH: usize = 256;

/// The deepest an expression may go with every define, table, quantity
/// and fact it calls expanded in place, as the odds engine inlines them and
/// the analyses follow them (a table's rows count a level each); also the
/// deepest a procedure may go with the procedures it calls. Checked by
/// [`crate::compile::call_graph`]. The shipped rulesets reach 33.
pub const MAX_EXPANDED_DEPTH: usize = 1024;

/// Stack a recursive step may need before [`guarded`] moves to a new
/// segment. Generous: debug builds use several times the stack of release.
const RED_ZONE: usize = 256 * 1024;

/// The size of each new stack segment [`guarded`] allocates.
const SEGMENT: usize = 8 * 1024 * 1024;

/// Run one level of a recursive pass: on a new stack segment if the
/// current one has less than [`RED_ZONE`] left, else right here.
#[inline]
pub fn guarded<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// A word that opens a construct the grammar nests inside an expression
/// (or a statement, for `if`): each may hold the next level open until its
/// construct ends.
fn opens(word: &str) -> bool {
    matches!(
        word,
        "if" | "any" | "all" | "count" | "first" | "sum" | "min" | "max" | "scoring"
    )
}

/// A reserved word no expression can contain: when one is read, every
/// construct opened before it at the same bracket level has ended.
fn ends(word: &str) -> bool {
    matches!(
        word,
        "side_state"
            | "otherwise"
            | "procedure"
            | "outcomes"
            | "override"
            | "quantity"
            | "sequence"
            | "extends"
            | "measure"
            | "outcome"
            | "quality"
            | "require"
            | "ruleset"
            | "define"
            | "import"
            | "option"
            | "remove"
            | "class"
            | "group"
            | "phase"
            | "state"
            | "table"
            | "until"
            | "army"
            | "call"
            | "each"
            | "enum"
            | "fact"
            | "goto"
            | "stat"
            | "step"
            | "turn"
            | "when"
            | "die"
            | "end"
            | "for"
            | "let"
            | "per"
            | "do"
            | "decision"
            | "modifier"
    )
}

/// One open bracket (or the top level) and the constructs opened in it.
struct Level {
    /// Openers read at this level since the last word or mark that ends them.
    open: usize,
    /// The closing character, or none for the top level.
    closer: Option<u8>,
}

/// Check that `text` nests at most [`MAX_NESTING`] deep.
///
/// The depth at a token is the number of brackets open around it plus the
/// openers (`if`, quantifiers, `scoring`) read in each of those brackets
/// since the last mark that ends them: a reserved word no expression holds
/// (`define`, `when`, `let`...), a `,`, `=>` or `;`, or a block's `}` not
/// followed by `else`. Each recursion of the grammar starts at a bracket or
/// an opener whose construct is still open, so this depth is at least as
/// deep as the grammar goes; it counts a few constructs that have in fact
/// ended (several `if` statements in a row), never fewer.
///
/// Strings and `//` comments are skipped as the grammar skips them, and so
/// are a hook script's `'...'`, `` `...` `` and `/* */`. Text that is not a
/// ruleset at all may be measured wrongly; the grammar then refuses it, and
/// its own stack guard stands behind this one.
pub fn scan(text: &str, file: FileId, offset: usize) -> Result<(), Diag> {
    let b = text.as_bytes();
    let mut levels = vec![Level {
        open: 0,
        closer: None,
    }];
    let mut depth = 0usize; // brackets open plus openers counted
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
                continue;
            }
            b'"' | b'\'' | b'`' => {
                i += 1;
                while i < b.len() && b[i] != c && !(c == b'"' && b[i] == b'\n') {
                    if b[i] == b'\\' && c != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            b'(' | b'{' | b'[' => {
                levels.push(Level {
                    open: 0,
                    closer: Some(match c {
                        b'(' => b')',
                        b'{' => b'}',
                        _ => b']',
                    }),
                });
                depth += 1;
                i += 1;
            }
            b')' | b'}' | b']' => {
                i += 1;
                // Close up to the matching bracket; an unmatched closer
                // (text the grammar will refuse) closes nothing.
                if let Some(k) = levels.iter().rposition(|l| l.closer == Some(c)) {
                    while levels.len() > k {
                        let l = levels.pop().expect("a level above the top one");
                        depth -= l.open + 1;
                    }
                    if c == b'}' && !next_word_is(b, i, "else") {
                        let top = levels.last_mut().expect("the top level stays");
                        depth -= top.open;
                        top.open = 0;
                    }
                }
                continue;
            }
            b',' | b';' => {
                i += 1;
                end_constructs(&mut levels, &mut depth);
                continue;
            }
            b'=' if b.get(i + 1) == Some(&b'>') => {
                i += 2;
                end_constructs(&mut levels, &mut depth);
                continue;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                if opens(word) {
                    levels.last_mut().expect("the top level stays").open += 1;
                    depth += 1;
                } else if ends(word) {
                    end_constructs(&mut levels, &mut depth);
                    continue;
                } else {
                    continue;
                }
            }
            _ => {
                i += 1;
                continue;
            }
        }
        if depth > MAX_NESTING {
            return Err(too_deep(
                Span::new(file, offset + start, offset + i),
                "nests deeper than this",
            ));
        }
    }
    Ok(())
}

/// The constructs opened at the innermost level have ended.
fn end_constructs(levels: &mut [Level], depth: &mut usize) {
    let top = levels.last_mut().expect("the top level stays");
    *depth -= top.open;
    top.open = 0;
}

/// Whether the next word after position `i` (spaces and comments aside) is `w`.
fn next_word_is(b: &[u8], mut i: usize, w: &str) -> bool {
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        break;
    }
    b[i..].starts_with(w.as_bytes())
        && !b
            .get(i + w.len())
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// The diagnostic for nesting past a limit.
pub fn too_deep(span: Span, label: &str) -> Diag {
    Diag::new(
        "muster::nesting",
        format!("the rules nest deeper than {MAX_NESTING} levels here"),
    )
    .at(span, label)
    .help(
        "brackets, `if`s and quantifiers inside one another count a level each; \
         write the inner part as a `define` and call it",
    )
}

/// The diagnostic for an expression whose tree is too deep.
pub fn expr_too_deep(span: Span) -> Diag {
    Diag::new(
        "muster::nesting",
        format!("this expression is more than {MAX_EXPR_DEPTH} levels deep"),
    )
    .at(span, "too deep from here")
    .help(format!(
        "each operator of a chain (`a + b + c`, `x or y or z`) and each bracket, \
         `if` or `not` counts a level, at most {MAX_EXPR_DEPTH}; \
         split the expression into `define`s"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(t: &str) -> bool {
        scan(t, FileId(0), 0).is_ok()
    }

    #[test]
    fn brackets_count() {
        let n = MAX_NESTING;
        assert!(depth_ok(&format!(
            "x = {}1{}",
            "(".repeat(n),
            ")".repeat(n)
        )));
        assert!(!depth_ok(&format!(
            "x = {}1{}",
            "(".repeat(n + 1),
            ")".repeat(n + 1)
        )));
        // Siblings do not add up.
        let one = format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert!(depth_ok(&format!("x = {one} + {one} + {one}")));
    }

    #[test]
    fn openers_count_until_they_end() {
        let n = MAX_NESTING;
        assert!(!depth_ok(&format!(
            "define x(): int = {}1",
            "if true then 1 else ".repeat(n + 1)
        )));
        assert!(depth_ok(&format!(
            "define x(): int = {}1",
            "if true then 1 else ".repeat(n)
        )));
        // Rows of a table each end at `=>` and `when`.
        let rows = "when if a then b else c => if d then 1 else 2\n".repeat(10 * n);
        assert!(depth_ok(&format!(
            "table t() -> int {{ {rows} otherwise => 0 }}"
        )));
        // Statements in a row: a block's `}` ends the `if` before it,
        // unless an `else` follows.
        let stmts = "if a { x = 1 }\n".repeat(10 * n);
        assert!(depth_ok(&format!("procedure p() {{ {stmts} }}")));
        let chain = format!("if a {{ }}{}", " else if a { }".repeat(n + 1));
        assert!(!depth_ok(&format!("procedure p() {{ {chain} }}")));
    }

    #[test]
    fn strings_and_comments_are_skipped() {
        let many = "(".repeat(10 * MAX_NESTING);
        assert!(depth_ok(&format!("x = \"{many}\" // {many}\n")));
        assert!(depth_ok(&format!(
            "hook h fact f {{ '{many}' /* {many} */ }}"
        )));
    }

    #[test]
    fn the_diagnostic_points_at_the_first_level_too_deep() {
        let t = format!("x = {}", "(".repeat(MAX_NESTING + 5));
        let d = scan(&t, FileId(0), 0).unwrap_err();
        let s = d.span.unwrap();
        assert_eq!(s.start as usize, 4 + MAX_NESTING);
        assert_eq!(d.code, "muster::nesting");
    }
}
