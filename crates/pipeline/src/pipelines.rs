//! Pipelines files (`clipforge watch --pipelines FILE.toml`): `[[pipeline]]` tables, each an
//! input folder, an output folder and its settings, run as separate watches in one process.
//! Owns parsing the file and refusing pipelines whose folders overlap. Documented in
//! `docs/PIPELINE.md` ("Pipelines") and `docs/SERVICE.md`.

use super::folder_settings::{
    SettingsError, compile_excludes, positive, sample_rate, toml_error, value_error,
};
use regex::Regex;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Largest pipelines file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// One pipeline of a pipelines file.
#[derive(Clone, Debug)]
pub struct Pipeline {
    /// `name` in the file, else `pipeline N` (1-based).
    pub name: String,
    /// Relative paths in the file are relative to the file's folder.
    pub input: PathBuf,
    pub output: PathBuf,
    /// In cm; wins over the folders' `clipforge.toml`.
    pub error_threshold: Option<f32>,
    /// In cm; wins over the folders' `clipforge.toml`.
    pub shell_distance: Option<f32>,
    /// Hz, for FBX and glTF (`--sample-rate`); wins over the folders' `clipforge.toml`.
    pub sample_rate: Option<f64>,
    pub exclude: Vec<Regex>,
    /// Worker threads (0 = all cores).
    pub jobs: usize,
    /// Ignore the skip cache (recompress everything on start).
    pub no_skip: bool,
}

/// A parsed pipelines file.
#[derive(Clone, Debug)]
pub struct PipelinesFile {
    pub pipelines: Vec<Pipeline>,
    /// `max_memory` (top level: the budget is per process, shared by every pipeline).
    pub max_memory: Option<u64>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    max_memory: Option<Spanned<String>>,
    #[serde(default)]
    pipeline: Vec<RawPipeline>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPipeline {
    name: Option<String>,
    input: Spanned<String>,
    output: Spanned<String>,
    error_threshold: Option<Spanned<f64>>,
    shell_distance: Option<Spanned<f64>>,
    sample_rate: Option<Spanned<f64>>,
    exclude: Option<Vec<Spanned<String>>>,
    jobs: Option<usize>,
    #[serde(default)]
    no_skip: bool,
}

impl PipelinesFile {
    /// Parses the text of a pipelines file read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, SettingsError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
        let invalid = |message: String| SettingsError::Invalid {
            path: path.display().to_string(),
            line: 1,
            message,
        };
        if raw.pipeline.is_empty() {
            return Err(invalid(
                "no [[pipeline]] table (each needs `input` and `output`)".into(),
            ));
        }
        let max_memory = match &raw.max_memory {
            None => None,
            Some(m) => Some(
                clipforge_anim::limits::parse_memory_size(m.get_ref())
                    .map_err(|e| value_error(path, text, m.span(), "max_memory", &e.to_string()))?,
            ),
        };
        let base = path.parent().unwrap_or(Path::new("."));
        let mut pipelines = Vec::new();
        for (i, p) in raw.pipeline.iter().enumerate() {
            let folder = |s: &Spanned<String>, key: &str| {
                if s.get_ref().is_empty() {
                    Err(value_error(path, text, s.span(), key, "must not be empty"))
                } else {
                    Ok(base.join(s.get_ref()))
                }
            };
            pipelines.push(Pipeline {
                name: p
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("pipeline {}", i + 1)),
                input: folder(&p.input, "input")?,
                output: folder(&p.output, "output")?,
                error_threshold: positive(path, text, &p.error_threshold, "error_threshold")?,
                shell_distance: positive(path, text, &p.shell_distance, "shell_distance")?,
                sample_rate: sample_rate(path, text, &p.sample_rate)?,
                exclude: compile_excludes(path, text, &p.exclude)?,
                jobs: p.jobs.unwrap_or(0),
                no_skip: p.no_skip,
            });
        }
        Ok(Self {
            pipelines,
            max_memory,
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
        let text = String::from_utf8(bytes).map_err(|e| {
            read_err(format!(
                "not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Self::parse(path, &text)
    }
}

impl Pipeline {
    /// The watch options that run this pipeline: `defaults` for what neither the pipeline nor a
    /// folder's `clipforge.toml` sets, the pipeline's own keys as overrides (they win over the
    /// folder files), its output folder, threads and skip cache. (The app runs its pipelines
    /// with these; `clipforge watch --pipelines` also merges the command line's options.)
    pub fn watch_options(
        &self,
        defaults: clipforge_anim::CompressionSettings,
    ) -> super::watch::WatchOptions {
        let mut options = super::watch::WatchOptions::new(defaults, &self.output);
        options.batch.jobs = self.jobs;
        options.batch.use_skip_cache = !self.no_skip;
        options.overrides = super::folder_settings::Overrides {
            error_threshold: self.error_threshold,
            shell_distance: self.shell_distance,
            exclude: self.exclude.clone(),
            sample_rate: self.sample_rate,
            bones: Vec::new(),
            ..Default::default()
        };
        options
    }
}

/// `path` made absolute and canonical as far as it exists (an output folder may not exist yet).
fn absolute(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(c) = cur.canonicalize() {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(p), Some(n)) => {
                rest.push(n.to_os_string());
                cur = p;
            }
            _ => return abs,
        }
    }
}

/// Two pipelines' folders that overlap ([`check_overlaps`]): which folder of which pipeline
/// (an index into the list checked) is the same as, inside or around which other.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "pipelines overlap: the {kind} folder {} of {} {relation} the {other_kind} folder {} of {}; \
     each pipeline needs its own input and output folders, apart from every other",
    folder.display(),
    names.0,
    other_folder.display(),
    names.1
)]
pub struct Overlap {
    pub pipeline: usize,
    /// `"input"` or `"output"`.
    pub kind: &'static str,
    pub folder: PathBuf,
    /// `"is the same folder as"`, `"is inside"` or `"contains"`.
    pub relation: &'static str,
    /// May be `pipeline` itself (its output inside its input).
    pub other: usize,
    pub other_kind: &'static str,
    pub other_folder: PathBuf,
    /// How the message names the two pipelines (`'name'`; `the same pipeline`).
    names: (String, String),
}

/// Refuses pipelines whose folders overlap: an input or output equal to, inside or around
/// another pipeline's input or output, or a pipeline's output inside (or around) its own input.
/// Each pipeline owns its output folder (a watch deletes the outputs of deleted inputs) and its
/// input is compressed once, into its own output.
pub fn check_overlaps(pipelines: &[Pipeline]) -> Result<(), Box<Overlap>> {
    let folders: Vec<(usize, &'static str, PathBuf)> = pipelines
        .iter()
        .enumerate()
        .flat_map(|(i, p)| {
            [
                (i, "input", absolute(&p.input)),
                (i, "output", absolute(&p.output)),
            ]
        })
        .collect();
    for (a, (ia, ka, pa)) in folders.iter().enumerate() {
        for (ib, kb, pb) in &folders[a + 1..] {
            let relation = if pa == pb {
                "is the same folder as"
            } else if pa.starts_with(pb) {
                "is inside"
            } else if pb.starts_with(pa) {
                "contains"
            } else {
                continue;
            };
            let who = |i: usize| format!("'{}'", pipelines[i].name);
            return Err(Box::new(Overlap {
                pipeline: *ia,
                kind: ka,
                folder: pa.clone(),
                relation,
                other: *ib,
                other_kind: kb,
                other_folder: pb.clone(),
                names: (
                    who(*ia),
                    if ia == ib {
                        "the same pipeline".to_string()
                    } else {
                        who(*ib)
                    },
                ),
            }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pipelines_relative_to_the_file() {
        let f = PipelinesFile::parse(
            Path::new("/etc/cf/p.toml"),
            "max_memory = \"1G\"\n[[pipeline]]\ninput = \"a\"\noutput = \"/o/a\"\nerror_threshold = 0.1\n\
             [[pipeline]]\nname = \"b\"\ninput = \"/i/b\"\noutput = \"/o/b\"\nexclude = [\"_old/\"]\n",
        )
        .unwrap();
        assert_eq!(f.max_memory, Some(1 << 30));
        assert_eq!(f.pipelines[0].input, PathBuf::from("/etc/cf/a"));
        assert_eq!(f.pipelines[0].name, "pipeline 1");
        assert_eq!(f.pipelines[0].error_threshold, Some(0.1));
        assert_eq!(f.pipelines[1].name, "b");
        assert!(f.pipelines[1].exclude[0].is_match("x/_old/y.bvh"));
    }

    #[test]
    fn errors_name_the_line_and_key() {
        let e = PipelinesFile::parse(
            Path::new("p.toml"),
            "[[pipeline]]\ninput = \"a\"\noutput = \"b\"\nthreshold = 1\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("p.toml:4: ") && e.contains("threshold"), "{e}");
        let e = PipelinesFile::parse(Path::new("p.toml"), "[[pipeline]]\ninput = \"a\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("output"), "{e}");
        let e = PipelinesFile::parse(Path::new("p.toml"), "")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no [[pipeline]]"), "{e}");
    }

    #[test]
    fn overlapping_folders_are_refused() {
        let p = |i: &str, o: &str| Pipeline {
            name: i.into(),
            input: PathBuf::from(i),
            output: PathBuf::from(o),
            error_threshold: None,
            shell_distance: None,
            sample_rate: None,
            exclude: vec![],
            jobs: 0,
            no_skip: false,
        };
        assert!(check_overlaps(&[p("/a", "/oa"), p("/b", "/ob")]).is_ok());
        let e = check_overlaps(&[p("/a", "/a/out")]).unwrap_err();
        assert_eq!(
            (e.pipeline, e.kind, e.relation, e.other, e.other_kind),
            (0, "input", "contains", 0, "output")
        );
        let e = e.to_string();
        assert!(
            e.contains("contains the output folder") && e.contains("same pipeline"),
            "{e}"
        );
        assert!(check_overlaps(&[p("/a", "/oa"), p("/a/sub", "/ob")]).is_err());
        assert!(check_overlaps(&[p("/a", "/o"), p("/b", "/o")]).is_err());
        assert!(check_overlaps(&[p("/a", "/oa"), p("/oa", "/ob")]).is_err());
    }
}
