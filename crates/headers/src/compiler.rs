//! Asking the compiler for what "preprocessed" mode needs to match it: predefined macros
//! (`-dM -E`, with `-std` passed on) and the system include search list (`-E -v`), separately
//! for C and C++. `--compiler none` uses a built-in GCC 12 x86-64 Linux macro set and no system
//! directories (system headers are then unresolved and listed as such).

use std::path::PathBuf;
use std::process::{Command, Stdio};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Lang {
    C,
    Cxx,
}

impl Lang {
    /// A translation unit's language by its extension, as the scan compiles it: `.c` and `.m`
    /// are C, everything else C++.
    pub fn of_path(p: &std::path::Path) -> Lang {
        match p.extension().and_then(|x| x.to_str()) {
            Some("c") | Some("m") => Lang::C,
            _ => Lang::Cxx,
        }
    }
}

/// What the compiler predefines for one language + standard.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompilerEnv {
    /// `#define` lines as printed by `-dM -E`.
    pub predefined: String,
    /// `#include "..."` search list (rarely non-empty).
    pub quote_dirs: Vec<PathBuf>,
    /// `#include <...>` search list (the system dirs).
    pub system_dirs: Vec<PathBuf>,
    /// Files the driver includes implicitly before the TU (`stdc-predef.h` on glibc systems).
    pub preincludes: Vec<PathBuf>,
    /// Human-readable origin, e.g. "g++ (-std=c++20)" or "built-in GCC 12 x86-64 Linux set".
    pub origin: String,
}

const BUILTIN_CXX: &str = include_str!("gcc_x86_64_linux_cxx.txt");
const BUILTIN_C: &str = include_str!("gcc_x86_64_linux_c.txt");

/// The built-in set (`--compiler none`). `-std` only adjusts `__cplusplus` / `__STDC_VERSION__`.
pub fn builtin(lang: Lang, std: Option<&str>) -> CompilerEnv {
    let mut text = if lang == Lang::Cxx {
        BUILTIN_CXX.to_string()
    } else {
        BUILTIN_C.to_string()
    };
    if let Some(s) = std {
        let s = s.trim_start_matches("-std=");
        let (name, val) = match (lang, s.trim_start_matches("gnu").trim_start_matches("c")) {
            (Lang::Cxx, "++98" | "++03") => ("__cplusplus", "199711L"),
            (Lang::Cxx, "++11") => ("__cplusplus", "201103L"),
            (Lang::Cxx, "++14") => ("__cplusplus", "201402L"),
            (Lang::Cxx, "++17" | "++1z") => ("__cplusplus", "201703L"),
            (Lang::Cxx, "++20" | "++2a") => ("__cplusplus", "202002L"),
            (Lang::Cxx, "++23" | "++2b") => ("__cplusplus", "202100L"),
            (Lang::C, "99") => ("__STDC_VERSION__", "199901L"),
            (Lang::C, "11") => ("__STDC_VERSION__", "201112L"),
            (Lang::C, "17" | "18") => ("__STDC_VERSION__", "201710L"),
            (Lang::C, "2x" | "23") => ("__STDC_VERSION__", "202000L"),
            _ => ("", ""),
        };
        if !name.is_empty() {
            text.push_str(&format!("#undef {name}\n#define {name} {val}\n"));
        }
    }
    CompilerEnv {
        predefined: text,
        quote_dirs: Vec::new(),
        system_dirs: Vec::new(),
        preincludes: Vec::new(),
        origin: "built-in GCC 12 x86-64 Linux macro set, no system include dirs".into(),
    }
}

/// The compilers tried, in order, when none is named.
pub const CANDIDATES: [&str; 3] = ["c++", "g++", "clang++"];

/// Finds a C++ compiler on PATH: `c++`, `g++`, then `clang++`. A candidate that is on `PATH` and
/// `known` (it answered a query before) is taken without running it: a rescan then starts no
/// process at all.
pub fn detect_known(known: impl Fn(&str) -> bool) -> Option<String> {
    let on_path = |c: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(c).is_file()))
    };
    CANDIDATES
        .into_iter()
        .find(|c| {
            (known(c) && on_path(c))
                || Command::new(c)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
        })
        .map(String::from)
}

/// Why asking the compiler failed: it could not be run (not installed, not executable), or it
/// ran and refused the query (an unknown `-std`, not a C/C++ compiler).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompilerError {
    #[error("cannot run compiler `{compiler}`: {reason}")]
    Run { compiler: String, reason: String },
    #[error("`{compiler} -x {lang} -dM -E` failed: {first_line}")]
    Failed {
        compiler: String,
        lang: &'static str,
        first_line: String,
    },
}

/// Queries `compiler` for `lang` (the driver is told the language with `-x`).
pub fn query(compiler: &str, lang: Lang, std: Option<&str>) -> Result<CompilerEnv, CompilerError> {
    let x = if lang == Lang::Cxx { "c++" } else { "c" };
    let mut base = vec!["-x".to_string(), x.to_string()];
    if let Some(s) = std {
        base.push(if s.starts_with("-std=") {
            s.to_string()
        } else {
            format!("-std={s}")
        });
    }
    let run_err = |e: std::io::Error| CompilerError::Run {
        compiler: compiler.to_string(),
        reason: e.to_string(),
    };
    let spawn = |extra: &[&str]| -> Result<std::process::Child, CompilerError> {
        Command::new(compiler)
            .args(&base)
            .args(extra)
            .arg("/dev/null")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(run_err)
    };
    let wait = |c: std::process::Child| c.wait_with_output().map_err(run_err);
    // Both queries run at once: the compiler's start-up is most of a cold scan's fixed cost.
    let dm = spawn(&["-dM", "-E"])?;
    let v = spawn(&["-E", "-v"]);
    let dm = wait(dm)?;
    let v = wait(v?)?;
    if !dm.status.success() {
        return Err(CompilerError::Failed {
            compiler: compiler.to_string(),
            lang: x,
            first_line: String::from_utf8_lossy(&dm.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
        });
    }
    let err = String::from_utf8_lossy(&v.stderr);
    let (quote_dirs, system_dirs) = parse_search_list(&err);
    let preincludes = parse_preincludes(&String::from_utf8_lossy(&v.stdout));
    Ok(CompilerEnv {
        predefined: String::from_utf8_lossy(&dm.stdout).into_owned(),
        quote_dirs,
        system_dirs,
        preincludes,
        origin: format!(
            "{compiler} -x {x}{}",
            std.map(|s| format!(" -std={}", s.trim_start_matches("-std=")))
                .unwrap_or_default()
        ),
    })
}

/// Files entered before the main file in `-E` output of an empty TU: line markers
/// `# 1 "/usr/include/stdc-predef.h" 1 3 4` (flag 1 = entering a file).
pub fn parse_preincludes(s: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in s.lines() {
        let Some(rest) = line.strip_prefix("# ") else {
            continue;
        };
        let mut parts = rest.splitn(2, ' ');
        let _num = parts.next();
        let Some(tail) = parts.next() else { continue };
        let Some(tail) = tail.strip_prefix('"') else {
            continue;
        };
        let Some(end) = tail.find('"') else { continue };
        let (name, flags) = (&tail[..end], &tail[end + 1..]);
        if name.starts_with('<') || name == "/dev/null" {
            continue;
        }
        if flags.split_whitespace().next() == Some("1")
            && !out.iter().any(|p: &PathBuf| p.as_os_str() == name)
        {
            out.push(PathBuf::from(name));
        }
    }
    out
}

/// Parses the `-v` search list printed on stderr by GCC and Clang.
pub fn parse_search_list(s: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut quote = Vec::new();
    let mut sys = Vec::new();
    let mut state = 0;
    for line in s.lines() {
        if line.starts_with("#include \"...\" search starts here") {
            state = 1;
        } else if line.starts_with("#include <...> search starts here") {
            state = 2;
        } else if line.starts_with("End of search list") {
            break;
        } else if state > 0 && line.starts_with(' ') {
            let d = line.trim().trim_end_matches(" (framework directory)");
            let p = super::util::normalize(std::path::Path::new(d));
            if state == 1 {
                quote.push(p)
            } else {
                sys.push(p)
            }
        }
    }
    (quote, sys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_list() {
        let s = "ignoring nonexistent directory \"/x\"\n#include \"...\" search starts here:\n /q\n#include <...> search starts here:\n /usr/include/c++/12\n /usr/lib/gcc/x86_64-linux-gnu/12/../../../../include\nEnd of search list.\n";
        let (q, sy) = parse_search_list(s);
        assert_eq!(q, vec![PathBuf::from("/q")]);
        assert_eq!(
            sy,
            vec![
                PathBuf::from("/usr/include/c++/12"),
                PathBuf::from("/usr/include")
            ]
        );
    }

    #[test]
    fn builtin_std() {
        let e = builtin(Lang::Cxx, Some("c++20"));
        assert!(e.predefined.contains("#define __cplusplus 202002L"));
        assert!(e.predefined.contains("__GNUC__"));
    }
}
