//! `muster lsp`: a language server over standard input and output, for
//! editors (VS Code, Neovim, Helix, ...). Built on `lsp-server`, the
//! synchronous transport rust-analyzer uses: one thread reads the editor's
//! messages, this loop answers them in order.
//!
//! What it offers, from the editor's unsaved text (it never writes a file):
//! - diagnostics as a ruleset changes: those `muster check` gives, with
//!   their related places, published for the file they are in (a mistake
//!   in a file the ruleset extends is shown in that file);
//! - hover: a unit type's row as compiled (after `extends`, overrides and
//!   qualities), a table's rows, any declaration's comment (which cites the
//!   book's section);
//! - go to definition across `extends`, `import` and stdlib/;
//! - completion of the names bound at the cursor ([`scope`]: parameters,
//!   options, quantifier variables), then of the names the ruleset
//!   declares (its own, those of what it extends and imports); hover and
//!   go to definition know the bound names too;
//! - the outline of the file (document symbols);
//! - on a situation file (rules/situations/*.toml), its exact odds under
//!   each ruleset of its folders that reads it, as code lenses (and the
//!   whole `muster odds` table as its hover).
//!
//! A request whose handler fails, even by a panic, gets an error response;
//! the server goes on.

pub mod analysis;
pub mod scope;
pub mod situation;
pub mod text;

use analysis::{source_path, Analysis};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::*;
use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use text::{name_at, Lines};

/// Serve the editor on standard input and output until it says `exit`.
pub fn run() -> Result<(), String> {
    let (conn, io) = Connection::stdio();
    let caps = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
    conn.initialize(caps).map_err(|e| e.to_string())?;
    let mut server = Server::default();
    server.serve(&conn).map_err(|e| e.to_string())?;
    drop(conn);
    io.join().map_err(|e| e.to_string())
}

/// What the server answers.
fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions::default()),
        document_symbol_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        ..Default::default()
    }
}

/// The open documents and what is known of them.
#[derive(Default)]
struct Server {
    /// The editor's text of each open document, by URI.
    docs: HashMap<String, Arc<str>>,
    /// Open documents changed since they were last analysed.
    dirty: HashSet<String>,
    /// The last analysis of each open ruleset document.
    analyses: HashMap<String, Analysis>,
    /// The odds of each open situation document.
    odds: HashMap<String, Vec<situation::Odds>>,
    /// The URIs each document's last analysis published diagnostics for.
    published: HashMap<String, HashSet<String>>,
}

/// A request's failure: the code and message of its error response.
type Failure = (ErrorCode, String);

impl Server {
    /// Answer messages until `shutdown` and `exit`. Analysis waits until
    /// no message is queued (a burst of keystrokes is analysed once) or a
    /// request needs it.
    fn serve(&mut self, conn: &Connection) -> Result<(), lsp_server::ProtocolError> {
        loop {
            if !self.dirty.is_empty() && conn.receiver.is_empty() {
                self.analyse_dirty(conn);
            }
            let Ok(msg) = conn.receiver.recv() else {
                return Ok(());
            };
            match msg {
                Message::Request(req) => {
                    if conn.handle_shutdown(&req)? {
                        return Ok(());
                    }
                    self.analyse_dirty(conn);
                    let resp = self.answer(&req);
                    let _ = conn.sender.send(resp.into());
                }
                Message::Notification(n) => {
                    let method = n.method.clone();
                    if catch_unwind(AssertUnwindSafe(|| self.notified(n))).is_err() {
                        eprintln!("muster lsp: failed on a `{method}` notification");
                    }
                }
                Message::Response(_) => {}
            }
        }
    }

    /// The response to `req`: its handler's answer, or an error response
    /// (also when the handler panics: the server goes on).
    fn answer(&mut self, req: &Request) -> Response {
        let id = req.id.clone();
        match catch_unwind(AssertUnwindSafe(|| self.request(req))) {
            Ok(Ok(v)) => Response::new_ok(id, v),
            Ok(Err((code, msg))) => Response::new_err(id, code as i32, msg),
            Err(_) => Response::new_err(
                id,
                ErrorCode::InternalError as i32,
                format!("muster lsp failed on this `{}` request", req.method),
            ),
        }
    }

    fn request(&mut self, req: &Request) -> Result<Json, Failure> {
        fn params<P: serde::de::DeserializeOwned>(req: &Request) -> Result<P, Failure> {
            serde_json::from_value(req.params.clone())
                .map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
        }
        let json = |v: Result<Json, serde_json::Error>| {
            v.map_err(|e| (ErrorCode::InternalError, e.to_string()))
        };
        match req.method.as_str() {
            "textDocument/hover" => {
                let p: HoverParams = params(req)?;
                json(serde_json::to_value(
                    self.hover(&p.text_document_position_params),
                ))
            }
            "textDocument/definition" => {
                let p: GotoDefinitionParams = params(req)?;
                json(serde_json::to_value(
                    self.definition(&p.text_document_position_params),
                ))
            }
            "textDocument/completion" => {
                let p: CompletionParams = params(req)?;
                json(serde_json::to_value(
                    self.completion(&p.text_document_position),
                ))
            }
            "textDocument/documentSymbol" => {
                let p: DocumentSymbolParams = params(req)?;
                json(serde_json::to_value(self.symbols(&p.text_document.uri)))
            }
            "textDocument/codeLens" => {
                let p: CodeLensParams = params(req)?;
                json(serde_json::to_value(self.lenses(&p.text_document.uri)))
            }
            m => Err((
                ErrorCode::MethodNotFound,
                format!("muster lsp does not answer `{m}`"),
            )),
        }
    }

    fn notified(&mut self, n: Notification) {
        match n.method.as_str() {
            "textDocument/didOpen" => {
                if let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) {
                    self.opened(p.text_document.uri.as_str(), p.text_document.text);
                }
            }
            "textDocument/didChange" => {
                if let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) {
                    self.changed(p);
                }
            }
            "textDocument/didSave" => {
                // What depends on the saved file (a house rule on a base)
                // is checked again.
                self.dirty.extend(self.docs.keys().cloned());
            }
            "textDocument/didClose" => {
                if let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) {
                    self.closed(p.text_document.uri.as_str());
                }
            }
            _ => {}
        }
    }

    /// An opened document: its text now stands in for its file, so every
    /// open document (one may extend it) is checked again.
    fn opened(&mut self, uri: &str, text: String) {
        self.docs.insert(uri.to_string(), text.into());
        self.dirty.extend(self.docs.keys().cloned());
    }

    /// A change: the whole new text (the server asks for full sync), or
    /// ranges replaced, as a client may send anyway.
    fn changed(&mut self, p: DidChangeTextDocumentParams) {
        let uri = p.text_document.uri.as_str().to_string();
        let mut text = self.docs.get(&uri).map_or(String::new(), |t| t.to_string());
        for c in p.content_changes {
            match c.range {
                None => text = c.text,
                Some(r) => {
                    let lines = Lines::new(&text);
                    let (a, b) = (lines.offset(r.start), lines.offset(r.end));
                    let (a, b) = (a.min(b), a.max(b));
                    text.replace_range(a..b, &c.text);
                }
            }
        }
        self.docs.insert(uri, text.into());
        // Every open document may extend the changed one.
        self.dirty.extend(self.docs.keys().cloned());
    }

    /// A closed document: its file is read from disk again, by the open
    /// documents that extend it too.
    fn closed(&mut self, uri: &str) {
        self.docs.remove(uri);
        self.dirty.extend(self.docs.keys().cloned());
        self.dirty.remove(uri);
        self.analyses.remove(uri);
        self.odds.remove(uri);
        self.published.remove(uri);
    }

    /// Analyse the changed documents and publish their diagnostics.
    fn analyse_dirty(&mut self, conn: &Connection) {
        let mut dirty: Vec<String> = self.dirty.drain().collect();
        dirty.sort();
        crate::front::source::set_overlay(self.overlay());
        for uri in dirty {
            let published = catch_unwind(AssertUnwindSafe(|| self.analyse(&uri)));
            match published {
                Ok(notes) => {
                    for n in notes {
                        let _ = conn.sender.send(n.into());
                    }
                }
                Err(_) => eprintln!("muster lsp: failed analysing {uri}"),
            }
        }
        crate::front::source::set_overlay(HashMap::new());
    }

    /// The open documents' texts by their files' canonical paths: what
    /// the loader reads in place of the files.
    fn overlay(&self) -> HashMap<PathBuf, Arc<str>> {
        self.docs
            .iter()
            .filter_map(|(uri, t)| {
                let p = uri_path(uri)?;
                Some((p.canonicalize().unwrap_or(p), t.clone()))
            })
            .collect()
    }

    /// Analyse one open document; the diagnostics to publish (an empty
    /// list for each file whose problems are gone).
    fn analyse(&mut self, uri: &str) -> Vec<Notification> {
        let (Some(text), Some(path)) = (self.docs.get(uri).cloned(), uri_path(uri)) else {
            return Vec::new();
        };
        let mut by_file: HashMap<String, Vec<Diagnostic>> = HashMap::new();
        by_file.insert(uri.to_string(), Vec::new());
        if situation::is_situation(&path, &text) {
            self.odds
                .insert(uri.to_string(), situation::odds(&path, &text));
        } else if path.extension().is_some_and(|e| e == "muster") {
            if text.len() > crate::front::source::MAX_FILE_BYTES {
                by_file
                    .entry(uri.to_string())
                    .or_default()
                    .push(Diagnostic {
                        message: format!(
                            "the file is larger than {} MiB, the most muster reads from one file",
                            crate::front::source::MAX_FILE_BYTES >> 20
                        ),
                        severity: Some(DiagnosticSeverity::ERROR),
                        source: Some("muster".into()),
                        ..Default::default()
                    });
            } else {
                let a = analysis::analyse(&path, &text);
                for d in &a.diags {
                    let (file, diag) = diagnostic(&a, d, uri);
                    by_file.entry(file).or_default().push(diag);
                }
                // Keep the last names known while the text does not load
                // (a half-typed line): hover and completion go on working.
                let keep_old = a.items.is_empty()
                    && self.analyses.get(uri).is_some_and(|o| !o.items.is_empty());
                if !keep_old {
                    self.analyses.insert(uri.to_string(), a);
                }
            }
        }
        let now: HashSet<String> = by_file.keys().cloned().collect();
        let before = self.published.insert(uri.to_string(), now.clone());
        let others: HashSet<&String> = self
            .published
            .iter()
            .filter(|(k, _)| k.as_str() != uri)
            .flat_map(|(_, v)| v)
            .collect();
        for gone in before.unwrap_or_default() {
            if !now.contains(&gone) && !others.contains(&gone) {
                by_file.insert(gone, Vec::new());
            }
        }
        let mut files: Vec<_> = by_file.into_iter().collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files
            .into_iter()
            .filter_map(|(file, diagnostics)| {
                let uri = file.parse::<Uri>().ok()?;
                Some(Notification::new(
                    "textDocument/publishDiagnostics".into(),
                    PublishDiagnosticsParams {
                        uri,
                        diagnostics,
                        version: None,
                    },
                ))
            })
            .collect()
    }

    /// The text of `uri`: the editor's, else the file's.
    fn text(&self, uri: &str) -> Option<Arc<str>> {
        if let Some(t) = self.docs.get(uri) {
            return Some(t.clone());
        }
        let p = uri_path(uri)?;
        crate::front::source::read_text(&p).ok().map(Arc::from)
    }

    /// The name under a position of an open ruleset, with the analysis
    /// that knows it.
    fn name_at(&self, at: &TextDocumentPositionParams) -> Option<(&Analysis, String, Range)> {
        let uri = at.text_document.uri.as_str();
        let a = self.analyses.get(uri)?;
        let text = self.text(uri)?;
        let lines = Lines::new(&text);
        let (name, start, end) = name_at(&text, lines.offset(at.position))?;
        Some((a, name, lines.range(start, end)))
    }

    fn hover(&self, at: &TextDocumentPositionParams) -> Option<Hover> {
        let uri = at.text_document.uri.as_str();
        if let Some(odds) = self.odds.get(uri) {
            let tables: Vec<String> = odds
                .iter()
                .map(|o| format!("**{}**\n\n```text\n{}```", o.ruleset.display(), o.table))
                .collect();
            return (!tables.is_empty()).then(|| markdown(tables.join("\n\n"), None));
        }
        let (a, name, range) = self.name_at(at)?;
        if let Some(l) = self
            .locals_at(at)
            .into_iter()
            .rev()
            .find(|l| l.name == name)
        {
            let src = a.sources.get(l.span.file);
            let line = src.text[..(l.span.start as usize).min(src.text.len())]
                .matches('\n')
                .count()
                + 1;
            return Some(markdown(
                format!("`{}`: {}, {} line {line}\n", l.name, l.what, src.name),
                Some(range),
            ));
        }
        match a.find(&name) {
            Some(d) => Some(markdown(a.hover(d), Some(range))),
            None => {
                let (_, what) = builtins().find(|(n, _)| *n == name)?;
                Some(markdown(format!("*{what}*\n"), Some(range)))
            }
        }
    }

    /// The names bound at a position of an open ruleset that no declaration
    /// makes (parameters, options, quantifier variables: [`scope`]).
    fn locals_at(&self, at: &TextDocumentPositionParams) -> Vec<scope::Local> {
        let uri = at.text_document.uri.as_str();
        let (Some(a), Some(text)) = (self.analyses.get(uri), self.text(uri)) else {
            return Vec::new();
        };
        let Some(doc) = a.doc else {
            return Vec::new();
        };
        let offset = Lines::new(&text).offset(at.position);
        scope::locals(&a.items, doc, offset as u32)
    }

    /// Where the name under the cursor is declared; on an `extends` or
    /// `import` line, the file it names.
    fn definition(&self, at: &TextDocumentPositionParams) -> Option<GotoDefinitionResponse> {
        let uri = at.text_document.uri.as_str();
        let text = self.text(uri)?;
        let lines = Lines::new(&text);
        let offset = lines.offset(at.position);
        let (name, _, _) = name_at(&text, offset)?;
        let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line = text[line_start..].lines().next().unwrap_or("").trim_start();
        let file = if line.starts_with("extends") {
            uri_path(uri).and_then(|p| Some(p.parent()?.join(&name)))
        } else if line.starts_with("import") {
            Some(analysis::stdlib_dir().join(format!("{name}.muster")))
        } else {
            None
        };
        if let Some(f) = file {
            let f = f.canonicalize().unwrap_or(f);
            let start = Range::default();
            return Some(GotoDefinitionResponse::Scalar(Location::new(
                path_uri(&f)?,
                start,
            )));
        }
        let (a, name, _) = self.name_at(at)?;
        if let Some(l) = self
            .locals_at(at)
            .into_iter()
            .rev()
            .find(|l| l.name == name)
        {
            return Some(GotoDefinitionResponse::Scalar(location(a, l.span)?));
        }
        let d = a.find(&name)?;
        Some(GotoDefinitionResponse::Scalar(location(a, d.span)?))
    }

    /// The names bound where the cursor is (parameters, options,
    /// quantifier variables, innermost first), then every name the ruleset
    /// declares (the client filters by what is typed).
    fn completion(&self, at: &TextDocumentPositionParams) -> Option<CompletionResponse> {
        let a = self.analyses.get(at.text_document.uri.as_str())?;
        let mut seen = HashSet::new();
        let locals: Vec<CompletionItem> = self
            .locals_at(at)
            .into_iter()
            .rev()
            .filter(|l| seen.insert(l.name.clone()))
            .map(|l| CompletionItem {
                label: l.name,
                kind: Some(CompletionItemKind::VARIABLE),
                detail: Some(l.what),
                ..Default::default()
            })
            .collect();
        let items = a
            .defs
            .iter()
            .filter(|d| seen.insert(d.name.clone()))
            .map(|d| {
                let quoted = !d
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_');
                CompletionItem {
                    label: d.name.clone(),
                    kind: Some(d.kind.completion()),
                    detail: Some(d.kind.word().to_string()),
                    insert_text: quoted.then(|| format!("\"{}\"", d.name)),
                    ..Default::default()
                }
            })
            .collect::<Vec<_>>();
        // Then the language's own: its builtins, and the forms that read
        // like calls (quantifiers, `chance`, `expect`).
        let builtins = builtins()
            .filter(|(name, _)| seen.insert(name.to_string()))
            .map(|(name, detail)| CompletionItem {
                label: name.to_string(),
                kind: Some(CompletionItemKind::FUNCTION),
                detail: Some(detail),
                ..Default::default()
            })
            .collect::<Vec<_>>();
        Some(CompletionResponse::Array(
            locals.into_iter().chain(items).chain(builtins).collect(),
        ))
    }

    /// The outline: what the document itself declares, from its own text
    /// (so that it shows even when what it extends does not load).
    fn symbols(&self, uri: &Uri) -> Option<DocumentSymbolResponse> {
        let text = self.text(uri.as_str())?;
        let file = crate::front::syntax::FileId(0);
        let parsed = crate::front::parse::parse_file(&text, file).ok()?;
        let defs = analysis::defs(&parsed.items);
        let lines = Lines::new(&text);
        let symbol = |d: &analysis::Def, children: Option<Vec<DocumentSymbol>>| {
            #[allow(deprecated)]
            DocumentSymbol {
                name: d.name.clone(),
                detail: Some(d.kind.word().to_string()),
                kind: d.kind.symbol(),
                tags: None,
                deprecated: None,
                range: lines.range(d.item.start as usize, d.item.end as usize),
                selection_range: lines.range(d.span.start as usize, d.span.end as usize),
                children,
            }
        };
        let out = defs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.parent.is_none())
            .map(|(i, d)| {
                let kids: Vec<DocumentSymbol> = defs
                    .iter()
                    .filter(|c| c.parent == Some(i))
                    .map(|c| symbol(c, None))
                    .collect();
                symbol(d, (!kids.is_empty()).then_some(kids))
            })
            .collect();
        Some(DocumentSymbolResponse::Nested(out))
    }

    /// A situation's odds, one lens a ruleset, on its first line.
    fn lenses(&self, uri: &Uri) -> Vec<CodeLens> {
        let Some(odds) = self.odds.get(uri.as_str()) else {
            return Vec::new();
        };
        odds.iter()
            .map(|o| CodeLens {
                range: Range::default(),
                command: Some(Command {
                    title: o.line.clone(),
                    command: String::new(),
                    arguments: None,
                }),
                data: None,
            })
            .collect()
    }
}

/// The language's forms that read like calls, with what each does.
const FORMS: &[(&str, &str)] = &[
    (
        "any",
        "any u: COND — some unit for which COND holds (`any s in sides: COND`, some side)",
    ),
    (
        "all",
        "all u: COND — COND holds for every unit (`all s in sides: COND`)",
    ),
    ("count", "count u: COND — how many units COND holds for"),
    (
        "first",
        "first u: COND — the first unit for which COND holds, or `none`",
    ),
    (
        "sum",
        "sum u: COND of V — V added up over the units for which COND holds",
    ),
    (
        "chance",
        "chance(PROC(ARGS), COND) — the probability of COND over the procedure's endings",
    ),
    (
        "expect",
        "expect(PROC(ARGS), VALUE) — the mean of VALUE over the procedure's endings",
    ),
];

/// Every builtin name with what completion and hover say of it: the
/// builtins' calls (a measure of the table noted as such), then [`FORMS`].
fn builtins() -> impl Iterator<Item = (&'static str, String)> {
    use crate::compile::ir::Builtin;
    let calls = Builtin::NAMED.iter().map(|&(name, b)| {
        let call = Builtin::shown(name).unwrap_or_default();
        let note = if b.measures_table() {
            ": a measure of the table (a value only in a battle)"
        } else {
            ""
        };
        (name, format!("builtin {call}{note}"))
    });
    calls.chain(FORMS.iter().map(|&(n, what)| (n, what.to_string())))
}

fn markdown(value: String, range: Option<Range>) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range,
    }
}

/// The place `span` of an analysed source, in the editor's terms.
fn location(a: &Analysis, span: crate::front::syntax::Span) -> Option<Location> {
    let text = &a.sources.get(span.file).text;
    let lines = Lines::new(text);
    Some(Location::new(
        path_uri(&source_path(&a.sources, span.file))?,
        lines.range(span.start as usize, span.end as usize),
    ))
}

/// A diagnostic of `muster check` as the protocol has it, with the URI of
/// the file it is in (`doc`, the analysed document, when it has no place):
/// its label and help in the message, its notes as related information.
fn diagnostic(a: &Analysis, d: &crate::front::diagnostic::Diag, doc: &str) -> (String, Diagnostic) {
    let mut message = d.message.clone();
    if !d.label.is_empty() {
        message.push_str(&format!("\n{}", d.label));
    }
    if let Some(h) = &d.help {
        message.push_str(&format!("\nhelp: {h}"));
    }
    let (file, range) = match d.span.and_then(|s| Some((location(a, s)?, s))) {
        Some((loc, _)) => (loc.uri.as_str().to_string(), loc.range),
        None => (doc.to_string(), Range::default()),
    };
    let related: Vec<DiagnosticRelatedInformation> = d
        .notes
        .iter()
        .filter_map(|(s, label)| {
            Some(DiagnosticRelatedInformation {
                location: location(a, *s)?,
                message: label.clone(),
            })
        })
        .collect();
    (
        file,
        Diagnostic {
            range,
            severity: Some(match d.severity {
                crate::front::diagnostic::Severity::Error => DiagnosticSeverity::ERROR,
                crate::front::diagnostic::Severity::Warning => DiagnosticSeverity::WARNING,
            }),
            code: Some(NumberOrString::String(d.code.to_string())),
            source: Some("muster".into()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..Default::default()
        },
    )
}

/// The path of a `file:` URI (percent-decoded); none for other schemes.
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path`: only the local host is read.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    let s = String::from_utf8(out).ok()?;
    Some(PathBuf::from(s))
}

/// The `file:` URI of a path (bytes other than letters, digits, `/-._~`
/// percent-encoded).
pub fn path_uri(path: &Path) -> Option<Uri> {
    let mut s = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A handler that panics (here on an analysis whose names point into a
    /// source it does not hold) answers with an error response, and the
    /// server answers the next request as usual.
    #[test]
    fn a_panicking_handler_answers_an_error() {
        let mut s = Server::default();
        let uri = "file:///x.muster";
        s.docs.insert(uri.into(), Arc::from("stat resolve\n"));
        let def = analysis::Def {
            name: "resolve".into(),
            kind: analysis::Kind::Stat,
            span: crate::front::syntax::Span::new(crate::front::syntax::FileId(7), 5, 12),
            item: Default::default(),
            parent: None,
            index: 0,
        };
        let broken = Analysis {
            sources: Default::default(),
            items: Vec::new(),
            defs: vec![def],
            ruleset: None,
            diags: Vec::new(),
            doc: None,
        };
        s.analyses.insert(uri.into(), broken);
        let at = json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 6}});
        let req = Request::new(1.into(), "textDocument/hover".into(), at);
        let e = s
            .answer(&req)
            .response_result
            .expect_err("an error response");
        assert_eq!(e.code, ErrorCode::InternalError as i32);
        assert!(e.message.contains("textDocument/hover"), "{}", e.message);
        let req = Request::new(
            2.into(),
            "textDocument/codeLens".into(),
            json!({"textDocument": {"uri": uri}}),
        );
        assert_eq!(s.answer(&req).response_result.ok(), Some(json!([])));
    }
}
