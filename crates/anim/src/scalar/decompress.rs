//! A compressed scalar list back to a raw list (offline): the output tracks in output order, at
//! the original sample count (a wrapping list's dropped last sample is its first), for writing
//! ACL's `.acl.sjson` again.

use super::{RawScalarList, RawScalarTrack};
use crate::runtime::scalar::ScalarReader;

/// The decoded samples of every output track of `reader`; track `k` gets `output_index = k`.
pub fn to_raw_scalar_list(reader: &ScalarReader<'_>) -> RawScalarList {
    let ty = reader.track_type();
    let w = ty.width();
    let n = reader.num_samples();
    let mut v = [0f32; 4];
    let tracks = (0..reader.num_tracks())
        .map(|k| {
            let mut values = Vec::with_capacity(n * w);
            for s in 0..n {
                reader.decode_sample(k, s, &mut v);
                values.extend_from_slice(&v[..w]);
            }
            RawScalarTrack {
                name: reader.track_name(k).to_string(),
                precision: reader.precision(k),
                output_index: Some(k as u32),
                values,
            }
        })
        .collect();
    RawScalarList {
        name: reader.list_name().to_string(),
        track_type: ty,
        sample_rate: reader.sample_rate(),
        num_samples: n,
        tracks,
    }
}
