//! Writer → reader round trips on procedural clips: needs no external data (fresh clone).

use clipforge_anim::RawClip;
use clipforge_anim::formats::{
    AclWriteOptions, load_clips, load_clips_from_bytes, write_acl_clip, write_acl_clip_with,
};
use clipforge_anim::generate::{GenerateOptions, generate};
use std::path::Path;

fn same_bits(a: &RawClip, b: &RawClip) -> bool {
    let q = |c: &RawClip| {
        c.rotations
            .iter()
            .flat_map(|q| q.to_array())
            .map(f32::to_bits)
            .collect::<Vec<_>>()
    };
    let v = |x: &[glam::Vec3]| {
        x.iter()
            .flat_map(|v| v.to_array())
            .map(f32::to_bits)
            .collect::<Vec<_>>()
    };
    a.name == b.name
        && a.skeleton.names == b.skeleton.names
        && a.skeleton.parents == b.skeleton.parents
        && a.num_samples == b.num_samples
        && a.sample_rate.to_bits() == b.sample_rate.to_bits()
        && q(a) == q(b)
        && v(&a.translations) == v(&b.translations)
        && v(&a.scales) == v(&b.scales)
        && v(&a.skeleton.bind_translations) == v(&b.skeleton.bind_translations)
        && v(&a.skeleton.bind_scales) == v(&b.skeleton.bind_scales)
}

#[test]
fn generated_clips_round_trip_through_files() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..6u64 {
        let clip = generate(&GenerateOptions {
            name: format!("gen{seed}"),
            num_samples: 10 + 17 * seed as usize,
            sample_rate: [30.0, 24.0, 60.0, 29.97, 120.0, 15.0][seed as usize],
            seed,
            with_scale: seed % 2 == 1,
        });
        for binary_exact in [false, true] {
            let text = write_acl_clip_with(
                &clip,
                &AclWriteOptions {
                    binary_exact,
                    ..Default::default()
                },
            );
            let path = dir
                .path()
                .join(format!("gen{seed}_{binary_exact}.acl.sjson"));
            std::fs::write(&path, &text).unwrap();
            let back = load_clips(&path).unwrap();
            assert_eq!(back.len(), 1);
            assert!(
                same_bits(&clip, &back[0]),
                "seed {seed} binary_exact {binary_exact}"
            );
            let from_bytes = load_clips_from_bytes(text.as_bytes(), &path).unwrap();
            assert!(same_bits(&clip, &from_bytes[0]));
        }
    }
}

#[test]
fn written_files_follow_acl_key_order() {
    let clip = generate(&GenerateOptions {
        num_samples: 2,
        ..Default::default()
    });
    let text = write_acl_clip(&clip);
    assert!(text.starts_with("version = 5\n"));
    let pos = |k: &str| text.find(k).unwrap_or_else(|| panic!("{k} missing"));
    assert!(pos("clip =") < pos("bones =") && pos("bones =") < pos("tracks ="));
    assert!(
        pos("num_samples = 2") < pos("sample_rate = 30.0")
            && pos("sample_rate") < pos("is_binary_exact = false")
    );
    assert!(
        pos("\t\tparent = \"\"") < pos("\t\tvertex_distance = 3.0")
            && pos("vertex_distance") < pos("bind_rotation")
    );
    // No error_threshold in version 5 (ACL only reads it in version 1).
    assert!(!text.contains("error_threshold"));
    // Truncated output must be refused with an error, never panic.
    for cut in [1, 10, text.len() / 2, text.len() - 3] {
        assert!(load_clips_from_bytes(&text.as_bytes()[..cut], Path::new("x.acl.sjson")).is_err());
    }
}
