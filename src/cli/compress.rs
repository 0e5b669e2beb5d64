//! The clip commands of the `clipforge` command line (`compress`, `inspect`, `decompress`,
//! `convert`, `watch`): argument types and implementations, so `main.rs` stays a dispatcher.
//! Documented in `docs/CLI.md`.

use clipforge_anim::formats::{self, ClipFormat};
use clipforge_anim::limits::CheckMemoryBudget;
use clipforge_anim::runtime::metadata::{Settings, Source};
use clipforge_anim::{ClipReader, CompressionSettings, RawClip, metric};
use clipforge_pipeline::folder_settings::{Overrides, SettingsResolver};
use clipforge_pipeline::report::{BatchReport, ClipReport};
use clipforge_pipeline::watch::{WatchEventKind, WatchOptions, start_watch};
use clipforge_pipeline::{
    BatchOptions, CancelToken, ClipFile, Progress, ScanOptions, clip_stem, read_input,
    run_batch_configured, sanitize_name, scan_with,
};
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

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

/// `--sample-rate`, on every command that imports clips.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SampleRateArgs {
    /// Sample FBX and glTF clips at this rate (1-1000 Hz) instead of the file's frame rate
    /// (FBX) or its keyframe grid's (glTF); wins over clipforge.toml. ACL and BVH files store
    /// their samples and are never resampled.
    #[arg(long = "sample-rate", value_name = "HZ", value_parser = parse_sample_rate)]
    pub sample_rate: Option<f64>,
}

impl SampleRateArgs {
    pub fn import_options(&self) -> formats::ImportOptions {
        formats::ImportOptions {
            sample_rate: self.sample_rate,
        }
    }
}

fn parse_sample_rate(s: &str) -> Result<f64, String> {
    let hz: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of Hz"))?;
    formats::check_sample_rate(hz)
}

/// `--max-memory`, on every command that imports or decodes clips.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct MemoryArgs {
    /// Memory one clip's import and compression may use (e.g. 512M, 2G); a clip that would need
    /// more is refused with an error saying so (default: a quarter of physical memory).
    #[arg(long = "max-memory", value_name = "SIZE", value_parser = clipforge_anim::limits::parse_memory_size)]
    pub max_memory: Option<u64>,
}

impl MemoryArgs {
    /// Sets the process-wide budget ([`clipforge_anim::limits::set_max_memory_bytes`]).
    pub fn apply(&self) {
        if let Some(bytes) = self.max_memory {
            clipforge_anim::limits::set_max_memory_bytes(bytes);
        }
    }
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
pub struct InspectArgs {
    /// A compressed clip (.cfa) or scalar track list (.cfs).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The original clip: also measure the error of the .cfa against it.
    #[arg(long, value_name = "CLIP")]
    pub raw: Option<PathBuf>,
    /// Which animation of a --raw glTF file (name or index; default: the one named in the .cfa file name, else the first).
    #[arg(long, value_name = "NAME|INDEX")]
    pub clip: Option<String>,
    /// List every bone (name, parent, shell distance).
    #[arg(long)]
    pub bones: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    // The --sample-rate the .cfa was compressed with, to import a --raw FBX or glTF the same way.
    #[command(flatten)]
    pub sample_rate: SampleRateArgs,
    #[command(flatten)]
    pub memory: MemoryArgs,
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

/// `eprintln!` that never panics (a closed stderr pipe is not our problem).
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

/// `println!` that never panics (`clipforge inspect ... | head`).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    say!("clipforge: {msg}");
    ExitCode::FAILURE
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
    /// How many of the given paths do not exist (each also one row of `bad`): the summary says
    /// so rather than counting a typo as a failed clip.
    pub missing: usize,
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
    let mut missing = 0;
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
            ..Default::default()
        };
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bad.push(bad_row("does not exist (no such file or folder)".into()));
                missing += 1;
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

/// `clipforge compress PATH... -o OUTDIR`: exit code 1 when any clip failed.
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
    let interrupt = match clipforge_pipeline::interrupt::install(
        cancel.clone(),
        "interrupted: finishing the clips in flight, then saving the skip cache and the report \
         (interrupt again to stop at once)"
            .into(),
        args.output.clone(),
    ) {
        Ok(i) => Some(i),
        Err(e) => {
            say!("clipforge: cannot handle Ctrl-C: {e}");
            None
        }
    };
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
    // Exclude patterns (command line and folder files), over the path relative to its input.
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
    let on_row = |r: &ClipReport| {
        let at = crate::cli::progress::batch_prefix(&progress, started);
        let line = if let Some(e) = &r.error {
            format!("{at} FAILED {}", e)
        } else if quiet {
            if tty {
                let _ = write!(std::io::stderr(), "\r{at}\x1b[K");
            }
            return;
        } else {
            format!(
                "{at} {} {} ({}): {}, {}, {:.1} ms",
                if r.skipped {
                    "up to date"
                } else {
                    "compressed"
                },
                r.input,
                r.clip,
                clipforge_pipeline::report::format_ratio(r.ratio, 1),
                r.error_summary(),
                r.compress_ms
            )
        };
        if tty {
            say!("\r{line}\x1b[K");
        } else {
            say!("{line}");
        }
    };
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
    print_summary(&report, missing, files.len());
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
    } else {
        ExitCode::SUCCESS
    };
    // A report never overwrites a clip of the run (`--json walk.bvh` is a typo, not a wish).
    let inputs: Vec<PathBuf> = report
        .clips
        .iter()
        .map(|c| PathBuf::from(&c.input))
        .collect();
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    if let Some(p) = &args.json
        && let Err(e) = write_named_output(p, report.to_json().as_bytes(), &inputs)
    {
        say!("clipforge: cannot write the JSON report: {e}");
        code = ExitCode::FAILURE;
    }
    if let Some(p) = &args.csv
        && let Err(e) = write_named_output(p, report.to_csv().as_bytes(), &inputs)
    {
        say!("clipforge: cannot write the CSV report: {e}");
        code = ExitCode::FAILURE;
    }
    code
}

/// `missing`: rows of paths that do not exist, counted in the report's totals (each is an error
/// row) but said apart here: they are not clips.
/// `files`: the input files the batch went through (the progress lines' unit).
fn print_summary(report: &BatchReport, missing: usize, files: usize) {
    let t = &report.totals;
    let done = t.clips - t.failed - t.skipped - t.cancelled;
    let missing = missing.min(t.failed);
    say!(
        "{}: {done} compressed, {} up to date, {} failed{}{} ({})",
        clipforge_pipeline::report::count(t.clips - missing, "clip", "clips"),
        t.skipped,
        t.failed - missing,
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
    say!(
        "wall {:.2} s, compression {:.2} s, {:.0} KB/s; compress time p50 {:.2} ms, p85 {:.2} ms, p99 {:.2} ms",
        t.wall_ms / 1000.0,
        t.compress_ms / 1000.0,
        t.throughput_kb_s,
        t.compress_ms_p50,
        t.compress_ms_p85,
        t.compress_ms_p99
    );
    if t.failed > 0 {
        say!("failures:");
        for c in report
            .clips
            .iter()
            .filter(|c| c.error.is_some() && !c.cancelled)
        {
            say!("  {}", c.error.as_deref().unwrap_or_default());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// inspect

/// What a `.cfa` file says about its own compression.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct CfaStats {
    pub runtime_bytes: usize,
    pub file_bytes: usize,
    pub ratio: f64,
    /// The compressor's figures, read back from the file (the same keys, in place).
    #[serde(flatten)]
    pub layout: clipforge_anim::ClipLayout,
}

/// Reads the compression figures out of a validated buffer.
pub fn cfa_stats(reader: &ClipReader) -> CfaStats {
    use clipforge_anim::runtime::format::{
        KIND_ANIMATED, KIND_CONSTANT, KIND_CONSTANT_Q, KIND_DEFAULT,
    };
    let mut st = CfaStats {
        runtime_bytes: reader.runtime_size(),
        file_bytes: reader.total_size(),
        layout: clipforge_anim::ClipLayout {
            segments: reader.num_segments() as u32,
            looping: reader.is_wrapping(),
            ..Default::default()
        },
        ..Default::default()
    };
    for b in 0..reader.num_bones() {
        for k in reader.subtrack_kinds(b) {
            match k {
                KIND_DEFAULT => st.layout.default_subtracks += 1,
                KIND_CONSTANT | KIND_CONSTANT_Q => st.layout.constant_subtracks += 1,
                KIND_ANIMATED => st.layout.animated_subtracks += 1,
                _ => {}
            }
        }
    }
    let mut hist = vec![0u32; clipforge_anim::runtime::quant::MAX_BITS as usize + 1];
    for seg in 0..reader.num_segments() {
        for w in reader.segment_widths(seg) {
            for x in w {
                if let Some(h) = hist.get_mut(x as usize) {
                    *h += 1;
                }
            }
        }
    }
    st.layout.bit_rate_histogram = hist;
    let raw = reader.num_bones() * reader.num_samples() * 40;
    st.ratio = if st.runtime_bytes > 0 {
        raw as f64 / st.runtime_bytes as f64
    } else {
        0.0
    };
    st
}

/// Picks a clip out of a file's clips by name or index.
pub fn select_clip(
    clips: Vec<RawClip>,
    which: &str,
    path: &Path,
) -> Result<(usize, RawClip), String> {
    let names: Vec<String> = clips.iter().map(|c| c.name.clone()).collect();
    let found = match clips.iter().position(|c| c.name == which) {
        Some(i) => Some(i),
        None => which.parse::<usize>().ok().filter(|&i| i < clips.len()),
    };
    match found {
        Some(i) => Ok((i, clips.into_iter().nth(i).expect("index checked"))),
        None => Err(format!(
            "{}: no animation '{which}'; it holds: {}",
            path.display(),
            names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{i}:{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// What a clip file the user gave to `inspect`/`decompress` holds, when it is not a `.cfa`:
/// by name first, else by its first bytes (a clip renamed, or saved without its extension).
fn sniff_clip_format(path: &Path, bytes: &[u8]) -> Option<&'static str> {
    let named = ClipFormat::from_path(path).map(|f| f.info().noun);
    if named.is_some() {
        return named;
    }
    let head = &bytes[..bytes.len().min(4096)];
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if head.starts_with(b"glTF") {
        Some("a glTF binary clip (.glb)")
    } else if head.starts_with(b"Kaydara FBX Binary") || text.starts_with("; FBX") {
        Some(ClipFormat::Fbx.info().noun)
    } else if text.starts_with("HIERARCHY") {
        Some(ClipFormat::Bvh.info().noun)
    } else if text.starts_with('{') && text.contains("\"asset\"") {
        Some(ClipFormat::Gltf.info().noun)
    } else if text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("version") && l.contains('=')
    }) && text.contains("clip")
    {
        Some(ClipFormat::AclSjson.info().noun)
    } else {
        None
    }
}

/// The error for a file that does not read as a `.cfa`: an empty file, a clip not compressed yet
/// (with the command that compresses or converts it), or the reader's own reason.
fn not_cfa_message(path: &Path, bytes: &[u8], reason: &str) -> String {
    let p = path.display();
    if bytes.is_empty() {
        return format!("{p}: empty file (not a compressed .cfa clip)");
    }
    match sniff_clip_format(path, bytes) {
        Some(what) => format!(
            "{p}: not a .cfa file: this is {what}, not a compressed one; compress it first \
             (clipforge compress {p} -o OUTDIR), or convert it to ACL's clip format \
             (clipforge convert {p} -o OUT.acl.sjson)"
        ),
        None => format!("{p}: not a valid .cfa file: {reason}"),
    }
}

/// `clipforge inspect FILE.cfa [--raw CLIP]`.
pub fn run_inspect(args: &InspectArgs) -> ExitCode {
    args.memory.apply();
    let bytes = match read_input(&args.file) {
        Ok(b) => b,
        Err(e) => return fail(e.message),
    };
    if clipforge_anim::runtime::scalar::is_scalar_buffer(&bytes) {
        return match clipforge_pipeline::scalar::inspect_scalar(
            &args.file,
            &bytes,
            args.raw.as_deref(),
            args.json,
        ) {
            Ok(text) => {
                out!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        };
    }
    let reader = match ClipReader::new(&bytes) {
        Ok(r) => r,
        Err(e) => {
            return fail(not_cfa_message(&args.file, &bytes, &e.to_string()));
        }
    };
    // Decoding allocates bones x samples: checked against the budget first.
    if let Err(e) = reader.check_memory_budget() {
        return fail(format!("{}: {e}", args.file.display()));
    }
    let decoded = clipforge_anim::decompress::to_raw_clip(&reader);
    let stats = cfa_stats(&reader);

    let mut measured = None;
    if let Some(raw_path) = &args.raw {
        let clips = match load_clip_file(raw_path, &args.sample_rate.import_options()) {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        if clips.is_empty() {
            return fail(format!(
                "{}: the file holds no animation clip",
                raw_path.display()
            ));
        }
        // Default: the animation index in the .cfa name (`robot.3_Jump.cfa`), else the first.
        let which = args.clip.clone().or_else(|| {
            let name = args.file.file_name()?.to_string_lossy().into_owned();
            let mid = name.strip_suffix(".cfa")?.rsplit_once('.')?.1.to_string();
            mid.split_once('_').map(|(i, _)| i.to_string())
        });
        let (_, raw) = match which.filter(|_| clips.len() > 1) {
            Some(w) => match select_clip(clips, &w, raw_path) {
                Ok(c) => c,
                Err(e) => return fail(e),
            },
            None => (0, clips.into_iter().next().expect("not empty")),
        };
        let mut raw = raw;
        // Measure with the shell distances stored in the .cfa (the ones it was compressed for).
        if raw.num_bones() == decoded.num_bones() {
            raw.skeleton.shell_distances = decoded.skeleton.shell_distances.clone();
        }
        // An additive original is measured on the combined pose (applied to its base).
        let stats = match &raw.additive {
            Some(add) => clipforge_anim::additive::measure_combined(
                &raw,
                add,
                &decoded,
                &[],
                &raw.skeleton.shell_distances,
            ),
            None => metric::measure(&raw, &decoded),
        };
        match stats {
            Ok(s) => measured = Some((raw, s)),
            Err(e) => {
                // An FBX or glTF original sampled at another rate than the .cfa's: say how to
                // import it the same way.
                let hint = if raw.num_samples != decoded.num_samples
                    && raw.sample_rate != decoded.sample_rate
                    && ClipFormat::from_path(raw_path).is_some_and(|f| f.is_sampled_from_curves())
                {
                    format!(
                        " (the .cfa is sampled at {} Hz, the original at {} Hz: give \
                         --sample-rate {} to sample it the same way)",
                        decoded.sample_rate, raw.sample_rate, decoded.sample_rate
                    )
                } else {
                    String::new()
                };
                return fail(format!(
                    "{} vs {}: {e}{hint}",
                    args.file.display(),
                    raw_path.display()
                ));
            }
        }
    }

    if args.json {
        let err = measured.as_ref().map(|(raw, s)| {
            serde_json::json!({
                "max_error_cm": s.max,
                "mean_error_cm": s.mean,
                "worst_bone": raw.skeleton.names.get(s.worst_bone),
                "worst_sample": s.worst_sample,
                "per_bone_max_error_cm": s.per_bone_max,
            })
        });
        let bones: Vec<serde_json::Value> = (0..decoded.num_bones())
            .map(|b| {
                serde_json::json!({
                    "name": decoded.skeleton.names[b],
                    "parent": decoded.skeleton.parent(b),
                    "shell_distance": decoded.skeleton.shell_distances[b],
                })
            })
            .collect();
        let v = serde_json::json!({
            "file": args.file.display().to_string(),
            "file_bytes": bytes.len(),
            "bones": reader.num_bones(),
            "samples": reader.num_samples(),
            "sample_rate": reader.sample_rate(),
            "duration_s": reader.duration(),
            "raw_bytes": decoded.raw_size_bytes(),
            "has_scale": decoded.has_scale(),
            "skeleton": bones,
            "clip": reader.clip_name(),
            "compression": stats,
            "settings": reader.settings().map(settings_json),
            "error": err,
        });
        out!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return ExitCode::SUCCESS;
    }

    out!(
        "file:        {} ({} bytes)",
        args.file.display(),
        bytes.len()
    );
    out!("bones:       {}", reader.num_bones());
    out!(
        "samples:     {} at {} Hz, {:.3} s",
        reader.num_samples(),
        reader.sample_rate(),
        reader.duration()
    );
    out!(
        "raw size:    {} bytes (10 float32 per bone per sample)",
        decoded.raw_size_bytes()
    );
    let r = &stats;
    out!(
        "clip:        '{}'{}",
        reader.clip_name(),
        if r.layout.looping {
            " (looping: last sample dropped)"
        } else {
            ""
        }
    );
    out!(
        "compressed:  {} bytes runtime data, {}",
        r.runtime_bytes,
        clipforge_pipeline::report::format_ratio(r.ratio, 2)
    );
    out!(
        "sub-tracks:  {} default, {} constant, {} animated; {}",
        r.layout.default_subtracks,
        r.layout.constant_subtracks,
        r.layout.animated_subtracks,
        clipforge_pipeline::report::count(r.layout.segments as usize, "segment", "segments")
    );
    out!(
        "bit rates:   {}",
        bit_rates_line(&r.layout.bit_rate_histogram)
    );
    out!("settings:    {}", settings_line(reader.settings()));
    if let Some((raw, s)) = &measured {
        out!(
            "error:       {:.4} cm max (bone '{}', sample {}), {:.4} cm mean",
            s.max,
            raw.skeleton
                .names
                .get(s.worst_bone)
                .map(String::as_str)
                .unwrap_or("-"),
            s.worst_sample,
            s.mean
        );
    }
    if args.bones {
        out!("skeleton:");
        for b in 0..decoded.num_bones() {
            let parent = decoded
                .skeleton
                .parent(b)
                .map(|p| decoded.skeleton.names[p].as_str())
                .unwrap_or("-");
            out!(
                "  {b:4} {:<32} parent {:<32} shell {:.2} cm",
                decoded.skeleton.names[b],
                parent,
                decoded.skeleton.shell_distances[b]
            );
        }
    }
    ExitCode::SUCCESS
}

/// `6 bits: 11, 7 bits: 14` (bit width: components × segments), `-` for none.
fn bit_rates_line(histogram: &[u32]) -> String {
    let hist: Vec<String> = histogram
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(bits, n)| format!("{bits} bits: {n}"))
        .collect();
    if hist.is_empty() {
        "-".into()
    } else {
        hist.join(", ")
    }
}

/// The settings line of `inspect`: the record's, or that the file has none.
fn settings_line(s: Option<&Settings>) -> String {
    s.map_or_else(
        || "not recorded (written before ClipForge recorded them in .cfa files)".to_string(),
        describe_settings,
    )
}

/// Where a recorded setting came from, in words.
fn source_words(s: Source) -> &'static str {
    match s {
        Source::Default => "default",
        Source::Explicit => "command line, pipeline or app",
        Source::Folder => "folder clipforge.toml",
        Source::Clip => "[[clip]] table",
    }
}

/// One line: `threshold 0.02 cm ([[clip]] table) · shell: each bone's own · per-bone: head 0.002
/// cm ([[clip]] table) · ClipForge 0.1.0`.
fn describe_settings(s: &Settings) -> String {
    let mut out = format!(
        "threshold {} cm ({})",
        s.error_threshold_cm,
        source_words(s.threshold_source)
    );
    match s.shell_distance_cm {
        Some(d) => out.push_str(&format!(
            " · shell {d} cm ({})",
            source_words(s.shell_source)
        )),
        None => out.push_str(" · shell: each bone's own"),
    }
    if !s.bones.is_empty() {
        let bones: Vec<String> = s
            .bones
            .iter()
            .map(|b| {
                let mut t = b.pattern.clone();
                if let Some(v) = b.error_threshold_cm {
                    t.push_str(&format!(" {v} cm"));
                }
                if let Some(v) = b.shell_distance_cm {
                    t.push_str(&format!(" shell {v} cm"));
                }
                format!("{t} ({})", source_words(b.source))
            })
            .collect();
        out.push_str(&format!(" · per-bone: {}", bones.join(", ")));
    }
    out.push_str(&format!(" · ClipForge {}", s.tool_version));
    out
}

fn settings_json(s: &Settings) -> serde_json::Value {
    let src = |s: Source| source_words(s);
    // As short as the float32 reads back (0.02, not 0.019999999552965164), like the reports.
    let cm = |v: f32| format!("{v}").parse::<f64>().unwrap_or(v as f64);
    serde_json::json!({
        "error_threshold_cm": cm(s.error_threshold_cm),
        "threshold_source": src(s.threshold_source),
        "shell_distance_cm": s.shell_distance_cm.map(cm),
        "shell_source": src(s.shell_source),
        "bones": s.bones.iter().map(|b| serde_json::json!({
            "pattern": b.pattern,
            "error_threshold_cm": b.error_threshold_cm.map(cm),
            "shell_distance_cm": b.shell_distance_cm.map(cm),
            "source": src(b.source),
        })).collect::<Vec<_>>(),
        "clipforge_version": s.tool_version,
    })
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

/// Loads every clip of a clip file for `convert` and `inspect --raw`: the file itself is read as a
/// regular file within the memory budget ([`read_input`]: a FIFO is refused, never waited on);
/// glTF and GLB go through the path-based loader as before, which finds external buffers.
/// Importer warnings are printed.
fn load_clip_file(path: &Path, options: &formats::ImportOptions) -> Result<Vec<RawClip>, String> {
    let bytes = read_input(path).map_err(|e| e.message)?;
    let loaded = if ClipFormat::from_path(path) == Some(ClipFormat::Gltf) {
        drop(bytes);
        formats::load_clips_with_options(path, options)
    } else {
        formats::load_clips_from_bytes_with_options(&bytes, path, options)
    };
    let (clips, warnings) = loaded.map_err(|e| e.to_string())?;
    for w in &warnings {
        say!("{w}");
    }
    Ok(clips)
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
        WatchEventKind::Removed => {
            out!("{pre}removed    {} (deleted: {outs})", ev.path.display())
        }
        WatchEventKind::WatchError(m) => out!("{pre}watch error {}: {m}", ev.path.display()),
    }
}
