//! Informational timings of the importers and the writer on the largest real files (no timed
//! assertions). Run in release to get meaningful numbers:
//! `CLIPFORGE_DATA=../shared/data cargo test --release --no-default-features --test formats_timing -- --nocapture`

mod common;

use clipforge::anim::formats::{AclWriteOptions, load_clips, sjson, write_acl_clip_with};
use std::time::Instant;

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        out = Some(v);
    }
    (best, out.expect("runs > 0"))
}

#[test]
fn print_import_and_export_timings() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let acl = data.join("acl-regression/27_06.acl.sjson");
    let text = std::fs::read_to_string(&acl).unwrap();
    let (ms, _) = best_of(5, || {
        sjson::parse(&text).unwrap().as_object().map(|o| o.len())
    });
    eprintln!(
        "[{profile}] 27_06.acl.sjson ({} bytes): SJSON parse {ms:.1} ms",
        text.len()
    );
    let (ms, clips) = best_of(5, || load_clips(&acl).unwrap());
    eprintln!("[{profile}] 27_06.acl.sjson: load_clips (read + parse + build) {ms:.1} ms");
    for binary_exact in [false, true] {
        let opts = AclWriteOptions {
            binary_exact,
            ..Default::default()
        };
        let (ms, out) = best_of(5, || write_acl_clip_with(&clips[0], &opts));
        eprintln!(
            "[{profile}] 27_06: write_acl_clip (binary_exact={binary_exact}) {ms:.1} ms, {} bytes",
            out.len()
        );
    }
    for bvh in ["bvh/cmu-acrnn/indian_04.bvh", "bvh/cmu-assimp/01_03.bvh"] {
        let p = data.join(bvh);
        let size = std::fs::metadata(&p).unwrap().len();
        let (ms, c) = best_of(3, || load_clips(&p).unwrap());
        eprintln!(
            "[{profile}] {bvh} ({size} bytes, {} bones x {} frames): load {ms:.1} ms",
            c[0].num_bones(),
            c[0].num_samples
        );
    }
    let p = data.join("gltf/raylib-cc0/robot.glb");
    let (ms, c) = best_of(3, || load_clips(&p).unwrap());
    eprintln!(
        "[{profile}] robot.glb: {} animations loaded in {ms:.1} ms",
        c.len()
    );
}
