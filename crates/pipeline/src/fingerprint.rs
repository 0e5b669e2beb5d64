//! What identifies an input's content and a compression setup in the skip cache: the content
//! hash, the codec fingerprints (clips, scalar track lists) and the settings keys. Kept below the
//! cache and the folder settings, which both read them.

use clipforge_anim::CompressionSettings;
use std::hash::Hasher;

/// Content hash of a file: SipHash-2-4 (fixed keys) and CRC-32 of the bytes plus their length.
pub(crate) fn content_hash(bytes: &[u8]) -> String {
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new();
    h.write(bytes);
    format!(
        "{:016x}{:08x}-{}",
        h.finish(),
        crc32fast::hash(bytes),
        bytes.len()
    )
}

/// A fingerprint of the codec: crate version plus a hash of what the compressor makes of a small
/// fixed clip. Any codec change that alters its output invalidates the skip cache.
pub(crate) fn codec_fingerprint() -> &'static str {
    static FP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FP.get_or_init(|| {
        let clip = clipforge_anim::generate::generate(&clipforge_anim::generate::GenerateOptions {
            name: "fingerprint".into(),
            num_samples: 16,
            sample_rate: 30.0,
            seed: 7,
            with_scale: true,
        });
        let h = std::panic::catch_unwind(|| {
            clipforge_anim::compress(&clip, &CompressionSettings::default())
                .map(|c| content_hash(&c.bytes))
                .unwrap_or_else(|e| format!("error:{e}"))
        })
        .unwrap_or_else(|_| "panic".into());
        format!("{}+{}", env!("CARGO_PKG_VERSION"), h)
    })
}

/// A fingerprint of the scalar track list codec, as [`codec_fingerprint`] is of the clip codec:
/// crate version plus a hash of what it makes of a small fixed list.
fn scalar_codec_fingerprint() -> &'static str {
    static FP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FP.get_or_init(|| {
        use clipforge_anim::scalar::{RawScalarList, RawScalarTrack, ScalarType};
        let num_samples = 16;
        let list = RawScalarList {
            name: "fingerprint".into(),
            track_type: ScalarType::Float3,
            sample_rate: 30.0,
            num_samples,
            tracks: (0..3u32)
                .map(|t| RawScalarTrack {
                    name: format!("t{t}"),
                    precision: 0.001 * (t + 1) as f32,
                    output_index: (t != 1).then_some(t / 2),
                    values: (0..num_samples * 3)
                        .map(|i| ((i as f32) * 0.37 + t as f32).sin() * (t + 1) as f32)
                        .collect(),
                })
                .collect(),
        };
        let h = std::panic::catch_unwind(|| {
            clipforge_anim::scalar::compress_scalar_list(&list)
                .map(|c| content_hash(&c.bytes))
                .unwrap_or_else(|e| format!("error:{e}"))
        })
        .unwrap_or_else(|_| "panic".into());
        format!("{}+{}", env!("CARGO_PKG_VERSION"), h)
    })
}

/// The skip cache's key of every scalar track list: its compression reads no setting (each
/// track carries its own precision; thresholds, shell, units, sample rate and per-bone tables
/// are the clips'), so only the codec is in it.
pub(crate) fn scalar_list_key() -> String {
    format!("scalar_list;codec={}", scalar_codec_fingerprint())
}

/// The key of a settings value in the skip cache.
pub fn settings_key(settings: &CompressionSettings) -> String {
    format!(
        "error_threshold={:?};shell_distance={:?};codec={}",
        settings.error_threshold,
        settings.shell_distance,
        codec_fingerprint()
    )
}
