//! Diagnostics: what went wrong, where, and what to do about it. The compiler,
//! the situation reader and the runtime all report through [`Diag`]; the CLI
//! renders them with miette against the [`Sources`] they point into.

use crate::source::Sources;
use crate::syntax::Span;
use miette::{LabeledSpan, NamedSource, SourceSpan};
use std::fmt;

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
        }
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

    /// Attach the source text so that miette can render the diagnostic.
    pub fn report(&self, sources: &Sources) -> Rendered {
        let source = self.span.map(|s| {
            let src = sources.get(s.file);
            NamedSource::new(src.name.clone(), src.text.to_string())
        });
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
        let mut labels = Vec::new();
        if let Some(s) = self.span {
            labels.push(LabeledSpan::new_primary_with_span(
                Some(self.label.clone()),
                to_source_span(s),
            ));
            for (n, l) in &self.notes {
                if near(n) {
                    labels.push(LabeledSpan::new_with_span(
                        Some(l.clone()),
                        to_source_span(*n),
                    ));
                }
            }
        }
        let mut help = self.help.clone();
        for (n, l) in &self.notes {
            if !near(n) {
                let src = sources.get(n.file);
                let line = src.text[..n.start as usize].matches('\n').count() + 1;
                let extra = format!("{} (see {}:{})", l, src.name, line);
                help = Some(match help {
                    Some(h) => format!("{h}\n{extra}"),
                    None => extra,
                });
            }
        }
        Rendered {
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

fn to_source_span(s: Span) -> SourceSpan {
    SourceSpan::new((s.start as usize).into(), s.len())
}

/// A [`Diag`] with its source attached: a miette diagnostic.
#[derive(Debug)]
pub struct Rendered {
    code: &'static str,
    message: String,
    source: Option<NamedSource<String>>,
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
