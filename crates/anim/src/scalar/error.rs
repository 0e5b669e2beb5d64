//! Error of a compressed scalar list against its raw list, in float64: per output track the
//! largest absolute component difference at every sample and at points between samples
//! (interpolated as the runtime does), ACL's scalar metric.

use super::RawScalarList;
use crate::runtime::scalar::{ScalarReader, ScalarType};

/// Points checked strictly inside each sample interval (as `clip_eval.py --between 4`).
pub(crate) const BETWEEN_POINTS: usize = 4;

/// What [`measure_scalar_error`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScalarErrorStats {
    /// Largest error at and between samples, over all output tracks (the tracks' own units).
    pub max: f64,
    /// Largest error at the samples alone (what ACL reports).
    pub max_at_samples: f64,
    /// Per output track (output order): the largest error at and between samples.
    pub per_track_max: Vec<f64>,
    /// Per output track: its precision.
    pub per_track_precision: Vec<f32>,
    /// Output track with the largest error (relative to nothing: in raw units).
    pub worst_track: usize,
    /// Sample at or after which the worst error occurs.
    pub worst_sample: usize,
    /// Every output track within its precision everywhere.
    pub all_within_precision: bool,
}

/// A compressed list measured against a raw list of another shape: track type, output track
/// count or sample count differ.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "shape mismatch: {} {compressed_tracks} tracks x {compressed_samples} samples compressed, {} {raw_tracks} x {raw_samples} raw",
    .compressed_type.acl_name(),
    .raw_type.acl_name()
)]
pub struct ScalarShapeMismatch {
    pub compressed_type: ScalarType,
    pub compressed_tracks: usize,
    pub compressed_samples: usize,
    pub raw_type: ScalarType,
    pub raw_tracks: usize,
    pub raw_samples: usize,
}

/// Measures `reader` against `list` (its source): output track `k` of the reader is compared
/// with the list's track of output index `k`. A reader whose shape does not match `list`
/// (other type, track or sample count) gives `Err`.
pub fn measure_scalar_error(
    list: &RawScalarList,
    reader: &ScalarReader<'_>,
) -> Result<ScalarErrorStats, ScalarShapeMismatch> {
    let order = list.output_order();
    let w = list.width();
    let n = list.num_samples;
    if reader.track_type() != list.track_type
        || reader.num_tracks() != order.len()
        || reader.num_samples() != n
    {
        return Err(ScalarShapeMismatch {
            compressed_type: reader.track_type(),
            compressed_tracks: reader.num_tracks(),
            compressed_samples: reader.num_samples(),
            raw_type: list.track_type,
            raw_tracks: order.len(),
            raw_samples: n,
        });
    }
    let mut stats = ScalarErrorStats {
        all_within_precision: true,
        ..Default::default()
    };
    let (mut l0, mut l1) = ([0f32; 4], [0f32; 4]);
    for (k, &ti) in order.iter().enumerate() {
        let raw = &list.tracks[ti].values;
        let precision = reader.precision(k);
        let mut worst = 0.0f64;
        let mut worst_at = 0;
        let mut at_samples = 0.0f64;
        for s in 0..n {
            reader.decode_sample(k, s, &mut l0);
            for c in 0..w {
                let e = (l0[c] as f64 - raw[s * w + c] as f64).abs();
                at_samples = at_samples.max(e);
                if e > worst {
                    worst = e;
                    worst_at = s;
                }
            }
            if s + 1 == n {
                continue;
            }
            reader.decode_sample(k, s + 1, &mut l1);
            for j in 1..=BETWEEN_POINTS {
                let a = j as f32 / (BETWEEN_POINTS + 1) as f32;
                let a = a as f64;
                for c in 0..w {
                    // Both blended in float64 from their float32 samples (as clip_eval.py
                    // does): the codec's error, not the float32 rounding any runtime adds when
                    // it blends, raw data included.
                    let lossy = (1.0 - a) * l0[c] as f64 + a * l1[c] as f64;
                    let (r0, r1) = (raw[s * w + c] as f64, raw[(s + 1) * w + c] as f64);
                    let exact = (1.0 - a) * r0 + a * r1;
                    let e = (lossy - exact).abs();
                    if e > worst {
                        worst = e;
                        worst_at = s;
                    }
                }
            }
        }
        stats.max_at_samples = stats.max_at_samples.max(at_samples);
        if worst > stats.max {
            stats.max = worst;
            stats.worst_track = k;
            stats.worst_sample = worst_at;
        }
        if worst > precision as f64 {
            stats.all_within_precision = false;
        }
        stats.per_track_max.push(worst);
        stats.per_track_precision.push(precision);
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_mismatch_says_both_shapes() {
        let e = ScalarShapeMismatch {
            compressed_type: ScalarType::Float3,
            compressed_tracks: 2,
            compressed_samples: 10,
            raw_type: ScalarType::Float4,
            raw_tracks: 3,
            raw_samples: 11,
        };
        assert_eq!(
            e.to_string(),
            "shape mismatch: float3f 2 tracks x 10 samples compressed, float4f 3 x 11 raw"
        );
    }
}
