//! Measured compile cost per header, and the whole build's frontend time predicted from a sample:
//! reads clang `-ftime-trace` JSON files (what ClangBuildAnalyzer reads) or runs clang itself
//! (`-fsyntax-only -ftime-trace`) on translation units chosen to cover the most-included headers;
//! derives from the nested `Source` events each header's exclusive frontend time (its own parse
//! and instantiation time, without the headers it includes) and each TU's time outside headers;
//! predicts every TU's frontend time as its own cost plus the costs of the headers in its exact
//! closure, and fills the report's `cost_ms`, `seconds_contributed`, `predicted_frontend_s`,
//! `measured_tus`, per-TU times and the cuts' `seconds_saved`. No CLI types.

use super::compiler::Lang;
use super::report::{Report, TuTime};
use super::scan::{Scanner, TuSpec};
use super::tracesum::{self, TraceSummary};
use super::util::{FxMap, FxSet, PathKey, absolutize, is_normal, normalize};
use super::{Project, cuts};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Largest trace file read (a TU of Boost's top-level headers with granularity 0 is ~60 MB).
pub(crate) const MAX_TRACE_BYTES: u64 = 1 << 30;

/// Why a file is not a clang time trace (the caller names the file).
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("not a time trace (invalid JSON: {0})")]
    InvalidJson(serde_json::Error),
    /// Valid JSON of another shape.
    #[error("not a time trace ({0})")]
    Shape(serde_json::Error),
    #[error("not a time trace (not a JSON object)")]
    NotAnObject,
    #[error("not a time trace (no traceEvents array)")]
    NoEvents,
    #[error("not a clang time trace (no Frontend event)")]
    NoFrontend,
}

/// Why measuring TUs or reading a build's traces failed, or one clang run gave no trace. The
/// texts are what the CLI prints after `--measure: ` / `--time-trace: `; a caller can tell a
/// missing compiler ([`TimingError::CompilerNotFound`]) from a bad trace folder.
#[derive(Debug, thiserror::Error)]
pub enum TimingError {
    /// The project's TUs could not be listed (a bad compilation database, …).
    #[error(transparent)]
    Scan(#[from] super::ScanError),
    #[error("no `{0}` command found on PATH")]
    CompilerNotFound(String),
    #[error("cannot run {compiler}: {source}")]
    Run {
        compiler: String,
        source: std::io::Error,
    },
    #[error("cannot wait for {compiler}: {source}")]
    Wait {
        compiler: String,
        source: std::io::Error,
    },
    /// A file or folder could not be created, listed, read or written (`what`: "create", …).
    #[error("{}: cannot {what}: {source}", path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("cannot make a temporary folder: {0}")]
    TempDir(std::io::Error),
    /// The trace folder given does not exist or cannot be read.
    #[error("{}: {source}", path.display())]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("{}: {source}", path.display())]
    Trace { path: PathBuf, source: TraceError },
    #[error("{compiler} wrote no time trace (exit {code}; {first_error})")]
    NoTrace {
        compiler: String,
        code: i32,
        first_error: String,
    },
    #[error("{}: no clang time trace matching a translation unit of the scan", .0.display())]
    NoMatchingTrace(PathBuf),
    /// Every chosen TU failed; the last note says why.
    #[error("no translation unit could be measured{}", .0.as_ref().map_or(String::new(), |n| format!(" ({n})")))]
    NothingMeasured(Option<String>),
}

fn io_err<'a>(
    path: &'a Path,
    what: &'static str,
) -> impl FnOnce(std::io::Error) -> TimingError + 'a {
    move |source| TimingError::Io {
        path: path.to_path_buf(),
        what,
        source,
    }
}

/// What one TU's trace says: its frontend time, its time outside every header, and per file
/// entered (by path as written in the trace, resolved) the exclusive time and the inclusions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TuTrace {
    pub frontend_us: u64,
    /// Frontend time outside the top-level `Source` events (its own lines, the instantiations
    /// pending at the end of the TU, the compiler's setup of the frontend).
    pub own_us: u64,
    /// (file, exclusive µs summed over its inclusions, inclusions).
    pub files: Vec<(PathBuf, u64, u32)>,
}

/// Parses one `-ftime-trace` JSON file. Relative `Source` paths are taken from `base` (the
/// folder clang ran in). Errors name what is wrong; the caller names the file. (What
/// [`load_dir`] does per trace without a summary beside it; public for the fuzz target.)
pub fn parse_trace(bytes: &[u8], base: &Path) -> Result<TuTrace, TraceError> {
    Ok(from_summary(
        summarize(bytes)?,
        base,
        &mut Normalised::default(),
    ))
}

/// A trace's summary file (`<trace>.sum`) as [`load_dir`] reads it, stamp not checked: None for
/// anything that is not one. Public for the fuzz target.
pub fn parse_summary(bytes: &[u8], base: &Path) -> Option<TuTrace> {
    let (_, s) = tracesum::parse(bytes)?;
    Some(from_summary(s, base, &mut Normalised::default()))
}

/// What the model reads from one trace ([`TraceSummary`]: paths as written, times unscaled).
pub(crate) fn summarize(bytes: &[u8]) -> Result<TraceSummary, TraceError> {
    // Typed, reading only the fields used: a granularity-0 trace of a libstdc++ TU is several MB,
    // and a generic JSON value tree of it costs several times the parse.
    let v: RawTrace = serde_json::from_slice(bytes).map_err(|e| {
        // A shape error may hide a syntax error further on: say which it is.
        match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Err(syntax) => TraceError::InvalidJson(syntax),
            Ok(_) => TraceError::Shape(e),
        }
    })?;
    let events = v.trace_events.ok_or(TraceError::NoEvents)?;
    let mut frontend: Option<(u64, u64)> = None;
    let mut sources: Vec<(u64, u64, std::borrow::Cow<'_, str>)> = Vec::new();
    for e in events {
        if e.ph.as_deref() != Some("X") {
            continue;
        }
        let (ts, dur) = (e.ts.max(0.0) as u64, e.dur.max(0.0) as u64);
        match e.name.as_deref() {
            Some("Frontend") => {
                let f = frontend.get_or_insert((ts, 0));
                f.1 = f.1.saturating_add(dur);
            }
            Some("Source") => {
                let d = e.args.and_then(|a| a.detail).unwrap_or_default();
                sources.push((ts, dur, d));
            }
            _ => {}
        }
    }
    let ratio = v.cpu_ratio.filter(|f| (MIN_CPU_RATIO..=1.0).contains(f));
    let Some((_, frontend_us)) = frontend else {
        return Err(TraceError::NoFrontend);
    };
    // Nesting: a Source event inside another is one of its includes (an event starts after its
    // parent and ends before it; ties in start time: the longer one is the parent).
    sources.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut stack: Vec<usize> = Vec::new();
    let mut child_us = vec![0u64; sources.len()];
    let mut top_us = 0u64;
    for (i, &(ts, dur, _)) in sources.iter().enumerate() {
        while let Some(&p) = stack.last() {
            if sources[p].0.saturating_add(sources[p].1) <= ts {
                stack.pop();
            } else {
                break;
            }
        }
        match stack.last() {
            Some(&p) => child_us[p] = child_us[p].saturating_add(dur),
            None => top_us = top_us.saturating_add(dur),
        }
        stack.push(i);
    }
    let mut by_detail: FxMap<&str, (u64, u32)> = FxMap::default();
    for (i, (_, dur, d)) in sources.iter().enumerate() {
        let e = by_detail.entry(d.as_ref()).or_default();
        e.0 = e.0.saturating_add(dur.saturating_sub(child_us[i]));
        e.1 = e.1.saturating_add(1);
    }
    let mut files: Vec<(String, u64, u32)> = by_detail
        .into_iter()
        .map(|(d, (t, n))| (d.to_string(), t, n))
        .collect();
    files.sort();
    Ok(TraceSummary {
        frontend_us,
        top_us,
        cpu_ratio_bits: ratio.map(f64::to_bits),
        files,
    })
}

/// The trace a summary stands for: paths resolved from `base` (several spellings of one file
/// summed), times scaled by the run's CPU / wall ratio. The same figures as parsing the trace.
pub(crate) fn from_summary(s: TraceSummary, base: &Path, memo: &mut Normalised) -> TuTrace {
    let TraceSummary {
        frontend_us,
        top_us,
        cpu_ratio_bits,
        files,
    } = s;
    // Clang writes most details absolute and normal: those are moved, not copied; the others
    // (`..` in a system include path, relative ones) are normalised, the absolute ones once per
    // `memo` (the same few hundred recur in every trace of a build). Then sorted by bytes and
    // merged where two details name one file — not hashed or ordered as `Path`s, whose `Hash`
    // and `Ord` walk components (most of the timing work's CPU on gRPC's 89 traces before).
    let mut files: Vec<(PathBuf, u64, u32)> = files
        .into_iter()
        .map(|(d, t, n)| {
            let p = if is_normal_absolute(d.as_bytes()) {
                PathBuf::from(d)
            } else if Path::new(&d).is_absolute() {
                memo.entry(d)
                    .or_insert_with_key(|d| normalize(Path::new(d)))
                    .clone()
            } else {
                normalize(&base.join(&d))
            };
            (p, t, n)
        })
        .collect();
    if !files.windows(2).all(|w| bytes(&w[0].0) < bytes(&w[1].0)) {
        files.sort_by(|a, b| bytes(&a.0).cmp(bytes(&b.0)));
        files.dedup_by(|later, kept| {
            let same = bytes(&later.0) == bytes(&kept.0);
            if same {
                kept.1 = kept.1.saturating_add(later.1);
                kept.2 = kept.2.saturating_add(later.2);
            }
            same
        });
    }
    let t = TuTrace {
        frontend_us,
        own_us: frontend_us.saturating_sub(top_us),
        files,
    };
    match cpu_ratio_bits.map(f64::from_bits) {
        Some(f) => t.scaled(f),
        None => t,
    }
}

/// Absolute trace paths as written → normalised, shared by the traces of one folder.
pub(crate) type Normalised = FxMap<String, PathBuf>;

fn bytes(p: &Path) -> &[u8] {
    p.as_os_str().as_encoded_bytes()
}

/// `/`-rooted and what [`normalize`] returns unchanged.
fn is_normal_absolute(b: &[u8]) -> bool {
    b.first() == Some(&b'/') && is_normal(b)
}

/// The parts of a `-ftime-trace` file the costs come from.
#[derive(serde::Deserialize)]
struct RawTrace<'a> {
    #[serde(rename = "traceEvents", borrow)]
    trace_events: Option<Vec<RawEvent<'a>>>,
    #[serde(rename = "clipforge_cpu_ratio")]
    cpu_ratio: Option<f64>,
}

#[derive(serde::Deserialize)]
struct RawEvent<'a> {
    #[serde(borrow)]
    ph: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    ts: f64,
    #[serde(default)]
    dur: f64,
    #[serde(borrow)]
    args: Option<RawArgs<'a>>,
}

#[derive(serde::Deserialize)]
struct RawArgs<'a> {
    #[serde(borrow)]
    detail: Option<std::borrow::Cow<'a, str>>,
}

/// Top-level key of a trace `--measure --keep-traces` kept: the run's CPU / wall ratio, which
/// [`parse_trace`] applies (other readers ignore the key).
pub(crate) const CPU_RATIO_KEY: &str = "clipforge_cpu_ratio";

/// Below this a CPU / wall ratio is taken as a measuring accident, not load.
const MIN_CPU_RATIO: f64 = 0.01;

/// The trace with [`CPU_RATIO_KEY`] set, spliced in as the top-level object's first key: a
/// trace at granularity 0 is ~20 MB for a gRPC TU, and a JSON value tree of it parsed and
/// written again cost more CPU than clang's own tracing. `bytes` was parsed as a trace already
/// (an object; clang never writes the key, so it is not duplicated).
fn with_cpu_ratio(bytes: &[u8], f: f64) -> Result<Vec<u8>, TraceError> {
    let open = bytes
        .iter()
        .position(|&b| !b.is_ascii_whitespace())
        .filter(|&i| bytes[i] == b'{')
        .ok_or(TraceError::NotAnObject)?;
    let rest = &bytes[open + 1..];
    let empty = rest
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'}');
    let key = format!(
        "\"{CPU_RATIO_KEY}\":{}{}",
        serde_json::json!(f),
        if empty { "" } else { "," }
    );
    let mut out = Vec::with_capacity(bytes.len() + key.len());
    out.extend_from_slice(&bytes[..=open]);
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(rest);
    Ok(out)
}

/// A report's graph nodes by path: the normalised absolute path, and on a miss the real path (a
/// trace may spell a file through a symlink or another relative route). Built once per report
/// and shared by [`load_dir`] and [`Timing::from_traces`]: the real-path index costs a `lstat`
/// per node.
pub struct NodeIndex {
    by_abs: FxMap<PathKey, u32>,
    by_real: std::sync::OnceLock<FxMap<PathKey, u32>>,
    /// Paths not in `by_abs`, as resolved: the same few (a compiler's own headers) miss in
    /// every trace, and each resolution is a `readlink` per component.
    misses: std::sync::Mutex<FxMap<PathKey, Option<u32>>>,
}

impl NodeIndex {
    pub fn new(r: &Report) -> NodeIndex {
        NodeIndex {
            by_abs: r
                .graph
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (PathKey(normalize(&n.abs)), i as u32))
                .collect(),
            by_real: std::sync::OnceLock::new(),
            misses: Default::default(),
        }
    }

    /// The node of `p` (normalised, as [`from_summary`] leaves trace paths), by its path or,
    /// failing that, by its real path.
    fn get(&self, p: &Path) -> Option<u32> {
        if let Some(&n) = self.by_abs.get(bytes(p)) {
            return Some(n);
        }
        let mut misses = self.misses.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&n) = misses.get(bytes(p)) {
            return n;
        }
        let n = self.by_real_path(p);
        misses.insert(PathKey(p.to_path_buf()), n);
        n
    }

    /// The node whose real path is `p`'s (the index of real paths built on the first call).
    fn by_real_path(&self, p: &Path) -> Option<u32> {
        let real = self.by_real.get_or_init(|| {
            // Each folder canonicalised once, not each file's whole path: realpath walks every
            // component (on gRPC's graph that was ~65,000 `readlink` calls, most of the timing
            // work's cost). A file that is itself a symlink still gets its full resolution.
            let mut dirs: FxMap<&Path, Option<PathBuf>> = FxMap::default();
            self.by_abs
                .iter()
                .filter_map(|(p, &n)| real_path(&p.0, &mut dirs).map(|r| (PathKey(r), n)))
                .collect()
        });
        std::fs::canonicalize(p)
            .ok()
            .and_then(|r| real.get(bytes(&r)).copied())
    }
}

/// `std::fs::canonicalize(p)`, with the canonical form of `p`'s folder looked up in (or added
/// to) `dirs`: equal to canonicalising `p` when `p`'s last component is not a symlink (checked
/// with one `lstat`; a symlink is resolved in full).
fn real_path<'a>(p: &'a Path, dirs: &mut FxMap<&'a Path, Option<PathBuf>>) -> Option<PathBuf> {
    let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
        return std::fs::canonicalize(p).ok();
    };
    let md = std::fs::symlink_metadata(p).ok()?;
    if md.file_type().is_symlink() {
        return std::fs::canonicalize(p).ok();
    }
    let real_dir = dirs
        .entry(dir)
        .or_insert_with(|| std::fs::canonicalize(dir).ok())
        .as_ref()?;
    Some(real_dir.join(name))
}

/// Translation units (indices into the report's `graph.tus`) chosen to cover the most-included
/// headers: greedily, the TU whose closure adds the most TU-weighted headers not yet covered
/// (a header's weight is the number of TUs reaching it), `n` times.
pub fn choose_tus(r: &Report, n: usize) -> Vec<usize> {
    let g = &r.graph;
    let mut reach = vec![0u64; g.nodes.len()];
    for t in &g.tus {
        for &f in &t.closure {
            reach[f as usize] += 1;
        }
    }
    let mut covered = vec![false; g.nodes.len()];
    let mut taken = vec![false; g.tus.len()];
    let mut out = Vec::new();
    while out.len() < n.min(g.tus.len()) {
        let mut best: Option<(u64, usize)> = None;
        for (i, t) in g.tus.iter().enumerate() {
            if taken[i] {
                continue;
            }
            let gain: u64 = t
                .closure
                .iter()
                .filter(|&&f| !covered[f as usize] && f != t.node)
                .map(|&f| reach[f as usize])
                .sum();
            // Ties (nothing left to cover): spread over the tree in report order.
            if best.is_none_or(|b| gain > b.0) {
                best = Some((gain, i));
            }
        }
        let Some((_, i)) = best else { break };
        taken[i] = true;
        for &f in &g.tus[i].closure {
            covered[f as usize] = true;
        }
        out.push(i);
    }
    out
}

/// The compiler a measurement runs (`clang++` for C++ TUs, `clang` for C, unless named).
#[derive(Clone, Debug, Default)]
pub struct MeasureOptions {
    /// Compiler for every TU (a clang driver); `None`: `clang++` / `clang` by language.
    pub compiler: Option<String>,
    /// Parallel compiler processes (0: the machine's cores).
    pub jobs: usize,
    /// Keep each trace in this folder (`<k>-<file name>.json`), for `--time-trace` later
    /// (as clang wrote it: wall times).
    pub keep_traces: Option<PathBuf>,
    /// Keep clang's wall times instead of scaling them by each run's CPU / wall ratio.
    pub wall_time: bool,
    /// Set to stop: no further TU is started (those running finish).
    pub cancel: Option<clipforge_base::task::CancelToken>,
}

/// Runs clang on the TUs `chosen` (indices into `r.graph.tus`) with the flags the scan used,
/// in parallel, and returns each one's trace; `done` is bumped per TU finished. A TU clang
/// cannot compile still gives its trace (its time is real) and a note; one without a trace is
/// left out with a note.
pub fn measure(
    project: &Project,
    r: &Report,
    chosen: &[usize],
    opts: &MeasureOptions,
    done: &AtomicUsize,
    notes: &mut Vec<String>,
) -> Result<Vec<(usize, TuTrace)>, TimingError> {
    let specs = Scanner::tu_specs(project)?;
    let spec_of: FxMap<(PathBuf, u32), &TuSpec> = specs
        .iter()
        .map(|s| ((absolutize(&s.file), s.config), s))
        .collect();
    let work: Vec<(usize, &TuSpec)> = chosen
        .iter()
        .filter_map(|&i| {
            let t = &r.graph.tus[i];
            let abs = normalize(&r.graph.nodes[t.node as usize].abs);
            spec_of.get(&(abs, t.config)).map(|s| (i, *s))
        })
        .collect();
    if let Some(k) = &opts.keep_traces {
        std::fs::create_dir_all(k).map_err(io_err(k, "create"))?;
    }
    let jobs = if opts.jobs == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        opts.jobs
    };
    let next = AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<(usize, RunResult)>> = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..jobs.min(work.len()) {
            sc.spawn(|| {
                loop {
                    if opts.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(i, spec)) = work.get(k) else { break };
                    let res = run_one(spec, k, opts);
                    results
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((i, res));
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let mut out = Vec::new();
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|x| x.0);
    for (i, res) in results {
        let path = &r.graph.nodes[r.graph.tus[i].node as usize].path;
        match res {
            Ok((t, warn)) => {
                if let Some(w) = warn {
                    notes.push(format!("measuring {path}: {w}"));
                }
                out.push((i, t));
            }
            Err(e) => notes.push(format!("measuring {path}: {e} (left out)")),
        }
    }
    if out.is_empty() && !chosen.is_empty() {
        return Err(TimingError::NothingMeasured(notes.last().cloned()));
    }
    Ok(out)
}

/// A TU's trace and a warning (clang reported errors), or why there is no trace.
type RunResult = Result<(TuTrace, Option<String>), TimingError>;

/// The command that compiles `spec` with the flags the scan used (its file not yet added):
/// `--measure` adds the trace flags, the PCH advisor `-include-pch` (module `pch`).
pub(crate) fn compile_command(spec: &TuSpec, compiler: &str) -> std::process::Command {
    let f = &spec.flags;
    let mut cmd = std::process::Command::new(compiler);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    if let Some(s) = &f.std {
        cmd.arg(format!("-std={s}"));
    }
    for d in &f.quote_dirs {
        cmd.arg("-iquote").arg(d);
    }
    for d in &f.include_dirs {
        cmd.arg("-I").arg(d);
    }
    for d in &f.system_dirs {
        cmd.arg("-isystem").arg(d);
    }
    for d in &f.after_dirs {
        cmd.arg("-idirafter").arg(d);
    }
    for m in &f.macros {
        match m {
            super::MacroOpt::Define(n, None) => cmd.arg(format!("-D{n}")),
            super::MacroOpt::Define(n, Some(v)) => cmd.arg(format!("-D{n}={v}")),
            super::MacroOpt::Undef(n) => cmd.arg(format!("-U{n}")),
        };
    }
    for i in &f.forced_includes {
        cmd.arg("-include").arg(i);
    }
    cmd
}

/// The clang driver for a TU's language, unless one is named.
pub(crate) fn driver_for(spec: &TuSpec, named: Option<&str>) -> String {
    named.map(str::to_string).unwrap_or_else(|| {
        match spec.lang {
            Lang::Cxx => "clang++",
            Lang::C => "clang",
        }
        .to_string()
    })
}

/// How one compiler run went: success, its CPU time (user + system, of the process and its
/// children, from `wait4`), its wall time and the first line of its error output.
#[derive(Clone, Debug)]
pub(crate) struct Ran {
    pub ok: bool,
    pub code: i32,
    pub cpu_s: f64,
    pub wall_s: f64,
    pub first_error: String,
}

/// Runs `cmd` (stderr into `err_file`, which a full pipe could not block) and measures its CPU
/// time: on a machine shared with other work the wall time grows with the load, the CPU time
/// does not.
pub(crate) fn run_cpu(
    cmd: &mut std::process::Command,
    compiler: &str,
    err_file: &Path,
) -> Result<Ran, TimingError> {
    let err = std::fs::File::create(err_file).map_err(io_err(err_file, "create"))?;
    cmd.stderr(err);
    let started = std::time::Instant::now();
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => TimingError::CompilerNotFound(compiler.to_string()),
        _ => TimingError::Run {
            compiler: compiler.to_string(),
            source: e,
        },
    })?;
    let (status, cpu_s) = wait_cpu(&mut child).map_err(|source| TimingError::Wait {
        compiler: compiler.to_string(),
        source,
    })?;
    let wall_s = started.elapsed().as_secs_f64();
    let text = std::fs::read(err_file).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let first_error = text
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| text.lines().next())
        .unwrap_or("no message")
        .to_string();
    Ok(Ran {
        ok: status.success(),
        code: status.code().unwrap_or(-1),
        cpu_s,
        wall_s,
        first_error,
    })
}

#[cfg(unix)]
fn wait_cpu(child: &mut std::process::Child) -> std::io::Result<(std::process::ExitStatus, f64)> {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child, writing into the two locals above.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((
        std::process::ExitStatus::from_raw(status),
        tv(ru.ru_utime) + tv(ru.ru_stime),
    ))
}

#[cfg(not(unix))]
fn wait_cpu(child: &mut std::process::Child) -> std::io::Result<(std::process::ExitStatus, f64)> {
    // No per-child CPU time here: the wall time stands in for it.
    let started = std::time::Instant::now();
    let s = child.wait()?;
    Ok((s, started.elapsed().as_secs_f64()))
}

impl TuTrace {
    /// Every time multiplied by `f` (the run's CPU / wall ratio: clang's trace times are wall
    /// times, which a loaded machine stretches).
    pub fn scaled(mut self, f: f64) -> TuTrace {
        let s = |us: u64| (us as f64 * f).round() as u64;
        self.frontend_us = s(self.frontend_us);
        self.own_us = s(self.own_us);
        for x in &mut self.files {
            x.1 = s(x.1);
        }
        self
    }
}

/// One clang run in a folder of its own: clang 14 writes a `-fsyntax-only` trace as `.json` in
/// its working directory (later versions `<stem>.json`), so any `*.json` there is the trace.
/// The trace's wall times are scaled by the run's CPU / wall ratio, so that load from other
/// processes does not count as compile time.
fn run_one(spec: &TuSpec, k: usize, opts: &MeasureOptions) -> RunResult {
    let dir = tempfile::tempdir().map_err(TimingError::TempDir)?;
    let compiler = driver_for(spec, opts.compiler.as_deref());
    let mut cmd = compile_command(spec, &compiler);
    cmd.current_dir(dir.path())
        .args([
            "-fsyntax-only",
            "-ftime-trace",
            "-ftime-trace-granularity=0",
            "-w",
        ])
        .arg(absolutize(&spec.file));
    let ran = run_cpu(&mut cmd, &compiler, &dir.path().join("stderr.txt"))?;
    let trace = std::fs::read_dir(dir.path())
        .map_err(io_err(dir.path(), "list"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            // `.json` (clang 14) has no extension in `Path`'s terms: match the name.
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(".json"))
        })
        .ok_or_else(|| TimingError::NoTrace {
            compiler: compiler.clone(),
            code: ran.code,
            first_error: ran.first_error.clone(),
        })?;
    let bytes = clipforge_base::fsio::read_regular(&trace, MAX_TRACE_BYTES)
        .map_err(io_err(&trace, "read"))?;
    let ratio = (!opts.wall_time && ran.wall_s > 0.0)
        .then(|| (ran.cpu_s / ran.wall_s).clamp(MIN_CPU_RATIO, 1.0));
    let sum = summarize(&bytes).map_err(|source| TimingError::Trace {
        path: trace.clone(),
        source,
    })?;
    let t = from_summary(sum.clone(), dir.path(), &mut Normalised::default());
    if let Some(keep) = &opts.keep_traces {
        let name = spec
            .file
            .file_name()
            .map_or("tu".into(), |n| n.to_string_lossy().to_string());
        keep_trace(
            &keep.join(format!("{k}-{name}.json")),
            &trace,
            bytes,
            sum,
            ratio,
        )?;
    }
    let t = match ratio {
        Some(f) => t.scaled(f),
        None => t,
    };
    let warn = (!ran.ok).then(|| {
        format!(
            "{compiler} reported errors (its time is kept): {}",
            ran.first_error
        )
    });
    Ok((t, warn))
}

/// Writes a measured trace (`trace`, read as `bytes`) to `to` with the run's CPU / wall ratio in
/// it (so that `--time-trace` reads the same costs), and its summary beside it (the ratio as a
/// reader of the trace takes it), both atomically. `sum` is the trace's summary, no ratio.
fn keep_trace(
    to: &Path,
    trace: &Path,
    bytes: Vec<u8>,
    mut sum: TraceSummary,
    ratio: Option<f64>,
) -> Result<(), TimingError> {
    let bytes = match ratio {
        Some(f) => with_cpu_ratio(&bytes, f).map_err(|source| TimingError::Trace {
            path: trace.to_path_buf(),
            source,
        })?,
        None => bytes,
    };
    // The ratio as its JSON text reads back (the text is what a reader of the trace parses).
    sum.cpu_ratio_bits = ratio
        .and_then(|f| serde_json::from_str::<f64>(&serde_json::json!(f).to_string()).ok())
        .filter(|f| (MIN_CPU_RATIO..=1.0).contains(f))
        .map(f64::to_bits);
    clipforge_base::fsio::write_atomic(to, &bytes).map_err(io_err(to, "write"))?;
    let md = std::fs::metadata(to).map_err(io_err(to, "read"))?;
    let sp = tracesum::path_for(to);
    tracesum::write(to, &md, &sum).map_err(io_err(&sp, "write"))
}

/// Reads every `*.json` trace under `dir` and matches each to a TU of the report: by file name
/// (`a.cpp.json`, `a.json`, `<k>-a.cpp.json` as `--keep-traces` writes them), several candidates
/// told apart by how many of the trace's files their closure holds. Unmatched traces are noted.
pub fn load_dir(
    dir: &Path,
    r: &Report,
    idx: &NodeIndex,
    notes: &mut Vec<String>,
) -> Result<Vec<(usize, TuTrace)>, TimingError> {
    let md = std::fs::metadata(dir).map_err(|source| TimingError::Folder {
        path: dir.to_path_buf(),
        source,
    })?;
    if !md.is_dir() {
        return Err(TimingError::NotAFolder(dir.to_path_buf()));
    }
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    let g = &r.graph;
    let mut by_name: FxMap<String, Vec<usize>> = FxMap::default();
    for (i, t) in g.tus.iter().enumerate() {
        let abs = &g.nodes[t.node as usize].abs;
        if let Some(n) = abs.file_name() {
            by_name
                .entry(n.to_string_lossy().to_string())
                .or_default()
                .push(i);
        }
        if let Some(s) = abs.file_stem() {
            by_name
                .entry(s.to_string_lossy().to_string())
                .or_default()
                .push(i);
        }
    }
    let mut used: FxSet<usize> = FxSet::default();
    let mut out = Vec::new();
    let mut memo = Normalised::default();
    for f in files {
        let stem = f
            .file_stem()
            .map_or(String::new(), |s| s.to_string_lossy().to_string());
        let base = f.parent().unwrap_or(dir);
        let t = match read_trace(&f) {
            Ok(s) => from_summary(s, base, &mut memo),
            Err(TimingError::Trace { path, source }) => {
                notes.push(format!("{}: {source} (skipped)", path.display()));
                continue;
            }
            Err(e) => return Err(e),
        };
        // `a.cpp`, then without a `<k>-` prefix.
        let cands = by_name.get(&stem).or_else(|| {
            stem.split_once('-')
                .filter(|(k, _)| k.chars().all(|c| c.is_ascii_digit()))
                .and_then(|(_, rest)| by_name.get(rest))
        });
        let Some(cands) = cands else {
            notes.push(format!(
                "{}: no translation unit of the scan is named {stem} (skipped)",
                f.display()
            ));
            continue;
        };
        let nodes: FxSet<u32> = t.files.iter().filter_map(|x| idx.get(&x.0)).collect();
        let best = cands
            .iter()
            .filter(|i| !used.contains(i))
            .max_by_key(|&&i| {
                let hits = g.tus[i]
                    .closure
                    .iter()
                    .filter(|n| nodes.contains(n))
                    .count();
                (hits, std::cmp::Reverse(i))
            })
            .copied();
        match best {
            Some(i) => {
                used.insert(i);
                out.push((i, t));
            }
            None => notes.push(format!(
                "{}: its translation unit already has a trace (skipped)",
                f.display()
            )),
        }
    }
    if out.is_empty() {
        return Err(TimingError::NoMatchingTrace(dir.to_path_buf()));
    }
    Ok(out)
}

/// One trace's summary: the one beside it if it matches the trace as it is now, else the
/// trace parsed (and its summary written beside it when the folder takes it; a folder that
/// does not is no error).
fn read_trace(f: &Path) -> Result<TraceSummary, TimingError> {
    let md = std::fs::metadata(f).map_err(io_err(f, "read"))?;
    if let Some(s) = tracesum::read(f, &md) {
        return Ok(s);
    }
    let bytes =
        clipforge_base::fsio::read_regular(f, MAX_TRACE_BYTES).map_err(io_err(f, "read"))?;
    let s = summarize(&bytes).map_err(|source| TimingError::Trace {
        path: f.to_path_buf(),
        source,
    })?;
    let _ = tracesum::write(f, &md, &s);
    Ok(s)
}

/// Costs from measured traces, and every TU's predicted frontend time.
#[derive(Clone, Debug, Default)]
pub struct Timing {
    /// Per graph node: exclusive ms per TU that includes it (measured, or estimated from the
    /// measured headers' ms per line when no measured TU includes it).
    pub cost_ms: Vec<f64>,
    pub cost_measured: Vec<bool>,
    /// Per TU (`graph.tus`): predicted and, where measured, measured frontend ms.
    pub predicted_ms: Vec<f64>,
    pub measured_ms: Vec<Option<f64>>,
    /// Files of the traces that are in no closure of the scan (other compilers' headers, files
    /// the scan missed): counted in their TU's own time, listed in a note.
    pub unmatched_files: usize,
}

impl Timing {
    /// The model: a header costs the mean of its exclusive time over the measured TUs that
    /// include it; a header no measured TU includes costs the measured headers' ms per line
    /// times its lines; a TU's own time (outside headers) is measured, or for the others
    /// modelled per language from its lines and its headers' time (see [`OwnTime`]).
    /// Predicted = own + Σ costs of its closure, each cost taken at the size of the TU predicted
    /// (see [`TuSize`]).
    pub fn from_traces(r: &Report, idx: &NodeIndex, traces: &[(usize, TuTrace)]) -> Timing {
        let g = &r.graph;
        let mut measured_ms = vec![None; g.tus.len()];
        let mut own_ms = vec![None; g.tus.len()];
        let mut unmatched: FxSet<PathBuf> = FxSet::default();
        // Per trace: (graph node, exclusive µs) of the headers of its TU's closure.
        let mut matched: Vec<Vec<(u32, u64)>> = Vec::with_capacity(traces.len());
        for (i, t) in traces {
            let tu = &g.tus[*i];
            let closure: FxSet<u32> = tu.closure.iter().copied().collect();
            let mut extra_us: u64 = 0;
            let mut m = Vec::new();
            for (p, us, _) in &t.files {
                match idx.get(p).filter(|n| closure.contains(n) && *n != tu.node) {
                    Some(node) => m.push((node, *us)),
                    None => {
                        extra_us = extra_us.saturating_add(*us);
                        unmatched.insert(p.clone());
                    }
                }
            }
            matched.push(m);
            measured_ms[*i] = Some(t.frontend_us as f64 / 1000.0);
            own_ms[*i] = Some(t.own_us.saturating_add(extra_us) as f64 / 1000.0);
        }
        let size = TuSize::fit(r, traces, &matched);
        // As measured (what the report shows per header), and brought to a TU of the mean size
        // (what the prediction scales to each TU).
        let (cost_ms, cost_measured) = header_costs(r, traces, &matched, &|_| 1.0);
        let (at_mean_ms, _) = header_costs(r, traces, &matched, &|i| 1.0 / size.factor(i));
        let own = OwnTime::fit(r, traces, &matched, &own_ms);
        let predicted_ms = g
            .tus
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let headers = size.factor(i)
                    * t.closure
                        .iter()
                        .filter(|&&f| f != t.node)
                        .map(|&f| at_mean_ms[f as usize])
                        .sum::<f64>();
                own_ms[i].unwrap_or_else(|| own.predict(r, i, headers)) + headers
            })
            .collect();
        Timing {
            cost_ms,
            cost_measured,
            predicted_ms,
            measured_ms,
            unmatched_files: unmatched.len(),
        }
    }

    /// Fills the report: per header `cost_ms` and `seconds_contributed` (TUs reaching it × its
    /// cost), per TU predicted / measured ms, the build's predicted total and the number of
    /// TUs measured, and each cut's `seconds_saved` (the same dominator analysis as the lines,
    /// weighted by cost; system headers count: their time is real).
    pub fn apply(&self, r: &mut Report) {
        let g = &r.graph;
        for h in r.headers.iter_mut() {
            let n = h.node as usize;
            if h.tu {
                continue;
            }
            h.cost_ms = Some(round3(self.cost_ms[n]));
            h.cost_measured = Some(self.cost_measured[n]);
            h.seconds_contributed = Some(round6(self.cost_ms[n] * h.tu_count as f64 / 1000.0));
        }
        let tus: Vec<TuTime> = g
            .tus
            .iter()
            .enumerate()
            .map(|(i, t)| TuTime {
                path: g.nodes[t.node as usize].path.clone(),
                config: r.configs.get(t.config as usize).map(|c| c.name.clone()),
                predicted_ms: round3(self.predicted_ms[i]),
                measured_ms: self.measured_ms[i].map(round3),
            })
            .collect();
        r.measured_tus = Some(self.measured_ms.iter().filter(|m| m.is_some()).count());
        r.predicted_frontend_s = Some(round6(self.predicted_ms.iter().sum::<f64>() / 1000.0));
        r.tu_times = Some(tus);
        if r.cuts.is_some() {
            let weight: Vec<u64> = g
                .nodes
                .iter()
                .zip(&self.cost_ms)
                .map(|(x, &c)| {
                    if x.is_tu {
                        0
                    } else {
                        (c * 1000.0).round() as u64
                    }
                })
                .collect();
            let by_us =
                cuts::estimate_weighted(r, &FxSet::default(), &cuts::MacroUse::default(), &weight);
            let key = |c: &cuts::Cut| (c.kind, c.from, c.line, c.to);
            let saved: FxMap<_, i64> = by_us.iter().map(|c| (key(c), c.lines_saved)).collect();
            if let Some(cs) = r.cuts.as_mut() {
                for c in cs.iter_mut() {
                    let us = saved.get(&key(c)).copied().unwrap_or(0);
                    c.seconds_saved = Some(round6(us as f64 / 1e6));
                }
            }
        }
    }
}

/// Each header's cost: the mean over the measured TUs that include it of its exclusive time
/// there × `scale(TU)` (µs summed exactly: integers in an f64), and whether it was measured; a
/// header no measured TU includes costs the measured headers' ms per line times its lines.
/// `matched`: per trace, (graph node, exclusive µs) of its TU's headers.
fn header_costs(
    r: &Report,
    traces: &[(usize, TuTrace)],
    matched: &[Vec<(u32, u64)>],
    scale: &dyn Fn(usize) -> f64,
) -> (Vec<f64>, Vec<bool>) {
    let g = &r.graph;
    let n = g.nodes.len();
    let mut sum_us = vec![0f64; n];
    let mut seen_in = vec![0u32; n];
    for ((i, _), m) in traces.iter().zip(matched) {
        let s = scale(*i);
        for &(node, us) in m {
            sum_us[node as usize] += us as f64 * s;
            seen_in[node as usize] += 1;
        }
    }
    let cost_measured: Vec<bool> = seen_in.iter().map(|&k| k > 0).collect();
    let mut cost_ms: Vec<f64> = sum_us
        .iter()
        .zip(&seen_in)
        .map(|(&us, &k)| if k > 0 { us / 1000.0 / k as f64 } else { 0.0 })
        .collect();
    let (ms, lines) = g
        .nodes
        .iter()
        .zip(&cost_ms)
        .zip(&cost_measured)
        .filter(|(_, m)| **m)
        .fold((0.0, 0u64), |(ms, l), ((node, c), _)| {
            (ms + c, l + node.lines as u64)
        });
    let per_line = if lines > 0 { ms / lines as f64 } else { 0.0 };
    for ((c, node), m) in cost_ms.iter_mut().zip(&g.nodes).zip(&cost_measured) {
        if !m && !node.is_tu {
            *c = per_line * node.lines as f64;
        }
    }
    (cost_ms, cost_measured)
}

/// A TU's own time, outside every header: what clang does for the TU's own lines, and the
/// template instantiations it performs at the end of the TU (`PerformPendingInstantiations`:
/// 0.9 of the 1.3 s outside headers in gRPC's `xds_override_host.cc`). The second grows with the
/// templates the TU's headers bring, not with its lines, and a C TU has none: on gRPC core's
/// sample of 89 traces own time fitted to headers' time gave R² 0.75 for the `.cc` TUs, to own
/// lines 0.23, and the `.c` TUs spend ~1 ms outside their headers against 100–1,600 ms for
/// `.cc`. The former model (a + b × own lines over all measured TUs) charged its constant
/// (330 ms there) to every unmeasured TU, C files and TUs compiled out by `#ifdef` included:
/// total +30 %, median TU +400 %. The share of own time also grows with the headers' time
/// (0.2 of it at 500 ms, 0.4–0.6 at 2–3 s: more templates, and more code using them), and the
/// sample holds the largest TUs, so a straight proportion over-predicts the smaller ones.
///
/// The model, per language (C, C++; a language no measured TU has takes all of them):
/// own = rate × own lines + c × H^γ, H = the TU's headers' time, rate = the measured headers'
/// ms per closure line in that language (a TU's lines parse like its headers' lines); γ is the
/// slope of ln(own − rate × lines) on ln H (clamped 0–2; 1 with fewer than two points), c the
/// ratio of sums Σ (own − rate × lines) / Σ H^γ (so that the sample's total is kept).
struct OwnTime {
    /// Per [`Lang`] (C, C++): (ms per own line, c, γ).
    by_lang: [(f64, f64, f64); 2],
}

impl OwnTime {
    fn fit(
        r: &Report,
        traces: &[(usize, TuTrace)],
        matched: &[Vec<(u32, u64)>],
        own_ms: &[Option<f64>],
    ) -> OwnTime {
        let g = &r.graph;
        // Per measured TU: (language, own lines, closure lines outside it, headers' ms, own ms).
        let pts: Vec<(Lang, f64, f64, f64, f64)> = traces
            .iter()
            .zip(matched)
            .filter_map(|((i, _), m)| {
                let t = &g.tus[*i];
                let closure: u64 = t
                    .closure
                    .iter()
                    .filter(|&&f| f != t.node)
                    .map(|&f| g.nodes[f as usize].lines as u64)
                    .sum();
                let headers_ms = m.iter().map(|x| x.1).sum::<u64>() as f64 / 1000.0;
                Some((
                    tu_lang(r, *i),
                    g.nodes[t.node as usize].lines as f64,
                    closure as f64,
                    headers_ms,
                    own_ms[*i]?,
                ))
            })
            .collect();
        let fit_of = |pts: &[&(Lang, f64, f64, f64, f64)]| {
            let (hms, lines) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.3, a.1 + p.2));
            let rate = if lines > 0.0 { hms / lines } else { 0.0 };
            // (H, own beyond its lines' parse).
            let rest: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.3, (p.4 - rate * p.1).max(0.0)))
                .collect();
            let logs: Vec<(f64, f64)> = rest
                .iter()
                .filter(|x| x.0 > 0.0 && x.1 > 0.0)
                .map(|x| (x.0.ln(), x.1.ln()))
                .collect();
            let gamma = if logs.len() >= 2 {
                fit_signed(&logs).1.clamp(0.0, 2.0)
            } else {
                1.0
            };
            let den: f64 = rest.iter().map(|x| x.0.powf(gamma)).sum();
            let c = if den > 0.0 {
                rest.iter().map(|x| x.1).sum::<f64>() / den
            } else {
                0.0
            };
            (rate, c, gamma)
        };
        let all: Vec<_> = pts.iter().collect();
        let by_lang = [Lang::C, Lang::Cxx].map(|l| {
            let mine: Vec<_> = pts.iter().filter(|p| p.0 == l).collect();
            fit_of(if mine.is_empty() { &all } else { &mine })
        });
        OwnTime { by_lang }
    }

    /// Own ms of TU `tu` (`graph.tus`), whose headers are predicted to take `headers_ms`.
    fn predict(&self, r: &Report, tu: usize, headers_ms: f64) -> f64 {
        let (rate, c, gamma) = self.by_lang[tu_lang(r, tu) as usize];
        let lines = r.graph.nodes[r.graph.tus[tu].node as usize].lines as f64;
        let h = if headers_ms > 0.0 {
            c * headers_ms.powf(gamma)
        } else {
            0.0
        };
        rate * lines + h
    }
}

/// The language TU `tu` (`graph.tus`) is compiled as.
fn tu_lang(r: &Report, tu: usize) -> Lang {
    Lang::of_path(&r.graph.nodes[r.graph.tus[tu].node as usize].abs)
}

/// How a header's exclusive time grows with the TU it is parsed in: clang's lookups, overload
/// sets and instantiations work over everything declared before, so the same header costs more
/// in a TU with a larger closure. On a tree of 30 libstdc++ TUs (`scripts/headers_predict.sh`,
/// every TU measured) header time per closure line grew as closure lines^0.14…0.24, and the TUs
/// `--measure` chooses have the largest closures (they cover the most-included headers): their
/// costs applied unscaled to the smaller TUs predicted the total +2…+10 % too high. (Checked
/// first, and not the cause: a template instantiation shared by several headers charged to
/// whichever comes first. Of 1.5 s of instantiations in those traces, 5 ms ever moved to
/// another header from one TU to the next.)
///
/// The model: header time ∝ L^α, L = the TU's closure lines; α is fitted on the measured TUs
/// (least squares of ln(header time / L) on ln L; 0 with fewer than two sizes, at most 1), and
/// a header's cost is kept for a TU of the tree's mean L.
struct TuSize {
    /// Per TU (`graph.tus`): (its closure lines / the mean)^α.
    factors: Vec<f64>,
}

impl TuSize {
    fn fit(r: &Report, traces: &[(usize, TuTrace)], matched: &[Vec<(u32, u64)>]) -> TuSize {
        let g = &r.graph;
        let lines: Vec<f64> = g
            .tus
            .iter()
            .map(|t| {
                let l: u64 = t
                    .closure
                    .iter()
                    .map(|&f| g.nodes[f as usize].lines as u64)
                    .sum();
                l.max(1) as f64
            })
            .collect();
        let mean = lines.iter().sum::<f64>() / lines.len().max(1) as f64;
        let pts: Vec<(f64, f64)> = traces
            .iter()
            .zip(matched)
            .filter_map(|((i, _), m)| {
                let us: u64 = m.iter().map(|x| x.1).sum();
                (us > 0).then(|| (lines[*i].ln(), (us as f64 / lines[*i]).ln()))
            })
            .collect();
        let alpha = fit(&pts).1.min(1.0);
        TuSize {
            factors: lines.iter().map(|l| (l / mean).powf(alpha)).collect(),
        }
    }

    fn factor(&self, tu: usize) -> f64 {
        self.factors[tu]
    }
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Least squares y = a + b·x with b ≥ 0 (more lines never cost less); a single point or equal
/// x: the mean, no slope.
fn fit(pts: &[(f64, f64)]) -> (f64, f64) {
    let (a, b) = fit_signed(pts);
    if b <= 0.0 {
        let my = pts.iter().map(|p| p.1).sum::<f64>() / pts.len().max(1) as f64;
        return (my, 0.0);
    }
    (a, b)
}

/// Least squares y = a + b·x; a single point or equal x: the mean, no slope.
fn fit_signed(pts: &[(f64, f64)]) -> (f64, f64) {
    if pts.is_empty() {
        return (0.0, 0.0);
    }
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 0.0 {
        return (my, 0.0);
    }
    let b = sxy / sxx;
    (my - b * mx, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `real_path` gives what `canonicalize` gives, through a symlinked folder, a symlinked file,
    /// a symlink to a symlink and a missing file, with one folder memo shared by all.
    #[cfg(unix)]
    #[test]
    fn real_path_equals_canonicalize_through_symlinks() {
        use std::os::unix::fs::symlink;
        let d = std::env::temp_dir().join(format!("cf-realpath-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("real/inc")).unwrap();
        std::fs::write(d.join("real/inc/a.h"), "").unwrap();
        std::fs::write(d.join("real/b.h"), "").unwrap();
        symlink(d.join("real/inc"), d.join("linkdir")).unwrap();
        symlink(d.join("real/b.h"), d.join("real/inc/b_link.h")).unwrap();
        symlink(d.join("real/inc/b_link.h"), d.join("real/inc/b_link2.h")).unwrap();
        let paths = [
            d.join("linkdir/a.h"),
            d.join("real/inc/a.h"),
            d.join("linkdir/b_link.h"),
            d.join("linkdir/b_link2.h"),
            d.join("linkdir/missing.h"),
        ];
        let mut dirs = FxMap::default();
        for p in &paths {
            assert_eq!(
                real_path(p, &mut dirs),
                std::fs::canonicalize(p).ok(),
                "{}",
                p.display()
            );
        }
        assert_eq!(
            real_path(&paths[2], &mut dirs).unwrap(),
            std::fs::canonicalize(d.join("real/b.h")).unwrap()
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A summary as clang's traces give it (absolute, normal, sorted) is taken as it is; one
    /// that is not (relative, `..`, duplicates after normalising, unsorted — a hand-edited
    /// `.sum` can be anything) is normalised, merged and sorted by bytes: both give the files
    /// sorted by bytes with each path once.
    #[test]
    fn summary_files_come_out_normal_merged_and_sorted() {
        let sum = |files: &[(&str, u64, u32)]| TraceSummary {
            frontend_us: 100,
            top_us: 40,
            cpu_ratio_bits: None,
            files: files
                .iter()
                .map(|&(d, t, n)| (d.to_string(), t, n))
                .collect(),
        };
        let memo = &mut Normalised::default();
        let clean = from_summary(
            sum(&[("/p/a-b/x.h", 1, 1), ("/p/a/y.h", 2, 1), ("/p/b.h", 3, 2)]),
            Path::new("/q"),
            memo,
        );
        let want = |v: &[(&str, u64, u32)]| -> Vec<(PathBuf, u64, u32)> {
            v.iter()
                .map(|&(p, t, n)| (PathBuf::from(p), t, n))
                .collect()
        };
        assert_eq!(
            clean.files,
            want(&[("/p/a-b/x.h", 1, 1), ("/p/a/y.h", 2, 1), ("/p/b.h", 3, 2)])
        );
        assert_eq!(clean.own_us, 60);
        let messy = from_summary(
            sum(&[
                ("/p/b.h", 3, 2),
                ("/p/a/../b.h", 5, 1),
                ("c.h", 7, 1),
                ("/p/a-b/x.h", 1, 1),
                ("/p/a/y.h", 2, 1),
            ]),
            Path::new("/q"),
            memo,
        );
        assert_eq!(
            messy.files,
            want(&[
                ("/p/a-b/x.h", 1, 1),
                ("/p/a/y.h", 2, 1),
                ("/p/b.h", 8, 3),
                ("/q/c.h", 7, 1),
            ])
        );
        for (p, normal) in [
            ("/a/b.h", true),
            ("/", true),
            ("/a//b.h", false),
            ("/a/./b.h", false),
            ("/a/../b.h", false),
            ("/a/", false),
            ("a/b.h", false),
            ("", false),
        ] {
            assert_eq!(is_normal_absolute(p.as_bytes()), normal, "{p:?}");
            if normal {
                assert_eq!(normalize(Path::new(p)), PathBuf::from(p));
            }
        }
    }

    /// A hostile trace: durations near `u64::MAX` µs saturate, they do not wrap into small
    /// times (nor panic where overflow is checked).
    #[test]
    fn huge_durations_saturate() {
        let j = serde_json::json!({"traceEvents": [
            {"ph": "X", "ts": 0, "dur": 1.8e19, "name": "Frontend"},
            {"ph": "X", "ts": 0, "dur": 1.8e19, "name": "Frontend"},
            {"ph": "X", "ts": 1.8e19, "dur": 1.8e19, "name": "Source", "args": {"detail": "/p/a.h"}},
            {"ph": "X", "ts": 1.8e19, "dur": 1.8e19, "name": "Source", "args": {"detail": "/p/a.h"}}
        ]});
        let t = parse_trace(j.to_string().as_bytes(), Path::new("/q")).unwrap();
        assert_eq!(t.frontend_us, u64::MAX);
        // The second `Source` nests in the first (its end saturates past the second's start).
        assert_eq!(
            t.files,
            vec![(PathBuf::from("/p/a.h"), 18_000_000_000_000_000_000, 2)]
        );
        assert!(t.own_us <= t.frontend_us);
    }

    /// A hand-made trace: a.h (10 ms) includes b.h (4 ms), c.h (1 ms) at the top; Frontend 20 ms.
    #[test]
    fn exclusive_times_come_from_the_nesting() {
        let j = serde_json::json!({"traceEvents": [
            {"ph": "X", "ts": 100, "dur": 20000, "name": "Frontend", "tid": 1, "pid": 1},
            {"ph": "X", "ts": 200, "dur": 10000, "name": "Source", "args": {"detail": "/p/a.h"}},
            {"ph": "X", "ts": 300, "dur": 4000, "name": "Source", "args": {"detail": "/p/b.h"}},
            {"ph": "X", "ts": 11000, "dur": 1000, "name": "Source", "args": {"detail": "c.h"}},
            {"ph": "X", "ts": 0, "dur": 11000, "name": "Total Source", "tid": 2},
            {"ph": "M", "name": "thread_name"}
        ]});
        let t = parse_trace(j.to_string().as_bytes(), Path::new("/q")).unwrap();
        assert_eq!(t.frontend_us, 20000);
        assert_eq!(t.own_us, 20000 - 10000 - 1000);
        assert_eq!(
            t.files,
            vec![
                (PathBuf::from("/p/a.h"), 6000, 1),
                (PathBuf::from("/p/b.h"), 4000, 1),
                (PathBuf::from("/q/c.h"), 1000, 1),
            ]
        );
        assert!(
            parse_trace(b"{}", Path::new("/"))
                .unwrap_err()
                .to_string()
                .contains("traceEvents")
        );
        assert!(
            parse_trace(b"[1,", Path::new("/"))
                .unwrap_err()
                .to_string()
                .contains("invalid JSON")
        );
    }

    /// The ratio spliced into a kept trace is read back, and the rest of the trace is unchanged.
    #[test]
    fn a_kept_trace_carries_its_cpu_ratio() {
        let j = serde_json::json!({"traceEvents": [
            {"ph": "X", "ts": 0, "dur": 20000, "name": "Frontend"},
            {"ph": "X", "ts": 10, "dur": 10000, "name": "Source", "args": {"detail": "/p/a.h"}}
        ], "beginningOfTime": 5});
        let text = format!("  {}", serde_json::to_string_pretty(&j).unwrap());
        let kept = with_cpu_ratio(text.as_bytes(), 0.5).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&kept).unwrap();
        assert_eq!(v[CPU_RATIO_KEY], 0.5);
        assert_eq!(v["traceEvents"], j["traceEvents"]);
        assert_eq!(v["beginningOfTime"], 5);
        let t = parse_trace(&kept, Path::new("/")).unwrap();
        assert_eq!((t.frontend_us, t.own_us), (10000, 5000));
        assert_eq!(t.files, vec![(PathBuf::from("/p/a.h"), 5000, 1)]);
        assert_eq!(
            with_cpu_ratio(b" {} ", 0.5).unwrap(),
            b" {\"clipforge_cpu_ratio\":0.5} "
        );
        assert!(with_cpu_ratio(b"[1]", 0.5).is_err());
    }

    #[test]
    fn the_fit_never_slopes_down() {
        assert_eq!(fit(&[(1.0, 5.0)]), (5.0, 0.0));
        let (a, b) = fit(&[(0.0, 1.0), (10.0, 21.0)]);
        assert!((a - 1.0).abs() < 1e-9 && (b - 2.0).abs() < 1e-9);
        assert_eq!(fit(&[(0.0, 4.0), (10.0, 2.0)]), (3.0, 0.0));
    }
}
