//! Scalar track lists (ACL's `float1f`–`float4f` and `vector4f` track lists), offline side: the
//! raw list as read from a file ([`RawScalarList`]), its compression into a `.cfs` buffer
//! ([`compress`]), the float64 error check of a compressed buffer against the raw list
//! ([`error`]) and the conversion back to a raw list ([`decompress`]). The runtime reader of the
//! compressed buffer is [`crate::runtime::scalar`], which depends on nothing here.

pub mod compress;
pub mod decompress;
pub mod error;

pub use crate::runtime::scalar::ScalarType;
pub use compress::{CompressedScalars, ScalarCompressError, compress_scalar_list};
pub use decompress::to_raw_scalar_list;
pub use error::{ScalarErrorStats, ScalarShapeMismatch, measure_scalar_error};

/// ACL's default precision for scalar tracks (`track_desc_scalarf`), used when a track gives
/// none or a negative one.
pub(crate) const DEFAULT_SCALAR_PRECISION: f32 = 0.00001;

/// One track of a raw scalar list.
#[derive(Clone, Debug, PartialEq)]
pub struct RawScalarTrack {
    pub name: String,
    /// Largest absolute error allowed on any component, at and between samples (the track's
    /// own units).
    pub precision: f32,
    /// Position of the track in the output; `None` = stripped from the output (ACL's
    /// `output_index = 0xFFFFFFFF`): never sampled, so not stored.
    pub output_index: Option<u32>,
    /// `num_samples × width` values, sample-major.
    pub values: Vec<f32>,
}

/// A scalar track list: every track has the same type and the same samples.
#[derive(Clone, Debug, PartialEq)]
pub struct RawScalarList {
    pub name: String,
    pub track_type: ScalarType,
    pub sample_rate: f32,
    pub num_samples: usize,
    /// In file order (the raw track index); see [`RawScalarTrack::output_index`] for the output.
    pub tracks: Vec<RawScalarTrack>,
}

impl RawScalarList {
    /// Components per sample of every track.
    pub fn width(&self) -> usize {
        self.track_type.width()
    }

    /// Value of component `c` of track `t` at sample `s`.
    pub fn value(&self, t: usize, s: usize, c: usize) -> f32 {
        self.tracks[t].values[s * self.width() + c]
    }

    /// Raw size as ACL counts it: `num_samples × sample size` per track (vector4f: 16 bytes).
    pub fn raw_size_bytes(&self) -> usize {
        self.tracks.len() * self.num_samples * self.track_type.sample_bytes()
    }

    /// Indices of the output tracks in output order (stripped tracks left out).
    pub fn output_order(&self) -> Vec<usize> {
        let mut order: Vec<(u32, usize)> = self
            .tracks
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.output_index.map(|o| (o, i)))
            .collect();
        order.sort_unstable();
        order.into_iter().map(|(_, i)| i).collect()
    }

    /// Duration in seconds: `(num_samples - 1) / sample_rate`, 0 for a single sample.
    pub fn duration(&self) -> f32 {
        if self.num_samples <= 1 {
            0.0
        } else {
            (self.num_samples - 1) as f32 / self.sample_rate
        }
    }
}
