//! `compile_commands.json`: translation units with their own include dirs, defines, forced
//! includes and `-std`, taken from `arguments` or a shell-split `command`. Relative paths are
//! relative to each entry's `directory`, as the compiler saw them.

use super::util::normalize;
use std::path::{Path, PathBuf};

/// One `-D`/`-U`, in command-line order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MacroOpt {
    Define(String, Option<String>),
    Undef(String),
}

impl MacroOpt {
    /// `NAME`, `NAME=VALUE` as given to `-D`.
    pub fn parse_define(s: &str) -> MacroOpt {
        match s.split_once('=') {
            Some((n, v)) => MacroOpt::Define(n.to_string(), Some(v.to_string())),
            None => MacroOpt::Define(s.to_string(), None),
        }
    }
}

/// Per-TU compile flags that matter for includes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TuFlags {
    pub quote_dirs: Vec<PathBuf>,
    pub include_dirs: Vec<PathBuf>,
    pub system_dirs: Vec<PathBuf>,
    pub after_dirs: Vec<PathBuf>,
    pub macros: Vec<MacroOpt>,
    pub forced_includes: Vec<PathBuf>,
    pub std: Option<String>,
}

#[derive(Clone, Debug)]
pub struct CompDbEntry {
    pub file: PathBuf,
    pub flags: TuFlags,
}

/// Largest `compile_commands.json` read (Chromium's is about 200 MB).
pub const MAX_COMPDB_BYTES: u64 = 2 << 30;

/// A compilation database that cannot be used; the message names the file and the entry.
/// (Error texts of I/O and JSON are kept as text: the scan's errors compare equal in tests.)
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompDbError {
    #[error("{}: cannot read: {reason}", path.display())]
    Read { path: PathBuf, reason: String },
    #[error("{}: not UTF-8 text (byte {at})", path.display())]
    NotUtf8 { path: PathBuf, at: usize },
    #[error("{}: invalid JSON at line {line}, column {column}: {reason}", path.display())]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        reason: String,
    },
    #[error("{}: expected a JSON array of compile commands", .0.display())]
    NotAnArray(PathBuf),
    #[error("{}: entry {index}: {problem}", path.display())]
    Entry {
        path: PathBuf,
        index: usize,
        problem: EntryProblem,
    },
}

/// What one entry of a compilation database lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryProblem {
    #[error("missing \"directory\"")]
    NoDirectory,
    #[error("missing \"file\"")]
    NoFile,
    #[error("needs \"arguments\" or \"command\"")]
    NoCommand,
}

/// Reads and parses a compilation database. Errors name the file and the entry.
pub fn load(path: &Path) -> Result<Vec<CompDbEntry>, CompDbError> {
    // A regular file only (a FIFO would block), of a size a compilation database can have.
    let bytes = clipforge_base::fsio::read_regular(path, MAX_COMPDB_BYTES).map_err(|e| {
        CompDbError::Read {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }
    })?;
    let text = String::from_utf8(bytes).map_err(|e| CompDbError::NotUtf8 {
        path: path.to_path_buf(),
        at: e.utf8_error().valid_up_to(),
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| CompDbError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        reason: e.to_string(),
    })?;
    let arr = v
        .as_array()
        .ok_or_else(|| CompDbError::NotAnArray(path.to_path_buf()))?;
    let mut out = Vec::new();
    for (i, e) in arr.iter().enumerate() {
        let err = |problem| CompDbError::Entry {
            path: path.to_path_buf(),
            index: i,
            problem,
        };
        let dir = e
            .get("directory")
            .and_then(|d| d.as_str())
            .ok_or_else(|| err(EntryProblem::NoDirectory))?;
        let file = e
            .get("file")
            .and_then(|d| d.as_str())
            .ok_or_else(|| err(EntryProblem::NoFile))?;
        let args: Vec<String> = if let Some(a) = e.get("arguments").and_then(|a| a.as_array()) {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        } else if let Some(c) = e.get("command").and_then(|c| c.as_str()) {
            shell_split(c)
        } else {
            return Err(err(EntryProblem::NoCommand));
        };
        let dir = Path::new(dir);
        let abs = |p: &str| normalize(&dir.join(p));
        out.push(CompDbEntry {
            file: abs(file),
            flags: parse_args(&args, &abs),
        });
    }
    Ok(out)
}

/// Extracts the include-relevant flags from a compiler command line.
pub fn parse_args(args: &[String], abs: &dyn Fn(&str) -> PathBuf) -> TuFlags {
    let mut f = TuFlags::default();
    let mut i = 1; // skip argv[0]
    while i < args.len() {
        let a = args[i].as_str();
        let mut take = |flag: &str| -> Option<String> {
            if a == flag {
                i += 1;
                args.get(i).cloned()
            } else {
                a.strip_prefix(flag).map(String::from)
            }
        };
        if let Some(v) = take("-I") {
            f.include_dirs.push(abs(&v));
        } else if let Some(v) = take("-iquote") {
            f.quote_dirs.push(abs(&v));
        } else if let Some(v) = take("-isystem") {
            f.system_dirs.push(abs(&v));
        } else if let Some(v) = take("-idirafter") {
            f.after_dirs.push(abs(&v));
        } else if let Some(v) = take("-include") {
            f.forced_includes.push(abs(&v));
        } else if let Some(v) = take("-D") {
            f.macros.push(MacroOpt::parse_define(&v));
        } else if let Some(v) = take("-U") {
            f.macros.push(MacroOpt::Undef(v));
        } else if let Some(v) = a.strip_prefix("-std=") {
            f.std = Some(v.to_string());
        }
        i += 1;
    }
    f
}

/// POSIX-shell-like word splitting (quotes and backslashes), enough for compile commands.
pub fn shell_split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    have = true;
                }
            }
            '\'' => {
                have = true;
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    cur.push(n);
                }
            }
            '"' => {
                have = true;
                while let Some(n) = chars.next() {
                    match n {
                        '"' => break,
                        '\\' => {
                            if let Some(&m) = chars.peek()
                                && matches!(m, '"' | '\\' | '$' | '`')
                            {
                                cur.push(m);
                                chars.next();
                                continue;
                            }
                            cur.push('\\');
                        }
                        _ => cur.push(n),
                    }
                }
            }
            c if c.is_whitespace() => {
                if have {
                    out.push(std::mem::take(&mut cur));
                    have = false;
                }
            }
            c => {
                cur.push(c);
                have = true;
            }
        }
    }
    if have {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_parse() {
        let a = shell_split(
            r#"g++ -Iinc -I "sp ace" -DX=1 -D Y -UZ '-DQ="a b"' -std=c++20 -include pre.h -c a.cpp"#,
        );
        assert_eq!(a[3], "sp ace");
        let f = parse_args(&a, &|p| PathBuf::from("/w").join(p));
        assert_eq!(
            f.include_dirs,
            vec![PathBuf::from("/w/inc"), PathBuf::from("/w/sp ace")]
        );
        assert_eq!(f.std.as_deref(), Some("c++20"));
        assert_eq!(f.forced_includes, vec![PathBuf::from("/w/pre.h")]);
        assert_eq!(
            f.macros,
            vec![
                MacroOpt::Define("X".into(), Some("1".into())),
                MacroOpt::Define("Y".into(), None),
                MacroOpt::Undef("Z".into()),
                MacroOpt::Define("Q".into(), Some("\"a b\"".into())),
            ]
        );
    }
}
