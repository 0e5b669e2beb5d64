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

#[cfg(test)]
mod tests {
    /// The ozz-style boundary: no source file of `anim/runtime/` names anything of `crate::anim`
    /// outside the shared modules (pose, skeleton, limits) and the runtime itself.
    #[test]
    fn runtime_depends_on_nothing_offline() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/anim/runtime");
        let allowed = ["runtime", "pose", "skeleton", "limits"];
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            // Comments may point at the offline side; code may not.
            let text: String = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for pattern in ["crate::anim::", "super::", "super::super::"] {
                for (at, _) in text.match_indices(pattern) {
                    let rest = &text[at + pattern.len()..];
                    let module: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    // `super::` inside a runtime submodule (format, quant, tests) is the runtime.
                    let inside = pattern == "super::" && path.file_name().unwrap() != "mod.rs";
                    assert!(
                        inside
                            || module.is_empty()
                            || module == "*"
                            || allowed.contains(&module.as_str()),
                        "{} uses {pattern}{module}: the runtime must not depend on the offline side",
                        path.display()
                    );
                }
            }
            checked += 1;
        }
        assert!(
            checked >= 3,
            "runtime sources not found in {}",
            dir.display()
        );
    }
}
