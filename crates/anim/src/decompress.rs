//! Offline side of decompression: a compressed clip decoded back into a [`RawClip`] (for the
//! compressor's verification, reports, exports and tests). It lives here, not in the runtime,
//! because the runtime depends on nothing from the offline side.

use super::clip::RawClip;
use super::pose::Pose;
use super::runtime::ClipReader;
use glam::{Quat, Vec3};

/// Every original sample of `reader` decoded back into a raw clip, with the stored names,
/// hierarchy and bind pose.
pub fn to_raw_clip(reader: &ClipReader) -> RawClip {
    let nb = reader.num_bones();
    let n = reader.num_samples();
    let stored = reader.num_stored_samples();
    let mut rotations = vec![Quat::IDENTITY; nb * n];
    let mut translations = vec![Vec3::ZERO; nb * n];
    let mut scales = vec![Vec3::ONE; nb * n];
    let mut pose = Pose::new(nb);
    for s in 0..n {
        // A wrapping clip's dropped last sample is its first.
        reader.decode_sample(if s >= stored { 0 } else { s }, &mut pose);
        for b in 0..nb {
            rotations[b * n + s] = pose.rotations[b];
            translations[b * n + s] = pose.translations[b].into();
            scales[b * n + s] = pose.scales[b].into();
        }
    }
    RawClip::new(
        reader.clip_name(),
        reader.skeleton().clone(),
        reader.sample_rate(),
        n,
        rotations,
        translations,
        scales,
    )
    .unwrap_or_else(|_| {
        // Validation bounds every stored float, so decoded values are finite; this is unreachable
        // in practice, but a hostile buffer must never panic: fall back to the bind pose.
        let sk = reader.skeleton();
        RawClip {
            name: reader.clip_name().to_string(),
            skeleton: sk.clone(),
            sample_rate: reader.sample_rate(),
            num_samples: n,
            rotations: (0..nb * n)
                .map(|i| sk.bind_rotations[i / n.max(1)])
                .collect(),
            translations: (0..nb * n)
                .map(|i| sk.bind_translations[i / n.max(1)])
                .collect(),
            scales: (0..nb * n).map(|i| sk.bind_scales[i / n.max(1)]).collect(),
            additive: None,
        }
    })
}
