//! Folder settings: a `clipforge.toml` in a folder sets the compression defaults of the clips
//! under it (error threshold, shell distance, per-bone overrides in `[[bone]]` tables, per-clip
//! choices in `[[clip]]` tables, the units of formats that carry none, exclude patterns, the
//! sampling rate of the formats sampled from curves). Owns parsing that file, finding the nearest one for a clip (bounded to the input
//! root), merging it with the explicit options of a command line or a pipeline, and the settings
//! each clip was compressed with ([`ClipSettings`], recorded in its report row and in the skip
//! cache key). Documented in `docs/PIPELINE.md` ("Folder settings").

use clipforge_anim::CompressionSettings;
use clipforge_anim::bone_glob::{BoneGlob, glob_escape};
use clipforge_anim::formats::{ClipFormat, ImportOptions};
use regex::Regex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use toml::Spanned;

/// File name of the folder settings file.
pub const FILE_NAME: &str = "clipforge.toml";

/// Largest settings file read (it holds a handful of keys; anything bigger is not one).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Length unit of a clip file's positions, for the formats that do not say (BVH, ACL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    #[default]
    Cm,
    M,
    Mm,
    In,
}

impl Units {
    /// Centimetres in one unit.
    pub fn cm_per_unit(self) -> f64 {
        match self {
            Units::Cm => 1.0,
            Units::M => 100.0,
            Units::Mm => 0.1,
            Units::In => 2.54,
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "cm" => Some(Units::Cm),
            "m" => Some(Units::M),
            "mm" => Some(Units::Mm),
            "in" => Some(Units::In),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Units::Cm => "cm",
            Units::M => "m",
            Units::Mm => "mm",
            Units::In => "in",
        }
    }
}

/// A `[[bone]]` table: a threshold and/or shell distance (cm here; the compressor gets them in
/// the clip's units) for the bones whose names match a glob.
pub use clipforge_anim::compress::BoneOverride;

/// A parsed `clipforge.toml`.
#[derive(Clone, Debug)]
pub struct FolderSettings {
    /// The file it was read from.
    pub path: PathBuf,
    /// In cm.
    pub error_threshold: Option<f32>,
    /// In cm.
    pub shell_distance: Option<f32>,
    pub units: Option<Units>,
    /// Hz, for FBX and glTF (`--sample-rate`).
    pub sample_rate: Option<f64>,
    /// Regexes over the path relative to the input root (`/` separators).
    pub exclude: Vec<Regex>,
    pub bones: Vec<BoneOverride>,
    /// `[[clip]]` tables, in file order (a later one wins for the files both match).
    pub clips: Vec<ClipOverride>,
}

/// A `[[clip]]` table: the threshold and/or shell distance (cm) chosen for the clip files whose
/// path relative to the folder of the file holding the table matches a glob (`/` separators;
/// the syntax of `[[bone]] match`). What the app's "Keep A/B" records.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipOverride {
    pub pattern: String,
    /// In cm.
    pub error_threshold: Option<f32>,
    /// In cm.
    pub shell_distance: Option<f32>,
    /// Its `[[clip.bone]]` tables: per-bone settings for these clips only (the app's per-bone
    /// table saved for "this clip"). They win over the folder's `[[bone]]` tables.
    pub bones: Vec<BoneOverride>,
}

/// Where one of a clip's settings came from, most specific last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingSource {
    /// The defaults the caller gave: the app's Clips tab settings, the CLI's built-in defaults.
    #[default]
    Default,
    /// An explicit option: a command line's flag or a pipeline's key.
    Explicit,
    /// The folder's `clipforge.toml` (its top-level keys).
    Folder,
    /// A `[[clip]]` table of that file (an A/B choice kept in the app, or written by hand).
    Clip,
}

impl SettingSource {
    /// Words for a user; `default` names what the defaults are where they are shown ("Clips
    /// tab", "default"), `explicit` what set an explicit option ("command line", "pipeline").
    pub fn label(self, default: &'static str, explicit: &'static str) -> &'static str {
        match self {
            SettingSource::Default => default,
            SettingSource::Explicit => explicit,
            SettingSource::Folder => "folder clipforge.toml",
            SettingSource::Clip => "[[clip]] table",
        }
    }
}

/// A settings (or pipelines) file that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    #[error("{path}: cannot read: {message}")]
    Read { path: String, message: String },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: String,
        line: usize,
        message: String,
    },
}

/// 1-based line of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Turns a `toml` error into one naming the file and line (the message names the key).
pub(crate) fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> SettingsError {
    let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
    SettingsError::Invalid {
        path: path.display().to_string(),
        line,
        message: e.message().trim().to_string(),
    }
}

/// An error about one key's value.
pub(crate) fn value_error(
    path: &Path,
    text: &str,
    span: std::ops::Range<usize>,
    key: &str,
    problem: &str,
) -> SettingsError {
    SettingsError::Invalid {
        path: path.display().to_string(),
        line: line_of(text, span.start),
        message: format!("`{key}`: {problem}"),
    }
}

/// A positive, finite length in cm.
pub(crate) fn positive(
    path: &Path,
    text: &str,
    v: &Option<Spanned<f64>>,
    key: &str,
) -> Result<Option<f32>, SettingsError> {
    match v {
        None => Ok(None),
        Some(s) => {
            let x = *s.get_ref();
            if x.is_finite() && x > 0.0 && x <= f32::MAX as f64 {
                Ok(Some(x as f32))
            } else {
                Err(value_error(
                    path,
                    text,
                    s.span(),
                    key,
                    &format!("must be a positive number of cm, got {x}"),
                ))
            }
        }
    }
}

/// A sampling rate in Hz ([`clipforge_anim::formats::check_sample_rate`]).
pub(crate) fn sample_rate(
    path: &Path,
    text: &str,
    v: &Option<Spanned<f64>>,
) -> Result<Option<f64>, SettingsError> {
    match v {
        None => Ok(None),
        Some(s) => clipforge_anim::formats::check_sample_rate(*s.get_ref())
            .map(Some)
            .map_err(|e| value_error(path, text, s.span(), "sample_rate", &e.to_string())),
    }
}

/// An exclude pattern that does not compile: the regex crate's own short reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("not a valid regular expression: {reason}")]
pub struct BadExclude {
    pub reason: String,
}

/// Compiles one exclude pattern: the folder files', `--exclude`'s and the app's pipelines'.
pub fn compile_exclude(pattern: &str) -> Result<Regex, BadExclude> {
    Regex::new(pattern).map_err(|e| BadExclude {
        // The regex crate's message repeats the pattern with a caret under it: its last line
        // is the reason.
        reason: e
            .to_string()
            .lines()
            .last()
            .unwrap_or_default()
            .trim()
            .to_string(),
    })
}

/// Compiles exclude patterns, naming the file, line and pattern on error.
pub(crate) fn compile_excludes(
    path: &Path,
    text: &str,
    v: &Option<Vec<Spanned<String>>>,
) -> Result<Vec<Regex>, SettingsError> {
    let mut out = Vec::new();
    for p in v.iter().flatten() {
        let re = compile_exclude(p.get_ref()).map_err(|e| {
            value_error(
                path,
                text,
                p.span(),
                "exclude",
                &format!("'{}' is {e}", p.get_ref()),
            )
        })?;
        out.push(re);
    }
    Ok(out)
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    error_threshold: Option<Spanned<f64>>,
    shell_distance: Option<Spanned<f64>>,
    units: Option<Spanned<String>>,
    sample_rate: Option<Spanned<f64>>,
    exclude: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    bone: Vec<RawBone>,
    #[serde(default)]
    clip: Vec<RawClip>,
}

/// A `[[clip]]` table: a `[[bone]]`'s keys plus its own `[[clip.bone]]` tables.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClip {
    #[serde(rename = "match")]
    pattern: Spanned<String>,
    error_threshold: Option<Spanned<f64>>,
    shell_distance: Option<Spanned<f64>>,
    #[serde(default)]
    bone: Vec<RawBone>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBone {
    #[serde(rename = "match")]
    pattern: Spanned<String>,
    error_threshold: Option<Spanned<f64>>,
    shell_distance: Option<Spanned<f64>>,
}

/// A `match` key's glob: not empty, and one that compiles (else the file, line and reason).
fn check_glob(path: &Path, text: &str, pattern: &Spanned<String>) -> Result<(), SettingsError> {
    if pattern.get_ref().is_empty() {
        return Err(value_error(
            path,
            text,
            pattern.span(),
            "match",
            "must not be empty",
        ));
    }
    BoneGlob::new(pattern.get_ref())
        .map(|_| ())
        .map_err(|e| value_error(path, text, pattern.span(), "match", &e.to_string()))
}

/// `[[bone]]` (or `[[clip.bone]]`) tables, in file order: a later table wins over an earlier
/// one for the bones both match.
fn parse_bones(
    path: &Path,
    text: &str,
    raw: &[RawBone],
) -> Result<Vec<BoneOverride>, SettingsError> {
    let mut bones = Vec::new();
    for b in raw {
        check_glob(path, text, &b.pattern)?;
        bones.push(BoneOverride {
            pattern: b.pattern.get_ref().clone(),
            error_threshold: positive(path, text, &b.error_threshold, "error_threshold")?,
            shell_distance: positive(path, text, &b.shell_distance, "shell_distance")?,
        });
    }
    Ok(bones)
}

impl FolderSettings {
    /// Parses the text of a `clipforge.toml` read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, SettingsError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
        let units = match &raw.units {
            None => None,
            Some(u) => Some(Units::parse(u.get_ref()).ok_or_else(|| {
                value_error(
                    path,
                    text,
                    u.span(),
                    "units",
                    &format!(
                        "'{}' is not a unit; expected \"cm\", \"m\", \"mm\" or \"in\"",
                        u.get_ref()
                    ),
                )
            })?),
        };
        let bones = parse_bones(path, text, &raw.bone)?;
        let mut clips = Vec::new();
        for c in &raw.clip {
            check_glob(path, text, &c.pattern)?;
            clips.push(ClipOverride {
                pattern: c.pattern.get_ref().clone(),
                error_threshold: positive(path, text, &c.error_threshold, "error_threshold")?,
                shell_distance: positive(path, text, &c.shell_distance, "shell_distance")?,
                bones: parse_bones(path, text, &c.bone)?,
            });
        }
        Ok(Self {
            path: path.to_path_buf(),
            error_threshold: positive(path, text, &raw.error_threshold, "error_threshold")?,
            shell_distance: positive(path, text, &raw.shell_distance, "shell_distance")?,
            units,
            sample_rate: sample_rate(path, text, &raw.sample_rate)?,
            exclude: compile_excludes(path, text, &raw.exclude)?,
            bones,
            clips,
        })
    }

    /// The `[[clip]]` tables matching the clip file `clip` (under this file's folder), in file
    /// order.
    pub(crate) fn clips_for<'a>(
        &'a self,
        clip: &Path,
    ) -> impl Iterator<Item = &'a ClipOverride> + 'a {
        let rel = self
            .path
            .parent()
            .and_then(|d| clip.strip_prefix(d).ok())
            .map(crate::naming::cache_key);
        self.clips.iter().filter(move |c| {
            rel.as_deref()
                .is_some_and(|r| clipforge_anim::compress::glob_match(&c.pattern, r))
        })
    }

    /// Reads and parses `path` (a regular file, checked on its handle).
    pub fn load(path: &Path) -> Result<Self, SettingsError> {
        let read_err = |message: String| SettingsError::Read {
            path: path.display().to_string(),
            message,
        };
        let bytes = clipforge_base::fsio::read_regular(path, MAX_FILE_BYTES)
            .map_err(|e| read_err(e.to_string()))?;
        if bytes.is_empty() {
            // An empty file sets nothing: valid, and worth no error.
            return Self::parse(path, "");
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            read_err(format!(
                "not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Self::parse(path, &text)
    }
}

/// Options given explicitly (command line, pipeline): they win over every folder file.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// In cm.
    pub error_threshold: Option<f32>,
    /// In cm.
    pub shell_distance: Option<f32>,
    /// Hz, for the formats sampled from curves (FBX, glTF); checked by the caller.
    pub sample_rate: Option<f64>,
    /// Regexes over the path relative to the input root; added to the folder files' own.
    pub exclude: Vec<Regex>,
    /// Per-bone overrides (cm), applied after the folder file's `[[bone]]` tables: they win
    /// for the bones both match.
    pub bones: Vec<BoneOverride>,
    /// Ignore the folder files' `[[clip]]` tables (which otherwise win over the threshold and
    /// shell distance above): the A/B comparison compresses with exactly the settings it shows.
    pub ignore_clip_tables: bool,
}

impl Overrides {
    /// `defaults` with these explicit options applied: what a clip gets where no folder file
    /// says otherwise (the report's top-level `settings`; each row has its own).
    pub fn applied_to(&self, defaults: &CompressionSettings) -> CompressionSettings {
        CompressionSettings {
            error_threshold: self.error_threshold.unwrap_or(defaults.error_threshold),
            shell_distance: self.shell_distance.or(defaults.shell_distance),
            bones: defaults.bones.iter().chain(&self.bones).cloned().collect(),
        }
    }
}

/// The settings one clip was compressed with, as its report row records them.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClipSettings {
    /// Always in cm, whatever the clip's units.
    pub error_threshold_cm: f32,
    /// In cm; `None`: each bone's own.
    pub shell_distance_cm: Option<f32>,
    /// Units the clip file's positions were read in (`cm` for glTF, converted from metres by
    /// the importer).
    pub units: Units,
    /// The rate an FBX or glTF clip was sampled at when one was asked for (`--sample-rate`,
    /// `sample_rate`); absent: the file's own rate (and always for ACL and BVH, never resampled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_rate_hz: Option<f64>,
    /// The `clipforge.toml` that applied, if any.
    pub settings_file: Option<String>,
    /// Per-bone overrides that applied (cm): the folder file's `[[bone]]` tables, then the
    /// explicit ones (command line, app), later entries winning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bones: Vec<BoneOverride>,
    /// The `match` of the `[[clip]]` table that set the threshold, shell distance or per-bone
    /// settings, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip_match: Option<String>,
    /// Where `error_threshold_cm` came from.
    #[serde(default, skip_serializing_if = "is_default_source")]
    pub threshold_source: SettingSource,
    /// Where `shell_distance_cm` came from.
    #[serde(default, skip_serializing_if = "is_default_source")]
    pub shell_source: SettingSource,
    /// How many of `bones` (the last ones) come from the `[[clip]]` table's `[[clip.bone]]`s.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clip_bones: usize,
    /// How many of `bones` (the first ones) come from the folder file's `[[bone]]` tables; the
    /// ones between are explicit (command line, pipeline, app).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub folder_bones: usize,
}

fn is_default_source(s: &SettingSource) -> bool {
    *s == SettingSource::Default
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ClipSettings {
    /// The same settings as far as compression goes (what the skip cache's key holds: values,
    /// not where they came from nor which file held them).
    pub fn same_effect(&self, other: &ClipSettings) -> bool {
        self.error_threshold_cm == other.error_threshold_cm
            && self.shell_distance_cm == other.shell_distance_cm
            && self.units == other.units
            && self.sample_rate_hz == other.sample_rate_hz
            && self.bones == other.bones
    }

    /// The record a `.cfa` keeps of them (`clipforge inspect` shows it; `docs/FORMAT.md`,
    /// "Settings record"), stamped with this ClipForge's version.
    pub fn record(&self) -> clipforge_anim::runtime::metadata::Settings {
        use clipforge_anim::runtime::metadata::{BoneSetting, Settings, Source};
        let source = |s: SettingSource| match s {
            SettingSource::Default => Source::Default,
            SettingSource::Explicit => Source::Explicit,
            SettingSource::Folder => Source::Folder,
            SettingSource::Clip => Source::Clip,
        };
        let clip_from = self.bones.len() - self.clip_bones.min(self.bones.len());
        Settings {
            error_threshold_cm: self.error_threshold_cm,
            threshold_source: source(self.threshold_source),
            shell_distance_cm: self.shell_distance_cm,
            shell_source: source(self.shell_source),
            bones: self
                .bones
                .iter()
                .enumerate()
                .map(|(i, b)| BoneSetting {
                    pattern: b.pattern.clone(),
                    source: if i >= clip_from {
                        Source::Clip
                    } else if i < self.folder_bones {
                        Source::Folder
                    } else {
                        Source::Explicit
                    },
                    error_threshold_cm: b.error_threshold,
                    shell_distance_cm: b.shell_distance,
                })
                .collect(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// A clip-specific choice applies: a `[[clip]]` table or per-bone settings (the table's
    /// marker).
    pub fn has_override(&self) -> bool {
        self.clip_match.is_some() || !self.bones.is_empty()
    }

    /// One line saying each setting and where it came from, e.g. "0.1 cm ([[clip]] table
    /// \"walk.bvh\" in /a/clipforge.toml) · shell: each bone's own · per-bone: head 0.002".
    /// `default` / `explicit`: see [`SettingSource::label`].
    pub fn describe(&self, default: &'static str, explicit: &'static str) -> String {
        let file = self.settings_file.as_deref().unwrap_or("clipforge.toml");
        let from = |src: SettingSource| match src {
            SettingSource::Folder => file.to_string(),
            SettingSource::Clip => format!(
                "[[clip]] \"{}\" in {file}",
                self.clip_match.as_deref().unwrap_or("")
            ),
            other => other.label(default, explicit).to_string(),
        };
        let mut out = format!(
            "threshold {} cm ({})",
            short_cm(self.error_threshold_cm),
            from(self.threshold_source)
        );
        match self.shell_distance_cm {
            Some(d) => out.push_str(&format!(
                " · shell {} cm ({})",
                short_cm(d),
                from(self.shell_source)
            )),
            None => out.push_str(" · shell: each bone's own"),
        }
        if self.units != Units::Cm {
            out.push_str(&format!(" · units {} ({file})", self.units.label()));
        }
        if !self.bones.is_empty() {
            let folder = self.bones.len() - self.clip_bones.min(self.bones.len());
            let list = |b: &[BoneOverride]| {
                b.iter()
                    .map(|b| {
                        let mut s = b.pattern.clone();
                        if let Some(t) = b.error_threshold {
                            s.push_str(&format!(" {}", short_cm(t)));
                        }
                        if let Some(d) = b.shell_distance {
                            s.push_str(&format!(" shell {}", short_cm(d)));
                        }
                        s
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            if folder > 0 {
                out.push_str(&format!(
                    " · per-bone ({}): {}",
                    if self.settings_file.is_some() {
                        format!("{file} / {explicit}")
                    } else {
                        explicit.to_string()
                    },
                    list(&self.bones[..folder])
                ));
            }
            if self.clip_bones > 0 {
                out.push_str(&format!(
                    " · per-bone for this clip ([[clip]] in {file}): {}",
                    list(&self.bones[folder..])
                ));
            }
        }
        out
    }
}

impl ClipSettings {
    /// A warning for each of the clip's own per-bone tables (`[[clip.bone]]`) whose `match`
    /// selects no bone of `names`: the table was written for this very clip, so it is a mistake
    /// (most often a name's case: `Head` for `head`), and without a word the clip is compressed
    /// at its plain threshold while the settings line lists the table as if it applied. The
    /// folder's `[[bone]]` tables and explicit ones are not checked: they serve clips of many
    /// skeletons and may rightly match nothing in one of them.
    pub fn unmatched_clip_bones(&self, names: &[String]) -> Vec<String> {
        let from = self.bones.len() - self.clip_bones.min(self.bones.len());
        let file = self.settings_file.as_deref().unwrap_or(FILE_NAME);
        self.bones[from..]
            .iter()
            .filter_map(|b| {
                // A pattern that does not compile was refused when the file was read.
                let glob = BoneGlob::new(&b.pattern).ok()?;
                if names.iter().any(|n| glob.is_match(n)) {
                    return None;
                }
                let lower = b.pattern.to_lowercase();
                let hint = BoneGlob::new(&lower)
                    .ok()
                    .and_then(|g| names.iter().find(|n| g.is_match(&n.to_lowercase())))
                    .map(|n| format!(" (bone names are case-sensitive: the clip has \"{n}\")"))
                    .unwrap_or_default();
                Some(format!(
                    "{file}: [[clip.bone]] match \"{}\" selects no bone of this clip, so its \
                     settings were not applied{hint}",
                    b.pattern
                ))
            })
            .collect()
    }
}

/// A length in cm as short as it reads back (0.1, not 0.100000001).
fn short_cm(v: f32) -> String {
    format!("{v}")
}

/// What applies to one clip file.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// For the compressor, in the clip's own units.
    pub compression: CompressionSettings,
    /// What the report records (cm).
    pub clip: ClipSettings,
    /// How the file is imported (`--sample-rate`).
    pub import: ImportOptions,
    /// Warnings about the settings (none today; kept for the report rows).
    pub warnings: Vec<String>,
}

impl Resolved {
    /// Centimetres per clip unit (multiplies the compressor's error figures into cm).
    pub fn cm_per_unit(&self) -> f64 {
        self.clip.units.cm_per_unit()
    }

    /// The skip cache's key for these settings: changing any of them recompresses. For clips in
    /// cm (every clip before folder settings existed) it is the key older versions wrote.
    pub fn settings_key(&self) -> String {
        let mut key = format!(
            "error_threshold={:?};shell_distance={:?}",
            self.clip.error_threshold_cm, self.clip.shell_distance_cm
        );
        if self.clip.units != Units::Cm {
            key.push_str(";units=");
            key.push_str(self.clip.units.label());
        }
        if let Some(hz) = self.clip.sample_rate_hz {
            key.push_str(&format!(";sample_rate={hz:?}"));
        }
        // Absent without overrides: the key older versions wrote.
        for b in &self.clip.bones {
            key.push_str(&format!(
                ";bone={:?}:{:?}:{:?}",
                b.pattern, b.error_threshold, b.shell_distance
            ));
        }
        key.push_str(";codec=");
        key.push_str(crate::fingerprint::codec_fingerprint());
        key
    }
}

type Found = Result<Option<Arc<FolderSettings>>, SettingsError>;

/// Finds the folder settings of clips and merges them with the defaults and explicit options.
/// Files are read once per resolver (a watch calls [`Self::invalidate`] when one changes).
#[derive(Debug)]
pub struct SettingsResolver {
    defaults: CompressionSettings,
    overrides: Overrides,
    /// Folder → the settings file found in that very folder.
    files: Mutex<HashMap<PathBuf, Found>>,
}

impl SettingsResolver {
    /// `defaults`: what applies when neither a folder file nor an explicit option says (cm).
    pub fn new(defaults: CompressionSettings, overrides: Overrides) -> Self {
        Self {
            defaults,
            overrides,
            files: Mutex::new(HashMap::new()),
        }
    }

    /// Forgets every file read (one changed).
    pub(crate) fn invalidate(&self) {
        self.files.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn in_folder(&self, dir: &Path) -> Found {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = files.get(dir) {
            return f.clone();
        }
        let p = dir.join(FILE_NAME);
        let found = match std::fs::symlink_metadata(&p) {
            Err(_) => Ok(None),
            Ok(_) => FolderSettings::load(&p).map(|s| Some(Arc::new(s))),
        };
        files.insert(dir.to_path_buf(), found.clone());
        found
    }

    /// The nearest `clipforge.toml` from `path`'s folder up to `root` (inclusive, never above).
    pub fn nearest(&self, root: &Path, path: &Path) -> Found {
        let mut dir = path.parent();
        while let Some(d) = dir {
            if !d.starts_with(root) {
                break;
            }
            if let Some(f) = self.in_folder(d)? {
                return Ok(Some(f));
            }
            if d == root {
                break;
            }
            dir = d.parent();
        }
        Ok(None)
    }

    /// True when `path` (under `root`) matches an explicit exclude pattern or one of its nearest
    /// settings file's. A settings file that does not parse excludes nothing (its error is
    /// reported on the clips under it).
    pub fn excluded(&self, root: &Path, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(root) else {
            return false;
        };
        let rel = crate::naming::cache_key(rel);
        if self.overrides.exclude.iter().any(|r| r.is_match(&rel)) {
            return true;
        }
        matches!(self.nearest(root, path), Ok(Some(f)) if f.exclude.iter().any(|r| r.is_match(&rel)))
    }

    /// The settings of the clip file `path` of format `format`, under input root `root`.
    pub fn resolve(
        &self,
        root: &Path,
        path: &Path,
        format: ClipFormat,
    ) -> Result<Resolved, SettingsError> {
        let folder = self.nearest(root, path)?;
        let f = folder.as_deref();
        // `[[clip]]` tables first: chosen for this very clip, they win like a per-bone override
        // (the last matching table per key).
        let clips: Vec<&ClipOverride> = match f {
            Some(f) if !self.overrides.ignore_clip_tables => f.clips_for(path).collect(),
            _ => Vec::new(),
        };
        let clip_threshold = clips.iter().rev().find_map(|c| c.error_threshold);
        let clip_shell = clips.iter().rev().find_map(|c| c.shell_distance);
        let clip_match = clips
            .iter()
            .rev()
            .find(|c| {
                c.error_threshold.is_some() || c.shell_distance.is_some() || !c.bones.is_empty()
            })
            .map(|c| c.pattern.clone());
        let f_threshold = f.and_then(|f| f.error_threshold);
        let (error_threshold_cm, threshold_source) =
            match (clip_threshold, self.overrides.error_threshold, f_threshold) {
                (Some(t), _, _) => (t, SettingSource::Clip),
                (None, Some(t), _) => (t, SettingSource::Explicit),
                (None, None, Some(t)) => (t, SettingSource::Folder),
                (None, None, None) => (self.defaults.error_threshold, SettingSource::Default),
            };
        let (shell_distance_cm, shell_source) = match (
            clip_shell,
            self.overrides.shell_distance,
            f.and_then(|f| f.shell_distance),
        ) {
            (Some(d), _, _) => (Some(d), SettingSource::Clip),
            (None, Some(d), _) => (Some(d), SettingSource::Explicit),
            (None, None, Some(d)) => (Some(d), SettingSource::Folder),
            (None, None, None) => (self.defaults.shell_distance, SettingSource::Default),
        };
        // glTF is in metres by specification and FBX says its unit (UnitScaleFactor); both
        // importers convert to cm: `units` only concerns the formats that carry none (BVH, ACL).
        let units = if format.info().carries_units {
            Units::Cm
        } else {
            f.and_then(|f| f.units).unwrap_or_default()
        };
        let import = ImportOptions {
            sample_rate: self.overrides.sample_rate.or(f.and_then(|f| f.sample_rate)),
        };
        // Recorded (and part of the cache key) only where it changes the import.
        let sample_rate_hz = import.sample_rate.filter(|_| import.applies_to(format));
        let k = units.cm_per_unit();
        let to_units = |cm: f32| (cm as f64 / k) as f32;
        // Most specific last: the folder's tables, the explicit ones, then the clip's own
        // (`[[clip.bone]]`: chosen for this very clip, they win as its `[[clip]]` keys do).
        let clip_bones: Vec<&BoneOverride> = clips.iter().flat_map(|c| &c.bones).collect();
        let bones: Vec<BoneOverride> = f
            .map(|f| f.bones.as_slice())
            .unwrap_or_default()
            .iter()
            .chain(&self.overrides.bones)
            .chain(clip_bones.iter().copied())
            .cloned()
            .collect();
        Ok(Resolved {
            compression: CompressionSettings {
                error_threshold: to_units(error_threshold_cm),
                shell_distance: shell_distance_cm.map(to_units),
                bones: bones
                    .iter()
                    .map(|b| BoneOverride {
                        pattern: b.pattern.clone(),
                        error_threshold: b.error_threshold.map(to_units),
                        shell_distance: b.shell_distance.map(to_units),
                    })
                    .collect(),
            },
            clip: ClipSettings {
                error_threshold_cm,
                shell_distance_cm,
                units,
                sample_rate_hz,
                settings_file: f.map(|f| f.path.display().to_string()),
                bones,
                clip_match,
                threshold_source,
                shell_source,
                clip_bones: clip_bones.len(),
                folder_bones: f.map_or(0, |f| f.bones.len()),
            },
            import,
            warnings: Vec::new(),
        })
    }
}

/// What a per-bone override on the command line must look like.
const BONE_OVERRIDE_USAGE: &str = "expected GLOB=CM, GLOB=CM,shell=CM or GLOB=shell=CM";

/// Why a command line's per-bone override (`--bone`) was refused; each names what was given.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BoneOverrideError {
    #[error("'{given}': {}", BONE_OVERRIDE_USAGE)]
    NoEquals { given: String },
    #[error("'{given}': the bone name pattern is empty ({})", BONE_OVERRIDE_USAGE)]
    EmptyPattern { given: String },
    /// `what`: "threshold" or "shell distance".
    #[error("'{given}': {what} '{value}' is not a positive number of cm")]
    NotPositiveCm {
        given: String,
        what: &'static str,
        value: String,
    },
    #[error("'{given}': shell= given twice")]
    ShellTwice { given: String },
    #[error("'{given}': unexpected '{part}' ({})", BONE_OVERRIDE_USAGE)]
    Unexpected { given: String, part: String },
    #[error("'{given}': {glob}")]
    BadGlob {
        given: String,
        glob: clipforge_anim::bone_glob::BadGlob,
    },
}

/// Parses a command line's per-bone override: `GLOB=CM`, `GLOB=CM,shell=CM` or
/// `GLOB=shell=CM` (cm; the glob is everything before the first `=`).
pub fn parse_bone_override(s: &str) -> Result<BoneOverride, BoneOverrideError> {
    let given = || s.to_string();
    let (pattern, rest) = s
        .split_once('=')
        .ok_or_else(|| BoneOverrideError::NoEquals { given: given() })?;
    if pattern.is_empty() {
        return Err(BoneOverrideError::EmptyPattern { given: given() });
    }
    if let Err(glob) = BoneGlob::new(pattern) {
        return Err(BoneOverrideError::BadGlob {
            given: given(),
            glob,
        });
    }
    let cm = |v: &str, what: &'static str| match v.trim().parse::<f32>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(BoneOverrideError::NotPositiveCm {
            given: given(),
            what,
            value: v.to_string(),
        }),
    };
    let mut out = BoneOverride {
        pattern: pattern.to_string(),
        error_threshold: None,
        shell_distance: None,
    };
    for (i, part) in rest.split(',').enumerate() {
        if let Some(d) = part.trim().strip_prefix("shell=") {
            if out.shell_distance.is_some() {
                return Err(BoneOverrideError::ShellTwice { given: given() });
            }
            out.shell_distance = Some(cm(d, "shell distance")?);
        } else if i == 0 {
            out.error_threshold = Some(cm(part, "threshold")?);
        } else {
            return Err(BoneOverrideError::Unexpected {
                given: given(),
                part: part.to_string(),
            });
        }
    }
    Ok(out)
}

/// The line that starts the app's own `[[bone]]` tables at the end of a `clipforge.toml`: the
/// app rewrites everything from it to the end of the file and leaves the rest as it is. Being
/// last, its tables win over the file's own for the bones both match.
pub(crate) const APP_BONES_MARKER: &str =
    "# --- per-bone settings from the ClipForge app (rewritten by the app from here on) ---";

/// The per-bone overrides the app saved in a `clipforge.toml`'s text (its tables after
/// [`APP_BONES_MARKER`]); empty when there are none or the file does not parse.
pub(crate) fn app_bones(path: &Path, text: &str) -> Vec<BoneOverride> {
    let Some(at) = text.find(APP_BONES_MARKER) else {
        return Vec::new();
    };
    let before = FolderSettings::parse(path, &text[..at]).map_or(0, |f| f.bones.len());
    FolderSettings::parse(path, text).map_or(Vec::new(), |f| f.bones[before..].to_vec())
}

/// `text` (a `clipforge.toml`, possibly empty) with the app's tables replaced by `bones` (cm);
/// checked to parse before it is returned.
pub(crate) fn with_app_bones(
    path: &Path,
    text: &str,
    bones: &[BoneOverride],
) -> Result<String, SettingsError> {
    let mut out = match text.find(APP_BONES_MARKER) {
        Some(at) => text[..at].trim_end().to_string(),
        None => text.trim_end().to_string(),
    };
    if !bones.is_empty() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(APP_BONES_MARKER);
        out.push('\n');
        for b in bones {
            // A JSON string is a valid TOML basic string (same escapes).
            let pattern = serde_json::to_string(&b.pattern).unwrap_or_default();
            out.push_str(&format!("[[bone]]\nmatch = {pattern}\n"));
            if let Some(t) = b.error_threshold {
                out.push_str(&format!("error_threshold = {t:?}\n"));
            }
            if let Some(d) = b.shell_distance {
                out.push_str(&format!("shell_distance = {d:?}\n"));
            }
        }
    } else if !out.is_empty() {
        out.push('\n');
    }
    FolderSettings::parse(path, &out)?;
    Ok(out)
}

/// The `clipforge.toml` the app saves a clip's choices into: the one that applies to the clip
/// file `clip` (the nearest one from its folder up to the input root `root`), so the file's other
/// settings (units, thresholds, excludes) keep applying to the clip; a new one in the clip's
/// folder when none does. (A new file in the clip's folder beside a parent's would take the
/// parent's place for that folder, dropping its units and thresholds.)
pub fn applying_file(root: &Path, clip: &Path) -> Result<PathBuf, SettingsError> {
    let resolver = SettingsResolver::new(CompressionSettings::default(), Overrides::default());
    match resolver.nearest(root, clip)? {
        Some(f) => Ok(f.path.clone()),
        None => Ok(clip
            .parent()
            .ok_or_else(|| SettingsError::Read {
                path: clip.display().to_string(),
                message: "the clip has no folder".into(),
            })?
            .join(FILE_NAME)),
    }
}

/// Saves the app's per-bone overrides (cm) into the settings file `path` (created when missing;
/// the rest of an existing file is kept as it is), atomically. Returns the file's path. The app
/// passes [`applying_file`].
pub fn save_app_bones(path: &Path, bones: &[BoneOverride]) -> Result<PathBuf, SettingsError> {
    let path = path.to_path_buf();
    let text = read_settings_text(&path)?;
    let out = with_app_bones(&path, &text, bones)?;
    clipforge_base::fsio::write_atomic(&path, out.as_bytes()).map_err(|e| SettingsError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    Ok(path)
}

/// The line that starts the app's `[[clip]]` tables (what "Keep A/B" chose): the app rewrites
/// the lines from it up to [`APP_BONES_MARKER`] (or the end of the file) and keeps the rest.
pub const APP_CLIPS_MARKER: &str =
    "# --- per-clip settings kept in the ClipForge app (rewritten by the app from here on) ---";

/// Where the app's `[[clip]]` section of `text` starts and ends (byte offsets), if it has one.
fn app_clips_span(text: &str) -> Option<(usize, usize)> {
    let start = text.find(APP_CLIPS_MARKER)?;
    let end = text[start..]
        .find(APP_BONES_MARKER)
        .map_or(text.len(), |e| start + e);
    Some((start, end))
}

/// The `[[clip]]` tables the app saved in a `clipforge.toml`'s text; empty when there are none
/// or they do not parse.
pub(crate) fn app_clips(path: &Path, text: &str) -> Vec<ClipOverride> {
    app_clips_span(text)
        .and_then(|(s, e)| FolderSettings::parse(path, &text[s..e]).ok())
        .map_or(Vec::new(), |f| f.clips)
}

/// `text` (a `clipforge.toml`, possibly empty) with `clip` among the app's `[[clip]]` tables
/// (replacing one with the same `match`). The section goes before the app's per-bone section
/// (which the per-bone editor rewrites to the end of the file); the rest of the text, comments
/// included, is kept as it is. Checked to parse before it is returned.
pub(crate) fn with_app_clip(
    path: &Path,
    text: &str,
    clip: &ClipOverride,
) -> Result<String, SettingsError> {
    let mut clips = app_clips(path, text);
    clips.retain(|c| c.pattern != clip.pattern);
    clips.push(clip.clone());
    let (before, after) = match app_clips_span(text) {
        Some((s, e)) => (&text[..s], &text[e..]),
        None => match text.find(APP_BONES_MARKER) {
            Some(b) => (&text[..b], &text[b..]),
            None => (text, ""),
        },
    };
    let mut out = before.trim_end().to_string();
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(APP_CLIPS_MARKER);
    out.push('\n');
    for c in &clips {
        // A JSON string is a valid TOML basic string (same escapes).
        let pattern = serde_json::to_string(&c.pattern).unwrap_or_default();
        out.push_str(&format!("[[clip]]\nmatch = {pattern}\n"));
        if let Some(t) = c.error_threshold {
            out.push_str(&format!("error_threshold = {t:?}\n"));
        }
        if let Some(d) = c.shell_distance {
            out.push_str(&format!("shell_distance = {d:?}\n"));
        }
        for b in &c.bones {
            let pattern = serde_json::to_string(&b.pattern).unwrap_or_default();
            out.push_str(&format!("[[clip.bone]]\nmatch = {pattern}\n"));
            if let Some(t) = b.error_threshold {
                out.push_str(&format!("error_threshold = {t:?}\n"));
            }
            if let Some(d) = b.shell_distance {
                out.push_str(&format!("shell_distance = {d:?}\n"));
            }
        }
    }
    if !after.is_empty() {
        out.push('\n');
        out.push_str(after);
    }
    FolderSettings::parse(path, &out)?;
    Ok(out)
}

/// A settings file's text ("" when it does not exist).
fn read_settings_text(path: &Path) -> Result<String, SettingsError> {
    let read_err = |message: String| SettingsError::Read {
        path: path.display().to_string(),
        message,
    };
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(String::new()),
        Ok(_) => {
            let bytes = clipforge_base::fsio::read_regular(path, MAX_FILE_BYTES)
                .map_err(|e| read_err(e.to_string()))?;
            String::from_utf8(bytes).map_err(|_| read_err("not UTF-8 text".into()))
        }
    }
}

/// Records that the clip file `clip` (under input root `root`) is to be compressed with
/// `error_threshold` / `shell_distance` (cm): a `[[clip]]` table matching its path, in the
/// `clipforge.toml` that applies to it (the nearest one up to `root`, so the other clips keep
/// theirs), or in a new one in the clip's folder when none does. Written atomically; the rest
/// of the file is kept. Returns the file's path.
pub(crate) fn save_clip_choice(
    root: &Path,
    clip: &Path,
    error_threshold: f32,
    shell_distance: Option<f32>,
) -> Result<PathBuf, SettingsError> {
    let path = applying_file(root, clip)?;
    let rel = path
        .parent()
        .and_then(|d| clip.strip_prefix(d).ok())
        .map(crate::naming::cache_key)
        .unwrap_or_default();
    let text = read_settings_text(&path)?;
    let out = with_app_clip(
        &path,
        &text,
        &ClipOverride {
            pattern: glob_escape(&rel),
            error_threshold: Some(error_threshold),
            shell_distance,
            // A kept A/B side keeps the clip's own per-bone settings.
            bones: app_clips(&path, &text)
                .into_iter()
                .find(|c| c.pattern == glob_escape(&rel))
                .map(|c| c.bones)
                .unwrap_or_default(),
        },
    )?;
    clipforge_base::fsio::write_atomic(&path, out.as_bytes()).map_err(|e| SettingsError::Read {
        path: path.display().to_string(),
        message: format!("cannot write: {e}"),
    })?;
    Ok(path)
}

/// Saves per-bone settings (cm) for the clip file `clip` only (under input root `root`): the
/// `[[clip.bone]]` tables of its `[[clip]]` table (kept threshold and shell distance stay), in
/// the `clipforge.toml` that applies to it ([`applying_file`]). Empty `bones` removes them (and
/// the table, when it sets nothing else). Written atomically; returns the file's path.
pub fn save_clip_bones(
    root: &Path,
    clip: &Path,
    bones: &[BoneOverride],
) -> Result<PathBuf, SettingsError> {
    let path = applying_file(root, clip)?;
    let rel = path
        .parent()
        .and_then(|d| clip.strip_prefix(d).ok())
        .map(crate::naming::cache_key)
        .unwrap_or_default();
    let pattern = glob_escape(&rel);
    let text = read_settings_text(&path)?;
    let mut table = app_clips(&path, &text)
        .into_iter()
        .find(|c| c.pattern == pattern)
        .unwrap_or(ClipOverride {
            pattern,
            error_threshold: None,
            shell_distance: None,
            bones: Vec::new(),
        });
    table.bones = bones.to_vec();
    let out = with_app_clip(&path, &text, &table)?;
    clipforge_base::fsio::write_atomic(&path, out.as_bytes()).map_err(|e| SettingsError::Read {
        path: path.display().to_string(),
        message: format!("cannot write: {e}"),
    })?;
    Ok(path)
}

/// The `[[clip.bone]]` settings the app saved for the clip file `clip` in the settings file
/// `path` (empty when none).
pub(crate) fn app_clip_bones(path: &Path, clip: &Path) -> Vec<BoneOverride> {
    let Ok(text) = read_settings_text(path) else {
        return Vec::new();
    };
    let Some(rel) = path
        .parent()
        .and_then(|d| clip.strip_prefix(d).ok())
        .map(crate::naming::cache_key)
    else {
        return Vec::new();
    };
    let pattern = glob_escape(&rel);
    app_clips(path, &text)
        .into_iter()
        .find(|c| c.pattern == pattern)
        .map(|c| c.bones)
        .unwrap_or_default()
}

/// Input root of a clip file: the folder its `relative` path starts from.
pub fn root_of(path: &Path, relative: &Path) -> PathBuf {
    path.ancestors()
        .nth(relative.components().count())
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bone_override_refusals_say_what_was_given() {
        let e = |s: &str| parse_bone_override(s).unwrap_err().to_string();
        let usage = "expected GLOB=CM, GLOB=CM,shell=CM or GLOB=shell=CM";
        assert_eq!(e("hand"), format!("'hand': {usage}"));
        assert_eq!(
            e("=0.1"),
            format!("'=0.1': the bone name pattern is empty ({usage})")
        );
        assert_eq!(
            e("hand=-1"),
            "'hand=-1': threshold '-1' is not a positive number of cm"
        );
        assert_eq!(
            e("hand=shell=x"),
            "'hand=shell=x': shell distance 'x' is not a positive number of cm"
        );
        assert_eq!(
            e("hand=shell=1,shell=2"),
            "'hand=shell=1,shell=2': shell= given twice"
        );
        assert_eq!(
            e("hand=0.1,foo"),
            format!("'hand=0.1,foo': unexpected 'foo' ({usage})")
        );
        assert_eq!(
            parse_bone_override("hand").unwrap_err(),
            BoneOverrideError::NoEquals {
                given: "hand".into()
            }
        );
    }

    fn parse(text: &str) -> Result<FolderSettings, SettingsError> {
        FolderSettings::parse(Path::new("/x/clipforge.toml"), text)
    }

    #[test]
    fn a_glob_that_does_not_compile_is_refused_where_it_was_given() {
        let e = parse_bone_override("Hand[L=0.1").unwrap_err();
        assert!(matches!(e, BoneOverrideError::BadGlob { .. }), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("'Hand[L=0.1': 'Hand[L' is not a valid glob: "),
            "{e}"
        );
        // A bone table, a clip table and a clip's bone table: each names the file and line.
        for text in [
            "[[bone]]\nmatch = \"{Left,Right\"\nerror_threshold = 0.002\n",
            "error_threshold = 0.05\n[[clip]]\nmatch = \"a[\"\nerror_threshold = 0.002\n",
            "[[clip]]\nmatch = \"a.bvh\"\n[[clip.bone]]\nmatch = \"x\\\\\"\nerror_threshold = 0.1\n",
        ] {
            let e = parse(text).unwrap_err();
            let SettingsError::Invalid {
                path,
                line,
                message,
            } = &e
            else {
                panic!("{e:?}");
            };
            assert_eq!(path, "/x/clipforge.toml");
            let want = text
                .lines()
                .position(|l| l.starts_with("match") && !l.contains("a.bvh"));
            assert_eq!(Some(*line), want.map(|i| i + 1), "{text}");
            assert!(
                message.starts_with("`match`: '") && message.contains("is not a valid glob"),
                "{message}"
            );
        }
        // The alternatives a compiled glob gives.
        let f = parse("[[bone]]\nmatch = \"{Left,Right}Hand\"\nerror_threshold = 0.002\n").unwrap();
        assert!(clipforge_anim::compress::glob_match(
            &f.bones[0].pattern,
            "LeftHand"
        ));
    }

    #[test]
    fn parses_every_key() {
        let f = parse(
            "error_threshold = 0.05\nshell_distance = 4\nunits = \"m\"\nexclude = [\"_old/\", \"\\\\.tmp\\\\.\"]\n\
             [[bone]]\nmatch = \"*Finger*\"\nerror_threshold = 0.002\n",
        )
        .unwrap();
        assert_eq!(f.error_threshold, Some(0.05));
        assert_eq!(f.shell_distance, Some(4.0));
        assert_eq!(f.units, Some(Units::M));
        assert!(f.exclude[1].is_match("a/b.tmp.bvh"));
        assert!(!f.exclude[1].is_match("a/btmp.bvh"));
        assert_eq!(f.bones[0].pattern, "*Finger*");
        assert_eq!(f.bones[0].error_threshold, Some(0.002));
    }

    #[test]
    fn units_and_sample_rate_apply_only_where_the_format_needs_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join(FILE_NAME),
            "units = \"m\"\nsample_rate = 60\nerror_threshold = 0.5\n",
        )
        .unwrap();
        let r = SettingsResolver::new(CompressionSettings::default(), Overrides::default());
        let get = |name: &str, f: ClipFormat| r.resolve(root, &root.join(name), f).unwrap();
        let bvh = get("a.bvh", ClipFormat::Bvh);
        assert_eq!(bvh.clip.units, Units::M);
        assert_eq!(bvh.compression.error_threshold, 0.005);
        assert_eq!(bvh.clip.sample_rate_hz, None);
        assert!(!bvh.settings_key().contains("sample_rate"));
        for (name, f) in [("a.fbx", ClipFormat::Fbx), ("a.glb", ClipFormat::Gltf)] {
            let c = get(name, f);
            // Both importers already convert to cm: the threshold is not rescaled.
            assert_eq!(c.clip.units, Units::Cm, "{name}");
            assert_eq!(c.compression.error_threshold, 0.5, "{name}");
            assert_eq!(c.clip.sample_rate_hz, Some(60.0), "{name}");
            assert_eq!(c.import.sample_rate, Some(60.0), "{name}");
            assert!(c.settings_key().contains(";sample_rate=60.0"), "{name}");
        }
        // The explicit option wins over the file's.
        let r = SettingsResolver::new(
            CompressionSettings::default(),
            Overrides {
                sample_rate: Some(24.0),
                ..Default::default()
            },
        );
        let c = r
            .resolve(root, &root.join("a.fbx"), ClipFormat::Fbx)
            .unwrap();
        assert_eq!(c.clip.sample_rate_hz, Some(24.0));
        let e = parse("sample_rate = 0\n").unwrap_err().to_string();
        assert!(
            e.contains("clipforge.toml:1: ") && e.contains("sample_rate"),
            "{e}"
        );
    }

    #[test]
    fn the_apps_bone_tables_come_last_and_keep_the_rest_of_the_file() {
        let path = Path::new("/x/clipforge.toml");
        let user = "# mine\nerror_threshold = 0.02\n[[bone]]\nmatch = \"*Finger*\"\nerror_threshold = 0.004\n";
        let app = [
            BoneOverride {
                pattern: "r\"Index2".into(),
                error_threshold: Some(0.001),
                shell_distance: None,
            },
            BoneOverride {
                pattern: "lEye".into(),
                error_threshold: None,
                shell_distance: Some(0.5),
            },
        ];
        let text = with_app_bones(path, user, &app).unwrap();
        assert!(text.starts_with(user.trim_end()), "{text}");
        assert_eq!(app_bones(path, &text), app);
        let f = FolderSettings::parse(path, &text).unwrap();
        assert_eq!(f.error_threshold, Some(0.02));
        assert_eq!(f.bones.len(), 3);
        assert_eq!(f.bones[1..], app);
        // Saving again replaces the app's tables only; saving none removes them.
        let again = with_app_bones(path, &text, &app[..1]).unwrap();
        assert_eq!(app_bones(path, &again), app[..1]);
        assert_eq!(again.matches(APP_BONES_MARKER).count(), 1);
        let none = with_app_bones(path, &again, &[]).unwrap();
        assert_eq!(none, user);
        assert!(app_bones(path, &none).is_empty());
        assert_eq!(with_app_bones(path, "", &[]).unwrap(), "");
        // What would not parse is refused before anything is written.
        let bad = [BoneOverride {
            pattern: String::new(),
            error_threshold: Some(0.001),
            shell_distance: None,
        }];
        assert!(with_app_bones(path, user, &bad).is_err());
        let dir = tempfile::tempdir().unwrap();
        let saved = save_app_bones(&dir.path().join(FILE_NAME), &app).unwrap();
        let on_disk = std::fs::read_to_string(&saved).unwrap();
        assert_eq!(app_bones(&saved, &on_disk), app);
    }

    #[test]
    fn the_apps_bone_table_goes_into_the_file_that_applies_and_keeps_its_settings() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let sub = root.join("hero").join("locomotion");
        std::fs::create_dir_all(&sub).unwrap();
        let clip = sub.join("run.bvh");
        std::fs::write(&clip, b"").unwrap();
        // No settings file anywhere: a new one beside the clip.
        assert_eq!(applying_file(root, &clip).unwrap(), sub.join(FILE_NAME));
        // A parent's file applies to the clip: the bones go into it, and its units and
        // threshold still apply to the clip afterwards.
        let parent = root.join("hero").join(FILE_NAME);
        std::fs::write(&parent, "units = \"m\"\nerror_threshold = 0.02\n").unwrap();
        let file = applying_file(root, &clip).unwrap();
        assert_eq!(file, parent);
        let bones = [BoneOverride {
            pattern: "LeftHandIndex1".into(),
            error_threshold: Some(0.001),
            shell_distance: None,
        }];
        assert_eq!(save_app_bones(&file, &bones).unwrap(), parent);
        assert!(
            !sub.join(FILE_NAME).exists(),
            "no file took the parent's place"
        );
        let resolver = SettingsResolver::new(CompressionSettings::default(), Overrides::default());
        let r = resolver.resolve(root, &clip, ClipFormat::Bvh).unwrap();
        assert_eq!(r.clip.units, Units::M);
        assert_eq!(r.clip.error_threshold_cm, 0.02);
        assert_eq!(r.clip.bones.len(), 1, "{:?}", r.clip.bones);
        // Never above the input root: a file beside the root's parent does not apply.
        assert_eq!(applying_file(&sub, &clip).unwrap(), sub.join(FILE_NAME));
    }

    #[test]
    fn the_apps_clip_tables_keep_the_rest_of_the_file_and_the_bone_section() {
        let path = Path::new("/x/clipforge.toml");
        let user = "# mine\nerror_threshold = 0.02\n[[bone]]\nmatch = \"*Finger*\"\nerror_threshold = 0.004\n";
        let bones = [BoneOverride {
            pattern: "lEye".into(),
            error_threshold: None,
            shell_distance: Some(0.5),
        }];
        let with_bones = with_app_bones(path, user, &bones).unwrap();
        let clip = |p: &str, t: f32| ClipOverride {
            bones: Vec::new(),
            pattern: p.into(),
            error_threshold: Some(t),
            shell_distance: None,
        };
        let one = with_app_clip(path, &with_bones, &clip("131_01.bvh", 0.1)).unwrap();
        assert!(one.starts_with(user.trim_end()), "{one}");
        assert_eq!(app_bones(path, &one), bones);
        assert_eq!(app_clips(path, &one), [clip("131_01.bvh", 0.1)]);
        // Another clip is added; the same clip again replaces its table.
        let two = with_app_clip(path, &one, &clip("a\\[1\\].bvh", 0.05)).unwrap();
        let three = with_app_clip(path, &two, &clip("131_01.bvh", 0.001)).unwrap();
        assert_eq!(
            app_clips(path, &three),
            [clip("a\\[1\\].bvh", 0.05), clip("131_01.bvh", 0.001)]
        );
        assert_eq!(three.matches(APP_CLIPS_MARKER).count(), 1);
        // The per-bone editor's rewrite keeps the clip tables (they come before its section).
        let rebones = with_app_bones(path, &three, &[]).unwrap();
        assert_eq!(app_clips(path, &rebones).len(), 2);
        let f = FolderSettings::parse(path, &rebones).unwrap();
        assert_eq!((f.error_threshold, f.bones.len()), (Some(0.02), 1));
        // Globs match the path relative to the file's folder; escaped names match themselves.
        let c = |rel: &str| f.clips_for(&Path::new("/x").join(rel)).count();
        assert_eq!(
            (
                c("131_01.bvh"),
                c("a[1].bvh"),
                c("a1.bvh"),
                c("sub/131_01.bvh")
            ),
            (1, 1, 0, 0)
        );
        assert_eq!(glob_escape("a[1]*?.bvh"), "a\\[1\\]\\*\\?.bvh");
        // What would not parse is refused.
        assert!(with_app_clip(path, user, &clip("", 0.1)).is_err());
        assert!(with_app_clip(path, "error_threshold = \"x\"\n", &clip("a.bvh", 0.1)).is_err());
    }

    #[test]
    fn a_kept_clip_goes_into_the_file_that_applies_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        std::fs::write(root.join(FILE_NAME), "# top\nerror_threshold = 0.05\n").unwrap();
        let clip = root.join("sub/deep/w*lk.bvh");
        let saved = save_clip_choice(root, &clip, 0.2, Some(1.0)).unwrap();
        assert_eq!(saved, root.join(FILE_NAME));
        assert!(!root.join("sub/deep").join(FILE_NAME).exists());
        let text = std::fs::read_to_string(&saved).unwrap();
        assert!(
            text.starts_with("# top\nerror_threshold = 0.05\n"),
            "{text}"
        );
        let r = SettingsResolver::new(
            CompressionSettings::default(),
            Overrides {
                error_threshold: Some(0.001),
                ..Default::default()
            },
        );
        let got = r.resolve(root, &clip, ClipFormat::Bvh).unwrap();
        assert_eq!(got.clip.error_threshold_cm, 0.2);
        assert_eq!(got.clip.shell_distance_cm, Some(1.0));
        assert_eq!(got.clip.clip_match.as_deref(), Some("sub/deep/w\\*lk.bvh"));
        let other = r
            .resolve(root, &root.join("sub/deep/walk.bvh"), ClipFormat::Bvh)
            .unwrap();
        assert_eq!(other.clip.error_threshold_cm, 0.001);
        let ignored = SettingsResolver::new(
            CompressionSettings::default(),
            Overrides {
                ignore_clip_tables: true,
                ..Default::default()
            },
        );
        let got = ignored.resolve(root, &clip, ClipFormat::Bvh).unwrap();
        assert_eq!(got.clip.error_threshold_cm, 0.05);
        // No file applies: a new one in the clip's own folder.
        let lone = tempfile::tempdir().unwrap();
        std::fs::create_dir(lone.path().join("a")).unwrap();
        let saved = save_clip_choice(lone.path(), &lone.path().join("a/x.bvh"), 0.3, None).unwrap();
        assert_eq!(saved, lone.path().join("a").join(FILE_NAME));
    }

    #[test]
    fn unknown_key_names_line_and_key() {
        let e = parse("error_threshold = 0.1\n\nthreshold = 2\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/x/clipforge.toml:3: "), "{e}");
        assert!(e.contains("threshold"), "{e}");
    }

    #[test]
    fn bad_values_name_line_and_key() {
        let e = parse("units = \"m\"\nerror_threshold = -1\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("clipforge.toml:2: ") && e.contains("error_threshold") && e.contains("-1"),
            "{e}"
        );
        let e = parse("units = \"feet\"\n").unwrap_err().to_string();
        assert!(
            e.contains("clipforge.toml:1: ") && e.contains("units") && e.contains("feet"),
            "{e}"
        );
        let e = parse("exclude = [\"(\"]\n").unwrap_err().to_string();
        assert!(
            e.contains("clipforge.toml:1: ") && e.contains("exclude"),
            "{e}"
        );
        let e = parse("error_threshold = \"small\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("clipforge.toml:1: "), "{e}");
    }
}
