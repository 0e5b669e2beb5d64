//! `clipforge headers` command-line arguments and entry point: builds a [`Project`] from compiler-
//! style flags, runs the scan (with the on-disk cache), prints both modes side by side plus the
//! top of the tables, and writes the JSON / CSV / dot exports, why-chains and what-if answers.

use clipforge_headers::churn::{self, Churn};
use clipforge_headers::report::{Report, WhatIf};
use clipforge_headers::{
    CompilerChoice, Configuration, MacroOpt, Mode, Progress, Project, ScanOptions,
};
use std::path::PathBuf;
use std::process::ExitCode;

/// `--mode` on the command line (the clap side of [`Mode`], which knows nothing of clap).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeArg {
    AllBranches,
    Preprocessed,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::AllBranches => Mode::AllBranches,
            ModeArg::Preprocessed => Mode::Preprocessed,
        }
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct HeadersArgs {
    /// Source roots to scan (recursively; dot-directories skipped).
    pub roots: Vec<PathBuf>,
    /// Include directory, searched in the order given. A relative one is taken from the first
    /// root (as in the app), not from the current directory; a missing one is an error.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a macro (preprocessed mode): NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VAL]")]
    pub define: Vec<String>,
    /// Undefine a macro (applied after all -D).
    #[arg(short = 'U', value_name = "NAME")]
    pub undef: Vec<String>,
    /// Quote-only include directory (-iquote; relative: from the first root, as -I).
    #[arg(long = "iquote", value_name = "DIR")]
    pub iquote: Vec<PathBuf>,
    /// System include directory (-isystem; relative: from the first root, as -I).
    #[arg(long = "isystem", value_name = "DIR")]
    pub isystem: Vec<PathBuf>,
    /// Take translation units, include dirs and defines from a compilation database.
    #[arg(long, value_name = "FILE")]
    pub compile_commands: Option<PathBuf>,
    /// A build configuration, NAME=path/to/compile_commands.json; repeat it to scan several in
    /// one run (files read once, each configuration evaluated): a summary line each, then the
    /// combined tables (TUs summed over the configurations).
    #[arg(
        long = "config",
        value_name = "NAME=FILE",
        conflicts_with = "compile_commands"
    )]
    pub configs: Vec<String>,
    /// Mode whose tables are printed and exported (both modes' totals are always shown).
    #[arg(long, value_enum, default_value = "preprocessed")]
    pub mode: ModeArg,
    /// C++ standard passed to the compiler query (e.g. c++20).
    #[arg(long)]
    pub std: Option<String>,
    /// C standard for .c files (e.g. gnu11).
    #[arg(long)]
    pub cstd: Option<String>,
    /// Compiler asked for predefined macros and system dirs; `none` = built-in GCC set.
    #[arg(long, value_name = "NAME")]
    pub compiler: Option<String>,
    /// Ignore the cache (clean rescan).
    #[arg(long)]
    pub clean: bool,
    /// Disable cross-TU memoisation (slower; for checking it).
    #[arg(long, hide = true)]
    pub no_memo: bool,
    /// Neither read nor write the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Cache file (default: the user cache dir).
    #[arg(long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// Count system headers too (compare whole closures with the compiler).
    #[arg(long)]
    pub count_system: bool,
    /// Write the JSON report ("-" for stdout).
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Write the per-file table as CSV.
    #[arg(long, value_name = "OUT")]
    pub csv: Option<PathBuf>,
    /// Write the include graph as GraphViz dot.
    #[arg(long, value_name = "OUT")]
    pub dot: Option<PathBuf>,
    /// Write per-TU closures as JSON (TU -> files), for comparisons with `g++ -M`.
    #[arg(long, value_name = "OUT")]
    pub closures: Option<PathBuf>,
    /// Print the shortest include chain to HEADER.
    #[arg(long, value_name = "HEADER")]
    pub why: Option<String>,
    /// With --why: start from this translation unit.
    #[arg(long, value_name = "TU", requires = "why")]
    pub from: Option<String>,
    /// What-if: remove the include edge FROM -> TO and print the new Total Parsed.
    #[arg(long, num_args = 2, value_names = ["FROM", "TO"])]
    pub remove_include: Option<Vec<String>>,
    /// What-if: make HEADER empty and print the new Total Parsed.
    #[arg(long, value_name = "HEADER")]
    pub empty: Option<String>,
    /// Rows printed per table.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Rescan whenever files under the roots change (Ctrl-C to stop).
    #[arg(long)]
    pub watch: bool,
    /// Print only the summary lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// Rebuild cost from history: per header, the commits of the last PERIOD (`90d`, `12w`)
    /// that changed it (`git log`) times the TUs that reach it; a ranked table, and the JSON's
    /// `churn_*` figures.
    #[arg(long, value_name = "PERIOD")]
    pub churn: Option<String>,
    /// The saving of every `#include` directive (and of emptying each header), in one
    /// analysis: prints the N best, each confirmed by evaluating its TUs again with the
    /// directive removed; the JSON's `cuts` lists them all.
    #[arg(long, value_name = "N")]
    pub cuts: Option<usize>,
    /// Measured cost per header from clang `-ftime-trace` JSON files of a real build (every
    /// `*.json` under DIR, matched to the scan's TUs by name): each header's exclusive frontend
    /// ms, the seconds it adds to the build, every TU's predicted time; cuts ranked by seconds.
    #[arg(long, value_name = "DIR", conflicts_with = "measure")]
    pub time_trace: Option<PathBuf>,
    /// Measure N translation units (chosen to cover the most-included headers) by running clang
    /// `-fsyntax-only -ftime-trace` on them in parallel; then as --time-trace.
    #[arg(long, value_name = "N")]
    pub measure: Option<usize>,
    /// The clang driver --measure runs (default: clang++ for C++, clang for C).
    #[arg(long, value_name = "NAME", requires = "measure")]
    pub measure_compiler: Option<String>,
    /// Parallel compiler runs of --measure (default: the machine's cores).
    #[arg(long, value_name = "N", requires = "measure")]
    pub jobs: Option<usize>,
    /// Keep the traces --measure made in DIR (`<k>-<file>.json`; --time-trace reads them).
    #[arg(long, value_name = "DIR", requires = "measure")]
    pub keep_traces: Option<PathBuf>,
    /// Keep clang's wall-clock trace times (default: each run's times scaled by its CPU / wall
    /// ratio, so that load on the machine does not count).
    #[arg(long, requires = "measure")]
    pub wall_time: bool,
    /// Precompiled-header advice (needs --measure or --time-trace): the N headers (or `auto`:
    /// as many as pay) whose PCH saves the most frontend seconds, net of loading it in every TU,
    /// building it, and (with --churn) the rebuilds its files' changes cause.
    #[arg(long, value_name = "N|auto")]
    pub pch: Option<clipforge_headers::pch::PchSize>,
    /// The configuration --pch advises for (default: the first).
    #[arg(long, value_name = "NAME", requires = "pch")]
    pub pch_config: Option<String>,
    /// Write the advised pch.h here.
    #[arg(long, value_name = "FILE", requires = "pch")]
    pub pch_out: Option<PathBuf>,
    /// Build the advised and the naive PCH with clang and compile M TUs without and with each
    /// (`-fsyntax-only`, CPU time): measured saving beside the predicted one.
    #[arg(long, value_name = "M", requires = "pch")]
    pub verify_pch: Option<usize>,
}

impl HeadersArgs {
    pub fn project(&self) -> Result<Project, String> {
        let mut defines: Vec<MacroOpt> = self
            .define
            .iter()
            .map(|d| MacroOpt::parse_define(d))
            .collect();
        defines.extend(self.undef.iter().map(|u| MacroOpt::Undef(u.clone())));
        let configs = self
            .configs
            .iter()
            .map(|c| Configuration::parse(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let dirs = |flag: &str, v: &[PathBuf]| -> Result<Vec<PathBuf>, String> {
            v.iter()
                .map(|d| Project::resolve_existing_dir(&self.roots, flag, d))
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())
        };
        Ok(Project {
            roots: self.roots.clone(),
            configs,
            include_dirs: dirs("-I", &self.include)?,
            quote_dirs: dirs("--iquote", &self.iquote)?,
            system_dirs: dirs("--isystem", &self.isystem)?,
            defines,
            compile_commands: self.compile_commands.clone(),
            std: self.std.clone(),
            cstd: self.cstd.clone(),
            compiler: match self.compiler.as_deref() {
                None => CompilerChoice::Auto,
                Some("none") => CompilerChoice::None,
                Some(n) => CompilerChoice::Named(n.to_string()),
            },
            cache_file: self.cache.clone(),
        })
    }

    pub fn options(&self) -> ScanOptions {
        ScanOptions {
            mode: self.mode.into(),
            both_modes: true,
            clean: self.clean,
            count_system: self.count_system,
            use_disk_cache: !self.no_cache,
            no_memo: self.no_memo,
            // The other mode only shows up in the summary table and the JSON's `other_mode`.
            other_mode_summary_only: true,
            cuts: self.cuts,
        }
    }
}

fn write_out(path: &std::path::Path, text: &str) -> Result<(), String> {
    if path.as_os_str() == "-" {
        print!("{text}");
        return Ok(());
    }
    // The project's one output rule (atomic; a symlink written through; the folder must exist),
    // as `compress` writes its reports.
    clipforge_base::fsio::write_output(path, text.as_bytes(), &[]).map_err(|e| e.to_string())
}

/// A count with thousands separators ("1,234,567"), for the human-readable output only: the
/// JSON and CSV reports keep plain numbers for scripts.
fn th<T: TryInto<i64> + Copy + std::fmt::Display>(n: T) -> String {
    match n.try_into() {
        Ok(v) => clipforge_headers::cuts::thousands(v),
        Err(_) => n.to_string(),
    }
}

fn print_summary(r: &Report, other: Option<&Report>) {
    println!(
        "{:<22} {:>18} {:>18}",
        "",
        r.mode.to_string(),
        other.map(|o| o.mode.to_string()).unwrap_or_default()
    );
    let row = |name: &str, a: String, b: Option<String>| {
        println!("{name:<22} {a:>18} {:>18}", b.unwrap_or_default())
    };
    row("Files", th(r.files), other.map(|o| th(o.files)));
    row(
        "Translation units",
        th(r.translation_units),
        other.map(|o| th(o.translation_units)),
    );
    row(
        "Total Lines",
        th(r.total_lines),
        other.map(|o| th(o.total_lines)),
    );
    row(
        "Total Parsed",
        th(r.total_parsed),
        other.map(|o| th(o.total_parsed)),
    );
    row(
        "Blowup Factor",
        format!("{:.2}", r.blowup),
        other.map(|o| format!("{:.2}", o.blowup)),
    );
    row(
        "Missing includes",
        th(r.missing.len()),
        other.map(|o| th(o.missing.len())),
    );
    row(
        "Include cycles",
        th(r.cycles.len()),
        other.map(|o| th(o.cycles.len())),
    );
    row(
        "Errors",
        th(r.errors.len()),
        other.map(|o| th(o.errors.len())),
    );
    print_skipped(r);
    print_configs(r);
    println!(
        "scan {:.3} s (files read {}, reused {}; TUs evaluated {}, reused {})",
        r.scan_seconds,
        th(r.stats.files_read),
        th(r.stats.files_reused),
        th(r.stats.tus_evaluated),
        th(r.stats.tus_reused)
    );
}

/// One summary line per configuration (nothing for a scan of one).
fn print_configs(r: &Report) {
    for c in &r.configs {
        println!(
            "config {}: {} TUs, {} files, Total Lines {}, Total Parsed {}, Blowup {:.2}",
            c.name,
            th(c.translation_units),
            th(c.files),
            th(c.total_lines),
            th(c.total_parsed),
            c.blowup
        );
    }
    if r.configs.len() > 1 {
        println!(
            "combined ({} configurations): {} TUs, Total Parsed {} (the tables below)",
            r.configs.len(),
            th(r.translation_units),
            th(r.total_parsed)
        );
    }
}

/// The special files the scan skipped (nothing when there were none).
fn print_skipped(r: &Report) {
    if r.skipped_special.is_empty() {
        return;
    }
    let n = r.skipped_special.len();
    let list: Vec<String> = r
        .skipped_special
        .iter()
        .map(|f| format!("{} ({})", f.path, f.kind))
        .collect();
    println!(
        "skipped {n} special file{} (not a regular file, never opened): {}",
        if n == 1 { "" } else { "s" },
        list.join(", ")
    );
}

fn print_tables(r: &Report, top: usize) {
    println!("\nBiggest contributors ({}; lines x TUs):", r.mode);
    // With configurations, each one's TU count after the total.
    let names: String = r
        .configs
        .iter()
        .map(|c| format!(" {:>8}", format!("TUs {}", c.name)))
        .collect();
    println!(
        "{:>12} {:>8} {:>6}{names}  path",
        "contributed", "lines", "TUs"
    );
    for h in r.headers.iter().filter(|h| h.contributed > 0).take(top) {
        let per: String = h
            .tu_count_by_config
            .iter()
            .flatten()
            .map(|&n| format!(" {:>8}", th(n)))
            .collect();
        println!(
            "{:>12} {:>8} {:>6}{per}  {}",
            th(h.contributed),
            th(h.lines),
            th(h.tu_count),
            h.path
        );
    }
    println!("\nHeader hubs (transitive includes x TUs):");
    for h in r.hubs.iter().take(top) {
        println!(
            "{:>12} {:>8} {:>6}  {}",
            th(h.score),
            th(h.transitive_includes),
            th(h.tu_count),
            h.path
        );
    }
    if !r.missing.is_empty() {
        println!("\nMissing includes ({}):", r.missing.len());
        let quoted = |m: &clipforge_headers::report::MissingEntry| {
            if m.angle {
                format!("<{}>", m.include)
            } else {
                format!("\"{}\"", m.include)
            }
        };
        // As wide as the longest name shown: a fixed 40 put longer names' counts out of line
        // (ozz-animation's "animation/offline/tools/import2ozz_config.h").
        let width = r
            .missing
            .iter()
            .take(top)
            .map(|m| quoted(m).chars().count())
            .max()
            .unwrap_or(0)
            .max(40);
        for m in r.missing.iter().take(top) {
            let first = m
                .tried_by
                .first()
                .map(|s| format!("{}:{}", s.file, s.line))
                .unwrap_or_default();
            let q = quoted(m);
            println!("  {q:<width$} {:>5} TUs, e.g. {first}", th(m.tu_count));
        }
    }
    if !r.cycles.is_empty() {
        println!("\nInclude cycles ({}):", r.cycles.len());
        for c in r.cycles.iter().take(top) {
            println!("  {}", c.join(" <-> "));
        }
    }
    if !r.errors.is_empty() {
        println!("\nErrors ({}):", r.errors.len());
        for e in r.errors.iter().take(top) {
            println!("  {}:{}: {}", e.file, e.line, e.message);
        }
    }
    for n in &r.notes {
        println!("note: {n}");
    }
}

fn print_cuts(r: &Report, n: usize) {
    use clipforge_headers::cuts::{CutKind, thousands};
    let Some(cuts) = &r.cuts else { return };
    let exact = cuts.iter().filter(|c| c.exact).count();
    println!(
        "\nTop cuts ({}; Total Parsed lines saved if the #include were removed, or the header \
         emptied; {} of {} confirmed exactly):",
        r.mode,
        exact,
        cuts.len()
    );
    println!(
        "{:>14} {:>6} {:>6}  directive",
        "lines saved", "TUs", "exact"
    );
    for c in cuts.iter().take(n) {
        let what = match c.kind {
            CutKind::Include => format!("{}:{}  #include {}", c.includer, c.line, c.included),
            CutKind::EmptyHeader => format!("{}  (make it empty)", c.included),
        };
        let mut notes = Vec::new();
        if !c.exact && c.macros_tested_later {
            notes.push("defines macros other files test");
        }
        if !c.exact && c.other_directives {
            notes.push("included on another line too");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  [{}]", notes.join("; "))
        };
        println!(
            "{:>14} {:>6} {:>6}  {what}{notes}",
            thousands(c.lines_saved),
            thousands(c.tus_affected as i64),
            if c.exact { "yes" } else { "est." }
        );
    }
    if cuts.iter().any(|c| c.seconds_saved.is_some()) {
        let mut by_s: Vec<_> = cuts.iter().collect();
        by_s.sort_by(|a, b| {
            b.seconds_saved
                .partial_cmp(&a.seconds_saved)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        println!(
            "\nTop cuts by seconds (frontend seconds saved, estimated from the measured costs):"
        );
        println!(
            "{:>10} {:>14} {:>6}  directive",
            "seconds", "lines saved", "TUs"
        );
        for c in by_s.into_iter().take(n) {
            let what = match c.kind {
                CutKind::Include => format!("{}:{}  #include {}", c.includer, c.line, c.included),
                CutKind::EmptyHeader => format!("{}  (make it empty)", c.included),
            };
            println!(
                "{:>10} {:>14} {:>6}  {what}",
                f3(c.seconds_saved.unwrap_or(0.0)),
                thousands(c.lines_saved),
                thousands(c.tus_affected as i64)
            );
        }
    }
}

/// Measures (`--measure`) or reads (`--time-trace`) the traces and fills the report's costs.
fn add_timing(
    args: &HeadersArgs,
    project: &Project,
    r: &mut Report,
    history: Option<(&churn::History, u32)>,
) -> Result<(), String> {
    use clipforge_headers::timing;
    if args.measure.is_none() && args.time_trace.is_none() {
        return Ok(());
    }
    let mut notes = Vec::new();
    let idx = timing::NodeIndex::new(r);
    let traces = if let Some(n) = args.measure {
        let chosen = timing::choose_tus(r, n);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let total = chosen.len();
        let started = std::time::Instant::now();
        let show = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let finished = std::sync::atomic::AtomicBool::new(false);
        let opts = timing::MeasureOptions {
            compiler: args.measure_compiler.clone(),
            jobs: args.jobs.unwrap_or(0),
            keep_traces: args.keep_traces.clone(),
            wall_time: args.wall_time,
            cancel: None,
        };
        let traces = std::thread::scope(|sc| {
            if show {
                sc.spawn(|| {
                    use std::sync::atomic::Ordering::Relaxed;
                    while !finished.load(Relaxed) {
                        eprint!("\rmeasuring: {}/{total} TUs", done.load(Relaxed));
                        std::thread::sleep(std::time::Duration::from_millis(200));
                    }
                    eprintln!("\rmeasuring: {total}/{total} TUs");
                });
            }
            let t = timing::measure(project, r, &chosen, &opts, &done, &mut notes);
            finished.store(true, std::sync::atomic::Ordering::Relaxed);
            t
        })
        .map_err(|e| format!("--measure: {e}"))?;
        println!(
            "measured {} of {} TUs with clang in {:.2} s",
            traces.len(),
            th(r.graph.tus.len()),
            started.elapsed().as_secs_f64()
        );
        traces
    } else if let Some(d) = &args.time_trace {
        timing::load_dir(d, r, &idx, &mut notes).map_err(|e| format!("--time-trace: {e}"))?
    } else {
        return Ok(());
    };
    let t = timing::Timing::from_traces(r, &idx, &traces);
    if t.unmatched_files > 0 {
        notes.push(format!(
            "{} files of the traces are in no closure of the scan: their time is counted in their TU's own time",
            t.unmatched_files
        ));
    }
    t.apply(r);
    r.notes.extend(notes);
    if let Some(size) = args.pch {
        add_pch(args, project, r, &t, size, history)?;
    }
    Ok(())
}

/// `--pch`: the advice (and `pch.h`), and with `--verify-pch` its check by real builds.
fn add_pch(
    args: &HeadersArgs,
    project: &Project,
    r: &mut Report,
    t: &clipforge_headers::timing::Timing,
    size: clipforge_headers::pch::PchSize,
    history: Option<(&churn::History, u32)>,
) -> Result<(), String> {
    use clipforge_headers::pch;
    let config = match &args.pch_config {
        Some(n) => r.configs.iter().position(|c| &c.name == n).ok_or_else(|| {
            let names: Vec<&str> = r.configs.iter().map(|c| c.name.as_str()).collect();
            format!(
                "--pch-config {n}: no such configuration (there are: {})",
                names.join(", ")
            )
        })? as u32,
        None => 0,
    };
    let mut advice = pch::advise(r, t, config, size, history);
    if let Some(p) = &args.pch_out {
        write_out(p, &advice.pch_h)?;
    }
    if let Some(m) = args.verify_pch {
        if m == 0 {
            return Err("--verify-pch: give a number of translation units (1 or more)".into());
        }
        let opts = clipforge_headers::timing::MeasureOptions {
            compiler: args.measure_compiler.clone(),
            jobs: args.jobs.unwrap_or(0),
            ..Default::default()
        };
        let done = std::sync::atomic::AtomicUsize::new(0);
        let started = std::time::Instant::now();
        let check = pch::verify(project, r, t, &advice, m, &opts, &done)
            .map_err(|e| format!("--verify-pch: {e}"))?;
        println!(
            "verified the PCH on {} TUs in {:.2} s",
            check.tus,
            started.elapsed().as_secs_f64()
        );
        advice.check = Some(check);
    }
    r.pch = Some(advice);
    Ok(())
}

/// A column figure to three decimals, "< 0.001" rather than "0.000" for a small one (the app's
/// Seconds column says the same).
fn f3(v: f64) -> String {
    clipforge_pipeline::report::format_3_decimals(v)
}

/// Seconds in words: "1.23 s", in ms below 0.1 s (the app's words).
fn secs(s: f64) -> String {
    clipforge_pipeline::report::format_seconds(s)
}

/// The advised PCH, its predicted saving and, when verified, the measurement.
fn print_pch(r: &Report, out: Option<&std::path::Path>) {
    let Some(a) = &r.pch else { return };
    let cfg = a
        .config
        .as_ref()
        .map_or(String::new(), |c| format!(" for configuration {c}"));
    println!(
        "\nPrecompiled header{cfg}: {} headers, {} files, {} to parse once",
        a.headers.len(),
        th(a.files),
        secs(a.content_ms / 1000.0)
    );
    // In ms below 0.1 s, as the app: a small PCH's load printed "0.000 s loading it".
    println!(
        "predicted per clean build: {} saved - {} loading it - {} building it = {} net (naive \
         choice, the same number of headers by Total Parsed: {})",
        secs(a.saved_s),
        secs(a.load_s),
        secs(a.build_s),
        secs(a.net_s),
        secs(a.naive_net_s)
    );
    if let (Some(d), Some(c), Some(s), Some(n)) =
        (a.churn_days, a.churn_commits, a.churn_s, a.period_net_s)
    {
        println!(
            "history ({d} days): {c} commits changed a file of it, rebuilding every TU: {}; \
             net over the period's builds {}",
            secs(s),
            secs(n)
        );
    }
    println!(
        "{:>10} {:>10} {:>6} {:>6}  header",
        "gain s", "ms per TU", "TUs", "files"
    );
    for h in &a.headers {
        println!(
            "{:>10} {:>10} {:>6} {:>6}  {}",
            f3(h.gain_s),
            f3(h.cost_ms),
            th(h.tus),
            th(h.files_added),
            h.path
        );
    }
    match out {
        Some(p) => println!(
            "wrote {}; build: clang++ <flags> {}; use: {} (g++: {})",
            p.display(),
            a.build_flags.join(" "),
            a.use_flags_clang.join(" "),
            a.use_flags_gcc.join(" ")
        ),
        None => println!("(write it with --pch-out FILE)"),
    }
    if let Some(c) = &a.check {
        println!(
            "\nVerified on {} TUs (clang -fsyntax-only, CPU seconds; without a PCH {}):",
            c.tus,
            secs(c.without_s)
        );
        println!(
            "{:<8} {:>10} {:>10} {:>10} {:>8} {:>10}",
            "", "with", "measured", "predicted", "error", "PCH build"
        );
        for (name, m) in [("advised", &c.advised), ("naive", &c.naive)] {
            println!(
                "{name:<8} {:>10} {:>10} {:>10} {:>7.1}% {:>10}",
                f3(m.with_s),
                f3(m.measured_saving_s),
                f3(m.predicted_saving_s),
                m.error_percent,
                f3(m.build_s)
            );
        }
        for (name, m) in [("advised", &c.advised), ("naive", &c.naive)] {
            // A load the medians cannot tell from zero is said so, not "0.0 ms per TU".
            let load = if m.load_ms > 0.0 {
                format!(
                    "loading it costs {} per TU (measured: {} of its {} of headers)",
                    clipforge_pipeline::report::format_ms(m.load_ms),
                    f3(m.load_fraction),
                    clipforge_pipeline::report::format_ms(m.content_ms)
                )
            } else {
                format!(
                    "loading it took no measurable time per TU (within the timing noise; its \
                     headers take {})",
                    clipforge_pipeline::report::format_ms(m.content_ms)
                )
            };
            println!(
                "{name} PCH: {load}; with the advice's load fraction the prediction was {}",
                secs(m.advice_predicted_saving_s)
            );
        }
        for n in &c.notes {
            println!("note: {n}");
        }
    }
}

/// The predicted build time and the headers ranked by the seconds they add.
fn print_timing(r: &Report, top: usize) {
    let (Some(total), Some(m)) = (r.predicted_frontend_s, r.measured_tus) else {
        return;
    };
    println!(
        "\nFrontend time: {} predicted for {} TUs ({} measured)",
        secs(total),
        th(r.translation_units),
        th(m)
    );
    println!("\nHeaders by seconds (exclusive frontend ms per TU x TUs reaching it):");
    println!(
        "{:>10} {:>10} {:>6} {:>8}  path",
        "seconds", "ms per TU", "TUs", "lines"
    );
    let mut hs: Vec<_> = r
        .headers
        .iter()
        .filter(|h| h.seconds_contributed.unwrap_or(0.0) > 0.0)
        .collect();
    hs.sort_by(|a, b| {
        b.seconds_contributed
            .partial_cmp(&a.seconds_contributed)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.path.cmp(&b.path))
    });
    for h in hs.into_iter().take(top) {
        println!(
            "{:>10} {:>10} {:>6} {:>8}  {}{}",
            f3(h.seconds_contributed.unwrap_or(0.0)),
            f3(h.cost_ms.unwrap_or(0.0)),
            th(h.tu_count),
            th(h.lines),
            h.path,
            if h.cost_measured == Some(false) {
                "  [est. from lines]"
            } else {
                ""
            }
        );
    }
}

fn print_what_if(what: &str, w: &clipforge_headers::report::WhatIfResult) {
    println!(
        "\nWhat if {what}: Total Parsed {} -> {} (-{}, {:.2}%), {} TUs affected ({})",
        th(w.total_parsed_before),
        th(w.total_parsed_after),
        th(w.saved),
        w.saved_percent,
        th(w.tus_affected),
        w.note
    );
}

/// Runs `clipforge headers`.
pub fn run(args: &HeadersArgs) -> ExitCode {
    reexec_with_huge_pages();
    match run_inner(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("clipforge headers: {e}");
            ExitCode::from(2)
        }
    }
}

/// A one-shot scan allocates tens of MB in a process that lives a fraction of a second: let
/// glibc grow the heap in large steps instead of a system call and page-fault round per 128 KiB
/// (a warm rescan spends about a tenth of its time there otherwise).
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes allocator parameters; called before the scan allocates.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

/// Even in large steps, each fresh 4 KiB page still costs a fault: a quarter of a warm rescan's
/// CPU, and 15% of a cold scan's wall time on gRPC core. glibc backs its heaps with transparent
/// huge pages when the `glibc.malloc.hugetlb` tunable is set, but tunables are read only at
/// process start (there is no `mallopt` for it), so the process runs itself again once with it
/// set. Skipped when THP is off, when the tunable is already there, or if the exec fails.
fn reexec_with_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        const TUNABLE: &str = "glibc.malloc.hugetlb";
        let cur = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if cur.contains(TUNABLE) || thp.is_empty() || thp.contains("[never]") {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let val = if cur.is_empty() {
            format!("{TUNABLE}=1")
        } else {
            format!("{cur}:{TUNABLE}=1")
        };
        // `exec` returns only when it failed; then the scan runs here, with small pages.
        let _ = std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("GLIBC_TUNABLES", val)
            .exec();
    }
}

fn print_churn(c: &Churn, top: usize) {
    println!(
        "\nRebuild cost from history (last {} days: {} commits, {} TU rebuilds, {:.1} per week):",
        c.days,
        th(c.commits),
        th(c.tu_rebuilds),
        c.tu_rebuilds_per_week
    );
    println!(
        "{:>12} {:>9} {:>8} {:>6}  path",
        "TU rebuilds", "per week", "commits", "TUs"
    );
    for f in c.files.iter().filter(|f| !f.tu).take(top) {
        println!(
            "{:>12} {:>9.1} {:>8} {:>6}  {}",
            th(f.tu_rebuilds),
            f.tu_rebuilds_per_week,
            th(f.commits),
            th(f.tus),
            f.path
        );
    }
}

/// The timing flags' own checks (`--measure`, `--time-trace`, `--pch`), before any scan.
fn check_timing_args(args: &HeadersArgs) -> Result<(), String> {
    let timing_wanted = args.measure.is_some() || args.time_trace.is_some();
    if timing_wanted && Mode::from(args.mode) == Mode::AllBranches {
        return Err(
            "--measure / --time-trace: a TU's cost is predicted from its preprocessed closure; \
             use --mode preprocessed"
                .into(),
        );
    }
    if args.pch.is_some() && !timing_wanted {
        return Err(
            "--pch: the advice needs measured costs; add --measure N or --time-trace DIR".into(),
        );
    }
    if args.measure == Some(0) {
        return Err("--measure: give a number of translation units (1 or more)".into());
    }
    if let Some(d) = &args.time_trace
        && !d.is_dir()
    {
        return Err(format!("--time-trace {}: folder not found", d.display()));
    }
    Ok(())
}

fn run_inner(args: &HeadersArgs) -> Result<(), String> {
    if args.roots.is_empty() && args.compile_commands.is_none() && args.configs.is_empty() {
        return Err(
            "give at least one source root (or --compile-commands FILE, or --config NAME=FILE)"
                .into(),
        );
    }
    let project = args.project()?;
    if !project.configs.is_empty() && Mode::from(args.mode) == Mode::AllBranches {
        return Err(
            "--config: the per-configuration figures are preprocessed ones (all \
                    branches ignores macros); use --mode preprocessed"
                .into(),
        );
    }
    let timing_wanted = args.measure.is_some() || args.time_trace.is_some();
    check_timing_args(args)?;
    let opts = args.options();
    // History is read before the scan: a tree without git says so at once.
    let history = match &args.churn {
        Some(p) => {
            let days = churn::parse_period(p).map_err(|e| format!("--churn: {e}"))?;
            let h = churn::read_history(&project.history_dirs(), days)
                .map_err(|e| format!("--churn: {e}"))?;
            for n in &h.notes {
                eprintln!("clipforge: --churn: {n}");
            }
            Some((h.days, h))
        }
        None => None,
    };
    if args.watch {
        let mut scanner = clipforge_headers::Scanner::new();
        let stop = clipforge_base::task::CancelToken::new();
        return clipforge_headers::watch::watch(&project, &opts, &mut scanner, &stop, |res| {
            match res {
                Ok(r) => print_summary(&r.primary, r.secondary.as_ref()),
                Err(e) => eprintln!("clipforge headers: {e}"),
            }
            println!("-- watching for changes (Ctrl-C to stop)");
            true
        })
        .map_err(|e| e.to_string());
    }
    tune_allocator();
    let progress = Progress::default();
    let mut scanner = clipforge_headers::Scanner::new();
    scanner.map_cache_file = true;
    // The reports are written while the cache is saved.
    let (res, out, saved) =
        clipforge_headers::scan_cached_then(&mut scanner, &project, &opts, &progress, |res| {
            // With --churn, the primary report with its churn figures (a copy: the scan's own
            // report is shared with the cache save running meanwhile).
            let with_churn = history.as_ref().map(|(days, h)| {
                let pre = if res.primary.mode == Mode::Preprocessed {
                    &res.primary
                } else {
                    res.secondary.as_ref().unwrap_or(&res.primary)
                };
                let c = churn::compute(pre, h, *days);
                let mut r = res.primary.clone();
                c.apply(&mut r);
                (c, r)
            });
            let timed = if timing_wanted {
                let mut r = with_churn
                    .as_ref()
                    .map_or_else(|| res.primary.clone(), |x| x.1.clone());
                let h = history.as_ref().map(|(d, h)| (h, *d));
                add_timing(args, &project, &mut r, h)?;
                Some(r)
            } else {
                None
            };
            let r = timed
                .as_ref()
                .or(with_churn.as_ref().map(|x| &x.1))
                .unwrap_or(&res.primary);
            print_summary(r, res.secondary.as_ref());
            if !args.quiet {
                print_tables(r, args.top);
            }
            if let Some((c, _)) = &with_churn {
                print_churn(c, args.top);
            }
            if timing_wanted {
                print_timing(r, args.top);
                print_pch(r, args.pch_out.as_deref());
            }
            if let Some(n) = args.cuts {
                print_cuts(r, n);
            }
            if let Some(p) = &args.json {
                write_out(p, &r.to_json())?;
            }
            if let Some(p) = &args.csv {
                write_out(p, &r.to_csv())?;
            }
            if let Some(p) = &args.dot {
                write_out(p, &r.to_dot())?;
            }
            if let Some(p) = &args.closures {
                write_out(p, &r.closures_json())?;
            }
            if let Some(h) = &args.why {
                let chain = r
                    .why_chain(h, args.from.as_deref())
                    .map_err(|e| e.to_string())?;
                println!("\nWhy is {h} included ({}):", r.mode);
                for (i, s) in chain.iter().enumerate() {
                    if s.line > 0 {
                        println!("  {}{}:{}  #include", "  ".repeat(i), s.file, s.line);
                    } else {
                        println!("  {}{}", "  ".repeat(i), s.file);
                    }
                }
            }
            if let Some(v) = &args.remove_include {
                let w = r
                    .what_if(&WhatIf::RemoveInclude {
                        from: v[0].clone(),
                        to: v[1].clone(),
                    })
                    .map_err(|e| e.to_string())?;
                print_what_if(&format!("{} did not include {}", v[0], v[1]), &w);
            }
            if let Some(h) = &args.empty {
                let w = r
                    .what_if(&WhatIf::EmptyFile(h.clone()))
                    .map_err(|e| e.to_string())?;
                print_what_if(&format!("{h} were empty"), &w);
            }
            Ok::<(), String>(())
        })
        .map_err(|e| e.to_string())?;
    // The process ends right after: skip freeing the scan's many small allocations.
    std::mem::forget(scanner);
    if let Err(n) = saved {
        eprintln!("note: {n}");
    }
    out?;
    std::mem::forget(res);
    Ok(())
}
