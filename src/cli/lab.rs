//! `clipforge lab PATH... [--json OUT] [--export-lossy DIR]`: the three codecs on every clip
//! found, a table per clip and the totals (the articles' "three challengers" table), the JSON of
//! issue 16, and each codec's reconstruction as `.acl.sjson` for `clip_eval.py`.

use crate::cli::compress::{MemoryArgs, collect_files};
use crate::cli::progress::{FileProgress, while_scanning};
use clipforge_anim::formats;
use clipforge_anim::lab::{self, ClipLab, LabOptions};
use clipforge_pipeline::{clip_stem, read_input, sanitize_name};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug, Clone)]
pub struct LabArgs {
    /// Clip files or folders (searched recursively; dot folders skipped).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Write the figures as JSON (one object per clip, each with a `codecs` array).
    #[arg(long = "json", value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Write each codec's reconstruction as DIR/<clip>.<codec>.acl.sjson.
    #[arg(long = "export-lossy", value_name = "DIR")]
    pub export_lossy: Option<PathBuf>,
    /// Largest error allowed, in cm (object-space virtual-vertex distance).
    #[arg(
        long = "error-threshold",
        value_name = "CM",
        default_value_t = clipforge_anim::DEFAULT_ERROR_THRESHOLD_CM,
        allow_negative_numbers = true
    )]
    pub error_threshold: f32,
    /// Virtual-vertex (shell) distance for every bone, in cm (default: each bone's own).
    #[arg(
        long = "shell-distance",
        value_name = "CM",
        allow_negative_numbers = true
    )]
    pub shell_distance: Option<f32>,
    /// Skip the decode timings (figures other than `decode_ns` are deterministic).
    #[arg(long = "no-timings")]
    pub no_timings: bool,
    #[command(flatten)]
    pub memory: MemoryArgs,
}

#[derive(Serialize)]
struct LabJson<'a> {
    threshold_cm: f32,
    clips: &'a [ClipLab],
    errors: &'a [ClipError],
}

#[derive(Serialize)]
struct ClipError {
    path: String,
    error: String,
}

/// Per codec: sums over the clips (bytes) and means per clip (touched bytes and lines, times).
#[derive(Default, Clone)]
struct Totals {
    bytes: usize,
    touched: f64,
    lines: f64,
    context: usize,
    max_error: f64,
    f30: f64,
    random: f64,
    backward: f64,
    keys: usize,
}

pub fn run(args: &LabArgs) -> ExitCode {
    args.memory.apply();
    let t = args.error_threshold;
    if !(t.is_finite() && t > 0.0) {
        eprintln!("clipforge lab: --error-threshold must be a positive number of cm, got {t}");
        return ExitCode::FAILURE;
    }
    if let Some(d) = args.shell_distance
        && !(d.is_finite() && d > 0.0)
    {
        eprintln!("clipforge lab: --shell-distance must be a positive number of cm, got {d}");
        return ExitCode::FAILURE;
    }
    if let Some(dir) = &args.export_lossy
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("clipforge lab: cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    let opts = LabOptions {
        settings_threshold: t,
        shell_distance: args.shell_distance,
        timings: !args.no_timings,
    };
    let collected = while_scanning(&clipforge_pipeline::ScanOptions::default(), |scan| {
        collect_files(&args.paths, Path::new(""), scan)
    });
    let mut errors: Vec<ClipError> = collected
        .bad
        .iter()
        .map(|r| ClipError {
            path: r.input.clone(),
            error: r.error.clone().unwrap_or_default(),
        })
        .collect();
    let mut labs: Vec<ClipLab> = Vec::new();
    let mut files = collected.files;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    // Three codecs per clip take seconds each: say which file runs, with an ETA.
    let mut progress = FileProgress::new(files.iter().map(|f| f.size_bytes));
    for f in &files {
        let shown = f.path.display().to_string();
        progress.start(&format!("lab: {shown}"));
        // Import errors name the file and the place themselves.
        let clips = match read_input(&f.path)
            .map_err(|e| e.message)
            .and_then(|bytes: Vec<u8>| {
                formats::load_clips_from_bytes(&bytes, &f.path).map_err(|e| e.to_string())
            }) {
            Ok(c) => c,
            Err(e) => {
                progress.clear();
                eprintln!("{e}");
                progress.finish_file(f.size_bytes);
                errors.push(ClipError {
                    path: shown,
                    error: e,
                });
                continue;
            }
        };
        let several = clips.len() > 1;
        for clip in &clips {
            let stem = clip_stem(&f.path);
            let name = if several {
                format!("{stem}_{}", sanitize_name(&clip.name))
            } else {
                stem
            };
            if several {
                progress.start(&format!("lab: {shown} ({})", clip.name));
            }
            let result = lab::run_clip(clip, &shown, &opts);
            progress.clear();
            match result {
                Ok((mut lab, lossy)) => {
                    lab.clip = name.clone();
                    print_clip(&lab);
                    // The key reduction's last resort (raw keys) meets any threshold above
                    // float32 rounding; say so loudly if a codec still does not.
                    for c in lab.codecs.iter().filter(|c| c.max_error_cm > t as f64) {
                        eprintln!(
                            "{shown}: warning: {} measures {:.6} cm, over the {t} cm threshold",
                            c.codec, c.max_error_cm
                        );
                    }
                    if let Some(dir) = &args.export_lossy {
                        for l in &lossy {
                            let out = dir.join(format!("{name}.{}.acl.sjson", l.codec));
                            let text = formats::write_acl_clip(&l.clip);
                            if let Err(e) =
                                clipforge_base::fsio::write_atomic(&out, text.as_bytes())
                            {
                                let msg = format!("cannot write {}: {e}", out.display());
                                eprintln!("{shown}: {msg}");
                                errors.push(ClipError {
                                    path: shown.clone(),
                                    error: msg,
                                });
                            }
                        }
                    }
                    labs.push(lab);
                }
                Err(e) => {
                    eprintln!("{shown}: clip '{}': {e}", clip.name);
                    errors.push(ClipError {
                        path: shown.clone(),
                        error: format!("clip '{}': {e}", clip.name),
                    });
                }
            }
        }
        progress.finish_file(f.size_bytes);
    }
    progress.clear();
    print_totals(&labs, t);
    if let Some(out) = &args.json {
        let doc = LabJson {
            threshold_cm: t,
            clips: &labs,
            errors: &errors,
        };
        let text = match serde_json::to_string_pretty(&doc) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("clipforge lab: cannot serialize the report: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Err(e) = clipforge_base::fsio::write_atomic(out, text.as_bytes()) {
            eprintln!("clipforge lab: cannot write {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "clipforge lab: {} failed",
            clipforge_pipeline::report::count(errors.len(), "file or clip", "files or clips")
        );
        ExitCode::FAILURE
    }
}

fn print_clip(lab: &ClipLab) {
    println!(
        "{} ({} bones, {} samples)",
        lab.clip, lab.bones, lab.samples
    );
    for c in &lab.codecs {
        println!(
            "  {:<14} {:>9} B  max {:.5} cm  {:>8.0} B/pose  {:>6.1} lines/pose  ctx {:>6} B  fwd30 {:>7.0} ns  back {:>8.0} ns  random {:>8.0} ns",
            c.codec,
            c.bytes,
            c.max_error_cm,
            c.bytes_touched_per_pose,
            c.cache_lines_per_pose,
            c.context_bytes,
            c.decode_ns.forward_30hz,
            c.decode_ns.backward,
            c.decode_ns.random
        );
    }
}

fn print_totals(labs: &[ClipLab], threshold: f32) {
    if labs.is_empty() {
        return;
    }
    let mut totals: Vec<(String, Totals)> = Vec::new();
    for lab in labs {
        for c in &lab.codecs {
            let i = match totals.iter().position(|(n, _)| *n == c.codec) {
                Some(i) => i,
                None => {
                    totals.push((c.codec.clone(), Totals::default()));
                    totals.len() - 1
                }
            };
            let t = &mut totals[i].1;
            t.bytes += c.bytes;
            t.touched += c.bytes_touched_per_pose;
            t.lines += c.cache_lines_per_pose;
            t.context += c.context_bytes;
            t.max_error = t.max_error.max(c.max_error_cm);
            t.f30 += c.decode_ns.forward_30hz;
            t.backward += c.decode_ns.backward;
            t.random += c.decode_ns.random;
            t.keys += c.keys;
        }
    }
    let n = labs.len() as f64;
    println!();
    println!(
        "{} clips, threshold {threshold} cm: total bytes, then means per clip",
        labs.len()
    );
    println!(
        "  {:<14} {:>11} {:>11} {:>14} {:>12} {:>11} {:>11} {:>11} {:>11} {:>11}",
        "codec",
        "bytes",
        "keys",
        "B touched/pose",
        "lines/pose",
        "context B",
        "max err cm",
        "fwd30 ns",
        "back ns",
        "random ns"
    );
    for (name, t) in &totals {
        println!(
            "  {:<14} {:>11} {:>11} {:>14.0} {:>12.1} {:>11.0} {:>11.5} {:>11.0} {:>11.0} {:>11.0}",
            name,
            t.bytes,
            t.keys,
            t.touched / n,
            t.lines / n,
            t.context as f64 / n,
            t.max_error,
            t.f30 / n,
            t.backward / n,
            t.random / n
        );
    }
}
