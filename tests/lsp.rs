//! `muster lsp` driven as an editor drives it: the real binary spawned,
//! JSON-RPC messages framed with `Content-Length` on its standard input
//! and read from its standard output. Each test asserts what an author
//! would see: the diagnostic and where, the hover's text, the file and
//! line a definition leads to, the odds on a situation.

use crate::common;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// How long any answer may take before the test fails (rather than hangs).
const PATIENCE: Duration = Duration::from_secs(120);

/// A client of one `muster lsp` process.
struct Client {
    child: Child,
    stdin: ChildStdin,
    from_server: Receiver<Value>,
    next_id: i64,
    /// Notifications received while waiting for something else.
    notes: Vec<Value>,
}

impl Client {
    /// Start the server and initialize it.
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_muster"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        len = n.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.expect("a Content-Length header")];
                r.read_exact(&mut body).unwrap();
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            from_server: rx,
            next_id: 0,
            notes: Vec::new(),
        };
        let init = c.request("initialize", json!({"capabilities": {}}));
        let caps = &init["result"]["capabilities"];
        for cap in [
            "hoverProvider",
            "definitionProvider",
            "completionProvider",
            "documentSymbolProvider",
            "codeLensProvider",
        ] {
            assert!(!caps[cap].is_null(), "the server offers {cap}: {init}");
        }
        c.notify("initialized", json!({}));
        c
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The whole response to a request (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.receive();
            if m["id"] == json!(id) {
                return m;
            }
            self.notes.push(m);
        }
    }

    fn receive(&mut self) -> Value {
        self.from_server
            .recv_timeout(PATIENCE)
            .expect("the server answers in time")
    }

    /// The diagnostics last published for `uri`, once the server has
    /// caught up with what was sent: it analyses what changed before it
    /// answers any request, and publishes before it answers, so after the
    /// answer to a request every publication is in.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let sync = json!({"textDocument": {"uri": uri}});
        let r = self.request("textDocument/codeLens", sync);
        assert!(r["error"].is_null(), "{r}");
        let is_for = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        };
        let latest = self.notes.iter().rev().find(|m| is_for(m)).cloned();
        self.notes.retain(|m| !is_for(m));
        let latest = latest.unwrap_or_else(|| panic!("no diagnostics published for {uri}"));
        latest["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn open(&mut self, uri: &str, text: &str) {
        let doc = json!({"uri": uri, "languageId": "muster", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({ "textDocument": doc }));
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"text": text}]}),
        );
    }

    /// A request at a place of a document: `result`, having asserted that
    /// there was no error.
    fn at(&mut self, method: &str, uri: &str, (line, character): (usize, usize)) -> Value {
        let r = self.request(
            method,
            json!({"textDocument": {"uri": uri},
                   "position": {"line": line, "character": character}}),
        );
        assert!(r["error"].is_null(), "{method}: {r}");
        r["result"].clone()
    }

    /// `shutdown` then `exit`: the server must stop, successfully.
    fn stop(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert!(r["error"].is_null(), "{r}");
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the server exits cleanly: {status}");
    }
}

fn rules(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("rules")
        .join(file)
        .canonicalize()
        .unwrap()
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// A server started on one of the shipped files, opened, its first
/// diagnostics read: the client, the file's text and its URI.
fn opened(name: &str) -> (Client, String, String) {
    let path = rules(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let u = uri(&path);
    let mut c = Client::start();
    c.open(&u, &text);
    c.diagnostics(&u);
    (c, text, u)
}

/// The 0-based line and column of the first `needle` in `text` (plus
/// `into` characters, to stand inside a name).
fn place(text: &str, needle: &str, into: usize) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` in the text"));
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, col + into)
}

fn line_of(text: &str, needle: &str) -> usize {
    place(text, needle, 0).0
}

/// The house rule on TVBD: hover shows a unit's row as the house rule
/// makes it, a table's rows and a fact's comment with the book's section.
#[test]
fn hover_shows_rows_and_comments_after_extends() {
    let path = rules("tvbd_steady_pike.muster");
    let text = std::fs::read_to_string(&path).unwrap();
    let u = uri(&path);
    let mut c = Client::start();
    c.open(&u, &text);
    assert_eq!(
        c.diagnostics(&u),
        Vec::<Value>::new(),
        "the shipped file is clean"
    );

    // `override "Pike+Shot" : = 5`: the row after the override, with what
    // each quality makes of it.
    let h = c.at("textDocument/hover", &u, place(&text, "\"Pike+Shot\" :", 3));
    let shown = h["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("**Pike+Shot** (infantry)"), "{shown}");
    assert!(
        shown.contains("| move | range | shoot_hit | melee_hit | resolve |"),
        "{shown}"
    );
    assert!(
        shown.contains("| 3 | 4 | 6 | 5 | 5 |"),
        "resolve 5 after the override: {shown}"
    );
    assert!(
        shown.contains("- superior: resolve 6 (+1), 4 points"),
        "{shown}"
    );

    // A table of the extended file: its rows, the added one first.
    let h = c.at("textDocument/hover", &u, place(&text, "melee_to_hit +=", 2));
    let shown = h["contents"]["value"].as_str().unwrap();
    assert!(
        shown.contains("table melee_to_hit(me: unit, foe: unit) -> int"),
        "{shown}"
    );
    assert!(
        shown.contains("Table 1 note 2"),
        "the comment citing the book: {shown}"
    );
    let first_row = shown.lines().position(|l| l.starts_with("when me is Horse and charging(me) and foe is \"Pike+Shot\" and position(foe, me) is to_front => 6"));
    let otherwise = shown.lines().position(|l| l.starts_with("otherwise"));
    assert!(first_row.is_some() && first_row < otherwise, "{shown}");

    // A fact: its declaration and the comment with its section.
    let h = c.at("textDocument/hover", &u, place(&text, "charging(me)", 1));
    let shown = h["contents"]["value"].as_str().unwrap();
    assert!(
        shown.contains("fact charging(unit): bool = false each turn"),
        "{shown}"
    );
    assert!(
        shown.contains("§Step 3.2: the unit charged this turn."),
        "{shown}"
    );
    c.stop();
}

/// Definition leads into the extended file and into stdlib/, at the line
/// that declares the name; on `extends` it opens the file named.
#[test]
fn definition_follows_extends_and_import() {
    let path = rules("tvbd_steady_pike.muster");
    let text = std::fs::read_to_string(&path).unwrap();
    let base = rules("tillys_very_bad_day.muster");
    let base_text = std::fs::read_to_string(&base).unwrap();
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("stdlib/core.muster");
    let core_text = std::fs::read_to_string(&core).unwrap();
    let u = uri(&path);
    let mut c = Client::start();
    c.open(&u, &text);
    c.diagnostics(&u);

    let d = c.at(
        "textDocument/definition",
        &u,
        place(&text, "melee_to_hit +=", 4),
    );
    assert_eq!(d["uri"], uri(&base));
    assert_eq!(
        d["range"]["start"],
        json!({"line": line_of(&base_text, "table melee_to_hit("), "character": 6})
    );

    let d = c.at("textDocument/definition", &u, place(&text, "to_front", 3));
    assert_eq!(d["uri"], uri(&core.canonicalize().unwrap()));
    assert_eq!(
        d["range"]["start"]["line"],
        line_of(&core_text, "enum zone =")
    );

    let d = c.at(
        "textDocument/definition",
        &u,
        place(&text, "tillys_very_bad_day.muster", 2),
    );
    assert_eq!(d["uri"], uri(&base));
    c.stop();
}

/// Completion offers the names in scope (the file's, the base's, the
/// standard library's); the outline lists what the file declares.
#[test]
fn completion_and_outline() {
    let (mut c, text, u) = opened("tvbd_steady_pike.muster");
    let items = c.at(
        "textDocument/completion",
        &u,
        place(&text, "remove modifier", 0),
    );
    let items = items.as_array().unwrap();
    let label = |l: &str| items.iter().find(|i| i["label"] == l).cloned();
    assert_eq!(label("melee_to_hit").unwrap()["detail"], "table");
    assert_eq!(label("to_front").unwrap()["detail"], "enum value");
    assert_eq!(label("reserves").unwrap()["detail"], "decision");
    let pike = label("Pike+Shot").unwrap();
    assert_eq!(pike["insertText"], "\"Pike+Shot\"", "written quoted");

    let r = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": u}}),
    );
    let names: Vec<&str> = r["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["Pike+Shot", "evade", "reserves", "Step 4.5 Reserves"]
    );
    c.stop();
}

/// Names bound where the cursor is, not declared by the ruleset: a
/// define's parameters, a quantifier's variable, the outcomes an `expect`
/// reads, a policy line's options; offered first by completion, shown by
/// hover, followed by go to definition, and not offered outside their scope.
#[test]
fn completion_hover_and_definition_know_the_names_in_scope() {
    let (mut c, text, u) = opened("tillys_very_bad_day.muster");
    let labels = |c: &mut Client, at: (usize, usize)| -> Vec<(String, String)> {
        c.at("textDocument/completion", &u, at)
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["label"].as_str().unwrap().to_string(),
                    i["detail"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    // Inside evade_prospect's `expect(...)`, reading the melee's outcomes.
    let at = place(
        &text,
        "attacker_hits - defender_hits)\n  - (if may_shoot",
        3,
    );
    let items = labels(&mut c, at);
    let detail = |items: &[(String, String)], n: &str| {
        items.iter().find(|(l, _)| l == n).map(|(_, d)| d.clone())
    };
    assert_eq!(
        detail(&items, "u").as_deref(),
        Some("parameter `u: unit` of define `evade_prospect`")
    );
    assert_eq!(
        detail(&items, "attacker_hits").as_deref(),
        Some("an outcome of procedure `melee`")
    );
    // The locals come first, before the ruleset's names.
    let index = |n: &str| items.iter().position(|(l, _)| l == n).unwrap();
    assert!(index("u") < index("melee_to_hit"), "{:?}", &items[..12]);
    // A quantifier's variable, inside its body only.
    let at = place(&text, "opponent(f) == t then 0 else 100", 9);
    assert_eq!(
        detail(&labels(&mut c, at), "f").as_deref(),
        Some("the variable of `any`")
    );
    let at = place(&text, "define facing_prospect(u: unit, t: unit)", 0);
    let outside = labels(&mut c, (at.0 + 1, 0));
    assert_eq!(detail(&outside, "f"), None, "f is not bound there");
    assert_eq!(detail(&outside, "attacker_hits"), None);
    // A policy line scores a decision's options: `c` and `t` of
    // declare_charges.
    let at = place(&text, "declare_charges => charge_prospect(c, t)", 35);
    let h = c.at("textDocument/hover", &u, at);
    let shown = h["contents"]["value"].as_str().unwrap();
    assert!(
        shown.starts_with("`c`: an option of decision `declare_charges`"),
        "{shown}"
    );
    // Go to definition: the parameter where the define declares it.
    let at = place(&text, "6 * expect(melee(c, u)", 20);
    let d = c.at("textDocument/definition", &u, at);
    let decl = place(&text, "define evade_prospect(u: unit", 22);
    assert_eq!(
        d["range"]["start"],
        json!({"line": decl.0, "character": decl.1})
    );
    c.stop();
}

/// A mistake typed into the editor is reported at once (the file on disk
/// is untouched), then cleared when mended.
#[test]
fn diagnostics_appear_and_clear() {
    let path = rules("tvbd_steady_pike.muster");
    let text = std::fs::read_to_string(&path).unwrap();
    let u = uri(&path);
    let mut c = Client::start();
    c.open(&u, &text);
    assert!(c.diagnostics(&u).is_empty());
    c.change(&u, 2, &text.replace("melee_to_hit +=", "melee_to_hat +="));
    let ds = c.diagnostics(&u);
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0]["code"], "muster::unknown_table");
    assert_eq!(ds[0]["severity"], 1);
    let (line, col) = place(&text, "melee_to_hit +=", 0);
    assert_eq!(
        ds[0]["range"],
        json!({"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 12}})
    );
    let msg = ds[0]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("there is no table `melee_to_hat` to add rows to"),
        "{msg}"
    );
    assert!(msg.contains("help: `table NAME += { rows }`"), "{msg}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "nothing written"
    );
    c.change(&u, 3, &text);
    assert!(c.diagnostics(&u).is_empty(), "mended");
    c.stop();
}

/// Across files: a mistake in the base is published for the base's URI
/// (with the related place), and the base's unsaved text is what the house
/// rule is checked and hovered against.
#[test]
fn diagnostics_and_unsaved_text_across_extends() {
    let dir = common::scratch("lsp-extends");
    let base = "ruleset base \"A base\"\n\nimport core\n\n// §2 Units: what fights.\nstat resolve\nunits (resolve) {\n  Pike : = 4\n}\n\n// §4: the melee.\nprocedure melee(a: unit) outcomes { won: bool } {\n  outcome won = d6 >= a.resolve\n}\n";
    let house = "ruleset house \"A house rule\"\nextends \"base.muster\"\n\nunits (resolve) {\n  override Pike : = 5\n}\n";
    std::fs::write(dir.join("base.muster"), base).unwrap();
    std::fs::write(dir.join("house.muster"), house).unwrap();
    let dir = dir.canonicalize().unwrap();
    let (bu, hu) = (
        uri(&dir.join("base.muster")),
        uri(&dir.join("house.muster")),
    );
    let mut c = Client::start();
    c.open(&hu, house);
    assert!(c.diagnostics(&hu).is_empty());
    let h = c.at("textDocument/hover", &hu, place(house, "Pike", 1));
    assert!(
        h["contents"]["value"].as_str().unwrap().contains("| 5 |"),
        "{h}"
    );

    // The base, edited and unsaved: a fact named as a define already is.
    let broken = base.replace(
        "// §4",
        "define strong(u: unit): bool = u.resolve > 3\nfact strong(unit): bool = false\n\n// §4",
    );
    c.open(&bu, &broken);
    let ds = c.diagnostics(&bu);
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0]["code"], "muster::duplicate");
    assert_eq!(
        ds[0]["range"]["start"]["line"],
        line_of(&broken, "fact strong")
    );
    let rel = &ds[0]["relatedInformation"][0];
    assert_eq!(rel["location"]["uri"], bu);
    assert_eq!(
        rel["location"]["range"]["start"]["line"],
        line_of(&broken, "define strong")
    );
    assert_eq!(rel["message"], "first defined here as a define");

    // The house rule is checked against the base's unsaved text: with
    // Pike renamed there (not on disk), its override has nothing to override.
    c.change(&bu, 2, &base.replace("Pike :", "Pikes :"));
    let ds = c.diagnostics(&hu);
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0]["code"], "muster::nothing_to_override");
    assert_eq!(
        ds[0]["range"]["start"]["line"],
        line_of(house, "override Pike")
    );

    // Mend the base in the editor, and make Pike 6 there: the house rule
    // still says 5 (its override), and is clean again.
    c.change(&bu, 3, &base.replace("Pike : = 4", "Pike : = 6"));
    assert!(c.diagnostics(&bu).is_empty());
    assert!(c.diagnostics(&hu).is_empty());
    let h = c.at("textDocument/hover", &hu, place(house, "Pike", 1));
    assert!(
        h["contents"]["value"].as_str().unwrap().contains("| 5 |"),
        "{h}"
    );
    let h = c.at("textDocument/hover", &bu, place(base, "Pike", 1));
    assert!(
        h["contents"]["value"].as_str().unwrap().contains("| 6 |"),
        "unsaved 6: {h}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("base.muster")).unwrap(),
        base
    );

    // Only the house rule open, its base broken on disk: the base's
    // problem is published for the base's file.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": bu}}),
    );
    std::fs::write(dir.join("base.muster"), &broken).unwrap();
    c.change(&hu, 2, &format!("{house}\n"));
    let ds = c.diagnostics(&bu);
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0]["code"], "muster::duplicate");
    c.stop();
}

/// A situation file shows its exact odds under each ruleset that reads
/// it, as `muster odds` computes them (184/729 for TVBD's horse).
#[test]
fn situation_odds_as_code_lenses() {
    let (mut c, text, u) = opened("situations/tvbd_horse_charges_pike.toml");
    let r = c.request("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    let titles: Vec<&str> = r["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"tillys_very_bad_day: melee (exact) winner: attacker 184/729 (25.2%), defender 971/2187 (44.4%), draw 664/2187 (30.4%)"), "{titles:?}");
    assert!(
        titles
            .iter()
            .any(|t| t.starts_with("tvbd_steady_pike: melee (exact) winner: attacker 178/2187")),
        "{titles:?}"
    );
    // No lens for rulesets that do not read it (Matchlocks has no `Horse`).
    assert!(
        !titles.iter().any(|t| t.starts_with("never_mind")),
        "{titles:?}"
    );

    // The unsaved text counts: the horse charging shot, not pike.
    c.change(
        &u,
        2,
        &text.replace("type = \"Pike+Shot\"", "type = \"Shot\""),
    );
    let r = c.request("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    let first = r["result"][0]["command"]["title"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        first.starts_with("tillys_very_bad_day: melee (exact)"),
        "{first}"
    );
    assert!(!first.contains("184/729"), "{first}");
    let h = c.at("textDocument/hover", &u, (0, 0));
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("attacker_hits"),
        "{h}"
    );
    c.stop();
}

/// Broken input never stops the server: a file that does not parse, a
/// line of a million characters, requests at places past the end, a
/// request with bad parameters, an unknown method, a URI that is not a
/// file. Each gets an answer, and the server still answers afterwards.
#[test]
fn bad_input_never_stops_the_server() {
    let mut c = Client::start();
    let u = "file:///nowhere/broken.muster";
    c.open(
        u,
        "ruleset broken \"x\"\ntable t(a: int) -> int {{{{ when =>\n}\n\"unclosed",
    );
    let ds = c.diagnostics(u);
    assert_eq!(ds[0]["code"], "muster::syntax", "{ds:?}");
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/completion",
    ] {
        c.at(method, u, (1, 3));
        c.at(method, u, (999, 999));
    }
    let huge = format!("ruleset huge \"x\"\nstat {}\n", "a".repeat(1_000_000));
    c.change(u, 2, &huge);
    c.diagnostics(u);
    c.at("textDocument/hover", u, (1, 500_000));
    c.at("textDocument/definition", u, (1, 999_999));
    let r = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": u}}),
    );
    assert!(r["error"].is_null(), "{r}");
    let deep = format!(
        "ruleset deep \"x\"\ndefine d(): int = {}1{}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    c.change(u, 3, &deep);
    assert!(!c.diagnostics(u).is_empty(), "too deep is a diagnostic");

    let r = c.request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(r["error"]["code"], -32602, "invalid params: {r}");
    let r = c.request("muster/unknown", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "untitled:Untitled-1"}, "position": {"line": 0, "character": 0}}),
    );
    assert!(r["error"].is_null() && r["result"].is_null(), "{r}");

    // Still answering.
    c.change(
        u,
        4,
        "ruleset fine \"x\"\nstat resolve\nprocedure p() { }\n",
    );
    assert!(c.diagnostics(u).is_empty());
    let h = c.at("textDocument/hover", u, (1, 7));
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("*stat* `resolve`"),
        "{h}"
    );
    c.stop();
}

/// `check --message-format json`: each ruleset's problems with their
/// places (1-based) and related places; a clean one `ok`; a failing exit.
#[test]
fn check_message_format_json() {
    let dir = common::scratch("check-json");
    let broken = "ruleset b \"x\"\nstat resolve\ndefine strong(u: unit): bool = u.resolve > 3\nfact strong(unit): bool = false\n";
    std::fs::write(dir.join("b.muster"), broken).unwrap();
    // Something to run: a ruleset with nothing is warned of.
    std::fs::write(
        dir.join("ok.muster"),
        "ruleset ok \"x\"\nstat resolve\nprocedure p() { }\n",
    )
    .unwrap();
    let out = common::muster_in(
        &dir,
        &["check", "ok.muster", "b.muster", "--message-format", "json"],
    );
    assert!(!out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "check");
    assert_eq!(
        v["rulesets"][0],
        json!({"file": "ok.muster", "ok": true, "diagnostics": []})
    );
    let b = &v["rulesets"][1];
    assert_eq!(b["ok"], false);
    assert_eq!(
        b["diagnostics"],
        json!([{
            "severity": "error",
            "code": "muster::duplicate",
            "message": "`strong` is defined twice",
            "label": "defined again here as a fact",
            "help": "every unit, table, modifier, fact and procedure needs its own name; in a house rule write `override` to replace one",
            "place": {"file": "b.muster", "line": 4, "column": 6, "end_line": 4, "end_column": 12},
            "related": [{
                "place": {"file": "b.muster", "line": 3, "column": 8, "end_line": 3, "end_column": 14},
                "message": "first defined here as a define"
            }]
        }])
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `check --watch`: the first report shows the ruleset's verdict and the
/// odds of the situation beside it; a save prints only what changed (the
/// odds, not the unchanged "ok"); a mistake saved prints its diagnostic.
#[test]
fn check_watch_reports_what_a_save_changes() {
    let dir = common::scratch("check-watch");
    let base = "ruleset base \"A base\"\n\nimport core\n\nstat resolve\nunits (resolve) {\n  Pike : = 4\n}\n\nprocedure melee(a: unit) outcomes { won: bool } {\n  outcome won = d6 >= a.resolve\n}\n";
    std::fs::write(dir.join("base.muster"), base).unwrap();
    std::fs::create_dir(dir.join("situations")).unwrap();
    std::fs::write(
        dir.join("situations/pike.toml"),
        "procedure = \"melee\"\n[units.a]\ntype = \"Pike\"\n",
    )
    .unwrap();
    let mut child = common::muster_command()
        .args(["check", "--watch", "base.muster"])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let next = || rx.recv_timeout(PATIENCE).expect("a line in time");
    assert_eq!(next(), "base.muster: ok");
    assert_eq!(
        next(),
        "./situations/pike.toml: base: melee (exact) won: false 1/2 (50.0%), true 1/2 (50.0%)"
    );
    std::fs::write(dir.join("base.muster"), base.replace("= 4", "= 3")).unwrap();
    assert_eq!(
        next(),
        "./situations/pike.toml: base: melee (exact) won: false 1/3 (33.3%), true 2/3 (66.7%)",
        "only the odds changed"
    );
    std::fs::write(dir.join("base.muster"), base.replace("d6 >=", "d7 >=")).unwrap();
    let l = next();
    assert_eq!(l, "base.muster: 1 problem", "then its diagnostic");
    let mut diag = String::new();
    loop {
        let l = next();
        if l.contains("no longer read") {
            break;
        }
        diag.push_str(&l);
        diag.push('\n');
    }
    assert!(diag.contains("d7"), "{diag}");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The language's builtins are offered by completion after the ruleset's
/// names, with how each is called, and hover on one says the same
/// (`distance` is a measure of the table; a quantifier reads as one).
#[test]
fn builtins_are_completed_and_hovered() {
    let (mut c, text, u) = opened("tillys_very_bad_day.muster");
    let at = place(&text, "distance(s, t) <= s.range", 0);
    let items = c.at("textDocument/completion", &u, at);
    let items = items.as_array().unwrap();
    let detail = |l: &str| {
        items
            .iter()
            .find(|i| i["label"] == l)
            .map(|i| i["detail"].as_str().unwrap().to_string())
    };
    assert_eq!(
        detail("distance").as_deref(),
        Some("builtin distance(unit, unit) -> int: a measure of the table (a value only in a battle)")
    );
    assert_eq!(detail("ceil").as_deref(), Some("builtin ceil(int) -> int"));
    assert_eq!(
        detail("touches_terrain").as_deref(),
        Some("builtin touches_terrain(unit, terrain) -> bool: a measure of the table (a value only in a battle)")
    );
    assert_eq!(
        detail("count").as_deref(),
        Some("count u: COND — how many units COND holds for")
    );
    // After the ruleset's own names, each once.
    let index = |n: &str| items.iter().position(|i| i["label"] == n).unwrap();
    assert!(index("melee_to_hit") < index("distance"));
    assert_eq!(items.iter().filter(|i| i["label"] == "max").count(), 1);
    let h = c.at("textDocument/hover", &u, (at.0, at.1 + 2));
    assert_eq!(
        h["contents"]["value"],
        "*builtin distance(unit, unit) -> int: a measure of the table (a value only in a battle)*\n"
    );
    let h = c.at(
        "textDocument/hover",
        &u,
        place(&text, "count u: u.side == self", 1),
    );
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("how many units"),
        "{h}"
    );
    c.stop();
}
