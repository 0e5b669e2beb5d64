//! Rebuild cost from history (`clipforge headers … --churn 90d`): per file, the commits that
//! changed it over a period (read with the `git` command: `git log --since … --name-only`),
//! times the translation units whose preprocessed closure reaches it: the TU rebuilds its
//! changes caused. Headers are ranked by that figure, and the tree gets its "TU rebuilds per
//! week", counting each TU once per commit (a commit that changes two headers one TU includes
//! rebuilds it once, so the tree's figure can be less than the sum of the files').

use super::report::{FileChurn, Report, TreeChurn};
use super::util::normalize;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why history could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ChurnError {
    #[error("invalid period {0:?}: give a number of days or weeks, like 90d or 12w")]
    Period(String),
    #[error("cannot read the history of {0}: no `git` command found on PATH")]
    NoGit(String),
    #[error("cannot read the history of {0}: not inside a git repository")]
    NotARepository(String),
    #[error("`git log` failed in {0}: {1}")]
    Git(String, String),
}

/// Parses a period: `90d`, `12w` or a plain number of days. At least one day, at most 100 years.
pub fn parse_period(s: &str) -> Result<u32, ChurnError> {
    let t = s.trim();
    let (num, per) = match t.as_bytes().last() {
        Some(b'd' | b'D') => (&t[..t.len() - 1], 1),
        Some(b'w' | b'W') => (&t[..t.len() - 1], 7),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u32>()
        .ok()
        .and_then(|n| n.checked_mul(per))
        .filter(|d| (1..=36_500).contains(d))
        .ok_or_else(|| ChurnError::Period(s.to_string()))
}

/// The commits of a period, each as the absolute paths of the files it changed.
#[derive(Debug, Default, Clone)]
pub struct History {
    pub commits: Vec<Vec<PathBuf>>,
    /// The period actually read, in days: the one asked for, or less when it reached before
    /// the first commit (clamped to the history, so per-week figures are not diluted).
    pub days: u32,
    /// What the user should know about the period: clamped, or holding no commit.
    pub notes: Vec<String>,
}

/// Reads the history of the git repositories holding `dirs` (each repository once) over the
/// last `days` days, as `git log --since=<that time> --name-only` lists it (merge commits list
/// no files, as there).
pub fn read_history(dirs: &[PathBuf], days: u32) -> Result<History, ChurnError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut since = now.saturating_sub(days as u64 * 86_400);
    let mut tops: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let top = toplevel(d)?;
        if !tops.contains(&top) {
            tops.push(top);
        }
    }
    let mut h = History {
        days,
        ..Default::default()
    };
    // The history's span: first (root) and newest commit times over every repository.
    let (mut oldest, mut newest) = (u64::MAX, 0u64);
    for top in &tops {
        for (args, pick_min) in [
            (&["log", "--max-parents=0", "--format=%ct"][..], true),
            (&["log", "-1", "--format=%ct"][..], false),
        ] {
            for t in commit_times(top, args)? {
                if pick_min {
                    oldest = oldest.min(t);
                } else {
                    newest = newest.max(t);
                }
            }
        }
    }
    // A period reaching before the first commit reads the whole history (git takes a small
    // `--since=@N` as "now", so the time is never passed then) over the history's own span.
    let whole = oldest != u64::MAX && since <= oldest;
    if whole {
        since = oldest;
        let span = now.saturating_sub(oldest).div_ceil(86_400).max(1);
        h.days = u32::try_from(span).unwrap_or(u32::MAX).min(days);
        if h.days < days {
            h.notes.push(format!(
                "the period ({days} days) reaches before the first commit ({}): counted over the \
                 history's {} days",
                date_of(oldest),
                h.days
            ));
        }
    }
    for top in &tops {
        let mut cmd = Command::new("git");
        cmd.arg("-C")
            .arg(top)
            .args(["log", "--no-color", "-z", "--name-only", "--format=%x01"]);
        if !whole {
            cmd.arg(format!("--since=@{since}"));
        }
        let out = cmd.output().map_err(|e| no_git(top, e))?;
        if !out.status.success() {
            return Err(ChurnError::Git(
                top.display().to_string(),
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        h.commits.extend(parse_log(&out.stdout, top));
    }
    if h.commits.is_empty() && newest > 0 {
        h.notes.push(format!(
            "no commit in the last {} days: the newest commit is from {} ({} days ago)",
            h.days,
            date_of(newest),
            now.saturating_sub(newest) / 86_400
        ));
    }
    Ok(h)
}

/// The commit times (`%ct` lines) `git log ARGS` prints; none for a repository without commits.
fn commit_times(top: &Path, args: &[&str]) -> Result<Vec<u64>, ChurnError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(args)
        .output()
        .map_err(|e| no_git(top, e))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect())
}

/// `YYYY-MM-DD` (UTC) of a Unix time (days-to-civil, proleptic Gregorian).
fn date_of(secs: u64) -> String {
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn no_git(dir: &Path, e: std::io::Error) -> ChurnError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ChurnError::NoGit(dir.display().to_string())
    } else {
        ChurnError::Git(dir.display().to_string(), e.to_string())
    }
}

/// The repository's top folder (`git rev-parse --show-toplevel`), as the real path git gives.
fn toplevel(dir: &Path) -> Result<PathBuf, ChurnError> {
    // A file root (one TU) is asked about through its folder.
    let d = if dir.is_file() {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    let out = Command::new("git")
        .arg("-C")
        .arg(d)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .map_err(|e| no_git(d, e))?;
    if !out.status.success() {
        return Err(ChurnError::NotARepository(d.display().to_string()));
    }
    let s = String::from_utf8_lossy(&out.stdout);
    Ok(PathBuf::from(s.trim_end_matches(['\n', '\r'])))
}

/// `git log -z --name-only --format=%x01` output: each commit starts with a `\x01` field, then
/// its paths, NUL-terminated (the first after a newline).
fn parse_log(bytes: &[u8], top: &Path) -> Vec<Vec<PathBuf>> {
    let mut commits: Vec<Vec<PathBuf>> = Vec::new();
    for field in bytes.split(|&b| b == 0) {
        if field == [1] {
            commits.push(Vec::new());
            continue;
        }
        let name = field.strip_prefix(b"\n").unwrap_or(field);
        if name.is_empty() {
            continue;
        }
        if let Some(c) = commits.last_mut() {
            c.push(top.join(bytes_path(name)));
        }
    }
    commits
}

#[cfg(unix)]
fn bytes_path(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn bytes_path(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

/// One file's rebuild cost.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ChurnFile {
    /// As the report shows it.
    pub path: String,
    #[serde(skip)]
    pub abs: PathBuf,
    pub tu: bool,
    /// Commits of the period that changed it.
    pub commits: u32,
    /// Translation units whose preprocessed closure reaches it (a TU counts itself).
    pub tus: u32,
    /// commits × tus.
    pub tu_rebuilds: u64,
    pub tu_rebuilds_per_week: f64,
}

/// The rebuild cost of a tree over a period.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Churn {
    pub days: u32,
    /// Commits of the period that changed at least one file of the report.
    pub commits: usize,
    /// Σ over those commits of the distinct TUs reaching a file they changed.
    pub tu_rebuilds: u64,
    pub tu_rebuilds_per_week: f64,
    /// Every file of the report changed in the period, by `tu_rebuilds` (most first), then path.
    pub files: Vec<ChurnFile>,
}

/// The rebuild cost of `pre`'s files (a preprocessed-mode report: its closures are the
/// compiler's) over `history`, which spans `days` days.
pub fn compute(pre: &Report, history: &History, days: u32) -> Churn {
    let g = &pre.graph;
    let n = g.nodes.len();
    let by_path = nodes_by_path(pre);
    // TUs reaching each node (a TU reaches itself).
    let mut reach: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (k, t) in g.tus.iter().enumerate() {
        for &f in &t.closure {
            reach[f as usize].push(k as u32);
        }
        if !t.closure.contains(&t.node) {
            reach[t.node as usize].push(k as u32);
        }
    }
    let mut commits_of = vec![0u32; n];
    let mut stamp = vec![u32::MAX; g.tus.len()];
    let (mut commits, mut tu_rebuilds) = (0usize, 0u64);
    for (c, files) in history.commits.iter().enumerate() {
        let mut hit = false;
        for p in files {
            let Some(&i) = by_path.get(&normalize(p)) else {
                continue;
            };
            hit = true;
            commits_of[i as usize] += 1;
            for &t in &reach[i as usize] {
                if stamp[t as usize] != c as u32 {
                    stamp[t as usize] = c as u32;
                    tu_rebuilds += 1;
                }
            }
        }
        commits += hit as usize;
    }
    let weeks = days as f64 / 7.0;
    let mut files: Vec<ChurnFile> = (0..n)
        .filter(|&i| commits_of[i] > 0)
        .map(|i| {
            let node = &g.nodes[i];
            let tus = reach[i].len() as u32;
            let r = commits_of[i] as u64 * tus as u64;
            ChurnFile {
                path: node.path.clone(),
                abs: node.abs.clone(),
                tu: node.is_tu,
                commits: commits_of[i],
                tus,
                tu_rebuilds: r,
                tu_rebuilds_per_week: r as f64 / weeks,
            }
        })
        .collect();
    files.sort_by(|a, b| {
        b.tu_rebuilds
            .cmp(&a.tu_rebuilds)
            .then_with(|| a.path.cmp(&b.path))
    });
    Churn {
        days,
        commits,
        tu_rebuilds,
        tu_rebuilds_per_week: tu_rebuilds as f64 / weeks,
        files,
    }
}

/// The report's files by path and by real path: git names files by the repository's real path,
/// the report by the path it was given (possibly through a symlinked folder).
fn nodes_by_path(r: &Report) -> super::util::FxMap<PathBuf, u32> {
    let mut by_path: super::util::FxMap<PathBuf, u32> = super::util::FxMap::default();
    let mut dir_real: super::util::FxMap<PathBuf, Option<PathBuf>> = super::util::FxMap::default();
    for (i, node) in r.graph.nodes.iter().enumerate() {
        by_path.insert(node.abs.clone(), i as u32);
        if let (Some(dir), Some(name)) = (node.abs.parent(), node.abs.file_name()) {
            let real = dir_real
                .entry(dir.to_path_buf())
                .or_insert_with(|| std::fs::canonicalize(dir).ok());
            if let Some(r) = real {
                by_path.entry(r.join(name)).or_insert(i as u32);
            }
        }
    }
    by_path
}

/// Per commit of `history`, the graph nodes of `r` it changed (files outside the report left
/// out; the PCH advisor weighs rebuilds with them).
pub(crate) fn commit_nodes(r: &Report, history: &History) -> Vec<Vec<u32>> {
    let by_path = nodes_by_path(r);
    history
        .commits
        .iter()
        .map(|files| {
            let mut v: Vec<u32> = files
                .iter()
                .filter_map(|p| by_path.get(&normalize(p)).copied())
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect()
}

impl Churn {
    /// Adds the churn figures to `r` (any mode; files are matched by absolute path): per file
    /// `churn_commits` and `churn_tu_rebuilds` (0 for files unchanged in the period), and the
    /// tree's figures.
    pub fn apply(&self, r: &mut Report) {
        let by_abs: super::util::FxMap<&Path, &ChurnFile> =
            self.files.iter().map(|f| (f.abs.as_path(), f)).collect();
        for h in &mut r.headers {
            let abs = &r.graph.nodes[h.node as usize].abs;
            let f = by_abs.get(abs.as_path());
            h.churn = Some(FileChurn {
                churn_commits: f.map_or(0, |f| f.commits),
                churn_tu_rebuilds: f.map_or(0, |f| f.tu_rebuilds),
            });
        }
        r.churn = Some(TreeChurn {
            churn_days: self.days,
            churn_commits: self.commits,
            churn_tu_rebuilds: self.tu_rebuilds,
            churn_tu_rebuilds_per_week: self.tu_rebuilds_per_week,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(951_782_400), "2000-02-29");
        assert_eq!(date_of(1_798_761_600), "2027-01-01");
    }

    #[test]
    fn periods() {
        assert_eq!(parse_period("90d"), Ok(90));
        assert_eq!(parse_period("12w"), Ok(84));
        assert_eq!(parse_period("30"), Ok(30));
        assert!(parse_period("0d").is_err());
        assert!(parse_period("d").is_err());
        assert!(parse_period("-3d").is_err());
        assert!(parse_period("5y").is_err());
        assert!(parse_period("99999999w").is_err());
    }

    #[test]
    fn log_output_is_split_per_commit() {
        let out = b"\x01\0\na.h\0q\"uo.h\0\x01\0\x01\0\na.h\0b c.h\0";
        let c = parse_log(out, Path::new("/r"));
        assert_eq!(
            c,
            vec![
                vec![PathBuf::from("/r/a.h"), PathBuf::from("/r/q\"uo.h")],
                vec![],
                vec![PathBuf::from("/r/a.h"), PathBuf::from("/r/b c.h")],
            ]
        );
    }
}
