//! The parse cache: a file's syntax tree kept on disk, so that a command
//! run again on a ruleset it has read before skips the grammar (issue 33,
//! item 5: the grammar was about 80% of a `muster odds` call).
//!
//! An entry is one file of the user's cache directory
//! (`$XDG_CACHE_HOME/muster/parse/`, else `~/.cache/muster/parse/`; never
//! next to the ruleset), named by a hash of the text's name as the loader
//! shows it (its path) and the [`FileId`] it is parsed as, so a file has
//! one entry however often it is edited or the program rebuilt. It holds a
//! magic line, a hash of the program's identity (version, commit, and the
//! size and time of the executable), a hash and the length of the text it
//! was parsed from, and the tree (bincode). Read back, it is used only when
//! it was written by this very program from the text read now: an edited
//! file, or an entry of another build, is parsed again and rewritten. An entry that cannot be read or
//! decoded is parsed again and rewritten, never an error; a file at an
//! entry's name that does not start with the magic line is not ours and is
//! neither read nor replaced. A text that does not parse is not cached (its
//! diagnostic is made again each time). Writes go to a temporary file of
//! the same folder, renamed into place, so that two runs at once never see
//! half an entry.
//!
//! Off in the library unless [`enable`] is called: `muster` enables it for
//! every command but `lsp`, unless `--no-cache` is given or
//! `MUSTER_NO_CACHE` is set (to anything but empty).
//!
//! Beside it, [`CheckedRecord`]: that a ruleset compiled clean from the
//! very texts read now, so that `muster odds` may compile it without the
//! checks that only find mistakes (issue 33).
//!
//! Uses [`crate::front::parse`], [`crate::front::syntax`] and
//! [`crate::front::source`] only.

use crate::front::diagnostic::Diag;
use crate::front::parse::parse_file;
use crate::front::syntax::{File, FileId};
use std::hash::Hasher;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The first bytes of every entry (and its format's version).
const MAGIC: &[u8; 16] = b"muster-parse-v2\n";

/// The first bytes of an entry of any version: a file that starts so is
/// ours to replace.
const OURS: &[u8] = b"muster-parse-v";

/// A parse cache in one folder.
#[derive(Clone, Debug)]
pub struct ParseCache {
    dir: PathBuf,
}

/// What a lookup found (tests and `MUSTER_CACHE_TRACE` read it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The entry's tree was used.
    Hit,
    /// No entry: parsed and written.
    Miss,
    /// The entry was of another text (the file was edited): parsed, rewritten.
    Stale,
    /// The entry could not be read or decoded: parsed, rewritten.
    Corrupt,
    /// A file not written by this program stands at the entry's name: parsed,
    /// the file left as it is.
    Foreign,
    /// The text does not parse: its diagnostic, nothing written.
    Refused,
}

impl ParseCache {
    /// A cache in `dir` (created when an entry is first written).
    pub fn in_dir(dir: impl Into<PathBuf>) -> ParseCache {
        ParseCache { dir: dir.into() }
    }

    /// The user's cache: `$XDG_CACHE_HOME/muster/parse` (an absolute
    /// path), else `$HOME/.cache/muster/parse`; `None` when neither is set
    /// or `MUSTER_NO_CACHE` is set to anything but empty.
    pub fn from_env() -> Option<ParseCache> {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if var("MUSTER_NO_CACHE").is_some() {
            return None;
        }
        let base = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(ParseCache::in_dir(base.join("muster").join("parse")))
    }

    /// The folder the entries are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry for the text named `name`, parsed as `file`, is.
    pub fn entry(&self, name: &str, file: FileId) -> PathBuf {
        let mut h = Hash128::new();
        h.write(&file.0.to_le_bytes());
        h.write(name.as_bytes());
        self.dir.join(format!("{:032x}", h.finish()))
    }

    /// [`parse_file`], through the cache.
    pub fn parse(&self, name: &str, text: &str, file: FileId) -> (Result<File, Diag>, Lookup) {
        let path = self.entry(name, file);
        let hash = text_hash(text);
        let found = match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Lookup::Miss,
            Err(_) => Lookup::Corrupt,
            Ok(bytes) => match read_entry(&bytes, build(), hash, text.len()) {
                Ok(tree) => return (Ok(tree), Lookup::Hit),
                Err(why) => why,
            },
        };
        let parsed = parse_file(text, file);
        let Ok(tree) = &parsed else {
            return (parsed, Lookup::Refused);
        };
        if found != Lookup::Foreign {
            // A cache that cannot be written is no cache: the parse stands.
            let _ = self.write(&path, hash, text.len(), tree);
        }
        (parsed, found)
    }

    /// Write an entry through a temporary file renamed into place.
    fn write(&self, path: &Path, hash: u128, len: usize, tree: &File) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(64 * 1024);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&build().to_le_bytes());
        bytes.extend_from_slice(&hash.to_le_bytes());
        bytes.extend_from_slice(&(len as u64).to_le_bytes());
        bincode::serialize_into(&mut bytes, tree).map_err(std::io::Error::other)?;
        write_entry(&self.dir, path, &bytes, OURS)
    }
}

/// Write `bytes` at `path` (in `dir`) through a temporary file of `dir`
/// renamed into place, unless a file that does not start with `ours` (not
/// an entry this program wrote) stands there.
fn write_entry(dir: &Path, path: &Path, bytes: &[u8], ours: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), unique()));
    // The temporary file is made here, never found: a file already at
    // its name is someone else's and is left alone (only a file this
    // call created is ever removed).
    let mut file = std::fs::File::create_new(&tmp)?;
    let written = file.write_all(bytes);
    drop(file);
    // Only a file of ours (or none) is replaced: checked again just
    // before, as another run may have written one since.
    let replace = match std::fs::File::open(path) {
        Ok(f) => starts_with(f, ours),
        Err(_) => true,
    };
    let moved = match written {
        Ok(()) if replace => std::fs::rename(&tmp, path),
        Ok(()) => Ok(()),
        Err(e) => Err(e),
    };
    if moved.is_err() || !replace {
        let _ = std::fs::remove_file(&tmp);
    }
    moved
}

/// What follows `magic` (this version's first line) in a file's bytes;
/// else the file is stale (ours, `ours` its first words, another version)
/// or foreign (not a file this program wrote).
fn past_magic<'a>(bytes: &'a [u8], magic: &[u8], ours: &[u8]) -> Result<&'a [u8], Lookup> {
    bytes.strip_prefix(magic).ok_or(if bytes.starts_with(ours) {
        Lookup::Stale
    } else {
        Lookup::Foreign
    })
}

/// The tree of an entry's bytes, when this build wrote it from this text;
/// else why not.
fn read_entry(bytes: &[u8], build: u128, hash: u128, len: usize) -> Result<File, Lookup> {
    let rest = past_magic(bytes, MAGIC.as_slice(), OURS)?;
    if rest.len() < 40 {
        return Err(Lookup::Corrupt);
    }
    let (head, tree) = rest.split_at(40);
    let same = head[..16] == build.to_le_bytes()
        && head[16..32] == hash.to_le_bytes()
        && head[32..] == (len as u64).to_le_bytes();
    if !same {
        return Err(Lookup::Stale);
    }
    bincode::deserialize(tree).map_err(|_| Lookup::Corrupt)
}

/// Whether a file starts with `ours` (an entry of any version of its kind
/// does; a file too short to does not).
fn starts_with(mut f: std::fs::File, ours: &[u8]) -> bool {
    use std::io::Read;
    let mut head = vec![0u8; ours.len()];
    f.read_exact(&mut head).is_ok() && head == ours
}

/// A number no other temporary file of this process has.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A hash of the program's [`identity`].
fn build() -> u128 {
    static BUILD: OnceLock<u128> = OnceLock::new();
    *BUILD.get_or_init(|| text_hash(identity()))
}

/// The program's identity: an entry written by another build is never read.
fn identity() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let exe = std::env::current_exe()
            .and_then(std::fs::metadata)
            .ok()
            .map(|m| {
                let t = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("{}:{t}", m.len())
            })
            .unwrap_or_default();
        format!(
            "{} {} {exe}",
            env!("CARGO_PKG_VERSION"),
            env!("MUSTER_COMMIT")
        )
    })
}

/// A 128-bit hash of a text (two passes of different seeds: an edited file
/// is told from its entry's by this and its length).
fn text_hash(text: &str) -> u128 {
    bytes_hash(text.as_bytes())
}

/// [`text_hash`] of any bytes.
fn bytes_hash(bytes: &[u8]) -> u128 {
    let mut h = Hash128::new();
    h.write(bytes);
    h.finish()
}

/// Two foldhash hashers (its `quality` flavour, fixed seeds: the same on
/// every run) seeded apart. Before, two SipHash passes: hashing the texts
/// read was 4% of a `muster odds` call on TVBD (310,000 instructions, about
/// five a byte); foldhash reads long inputs 32 bytes at a time with folded
/// multiplications. Entries are only ever read by the build that wrote them
/// (see [`identity`]), so the hash need not be stable across versions.
struct Hash128(
    foldhash::quality::FoldHasher<'static>,
    foldhash::quality::FoldHasher<'static>,
);

impl Hash128 {
    fn new() -> Hash128 {
        use std::hash::BuildHasher;
        Hash128(
            foldhash::quality::FixedState::with_seed(1).build_hasher(),
            foldhash::quality::FixedState::with_seed(2).build_hasher(),
        )
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }
    fn finish(&self) -> u128 {
        (u128::from(self.0.finish()) << 64) | u128::from(self.1.finish())
    }
}

/// The cache the loader parses through (none until [`enable`]).
static ENABLED: OnceLock<Option<ParseCache>> = OnceLock::new();

/// Parse through `cache` from now on in this process (`None`: never). The
/// first call decides; later ones are ignored.
pub fn enable(cache: Option<ParseCache>) {
    let _ = ENABLED.set(cache);
}

/// Parse a text as the loader does: through the enabled cache, if any.
pub fn parse(name: &str, text: &str, file: FileId) -> Result<File, Diag> {
    match ENABLED.get() {
        Some(Some(cache)) => {
            let (parsed, found) = cache.parse(name, text, file);
            if std::env::var_os("MUSTER_CACHE_TRACE").is_some() {
                eprintln!("parse cache: {name}: {found:?}");
            }
            parsed
        }
        _ => parse_file(text, file),
    }
}

/// The first bytes of a record that a ruleset compiled clean (and its
/// format's version).
const CHECKED_MAGIC: &[u8; 18] = b"muster-checked-v2\n";

/// The first bytes of such a record of any version.
const CHECKED_OURS: &[u8] = b"muster-checked-v";

/// Records that a ruleset compiled without a mistake, so that `muster odds`
/// may leave out the checks that only find mistakes (issue 33).
///
/// An entry is one file of `checked/` beside the parse cache's folder
/// (`$XDG_CACHE_HOME/muster/checked/`), named by a hash of the ruleset's
/// name as given, and holds a magic line, the program's identity hash (as
/// the parse cache's entries) and a hash of everything the compiler is
/// given: every text the loader read for the ruleset (its files, the
/// libraries it imports, its hooks' scripts), each with its name, in the
/// order read, and the number options set on the command line. The loaded
/// ruleset is a function of those texts and names (the loader reads nothing
/// else), and the compiled ruleset of the loaded one and the numbers: so
/// while an entry's hash is the one worked out now, compiling again gives
/// the very ruleset that compiled clean when the entry was written, and a
/// check that can only add a mistake would add none. Any edit, to any file
/// read, makes another hash: the ruleset is compiled whole again, its
/// mistakes reported as before, and the entry rewritten only if it
/// compiled clean. An entry that cannot be read or is of another build or
/// version is no record; a file there not written by this program is
/// neither read as one nor replaced; a record that cannot be written is
/// none (the next run checks again).
///
/// A record also keeps what its writer gives it ([`CheckedRecord::note`]'s
/// `kept`: `muster odds` keeps there how each text was come by and the
/// ruleset as compiled for odds, see `muster::build_for_odds`), with its
/// length and a hash of its bytes: a record whose kept bytes are not those
/// written (cut short, lengthened, altered) is corrupt, no record.
#[derive(Clone, Debug)]
pub struct CheckedRecord {
    dir: PathBuf,
}

impl CheckedRecord {
    /// Records kept in `dir` (created when one is first written).
    pub fn in_dir(dir: impl Into<PathBuf>) -> CheckedRecord {
        CheckedRecord { dir: dir.into() }
    }

    /// The folder the records are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the record of the ruleset named `name` is.
    fn entry(&self, name: &str) -> PathBuf {
        let mut h = Hash128::new();
        h.write(b"checked\0");
        h.write(name.as_bytes());
        self.dir.join(format!("{:032x}", h.finish()))
    }

    /// Whether the ruleset named `name` compiled clean from `input` (a
    /// [`compile_input`] hash): [`Lookup::Hit`] when it did, else why
    /// there is no record of it.
    pub fn lookup(&self, name: &str, input: u128) -> Lookup {
        match self.read(name) {
            Ok((i, _)) if i == input => Lookup::Hit,
            Ok(_) => Lookup::Stale,
            Err(why) => why,
        }
    }

    /// The record of the ruleset named `name`, when there is one of this
    /// build, whole: the input it compiled clean from and what was kept
    /// with it; else why there is none.
    pub fn read(&self, name: &str) -> Result<(u128, Vec<u8>), Lookup> {
        let mut bytes = match std::fs::read(self.entry(name)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Lookup::Miss),
            Err(_) => return Err(Lookup::Corrupt),
            Ok(b) => b,
        };
        let rest = past_magic(&bytes, CHECKED_MAGIC.as_slice(), CHECKED_OURS)?;
        if rest.len() < 56 {
            return Err(Lookup::Corrupt);
        }
        let (head, kept) = rest.split_at(56);
        let word = |at: usize| u128::from_le_bytes(head[at..at + 16].try_into().unwrap());
        let len = u64::from_le_bytes(head[48..56].try_into().unwrap());
        if len != kept.len() as u64 || word(32) != bytes_hash(kept) {
            return Err(Lookup::Corrupt);
        }
        if word(0) != build() {
            return Err(Lookup::Stale);
        }
        let input = word(16);
        let at = CHECKED_MAGIC.len() + 56;
        bytes.drain(..at);
        Ok((input, bytes))
    }

    /// Record that the ruleset named `name` compiled clean from `input`,
    /// keeping `kept` with it (never over a file this program did not
    /// write).
    pub fn note(&self, name: &str, input: u128, kept: &[u8]) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(CHECKED_MAGIC.len() + 56 + kept.len());
        bytes.extend_from_slice(CHECKED_MAGIC);
        bytes.extend_from_slice(&build().to_le_bytes());
        bytes.extend_from_slice(&input.to_le_bytes());
        bytes.extend_from_slice(&bytes_hash(kept).to_le_bytes());
        bytes.extend_from_slice(&(kept.len() as u64).to_le_bytes());
        bytes.extend_from_slice(kept);
        write_entry(&self.dir, &self.entry(name), &bytes, CHECKED_OURS)
    }
}

/// A hash of what the compiler is given: every text in `sources` with its
/// name, in order, and the number options `numbers` (see [`CheckedRecord`]).
pub fn compile_input(sources: &crate::front::source::Sources, numbers: &[(String, i64)]) -> u128 {
    let mut h = Hash128::new();
    h.write(&(sources.len() as u64).to_le_bytes());
    for i in 0..sources.len() {
        let s = sources.get(FileId(i as u32));
        for part in [s.name.as_bytes(), s.text.as_bytes()] {
            h.write(&(part.len() as u64).to_le_bytes());
            h.write(part);
        }
    }
    h.write(&(numbers.len() as u64).to_le_bytes());
    for (name, n) in numbers {
        h.write(&(name.len() as u64).to_le_bytes());
        h.write(name.as_bytes());
        h.write(&n.to_le_bytes());
    }
    h.finish()
}

/// The records of the cache the loader parses through: `checked/` beside
/// its folder (none when the cache is off).
pub fn checked_record() -> Option<CheckedRecord> {
    let Some(Some(cache)) = ENABLED.get() else {
        return None;
    };
    Some(CheckedRecord::in_dir(cache.dir().parent()?.join("checked")))
}
