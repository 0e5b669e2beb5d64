//! Report types: one object per clip plus totals. The JSON keys are stable (scripts read them).

use clipforge_anim::compress::PrecisionFloor;
/// Written once for the CLI, the reports and the app (kept here too: callers use this path).
pub use clipforge_anim::figures::{three_digits, three_digits_up};
use clipforge_anim::{ClipLayout, CompressionSettings};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClipReport {
    pub input: String,
    pub output: Option<String>,
    /// Clip name (a glTF file holds several).
    pub clip: String,
    pub format: String,
    pub bones: usize,
    pub samples: usize,
    pub sample_rate: f32,
    pub duration_s: f32,
    /// 10 float32 per bone per sample, as ACL counts.
    pub raw_bytes: u64,
    /// Runtime data alone, no names or metadata (what ACL's compressed_size counts).
    pub compressed_bytes: u64,
    /// The whole `.cfa` file, skeleton metadata included.
    pub file_bytes: u64,
    pub ratio: f64,
    /// Max error at every sample and between samples (where a game samples too).
    pub max_error_cm: f64,
    /// Max error at the stored samples alone (what ACL reports).
    #[serde(default)]
    pub max_error_at_samples_cm: f64,
    pub mean_error_cm: f64,
    pub worst_bone: Option<String>,
    pub worst_sample: Option<usize>,
    /// Compression alone (no file reading, no final error measurement), as ACL times itself.
    pub compress_ms: f64,
    /// The bit-rate histogram, sub-track counts, segments and looping, as the compressor
    /// reports them (the same keys, in place).
    #[serde(flatten)]
    pub layout: ClipLayout,
    pub per_bone_max_error_cm: Vec<f64>,
    /// The threshold each bone was held to (cm), beside `per_bone_max_error_cm`, when bones have
    /// thresholds of their own (the clip file's precision, `[[bone]]` tables, `--bone`); absent
    /// when every bone had `settings.error_threshold_cm`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_bone_threshold_cm: Vec<f32>,
    /// Max error over all bones at each sample (error over time).
    pub per_sample_max_error_cm: Vec<f64>,
    /// True when the skip cache said the output is up to date.
    pub skipped: bool,
    /// Null, or why this clip failed (names the file, the place and the problem).
    pub error: Option<String>,
    /// The batch was cancelled before this clip was done (`error` says so too; no output written).
    #[serde(default)]
    pub cancelled: bool,
    /// Importer warnings about the input (e.g. a BVH frame time that looks wrong).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Null, or the resource limit that refused this clip: `"memory"` (the per-clip memory
    /// budget, `--max-memory`). `error` gives the figures.
    #[serde(default)]
    pub limit: Option<String>,
    /// The settings the clip was compressed with (folder settings and explicit options merged;
    /// thresholds in cm). `None` for rows of inputs that were never compressed.
    #[serde(default)]
    pub settings: Option<crate::folder_settings::ClipSettings>,
    /// For a clip that comes with a skinned mesh (glTF/GLB skins): the largest distance between
    /// a vertex skinned by the raw pose and by the decompressed one, over every vertex and
    /// sample (`clipforge_anim::mesh::mesh_error`); absent without a mesh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_vertex_error_cm: Option<f64>,
    /// A scalar track list's errors (`format` "ACL scalar track list"), in the tracks' own units:
    /// such a row leaves every `*_cm` field at 0 (its errors are not centimetres).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalar: Option<ScalarErrors>,
    /// A clip refused because its threshold is below float32 precision (status
    /// `below_precision`, no output; `error` says it in words): the threshold, the floor the clip
    /// reaches with every value stored as raw float32, and the bone, in cm. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below_precision: Option<PrecisionFloor>,
    /// Null, or a failed row's kind of failure (`error` says it in words, with the file and
    /// place): what code decides on (the app's advice), never `error`'s text. Reports written
    /// before it existed read as null.
    #[serde(default)]
    pub failure: Option<Failure>,
}

/// Why a row failed, as its JSON `failure` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// The input could not be read (gone, not a regular file, an I/O error).
    Unreadable,
    /// The input does not read as its format, or holds no clip.
    InvalidFile,
    /// The clip read but its data cannot be compressed as it is (bones without samples, an
    /// additive clip whose base does not match it, too many samples).
    InvalidClip,
    /// The settings that would apply cannot be used (a `clipforge.toml` that does not parse).
    Settings,
    /// Over the per-clip memory budget (`limit` names it).
    Limit,
    /// Another input of the batch writes the same output file.
    OutputClash,
    /// The output could not be written.
    Write,
    /// An internal check failed or the code panicked: a ClipForge bug.
    Internal,
}

impl Failure {
    /// What to do about it, for a person (the app's clip detail says it under the error).
    pub fn advice(self) -> &'static str {
        match self {
            Self::Unreadable => {
                "The file could not be read (the error above says why): check that it is there \
                 and readable, then compress again."
            }
            Self::InvalidFile => {
                "The file does not read as its format at the place named above: fix or \
                 re-export it, then compress again. The other files are not affected."
            }
            Self::InvalidClip => {
                "The clip's own data cannot be compressed as it is (the error above says what): \
                 fix it in the file or re-export it, then compress again."
            }
            Self::Settings => {
                "Its settings file cannot be used (the error above names the file and line): \
                 fix it, then compress again."
            }
            Self::Limit => {
                "It needs more memory than the per-clip budget (the figures above): compress it \
                 with a larger budget, `clipforge compress --max-memory SIZE`."
            }
            Self::OutputClash => {
                "Another input writes the same output file (named above): rename one of them."
            }
            Self::Write => {
                "Its output could not be written (the error above says where and why): check \
                 the output folder's permissions and free space, then compress again."
            }
            Self::Internal => {
                "An internal check failed: a ClipForge bug, not your file's fault. Please report \
                 it with the file; the other clips are not affected."
            }
        }
    }

    /// A compressor error's kind, by its variant (`None`: a refusal below float32 precision,
    /// not a failure).
    pub fn of_compress_error(e: &clipforge_anim::compress::CompressError) -> Option<Self> {
        use clipforge_anim::compress::CompressError as E;
        Some(match e {
            E::InvalidSettings(_) => Self::Settings,
            E::InvalidClip(_) | E::TooLarge(_) => Self::InvalidClip,
            E::Verification(_) => Self::Internal,
            E::LimitExceeded(_) => Self::Limit,
            E::BelowPrecision(_) => return None,
        })
    }

    /// An import or read error's kind: over a budget, else `otherwise`.
    pub fn or_limit(limit: Option<clipforge_anim::limits::Limit>, otherwise: Self) -> Self {
        if limit.is_some() {
            Self::Limit
        } else {
            otherwise
        }
    }
}

/// What became of one row, as the summaries count it and the JSON/CSV `status` says it. Derived
/// from the row's fields ([`ClipReport::status`]), never stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClipStatus {
    Compressed,
    /// Up to date (the skip cache).
    Skipped,
    /// A broken, unreadable or refused-for-a-limit input, or an output that could not be written.
    Failed,
    /// Not done: the batch was cancelled.
    Cancelled,
    /// Refused: the threshold asked for is below float32 precision for this clip (a setting to
    /// raise, not a broken file).
    BelowPrecision,
}

impl ClipStatus {
    /// The JSON/CSV word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Compressed => "compressed",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::BelowPrecision => "below_precision",
        }
    }
}

/// A report's `limit` field of a refusal.
pub(crate) fn limit_field(limit: Option<clipforge_anim::limits::Limit>) -> Option<String> {
    limit.map(|l| l.as_str().to_string())
}

/// The `format` of a scalar track list's row.
pub const SCALAR_LIST_FORMAT: &str = "ACL scalar track list";

/// A scalar track list's errors, in the tracks' own units, beside each track's precision.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScalarErrors {
    /// Largest error at and between samples, over every output track.
    pub max_error: f64,
    /// Largest error at the samples alone (what ACL reports).
    pub max_error_at_samples: f64,
    /// Per output track (output order): its largest error at and between samples.
    pub per_track_max_error: Vec<f64>,
    /// Per output track: its precision (ACL's `precision`).
    pub per_track_precision: Vec<f32>,
    /// Largest `error / precision` over the tracks: at most 1 when every track is within its
    /// precision.
    pub worst_error_over_precision: f64,
    /// Output index of the track with the largest `error / precision`.
    pub worst_track: usize,
}

impl ScalarErrors {
    /// From per-track errors and precisions (the same length).
    pub fn new(
        max_error: f64,
        max_error_at_samples: f64,
        per_track_max_error: Vec<f64>,
        per_track_precision: Vec<f32>,
    ) -> Self {
        let (worst_track, worst) = per_track_max_error
            .iter()
            .zip(&per_track_precision)
            .map(|(&e, &p)| if p > 0.0 { e / p as f64 } else { 0.0 })
            .enumerate()
            .fold((0, 0.0f64), |a, (k, r)| if r > a.1 { (k, r) } else { a });
        Self {
            max_error,
            max_error_at_samples,
            per_track_max_error,
            per_track_precision,
            worst_error_over_precision: worst,
            worst_track,
        }
    }
}

impl ClipReport {
    /// What became of the row (cancellation wins over the error it carries).
    pub fn status(&self) -> ClipStatus {
        if self.cancelled {
            ClipStatus::Cancelled
        } else if self.below_precision.is_some() {
            ClipStatus::BelowPrecision
        } else if self.error.is_some() {
            ClipStatus::Failed
        } else if self.skipped {
            ClipStatus::Skipped
        } else {
            ClipStatus::Compressed
        }
    }

    /// The row is an ACL scalar track list's: held to each track's own precision, it reads no
    /// compression setting (no threshold, shell, units, sample rate or per-bone table).
    pub fn is_scalar_list(&self) -> bool {
        self.format == SCALAR_LIST_FORMAT
    }

    /// The row's error as a person reads it: centimetres for a clip, a fraction of each track's
    /// precision for a scalar track list (whose units are its own).
    pub fn error_summary(&self) -> String {
        match &self.scalar {
            Some(s) => format!(
                "max error {:.2}× its track's precision (track {})",
                s.worst_error_over_precision, s.worst_track
            ),
            None => format!("max error {:.4} cm", self.max_error_cm),
        }
    }

    /// The threshold (cm) the clip was compressed with (a folder's `clipforge.toml`, a kept A/B
    /// side), else `default_cm` (a row without recorded settings).
    pub fn held_to_cm(&self, default_cm: f32) -> f32 {
        self.settings
            .as_ref()
            .map_or(default_cm, |s| s.error_threshold_cm)
    }

    /// Whether the row's error is over what it was held to: `threshold_cm` for a clip, each
    /// track's own precision for a scalar track list.
    pub fn over_threshold(&self, threshold_cm: f32) -> bool {
        match &self.scalar {
            Some(s) => s.worst_error_over_precision > 1.0001,
            None => self.max_error_cm > threshold_cm as f64 * 1.0001,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Report rows (one per clip; a failed file counts one).
    pub clips: usize,
    /// Rows with an error, cancelled and below-precision ones excluded.
    pub failed: usize,
    /// Rows up to date (the skip cache); a remembered refusal counts in `below_precision`.
    pub skipped: usize,
    /// Rows not done because the batch was cancelled.
    #[serde(default)]
    pub cancelled: usize,
    /// Clips refused because their threshold is below float32 precision (not in `failed`).
    #[serde(default)]
    pub below_precision: usize,
    /// Sums over the successful rows (skipped ones included, with their cached figures).
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    /// `raw_bytes / compressed_bytes`.
    pub ratio: f64,
    /// Worst error over the successful rows of clips (scalar track lists are not in cm: see
    /// `worst_scalar_error_over_precision`).
    pub max_error_cm: f64,
    /// Largest `error / precision` of a track over the successful scalar track lists (0 when
    /// there are none).
    #[serde(default)]
    pub worst_scalar_error_over_precision: f64,
    /// Sum of `compress_ms` over the clips compressed or refused as below float32 precision by
    /// this run (skipped ones excluded).
    pub compress_ms: f64,
    pub wall_ms: f64,
    /// Raw kilobytes (1024 bytes) of the clips compressed by this run per second of wall time.
    pub throughput_kb_s: f64,
    /// Percentiles of `compress_ms` over the same clips as `compress_ms` (linear interpolation
    /// between closest ranks, numpy's default).
    pub compress_ms_p50: f64,
    pub compress_ms_p85: f64,
    pub compress_ms_p99: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchReport {
    /// The run's settings where no folder file says otherwise: the defaults with the explicit
    /// options (command line, pipeline, app) applied, in cm. Folder files and `[[clip]]` tables
    /// may differ per clip: each row's `settings` says what that clip got.
    pub settings: CompressionSettings,
    pub clips: Vec<ClipReport>,
    pub totals: Totals,
}

/// Percentile `p` (0..=100) of `values` with linear interpolation between closest ranks
/// (numpy's default); 0 for no values.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let rank = (p.clamp(0.0, 100.0) / 100.0) * (v.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
}

/// Totals of a set of rows; `wall_ms` is the batch's wall time.
pub fn compute_totals(clips: &[ClipReport], wall_ms: f64) -> Totals {
    let mut t = Totals {
        clips: clips.len(),
        wall_ms,
        ..Default::default()
    };
    let mut times = Vec::new();
    let mut fresh_raw = 0u64;
    for c in clips {
        // One status per row: a refusal the skip cache remembered is counted as a refusal, not
        // as up to date, so the counts add up to `clips`.
        match c.status() {
            ClipStatus::Cancelled => t.cancelled += 1,
            ClipStatus::BelowPrecision => t.below_precision += 1,
            ClipStatus::Failed => t.failed += 1,
            ClipStatus::Skipped => t.skipped += 1,
            ClipStatus::Compressed => {}
        }
        // A refusal's search ran in full before it refused: its time is compression time.
        if c.status() == ClipStatus::BelowPrecision && !c.skipped {
            t.compress_ms += c.compress_ms;
            times.push(c.compress_ms);
        }
        if c.error.is_some() {
            continue;
        }
        t.raw_bytes += c.raw_bytes;
        t.compressed_bytes += c.compressed_bytes;
        match &c.scalar {
            Some(s) => {
                t.worst_scalar_error_over_precision = t
                    .worst_scalar_error_over_precision
                    .max(s.worst_error_over_precision)
            }
            None => t.max_error_cm = t.max_error_cm.max(c.max_error_cm),
        }
        if !c.skipped {
            t.compress_ms += c.compress_ms;
            times.push(c.compress_ms);
            fresh_raw += c.raw_bytes;
        }
    }
    t.ratio = if t.compressed_bytes > 0 {
        t.raw_bytes as f64 / t.compressed_bytes as f64
    } else {
        0.0
    };
    t.throughput_kb_s = if wall_ms > 0.0 {
        (fresh_raw as f64 / 1024.0) / (wall_ms / 1000.0)
    } else {
        0.0
    };
    t.compress_ms_p50 = percentile(&times, 50.0);
    t.compress_ms_p85 = percentile(&times, 85.0);
    t.compress_ms_p99 = percentile(&times, 99.0);
    t
}

/// A row as the JSON report writes it: its `status` first, derived when written (so a row never
/// stores a status its fields contradict), then the row's own keys.
#[derive(Serialize)]
struct RowOut<'a> {
    status: ClipStatus,
    #[serde(flatten)]
    row: &'a ClipReport,
}

/// [`BatchReport`] as the JSON report writes it.
#[derive(Serialize)]
struct ReportOut<'a> {
    settings: &'a CompressionSettings,
    clips: Vec<RowOut<'a>>,
    totals: &'a Totals,
}

impl BatchReport {
    /// Recomputes the totals from the rows (keeping the wall time).
    pub fn recompute_totals(&mut self) {
        self.totals = compute_totals(&self.clips, self.totals.wall_ms);
    }

    /// The report as JSON: `{"settings": {...}, "clips": [...], "totals": {...}}`, keys stable;
    /// each clip's `status` ([`ClipStatus`]) comes first. Non-finite numbers are written as `null`.
    /// Reads back as a [`BatchReport`] (the `status` keys are ignored: rows derive theirs).
    pub fn to_json(&self) -> String {
        let out = ReportOut {
            settings: &self.settings,
            clips: self
                .clips
                .iter()
                .map(|row| RowOut {
                    status: row.status(),
                    row,
                })
                .collect(),
            totals: &self.totals,
        };
        serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// The report as CSV: a header line, then one line per clip ([`CSV_COLUMNS`]).
    pub fn to_csv(&self) -> String {
        let mut out = clipforge_base::fsio::csv_writer();
        let _ = out.write_record(CSV_COLUMNS);
        for c in &self.clips {
            let opt = |s: &Option<String>| s.clone().unwrap_or_default();
            let fields: Vec<String> = vec![
                c.input.clone(),
                opt(&c.output),
                c.clip.clone(),
                c.format.clone(),
                c.bones.to_string(),
                c.samples.to_string(),
                c.sample_rate.to_string(),
                c.duration_s.to_string(),
                c.raw_bytes.to_string(),
                c.compressed_bytes.to_string(),
                c.file_bytes.to_string(),
                format!("{:.4}", c.ratio),
                format!("{:.6}", c.max_error_cm),
                format!("{:.6}", c.max_error_at_samples_cm),
                format!("{:.6}", c.mean_error_cm),
                opt(&c.worst_bone),
                c.worst_sample.map(|s| s.to_string()).unwrap_or_default(),
                format!("{:.3}", c.compress_ms),
                c.layout.default_subtracks.to_string(),
                c.layout.constant_subtracks.to_string(),
                c.layout.animated_subtracks.to_string(),
                c.layout.segments.to_string(),
                c.layout.looping.to_string(),
                c.layout
                    .bit_rate_histogram
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(";"),
                c.skipped.to_string(),
                c.cancelled.to_string(),
                opt(&c.error),
                c.warnings.join("; "),
                opt(&c.limit),
                c.scalar
                    .as_ref()
                    .map_or(String::new(), |s| format!("{:e}", s.max_error)),
                c.scalar.as_ref().map_or(String::new(), |s| {
                    format!("{:.4}", s.worst_error_over_precision)
                }),
                c.max_vertex_error_cm
                    .map_or(String::new(), |e| format!("{e:.6}")),
                c.status().as_str().to_string(),
                c.below_precision
                    .as_ref()
                    .map_or(String::new(), |p| format!("{:.6}", p.floor_cm)),
            ];
            // Writing to memory cannot fail, and every record has the header's length.
            let _ = out.write_record(&fields);
        }
        clipforge_base::fsio::csv_text(out)
    }

    /// Writes [`Self::to_json`] atomically.
    pub fn write_json(&self, path: &std::path::Path) -> std::io::Result<()> {
        clipforge_base::fsio::write_atomic(path, self.to_json().as_bytes())
    }

    /// Writes [`Self::to_csv`] atomically.
    pub fn write_csv(&self, path: &std::path::Path) -> std::io::Result<()> {
        clipforge_base::fsio::write_atomic(path, self.to_csv().as_bytes())
    }
}

/// Columns of the CSV report, in order (`bit_rate_histogram` is `;`-separated counts, index = bits;
/// the `scalar_*` columns are empty on clip rows, and a scalar track list's row has 0 in the
/// `*_cm` ones; `max_vertex_error_cm` is empty for a clip without a skinned mesh; `status` is
/// [`ClipStatus::as_str`]; `precision_floor_cm` is empty unless the status is `below_precision`).
pub const CSV_COLUMNS: &[&str] = &[
    "input",
    "output",
    "clip",
    "format",
    "bones",
    "samples",
    "sample_rate",
    "duration_s",
    "raw_bytes",
    "compressed_bytes",
    "file_bytes",
    "ratio",
    "max_error_cm",
    "max_error_at_samples_cm",
    "mean_error_cm",
    "worst_bone",
    "worst_sample",
    "compress_ms",
    "default_subtracks",
    "constant_subtracks",
    "animated_subtracks",
    "segments",
    "looping",
    "bit_rate_histogram",
    "skipped",
    "cancelled",
    "error",
    "warnings",
    "limit",
    "scalar_max_error",
    "scalar_worst_error_over_precision",
    "max_vertex_error_cm",
    "status",
    "precision_floor_cm",
];

/// The worst error of several rows (one input's clips, a pipeline's run) as a person reads it:
/// centimetres over the clips, and, when there are scalar track lists, the largest fraction of a
/// track's precision beside it (the two are never mixed).
pub fn worst_error_summary<'a>(rows: impl IntoIterator<Item = &'a ClipReport>) -> String {
    let (mut cm, mut clips, mut scalar) = (0.0f64, 0usize, None::<f64>);
    for r in rows {
        match &r.scalar {
            Some(s) => {
                let w = s.worst_error_over_precision;
                scalar = Some(scalar.map_or(w, |a| a.max(w)));
            }
            None => {
                clips += 1;
                cm = cm.max(r.max_error_cm);
            }
        }
    }
    match (clips == 0, scalar) {
        (false, None) | (true, None) => format!("max error {cm:.4} cm"),
        (true, Some(r)) => format!("max error {r:.2}× a track's precision"),
        (false, Some(r)) => {
            format!("max error {cm:.4} cm (scalar tracks: {r:.2}× a track's precision)")
        }
    }
}

/// The line that says how many clips were refused as below float32 precision, the floor they
/// reach and what to raise the threshold to, e.g. "1 clip below float32 precision (floor
/// 0.00107 cm): raise the threshold to at least 0.00111 cm"; `None` when none was. The CLI's
/// summary and the app's say it alike.
pub fn below_precision_summary<'a>(
    rows: impl IntoIterator<Item = &'a ClipReport>,
) -> Option<String> {
    let floors: Vec<&PrecisionFloor> = rows
        .into_iter()
        .filter(|r| r.status() == ClipStatus::BelowPrecision)
        .filter_map(|r| r.below_precision.as_ref())
        .collect();
    let lo = floors
        .iter()
        .map(|p| p.floor_cm)
        .fold(f64::INFINITY, f64::min);
    let hi = floors.iter().map(|p| p.floor_cm).fold(0.0, f64::max);
    // Enough for every one of them; rounded up, never to a figure that is still refused.
    let raise = floors
        .iter()
        .map(|p| p.min_threshold_cm as f64)
        .fold(0.0, f64::max);
    let floor = if three_digits(lo) == three_digits(hi) {
        format!("floor {} cm", three_digits(hi))
    } else {
        format!("floors {}–{} cm", three_digits(lo), three_digits(hi))
    };
    (!floors.is_empty()).then(|| {
        format!(
            "{} below float32 precision ({floor}): raise the threshold to at least {} cm",
            count(floors.len(), "clip", "clips"),
            three_digits_up(raise)
        )
    })
}

/// The lines that say which clips of a run did not use the run's own settings (the command
/// line's, the pipeline's, the app's), e.g. "3 clips used their own settings from
/// a/clipforge.toml ([[clip]] tables)"; none when every clip did. Each row's `settings` says
/// the details.
pub fn settings_sources_summary(rows: &[ClipReport]) -> Vec<String> {
    use crate::folder_settings::{ClipSettings, SettingSource};
    let settings: Vec<&ClipSettings> = rows.iter().filter_map(|r| r.settings.as_ref()).collect();
    let own: Vec<&ClipSettings> = settings
        .iter()
        .copied()
        .filter(|s| s.clip_match.is_some())
        .collect();
    let folder: Vec<&ClipSettings> = settings
        .iter()
        .copied()
        .filter(|s| {
            s.clip_match.is_none()
                && (s.threshold_source == SettingSource::Folder
                    || s.shell_source == SettingSource::Folder)
        })
        .collect();
    let per_bone = settings.iter().filter(|s| !s.bones.is_empty()).count();
    // One file named, or how many.
    let files = |of: &[&ClipSettings]| {
        let mut names: Vec<&str> = of
            .iter()
            .filter_map(|s| s.settings_file.as_deref())
            .collect();
        names.sort_unstable();
        names.dedup();
        match names.as_slice() {
            [one] => one.to_string(),
            _ => format!("{} clipforge.toml files", names.len()),
        }
    };
    let mut out = Vec::new();
    if !own.is_empty() {
        out.push(format!(
            "{} {} own settings from {} ([[clip]] tables)",
            count_used(own.len()),
            if own.len() == 1 { "its" } else { "their" },
            files(&own)
        ));
    }
    if !folder.is_empty() {
        out.push(format!(
            "{} the folder's settings from {}",
            count_used(folder.len()),
            files(&folder)
        ));
    }
    if per_bone > 0 {
        out.push(format!(
            "{} per-bone settings (listed in the JSON report's \"settings\")",
            count_used(per_bone)
        ));
    }
    out
}

/// "1 clip used" / "3 clips used".
fn count_used(n: usize) -> String {
    format!("{} used", count(n, "clip", "clips"))
}

/// "1 clip", "2 clips": counts in human-readable output (never in JSON/CSV).
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A duration of work done, as the app and the CLI show it: ms to one decimal; under 0.1 ms
/// "< 0.1 ms", not "0.0 ms" (a one-pose clip or a scalar track list compresses in a few µs, and
/// "0.0 ms" read as nothing done).
pub fn format_ms(ms: f64) -> String {
    if ms > 0.0 && ms < 0.05 {
        "< 0.1 ms".to_string()
    } else if ms < 0.0 && ms > -0.05 {
        // A saving a hair below zero (a PCH's net, measured) is not "-0.0 ms".
        "> -0.1 ms".to_string()
    } else {
        format!("{ms:.1} ms")
    }
}

/// A time in seconds, in words, as the app and the CLI write it: "1.23 s" from 0.1 s up, in ms
/// below ([`format_ms`]: "12.3 ms", "< 0.1 ms"). With three decimals of a second, a header's
/// 40 µs and a small PCH's load read "0.000 s", as if they cost nothing.
pub fn format_seconds(s: f64) -> String {
    if s.abs() >= 0.1 {
        format!("{s:.2} s")
    } else {
        format_ms(s * 1000.0)
    }
}

/// A figure in a column of figures to three decimals (the column's title gives the unit: the
/// CLI's and the app's "seconds", "ms per TU", "gain s"): "0.012", and "< 0.001" for a value
/// that is not zero but would print as "0.000" (a cheap header's 0.2 ms read as nothing).
pub fn format_3_decimals(v: f64) -> String {
    if v > 0.0 && v < 0.0005 {
        "< 0.001".to_string()
    } else if v < 0.0 && v > -0.0005 {
        "> -0.001".to_string()
    } else {
        format!("{v:.3}")
    }
}

/// A compression ratio as the app shows it ("11.9×"); `decimals` 1 per clip, 2 for totals.
pub fn format_ratio(ratio: f64, decimals: usize) -> String {
    format!("{ratio:.decimals$}×")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_like_numpy() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 5.5);
        assert!((percentile(&v, 85.0) - 8.65).abs() < 1e-12);
        assert!((percentile(&v, 99.0) - 9.91).abs() < 1e-12);
        assert_eq!(percentile(&[], 50.0), 0.0);
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
    }

    #[test]
    fn totals_count_failures_skips_and_cancellations() {
        let ok = ClipReport {
            raw_bytes: 1000,
            compressed_bytes: 100,
            max_error_cm: 0.01,
            compress_ms: 2.0,
            ..Default::default()
        };
        let skipped = ClipReport {
            skipped: true,
            raw_bytes: 1000,
            compressed_bytes: 300,
            compress_ms: 50.0,
            ..Default::default()
        };
        let bad = ClipReport {
            error: Some("x".into()),
            ..Default::default()
        };
        let cancelled = ClipReport {
            error: Some("c".into()),
            cancelled: true,
            ..Default::default()
        };
        let t = compute_totals(&[ok, skipped, bad, cancelled], 1000.0);
        assert_eq!((t.clips, t.failed, t.skipped, t.cancelled), (4, 1, 1, 1));
        assert_eq!(t.raw_bytes, 2000);
        assert_eq!(t.compressed_bytes, 400);
        assert_eq!(t.ratio, 5.0);
        assert_eq!(t.compress_ms, 2.0);
        assert!((t.throughput_kb_s - 1000.0 / 1024.0).abs() < 1e-9);
    }

    #[test]
    fn below_precision_is_its_own_status_counted_apart() {
        let floor = |f: f64| ClipReport {
            error: Some("threshold too low: …".into()),
            below_precision: Some(PrecisionFloor {
                threshold_cm: 0.001,
                floor_cm: f,
                bone: "hand".into(),
                min_threshold_cm: (f + 3e-5) as f32,
            }),
            ..Default::default()
        };
        let bad = ClipReport {
            error: Some("x".into()),
            ..Default::default()
        };
        let ok = ClipReport {
            raw_bytes: 1000,
            compressed_bytes: 100,
            ..Default::default()
        };
        assert_eq!(floor(0.0010702).status(), ClipStatus::BelowPrecision);
        assert_eq!(bad.status(), ClipStatus::Failed);
        assert_eq!(ok.status(), ClipStatus::Compressed);
        let rows = [floor(0.0010702), bad, ok];
        let t = compute_totals(&rows, 1.0);
        assert_eq!((t.clips, t.failed, t.below_precision), (3, 1, 1));
        // Its bytes are not in the sums (nothing was written).
        assert_eq!((t.raw_bytes, t.compressed_bytes), (1000, 100));
        assert_eq!(
            below_precision_summary(&rows).as_deref(),
            Some(
                "1 clip below float32 precision (floor 0.00107 cm): raise the threshold to at \
                 least 0.00111 cm"
            )
        );
        let two = [floor(0.0010702), floor(0.0213)];
        assert_eq!(
            below_precision_summary(&two).as_deref(),
            Some(
                "2 clips below float32 precision (floors 0.00107–0.0213 cm): raise the threshold \
                 to at least 0.0214 cm"
            )
        );
        assert_eq!(below_precision_summary(&rows[1..]), None);
        // Its search time counts, once: a refusal the skip cache remembered (skipped) is a
        // refusal, not "up to date", and was not searched again.
        let timed = |skipped| ClipReport {
            compress_ms: 7.0,
            skipped,
            ..floor(0.0010702)
        };
        let t = compute_totals(&[timed(false), timed(true)], 1.0);
        assert_eq!((t.clips, t.below_precision, t.skipped), (2, 2, 0));
        assert_eq!((t.compress_ms, t.compress_ms_p50), (7.0, 7.0));
        // The JSON and CSV say the status and the floor.
        let report = BatchReport {
            clips: rows.to_vec(),
            ..Default::default()
        };
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["clips"][0]["status"], "below_precision");
        assert_eq!(json["clips"][0]["below_precision"]["floor_cm"], 0.0010702);
        assert_eq!(json["clips"][0]["below_precision"]["bone"], "hand");
        assert_eq!(json["clips"][1]["status"], "failed");
        assert_eq!(json["clips"][2]["status"], "compressed");
        assert!(json["clips"][1].get("below_precision").is_none());
        let back: BatchReport = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(back.clips, report.clips);
        let csv = report.to_csv();
        let mut lines = csv.lines();
        assert!(
            lines
                .next()
                .unwrap()
                .ends_with(",status,precision_floor_cm")
        );
        assert!(lines.next().unwrap().ends_with(",below_precision,0.001070"));
        assert!(lines.next().unwrap().ends_with(",failed,"));
    }

    #[test]
    fn csv_quotes_fields() {
        let field = |f: &str| {
            let mut w = clipforge_base::fsio::csv_writer();
            w.write_record(["x", f, "y"]).unwrap();
            clipforge_base::fsio::csv_text(w)
        };
        assert_eq!(field("a,b"), "x,\"a,b\",y\n");
        assert_eq!(field("say \"hi\""), "x,\"say \"\"hi\"\"\",y\n");
        assert_eq!(field("two\nlines"), "x,\"two\nlines\",y\n");
        assert_eq!(field("plain"), "x,plain,y\n");
        assert_eq!(field(""), "x,,y\n");
    }

    #[test]
    fn counts_and_ratios_read_as_the_app_writes_them() {
        assert_eq!(count(1, "clip", "clips"), "1 clip");
        assert_eq!(count(0, "clip", "clips"), "0 clips");
        assert_eq!(count(2, "file", "files"), "2 files");
        assert_eq!(format_ratio(11.94, 1), "11.9×");
        assert_eq!(format_ratio(3.456, 2), "3.46×");
    }

    /// Small times never read as zero: in words ("< 0.1 ms") and in columns ("< 0.001").
    #[test]
    fn small_times_are_not_written_as_zero() {
        assert_eq!(format_ms(0.04), "< 0.1 ms");
        assert_eq!(format_ms(-0.01), "> -0.1 ms");
        assert_eq!(format_ms(0.0), "0.0 ms");
        assert_eq!(format_ms(12.34), "12.3 ms");
        assert_eq!(format_seconds(0.00004), "< 0.1 ms");
        assert_eq!(format_seconds(0.0123), "12.3 ms");
        assert_eq!(format_seconds(-0.0021), "-2.1 ms");
        assert_eq!(format_seconds(0.1), "0.10 s");
        assert_eq!(format_seconds(12.345), "12.35 s");
        assert_eq!(format_3_decimals(0.0002), "< 0.001");
        assert_eq!(format_3_decimals(-0.0002), "> -0.001");
        assert_eq!(format_3_decimals(0.0), "0.000");
        assert_eq!(format_3_decimals(0.012), "0.012");
        assert_eq!(format_3_decimals(0.0005), "0.001");
    }
}
