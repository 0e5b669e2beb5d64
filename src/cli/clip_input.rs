//! What the clip subcommands share to read what the user gave them: the `--sample-rate` and
//! `--max-memory` arguments, loading a clip file and picking one of its clips, and the message
//! for a file that is not a `.cfa`. Its own module so that each subcommand's file depends on it,
//! never on another subcommand's.

use clipforge_anim::RawClip;
use clipforge_anim::formats::{self, ClipFormat};
use clipforge_pipeline::read_input;
use std::path::Path;

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
    formats::check_sample_rate(hz).map_err(|e| e.to_string())
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

/// Loads every clip of a clip file for `convert` and `inspect --raw`: the file itself is read as a
/// regular file within the memory budget ([`read_input`]: a FIFO is refused, never waited on);
/// glTF and GLB go through the path-based loader as before, which finds external buffers.
/// Importer warnings are printed.
pub fn load_clip_file(
    path: &Path,
    options: &formats::ImportOptions,
) -> Result<Vec<RawClip>, String> {
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
pub fn not_cfa_message(path: &Path, bytes: &[u8], reason: &str) -> String {
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
