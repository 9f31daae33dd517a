//! Text to syntax tree: runs the pest grammar (grammar/muster.pest) and builds
//! [`crate::front::syntax`] nodes with spans. Parse errors become [`Diag`]s.

use crate::front::diagnostic::Diag;
use crate::front::nesting::{self, guarded, MAX_EXPR_DEPTH};
use crate::front::syntax::*;
use pest::iterators::Pair;
use pest::Parser;
use std::cell::{Cell, RefCell};

#[derive(pest_derive::Parser)]
#[grammar = "grammar/muster.pest"]
struct MusterParser;

type P<'a> = Pair<'a, Rule>;
/// The pairs of an expression's silent levels, read in order.
type Flat<'a> = std::iter::Peekable<pest::iterators::Pairs<'a, Rule>>;

/// Where pest's implicit `WHITESPACE` and `COMMENT` from `at` end.
fn skipped(input: &str, mut at: usize) -> usize {
    let b = input.as_bytes();
    while at < b.len() {
        match b[at] {
            b' ' | b'\t' | b'\n' | b'\r' => at += 1,
            b'/' if b.get(at + 1) == Some(&b'/') => {
                at += b[at..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .unwrap_or(b.len() - at)
            }
            _ => break,
        }
    }
    at
}

/// Parse a whole ruleset file.
pub fn parse_file(text: &str, file: FileId) -> Result<File, Diag> {
    nesting::scan(text, file, 0)?;
    let mut pairs = with_room(|| MusterParser::parse(Rule::file, text))
        .map_err(|e| syntax_error(e, file, text))?;
    let b = Builder::new(file);
    let f = b.file(pairs.next().unwrap());
    b.finish(f)
}

/// Parse one expression (as a situation file writes its facts).
pub fn parse_expr(text: &str, file: FileId, offset: usize) -> Result<Expr, Diag> {
    nesting::scan(text, file, offset)?;
    // Parse against the full text so spans line up with the situation file.
    let padded = padded(offset, text);
    let mut pairs = with_room(|| MusterParser::parse(Rule::expr_only, &padded))
        .map_err(|e| syntax_error(e, file, &padded))?;
    let b = Builder::new(file);
    let p = pairs.next().unwrap();
    let e = b.expr(p.into_inner().next().unwrap());
    b.finish(e)
}

/// `text` with `offset` bytes before it that the grammar skips: so that
/// the spans of a fact parsed alone are those of the file it was read
/// from. The padding is one comment line when there is room for one
/// (`//`, spaces, a line feed): pest skips a comment in one search for its
/// line's end, where `offset` spaces cost a whitespace rule each (a
/// situation's facts stand a few hundred bytes into the file: 250,000
/// instructions of a TVBD `muster odds` went on them). Both paddings are
/// whitespace to the grammar, so what parses and where it fails are the
/// same.
fn padded(offset: usize, text: &str) -> String {
    let mut s = String::with_capacity(offset + text.len());
    if offset >= 3 {
        s.push_str("//");
        s.extend(std::iter::repeat_n(' ', offset - 3));
        s.push('\n');
    } else {
        s.extend(std::iter::repeat_n(' ', offset));
    }
    s.push_str(text);
    s
}

/// Stack the grammar may need at the deepest nesting the scan lets through
/// ([`nesting::MAX_NESTING`] levels), generously (a debug build's frames
/// are several times a release build's). pest 2.7 does not check the stack
/// as it recurses, so the parse runs on a fresh segment of twice this
/// whenever less is left.
const PARSE_STACK: usize = 4 * 1024 * 1024;

/// Run the grammar with [`PARSE_STACK`] of room.
fn with_room<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(PARSE_STACK, 2 * PARSE_STACK, f)
}

fn syntax_error(e: pest::error::Error<Rule>, file: FileId, text: &str) -> Diag {
    let (start, end) = match e.location {
        pest::error::InputLocation::Pos(p) => (p, p + 1),
        pest::error::InputLocation::Span((a, b)) => (a, b),
    };
    let expected = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            let mut names: Vec<String> = positives.iter().map(rule_name).collect();
            names.sort();
            names.dedup();
            names
        }
        pest::error::ErrorVariant::CustomError { message } => {
            // The grammar's own guards ("stack limit reached", "call limit
            // reached"): only text the nesting scan measured wrongly gets here.
            if message.contains("limit reached") {
                return nesting::too_deep(
                    Span::new(file, start, start + 1),
                    "the grammar ran out of room here",
                );
            }
            vec![message.clone()]
        }
    };
    let label = if expected.is_empty() {
        "unexpected text here".to_string()
    } else {
        format!("expected {}", expected.join(", "))
    };
    // Point at a single character, however long the failing span (a
    // whole character: it may take several bytes).
    let _ = end;
    let end = start
        + text
            .get(start..)
            .and_then(|t| t.chars().next())
            .map_or(1, char::len_utf8);
    if let Some((brace, hook)) = hook_closed_early(text, start) {
        return Diag::new(
            "muster::syntax",
            format!("a `}}` too many in the script of hook `{hook}` ends the hook early"),
        )
        .at(Span::new(file, brace, brace + 1), "this `}` closes the hook")
        .note(
            Span::new(file, start, end),
            "so the rest of its script is read as the ruleset's",
        )
        .help("remove the `}` or add the `{` it should close: a script's braces pair up (braces in strings and comments are skipped)");
    }
    if let Some(quote) = escaped_quote(text, start) {
        return Diag::new(
            "muster::syntax",
            "a string has no escapes: `\\\"` ends it",
        )
        .at(Span::new(file, quote - 1, quote + 1), "the string ends at this `\"`")
        .note(
            Span::new(file, start, end),
            "so the text after it is read as the ruleset's",
        )
        .help("a string runs from `\"` to the next `\"`; to quote inside one, write single quotes (`\"the 'forlorn hope'\"`) or typographic ones (“ ”)");
    }
    Diag::new("muster::syntax", "the ruleset does not parse here")
        .at(Span::new(file, start, end), label)
        .help("check the construct against docs/LANGUAGE.md; a missing `{`, `}`, `=>` or `,` is the usual cause")
}

/// Where a parse failed at `pos` on a line where a string closed at a
/// `\"` before it (as an escape would be written in many languages): the
/// offset of that closing `"`. The line is read as the grammar reads it,
/// strings from `"` to `"` and a `//` outside one starting a comment.
fn escaped_quote(text: &str, pos: usize) -> Option<usize> {
    let line_start = text.get(..pos)?.rfind('\n').map_or(0, |n| n + 1);
    let line = text.get(line_start..pos)?.as_bytes();
    let (mut in_string, mut found, mut i) = (false, None, 0);
    while i < line.len() {
        match line[i] {
            b'"' if in_string => {
                in_string = false;
                if i > 0 && line[i - 1] == b'\\' {
                    found = Some(line_start + i);
                }
            }
            b'"' => in_string = true,
            b'/' if !in_string && line.get(i + 1) == Some(&b'/') => break,
            _ => {}
        }
        i += 1;
    }
    found
}

/// Where a parse failed at `pos` because a hook's script closed early:
/// the `}` that closed it and the hook's name. So when the nearest hook
/// before `pos` ends (its braces paired as the grammar pairs them) just
/// before `pos`, and the text from `pos` closes a brace it never opened
/// (the rest of the script, whose `{` was matched early).
fn hook_closed_early(text: &str, pos: usize) -> Option<(usize, String)> {
    let before = text.get(..pos)?;
    let header = before
        .match_indices("hook ")
        .map(|(i, _)| i)
        .filter(|&i| {
            let line = &before[before[..i].rfind('\n').map_or(0, |n| n + 1)..i];
            matches!(line.trim(), "" | "override")
        })
        .last()?;
    let name: String = before[header + 5..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    // The script's `{`: the first outside the doc string and `outcomes { }`.
    let mut at = header;
    let open = loop {
        let rest = &before[at..];
        let i = at + rest.find(['{', '"'])?;
        if before.as_bytes()[i] == b'"' {
            at = i + 1 + before[i + 1..].find('"')? + 1;
        } else if before[..i].trim_end().ends_with("outcomes") {
            at = i + before[i..].find('}')? + 1;
        } else {
            break i;
        }
    };
    let close = open + script_depths(&text[open..]).find(|&(_, d)| d == 0)?.0;
    let between = &text[close + 1..pos];
    if close >= pos || !between.trim().is_empty() {
        return None;
    }
    // The rest closes a brace it never opened.
    script_depths(&text[pos..])
        .any(|(_, d)| d < 0)
        .then_some((close, name))
}

/// The brace depth after each `{` and `}` of a script (by byte offset),
/// skipping strings, characters and comments as the grammar does.
fn script_depths(s: &str) -> impl Iterator<Item = (usize, i64)> + '_ {
    let b = s.as_bytes();
    let mut i = 0;
    let mut depth = 0i64;
    std::iter::from_fn(move || {
        while i < b.len() {
            let c = b[i];
            let skip_to = |from: usize, end: &[u8], escapes: bool| {
                let mut j = from;
                while j < b.len() && !b[j..].starts_with(end) {
                    j += if escapes && b[j] == b'\\' { 2 } else { 1 };
                }
                (j + end.len()).min(b.len())
            };
            match c {
                b'"' => i = skip_to(i + 1, b"\"", true),
                b'\'' => i = skip_to(i + 1, b"'", true),
                b'`' => i = skip_to(i + 1, b"`", false),
                b'/' if b.get(i + 1) == Some(&b'/') => i = skip_to(i, b"\n", false),
                b'/' if b.get(i + 1) == Some(&b'*') => i = skip_to(i + 2, b"*/", false),
                b'{' | b'}' => {
                    depth += if c == b'{' { 1 } else { -1 };
                    i += 1;
                    return Some((i - 1, depth));
                }
                _ => i += 1,
            }
        }
        None
    })
}

fn rule_name(r: &Rule) -> String {
    let s = match r {
        Rule::EOI => "end of file",
        Rule::item | Rule::extends_item | Rule::import_item => {
            "an item (unit, table, modifier, procedure...)"
        }
        Rule::ident | Rule::call_name | Rule::call_value | Rule::name_start | Rule::name_here => {
            "a name"
        }
        Rule::name => "a name or \"quoted name\"",
        Rule::int | Rule::signed_int => "a number",
        Rule::string => "a \"string\"",
        Rule::expr | Rule::and_expr | Rule::not_expr => "an expression",
        Rule::table_row | Rule::row_guard => {
            "a table row (`when COND => VALUE`, `KEY => VALUE` or `otherwise => VALUE`)"
        }
        Rule::type_ref => "a type",
        Rule::state_kw | Rule::override_kw => {
            "an item that can be overridden (unit row, table, modifier, option...)"
        }
        Rule::stat_value => "a stat value (a number, `none` or `unlimited`)",
        Rule::assign_op | Rule::modifier_op => "`=`, `+=` or `-=`",
        Rule::cmp_op
        | Rule::add_op
        | Rule::mul_op
        | Rule::and_op
        | Rule::or_op
        | Rule::is_kw
        | Rule::is_op
        | Rule::not_kw
        | Rule::die_ref
        | Rule::scoring
        | Rule::counting
        | Rule::reroll => "an operator or `=>`",
        Rule::block => "`{`",
        Rule::card | Rule::card_kw => "a card (`card NAME { ... }`)",
        Rule::after_each | Rule::after_each_head | Rule::after_kw => "`after each card { ... }`",
        Rule::each_kw => "`each` (`after each card`)",
        Rule::left_kw => "`left` (`until 1 left`)",
        Rule::deck_kw | Rule::deck_item => "a deck (`deck NAME { card ... }`)",
        Rule::copies_kw | Rule::copies => "`copies N`",
        Rule::draw_kw | Rule::draw_action => "`draw DECK`",
        Rule::shuffle_kw | Rule::shuffle_action => "`shuffle DECK`",
        Rule::deal_kw | Rule::deal_action => "`deal DECK to HOLDER up to N`",
        Rule::discard_kw | Rule::discard_action => "`discard DECK from HOLDER down to N`",
        Rule::alternate_kw | Rule::alternate_action => {
            "`alternate DECISION(ARGS) for each s in sides`"
        }
        Rule::pay_kw | Rule::pay_clause => "`pay DECK COST from HOLDER`",
        Rule::value_kw | Rule::card_value => "`value N`",
        Rule::add_expr
        | Rule::dice_expr
        | Rule::unary
        | Rule::unary_exact
        | Rule::postfix
        | Rule::postfix_exact
        | Rule::if_expr
        | Rule::quant_expr
        | Rule::odds_expr
        | Rule::roll_expr
        | Rule::original_expr
        | Rule::call => "an expression",
        Rule::params => "parameters `(name: type, ...)`",
        Rule::param | Rule::fact_param => "a parameter (`name: type`)",
        Rule::args => "arguments `(...)`",
        Rule::face_count => "a number or an option's name",
        Rule::neg => "`-`",
        other => return in_grammar_words(other),
    };
    s.to_string()
}

/// The grammar, read for the words of rules [`rule_name`] does not list.
const GRAMMAR: &str = include_str!("../../grammar/muster.pest");

/// A rule in the words an author writes: the keywords it stands for when
/// it is only keywords (`odds_kw = @{ ("chance" | "expect") ~ &"(" }` is
/// "`chance` or `expect`"), else the keyword it starts with (`let_stmt`
/// is "`let`", `hook_item` "`hook`"), else its name with spaces.
fn in_grammar_words(r: &Rule) -> String {
    let name = format!("{r:?}");
    grammar_words(&name, 2).unwrap_or_else(|| name.replace('_', " "))
}

/// [`in_grammar_words`] of the rule called `name`, looking `depth` rules
/// deep for the keyword a rule starts with.
fn grammar_words(name: &str, depth: usize) -> Option<String> {
    let body = GRAMMAR.lines().find_map(|l| {
        let rest = l.strip_prefix(name)?.trim_start().strip_prefix('=')?;
        let open = rest.find('{')?;
        Some(rest[open + 1..rest.rfind('}')?].trim())
    })?;
    // What follows the words (`~ !ident_char`, `~ &"("`) only checks.
    let b = [" ~ !", " ~ &"]
        .iter()
        .filter_map(|cut| body.find(cut))
        .min()
        .map_or(body, |i| &body[..i]);
    let quoted: Vec<&str> = b.split('"').skip(1).step_by(2).collect();
    let outside: String = b.split('"').step_by(2).collect();
    if !quoted.is_empty() && outside.chars().all(|c| "|() ".contains(c)) {
        return Some(alternatives(&quoted));
    }
    // A construct that starts with a keyword (after an optional `override`).
    let first = b
        .trim_start_matches("override_kw? ~ ")
        .trim_start_matches('(');
    if let Some((w, _)) = first.strip_prefix('"').and_then(|f| f.split_once('"')) {
        return Some(format!("`{w}`"));
    }
    let rule: String = first
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if depth == 0 || !rule.ends_with("_kw") {
        return None;
    }
    grammar_words(&rule, depth - 1)
}

/// `` `a` ``, `` `a` or `b` ``, `` `a`, `b` or `c` ``.
fn alternatives(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

struct Builder {
    file: FileId,
    /// How deep the expression `expr` last returned is.
    depth: Cell<usize>,
    /// The first problem met while building (the tree is built on, so that
    /// the caller gets one diagnostic, not a panic).
    fault: RefCell<Option<Diag>>,
}

fn unquote(p: P) -> String {
    // string = "\"" ~ string_inner ~ "\""
    p.into_inner()
        .next()
        .map(|i| i.as_str().to_string())
        .unwrap_or_default()
}

impl Builder {
    fn new(file: FileId) -> Self {
        Builder {
            file,
            depth: Cell::new(0),
            fault: RefCell::new(None),
        }
    }

    /// What was built, unless building met a problem.
    fn finish<T>(&self, built: T) -> Result<T, Diag> {
        match self.fault.take() {
            Some(d) => Err(d),
            None => Ok(built),
        }
    }

    /// Note a problem (the first one is reported).
    fn fail(&self, d: Diag) {
        let mut f = self.fault.borrow_mut();
        if f.is_none() {
            *f = Some(d);
        }
    }

    /// An expression and how deep it is.
    fn sub(&self, p: P) -> (Expr, usize) {
        let e = self.expr(p);
        (e, self.depth.get())
    }

    /// A node `depth` deep. Past [`MAX_EXPR_DEPTH`] the problem is noted at
    /// `at` and a leaf stands in, so that no tree grows deeper than the
    /// bound (later passes, and dropping the tree, recurse over it).
    fn node(&self, kind: ExprKind, span: Span, depth: usize, at: Span) -> Expr {
        if depth > MAX_EXPR_DEPTH {
            self.fail(nesting::expr_too_deep(at));
            self.depth.set(1);
            return Expr {
                kind: ExprKind::Int(0),
                span,
            };
        }
        self.depth.set(depth);
        Expr { kind, span }
    }

    /// A leaf node.
    fn leaf(&self, kind: ExprKind, span: Span) -> Expr {
        self.depth.set(1);
        Expr { kind, span }
    }

    /// A node's span, without the whitespace pest may leave at its end.
    fn span(&self, p: &P) -> Span {
        let s = p.as_span();
        self.span_of(p.get_input(), s.start(), s.end())
    }

    /// The span of `input[start..end]`, as [`Builder::span`] gives a pair's.
    fn span_of(&self, input: &str, start: usize, end: usize) -> Span {
        let text = &input[start..end];
        // Most nodes end on an ASCII character that is no space: nothing
        // to trim, and no need to decode the end backwards.
        if text
            .as_bytes()
            .last()
            .is_some_and(|&b| b.is_ascii() && !b.is_ascii_whitespace() && b != 0x0b)
        {
            return Span::new(self.file, start, end);
        }
        let trimmed = text.trim_end().len();
        Span::new(
            self.file,
            start,
            start + trimmed.max(usize::from(start == end)).min(end - start),
        )
    }

    fn name(&self, p: P) -> Name {
        // ident, call_name, or name (= ident | string)
        let span = self.span(&p);
        match p.as_rule() {
            Rule::name => {
                let inner = p.into_inner().next().unwrap();
                self.name(inner)
            }
            Rule::string => Name {
                text: unquote(p),
                span,
            },
            _ => Name {
                text: p.as_str().to_string(),
                span,
            },
        }
    }

    fn int(&self, p: &P) -> i64 {
        self.number(p.as_str(), self.span(p))
    }

    /// A whole number as written (`+3`, `-2`, `12`); one too large for 64
    /// bits is a diagnostic, never a silently different number.
    fn number(&self, text: &str, span: Span) -> i64 {
        let text = text.trim();
        text.trim_start_matches('+').parse().unwrap_or_else(|_| {
            self.fail(
                Diag::new("muster::number", format!("`{text}` is too large a number"))
                    .at(span, "does not fit in 64 bits")
                    .help(format!(
                        "numbers are whole and lie between {} and {}",
                        i64::MIN,
                        i64::MAX
                    )),
            );
            0
        })
    }

    fn file(&self, p: P) -> File {
        let mut f = File::default();
        for c in p.into_inner() {
            match c.as_rule() {
                Rule::header => {
                    let mut it = c.into_inner();
                    let id = self.name(it.next().unwrap());
                    let title = it.next().map(unquote);
                    f.header = Some(Header { id, title });
                }
                Rule::EOI => {}
                _ => f.items.push(self.item(c)),
            }
        }
        f
    }

    fn params(&self, p: P) -> Vec<Param> {
        p.into_inner()
            .map(|param| {
                let mut it = param.into_inner();
                let name = self.name(it.next().unwrap());
                let ty = self.name(it.next().unwrap().into_inner().next().unwrap());
                let range = it.next().map(|r| {
                    let mut ri = r.into_inner();
                    let a = self.int(&ri.next().unwrap());
                    let b = self.int(&ri.next().unwrap());
                    (a, b)
                });
                Param { name, ty, range }
            })
            .collect()
    }

    /// `outcomes { name: type, ... }`.
    fn outcome_decls(&self, p: P) -> Vec<OutcomeDecl> {
        p.into_inner()
            .map(|d| {
                let mut di = d.into_inner();
                let name = self.name(di.next().unwrap());
                let ty = di
                    .next()
                    .unwrap()
                    .into_inner()
                    .map(|t| self.name(t))
                    .collect();
                OutcomeDecl { name, ty }
            })
            .collect()
    }

    /// An `effects` block, after its keyword.
    fn effects<'i>(&self, it: impl Iterator<Item = P<'i>>) -> Effects {
        let mut it = it.skip_while(|x| x.as_rule() == Rule::effects_kw);
        let name = self.name(it.next().unwrap());
        let (mut params, mut tallies, mut doc, mut rows) =
            (Vec::new(), Vec::new(), None, Vec::new());
        for x in it {
            match x.as_rule() {
                Rule::params => params = self.params(x),
                Rule::ident => tallies.push(self.name(x)),
                Rule::string => doc = Some(unquote(x)),
                _ => {
                    let mut ri = x.into_inner();
                    let face = self.name(ri.next().unwrap());
                    let yields = ri
                        .map(|y| {
                            let mut yi = y.into_inner();
                            let tally = self.name(yi.next().unwrap());
                            let n = self.int(&yi.next().unwrap());
                            (tally, n, yi.next().map(|c| self.expr(c)))
                        })
                        .collect();
                    rows.push(EffectRow { face, yields });
                }
            }
        }
        Effects {
            name,
            params,
            tallies,
            doc,
            rows,
        }
    }

    fn type_ref(&self, p: P) -> Name {
        self.name(p.into_inner().next().unwrap())
    }

    fn item(&self, p: P) -> Item {
        let span = self.span(&p);
        let rule = p.as_rule();
        let mut it = p.into_inner().peekable();
        let mut overrides = false;
        if it.peek().map(|x| x.as_rule()) == Some(Rule::override_kw) {
            overrides = true;
            it.next();
        }
        let kind = match rule {
            Rule::extends_item => ItemKind::Extends(unquote(it.next().unwrap())),
            Rule::import_item => ItemKind::Import(self.name(it.next().unwrap())),
            Rule::measure_item => {
                let n = self.name(it.next().unwrap());
                ItemKind::Measure(n, it.next().map(unquote))
            }
            Rule::die_item => {
                let name = self.name(it.next().unwrap());
                let body = it.next().unwrap();
                let faces = match body.as_rule() {
                    Rule::die_range => {
                        let mut r = body.into_inner();
                        let a = self.int(&r.next().unwrap());
                        let b = self.int(&r.next().unwrap());
                        DieFaces::Range(a, b)
                    }
                    _ => DieFaces::Named(
                        body.into_inner()
                            .map(|f| {
                                let mut fi = f.into_inner();
                                let name = self.name(fi.next().unwrap());
                                let mut count = 1;
                                let mut count_option = None;
                                let mut value = 0;
                                for x in fi {
                                    match x.as_rule() {
                                        Rule::face_count => {
                                            let c = x.into_inner().next().unwrap();
                                            match c.as_rule() {
                                                Rule::int => {
                                                    count = self.int(&c).clamp(0, 1000) as u32
                                                }
                                                _ => count_option = Some(self.name(c)),
                                            }
                                        }
                                        _ => value = self.int(&x),
                                    }
                                }
                                Face {
                                    name,
                                    count,
                                    count_option,
                                    value,
                                }
                            })
                            .collect(),
                    ),
                };
                ItemKind::Die(Die { name, faces })
            }
            Rule::effects_item => ItemKind::Effects(self.effects(it)),
            Rule::enum_item => {
                let n = self.name(it.next().unwrap());
                ItemKind::Enum(n, it.map(|x| self.name(x)).collect())
            }
            Rule::class_item => ItemKind::Class(it.map(|x| self.name(x)).collect()),
            Rule::group_item => {
                let n = self.name(it.next().unwrap());
                ItemKind::Group(n, it.map(|x| self.name(x)).collect())
            }
            Rule::stat_item => ItemKind::Stat(it.map(|x| self.name(x)).collect()),
            Rule::side_item => ItemKind::Sides(it.map(|x| self.name(x)).collect()),
            Rule::option_item => {
                let name = self.name(it.next().unwrap());
                let mut title = None;
                let mut on = false;
                let mut number = None;
                for x in it {
                    match x.as_rule() {
                        Rule::string => title = Some(unquote(x)),
                        Rule::signed_int => number = Some(self.int(&x)),
                        _ => on = x.as_str() == "on",
                    }
                }
                ItemKind::Option(OptionDecl {
                    name,
                    title,
                    on,
                    number,
                })
            }
            Rule::units_item => {
                let mut columns = Vec::new();
                let mut rows = Vec::new();
                for x in it {
                    match x.as_rule() {
                        Rule::ident => columns.push(self.name(x)),
                        Rule::unit_row => rows.push(self.unit_row(x)),
                        _ => {}
                    }
                }
                ItemKind::Units(UnitsBlock { columns, rows })
            }
            Rule::quality_item => {
                let name = self.name(it.next().unwrap());
                let mut default = false;
                let mut lines = Vec::new();
                for x in it {
                    match x.as_rule() {
                        Rule::default_kw => default = true,
                        _ => {
                            let mut li = x.into_inner();
                            let name = self.name(li.next().unwrap());
                            let v = li.next().unwrap();
                            let change = if v.as_rule() == Rule::quality_set {
                                let sv = v.into_inner().next().unwrap();
                                let value_span = self.span(&sv);
                                let text = sv.as_str();
                                let value = self.stat_value(text, value_span);
                                let plus = text.trim_start().starts_with('+');
                                (QualityChange::To { value, plus }, value_span)
                            } else {
                                (QualityChange::By(self.int(&v)), self.span(&v))
                            };
                            lines.push(QualityLine {
                                name,
                                change: change.0,
                                value_span: change.1,
                            });
                        }
                    }
                }
                ItemKind::Quality(Quality {
                    name,
                    default,
                    lines,
                })
            }
            Rule::state_item => {
                let per_side = it.next().unwrap().as_str() == "side_state";
                let name = self.name(it.next().unwrap());
                let ty = self.type_ref(it.next().unwrap());
                let init = self.expr(it.next().unwrap());
                let each_turn = it.next().is_some();
                ItemKind::State(StateDecl {
                    per_side,
                    name,
                    ty,
                    init,
                    each_turn,
                })
            }
            Rule::fact_item => {
                let name = self.name(it.next().unwrap());
                let mut params = Vec::new();
                let mut ty = None;
                let mut default = None;
                let mut each_turn = false;
                let mut battle = None;
                for x in it {
                    match x.as_rule() {
                        Rule::fact_param => {
                            let mut parts: Vec<P> = x.into_inner().collect();
                            let t = self.type_ref(parts.pop().unwrap());
                            params.push((parts.pop().map(|n| self.name(n)), t));
                        }
                        Rule::type_ref => ty = Some(self.type_ref(x)),
                        Rule::each_turn => each_turn = true,
                        Rule::in_battle => {
                            let e = x.into_inner().nth(1).unwrap();
                            battle = Some(self.expr(e));
                        }
                        _ => default = Some(self.expr(x)),
                    }
                }
                ItemKind::Fact(FactDecl {
                    name,
                    params,
                    ty: ty.unwrap(),
                    default,
                    each_turn,
                    battle,
                })
            }
            Rule::define_item => {
                let name = self.name(it.next().unwrap());
                let params = self.params(it.next().unwrap());
                let ty = self.type_ref(it.next().unwrap());
                let body = self.expr(it.next().unwrap());
                ItemKind::Define(Define {
                    name,
                    params,
                    ty,
                    body,
                })
            }
            Rule::table_item => {
                let name = self.name(it.next().unwrap());
                let params = self.params(it.next().unwrap());
                let ty = self.type_ref(it.next().unwrap());
                let rows = it.map(|r| self.row(r)).collect();
                ItemKind::Table(Table {
                    name,
                    params,
                    ty,
                    rows,
                })
            }
            Rule::table_extend_item => {
                let name = self.name(it.next().unwrap());
                ItemKind::TableExtend(name, it.map(|r| self.row(r)).collect())
            }
            Rule::quantity_item => {
                let name = self.name(it.next().unwrap());
                let params = self.params(it.next().unwrap());
                let ty = self.type_ref(it.next().unwrap());
                let mut min = None;
                let mut max = None;
                let mut body = None;
                for x in it {
                    match x.as_rule() {
                        Rule::bound => {
                            let mut bi = x.into_inner();
                            let k = bi.next().unwrap();
                            let v = self.int(&bi.next().unwrap());
                            if k.as_rule() == Rule::min_kw {
                                min = Some(v)
                            } else {
                                max = Some(v)
                            }
                        }
                        _ => body = Some(self.expr(x)),
                    }
                }
                ItemKind::Quantity(Quantity {
                    name,
                    params,
                    ty,
                    min,
                    max,
                    body: body.unwrap(),
                })
            }
            Rule::modifier_item => {
                let name = self.name(it.next().unwrap());
                let mut source = None;
                if it.peek().map(|x| x.as_rule()) == Some(Rule::string) {
                    source = Some(unquote(it.next().unwrap()));
                }
                let quantity = self.name(it.next().unwrap());
                let op = assign_op(it.next().unwrap().as_str());
                let amount = self.expr(it.next().unwrap());
                let when = it.next().map(|x| self.expr(x));
                ItemKind::Modifier(Modifier {
                    name,
                    source,
                    quantity,
                    op,
                    amount,
                    when,
                })
            }
            Rule::procedure_item => {
                let name = self.name(it.next().unwrap());
                let params = self.params(it.next().unwrap());
                let mut outcomes = Vec::new();
                let mut body = Vec::new();
                for x in it {
                    match x.as_rule() {
                        Rule::outcomes => outcomes = self.outcome_decls(x),
                        _ => body = self.block(x),
                    }
                }
                ItemKind::Procedure(Procedure {
                    name,
                    params,
                    outcomes,
                    body,
                })
            }
            Rule::decision_item => {
                let name = self.name(it.next().unwrap());
                let params = self.params(it.next().unwrap());
                let mut doc = None;
                let mut choice = None;
                for x in it {
                    match x.as_rule() {
                        Rule::choice_body => choice = Some(self.choice(x)),
                        _ => doc = Some(unquote(x)),
                    }
                }
                ItemKind::Decision(Decision {
                    name,
                    params,
                    doc,
                    choice,
                })
            }
            Rule::policy_item => {
                it.next(); // the keyword
                let name = self.name(it.next().unwrap());
                let mut doc = None;
                let mut lines = Vec::new();
                let mut options = Vec::new();
                for x in it {
                    match x.as_rule() {
                        Rule::policy_line => {
                            let mut l = x.into_inner();
                            let n = self.name(l.next().unwrap());
                            lines.push((n, self.expr(l.next().unwrap())));
                        }
                        Rule::policy_option => {
                            let mut l = x.into_inner();
                            let n = self.name(l.next().unwrap());
                            options.push((n, self.name(l.next().unwrap())));
                        }
                        _ => doc = Some(unquote(x)),
                    }
                }
                ItemKind::Policy(Policy {
                    name,
                    doc,
                    lines,
                    options,
                })
            }
            Rule::hook_item => {
                it.next(); // the keyword
                let name = self.name(it.next().unwrap());
                let mut doc = None;
                let mut point = None;
                let mut outcomes = Vec::new();
                let mut script = None;
                for x in it {
                    match x.as_rule() {
                        Rule::string => doc = Some(unquote(x)),
                        Rule::hook_point => {
                            let mut h = x.into_inner();
                            let kind = h.next().unwrap();
                            let target = h.next().unwrap();
                            point = Some(match kind.as_rule() {
                                Rule::hook_when => {
                                    let after = kind.as_str() == "after";
                                    if target.as_rule() == Rule::hook_step {
                                        let s = target.into_inner().next().unwrap();
                                        let span = self.span(&s);
                                        HookPoint::Step {
                                            after,
                                            step: Name {
                                                text: unquote(s),
                                                span,
                                            },
                                        }
                                    } else {
                                        HookPoint::Procedure {
                                            after,
                                            proc: self.name(target),
                                        }
                                    }
                                }
                                Rule::hook_replace => HookPoint::Replace(self.name(target)),
                                _ => HookPoint::Fact(self.name(target)),
                            });
                        }
                        Rule::outcomes => outcomes = self.outcome_decls(x),
                        Rule::script_file => {
                            let s = x.into_inner().next().unwrap();
                            let span = self.span(&s);
                            script = Some(Script::File {
                                path: unquote(s),
                                span,
                            });
                        }
                        _ => {
                            let t = x.into_inner().next().unwrap();
                            let s = t.as_span();
                            script = Some(Script::Inline {
                                text: t.as_str().to_string(),
                                span: Span::new(self.file, s.start(), s.end()),
                            });
                        }
                    }
                }
                ItemKind::Hook(Hook {
                    name,
                    doc,
                    point: point.expect("the grammar requires a hook point"),
                    outcomes,
                    script: script.expect("the grammar requires a script"),
                })
            }
            Rule::scenario_item => {
                it.next(); // the keyword
                let s = it.next().unwrap();
                let span = self.span(&s);
                ItemKind::DefaultScenario(unquote(s), span)
            }
            Rule::army_item => {
                let name = self.name(it.next().unwrap());
                let rules = it.map(|r| self.army_rule(r)).collect();
                ItemKind::Army(Army { name, rules })
            }
            Rule::sequence_item => {
                let mut setup = Vec::new();
                let mut turn = Vec::new();
                let mut until = None;
                for x in it {
                    match x.as_rule() {
                        Rule::turn => {
                            for t in x.into_inner() {
                                match t.as_rule() {
                                    Rule::expr => until = Some(self.expr(t)),
                                    _ => turn.push(self.phase_or_step(t)),
                                }
                            }
                        }
                        _ => setup.push(self.phase_or_step(x)),
                    }
                }
                ItemKind::Sequence(Sequence {
                    setup,
                    turn,
                    until: until.unwrap(),
                    span,
                })
            }
            Rule::deck_item => ItemKind::Deck(self.deck(it)),
            Rule::remove_item => {
                let kind = self.name(it.next().unwrap());
                let n = self.name(it.next().unwrap());
                ItemKind::Remove(kind, n)
            }
            Rule::step_change => ItemKind::StepChange(self.step_change(span, it)),
            Rule::phase_change => {
                let old = self.name(it.next().unwrap());
                let new = self.name(it.next().unwrap().into_inner().next().unwrap());
                ItemKind::PhaseRename(old, new)
            }
            Rule::step => {
                return Item {
                    kind: ItemKind::StepPatch(self.step_from(span, it)),
                    overrides,
                    span,
                }
            }
            r => unreachable!("grammar rule {r:?} is not an item"),
        };
        Item {
            kind,
            overrides,
            span,
        }
    }

    /// A stat's value as a unit row or a quality's `STAT = V` writes it.
    fn stat_value(&self, text: &str, span: Span) -> StatValue {
        match text {
            "none" => StatValue::None,
            "unlimited" => StatValue::Unlimited,
            n => StatValue::Int(self.number(n, span)),
        }
    }

    fn unit_row(&self, p: P) -> UnitRow {
        let span = self.span(&p);
        let mut overrides = false;
        let mut name = None;
        let mut classes = Vec::new();
        let mut values = Vec::new();
        for x in p.into_inner() {
            match x.as_rule() {
                Rule::override_kw => overrides = true,
                Rule::name => name = Some(self.name(x)),
                Rule::ident => classes.push(self.name(x)),
                Rule::stat_value => {
                    let s = self.span(&x);
                    values.push((self.stat_value(x.as_str(), s), s));
                }
                _ => {}
            }
        }
        UnitRow {
            name: name.unwrap(),
            overrides,
            classes,
            values,
            span,
        }
    }

    fn army_rule(&self, p: P) -> ArmyRule {
        let span = self.span(&p);
        let mut per_command = false;
        let mut kind = None;
        for x in p.into_inner() {
            match x.as_rule() {
                Rule::army_scope => per_command = true,
                Rule::army_count | Rule::army_points => {
                    let is_units = x.as_rule() == Rule::army_count;
                    let mut i = x.into_inner();
                    let a = self.int(&i.next().unwrap());
                    let b = self.int(&i.next().unwrap());
                    kind = Some(if is_units {
                        ArmyRuleKind::Units(a, b)
                    } else {
                        ArmyRuleKind::Points(a, b)
                    });
                }
                Rule::army_price => {
                    let mut i = x.into_inner();
                    kind = Some(ArmyRuleKind::Price(self.name(i.next().unwrap())));
                }
                Rule::army_require => {
                    let mut i = x.into_inner();
                    let n = self.name(i.next().unwrap());
                    kind = Some(ArmyRuleKind::Require(n, unquote(i.next().unwrap())));
                }
                Rule::army_same => {
                    let units = x.into_inner().next().unwrap().as_str() == "units";
                    kind = Some(ArmyRuleKind::Same { units });
                }
                Rule::army_always => {
                    let (mut types, mut qualities) = (Vec::new(), Vec::new());
                    let mut after = false;
                    for n in x.into_inner() {
                        match n.as_rule() {
                            Rule::always_kw => after = true,
                            _ if after => qualities.push(self.name(n)),
                            _ => types.push(self.name(n)),
                        }
                    }
                    kind = Some(ArmyRuleKind::Always(types, qualities));
                }
                Rule::army_limit => {
                    let mut i = x.into_inner();
                    let n = self.name(i.next().unwrap());
                    let lk = i
                        .next()
                        .unwrap()
                        .as_str()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ");
                    let limit = match lk.as_str() {
                        "at most" => Limit::AtMost,
                        "at least" => Limit::AtLeast,
                        _ => Limit::Exactly,
                    };
                    let v = self.int(&i.next().unwrap());
                    kind = Some(ArmyRuleKind::Limit(n, limit, v));
                }
                _ => {}
            }
        }
        ArmyRule {
            per_command,
            kind: kind.unwrap(),
            span,
        }
    }

    fn phase_or_step(&self, p: P) -> PhaseOrStep {
        match p.as_rule() {
            Rule::phase => {
                let mut it = p.into_inner();
                let s = it.next().unwrap();
                let name = Name {
                    span: self.span(&s),
                    text: unquote(s),
                };
                PhaseOrStep::Phase(name, it.map(|x| self.step(x)).collect())
            }
            _ => PhaseOrStep::Step(self.step(p)),
        }
    }

    fn step(&self, p: P) -> Step {
        let span = self.span(&p);
        self.step_from(span, p.into_inner().peekable())
    }

    fn step_from(
        &self,
        span: Span,
        mut it: std::iter::Peekable<pest::iterators::Pairs<Rule>>,
    ) -> Step {
        let s = it.next().unwrap();
        let name = Name {
            span: self.span(&s),
            text: unquote(s),
        };
        let mut anchor = None;
        let mut actions = Vec::new();
        for x in it {
            match x.as_rule() {
                Rule::step_anchor => {
                    let after = x.as_str().trim_start().starts_with("after");
                    let s = x.into_inner().next().unwrap();
                    anchor = Some((
                        after,
                        Name {
                            span: self.span(&s),
                            text: unquote(s),
                        },
                    ));
                }
                _ => actions.extend(self.action(x)),
            }
        }
        Step {
            name,
            anchor,
            actions,
            span,
        }
    }

    /// `override step "NAME" [as "NEW"] [after|before "OTHER"] [with ... | { ... }]`
    /// (the `override` already read).
    fn step_change(
        &self,
        span: Span,
        mut it: std::iter::Peekable<pest::iterators::Pairs<Rule>>,
    ) -> StepChange {
        let s = it.next().unwrap();
        let name = Name {
            span: self.span(&s),
            text: unquote(s),
        };
        let mut change = StepChange {
            name,
            rename: None,
            anchor: None,
            recast: Vec::new(),
            body: None,
            span,
        };
        let string = |this: &Self, x: P| {
            let s = x.into_inner().next().unwrap();
            Name {
                span: this.span(&s),
                text: unquote(s),
            }
        };
        for x in it {
            match x.as_rule() {
                Rule::step_rename => change.rename = Some(string(self, x)),
                Rule::step_anchor => {
                    let after = x.as_str().trim_start().starts_with("after");
                    change.anchor = Some((after, string(self, x)));
                }
                Rule::step_recast => {
                    for r in x.into_inner() {
                        let mut r = r.into_inner();
                        let n = self.name(r.next().unwrap());
                        let e = self.expr(r.next().unwrap());
                        change.recast.push((n, e));
                    }
                }
                Rule::step_body => {
                    change.body = Some(x.into_inner().filter_map(|a| self.action(a)).collect())
                }
                r => unreachable!("grammar rule {r:?} in a step change"),
            }
        }
        change
    }

    /// An action of a step or a card (`None` for anything else).
    fn action(&self, x: P) -> Option<Action> {
        let xs = self.span(&x);
        Some(match x.as_rule() {
            Rule::do_action => {
                let mut i = x.into_inner();
                let target = self.name(i.next().unwrap());
                let args = self.args(i.next().unwrap());
                let each = i.next().map(|e| self.each(e));
                Action::Do {
                    target,
                    args,
                    each,
                    span: xs,
                }
            }
            Rule::draw_action => {
                let mut i = x.into_inner();
                i.next(); // the keyword
                let deck = self.name(i.next().unwrap());
                let mut args = None;
                let mut until = None;
                let mut each = None;
                for y in i {
                    match y.as_rule() {
                        Rule::args => args = Some(self.args(y)),
                        Rule::until_left => {
                            let n = y.into_inner().next().unwrap();
                            until = Some((self.int(&n), self.span(&n)));
                        }
                        _ => each = Some(self.each(y)),
                    }
                }
                Action::Draw {
                    deck,
                    args,
                    until,
                    each,
                    span: xs,
                }
            }
            Rule::shuffle_action => {
                let mut i = x.into_inner();
                i.next(); // the keyword
                Action::Shuffle {
                    deck: self.name(i.next().unwrap()),
                    span: xs,
                }
            }
            Rule::deal_action | Rule::discard_action => {
                let deal = x.as_rule() == Rule::deal_action;
                let mut i = x.into_inner().filter(|y| {
                    !matches!(
                        y.as_rule(),
                        Rule::to_kw | Rule::from_kw | Rule::up_kw | Rule::down_kw
                    )
                });
                i.next(); // the keyword
                let deck = self.name(i.next().unwrap());
                let holder = self.expr(i.next().unwrap());
                let size = self.expr(i.next().unwrap());
                let each = i.next().map(|e| self.each(e));
                if deal {
                    Action::Deal {
                        deck,
                        holder,
                        size,
                        each,
                        span: xs,
                    }
                } else {
                    Action::Discard {
                        deck,
                        holder,
                        size,
                        each,
                        span: xs,
                    }
                }
            }
            Rule::alternate_action => {
                let mut i = x.into_inner();
                i.next(); // the keyword
                let target = self.name(i.next().unwrap());
                let args = self.args(i.next().unwrap());
                let each = self.each(i.next().unwrap());
                let from = i.nth(1).map(|e| self.expr(e));
                Action::Alternate {
                    target,
                    args,
                    each,
                    from,
                    span: xs,
                }
            }
            Rule::goto_action => {
                let mut when = None;
                let mut target = None;
                for y in x.into_inner() {
                    match y.as_rule() {
                        Rule::expr => when = Some(self.expr(y)),
                        _ => {
                            target = Some(Name {
                                span: self.span(&y),
                                text: unquote(y),
                            })
                        }
                    }
                }
                Action::Goto {
                    when,
                    target: target.unwrap(),
                    span: xs,
                }
            }
            Rule::end_action => {
                let when = x.into_inner().next().map(|e| self.expr(e));
                Action::End { when, span: xs }
            }
            _ => return None,
        })
    }

    /// `for each V in sides|units [where COND]`.
    fn each(&self, p: P) -> Each {
        let mut i = p.into_inner();
        let var = self.name(i.next().unwrap());
        let coll = self.name(i.next().unwrap());
        let cond = i.nth(1).map(|e| self.expr(e));
        Each { var, coll, cond }
    }

    /// `deck NAME [(PARAMS)] ["doc"] { card ... }` (after the keyword).
    fn deck<'a>(&self, it: impl Iterator<Item = P<'a>>) -> Deck {
        let mut name = None;
        let mut params = Vec::new();
        let mut doc = None;
        let mut cards = Vec::new();
        let mut after_each = Vec::new();
        for x in it {
            match x.as_rule() {
                Rule::deck_kw => {}
                Rule::ident => name = Some(self.name(x)),
                Rule::params => params = self.params(x),
                Rule::string => doc = Some(unquote(x)),
                Rule::after_each => after_each.push(self.after_each(x)),
                _ => cards.push(self.card(x)),
            }
        }
        Deck {
            name: name.expect("the grammar requires a deck's name"),
            params,
            doc,
            cards,
            after_each,
        }
    }

    /// `after each card { ACTIONS }`.
    fn after_each(&self, p: P) -> AfterEach {
        let mut i = p.into_inner();
        let span = self.span(&i.next().expect("the grammar requires `after each card`"));
        AfterEach {
            actions: i.filter_map(|x| self.action(x)).collect(),
            span,
        }
    }

    fn card(&self, p: P) -> Card {
        let span = self.span(&p);
        let mut name = None;
        let mut copies = None;
        let mut value = None;
        let mut each = None;
        let mut when = None;
        let mut actions = Vec::new();
        for x in p.into_inner() {
            match x.as_rule() {
                Rule::card_kw => {}
                Rule::name => name = Some(self.name(x)),
                Rule::copies => {
                    let n = x.into_inner().nth(1).unwrap();
                    copies = Some((self.int(&n), self.span(&n)));
                }
                Rule::card_value => {
                    let n = x.into_inner().nth(1).unwrap();
                    value = Some((self.int(&n), self.span(&n)));
                }
                Rule::each_clause => each = Some(self.each(x)),
                Rule::card_when => when = Some(self.expr(x.into_inner().next().unwrap())),
                _ => actions.extend(self.action(x)),
            }
        }
        Card {
            name: name.expect("the grammar requires a card's name"),
            copies,
            value,
            each,
            when,
            actions,
            span,
        }
    }

    fn row(&self, p: P) -> Row {
        let span = self.span(&p);
        let mut it = p.into_inner();
        let guard = it.next().unwrap().into_inner().next().unwrap();
        let guard = match guard.as_rule() {
            Rule::otherwise => Guard::Otherwise,
            Rule::when_guard => Guard::When(self.expr(guard.into_inner().next().unwrap())),
            Rule::key_tuple => Guard::Keys(guard.into_inner().map(|k| self.key(k)).collect()),
            _ => Guard::Keys(vec![self.key(guard)]),
        };
        let value = self.expr(it.next().unwrap());
        Row { guard, value, span }
    }

    fn key(&self, p: P) -> KeyPattern {
        let inner = p.into_inner().next().unwrap();
        let span = self.span(&inner);
        match inner.as_rule() {
            Rule::wildcard => KeyPattern::Any(span),
            Rule::key_range => {
                let text = inner.as_str();
                let (a, b) = text.split_once("..").unwrap();
                let parse = |s: &str| {
                    let s = s.trim();
                    if s.is_empty() {
                        None
                    } else {
                        Some(self.number(s, span))
                    }
                };
                KeyPattern::Range(parse(a), parse(b), span)
            }
            Rule::signed_int => KeyPattern::Int(self.int(&inner), span),
            Rule::bool_lit => KeyPattern::Bool(inner.as_str().starts_with("true"), span),
            _ => KeyPattern::Name(self.name(inner)),
        }
    }

    fn choice(&self, p: P) -> Choice {
        let mut it = p.into_inner();
        let head = it.next().unwrap();
        let span = self.span(&head);
        let kind = match head.as_rule() {
            Rule::pick_choice => ChoiceKind::Pick,
            Rule::move_choice => ChoiceKind::Move,
            Rule::charge_choice => ChoiceKind::Charge,
            Rule::place_choice => ChoiceKind::Place,
            Rule::face_choice => ChoiceKind::Face,
            _ => ChoiceKind::Retire,
        };
        let mut vars = Vec::new();
        let mut legal = None;
        for x in head.into_inner() {
            match x.as_rule() {
                Rule::ident => vars.push(self.name(x)),
                Rule::expr => legal = Some(self.expr(x)),
                _ => {}
            }
        }
        let clauses = it
            .map(|c| {
                let c = c.into_inner().next().unwrap();
                let span = self.span(&c);
                let rule = c.as_rule();
                let mut parts = c.into_inner();
                match rule {
                    Rule::expr_clause => {
                        let k = self.name(parts.next().unwrap());
                        Clause::Expr(k, self.expr(parts.next().unwrap()))
                    }
                    Rule::bound_clause => {
                        let k = self.name(parts.next().unwrap());
                        let v = self.name(parts.next().unwrap());
                        Clause::Bound(k, v, self.expr(parts.next().unwrap()))
                    }
                    Rule::pay_clause => {
                        parts.next(); // the keyword
                        let deck = self.name(parts.next().unwrap());
                        let cost = self.expr(parts.next().unwrap());
                        let from = self.expr(parts.nth(1).unwrap());
                        let to = parts.nth(1).map(|e| self.expr(e));
                        Clause::Pay(Box::new(crate::front::syntax::Pay {
                            deck,
                            cost,
                            from,
                            to,
                            span,
                        }))
                    }
                    Rule::check_clause => {
                        parts.next(); // the keyword
                        let n = self.name(parts.next().unwrap());
                        let args = self.args(parts.next().unwrap());
                        let unless = parts.nth(1).map(|e| self.expr(e));
                        Clause::Check(n, args, unless, span)
                    }
                    _ => {
                        let n = self.name(parts.next().unwrap());
                        Clause::Then(n, self.args(parts.next().unwrap()), span)
                    }
                }
            })
            .collect();
        Choice {
            kind,
            vars,
            legal: legal.unwrap(),
            clauses,
            span,
        }
    }

    fn block(&self, p: P) -> Vec<Stmt> {
        p.into_inner().map(|s| self.stmt(s)).collect()
    }

    /// A statement, on a stack with room for it (blocks nest).
    fn stmt(&self, p: P) -> Stmt {
        guarded(|| self.stmt_here(p))
    }

    fn stmt_here(&self, p: P) -> Stmt {
        let span = self.span(&p);
        let rule = p.as_rule();
        let mut it = p.into_inner();
        match rule {
            Rule::let_stmt => {
                let n = self.name(it.next().unwrap());
                Stmt::Let(n, self.expr(it.next().unwrap()))
            }
            Rule::outcome_stmt => {
                let n = self.name(it.next().unwrap());
                Stmt::Outcome(n, self.expr(it.next().unwrap()))
            }
            Rule::require_stmt => {
                let e = self.expr(it.next().unwrap());
                Stmt::Require(e, unquote(it.next().unwrap()), span)
            }
            Rule::if_stmt => {
                let c = self.expr(it.next().unwrap());
                let then = self.block(it.next().unwrap());
                let els = match it.next() {
                    None => Vec::new(),
                    Some(x) if x.as_rule() == Rule::if_stmt => vec![self.stmt(x)],
                    Some(x) => self.block(x),
                };
                Stmt::If(c, then, els)
            }
            Rule::for_stmt => {
                let var = self.name(it.next().unwrap());
                let mut coll = None;
                let mut x = it.next().unwrap();
                if x.as_rule() == Rule::ident {
                    coll = Some(self.name(x));
                    x = it.next().unwrap();
                }
                let c = self.expr(x);
                let body = self.block(it.next().unwrap());
                Stmt::For(var, coll, c, body)
            }
            Rule::assign_stmt => {
                let target = self.postfix(it.next().unwrap());
                let op = assign_op(it.next().unwrap().as_str());
                let v = self.expr(it.next().unwrap());
                Stmt::Assign(target, op, v, span)
            }
            Rule::call_stmt => {
                let n = self.name(it.next().unwrap());
                Stmt::Call(n, self.args(it.next().unwrap()), span)
            }
            Rule::note_stmt => {
                it.next(); // the keyword
                let mut call = it.next().unwrap().into_inner();
                let n = self.name(call.next().unwrap());
                let args = self.args(call.next().unwrap());
                let v = it.next().map(|e| self.expr(e));
                Stmt::Note(n, args, v, span)
            }
            Rule::for_file_stmt => {
                it.next(); // `file`
                let var = self.name(it.next().unwrap());
                let mut x = it.next().unwrap();
                let mut beside = None;
                if x.as_rule() == Rule::ident {
                    beside = Some((self.name(x), self.name(it.next().unwrap())));
                    x = it.next().unwrap();
                }
                let formation = self.expr(x);
                let cond = self.expr(it.next().unwrap());
                let mut x = it.next().unwrap();
                let mut start = None;
                if x.as_rule() == Rule::from_kw {
                    start = Some(self.expr(it.next().unwrap()));
                    x = it.next().unwrap();
                }
                let body = self.block(x);
                Stmt::ForFile(Box::new(crate::front::syntax::ForFile {
                    var,
                    beside,
                    formation,
                    cond,
                    start,
                    body,
                    span,
                }))
            }
            Rule::mark_stmt => {
                it.next(); // `mark`
                Stmt::Mark(self.expr(it.next().unwrap()), span)
            }
            r => unreachable!("grammar rule {r:?} is not a statement"),
        }
    }

    fn args(&self, p: P) -> Vec<Expr> {
        p.into_inner().map(|e| self.expr(e)).collect()
    }

    /// An expression, on a stack with room for it (see [`nesting`]).
    fn expr(&self, p: P) -> Expr {
        guarded(|| self.expr_here(p))
    }

    fn expr_here(&self, p: P) -> Expr {
        let span = self.span(&p);
        match p.as_rule() {
            Rule::expr | Rule::and_expr | Rule::not_expr | Rule::add_expr => self.flat(p),
            Rule::dice_expr => {
                // A `unary` (a negated value), or a value and its fields
                // (`u.resolve`), then a die and its suffixes, if any.
                let mut it = p.into_inner().peekable();
                let (first, d0) = self.fields(self.sub(it.next().unwrap()), &mut it);
                let Some(next) = it.peek() else {
                    self.depth.set(d0);
                    return first;
                };
                let (count, die) = if next.as_rule() == Rule::die_ref {
                    let d = it.next().unwrap();
                    (first, self.name(d.into_inner().next().unwrap()))
                } else {
                    // A bare die with suffixes: one die of that name.
                    let die = match &first.kind {
                        ExprKind::Name(n) => n.clone(),
                        _ => Name {
                            text: "(not a die)".into(),
                            span: first.span,
                        },
                    };
                    let one = Expr {
                        kind: ExprKind::Int(1),
                        span: first.span,
                    };
                    (one, die)
                };
                let mut d = d0;
                let mut scoring = None;
                let mut counting = Vec::new();
                let mut reroll = None;
                for x in it {
                    match x.as_rule() {
                        Rule::scoring => {
                            let (e, ds) = self.sub(x.into_inner().next().unwrap());
                            d = d.max(ds);
                            scoring = Some(Box::new(e))
                        }
                        Rule::counting => counting = x.into_inner().map(|n| self.name(n)).collect(),
                        Rule::reroll => {
                            reroll = Some(match x.into_inner().next().unwrap().as_str() {
                                "misses" => Reroll::Misses,
                                "ones" => Reroll::Ones,
                                "hits" => Reroll::Hits,
                                _ => Reroll::Sixes,
                            })
                        }
                        _ => {}
                    }
                }
                self.node(
                    ExprKind::Dice {
                        count: Box::new(count),
                        die,
                        scoring,
                        counting,
                        reroll,
                    },
                    span,
                    d + 1,
                    span,
                )
            }
            Rule::unary | Rule::unary_exact => {
                let mut it = p.into_inner();
                let first = it.next().unwrap();
                if first.as_rule() == Rule::neg {
                    let (e, d) = self.sub(it.next().unwrap());
                    self.node(ExprKind::Neg(Box::new(e)), span, d + 1, span)
                } else {
                    self.expr(first)
                }
            }
            Rule::postfix | Rule::postfix_exact => self.postfix(p),
            Rule::if_expr => {
                let mut it = p.into_inner();
                let (c, dc) = self.sub(it.next().unwrap());
                let (a, da) = self.sub(it.next().unwrap());
                let (b, db) = self.sub(it.next().unwrap());
                self.node(
                    ExprKind::If(Box::new(c), Box::new(a), Box::new(b)),
                    span,
                    1 + dc.max(da).max(db),
                    span,
                )
            }
            Rule::quant_expr => {
                let mut it = p.into_inner();
                let q = match it.next().unwrap().as_str() {
                    "any" => Quant::Any,
                    "first" => Quant::First,
                    "all" => Quant::All,
                    "sum" => Quant::Sum,
                    "min" => Quant::Min,
                    "max" => Quant::Max,
                    _ => Quant::Count,
                };
                let var = self.name(it.next().unwrap());
                let mut coll = None;
                let mut body = None;
                let mut value = None;
                let mut d = 0;
                for x in it {
                    match x.as_rule() {
                        Rule::ident => coll = Some(self.name(x)),
                        Rule::of_kw => {}
                        _ if body.is_none() => {
                            let (e, de) = self.sub(x);
                            d = d.max(de);
                            body = Some(e)
                        }
                        _ => {
                            let (e, de) = self.sub(x);
                            d = d.max(de);
                            value = Some(Box::new(e))
                        }
                    }
                }
                self.node(
                    ExprKind::Quant(q, var, coll, Box::new(body.unwrap()), value),
                    span,
                    d + 1,
                    span,
                )
            }
            Rule::roll_expr => {
                let mut it = p
                    .into_inner()
                    .filter(|x| !matches!(x.as_rule(), Rule::roll_kw | Rule::as_kw));
                let (pool, dp) = self.sub(it.next().unwrap());
                let effects = self.name(it.next().unwrap());
                let (args, da) = it.next().map_or((Vec::new(), 0), |a| self.args_deep(a));
                self.node(
                    ExprKind::Roll {
                        pool: Box::new(pool),
                        effects,
                        args,
                    },
                    span,
                    1 + dp.max(da),
                    span,
                )
            }
            Rule::odds_expr => {
                let mut it = p.into_inner();
                let expect = it.next().unwrap().as_str() == "expect";
                let mut call = it.next().unwrap().into_inner();
                let procedure = self.name(call.next().unwrap());
                let (args, da) = self.args_deep(call.next().unwrap());
                let mut given = None;
                let mut d = da;
                let mut next = it.next().unwrap();
                if next.as_rule() == Rule::given_kw {
                    let (g, dg) = self.sub(it.next().unwrap());
                    d = d.max(dg);
                    given = Some(g);
                    next = it.next().unwrap();
                }
                let (of, dof) = self.sub(next);
                self.node(
                    ExprKind::Odds(Box::new(OddsOf {
                        expect,
                        procedure,
                        args,
                        given,
                        of,
                    })),
                    span,
                    1 + d.max(dof),
                    span,
                )
            }
            Rule::original_expr => {
                let e = self.postfix(p.into_inner().next().unwrap());
                let d = self.depth.get();
                self.node(ExprKind::Original(Box::new(e)), span, d + 1, span)
            }
            Rule::int => self.leaf(ExprKind::Int(self.int(&p)), span),
            Rule::bool_lit => self.leaf(ExprKind::Bool(p.as_str().starts_with("true")), span),
            Rule::none_lit => self.leaf(ExprKind::None, span),
            Rule::unlimited_lit => self.leaf(ExprKind::Unlimited, span),
            Rule::ident => self.leaf(ExprKind::Name(self.name(p)), span),
            Rule::call | Rule::call_value => {
                // A call, or (`call_value`) a name (its span is the
                // value's) or a call of it.
                let mut it = p.into_inner();
                let n = self.name(it.next().unwrap());
                match it.next() {
                    None => self.leaf(ExprKind::Name(n), span),
                    Some(a) => {
                        let (args, d) = self.args_deep(a);
                        self.node(ExprKind::Call(n, args), span, d + 1, span)
                    }
                }
            }
            r => unreachable!("grammar rule {r:?} is not an expression"),
        }
    }

    /// An `expr`, an `and_expr` (an operand of `or` after the first), a
    /// `not_expr` (of `and`) or roll's `add_expr`: the grammar's levels are
    /// silent, so the pairs are values and operators as written, given
    /// their precedence here. The tree, its spans and the order its nodes
    /// are made in (the first too deep is the one reported) are those the
    /// nested rules of before gave.
    fn flat(&self, p: P) -> Expr {
        let rule = p.as_rule();
        let whole = (rule == Rule::not_expr).then(|| self.span(&p));
        let mut it = p.into_inner().peekable();
        let (e, d) = match rule {
            Rule::add_expr => {
                let (e, _) = self.sum(&mut it);
                return e;
            }
            Rule::not_expr => self.negated(&mut it, whole),
            Rule::and_expr => self.and_chain(&mut it),
            _ => {
                // An `or` node is made when the `and`s after it end.
                let mut acc = self.and_chain(&mut it);
                while it.next().is_some() {
                    let r = self.sub(it.next().unwrap());
                    acc = self.binary(BinOp::Or, acc, r);
                }
                acc
            }
        };
        self.depth.set(d);
        e
    }

    /// Operands joined by `and`, the first one's pairs inline.
    fn and_chain(&self, it: &mut Flat) -> (Expr, usize) {
        let mut acc = self.negated(it, None);
        while it.peek().is_some_and(|x| x.as_rule() == Rule::and_op) {
            it.next();
            let r = self.sub(it.next().unwrap());
            acc = self.binary(BinOp::And, acc, r);
        }
        acc
    }

    /// A binary node of `acc` and `r` (each with its depth), spanning both.
    fn binary(&self, op: BinOp, acc: (Expr, usize), r: (Expr, usize)) -> (Expr, usize) {
        let ((acc, d), (r, dr)) = (acc, r);
        let s = acc.span.to(r.span);
        let at = r.span;
        let e = self.node(
            ExprKind::Binary(op, Box::new(acc), Box::new(r)),
            s,
            1 + d.max(dr),
            at,
        );
        (e, self.depth.get())
    }

    /// `not`s, then a sum, then a comparison or `is`. `whole` is its span
    /// when it is a pair of its own (`not_expr`); else it and a comparison's
    /// run to where the rule of before ended (see [`Builder::sum`]).
    fn negated(&self, it: &mut Flat, whole: Option<Span>) -> (Expr, usize) {
        let mut nots = 0;
        let mut start = 0;
        while it.peek().is_some_and(|x| x.as_rule() == Rule::not_kw) {
            let n = it.next().unwrap();
            if nots == 0 {
                start = n.as_span().start();
            }
            nots += 1;
        }
        let first = it.peek().unwrap();
        let input = first.get_input();
        let lhs_start = first.as_span().start();
        if nots == 0 {
            start = lhs_start;
        }
        let (lhs, lhs_end) = self.sum(it);
        let dl = self.depth.get();
        let (mut e, mut d, end) = match it.peek().map(|x| x.as_rule()) {
            Some(Rule::is_op) => {
                let op = it.next().unwrap();
                let negated = op.into_inner().any(|x| x.as_rule() == Rule::not_kw);
                let rhs = it.next().unwrap();
                let end = rhs.as_span().end();
                let span = self.span_of(input, lhs_start, end);
                let names = rhs.into_inner().map(|n| self.name(n)).collect();
                let e = self.node(
                    ExprKind::Is(Box::new(lhs), names, negated),
                    span,
                    dl + 1,
                    span,
                );
                (e, self.depth.get(), end)
            }
            Some(Rule::cmp_op) => {
                let op = match it.next().unwrap().as_str() {
                    "==" => BinOp::Eq,
                    "!=" => BinOp::Ne,
                    "<" => BinOp::Lt,
                    "<=" => BinOp::Le,
                    ">" => BinOp::Gt,
                    _ => BinOp::Ge,
                };
                let (rhs, end) = self.sum(it);
                let dr = self.depth.get();
                let span = self.span_of(input, lhs_start, end);
                let e = self.node(
                    ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                    span,
                    1 + dl.max(dr),
                    span,
                );
                (e, self.depth.get(), end)
            }
            _ => (lhs, dl, skipped(input, lhs_end)),
        };
        if nots > 0 {
            let span = whole.unwrap_or_else(|| self.span_of(input, start, end));
            for _ in 0..nots {
                e = self.node(ExprKind::Not(Box::new(e)), span, d + 1, span);
                d = self.depth.get();
            }
        }
        (e, d)
    }

    /// `*` and `/` before `+` and `-`, each left to right: dice values and
    /// the operators between them, up to the first pair that is neither.
    /// Also where the rule of before (`add_expr = { mul_expr ~ (add_op ~
    /// mul_expr)* }`, `mul_expr` likewise of dice) ended: a rule whose
    /// repetition matched nothing ended after the space and comments
    /// following its first part.
    fn sum(&self, it: &mut Flat) -> (Expr, usize) {
        let mut sum: Option<((Expr, usize), BinOp)> = None;
        let value = it.next().unwrap();
        let input = value.get_input();
        let mut end = value.as_span().end();
        let mut product = self.sub(value);
        let mut products = false;
        while it
            .peek()
            .is_some_and(|x| matches!(x.as_rule(), Rule::add_op | Rule::mul_op))
        {
            let op = match it.next().unwrap().as_str() {
                "*" => BinOp::Mul,
                "/" => BinOp::Div,
                "+" => BinOp::Add,
                _ => BinOp::Sub,
            };
            let value = it.next().unwrap();
            end = value.as_span().end();
            let r = self.sub(value);
            if matches!(op, BinOp::Mul | BinOp::Div) {
                product = self.binary(op, product, r);
                products = true;
            } else {
                sum = Some(match sum {
                    None => (product, op),
                    Some((acc, pending)) => (self.binary(pending, acc, product), op),
                });
                product = r;
                products = false;
            }
        }
        let (e, d) = match sum {
            None => {
                end = skipped(input, end);
                product
            }
            Some((acc, pending)) => {
                if !products {
                    end = skipped(input, end);
                }
                self.binary(pending, acc, product)
            }
        };
        self.depth.set(d);
        (e, end)
    }

    /// A call's arguments and the depth of the deepest.
    fn args_deep(&self, p: P) -> (Vec<Expr>, usize) {
        let mut d = 0;
        let args = p
            .into_inner()
            .map(|e| {
                let (e, de) = self.sub(e);
                d = d.max(de);
                e
            })
            .collect();
        (args, d)
    }

    fn postfix(&self, p: P) -> Expr {
        let mut it = p.into_inner().peekable();
        let first = self.sub(it.next().unwrap());
        let (e, d) = self.fields(first, &mut it);
        self.depth.set(d);
        e
    }

    /// A value (with its depth) and the fields read from it: the `ident`
    /// pairs that come next in `it` (a `postfix`, or a `dice_expr`, whose
    /// value pair is never a bare `ident`).
    fn fields(&self, (mut e, mut d): (Expr, usize), it: &mut Flat<'_>) -> (Expr, usize) {
        while let Some(f) = it.next_if(|x| x.as_rule() == Rule::ident) {
            let n = self.name(f);
            let s = e.span.to(n.span);
            let at = n.span;
            e = self.node(ExprKind::Field(Box::new(e), n), s, d + 1, at);
            d = self.depth.get();
        }
        (e, d)
    }
}

fn assign_op(s: &str) -> AssignOp {
    match s {
        "+=" => AssignOp::Add,
        "-=" => AssignOp::Sub,
        _ => AssignOp::Set,
    }
}
