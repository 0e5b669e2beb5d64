//! `clipforge inspect`: what a `.cfa` (or `.cfs`) file holds and how it was compressed, and with
//! `--raw` its error against the original clip; text or JSON. Documented in `docs/CLI.md`.

use super::clip_input::{MemoryArgs, SampleRateArgs, load_clip_file, not_cfa_message, select_clip};
use super::fail;
use clipforge_anim::formats::ClipFormat;
use clipforge_anim::limits::CheckMemoryBudget;
use clipforge_anim::metric::ErrorStats;
use clipforge_anim::runtime::metadata::{Settings, Source};
use clipforge_anim::{ClipReader, RawClip, metric};
use clipforge_pipeline::read_input;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    let measured = match &args.raw {
        Some(raw_path) => match measure_against(args, raw_path, &decoded) {
            Ok(m) => Some(m),
            Err(e) => return fail(e),
        },
        None => None,
    };
    let shown = Inspected {
        file: &args.file,
        file_bytes: bytes.len(),
        reader: &reader,
        decoded: &decoded,
        stats: cfa_stats(&reader),
        measured,
    };
    if args.json {
        shown.print_json();
    } else {
        shown.print_text(args.bones);
    }
    ExitCode::SUCCESS
}

/// The original clip of `--raw` (the one `--clip` or the `.cfa`'s name picks) and the `.cfa`'s
/// error against it; `Err` is the message to print.
fn measure_against(
    args: &InspectArgs,
    raw_path: &Path,
    decoded: &RawClip,
) -> Result<(RawClip, ErrorStats), String> {
    let clips = load_clip_file(raw_path, &args.sample_rate.import_options())?;
    if clips.is_empty() {
        return Err(format!(
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
    let (_, mut raw) = match which.filter(|_| clips.len() > 1) {
        Some(w) => select_clip(clips, &w, raw_path)?,
        None => (0, clips.into_iter().next().expect("not empty")),
    };
    // Measure with the shell distances stored in the .cfa (the ones it was compressed for).
    if raw.num_bones() == decoded.num_bones() {
        raw.skeleton.shell_distances = decoded.skeleton.shell_distances.clone();
    }
    // An additive original is measured on the combined pose (applied to its base).
    let stats = match &raw.additive {
        Some(add) => clipforge_anim::additive::measure_combined(
            &raw,
            add,
            decoded,
            &[],
            &raw.skeleton.shell_distances,
        ),
        None => metric::measure(&raw, decoded),
    };
    match stats {
        Ok(s) => Ok((raw, s)),
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
            Err(format!(
                "{} vs {}: {e}{hint}",
                args.file.display(),
                raw_path.display()
            ))
        }
    }
}

/// What `inspect` prints about one `.cfa`, as text or JSON.
struct Inspected<'a> {
    file: &'a Path,
    file_bytes: usize,
    reader: &'a ClipReader<'a>,
    decoded: &'a RawClip,
    stats: CfaStats,
    /// With `--raw`: the original and the error against it.
    measured: Option<(RawClip, ErrorStats)>,
}

impl Inspected<'_> {
    fn print_json(&self) {
        let (reader, decoded) = (self.reader, self.decoded);
        let err = self.measured.as_ref().map(|(raw, s)| {
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
            "file": self.file.display().to_string(),
            "file_bytes": self.file_bytes,
            "bones": reader.num_bones(),
            "samples": reader.num_samples(),
            "sample_rate": reader.sample_rate(),
            "duration_s": reader.duration(),
            "raw_bytes": decoded.raw_size_bytes(),
            "has_scale": decoded.has_scale(),
            "skeleton": bones,
            "clip": reader.clip_name(),
            "compression": self.stats,
            "settings": reader.settings().map(settings_json),
            "error": err,
        });
        out!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    }

    /// The text form; `bones`: also list the skeleton.
    fn print_text(&self, bones: bool) {
        let (reader, decoded) = (self.reader, self.decoded);
        out!(
            "file:        {} ({} bytes)",
            self.file.display(),
            self.file_bytes
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
        let r = &self.stats;
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
        if let Some((raw, s)) = &self.measured {
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
        if bones {
            self.print_skeleton();
        }
    }

    fn print_skeleton(&self) {
        let decoded = self.decoded;
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
