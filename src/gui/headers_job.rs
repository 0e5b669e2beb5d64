//! The Headers tab's background work: the scan on a worker thread (which borrows the tab's
//! [`Scanner`] and hands it back, so the next scan is incremental), the file watcher that asks
//! for rescans ([`crate::watcher::Watcher`] on [`HeadersProject::watch_dirs`]), the project
//! settings turned into a [`Project`], and the compiler runs of "Measure" and "Verify PCH"
//! ([`CompileJob`]: clang on a worker thread, counted, cancellable).

use crate::headers::{
    self, CompilerChoice, MacroOpt, Mode, Progress, Project, Report, ScanError, ScanOptions,
    Scanner,
};
use eframe::egui;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// Which compiler the scan asks for predefined macros and system dirs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum CompilerPick {
    #[default]
    Auto,
    None,
    Named,
}

/// A build configuration as typed in the project editor.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct ConfigEntry {
    pub name: String,
    /// Its compile_commands.json.
    pub compile_commands: String,
}

/// The project as the user typed it (persisted). Turned into a [`Project`] by [`Self::project`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct HeadersProject {
    pub roots: Vec<String>,
    /// `-I` dirs, in search order.
    pub include_dirs: Vec<String>,
    /// One per line: `NAME`, `NAME=VALUE`, `-DNAME=VALUE` or `-UNAME`.
    pub defines: String,
    /// Optional compile_commands.json (TUs and their flags come from it when set).
    pub compile_commands: String,
    /// Build configurations scanned together (each a compile_commands.json); when any is set,
    /// they replace `compile_commands` and the table shows per-configuration counts.
    pub configs: Vec<ConfigEntry>,
    /// `-std=` for C++ TUs (empty: the compiler's default).
    pub std: String,
    /// `-std=` for C TUs (empty: the compiler's default).
    pub cstd: String,
    /// `-isystem` dirs, in search order (after the `-I` dirs, as for a compiler).
    pub system_dirs: Vec<String>,
    pub compiler: CompilerPick,
    pub compiler_name: String,
    /// Keep an on-disk cache (user cache dir) so the first scan after a restart is fast too.
    pub disk_cache: bool,
    /// Rebuild cost from git history over this period (`90d`, `12w`; empty: off), as `--churn`.
    pub churn_period: String,
}

impl Default for HeadersProject {
    fn default() -> Self {
        // First start: the bundled sample tree, so the tab shows real results at once.
        let sample = super::bundled_assets_dir()
            .map(|a| a.join("headers-sample"))
            .filter(|p| p.is_dir());
        let (roots, include_dirs, defines) = match sample {
            Some(s) => (
                vec![s.display().to_string()],
                vec![s.join("include").display().to_string()],
                "ENGINE_GL=1".to_string(),
            ),
            None => (Vec::new(), Vec::new(), String::new()),
        };
        Self {
            roots,
            include_dirs,
            defines,
            compile_commands: String::new(),
            configs: Vec::new(),
            std: String::new(),
            cstd: String::new(),
            system_dirs: Vec::new(),
            compiler: CompilerPick::Auto,
            compiler_name: String::new(),
            disk_cache: true,
            churn_period: String::new(),
        }
    }
}

/// Parses the defines box: one per line, blank lines and `#`/`//` comments ignored.
pub fn parse_defines(text: &str) -> Result<Vec<MacroOpt>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        let (undef, body) = if let Some(r) = line.strip_prefix("-U") {
            (true, r.trim())
        } else {
            (false, line.strip_prefix("-D").unwrap_or(line).trim())
        };
        let name_end = body.find(['=', '(']).unwrap_or(body.len());
        let name = &body[..name_end];
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid || (undef && name_end != body.len()) {
            return Err(format!(
                "Defines, line {}: `{line}` is not a macro (write NAME, NAME=VALUE or -UNAME)",
                i + 1
            ));
        }
        out.push(if undef {
            MacroOpt::Undef(name.to_string())
        } else {
            MacroOpt::parse_define(body)
        });
    }
    Ok(out)
}

impl HeadersProject {
    fn clean_list(v: &[String]) -> Vec<PathBuf> {
        v.iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect()
    }

    /// The include dirs as the scan uses them: the engine's one rule for a relative dir
    /// ([`Project::resolve_dir`]: from the first source root), as in the CLI.
    pub fn include_dir_paths(&self) -> Vec<PathBuf> {
        let roots = Self::clean_list(&self.roots);
        Self::clean_list(&self.include_dirs)
            .into_iter()
            .map(|d| Project::resolve_dir(&roots, &d))
            .collect()
    }

    /// The engine's project, or a message naming what is wrong (never scans a bad input).
    pub fn project(&self) -> Result<Project, String> {
        let roots = Self::clean_list(&self.roots);
        let cc = self.compile_commands.trim();
        let mut configs: Vec<headers::Configuration> = Vec::new();
        for (i, c) in self.configs.iter().enumerate() {
            let (name, path) = (c.name.trim(), c.compile_commands.trim());
            if name.is_empty() && path.is_empty() {
                continue;
            }
            if name.is_empty() {
                return Err(format!("Configuration {}: give it a name", i + 1));
            }
            if configs.iter().any(|o| o.name == name) {
                return Err(format!("Configuration {name}: the name is used twice"));
            }
            if !Path::new(path).is_file() {
                return Err(format!(
                    "Configuration {name}: compile_commands.json {path}: file not found"
                ));
            }
            configs.push(headers::Configuration {
                name: name.to_string(),
                compile_commands: PathBuf::from(path),
            });
        }
        if roots.is_empty() && cc.is_empty() && configs.is_empty() {
            return Err("Add a source root (or a compile_commands.json) first".into());
        }
        for r in &roots {
            if !r.is_dir() {
                return Err(format!("Source root {}: folder not found", r.display()));
            }
        }
        if !cc.is_empty() && !Path::new(cc).is_file() {
            return Err(format!("compile_commands.json {cc}: file not found"));
        }
        let dirs = |label: &str, v: &[String]| -> Result<Vec<PathBuf>, String> {
            Self::clean_list(v)
                .iter()
                .map(|d| Project::resolve_existing_dir(&roots, label, d))
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())
        };
        let include_dirs = dirs("Include dir", &self.include_dirs)?;
        let system_dirs = dirs("System dir", &self.system_dirs)?;
        let compiler = match self.compiler {
            CompilerPick::Auto => CompilerChoice::Auto,
            CompilerPick::None => CompilerChoice::None,
            CompilerPick::Named => {
                let n = self.compiler_name.trim();
                if n.is_empty() {
                    return Err("Compiler: type a compiler name (e.g. g++) or pick Auto".into());
                }
                CompilerChoice::Named(n.to_string())
            }
        };
        let std = self.std.trim();
        let cstd = self.cstd.trim();
        Ok(Project {
            roots,
            include_dirs,
            system_dirs,
            cstd: (!cstd.is_empty()).then(|| cstd.to_string()),
            defines: parse_defines(&self.defines)?,
            compile_commands: (!cc.is_empty() && configs.is_empty()).then(|| PathBuf::from(cc)),
            configs,
            std: (!std.is_empty()).then(|| std.to_string()),
            compiler,
            ..Default::default()
        })
    }

    /// Folders a watcher should follow (the existing roots and include dirs).
    pub fn watch_dirs(&self) -> Vec<PathBuf> {
        Self::clean_list(&self.roots)
            .into_iter()
            .chain(self.include_dir_paths())
            .chain(
                Self::clean_list(&self.system_dirs)
                    .iter()
                    .map(|d| Project::resolve_dir(&Self::clean_list(&self.roots), d)),
            )
            .filter(|p| p.is_dir())
            .collect()
    }
}

/// A finished scan: both modes' reports.
pub struct ScanOutcome {
    pub preprocessed: Option<Report>,
    pub all_branches: Option<Report>,
    pub wall: Duration,
    pub clean: bool,
    /// The detail of the file the tab will show (its selection, else [`default_selection`]) in
    /// the mode it shows, built on the scan's thread: for a popular header it takes a frame's
    /// worth of time (13 ms on gRPC's top hub), which the frame taking the result cannot spare.
    pub first_detail: Option<FirstDetail>,
    /// With a history period: the commits read (and the period's days), for the PCH advice;
    /// or why they could not be read (the scan's figures stand without them).
    pub history: Option<Arc<(headers::churn::History, u32)>>,
    pub history_error: Option<String>,
}

/// The detail view's data for one file, prepared with a scan's result (see
/// [`ScanOutcome::first_detail`]).
pub struct FirstDetail {
    pub mode: Mode,
    pub path: String,
    pub detail: crate::headers::report::Detail,
    /// The why-chain from `from_tu` (empty: any TU), when it is cheap enough to be automatic.
    pub why: Option<Result<Vec<crate::headers::report::ChainStep>, crate::headers::WhyError>>,
    pub from_tu: String,
}

/// The file the detail view shows and the "From TU" of its why-chain, when a scan starts.
pub struct Shown {
    pub mode: Mode,
    pub selected: Option<String>,
    pub from_tu: String,
}

/// Whether the detail computes the why-chain on its own (one BFS per TU over its own edges).
pub fn why_is_cheap(r: &Report) -> bool {
    r.graph.tus.len().saturating_mul(r.graph.nodes.len()) < 20_000_000
}

/// The file the detail opens on when nothing is selected: the top header hub (else the
/// biggest contributor), so the view starts with both includers and includes.
pub fn default_selection(r: &Report) -> Option<String> {
    r.hubs
        .iter()
        .map(|h| &h.path)
        .find(|p| r.find(p).and_then(|n| r.entry(n)).is_some_and(|e| !e.tu))
        .or_else(|| r.headers.iter().find(|h| !h.tu).map(|h| &h.path))
        .cloned()
}

impl ScanOutcome {
    pub fn report(&self, mode: Mode) -> Option<&Report> {
        match mode {
            Mode::Preprocessed => self.preprocessed.as_ref(),
            Mode::AllBranches => self.all_branches.as_ref(),
        }
    }
}

type Done = (Scanner, Result<ScanOutcome, ScanError>);

/// A scan running on its worker thread.
pub struct HeadersJob {
    pub progress: Arc<Progress>,
    pub started: Instant,
    pub clean: bool,
    rx: Receiver<Done>,
}

/// What polling a job found.
pub enum JobPoll {
    Running,
    /// The session back, with the result (boxed: two reports are large).
    Done(Box<(Scanner, Result<ScanOutcome, String>)>),
}

impl HeadersJob {
    /// Starts the scan; the thread owns `scanner` until it sends it back with the result.
    /// `shown`: the mode the tab shows, its selected file and why-chain origin, whose detail is
    /// prepared with the result.
    /// `churn_period`: [`HeadersProject::churn_period`], read on the worker after the scan.
    pub fn start(
        scanner: Scanner,
        project: Project,
        opts: ScanOptions,
        shown: Shown,
        churn_period: String,
        ctx: Option<egui::Context>,
    ) -> HeadersJob {
        let (tx, rx) = mpsc::channel();
        let progress = Arc::new(Progress::default());
        let clean = opts.clean;
        let p = progress.clone();
        let spawned = std::thread::Builder::new()
            .name("clipforge-headers".into())
            .spawn(move || {
                // Below the UI thread's priority, in its own pool so that its workers inherit
                // it (rayon's global pool may have been started by a normal-priority thread).
                crate::pipeline::lower_thread_priority();
                let pool = rayon::ThreadPoolBuilder::new()
                    .thread_name(|i| format!("clipforge-headers-{i}"))
                    .build()
                    .ok();
                let mut scanner = scanner;
                let t0 = Instant::now();
                let scan = |scanner: &mut headers::Scanner| {
                    headers::scan_cached(scanner, &project, &opts, &p)
                };
                let res = match &pool {
                    Some(pool) => pool.install(|| scan(&mut scanner)),
                    None => scan(&mut scanner),
                };
                let res = res.map(|r| {
                    let (mut pre, mut all) = (None, None);
                    for rep in std::iter::once(r.primary).chain(r.secondary) {
                        match rep.mode {
                            Mode::Preprocessed => pre = Some(rep),
                            Mode::AllBranches => all = Some(rep),
                        }
                    }
                    let (history, history_error) =
                        add_churn(&project, &churn_period, pre.as_mut(), all.as_mut());
                    let mut o = ScanOutcome {
                        preprocessed: pre,
                        all_branches: all,
                        wall: t0.elapsed(),
                        clean,
                        first_detail: None,
                        history,
                        history_error,
                    };
                    let Shown {
                        mode,
                        selected,
                        from_tu,
                    } = shown;
                    o.first_detail = o.report(mode).and_then(|r| {
                        let path = selected
                            .filter(|p| r.find(p).is_some())
                            .or_else(|| default_selection(r))?;
                        let node = r.find(&path)?;
                        let from = (!from_tu.is_empty()).then_some(from_tu.as_str());
                        let why = why_is_cheap(r).then(|| r.why_chain(&path, from));
                        Some(FirstDetail {
                            mode,
                            detail: r.detail(node),
                            why,
                            path,
                            from_tu,
                        })
                    });
                    o
                });
                let _ = tx.send((scanner, res));
                if let Some(c) = ctx {
                    c.request_repaint();
                }
            });
        if let Err(e) = spawned {
            // No thread: report it as a failed scan at the next poll (the scanner is lost, a
            // fresh one is made then).
            let (tx2, rx2) = mpsc::channel();
            let _ = tx2.send((Scanner::new(), Err(ScanError::NoThread(e.to_string()))));
            return HeadersJob {
                progress,
                started: Instant::now(),
                clean,
                rx: rx2,
            };
        }
        HeadersJob {
            progress,
            started: Instant::now(),
            clean,
            rx,
        }
    }

    pub fn poll(&self) -> JobPoll {
        match self.rx.try_recv() {
            Ok((s, r)) => JobPoll::Done(Box::new((s, r.map_err(|e| e.to_string())))),
            Err(TryRecvError::Empty) => JobPoll::Running,
            // The worker died (a bug in the engine): start over with a fresh session.
            Err(TryRecvError::Disconnected) => JobPoll::Done(Box::new((
                Scanner::new(),
                Err("the scan stopped unexpectedly (internal error); try Clean rescan".into()),
            ))),
        }
    }

    /// (done, total) translation units.
    pub fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (
            self.progress.tus_done.load(Relaxed),
            self.progress.tus_total.load(Relaxed),
        )
    }
}

/// Reads the history of `period` (nothing when it is blank) and adds its rebuild cost to both
/// reports (computed on the preprocessed closures, as `--churn`).
#[allow(clippy::type_complexity)]
fn add_churn(
    project: &Project,
    period: &str,
    pre: Option<&mut Report>,
    all: Option<&mut Report>,
) -> (Option<Arc<(headers::churn::History, u32)>>, Option<String>) {
    use headers::churn;
    if period.trim().is_empty() {
        return (None, None);
    }
    let read = churn::parse_period(period)
        .and_then(|days| churn::read_history(&project.history_dirs(), days));
    let h = match read {
        Ok(h) => h,
        Err(e) => return (None, Some(format!("History: {e}"))),
    };
    let Some(pre) = pre else {
        return (None, None);
    };
    let c = churn::compute(pre, &h, h.days);
    c.apply(pre);
    if let Some(a) = all {
        c.apply(a);
    }
    pre.notes
        .extend(h.notes.iter().map(|n| format!("history: {n}")));
    let days = h.days;
    (Some(Arc::new((h, days))), None)
}

/// What a finished Measure gives back: the report with its costs, the predicted times and the
/// PCH advice in it, and the costs themselves (Verify PCH needs them).
pub struct Measured {
    pub report: Report,
    pub timing: Arc<headers::timing::Timing>,
}

/// Clang runs on a worker thread (Measure N TUs, Verify PCH): TUs done of a total, a cancel
/// token the runs check between TUs, the result when done. Belongs to the scan `generation`
/// it started from (a rescan meanwhile makes its result stale).
pub struct CompileJob<T> {
    pub done: Arc<std::sync::atomic::AtomicUsize>,
    pub total: Arc<std::sync::atomic::AtomicUsize>,
    pub cancel: clipforge_base::task::CancelToken,
    pub started: Instant,
    pub generation: u64,
    rx: Receiver<Result<T, String>>,
}

impl<T: Send + 'static> CompileJob<T> {
    fn start(
        generation: u64,
        ctx: Option<egui::Context>,
        work: impl FnOnce(&CompileJobCtx) -> Result<T, String> + Send + 'static,
    ) -> CompileJob<T> {
        let (tx, rx) = mpsc::channel();
        let c = CompileJobCtx {
            done: Default::default(),
            total: Default::default(),
            cancel: clipforge_base::task::CancelToken::new(),
        };
        let job = CompileJob {
            done: c.done.clone(),
            total: c.total.clone(),
            cancel: c.cancel.clone(),
            started: Instant::now(),
            generation,
            rx,
        };
        let spawned = std::thread::Builder::new()
            .name("clipforge-headers-clang".into())
            .spawn(move || {
                crate::pipeline::lower_thread_priority();
                let _ = tx.send(work(&c));
                if let Some(ctx) = ctx {
                    ctx.request_repaint();
                }
            });
        if let Err(e) = spawned {
            let (tx2, rx2) = mpsc::channel();
            let _ = tx2.send(Err(format!("cannot start the compiler thread: {e}")));
            return CompileJob { rx: rx2, ..job };
        }
        job
    }

    /// The result once the worker is done.
    pub fn poll(&self) -> Option<Result<T, String>> {
        match self.rx.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(
                "the compiler runs stopped unexpectedly (internal error)".into(),
            )),
        }
    }

    /// (done, total) translation units.
    pub fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.done.load(Relaxed), self.total.load(Relaxed))
    }
}

/// What a [`CompileJob`]'s work sees: its counters and cancel token.
pub struct CompileJobCtx {
    pub done: Arc<std::sync::atomic::AtomicUsize>,
    pub total: Arc<std::sync::atomic::AtomicUsize>,
    pub cancel: clipforge_base::task::CancelToken,
}

impl CompileJobCtx {
    fn options(&self) -> headers::timing::MeasureOptions {
        headers::timing::MeasureOptions {
            cancel: Some(self.cancel.clone()),
            ..Default::default()
        }
    }
}

/// Measures `n` TUs of `report` (a preprocessed report of `project`, owned by the worker) with
/// clang, fills its costs and predicted times, and advises a PCH for its first configuration.
/// `history`: the scan's commits, which the advice weighs (a header changed often stays out).
pub fn start_measure(
    project: Project,
    mut report: Report,
    n: usize,
    history: Option<Arc<(headers::churn::History, u32)>>,
    generation: u64,
    ctx: Option<egui::Context>,
) -> CompileJob<Measured> {
    use headers::{pch, timing};
    CompileJob::start(generation, ctx, move |c| {
        let chosen = timing::choose_tus(&report, n);
        c.total
            .store(chosen.len(), std::sync::atomic::Ordering::Relaxed);
        let mut notes = Vec::new();
        let traces = timing::measure(
            &project,
            &report,
            &chosen,
            &c.options(),
            &c.done,
            &mut notes,
        );
        if c.cancel.is_cancelled() {
            return Err("Measure cancelled: the seconds are not shown".into());
        }
        let traces = traces.map_err(|e| e.to_string())?;
        let t = timing::Timing::from_traces(&report, &timing::NodeIndex::new(&report), &traces);
        t.apply(&mut report);
        report.notes.extend(notes);
        let h = history.as_ref().map(|h| (&h.0, h.1));
        report.pch = Some(pch::advise(&report, &t, 0, pch::PchSize::Auto, h));
        Ok(Measured {
            report,
            timing: Arc::new(t),
        })
    })
}

/// Builds the advised and the naive PCH and compiles `m` TUs three ways (`headers::pch::verify`).
pub fn start_verify_pch(
    project: Project,
    report: Report,
    timing: Arc<headers::timing::Timing>,
    m: usize,
    generation: u64,
    ctx: Option<egui::Context>,
) -> CompileJob<headers::report::PchCheck> {
    CompileJob::start(generation, ctx, move |c| {
        let advice = report
            .pch
            .clone()
            .ok_or("Measure first: there is no PCH advice to verify")?;
        c.total.store(m, std::sync::atomic::Ordering::Relaxed);
        headers::pch::verify(
            &project,
            &report,
            &timing,
            &advice,
            m,
            &c.options(),
            &c.done,
        )
        .map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_include_dir_is_taken_from_the_first_root() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("include")).unwrap();
        let p = HeadersProject {
            roots: vec![root.path().display().to_string()],
            include_dirs: vec!["include".into()],
            ..Default::default()
        };
        assert_eq!(p.include_dir_paths(), vec![root.path().join("include")]);
        assert_eq!(
            p.project().unwrap().include_dirs,
            vec![root.path().join("include")]
        );
        let missing = HeadersProject {
            include_dirs: vec!["nope".into()],
            ..p.clone()
        };
        let e = missing.project().unwrap_err();
        assert!(
            e.contains(&root.path().join("nope").display().to_string())
                && e.contains("taken from the first source root"),
            "{e}"
        );
    }
}
