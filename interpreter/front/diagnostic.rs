//! Diagnostics: what went wrong, where, and what to do about it. The compiler,
//! the situation reader and the runtime all report through [`Diag`]; the CLI
//! renders them with miette against the [`Sources`] they point into.

use crate::front::source::Sources;
use crate::front::syntax::Span;
use miette::{LabeledSpan, MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};
use std::fmt;

/// How bad a [`Diag`] is: an error stops `check` (non-zero exit) and
/// whatever was asked; a warning is printed and the work goes on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Severity {
    #[default]
    Error,
    Warning,
}

impl Severity {
    /// As `check --message-format json` and the language server name it.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem found in a ruleset, a situation or a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    /// A stable code, e.g. `muster::unknown_name`.
    pub code: &'static str,
    pub message: String,
    pub span: Option<Span>,
    pub label: String,
    pub help: Option<String>,
    /// Further places that explain the problem (e.g. the first definition).
    pub notes: Vec<(Span, String)>,
    /// An error unless made a warning with [`Diag::warning`].
    pub severity: Severity,
}

impl Diag {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Diag {
            code,
            message: message.into(),
            span: None,
            label: String::new(),
            help: None,
            notes: Vec::new(),
            severity: Severity::Error,
        }
    }
    /// Make this a warning: shown, but not a failure.
    pub fn warning(mut self) -> Self {
        self.severity = Severity::Warning;
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
    pub fn at(mut self, span: Span, label: impl Into<String>) -> Self {
        self.span = Some(span);
        self.label = label.into();
        self
    }
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    pub fn note(mut self, span: Span, label: impl Into<String>) -> Self {
        self.notes.push((span, label.into()));
        self
    }
    /// Place a diagnostic that has no place yet at `span`; one that has
    /// keeps its own (the innermost place that knew is the one shown: a
    /// run-time fault at the pool or statement that failed).
    pub fn or_at(self, span: Span, label: impl Into<String>) -> Self {
        match self.span {
            Some(_) => self,
            None => self.at(span, label),
        }
    }

    /// Attach the source text so that miette can render the diagnostic.
    pub fn report(&self, sources: &Sources) -> Rendered {
        // A note in the same file and near the primary span is drawn in
        // the same snippet; one far away (miette would print every line in
        // between) or in another file is named in the help instead.
        let line_of = |sp: Span| {
            let src = sources.get(sp.file);
            src.text[..(sp.start as usize).min(src.text.len())]
                .matches('\n')
                .count()
                + 1
        };
        let near = |n: &Span| {
            self.span
                .is_some_and(|s| n.file == s.file && line_of(*n).abs_diff(line_of(s)) <= NEAR_LINES)
        };
        let mut spans = Vec::new();
        if let Some(s) = self.span {
            spans.push((s, self.label.clone(), true));
            for (n, l) in &self.notes {
                if near(n) {
                    spans.push((*n, l.clone(), false));
                }
            }
        }
        let (source, labels) = match self.span {
            Some(s) => {
                let src = sources.get(s.file);
                let (excerpt, labels) = Excerpt::of(&src.name, &src.text, &spans);
                (Some(excerpt), labels)
            }
            None => (None, Vec::new()),
        };
        let mut help = self.help.clone();
        for (n, l) in &self.notes {
            if !near(n) {
                let src = sources.get(n.file);
                let line = src.text[..(n.start as usize).min(src.text.len())]
                    .matches('\n')
                    .count()
                    + 1;
                let extra = format!("{} (see {}:{})", l, src.name, line);
                help = Some(match help {
                    Some(h) => format!("{h}\n{extra}"),
                    None => extra,
                });
            }
        }
        Rendered {
            severity: self.severity,
            code: self.code,
            message: self.message.clone(),
            source,
            labels,
            help,
        }
    }
}

/// How many lines apart a note may be from the primary span and still be
/// drawn in its snippet.
const NEAR_LINES: usize = 8;

/// Lines around the places a diagnostic points at, as miette draws them:
/// the lines in between kept whole, and a line too long to read (a
/// generated file, a line of a million characters) cut to a window around
/// what is pointed at, with `…` where it was cut. Line and column numbers
/// stay those of the file. Only these lines are copied, not the file.
#[derive(Debug)]
pub struct Excerpt {
    name: String,
    text: String,
    /// The file's line number (from 0) of the excerpt's first line.
    first_line: usize,
    /// Per line of the excerpt: its offset in the excerpt, and what to add
    /// to a byte column of it to make the file's (0 for a line kept whole).
    lines: Vec<(usize, isize)>,
}

/// A line longer than this many bytes is cut to a window.
const LONG_LINE: usize = 400;
/// The bytes of a cut line kept on either side of what is pointed at.
const WINDOW_MARGIN: usize = 40;
/// The most of one label's text shown on a cut line.
const WINDOW_WIDTH: usize = 100;
/// Lines kept above and below the places pointed at (miette shows one).
const EXCERPT_CONTEXT: usize = 3;
/// Where a line was cut.
const CUT: &str = "…";

impl Excerpt {
    /// The excerpt of `text` around `spans` (a primary and near notes, all
    /// in this file), and miette's labels pointing into it.
    fn of(name: &str, text: &str, spans: &[(Span, String, bool)]) -> (Excerpt, Vec<LabeledSpan>) {
        // A span's ends, in the text and on character boundaries (a span
        // may end inside a character: one byte of a longer one).
        let span_start = |s: &Span| floor_boundary(text, (s.start as usize).min(text.len()));
        let span_end = |s: &Span| ceil_boundary(text, (s.end as usize).min(text.len()));
        let line_start = |o: usize| text[..o].rfind('\n').map_or(0, |i| i + 1);
        let line_end = |o: usize| text[o..].find('\n').map_or(text.len(), |i| o + i);
        let line_no = |o: usize| text[..o].matches('\n').count();
        let lo = spans.iter().map(|(s, ..)| span_start(s)).min().unwrap_or(0);
        let hi = spans.iter().map(|(s, ..)| span_end(s)).max().unwrap_or(0);
        // Whole lines from EXCERPT_CONTEXT above the first place to as many
        // below the last.
        let mut from = line_start(lo);
        let mut first_line = line_no(from);
        for _ in 0..EXCERPT_CONTEXT {
            if from == 0 {
                break;
            }
            from = line_start(from - 1);
            first_line -= 1;
        }
        let mut to = line_end(hi.max(lo));
        for _ in 0..EXCERPT_CONTEXT {
            if to >= text.len() {
                break;
            }
            to = line_end(to + 1);
        }
        // Each line of [from, to): kept whole, or cut to a window.
        let mut out = String::new();
        let mut lines = Vec::new();
        // (start, end, window start) of each line in the file.
        let mut windows: Vec<(usize, usize, usize, usize)> = Vec::new();
        let mut at = from;
        loop {
            let end = line_end(at);
            let body = text[at..end].trim_end_matches('\r');
            let offset = out.len();
            if body.len() > LONG_LINE {
                // The window: around what is pointed at on this line.
                let on: Vec<(usize, usize)> = spans
                    .iter()
                    .map(|(s, ..)| (span_start(s), span_end(s)))
                    .filter(|(a, b)| *a <= end && *b >= at)
                    .collect();
                let a = on.iter().map(|x| x.0.max(at)).min().unwrap_or(at);
                let b = on.iter().map(|x| x.1.min(end)).max().unwrap_or(at);
                let w0 = floor_boundary(text, a.saturating_sub(WINDOW_MARGIN).max(at));
                let w1 = floor_boundary(text, (b.min(a + WINDOW_WIDTH) + WINDOW_MARGIN).min(end));
                let mut shown = String::new();
                if w0 > at {
                    shown.push_str(CUT);
                }
                let inner = shown.len();
                shown.push_str(&text[w0..w1]);
                if w1 < end {
                    shown.push_str(CUT);
                }
                lines.push((offset, (w0 - at) as isize - inner as isize));
                windows.push((at, end, w0, offset + inner));
                let window_end = w1;
                out.push_str(&shown);
                windows.last_mut().expect("just pushed").1 = window_end;
            } else {
                lines.push((offset, 0));
                windows.push((at, end, at, offset));
                out.push_str(&text[at..end]);
            }
            if end >= to || end >= text.len() {
                break;
            }
            out.push('\n');
            at = end + 1;
        }
        // A file offset, as an offset into the excerpt.
        let map = |o: usize| -> usize {
            let k = windows
                .iter()
                .rposition(|(start, ..)| *start <= o)
                .unwrap_or(0);
            let (_, end, w0, x) = windows[k];
            x + o.clamp(w0, end) - w0
        };
        let labels = spans
            .iter()
            .map(|(s, label, primary)| {
                let a = map(span_start(s));
                let b = map(span_end(s)).max(a);
                let span = SourceSpan::new(a.into(), b - a);
                if *primary {
                    LabeledSpan::new_primary_with_span(Some(label.clone()), span)
                } else {
                    LabeledSpan::new_with_span(Some(label.clone()), span)
                }
            })
            .collect();
        (
            Excerpt {
                name: name.to_string(),
                text: out,
                first_line,
                lines,
            },
            labels,
        )
    }
}

/// The nearest character boundary at or before `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The nearest character boundary at or after `i`.
fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self.text.as_str().read_span(span, before, after)?;
        // The excerpt's line of the span's start, for its cut columns.
        let k = self
            .lines
            .iter()
            .rposition(|(offset, _)| *offset <= span.offset())
            .unwrap_or(0);
        // A column is given only for a span read without lines above it.
        let column = if before == 0 && inner.line() == k {
            inner.column().saturating_add_signed(self.lines[k].1)
        } else {
            inner.column()
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.first_line,
            column,
            // Counted from the start of the text, as miette counts it for
            // a whole file (it decides from this which snippets to join).
            inner.line_count() + self.first_line,
        )))
    }
}

/// A [`Diag`] with its source attached: a miette diagnostic.
#[derive(Debug)]
pub struct Rendered {
    severity: Severity,
    code: &'static str,
    message: String,
    source: Option<Excerpt>,
    labels: Vec<LabeledSpan>,
    help: Option<String>,
}

impl fmt::Display for Rendered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Rendered {}

impl miette::Diagnostic for Rendered {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h.clone()) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.labels.is_empty() {
            None
        } else {
            Some(Box::new(self.labels.iter().cloned()))
        }
    }
}

/// Render diagnostics as plain text (no colour), as the tests snapshot them.
pub fn render_plain(diags: &[Diag], sources: &Sources) -> String {
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(100);
    let mut out = String::new();
    for d in diags {
        let r = d.report(sources);
        let _ = handler.render_report(&mut out, &r);
    }
    out
}

/// Many diagnostics at once, as a compile returns them.
#[derive(Debug, Default, Clone)]
pub struct Diags(pub Vec<Diag>);

impl Diags {
    pub fn push(&mut self, d: Diag) {
        self.0.push(d);
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
