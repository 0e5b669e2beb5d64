//! The clip commands of the `clipforge` command line (`compress`, `inspect`, `decompress`,
//! `convert`, `watch`): argument types and implementations, so `main.rs` stays a dispatcher.
//! Documented in `docs/CLI.md`.

use clipforge_anim::formats::{self, ClipFormat};
use clipforge_anim::limits::CheckMemoryBudget;
use clipforge_anim::{ClipReader, CompressionSettings, RawClip};
use clipforge_pipeline::folder_settings::{Overrides, SettingsResolver};
use clipforge_pipeline::report::{BatchReport, ClipReport, ClipStatus};
use clipforge_pipeline::watch::{WatchEventKind, WatchOptions, start_watch};
use clipforge_pipeline::{
    BatchOptions, CancelToken, ClipFile, Progress, ScanOptions, clip_stem, read_input,
    run_batch_configured, sanitize_name, scan_with,
};
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use super::clip_input::{load_clip_file, not_cfa_message, select_clip};
// Shared with the other clip subcommands; still reachable here (`cli::compress::MemoryArgs`).
pub use super::clip_input::{MemoryArgs, SampleRateArgs};
use super::fail;

/// Compression settings shared by `compress` and `watch`.
#[derive(clap::Args, Debug, Clone)]
pub struct SettingsArgs {
    /// Largest error allowed, in cm (object-space virtual-vertex distance); wins over the
    /// folders' clipforge.toml [default: the folder's, else 0.01].
    #[arg(
        long = "error-threshold",
        value_name = "CM",
        allow_negative_numbers = true
    )]
    pub error_threshold: Option<f32>,
    /// Virtual-vertex (shell) distance, in cm, for the bones the clip file gives no shell distance
    /// of their own (3 cm, the default); wins over clipforge.toml's shell_distance. A bone's own
    /// non-default distance in the clip file wins over it; --bone and [[bone]] win over both
    /// (default: the folder's, else each bone's own, 3 cm unless the clip says).
    #[arg(
        long = "shell-distance",
        value_name = "CM",
        allow_negative_numbers = true
    )]
    pub shell_distance: Option<f32>,
    #[command(flatten)]
    pub sample_rate: SampleRateArgs,
    /// Leave out the clips whose path relative to the input folder matches this regular
    /// expression (repeatable; added to the folders' clipforge.toml `exclude`).
    #[arg(long = "exclude", value_name = "REGEX")]
    pub exclude: Vec<String>,
    /// A threshold (cm) and/or shell distance (cm) for the bones whose names match a glob:
    /// 'GLOB=CM', 'GLOB=CM,shell=CM' or 'GLOB=shell=CM' (repeatable; wins over the clip file's
    /// per-bone precision and the folders' [[bone]] tables; later ones win).
    #[arg(long = "bone", value_name = "GLOB=CM[,shell=CM]", value_parser = clipforge_pipeline::folder_settings::parse_bone_override)]
    pub bones: Vec<clipforge_pipeline::folder_settings::BoneOverride>,
    /// Worker threads (0 = all cores).
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0)]
    pub jobs: usize,
    /// Recompress everything, ignoring the skip cache.
    #[arg(long = "no-skip")]
    pub no_skip: bool,
    /// Follow symbolic links that lead to another filesystem than the input folder's (by
    /// default they are reported and left alone: a link into /sys or /proc never ends).
    #[arg(long = "other-filesystems")]
    pub other_filesystems: bool,
    #[command(flatten)]
    pub memory: MemoryArgs,
}

impl SettingsArgs {
    /// The options given explicitly: they win over every folder's clipforge.toml.
    pub fn overrides(&self) -> Result<Overrides, String> {
        if let Some(t) = self.error_threshold
            && !(t.is_finite() && t > 0.0)
        {
            return Err(format!(
                "--error-threshold must be a positive number of cm, got {t}"
            ));
        }
        if let Some(d) = self.shell_distance
            && !(d.is_finite() && d > 0.0)
        {
            return Err(format!(
                "--shell-distance must be a positive number of cm, got {d}"
            ));
        }
        let exclude = self
            .exclude
            .iter()
            .map(|p| {
                clipforge_pipeline::folder_settings::compile_exclude(p)
                    .map_err(|e| format!("--exclude '{p}': {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Overrides {
            error_threshold: self.error_threshold,
            shell_distance: self.shell_distance,
            sample_rate: self.sample_rate.sample_rate,
            exclude,
            bones: self.bones.clone(),
            ..Default::default()
        })
    }

    /// The settings a clip gets when neither a folder file nor this command line says.
    pub fn defaults(&self) -> CompressionSettings {
        CompressionSettings::default()
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct CompressArgs {
    /// Clip files or folders (searched recursively; dot folders skipped).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output folder; the input tree is mirrored in it, one .cfa per clip.
    #[arg(short = 'o', long = "output", value_name = "OUTDIR")]
    pub output: PathBuf,
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Write the JSON report here.
    #[arg(long, value_name = "REPORT")]
    pub json: Option<PathBuf>,
    /// Write the CSV report (one row per clip) here.
    #[arg(long, value_name = "REPORT")]
    pub csv: Option<PathBuf>,
    /// Print only the summary and the failures.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub struct DecompressArgs {
    /// A compressed clip (.cfa) or scalar track list (.cfs, written back as an ACL track list).
    #[arg(value_name = "FILE.cfa")]
    pub file: PathBuf,
    /// Output ACL clip file (.acl.sjson).
    #[arg(short = 'o', long = "output", value_name = "OUT.acl.sjson")]
    pub output: PathBuf,
    /// For an additive .cfa (which stores the layer alone): the raw base clip it was made
    /// against (the first clip of FILE; an additive ACL clip file, such as the one `convert
    /// --additive-base` wrote, gives its own base_tracks), written as the output's base_tracks.
    /// Without it the output has additive_format and no base.
    #[arg(long, value_name = "FILE")]
    pub base: Option<PathBuf>,
    /// With --base: the base is FILE's first frame alone (for a clip made with `convert
    /// --additive-base first-frame` from FILE).
    #[arg(long, requires = "base")]
    pub base_first_frame: bool,
    #[command(flatten)]
    pub memory: MemoryArgs,
}

#[derive(clap::Args, Debug, Clone)]
pub struct ConvertArgs {
    /// A clip file (the extensions are the formats table's).
    #[arg(value_name = "IN", help = format!("A {} clip file", formats::clip_extension_list(" or ")))]
    pub input: PathBuf,
    /// Output ACL clip file (.acl.sjson), or an existing folder.
    #[arg(short = 'o', long = "output", value_name = "OUT.acl.sjson")]
    pub output: PathBuf,
    /// Only this animation of a glTF file (name or index); default: every animation, one file each.
    #[arg(long, value_name = "NAME|INDEX")]
    pub clip: Option<String>,
    /// Write an additive clip (ACL's additive1, with its base): relative to each clip's first
    /// frame (`first-frame`), or to the first clip of FILE (same bones in the same order).
    #[arg(long, value_name = "FILE|first-frame")]
    pub additive_base: Option<String>,
    #[command(flatten)]
    pub sample_rate: SampleRateArgs,
    #[command(flatten)]
    pub memory: MemoryArgs,
}

#[derive(clap::Args, Debug, Clone)]
pub struct WatchArgs {
    /// Folder to watch (recursively).
    #[arg(
        value_name = "IN",
        required_unless_present = "pipelines",
        conflicts_with = "pipelines"
    )]
    pub input: Option<PathBuf>,
    /// Output folder (mirrors the input tree).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "OUT",
        required_unless_present = "pipelines",
        conflicts_with = "pipelines"
    )]
    pub output: Option<PathBuf>,
    /// Run every `[[pipeline]]` of this TOML file (input, output and settings each), all in
    /// this process; see docs/PIPELINE.md. The settings options then apply to every pipeline
    /// that does not set them itself.
    #[arg(long = "pipelines", value_name = "FILE.toml")]
    pub pipelines: Option<PathBuf>,
    #[command(flatten)]
    pub settings: SettingsArgs,
}

/// What [`collect_files`] found.
#[derive(Debug, Default)]
pub struct Collected {
    pub files: Vec<ClipFile>,
    /// Paths that are missing, not clip files, or special files named like clips: error rows.
    pub bad: Vec<ClipReport>,
    /// Special files (FIFOs, devices, sockets) met in the scanned folders and not named like
    /// clips: skipped (never opened), one warning line each.
    pub special: Vec<clipforge_pipeline::SpecialFile>,
    /// The given paths that do not exist, as their rows' `input` (each also one row of `bad`):
    /// the summary says so rather than counting a typo as a failed clip, and gives advice for
    /// a path, not for a file that could not be read.
    pub missing: Vec<String>,
    /// Links to folders the scans did not follow: one note line each.
    pub skipped_links: Vec<clipforge_pipeline::SkippedLink>,
    /// The scan was cancelled (Ctrl-C): the lists are incomplete.
    pub cancelled: bool,
}

/// Collects the clip files of the given paths; paths that are missing or not clips become error rows,
/// and so do special files (FIFOs, devices, sockets) named like clips, given or found in a folder.
/// Files under `output` (an output folder inside an input folder) are left out. `scan` says how
/// folders are walked (cancellation, other filesystems).
pub fn collect_files(paths: &[PathBuf], output: &Path, scan: &ScanOptions) -> Collected {
    let out_canon = output.canonicalize().ok();
    let mut files = Vec::new();
    let mut bad = Vec::new();
    let mut special = Vec::new();
    let mut missing = Vec::new();
    let mut skipped_links = Vec::new();
    for p in paths {
        if scan.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            return Collected {
                cancelled: true,
                ..Default::default()
            };
        }
        let bad_row = |msg: String| ClipReport {
            input: p.display().to_string(),
            clip: clip_stem(p),
            error: Some(format!("{}: {msg}", p.display())),
            failure: Some(clipforge_pipeline::report::Failure::Unreadable),
            ..Default::default()
        };
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bad.push(bad_row(missing_path_text(p).into()));
                missing.push(p.display().to_string());
                continue;
            }
            Err(e) => {
                bad.push(bad_row(format!("cannot read: {e}")));
                continue;
            }
        };
        if !meta.is_file() && !meta.is_dir() {
            bad.push(bad_row(format!(
                "not a regular file ({}): not a clip file",
                clipforge_base::fsio::file_kind(&meta.file_type())
            )));
            continue;
        }
        if p.is_file() && ClipFormat::from_path(p).is_none() {
            bad.push(bad_row(format!(
                "not a clip file (expected {})",
                formats::clip_extension_list(" or ")
            )));
            continue;
        }
        let inside_out = match (&out_canon, p.canonicalize()) {
            (Some(o), Ok(r)) if p.is_dir() => o.strip_prefix(&r).ok().map(Path::to_path_buf),
            _ => None,
        };
        let outside_output = |path: &Path| {
            !inside_out
                .as_ref()
                .is_some_and(|o| path.strip_prefix(p).is_ok_and(|rel| rel.starts_with(o)))
        };
        let found = scan_with(p, scan);
        if found.cancelled {
            return Collected {
                cancelled: true,
                ..Default::default()
            };
        }
        skipped_links.extend(found.skipped_links);
        files.extend(
            found
                .files
                .into_iter()
                .filter(|f| outside_output(&f.path))
                .filter(|f| !clipforge_pipeline::is_temp_file(&f.path)),
        );
        for s in found.special {
            if !outside_output(&s.path) {
                continue;
            }
            if s.clip_named {
                bad.push(ClipReport {
                    input: s.path.display().to_string(),
                    clip: clip_stem(&s.path),
                    error: Some(s.message()),
                    failure: Some(clipforge_pipeline::report::Failure::Unreadable),
                    ..Default::default()
                });
            } else {
                special.push(s);
            }
        }
    }
    Collected {
        files,
        bad,
        special,
        missing,
        skipped_links,
        cancelled: false,
    }
}

/// What a path that does not exist was meant to be, in words: a folder to scan (no extension),
/// a clip file (a clip's extension), else either ("The file could not be read" for a folder's
/// typo sent its user looking for a file).
fn missing_path_text(p: &Path) -> &'static str {
    if ClipFormat::from_path(p).is_some() {
        "does not exist (no such file)"
    } else if p.extension().is_none() {
        "does not exist (no such folder)"
    } else {
        "does not exist (no such file or folder)"
    }
}

/// Exit code of a run where no clip failed but some were refused as below float32 precision:
/// not 0 (an output asked for is missing, a build must not go on as if it were there), not 1
/// (nothing is broken: the fix is a setting). `docs/CLI.md` says it.
pub const EXIT_BELOW_PRECISION: u8 = 3;

/// `clipforge compress PATH... -o OUTDIR`: exit code 1 when any clip failed, else
/// [`EXIT_BELOW_PRECISION`] when a clip was refused as below float32 precision.
pub fn run_compress(args: &CompressArgs) -> ExitCode {
    args.settings.memory.apply();
    let overrides = match args.settings.overrides() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let settings = args.settings.defaults();
    if let Err(e) = std::fs::create_dir_all(&args.output) {
        return fail(format!(
            "{}: cannot create the output folder: {e}",
            args.output.display()
        ));
    }
    let cancel = CancelToken::default();
    let interrupt = install_interrupt(&cancel, &args.output);
    let Collected {
        files,
        bad,
        special,
        missing,
        skipped_links,
        cancelled,
    } = crate::cli::progress::while_scanning(
        &ScanOptions {
            cancel: Some(cancel.clone()),
            other_filesystems: args.settings.other_filesystems,
            ..Default::default()
        },
        |scan| collect_files(&args.paths, &args.output, scan),
    );
    if cancelled {
        // Ctrl-C during the scan: nothing was compressed or written yet.
        say!("clipforge: interrupted while scanning: nothing compressed");
        return ExitCode::from(clipforge_pipeline::interrupt::EXIT_INTERRUPTED);
    }
    for l in &skipped_links {
        say!("note: {}", l.message());
    }
    let (files, excluded) = without_excluded(files, &settings, &overrides);
    for s in &special {
        say!("warning: {}", s.message());
    }
    let options = BatchOptions {
        settings,
        output_root: args.output.clone(),
        jobs: args.settings.jobs,
        use_skip_cache: !args.settings.no_skip,
    };
    let progress = Progress::default();
    let (tty, quiet, started) = (std::io::stderr().is_terminal(), args.quiet, Instant::now());
    let on_row = |r: &ClipReport| print_row(r, &progress, started, tty, quiet);
    let mut report =
        run_batch_configured(&files, &options, &overrides, &progress, &cancel, &on_row);
    if tty && quiet {
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), "\r\x1b[K");
    }
    for r in &bad {
        say!("FAILED {}", r.error.as_deref().unwrap_or_default());
    }
    report.clips.extend(bad);
    report.recompute_totals();
    print_summary(&report, &missing, files.len());
    if excluded > 0 {
        say!(
            "{} left out by exclude patterns",
            clipforge_pipeline::report::count(excluded, "clip file", "clip files")
        );
    }
    if !special.is_empty() {
        say!(
            "{} skipped (not regular files, not named like clips)",
            clipforge_pipeline::report::count(special.len(), "special file", "special files")
        );
    }
    let interrupted = interrupt.as_ref().is_some_and(|i| i.received().is_some());
    let mut code = if interrupted {
        ExitCode::from(clipforge_pipeline::interrupt::EXIT_INTERRUPTED)
    } else if report.totals.failed > 0 {
        ExitCode::FAILURE
    } else if report.totals.below_precision > 0 {
        ExitCode::from(EXIT_BELOW_PRECISION)
    } else {
        ExitCode::SUCCESS
    };
    if !write_reports(args, &report) {
        code = ExitCode::FAILURE;
    }
    code
}

/// Ctrl-C finishes the clips in flight and saves the skip cache and the report; `None` (said)
/// when the handler cannot be installed.
fn install_interrupt(
    cancel: &CancelToken,
    output: &Path,
) -> Option<clipforge_pipeline::interrupt::Interrupt> {
    match clipforge_pipeline::interrupt::install(
        cancel.clone(),
        "interrupted: finishing the clips in flight, then saving the skip cache and the report \
         (interrupt again to stop at once)"
            .into(),
        output.to_path_buf(),
    ) {
        Ok(i) => Some(i),
        Err(e) => {
            say!("clipforge: cannot handle Ctrl-C: {e}");
            None
        }
    }
}

/// The files left after the exclude patterns (command line and folder files, over the path
/// relative to its input), and how many were left out.
fn without_excluded(
    files: Vec<ClipFile>,
    settings: &CompressionSettings,
    overrides: &Overrides,
) -> (Vec<ClipFile>, usize) {
    let excluder = SettingsResolver::new(settings.clone(), overrides.clone());
    let before = files.len();
    let files: Vec<ClipFile> = files
        .into_iter()
        .filter(|f| {
            !excluder.excluded(
                &clipforge_pipeline::folder_settings::root_of(&f.path, &f.relative),
                &f.path,
            )
        })
        .collect();
    let excluded = before - files.len();
    (files, excluded)
}

/// One clip's progress line (`[3/113 files · …] compressed walk.bvh (walk): …`); under `-q` only
/// failures, with the progress prefix kept on a terminal's last line.
fn print_row(r: &ClipReport, progress: &Progress, started: Instant, tty: bool, quiet: bool) {
    let at = crate::cli::progress::batch_prefix(progress, started);
    let line = if let Some(e) = &r.error {
        match r.status() {
            // Remembered by the skip cache: the same file at the same settings, not tried again.
            ClipStatus::BelowPrecision if r.skipped => {
                format!("{at} REFUSED {e} (unchanged since the last run)")
            }
            ClipStatus::BelowPrecision => format!("{at} REFUSED {e}"),
            _ => format!("{at} FAILED {e}"),
        }
    } else if quiet {
        if tty {
            let _ = write!(std::io::stderr(), "\r{at}\x1b[K");
        }
        return;
    } else {
        format!(
            "{at} {} {} ({}): {}, {}, {}",
            if r.skipped {
                "up to date"
            } else {
                "compressed"
            },
            r.input,
            r.clip,
            clipforge_pipeline::report::format_ratio(r.ratio, 1),
            r.error_summary(),
            // A skipped row's time is the earlier run's: it read as this run's work.
            if r.skipped {
                "unchanged since the last run".to_string()
            } else {
                format_clip_ms(r.compress_ms)
            }
        )
    };
    if tty {
        say!("\r{line}\x1b[K");
    } else {
        say!("{line}");
    }
    // What the importer, the mesh check or the settings noted (a per-bone table that selects no
    // bone, an FBX skin read another way): in the JSON report only, a user never saw it.
    for w in &r.warnings {
        say!("  warning: {w}");
    }
}

/// A clip's compression time on its progress line: the app's words ("< 0.1 ms", not "0.0 ms").
pub fn format_clip_ms(ms: f64) -> String {
    crate::pipeline::report::format_ms(ms)
}

/// Writes `--json` and `--csv`; false (said) when one could not be written. A report never
/// overwrites a clip of the run (`--json walk.bvh` is a typo, not a wish).
fn write_reports(args: &CompressArgs, report: &BatchReport) -> bool {
    let inputs: Vec<PathBuf> = report
        .clips
        .iter()
        .map(|c| PathBuf::from(&c.input))
        .collect();
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let mut ok = true;
    if let Some(p) = &args.json
        && let Err(e) = write_named_output(p, report.to_json().as_bytes(), &inputs)
    {
        say!("clipforge: cannot write the JSON report: {e}");
        ok = false;
    }
    if let Some(p) = &args.csv
        && let Err(e) = write_named_output(p, report.to_csv().as_bytes(), &inputs)
    {
        say!("clipforge: cannot write the CSV report: {e}");
        ok = false;
    }
    ok
}

/// `missing_inputs`: the inputs of the rows of paths that do not exist, counted in the report's
/// totals (each is an error row) but said apart here: they are not clips.
/// `files`: the input files the batch went through (the progress lines' unit).
fn print_summary(report: &BatchReport, missing_inputs: &[String], files: usize) {
    let t = &report.totals;
    let done = t.clips - t.failed - t.skipped - t.cancelled - t.below_precision;
    let missing = missing_inputs.len().min(t.failed);
    say!(
        "{}: {done} compressed, {} up to date, {} failed{}{}{} ({})",
        clipforge_pipeline::report::count(t.clips - missing, "clip", "clips"),
        t.skipped,
        t.failed - missing,
        if t.below_precision > 0 {
            format!(", {} below float32 precision", t.below_precision)
        } else {
            String::new()
        },
        if t.cancelled > 0 {
            format!(", {} cancelled", t.cancelled)
        } else {
            String::new()
        },
        match missing {
            0 => String::new(),
            1 => "; 1 path does not exist".to_string(),
            n => format!("; {n} paths do not exist"),
        },
        clipforge_pipeline::report::count(files, "file", "files")
    );
    for line in clipforge_pipeline::report::settings_sources_summary(&report.clips) {
        say!("{line}");
    }
    if t.raw_bytes > 0 {
        say!(
            "raw {} -> {} ({}), worst error {}",
            clipforge_anim::limits::format_bytes(t.raw_bytes),
            clipforge_anim::limits::format_bytes(t.compressed_bytes),
            clipforge_pipeline::report::format_ratio(t.ratio, 2),
            clipforge_pipeline::report::worst_error_summary(
                report.clips.iter().filter(|c| c.error.is_none())
            )
            .trim_start_matches("max error ")
        );
    }
    if done > 0 {
        say!(
            "wall {:.2} s, compression {:.2} s, {}; compress time p50 {:.2} ms, p85 {:.2} ms, p99 {:.2} ms",
            t.wall_ms / 1000.0,
            t.compress_ms / 1000.0,
            // In the binary units of the sizes above it (the report keeps KiB/s).
            clipforge_anim::limits::format_byte_rate(t.throughput_kb_s * 1024.0),
            t.compress_ms_p50,
            t.compress_ms_p85,
            t.compress_ms_p99
        );
    } else {
        // No rate nor compress times to give (it said "0 B/s"): say why, as the app does.
        say!(
            "wall {:.2} s{}; {}",
            t.wall_ms / 1000.0,
            if t.compress_ms > 0.0 {
                format!(", compression {:.2} s", t.compress_ms / 1000.0)
            } else {
                String::new()
            },
            nothing_compressed(t, missing)
        );
    }
    if t.failed > 0 {
        say!("failures:");
        // What to do, under the first failure of each kind (the app's clip detail says the same
        // `Failure::advice`); once per kind, so fifty broken files are not fifty equal hints.
        let mut advised = Vec::new();
        let mut path_advised = false;
        for c in report
            .clips
            .iter()
            .filter(|c| c.status() == ClipStatus::Failed)
        {
            say!("  {}", c.error.as_deref().unwrap_or_default());
            // A path given that does not exist: nothing was read, there is no file to check.
            if missing_inputs.contains(&c.input) {
                if !path_advised {
                    path_advised = true;
                    say!("    {}", missing_path_advice());
                }
                continue;
            }
            if let Some(kind) = c.failure.filter(|k| !advised.contains(k)) {
                advised.push(kind);
                say!("    {}", kind.advice());
            }
        }
    }
    if let Some(line) = clipforge_pipeline::report::below_precision_summary(&report.clips) {
        say!("{line}:");
        for c in &report.clips {
            if let Some(p) = &c.below_precision {
                say!(
                    "  {} (clip '{}'): floor {} cm at bone '{}', threshold {} cm",
                    c.input,
                    c.clip,
                    clipforge_pipeline::report::three_digits(p.floor_cm),
                    p.bone,
                    p.threshold_cm
                );
            }
        }
    }
}

/// "nothing compressed: 3 up to date, 1 failed": why a run compressed no clip, from the counts
/// of the summary's first line.
/// Under the first path given that does not exist: where a relative path was looked for.
fn missing_path_advice() -> String {
    let here = std::env::current_dir().map_or(String::new(), |d| {
        format!(" (a relative path starts from {})", d.display())
    });
    format!("Nothing is at that path: check its spelling{here}, then compress again.")
}

fn nothing_compressed(t: &clipforge_pipeline::report::Totals, missing: usize) -> String {
    use clipforge_pipeline::report::count;
    let why: Vec<String> = [
        (t.skipped, "up to date".to_string()),
        (t.below_precision, "below float32 precision".to_string()),
        (t.failed - missing, "failed".to_string()),
        (t.cancelled, "cancelled".to_string()),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .chain((missing > 0).then(|| format!("{} not exist", count(missing, "path does", "paths do"))))
    .collect();
    if why.is_empty() {
        "nothing compressed".to_string()
    } else {
        format!("nothing compressed: {}", why.join(", "))
    }
}

// ---------------------------------------------------------------------------------------------
// decompress / convert

/// Writes a single named output (`-o`): `-` is standard output, a device or a symlink is written
/// through, never replaced, and an input of the run is never overwritten
/// ([`clipforge_base::fsio::write_output`]).
fn write_named_output(out: &Path, bytes: &[u8], inputs: &[&Path]) -> Result<(), String> {
    clipforge_base::fsio::write_output(out, bytes, inputs).map_err(|e| e.to_string())
}

fn write_acl(clip: &RawClip, out: &Path, inputs: &[&Path]) -> Result<(), String> {
    let text = formats::write_acl_clip(clip);
    if text.is_empty() {
        return Err("the ACL clip exporter produced nothing (not built yet?)".into());
    }
    write_named_output(out, text.as_bytes(), inputs)
}

/// True when `-o` names standard output or an existing device, FIFO or terminal: the output is
/// written there as it is, with no name of its own made up.
fn output_is_stream(output: &Path) -> bool {
    output.as_os_str() == clipforge_base::fsio::STDOUT_PATH
        || std::fs::metadata(output).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// `clipforge decompress FILE.cfa -o OUT.acl.sjson`.
pub fn run_decompress(args: &DecompressArgs) -> ExitCode {
    args.memory.apply();
    let bytes = match read_input(&args.file) {
        Ok(b) => b,
        Err(e) => return fail(e.message),
    };
    if clipforge_anim::runtime::scalar::is_scalar_buffer(&bytes) {
        return match clipforge_pipeline::scalar::decompress_scalar(&args.file, &bytes, &args.output)
        {
            Ok(line) => {
                say!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        };
    }
    let layer;
    let mut clip = match ClipReader::new(&bytes) {
        Ok(r) => match r.check_memory_budget() {
            Ok(()) => {
                layer = clipforge_anim::additive::format_from_code(r.additive_format());
                clipforge_anim::decompress::to_raw_clip(&r)
            }
            Err(e) => return fail(format!("{}: {e}", args.file.display())),
        },
        Err(e) => {
            return fail(not_cfa_message(&args.file, &bytes, &e.to_string()));
        }
    };
    if clip.name.is_empty() {
        clip.name = args
            .file
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".cfa").to_string())
            .unwrap_or_default();
    }
    let written = match (layer, &args.base) {
        (None, None) => write_acl(&clip, &args.output, &[&args.file]),
        (None, Some(_)) => {
            return fail(format!(
                "{}: not an additive clip; --base applies to additive clips only",
                args.file.display()
            ));
        }
        (Some(format), Some(path)) => {
            let given = match load_clip_file(path, &formats::ImportOptions::default()) {
                Ok(clips) if !clips.is_empty() => clips.into_iter().next().unwrap(),
                Ok(_) => {
                    return fail(format!(
                        "{}: the file holds no animation clip",
                        path.display()
                    ));
                }
                Err(e) => return fail(e),
            };
            match clipforge_anim::additive::base_for_layer(
                &clip,
                format,
                given,
                args.base_first_frame,
            ) {
                Ok(base) => {
                    clip.additive = Some(Box::new(base));
                    write_acl(&clip, &args.output, &[&args.file, path])
                }
                Err(e) => return fail(format!("--base {}: {e}", path.display())),
            }
        }
        (Some(format), None) => {
            say!(
                "clipforge: note: {} is an additive clip ({}); a .cfa does not store its base, so \
                 {} has additive_format and no base_tracks (readers assume an identity base); \
                 pass --base FILE to include it",
                args.file.display(),
                format.acl_name(),
                args.output.display()
            );
            let text = formats::write_acl_additive_without_base(
                &clip,
                format,
                &formats::AclWriteOptions::default(),
            );
            write_named_output(&args.output, text.as_bytes(), &[&args.file])
        }
    };
    match written {
        Ok(()) => {
            say!(
                "{} -> {} ({} bones, {} samples)",
                args.file.display(),
                args.output.display(),
                clip.num_bones(),
                clip.num_samples
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// Where `convert` writes clip `index` of `count`: `OUT.acl.sjson` for one clip, else
/// `OUT.<index>_<sanitised name>.acl.sjson`; an existing folder as OUT means `OUT/<input stem>…`.
pub fn convert_output_path(
    input: &Path,
    output: &Path,
    index: usize,
    count: usize,
    name: &str,
) -> PathBuf {
    let base = if output.is_dir() {
        output.join(clip_stem(input))
    } else {
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lower = name.to_ascii_lowercase();
        let stem = if lower.ends_with(".acl.sjson") {
            name[..name.len() - 10].to_string()
        } else {
            name
        };
        output.with_file_name(stem)
    };
    let file = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = if count == 1 {
        format!("{file}.acl.sjson")
    } else {
        format!("{file}.{index}_{}.acl.sjson", sanitize_name(name))
    };
    base.with_file_name(file)
}

/// `clipforge convert IN -o OUT.acl.sjson [--clip NAME|INDEX]`.
pub fn run_convert(args: &ConvertArgs) -> ExitCode {
    args.memory.apply();
    let clips = match load_clip_file(&args.input, &args.sample_rate.import_options()) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    if clips.is_empty() {
        return fail(format!(
            "{}: the file holds no animation clip",
            args.input.display()
        ));
    }
    let selected: Vec<(usize, RawClip)> = match &args.clip {
        Some(w) => match select_clip(clips, w, &args.input) {
            Ok(c) => vec![c],
            Err(e) => return fail(e),
        },
        None => clips.into_iter().enumerate().collect(),
    };
    // `-o clips/` names a folder even before it exists (else `clips/` would become `clips.acl.sjson`).
    let names_folder = args
        .output
        .as_os_str()
        .to_string_lossy()
        .ends_with(std::path::is_separator);
    // Only the last component is created: a mistyped parent is an error, not a new tree.
    if names_folder
        && !args.output.is_dir()
        && let Err(e) = std::fs::create_dir(&args.output)
    {
        return fail(format!(
            "{}: cannot create folder: {e}",
            args.output.display()
        ));
    }
    let count = selected.len();
    let to_stream = output_is_stream(&args.output);
    if to_stream && count > 1 {
        return fail(format!(
            "{}: holds {count} clips and {} takes one; choose it with --clip NAME|INDEX",
            args.input.display(),
            args.output.display()
        ));
    }
    let mut code = ExitCode::SUCCESS;
    let base_clip = match args.additive_base.as_deref() {
        None | Some("first-frame") => None,
        Some(file) => {
            let path = Path::new(file);
            match load_clip_file(path, &args.sample_rate.import_options()) {
                Ok(clips) if !clips.is_empty() => clips.into_iter().next(),
                Ok(_) => return fail(format!("{file}: the file holds no animation clip")),
                Err(e) => return fail(e),
            }
        }
    };
    for (index, clip) in &selected {
        let additive;
        let clip = match &args.additive_base {
            None => clip,
            Some(_) => {
                let base = match &base_clip {
                    Some(b) => b.clone(),
                    None => clipforge_anim::additive::first_frame(clip),
                };
                let format = clipforge_anim::additive::AdditiveFormat::DEFAULT;
                match clipforge_anim::additive::make_additive(clip, &base, format) {
                    Ok(a) => {
                        additive = a;
                        &additive
                    }
                    Err(e) => {
                        say!("clipforge: {}: {e}", args.input.display());
                        code = ExitCode::FAILURE;
                        continue;
                    }
                }
            }
        };
        // With --clip, `count` is 1: the output is named after the input alone.
        let out = if to_stream {
            args.output.clone()
        } else {
            convert_output_path(&args.input, &args.output, *index, count, &clip.name)
        };
        let mut inputs = vec![args.input.as_path()];
        if let Some(base) = args
            .additive_base
            .as_deref()
            .filter(|b| *b != "first-frame")
        {
            inputs.push(Path::new(base));
        }
        match write_acl(clip, &out, &inputs) {
            Ok(()) => say!(
                "{} ({}) -> {} ({} bones, {} samples)",
                args.input.display(),
                clip.name,
                out.display(),
                clip.num_bones(),
                clip.num_samples
            ),
            Err(e) => {
                say!("clipforge: {e}");
                code = ExitCode::FAILURE;
            }
        }
    }
    code
}

// ---------------------------------------------------------------------------------------------
// watch

/// One watch to start: a name (for the log lines; empty for a single watch), its input and
/// its options.
struct WatchPlan {
    name: String,
    input: PathBuf,
    options: WatchOptions,
}

/// The watches `clipforge watch` runs: one for `IN -o OUT`, one per pipeline for `--pipelines`.
fn watch_plans(args: &WatchArgs) -> Result<Vec<WatchPlan>, String> {
    let overrides = args.settings.overrides()?;
    let defaults = args.settings.defaults();
    let Some(file) = &args.pipelines else {
        let (Some(input), Some(output)) = (&args.input, &args.output) else {
            return Err("watch needs IN and -o OUT, or --pipelines FILE.toml".into());
        };
        let mut options = WatchOptions::new(defaults, output);
        options.batch.jobs = args.settings.jobs;
        options.batch.use_skip_cache = !args.settings.no_skip;
        options.other_filesystems = args.settings.other_filesystems;
        options.overrides = overrides;
        return Ok(vec![WatchPlan {
            name: String::new(),
            input: input.clone(),
            options,
        }]);
    };
    let parsed =
        clipforge_pipeline::pipelines::PipelinesFile::load(file).map_err(|e| e.to_string())?;
    clipforge_pipeline::pipelines::check_overlaps(&parsed.pipelines).map_err(|e| e.to_string())?;
    if args.settings.memory.max_memory.is_none()
        && let Some(bytes) = parsed.max_memory
    {
        clipforge_anim::limits::set_max_memory_bytes(bytes);
    }
    Ok(parsed
        .pipelines
        .into_iter()
        .map(|p| {
            let mut options = WatchOptions::new(defaults.clone(), &p.output);
            options.batch.jobs = if p.jobs > 0 {
                p.jobs
            } else {
                args.settings.jobs
            };
            options.batch.use_skip_cache = !(p.no_skip || args.settings.no_skip);
            options.other_filesystems = args.settings.other_filesystems;
            // The pipeline's own keys win; the command line's apply to the others.
            let mut exclude = overrides.exclude.clone();
            exclude.extend(p.exclude);
            options.overrides = Overrides {
                error_threshold: p.error_threshold.or(overrides.error_threshold),
                shell_distance: p.shell_distance.or(overrides.shell_distance),
                sample_rate: p.sample_rate.or(overrides.sample_rate),
                exclude,
                bones: overrides.bones.clone(),
                ..Default::default()
            };
            WatchPlan {
                name: p.name,
                input: p.input,
                options,
            }
        })
        .collect())
}

/// `clipforge watch IN -o OUT` or `clipforge watch --pipelines FILE.toml`: runs until killed
/// (SIGINT or SIGTERM stop every watch cleanly), one line per event on stdout. Each watch first
/// catches up with what changed while nothing watched it.
pub fn run_watch(args: &WatchArgs) -> ExitCode {
    args.settings.memory.apply();
    let plans = match watch_plans(args) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let mut handles = Vec::with_capacity(plans.len());
    for plan in plans {
        match start_watch(&plan.input, plan.options) {
            Ok(h) => handles.push((plan.name, h)),
            Err(e) if plan.name.is_empty() => return fail(e),
            Err(e) => return fail(format!("pipeline '{}': {e}", plan.name)),
        }
    }
    // The first signal stops every watch through its own stop (the clip in flight is abandoned
    // without a partial file, the skip cache is saved); a second one exits at once.
    let interrupt = match clipforge_pipeline::interrupt::install_many(
        CancelToken::default(),
        "stopping the watch (interrupt again to stop at once)".into(),
        handles
            .iter()
            .map(|(_, h)| h.output_root().to_path_buf())
            .collect(),
    ) {
        Ok(i) => Some(i),
        Err(e) => {
            say!("clipforge: cannot handle Ctrl-C: {e}");
            None
        }
    };
    for (name, h) in &handles {
        say!(
            "{}watching {} -> {} (Ctrl-C to stop)",
            prefix(name),
            h.input_root().display(),
            h.output_root().display()
        );
    }
    loop {
        if interrupt.as_ref().is_some_and(|i| i.received().is_some()) {
            for (name, h) in &mut handles {
                h.stop();
                while let Ok(ev) = h.events().try_recv() {
                    print_watch_event(name, &ev);
                }
            }
            say!("watch stopped");
            return ExitCode::SUCCESS;
        }
        let mut any = false;
        let mut running = false;
        for (name, h) in &handles {
            while let Ok(ev) = h.events().try_recv() {
                print_watch_event(name, &ev);
                any = true;
            }
            running |= h.is_running();
        }
        if !running {
            break;
        }
        if !any {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    ExitCode::SUCCESS
}

/// `[name] ` before a pipeline's lines, nothing for a single watch.
fn prefix(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("[{name}] ")
    }
}

/// One line on stdout per watch event.
fn print_watch_event(name: &str, ev: &clipforge_pipeline::watch::WatchEvent) {
    let pre = prefix(name);
    let outs = ev
        .outputs
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if ev.retracts_failure {
        out!(
            "{pre}retracted  the FAILED line of {}: it changed since (it was still being written)",
            ev.path.display()
        );
    }
    match &ev.kind {
        WatchEventKind::Compressed => {
            out!(
                "{pre}compressed {} -> {outs} ({})",
                ev.path.display(),
                clipforge_pipeline::report::worst_error_summary(&ev.reports)
            );
        }
        WatchEventKind::Skipped => out!("{pre}up to date {} -> {outs}", ev.path.display()),
        WatchEventKind::Failed(m) => out!("{pre}FAILED     {m}"),
        WatchEventKind::BelowPrecision(m) => out!("{pre}REFUSED    {m}"),
        WatchEventKind::Removed => {
            out!("{pre}removed    {} (deleted: {outs})", ev.path.display())
        }
        WatchEventKind::WatchError(m) => out!("{pre}watch error {}: {m}", ev.path.display()),
    }
}
