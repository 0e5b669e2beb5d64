//! FBX import time (docs/BENCHMARKS.md, "FBX import"): `formats::load_clips` on real files of
//! `$CLIPFORGE_DATA/fbx` (read, parse with ufbx, sample every stack), single thread. Without
//! `CLIPFORGE_DATA` it prints that it skipped.
//!
//! `CLIPFORGE_DATA=../shared/data cargo bench --no-default-features --bench fbx_import`

use clipforge::anim::formats;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;

fn bench(c: &mut Criterion) {
    let Some(data) = std::env::var_os("CLIPFORGE_DATA").map(PathBuf::from) else {
        eprintln!("skipped: set CLIPFORGE_DATA=../shared/data");
        return;
    };
    let mut g = c.benchmark_group("fbx_import");
    g.sample_size(20);
    for file in [
        "isaacgymenvs-cmu/01_01_cmu.fbx",
        "ozz-animation/pab/atlas.fbx",
        "ufbx/blender_293_barbarian_7400_binary.fbx",
    ] {
        let path = data.join("fbx").join(file);
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        g.throughput(Throughput::Bytes(len));
        g.bench_function(file, |b| {
            b.iter(|| black_box(formats::load_clips_with_warnings(&path).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
