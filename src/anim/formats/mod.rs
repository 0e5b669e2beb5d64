//! Importers and exporters: ACL's `.acl.sjson` clip format, BVH motion capture, glTF 2.0.
//!
//! PLACEHOLDER: the importers land in their own change.

use super::clip::RawClip;
use std::fmt;
use std::path::{Path, PathBuf};

/// An import failure: which file, where (line, when the format has lines) and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.path.display(), l, self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for ImportError {}

/// Clip file formats we read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ClipFormat {
    AclSjson,
    Bvh,
    Gltf,
}

impl ClipFormat {
    /// Format from the file name (`.acl.sjson`, `.bvh`, `.gltf`, `.glb`), case-insensitive.
    pub fn from_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        if name.ends_with(".acl.sjson") {
            Some(Self::AclSjson)
        } else if name.ends_with(".bvh") {
            Some(Self::Bvh)
        } else if name.ends_with(".gltf") || name.ends_with(".glb") {
            Some(Self::Gltf)
        } else {
            None
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::AclSjson => "acl.sjson",
            Self::Bvh => "bvh",
            Self::Gltf => "gltf",
        }
    }
}

/// Loads every clip in a file (glTF files may hold several animations; the others hold one).
pub fn load_clips(path: &Path) -> Result<Vec<RawClip>, ImportError> {
    Err(ImportError {
        path: path.to_path_buf(),
        line: None,
        message: "importers not built yet".into(),
    })
}

/// Writes a clip in ACL's clip format (version 5, binary exact so values round-trip bit for bit).
pub fn write_acl_clip(_clip: &RawClip) -> String {
    String::new()
}
