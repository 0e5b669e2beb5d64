//! Buffers the C API tests read, made now by the offline codec (never committed files, so they
//! follow the format whatever its version).

pub mod pose;

use clipforge_anim::generate::{GenerateOptions, generate};
use clipforge_anim::scalar::{RawScalarList, RawScalarTrack, ScalarType, compress_scalar_list};
use clipforge_anim::{CompressionSettings, compress};

/// A generated humanoid clip with animated scale, `num_samples` at 30 Hz, as a `.cfa`.
pub fn cfa(num_samples: usize) -> Vec<u8> {
    let clip = generate(&GenerateOptions {
        num_samples,
        with_scale: true,
        ..Default::default()
    });
    compress(&clip, &CompressionSettings::default())
        .unwrap()
        .bytes
}

#[allow(dead_code)] // not every test binary uses every buffer
/// Three float2 curves of 21 samples at 30 Hz, as a `.cfs`.
pub fn cfs() -> Vec<u8> {
    let n = 21;
    let list = RawScalarList {
        name: "curves".into(),
        track_type: ScalarType::Float2,
        sample_rate: 30.0,
        num_samples: n,
        tracks: (0..3)
            .map(|k| RawScalarTrack {
                name: format!("curve{k}"),
                precision: 1e-4,
                output_index: Some(k),
                values: (0..2 * n)
                    .map(|i| (i as f32 * 0.3 + k as f32).sin())
                    .collect(),
            })
            .collect(),
    };
    compress_scalar_list(&list).unwrap().bytes
}

/// A generated clip without animated scale (its scales are default sub-tracks), as a `.cfa`.
#[allow(dead_code)] // not every test binary uses every buffer
pub fn cfa_defaults(num_samples: usize) -> Vec<u8> {
    let clip = generate(&GenerateOptions {
        num_samples,
        with_scale: false,
        ..Default::default()
    });
    compress(&clip, &CompressionSettings::default())
        .unwrap()
        .bytes
}

/// An additive layer (relative format) of the generated clip against its first frame.
#[allow(dead_code)]
pub fn cfa_additive(num_samples: usize) -> Vec<u8> {
    use clipforge_anim::additive::{AdditiveFormat, first_frame, make_additive};
    let clip = generate(&GenerateOptions {
        num_samples,
        with_scale: true,
        ..Default::default()
    });
    let layer = make_additive(&clip, &first_frame(&clip), AdditiveFormat::Relative).unwrap();
    compress(&layer, &CompressionSettings::default())
        .unwrap()
        .bytes
}
