//! What identifies an input's content and a compression setup in the skip cache: the content
//! hash, the codec fingerprint and the settings key. Kept below the cache and the folder settings,
//! which both read them.

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

/// The key of a settings value in the skip cache.
pub fn settings_key(settings: &CompressionSettings) -> String {
    format!(
        "error_threshold={:?};shell_distance={:?};codec={}",
        settings.error_threshold,
        settings.shell_distance,
        codec_fingerprint()
    )
}
