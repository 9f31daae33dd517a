//! `muster`: the command line. A thin shell over the library: parse the
//! arguments, build the ruleset, run the command, render diagnostics.

// Diagnostics are the cold path here too (see lib.rs).
#![allow(clippy::result_large_err)]

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use muster::front::diagnostic::Diag;
use muster::front::source::Sources;
use muster::run::odds::{self, Method, Odds};
use muster::Build;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Write to standard output; a failed write (a full disk, a closed pipe)
/// ends the command with a message and a non-zero exit, never a panic.
macro_rules! out {
    ($($t:tt)*) => { emit(format_args!($($t)*))? };
}
macro_rules! outln {
    ($($t:tt)*) => { emit(format_args!("{}\n", format_args!($($t)*)))? };
}
/// Write to standard error; if even that fails there is no one to tell.
macro_rules! errln {
    ($($t:tt)*) => { let _ = writeln!(std::io::stderr(), $($t)*); };
}
/// A note on standard error (a speed, an unused flag, a fallback): not an
/// error, so `--quiet` leaves it out.
macro_rules! noteln {
    ($($t:tt)*) => { if !QUIET.load(std::sync::atomic::Ordering::Relaxed) { errln!($($t)*); } };
}

/// `--quiet`: no notes, speeds or progress bars on standard error (errors
/// and warnings are still shown).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The version `--version` prints: the package's, and the commit it was
/// built from (build.rs; "unknown" outside a git checkout).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("MUSTER_COMMIT"),
    ")"
);

/// How the command ends, as `--help` and the README say.
const EXIT_CODES: &str = "Exit status: 0 when the command did its work (`check`: no errors); \
1 for a problem in a ruleset or an input file (a diagnostic says where) or \
a failed write; 2 for a usage error (an unknown flag, a missing argument).";

#[derive(Parser)]
#[command(
    name = "muster",
    version = VERSION,
    about = "Check, graph and run pike-and-shot wargame rulesets",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// No notes, speeds or progress bars on standard error; errors and
    /// warnings are still shown.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// Colour in diagnostics and help: auto (when standard error is a
    /// terminal and NO_COLOR is unset), always, or never.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    color: ColorWhen,
    /// Parse every file again instead of reading its tree from the parse
    /// cache (in $XDG_CACHE_HOME/muster/parse, else ~/.cache/muster/parse;
    /// MUSTER_NO_CACHE=1 does the same).
    #[arg(long, global = true)]
    no_cache: bool,
}

/// When to colour what the program writes for people (`--color`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorWhen {
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// The same choice as clap's, for its help and usage errors.
    fn clap(self) -> clap::ColorChoice {
        match self {
            ColorWhen::Auto => clap::ColorChoice::Auto,
            ColorWhen::Always => clap::ColorChoice::Always,
            ColorWhen::Never => clap::ColorChoice::Never,
        }
    }

    /// The `--color` given on the command line, read before clap parses
    /// it so that clap's own help and errors follow it too. The last one
    /// wins, as clap takes it; one clap cannot parse is left to clap to
    /// report.
    fn from_args(args: &[std::ffi::OsString]) -> ColorWhen {
        let mut when = ColorWhen::Auto;
        let mut next_is_value = false;
        for a in args.iter().skip(1) {
            let Some(a) = a.to_str() else { continue };
            if a == "--" {
                break;
            }
            let value = if next_is_value {
                next_is_value = false;
                Some(a)
            } else if a == "--color" {
                next_is_value = true;
                None
            } else {
                a.strip_prefix("--color=")
            };
            if let Some(v) = value.and_then(|v| ColorWhen::from_str(v, false).ok()) {
                when = v;
            }
        }
        when
    }
}

#[derive(Subcommand)]
enum Command {
    /// Check a ruleset: every diagnostic, non-zero exit on error.
    Check {
        /// Ruleset files (.muster).
        #[arg(required = true)]
        rulesets: Vec<PathBuf>,
        /// `json`: one `check` document on standard output for tools
        /// (docs/json.md), instead of rendered diagnostics.
        #[arg(long, value_enum, default_value = "human")]
        message_format: MessageFormat,
        /// Check again on every save in the rulesets' folders, with the
        /// exact odds of the situations there, printing what changed.
        #[arg(long, conflicts_with = "message_format")]
        watch: bool,
    },
    /// A language server for editors, over standard input and output
    /// (diagnostics, hover, go to definition, completion, outline, a
    /// situation's odds). See docs/LANGUAGE.md, "Editor support".
    Lsp,
    /// Print the compiled sequence of play.
    Graph {
        ruleset: PathBuf,
        #[arg(long, value_enum, default_value = "dot")]
        format: GraphFormat,
    },
    /// The odds of each outcome of a procedure in a situation.
    Odds {
        ruleset: PathBuf,
        /// The situation file (TOML).
        #[arg(long)]
        situation: PathBuf,
        /// Sample this many times instead of computing exactly.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        samples: Option<u64>,
        /// Seed for sampling (default 1; unused when the odds are exact).
        #[arg(long)]
        seed: Option<u64>,
        /// Threads for sampling (default, or 0: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Switch an optional rule: `--option evade=on` (repeatable; wins
        /// over the situation file), or set a number option the ruleset is
        /// compiled with: `--option red_blank=2`.
        #[arg(long = "option", value_name = "NAME=on|off|N")]
        options: Vec<String>,
        /// A second ruleset: the situation's odds under both, side by
        /// side, with the difference B - A of each value.
        #[arg(long = "ruleset-b", value_name = "FILE")]
        ruleset_b: Option<PathBuf>,
        /// Also draw the odds as a chart into this SVG file: bars per value,
        /// for numbers a line of the chance of at least each (an existing
        /// file is replaced only if it is a chart this program wrote).
        #[arg(long, value_name = "FILE", conflicts_with = "ruleset_b")]
        svg: Option<PathBuf>,
    },
    /// Play one battle: a narrative of every step, roll and move.
    Battle {
        ruleset: PathBuf,
        /// The scenario file (TOML); default: the ruleset's own.
        #[arg(long)]
        scenario: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The log: a narrative (text) or the same events as JSON.
        #[arg(long, value_enum, default_value = "text")]
        log: LogFormat,
        /// Draw the table at the end of every turn into this folder (turn-NN.svg).
        #[arg(long)]
        svg: Option<PathBuf>,
        /// Write the battle as one self-contained web page: the table turn
        /// by turn beside the turn's narrative (an existing file is replaced
        /// only if this program wrote it).
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Switch an optional rule: `--option variable_army_morale=on`
        /// (repeatable), or set a number option: `--option red_blank=2`.
        #[arg(long = "option", value_name = "NAME=on|off|N")]
        options: Vec<String>,
        /// How every army's player looks for its moves, in place of its
        /// policy's `search` and the scenario's per-army `search` key:
        /// `thorough` (the engine's whole fan of manoeuvres), `purposeful`
        /// (moves toward what the policy can value) or `stand_off` (those and
        /// stops short of them). See docs/LANGUAGE.md, "Policies".
        #[arg(long, value_name = "SEARCH", value_parser = search_parser())]
        search: Option<muster::compile::ir::Search>,
    },
    /// Play many battles over all cores and summarise who wins and why.
    Simulate {
        ruleset: PathBuf,
        #[command(flatten)]
        run: Runs,
        /// Play only the I-th of N equal slices of the run's games (1 <= I
        /// <= N) and write a shard file (JSON) for `muster merge`, which adds
        /// the N files up to exactly this run's summary.
        #[arg(long, value_name = "I/N", value_parser = muster::cli::simulate::shard::Slice::parse)]
        shard: Option<muster::cli::simulate::shard::Slice>,
    },
    /// Add up the shard files of one run (`simulate --shard I/N` or
    /// `compare --shard I/N`, one per slice, from any machines) into what
    /// the whole run prints.
    Merge {
        /// The shard files, one for each slice of the run.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON (as `simulate --json` or `compare --json` does) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// What differs in the rules of two rulesets (two drafts, or a book
    /// and a house rule), as `diff` shows it; then one scenario played
    /// many times under each and what moved, with 95% intervals.
    Compare {
        /// Ruleset A (the one compared against).
        a: PathBuf,
        /// Ruleset B.
        b: PathBuf,
        #[command(flatten)]
        run: Runs,
        /// Switch an optional rule, or set a number option, under A only (repeatable).
        #[arg(long = "option-a", value_name = "NAME=on|off|N")]
        options_a: Vec<String>,
        /// Switch an optional rule, or set a number option, under B only (repeatable): `muster
        /// compare R R --option-b evade=on` shows what the option does.
        #[arg(long = "option-b", value_name = "NAME=on|off|N")]
        options_b: Vec<String>,
        /// Play only the I-th of N equal slices of the run's games (under
        /// both rulesets) and write a shard file (JSON) for `muster merge`,
        /// which adds the N files up to exactly this comparison.
        #[arg(long, value_name = "I/N", value_parser = muster::cli::simulate::shard::Slice::parse)]
        shard: Option<muster::cli::simulate::shard::Slice>,
    },
    /// The rule-level difference of two rulesets, after `extends`: unit
    /// types and stats, table rows, modifiers, procedures and hooks, steps,
    /// options, policies, qualities, decisions, each with where A and B
    /// write it.
    Diff {
        /// Ruleset A (the one compared against).
        a: PathBuf,
        /// Ruleset B.
        b: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check an army roster (TOML) against the ruleset's army list and total its points.
    Army {
        ruleset: PathBuf,
        /// The roster, one army; give `--roster` once per side to check a
        /// match as well (`same units for every side`).
        #[arg(long, required = true)]
        roster: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Print a completion script for a shell: `muster completions bash >
    /// ~/.local/share/bash-completion/completions/muster` (zsh: into a
    /// folder of $fpath as `_muster`; fish: ~/.config/fish/completions/muster.fish).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `muster man > muster.1`, then
    /// `man ./muster.1`.
    Man,
    /// Evaluate expressions of the language in a situation (units by name):
    /// `muster query RULESET --situation S.toml "charges(horse, shot)"`.
    Query {
        ruleset: PathBuf,
        #[arg(long)]
        situation: PathBuf,
        /// Expressions to evaluate.
        #[arg(required = true)]
        exprs: Vec<String>,
        #[arg(long)]
        json: bool,
    },
}

/// How many games `simulate` and `compare` play, and how.
#[derive(clap::Args)]
struct Runs {
    /// The scenario file (TOML); default: the ruleset's own (compare: A's).
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Games to play (compare: under each ruleset, at least 10; its
    /// intervals are Student's t, wide when the games are few).
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
    /// The run's seed: game i plays on a seed made from it and i.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads (default, or 0: all cores). The result does not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Switch an optional rule: `--option variable_army_morale=on`, or set
    /// a number option: `--option red_blank=2` (repeatable; compare: under
    /// both rulesets).
    #[arg(long = "option", value_name = "NAME=on|off|N")]
    options: Vec<String>,
    /// Also draw the result as a chart into this SVG file (an existing
    /// file is replaced only if it is a chart this program wrote).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// How every army's player looks for its moves, in place of its
    /// policy's `search` and the scenario's per-army `search` key:
    /// `thorough` (the engine's whole fan of manoeuvres), `purposeful`
    /// (moves toward what the policy can value) or `stand_off` (those and
    /// stops short of them). See docs/LANGUAGE.md, "Policies".
    #[arg(long, value_name = "SEARCH", value_parser = search_parser())]
    search: Option<muster::compile::ir::Search>,
}

/// `--search`: the searches by their names in a policy, clap's diagnostic
/// naming them for any other value.
fn search_parser() -> impl clap::builder::TypedValueParser<Value = muster::compile::ir::Search> {
    use clap::builder::TypedValueParser;
    use muster::compile::ir::Search;
    clap::builder::PossibleValuesParser::new(Search::ALL.map(|(_, name)| name)).map(|v| {
        Search::ALL
            .into_iter()
            .find(|(_, name)| *name == v)
            .map_or(Search::default(), |(s, _)| s)
    })
}

/// Every army of `prep` searches for its moves as `--search` says (when
/// given), whatever its policy and the scenario say.
fn set_search(
    prep: &mut muster::battle::game::Prepared,
    search: Option<muster::compile::ir::Search>,
) {
    if let Some(s) = search {
        prep.search.iter_mut().for_each(|a| *a = Some(s));
    }
}

/// The `--option`s with `--search` (if given) after them: what a shard's
/// fingerprint covers, so that only shards of one search merge.
fn with_search(options: &[String], search: Option<muster::compile::ir::Search>) -> Vec<String> {
    let mut all = options.to_vec();
    if let Some(s) = search {
        if let Some((_, name)) = muster::compile::ir::Search::ALL
            .iter()
            .find(|(x, _)| *x == s)
        {
            all.push(format!("--search={name}"));
        }
    }
    all
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum MessageFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum GraphFormat {
    Dot,
    Mermaid,
}

/// The stack of the thread that runs a command, and of each worker thread.
/// Rules nest only as deep as the compiler allows (muster::front::nesting), and
/// the parser and compiler move to a new stack segment when one runs low;
/// a large stack is the margin behind those bounds for evaluating rules.
/// Only the pages used are ever taken from memory.
const STACK: usize = 256 * 1024 * 1024;
const WORKER_STACK: usize = 64 * 1024 * 1024;

fn main() -> ExitCode {
    // Output piped into `head` and the like: stop quietly when the reader
    // goes away, as command-line tools do, instead of panicking on the write.
    #[cfg(unix)]
    // SAFETY: restoring the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let color = ColorWhen::from_args(&args);
    let cli = match Cli::command()
        .color(color.clap())
        .try_get_matches_from(&args)
    {
        Ok(m) => Cli::from_arg_matches(&m).unwrap_or_else(|e| e.exit()),
        // Usage errors exit 2, --help and --version 0 (clap's codes).
        Err(e) => e.exit(),
    };
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    set_colour(cli.color);
    // The parse cache, for every command but the language server (whose
    // texts are an editor's unsaved ones).
    if !cli.no_cache && !matches!(cli.command, Command::Lsp) {
        muster::front::cache::enable(muster::front::cache::ParseCache::from_env());
    }
    let work = std::thread::Builder::new()
        .name("muster".into())
        .stack_size(STACK)
        .spawn(move || {
            // What is still buffered is written too, and a failure reported
            // (once: after a failed write, nothing more is tried).
            let done = run(cli).and_then(|()| std::io::stdout().flush().map_err(output_failed));
            #[cfg(unix)]
            if done.is_ok() {
                // Everything is written and every value the command made is
                // dropped or deliberately leaked: end the process here, not
                // by returning to `main`. Returning would unwind this
                // thread (its 256 MB stack given back page range by page
                // range), join it, and run the allocator's exit handler,
                // which hands its free pages back to the system one madvise
                // call at a time: about thirty system calls that a process
                // about to exit does not need (issue 33, item 5).
                let _ = std::io::stderr().flush();
                // SAFETY: `_exit` ends the process at once; no destructor
                // or exit handler is owed anything (standard output is
                // flushed above, files the command wrote are closed).
                unsafe { libc::_exit(0) }
            }
            done
        });
    match work.map(|w| w.join()) {
        Ok(Ok(Ok(()))) => ExitCode::SUCCESS,
        Ok(Ok(Err(code))) => code,
        // A panic has printed its message already.
        Ok(Err(_)) => ExitCode::from(101),
        Err(e) => {
            errln!("error: cannot start the program's thread: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Write to standard output (see `out!`).
fn emit(args: std::fmt::Arguments) -> Result<(), ExitCode> {
    std::io::stdout()
        .lock()
        .write_fmt(args)
        .map_err(output_failed)
}

/// A failed write to standard output: quietly when the reader has gone (a
/// closed pipe), with the reason otherwise (a full disk).
fn output_failed(e: std::io::Error) -> ExitCode {
    if e.kind() != std::io::ErrorKind::BrokenPipe {
        errln!("error: cannot write the output: {e}");
    }
    ExitCode::FAILURE
}

/// Render diagnostics in colour or not, as `--color` asks (`auto`: when
/// standard error is a terminal and NO_COLOR is unset, miette's own test).
fn set_colour(when: ColorWhen) {
    let colour = match when {
        ColorWhen::Auto => None,
        ColorWhen::Always => Some(true),
        ColorWhen::Never => Some(false),
    };
    let _ = miette::set_hook(Box::new(move |_| {
        let opts = miette::MietteHandlerOpts::new();
        let opts = match colour {
            Some(c) => opts.color(c).force_graphical(true),
            None => opts,
        };
        Box::new(opts.build())
    }));
}

/// Report the first `n` errors of `diags` and how many more there are (a
/// scenario written for another game fails on every unit).
fn report_first(diags: &[Diag], sources: &Sources, n: usize) -> ExitCode {
    let total = muster::problems(diags);
    if total <= n {
        return report(diags, sources);
    }
    for d in diags.iter().take(n) {
        errln!("{:?}", miette::Report::new(d.report(sources)));
    }
    errln!("error: {total} problems found (the first {n} shown)");
    ExitCode::FAILURE
}

/// The units of a battle's JSON log: name, army and type of each.
fn battle_units(
    rs: &muster::compile::ir::Ruleset,
    prep: &muster::battle::game::Prepared,
    game: &muster::battle::game::Game,
) -> Vec<serde_json::Value> {
    game.world
        .units
        .iter()
        .enumerate()
        .map(|(i, u)| {
            serde_json::json!({
                "name": u.name,
                "army": prep.army_names[prep.army_of[i]],
                "type": rs.unit_types[u.ty as usize].name,
            })
        })
        .collect()
}

fn report(diags: &[Diag], sources: &Sources) -> ExitCode {
    for d in diags {
        errln!("{:?}", miette::Report::new(d.report(sources)));
    }
    let n = muster::problems(diags);
    errln!("error: {n} problem{} found", if n == 1 { "" } else { "s" });
    ExitCode::FAILURE
}

/// Print warnings (a ruleset that compiled with them still succeeds).
fn warn(warnings: &[Diag], sources: &Sources) {
    for d in warnings {
        errln!("{:?}", miette::Report::new(d.report(sources)));
    }
}

fn load(path: &Path) -> Result<Build, ExitCode> {
    load_with(path, &[])
}

/// Load a ruleset with the number options among `options` (`NAME=N`: a
/// face count...) set, as a house rule overriding each would.
fn load_with(path: &Path, options: &[String]) -> Result<Build, ExitCode> {
    let (build, syntax) =
        muster::build_loaded_with(path, &numbers(options)).map_err(|(d, s)| report(&d, &s))?;
    // Every caller is a command that runs once and exits (`watch` and the
    // language server load their own): freeing the syntax tree's thousands
    // of nodes would cost a tenth of a quick `muster odds`, and the process
    // is about to give its memory back whole.
    std::mem::forget(syntax);
    Ok(build)
}

/// [`load_with`] for `muster odds` ([`muster::build_for_odds`]: a ruleset
/// recorded as compiling clean is compiled for its odds only).
fn load_for_odds(path: &Path, options: &[String]) -> Result<Build, ExitCode> {
    let (build, syntax) =
        muster::build_for_odds(path, &numbers(options)).map_err(|(d, s)| report(&d, &s))?;
    // As in `load_with`: the syntax tree is not freed by a one-shot command.
    std::mem::forget(syntax);
    Ok(build)
}

/// The `--option NAME=N` among the options: numbers the ruleset is compiled
/// with (the rest are switches, set per world by [`set_options`]).
fn numbers(options: &[String]) -> Vec<(String, i64)> {
    options
        .iter()
        .filter_map(|o| {
            let (name, value) = o.split_once('=')?;
            Some((name.to_string(), value.trim().parse::<i64>().ok()?))
        })
        .collect()
}

/// Build rulesets A and B and the difference of their rules (each
/// ruleset's problems are reported under which of the two it is).
fn load_pair(
    a: &Path,
    b: &Path,
    options_a: &[String],
    options_b: &[String],
) -> Result<(Build, Build, muster::cli::diff::Diff), ExitCode> {
    let one = |which: &str, path: &Path, options: &[String]| {
        muster::build_loaded_with(path, &numbers(options)).map_err(|(d, s)| {
            errln!(
                "error: ruleset {which} ({}) does not build:",
                path.display()
            );
            report(&d, &s)
        })
    };
    let (ba, la) = one("A", a, options_a)?;
    let (bb, lb) = one("B", b, options_b)?;
    let (fa, fb) = (a.display().to_string(), b.display().to_string());
    let rules = muster::cli::diff::diff(
        muster::cli::diff::Input {
            file: &fa,
            loaded: &la,
            sources: &ba.sources,
        },
        muster::cli::diff::Input {
            file: &fb,
            loaded: &lb,
            sources: &bb.sources,
        },
    );
    Ok((ba, bb, rules))
}

/// A file named on the command line (a situation, a roster), read with the
/// size cap every input has.
fn read_input(path: &Path, sources: &Sources) -> Result<String, ExitCode> {
    muster::front::source::read_text(path).map_err(|e| {
        report(
            &[e.diag("muster::io", &path.display().to_string())],
            sources,
        )
    })
}

fn run(cli: Cli) -> Result<(), ExitCode> {
    match cli.command {
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "muster", &mut script);
            out!("{}", String::from_utf8_lossy(&script));
        }
        Command::Man => {
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command())
                .render(&mut page)
                .map_err(output_failed)?;
            out!("{}", String::from_utf8_lossy(&page));
        }
        Command::Check {
            rulesets,
            watch: true,
            ..
        } => {
            let mut print =
                |t: &str| emit(format_args!("{t}\n")).is_ok() && std::io::stdout().flush().is_ok();
            muster::cli::watch::run(&rulesets, &mut print).map_err(|e| {
                errln!("error: check --watch: {e}");
                ExitCode::FAILURE
            })?;
        }
        Command::Check {
            rulesets,
            message_format: MessageFormat::Json,
            ..
        } => {
            let entries: Vec<serde_json::Value> = rulesets
                .iter()
                .map(|r| {
                    let file = r.display().to_string();
                    match muster::check(r) {
                        Ok(b) => {
                            muster::cli::check_json::ruleset(&file, &b.ruleset.warnings, &b.sources)
                        }
                        Err((d, s)) => muster::cli::check_json::ruleset(&file, &d, &s),
                    }
                })
                .collect();
            let failed = entries.iter().any(|e| e["ok"] == false);
            let v = muster::cli::output::json_document(
                "check",
                serde_json::json!({ "rulesets": entries }),
            );
            outln!("{}", serde_json::to_string_pretty(&v).unwrap());
            if failed {
                return Err(ExitCode::FAILURE);
            }
        }
        Command::Check { rulesets, .. } => {
            let mut failed = false;
            for r in &rulesets {
                match muster::check(r) {
                    Ok(b) => {
                        let rs = &b.ruleset;
                        warn(&rs.warnings, &b.sources);
                        let n = |k: usize, what: &str| {
                            format!("{k} {what}{}", if k == 1 { "" } else { "s" })
                        };
                        outln!(
                            "{}: ok ({}, {}, {}, {}, {}, {}, {})",
                            r.display(),
                            n(rs.unit_types.len(), "unit type"),
                            n(rs.tables.len(), "table"),
                            n(rs.modifiers.len(), "modifier"),
                            n(rs.procedures.len(), "procedure"),
                            n(rs.graph.as_ref().map(|g| g.turn_end).unwrap_or(0), "step"),
                            n(rs.hooks.len(), "hook"),
                            n(rs.decks.len(), "deck")
                        );
                    }
                    Err((d, s)) => {
                        report(&d, &s);
                        failed = true;
                    }
                }
            }
            if failed {
                return Err(ExitCode::FAILURE);
            }
        }
        Command::Lsp => muster::cli::lsp::run().map_err(|e| {
            errln!("error: muster lsp: {e}");
            ExitCode::FAILURE
        })?,
        Command::Graph { ruleset, format } => {
            let b = load(&ruleset)?;
            let Some(g) = &b.ruleset.graph else {
                errln!("error: {} has no `sequence` of play", ruleset.display());
                return Err(ExitCode::FAILURE);
            };
            let rs = &b.ruleset;
            let fmt = match format {
                GraphFormat::Dot => muster::compile::phase_graph::Format::Dot,
                GraphFormat::Mermaid => muster::compile::phase_graph::Format::Mermaid,
            };
            out!(
                "{}",
                g.render(fmt, |a| muster::compile::phase_graph::describe(rs, a))
            );
        }
        Command::Battle {
            ruleset,
            scenario,
            seed,
            log,
            svg,
            html,
            options,
            search,
        } => {
            let mut b = load_with(&ruleset, &options)?;
            let sc = b
                .scenario(scenario.as_deref())
                .map_err(|d| report(&d, &b.sources))?;
            let mut prep = muster::battle::game::Prepared::new(&b.ruleset, &sc)
                .map_err(|d| report(&d, &b.sources))?;
            set_options(&b.ruleset, &mut prep.world, &options)?;
            set_search(&mut prep, search);
            // A game the rules stop is shown as far as it got (how it came
            // there, no pictures), then the diagnostic, and the command fails.
            let (game, stopped) = prep.play_until_stopped(seed, true);
            // Pictures first: a failure to write them stops before the log.
            if let (Some(file), None) = (&html, &stopped) {
                let page = muster::cli::pictures::page(&b.ruleset, &sc, &prep, &game, seed);
                muster::cli::output::write_file(file, &page, muster::cli::pictures::is_page)
                    .map_err(|d| report(&[d], &b.sources))?;
            }
            if let (Some(dir), None) = (&svg, &stopped) {
                let w = write_svgs(dir, &b.ruleset, &sc, &prep, &game)
                    .map_err(|d| report(&[d], &b.sources))?;
                if !w.left.is_empty() {
                    noteln!(
                        "note: {} also holds {} from an earlier run, left as {}",
                        dir.display(),
                        w.left.join(", "),
                        if w.left.len() == 1 {
                            "it was"
                        } else {
                            "they were"
                        }
                    );
                }
            }
            match log {
                LogFormat::Text => {
                    outln!(
                        "{} — {} (seed {seed})",
                        b.ruleset.title,
                        sc.description.as_deref().unwrap_or("scenario")
                    );
                    out!("{}", game.narrative());
                    if let Some(d) = &stopped {
                        outln!("The game stopped here: {} (the error follows).", d.message);
                    }
                }
                LogFormat::Json => {
                    let mut doc = serde_json::json!({
                        "ruleset": b.ruleset.id,
                        "title": b.ruleset.title,
                        "scenario": sc.description.as_deref().unwrap_or("scenario"),
                        "seed": seed,
                        "units": battle_units(&b.ruleset, &prep, &game),
                        "events": game.log,
                    });
                    match &stopped {
                        None => doc["summary"] = game.summary().json(&b.ruleset, &prep.army_names),
                        Some(d) => {
                            doc["stopped"] =
                                serde_json::json!({ "code": d.code, "message": d.message })
                        }
                    }
                    let out = muster::cli::output::json_document("battle", doc);
                    outln!("{}", serde_json::to_string_pretty(&out).unwrap());
                }
            }
            if let Some(d) = stopped {
                return Err(report(&[d], &b.sources));
            }
        }
        Command::Simulate {
            ruleset,
            run:
                Runs {
                    scenario,
                    runs,
                    seed,
                    threads,
                    json,
                    options,
                    svg,
                    search,
                },
            shard,
        } => {
            if let (Some(_), Some(_)) = (&svg, &shard) {
                errln!("error: a shard is not the whole run: draw the chart with the summary (`muster simulate` without --shard)");
                return Err(ExitCode::from(2));
            }
            let mut b = load_with(&ruleset, &options)?;
            let sc = b
                .scenario(scenario.as_deref())
                .map_err(|d| report(&d, &b.sources))?;
            let mut prep = muster::battle::game::Prepared::new(&b.ruleset, &sc)
                .map_err(|d| report(&d, &b.sources))?;
            set_options(&b.ruleset, &mut prep.world, &options)?;
            set_search(&mut prep, search);
            let pool = thread_pool(threads)?;
            let games = shard.map_or(0..runs, |s| s.games(runs));
            let bar = progress_bar(games.end - games.start, json || shard.is_some());
            let start = std::time::Instant::now();
            let played = pool
                .install(|| {
                    muster::cli::simulate::play_range(&prep, games.clone(), seed, &|| bar.inc(1))
                })
                .map_err(|d| report(&[d], &b.sources))?;
            bar.finish_and_clear();
            let secs = start.elapsed().as_secs_f64();
            let frame = muster::cli::simulate::Frame::of(&prep);
            let tally =
                muster::cli::simulate::Tally::of(&played, games.start, frame.unit_types.len());
            let scenario_name = sc.description.clone().unwrap_or_else(|| "scenario".into());
            // The whole run's summary, made once for the text, the JSON and
            // the chart (a shard keeps its counts instead).
            let summary = shard.is_none().then(|| tally.summary(&frame, seed));
            if let Some(slice) = shard {
                use muster::cli::simulate::shard;
                let s = shard::Shard {
                    format: shard::FORMAT.into(),
                    version: shard::VERSION,
                    muster: shard::program(),
                    fingerprint: shard::fingerprint(&b.sources, &with_search(&options, search)),
                    title: b.ruleset.title.clone(),
                    scenario: scenario_name,
                    seed,
                    runs,
                    shard: slice,
                    first_game: games.start,
                    end_game: games.end,
                    frame,
                    tally,
                };
                outln!("{}", serde_json::to_string_pretty(&s).unwrap());
            } else if let Some(summary) = &summary {
                if json {
                    let v = summary.json(&b.ruleset.title, &scenario_name);
                    outln!("{}", serde_json::to_string_pretty(&v).unwrap());
                } else {
                    outln!("{} — {scenario_name}", b.ruleset.title);
                    out!("{summary}");
                }
                if let Some(file) = &svg {
                    let chart =
                        muster::cli::charts::simulate(summary, &b.ruleset.title, &scenario_name);
                    write_chart(file, &chart, &b.sources)?;
                }
            }
            // The speed on standard error: two runs' outputs compare equal.
            noteln!(
                "({:.0} games/s on {} threads)",
                (games.end - games.start) as f64 / secs.max(1e-9),
                pool.current_num_threads()
            );
        }
        Command::Merge { files, json } => {
            let mut sources = Sources::default();
            let mut texts = Vec::new();
            for f in &files {
                texts.push((f.display().to_string(), read_input(f, &sources)?));
            }
            let m = muster::cli::simulate::shard::merge(&texts, &mut sources)
                .map_err(|d| report(&d, &sources))?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&m.json()).unwrap());
            } else {
                out!("{}", m.text());
            }
        }
        Command::Compare {
            a,
            b,
            run:
                Runs {
                    scenario,
                    runs,
                    seed,
                    threads,
                    json,
                    options,
                    svg,
                    search,
                },
            options_a,
            options_b,
            shard,
        } => {
            if let (Some(_), Some(_)) = (&svg, &shard) {
                errln!("error: a shard is not the whole run: draw the chart with the comparison (`muster compare` without --shard)");
                return Err(ExitCode::from(2));
            }
            if runs < muster::cli::compare::MIN_GAMES {
                errln!(
                    "error: --runs {runs}: compare needs at least {} paired games for an interval worth reading",
                    muster::cli::compare::MIN_GAMES
                );
                return Err(ExitCode::from(2));
            }
            let both = |x: &[String]| [options.clone(), x.to_vec()].concat();
            let (mut ba, mut bb, rules) = load_pair(&a, &b, &both(&options_a), &both(&options_b))?;
            if let Some(d) = muster::cli::compare::unrelated(&ba.ruleset, &bb.ruleset) {
                return Err(report(&[d], &bb.sources));
            }
            // Both play one file: the scenario given, else A's default.
            let file = match scenario {
                Some(f) => f,
                None => ba.default_scenario().map_err(|d| report(&d, &ba.sources))?,
            };
            // Which of the two a diagnostic is about, before it.
            let cannot = |which: &str, path: &Path, d: &[Diag], s: &Sources| {
                errln!(
                    "error: ruleset {which} ({}) cannot play the scenario {}:",
                    path.display(),
                    file.display()
                );
                report_first(d, s, 3)
            };
            let sa = ba
                .scenario(Some(&file))
                .map_err(|d| cannot("A", &a, &d, &ba.sources))?;
            let sb = bb
                .scenario(Some(&file))
                .map_err(|d| cannot("B", &b, &d, &bb.sources))?;
            let mut pa = muster::battle::game::Prepared::new(&ba.ruleset, &sa)
                .map_err(|d| cannot("A", &a, &d, &ba.sources))?;
            let mut pb = muster::battle::game::Prepared::new(&bb.ruleset, &sb)
                .map_err(|d| cannot("B", &b, &d, &bb.sources))?;
            set_options(&ba.ruleset, &mut pa.world, &options)?;
            set_options(&bb.ruleset, &mut pb.world, &options)?;
            set_options(&ba.ruleset, &mut pa.world, &options_a)?;
            set_options(&bb.ruleset, &mut pb.world, &options_b)?;
            set_search(&mut pa, search);
            set_search(&mut pb, search);
            let pool = thread_pool(threads)?;
            let games = shard.map_or(0..runs, |s| s.games(runs));
            let bar = progress_bar(2 * (games.end - games.start), json || shard.is_some());
            let tick = || bar.inc(1);
            let play = |p: &muster::battle::game::Prepared| {
                pool.install(|| muster::cli::simulate::play_range(p, games.clone(), seed, &tick))
            };
            let ga = play(&pa).map_err(|d| {
                errln!("error: a game under ruleset A ({}) failed:", a.display());
                report(&[d], &ba.sources)
            })?;
            let gb = play(&pb).map_err(|d| {
                errln!("error: a game under ruleset B ({}) failed:", b.display());
                report(&[d], &bb.sources)
            })?;
            bar.finish_and_clear();
            use muster::cli::simulate::{shard, Frame};
            let (fa, fb) = (Frame::of(&pa), Frame::of(&pb));
            let paired = muster::cli::compare::Paired::of(&fa, &ga, &fb, &gb, games.start)
                .map_err(|d| report(&[d], &bb.sources))?;
            let titles = [ba.ruleset.title.clone(), bb.ruleset.title.clone()];
            let heading = muster::cli::compare::Heading {
                a: a.display().to_string(),
                b: b.display().to_string(),
                scenario_file: file.display().to_string(),
                scenario: sa.description.clone().unwrap_or_else(|| "scenario".into()),
                rules_text: rules.to_string(),
                rules_json: serde_json::to_value(&rules).unwrap_or_default(),
            };
            if let Some(slice) = shard {
                let (oa, ob) = (
                    with_search(&both(&options_a), search),
                    with_search(&both(&options_b), search),
                );
                let s = shard::CompareShard {
                    format: shard::COMPARE_FORMAT.into(),
                    version: shard::VERSION,
                    muster: shard::program(),
                    fingerprint: shard::fingerprint_of(&[(&ba.sources, &oa), (&bb.sources, &ob)]),
                    heading,
                    titles,
                    seed,
                    runs,
                    shard: slice,
                    first_game: games.start,
                    end_game: games.end,
                    frames: [fa, fb],
                    paired,
                };
                outln!("{}", serde_json::to_string_pretty(&s).unwrap());
                return Ok(());
            }
            let cmp = paired.comparison(&fa, &fb, titles, seed);
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&heading.json(&cmp)).unwrap()
                );
            } else {
                out!("{}", heading.text(&cmp));
            }
            if let Some(f) = &svg {
                let chart = muster::cli::charts::compare(&cmp, &file.display().to_string());
                write_chart(f, &chart, &bb.sources)?;
            }
        }
        Command::Odds {
            ruleset,
            situation,
            samples,
            seed,
            threads,
            json,
            options,
            ruleset_b,
            svg,
        } => {
            let how = OddsRun {
                situation: &situation,
                threads,
                samples,
                seed: seed.unwrap_or(1),
                quiet: json,
                options: &options,
            };
            let a = how.run(&ruleset)?;
            let pname = a.procedure();
            if let (Some(s), Method::Exact | Method::Scripted) = (seed, &a.odds.method) {
                noteln!("note: --seed {s} is unused: the odds are not sampled");
            }
            let Some(path_b) = ruleset_b else {
                let report = a.report();
                if let Some(file) = &svg {
                    let desc = a.situation.description.as_deref();
                    let chart = muster::cli::charts::odds(&report, &a.build.ruleset.title, desc);
                    write_chart(file, &chart, &a.build.sources)?;
                }
                if json {
                    let v = report.json(&a.build.ruleset.id);
                    outln!("{}", serde_json::to_string_pretty(&v).unwrap());
                } else {
                    out!("{}", report.text(a.situation.description.as_deref()));
                }
                // The process exits next: the compiled ruleset is not freed
                // node by node (see `load_with`).
                std::mem::forget((report, a));
                return Ok(());
            };
            let b = how.run(&path_b)?;
            let (sa, sb) = (a.shown(&ruleset), b.shown(&path_b));
            if json {
                let ja = a.report().json(&a.build.ruleset.id);
                let jb = b.report().json(&b.build.ruleset.id);
                let v = muster::cli::output::json_document(
                    "odds_pair",
                    muster::odds::pair::json(ja, jb, &sa, &sb),
                );
                outln!("{}", serde_json::to_string_pretty(&v).unwrap());
            } else {
                let desc = a.situation.description.as_deref();
                let read = a.report().situation_text();
                out!(
                    "{}",
                    muster::odds::pair::table(&pname, desc, &read, &sa, &sb)
                );
            }
        }
        Command::Diff { a, b, json } => {
            let (_, _, rules) = load_pair(&a, &b, &[], &[])?;
            if json {
                let v = serde_json::to_value(&rules).unwrap_or_default();
                let v = muster::cli::output::json_document("diff", v);
                outln!("{}", serde_json::to_string_pretty(&v).unwrap());
            } else {
                out!("{rules}");
            }
        }
        Command::Army {
            ruleset,
            roster,
            json,
        } => {
            let mut b = load(&ruleset)?;
            let mut reports = Vec::new();
            for path in &roster {
                let text = read_input(path, &b.sources)?;
                let r = muster::battle::army::check(
                    &b.ruleset,
                    &path.display().to_string(),
                    &text,
                    &mut b.sources,
                )
                .map_err(|d| report(&d, &b.sources))?;
                reports.push(r);
            }
            // A rule between the armies is the later roster's problem.
            let across = muster::battle::army::compare_sides(&b.ruleset, &reports);
            if let Some(last) = reports.last_mut() {
                last.problems.extend(across);
            }
            if json {
                let one = |r: &muster::battle::army::Report| {
                    serde_json::json!({
                        "army": r.army,
                        "name": r.name,
                        "units": r.units,
                        "points": r.points,
                        "allowed": {"units": r.allowed_units, "points": r.allowed_points},
                        "commands": r.commands,
                        "problems": r.problems.iter().map(|d| d.message.clone()).collect::<Vec<_>>(),
                    })
                };
                let rosters: Vec<_> = reports.iter().map(one).collect();
                let v = muster::cli::output::json_document(
                    "army",
                    serde_json::json!({"ruleset": b.ruleset.id, "rosters": rosters}),
                );
                outln!("{}", serde_json::to_string_pretty(&v).unwrap());
            } else {
                for r in &reports {
                    out!("{}", muster::battle::army::roster_text(r));
                }
            }
            let problems: Vec<_> = reports.into_iter().flat_map(|r| r.problems).collect();
            if !problems.is_empty() {
                return Err(report(&problems, &b.sources));
            }
        }
        Command::Query {
            ruleset,
            situation,
            exprs,
            json,
        } => {
            let mut b = load(&ruleset)?;
            let text = read_input(&situation, &b.sources)?;
            let s = b
                .situation(&situation.display().to_string(), &text)
                .map_err(|d| report(&d, &b.sources))?;
            let mut out = serde_json::Map::new();
            for e in &exprs {
                let (_, shown) = b.query(&s, e).map_err(|d| report(&d, &b.sources))?;
                if json {
                    out.insert(e.clone(), serde_json::Value::String(shown));
                } else {
                    outln!("{e} = {shown}");
                }
            }
            if json {
                let v = muster::cli::output::json_document(
                    "query",
                    serde_json::json!({"ruleset": b.ruleset.id, "values": out}),
                );
                outln!("{}", serde_json::to_string_pretty(&v).unwrap());
            }
        }
    }
    Ok(())
}

/// How `muster odds` runs a situation: the same under each ruleset.
struct OddsRun<'a> {
    situation: &'a Path,
    threads: Option<usize>,
    samples: Option<u64>,
    seed: u64,
    quiet: bool,
    options: &'a [String],
}

/// A situation's odds under one ruleset, with what they were worked out from.
struct OddsOf {
    build: Build,
    situation: muster::odds::situation::Situation,
    prog: odds::Program,
    odds: Odds,
}

impl OddsRun<'_> {
    /// The situation's odds under the ruleset at `path`: its scripted
    /// rolls, else sampled with `--samples`, else exact (sampled when
    /// there are too many ways to count).
    fn run(&self, path: &Path) -> Result<OddsOf, ExitCode> {
        let mut b = load_for_odds(path, self.options)?;
        let text = read_input(self.situation, &b.sources)?;
        let mut s = b
            .situation(&self.situation.display().to_string(), &text)
            .map_err(|d| report(&d, &b.sources))?;
        set_options(&b.ruleset, &mut s.world, self.options)?;
        let prog = b.program(&s).map_err(|d| report(&[d], &b.sources))?;
        let rs = &b.ruleset;
        let (seed, quiet) = (self.seed, self.quiet);
        let result = if let Some(rolls) = &s.rolls {
            odds::scripted(rs, &prog, rolls)
        } else if let Some(n) = self.samples {
            sample(rs, &prog, n, seed, quiet, self.threads)
        } else {
            match odds::exact(rs, &prog) {
                Ok(o) => Ok(o),
                Err(odds::ExactError::TooMany(why)) => {
                    noteln!("note: {why}; sampling 1,000,000 games instead");
                    sample(rs, &prog, 1_000_000, seed, quiet, self.threads)
                }
                Err(odds::ExactError::Fault(d)) => Err(d),
            }
        };
        let o = result.map_err(|d| report(&[b.locate(&s, d)], &b.sources))?;
        let procedure = s.procedure.unwrap_or(0) as usize;
        warn(
            &muster::odds::unset::unset_outcomes(&b.ruleset, procedure, &o),
            &b.sources,
        );
        Ok(OddsOf {
            build: b,
            situation: s,
            prog,
            odds: o,
        })
    }
}

impl OddsOf {
    /// The odds as `muster odds` shows them.
    fn report(&self) -> muster::cli::odds_report::Report {
        let rs = &self.build.ruleset;
        muster::cli::odds_report::Report::new(rs, &self.prog.world, &self.procedure(), &self.odds)
            .with_situation(self.situation.readings(rs, &self.build.sources))
    }

    fn procedure(&self) -> String {
        let rs = &self.build.ruleset;
        rs.procedures[self.situation.procedure.unwrap_or(0) as usize]
            .name
            .clone()
    }

    /// The odds with their values shown, to set beside another ruleset's.
    fn shown(&self, path: &Path) -> muster::odds::pair::Shown {
        let rs = &self.build.ruleset;
        let name = format!("{} ({})", path.display(), rs.title);
        muster::odds::pair::Shown::new(&name, &self.odds, |v| self.prog.world.show(rs, v))
    }
}

fn sample(
    rs: &muster::compile::ir::Ruleset,
    prog: &odds::Program,
    n: u64,
    seed: u64,
    quiet: bool,
    threads: Option<usize>,
) -> Result<Odds, Diag> {
    use indicatif::{ProgressBar, ProgressStyle};
    // Sampling runs on rayon's global pool: its threads, with room on their
    // stacks. It is started here, on the first sampling, not for every odds
    // command: exact and scripted odds run on one thread, and an idle pool's
    // workers spin (sched_yield, futex waits) for as long as the command
    // runs. A second call (`--against`) finds the pool built already.
    let _ = pool_builder(threads).build_global();
    let bar = if !quiet && n >= 1_000_000 {
        let b = ProgressBar::new(n);
        b.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} samples ({eta})").unwrap());
        Some(b)
    } else {
        None
    };
    let tick = |k: u64| {
        if let Some(b) = &bar {
            b.inc(k);
        }
    };
    let r = odds::sampled(rs, prog, n, seed, Some(&tick));
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    r
}

/// Draw the table after every turn into the folder `dir` as
/// `turn-NN.svg` (see muster::cli::output: nothing else there is touched).
fn write_svgs(
    dir: &Path,
    rs: &muster::compile::ir::Ruleset,
    sc: &muster::battle::scenario::Scenario,
    prep: &muster::battle::game::Prepared,
    game: &muster::battle::game::Game,
) -> Result<muster::cli::output::Written, Diag> {
    let files: Vec<(String, String)> = muster::cli::pictures::turn_pictures(rs, sc, prep, game)
        .into_iter()
        .map(|p| (format!("turn-{:02}.svg", p.turn), p.svg))
        .collect();
    muster::cli::output::write_into(dir, &files, is_turn_picture)
}

/// A name `write_svgs` writes: `turn-` and digits, `.svg`.
fn is_turn_picture(name: &str) -> bool {
    name.strip_prefix("turn-")
        .and_then(|n| n.strip_suffix(".svg"))
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The most threads a command starts, per core: more only wait on each
/// other (the results never depend on the count).
const THREADS_PER_CORE: usize = 4;

/// The threads to play on (0 or none: all cores), with room on their
/// stacks; a count beyond [`THREADS_PER_CORE`] a core is cut to that, with a note.
fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, ExitCode> {
    pool_builder(threads).build().map_err(|e| {
        errln!("error: cannot start the threads: {e}");
        ExitCode::FAILURE
    })
}

fn pool_builder(threads: Option<usize>) -> rayon::ThreadPoolBuilder {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = THREADS_PER_CORE * cores;
    let n = match threads.unwrap_or(0) {
        t if t > most => {
            errln!(
                "note: --threads {t} is more than {most} ({THREADS_PER_CORE} a core on the {cores} cores here); using {most}"
            );
            most
        }
        t => t,
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .stack_size(WORKER_STACK)
}

/// Write a chart to `file`, replacing only a chart this program wrote.
fn write_chart(file: &Path, chart: &str, sources: &Sources) -> Result<(), ExitCode> {
    muster::cli::output::write_file(file, chart, muster::cli::charts::is_chart)
        .map_err(|d| report(&[d], sources))
}

/// A progress bar over `games`, shown for long runs and never with JSON
/// output.
fn progress_bar(games: u64, json: bool) -> indicatif::ProgressBar {
    let quiet = QUIET.load(std::sync::atomic::Ordering::Relaxed);
    let bar = if games >= 200 && !json && !quiet {
        indicatif::ProgressBar::new(games)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} games ({per_sec}, {eta} left)",
        )
        .expect("a fixed template"),
    );
    bar
}

/// Apply `--option NAME=on|off` switches to a world.
fn set_options(
    rs: &muster::compile::ir::Ruleset,
    world: &mut muster::run::world::World,
    options: &[String],
) -> Result<(), ExitCode> {
    for o in options {
        let (name, value) = o.split_once('=').unwrap_or((o.as_str(), "on"));
        if value.trim().parse::<i64>().is_ok() {
            // A number: the ruleset was compiled with it (`load_with`).
            continue;
        }
        let on = match value {
            "on" | "true" => true,
            "off" | "false" => false,
            _ => {
                errln!("error: `--option {o}`: the value must be on, off or a number");
                return Err(ExitCode::FAILURE);
            }
        };
        match rs.option(name) {
            Some(i) if rs.options[i as usize].number.is_some() => {
                errln!(
                    "error: `--option {o}`: `{name}` is a number option; give it a number (`--option {name}=N`)"
                );
                return Err(ExitCode::FAILURE);
            }
            Some(i) => world.options[i as usize] = on,
            None => {
                let names: Vec<&str> = rs.options.iter().map(|x| x.name.as_str()).collect();
                errln!(
                    "error: the ruleset has no option `{name}` (its options: {})",
                    names.join(", ")
                );
                return Err(ExitCode::FAILURE);
            }
        }
    }
    Ok(())
}

/// The allocator: mimalloc, whose small allocations (a ruleset's syntax and
/// compiled trees, a battle's memos) cost fewer instructions than the
/// system's: `muster odds` on a TVBD situation 9.47M -> 8.09M instructions,
/// a TVBD game 3.4% fewer. Small blocks are asked for unaligned (see
/// muster::base::alloc: mimalloc's aligned entry over-allocated every
/// size that is not a power of two).
#[global_allocator]
static GLOBAL: muster::base::alloc::Allocator = muster::base::alloc::Allocator;
