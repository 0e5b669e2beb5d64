//! Codec benchmarks on ACL's regression clips (`CLIPFORGE_DATA=../shared/data`; without it, on
//! generated clips): compression per clip, single thread (KB/s of raw data, 10 float32 per bone
//! per sample as ACL counts), and decompression of a full pose and of one bone, warm and cold
//! (ACL's pattern: 220 copies of the clip visited in turn, the cache flushed every 220 calls).
//!
//! `CLIPFORGE_DATA=../shared/data cargo bench --no-default-features --bench codec -- --measurement-time 2`
//!
//! With `CLIPFORGE_PREV_CFA=DIR` (the `.cfa` files another build wrote for the same clips,
//! `DIR/NAME.cfa`), each clip's cold full pose is also timed on that build's buffer, right after
//! this build's (`pose_cold_prev`): the reader reads every format version, so the two differ
//! only by what the compressors wrote.

use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::anim::{ClipReader, CompressionSettings, Looping, Pose, RawClip, compress, formats};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;

fn clips() -> Vec<(String, RawClip)> {
    if let Some(dir) = std::env::var_os("CLIPFORGE_DATA") {
        let dir = PathBuf::from(dir).join("acl-regression");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("CLIPFORGE_DATA/acl-regression")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".acl.sjson"))
            .collect();
        paths.sort();
        paths
            .into_iter()
            .filter_map(|p| {
                let name = p.file_name()?.to_string_lossy().replace(".acl.sjson", "");
                let clip = formats::load_clips(&p).ok()?.into_iter().next()?;
                (clip.num_bones() > 0).then_some((name, clip))
            })
            .collect()
    } else {
        (1..=4)
            .map(|seed| {
                let c = generate(&GenerateOptions {
                    seed,
                    num_samples: 100 * seed as usize,
                    ..Default::default()
                });
                (format!("generated_{seed}"), c)
            })
            .collect()
    }
}

fn bench_compress(c: &mut Criterion) {
    let settings = CompressionSettings::default();
    let mut group = c.benchmark_group("compress");
    group.sample_size(10);
    for (name, clip) in clips() {
        group.throughput(Throughput::Bytes(clip.raw_size_bytes() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(&name), &clip, |b, clip| {
            b.iter(|| compress(black_box(clip), &settings).unwrap())
        });
    }
    group.finish();
}

/// Copies of a clip the cold benchmark rotates through (ACL's benchmark uses 220).
const COLD_COPIES: usize = 220;

/// Big enough to push the clip out of a 32 MiB L3, like ACL's benchmark.
fn flush_cache(buf: &mut [u8]) {
    for (i, v) in buf.iter_mut().enumerate().step_by(64) {
        *v = v.wrapping_add(i as u8);
    }
    black_box(&buf);
}

fn bench_decompress(c: &mut Criterion) {
    let settings = CompressionSettings::default();
    let all = clips();
    let mut group = c.benchmark_group("decompress");
    let mut scratch = vec![0u8; 40 << 20];
    for (name, clip) in all.iter().filter(|(_, c)| c.num_samples > 1) {
        let bytes = compress(clip, &settings).unwrap().bytes;
        let reader = ClipReader::new(&bytes).unwrap();
        let mut pose = Pose::new(reader.num_bones());
        let duration = reader.duration();
        // 100 evenly spaced times, going forward, interpolated (ACL's benchmark pattern).
        let times: Vec<f32> = (0..100).map(|i| duration * i as f32 / 99.0).collect();
        let mut k = 0usize;
        group.bench_function(BenchmarkId::new("pose_warm", name), |b| {
            b.iter(|| {
                k = (k + 1) % times.len();
                reader.sample_pose(black_box(times[k]), Looping::Clamp, &mut pose);
            })
        });
        group.bench_function(BenchmarkId::new("bone_warm", name), |b| {
            b.iter(|| {
                k = (k + 1) % times.len();
                black_box(reader.sample_bone(
                    black_box(k % reader.num_bones()),
                    times[k],
                    Looping::Clamp,
                ))
            })
        });
        // ACL's cold pattern: rotate through 220 copies of the clip (each with its own reader)
        // and flush the cache every 220 calls, outside the timed region.
        let prev = std::env::var_os("CLIPFORGE_PREV_CFA")
            .and_then(|d| std::fs::read(PathBuf::from(d).join(format!("{name}.cfa"))).ok());
        for (id, bytes) in std::iter::once(("pose_cold", &bytes))
            .chain(prev.as_ref().map(|p| ("pose_cold_prev", p)))
        {
            let copies: Vec<Vec<u8>> = (0..COLD_COPIES).map(|_| bytes.clone()).collect();
            let readers: Vec<ClipReader> =
                copies.iter().map(|c| ClipReader::new(c).unwrap()).collect();
            group.bench_function(BenchmarkId::new(id, name), |b| {
                b.iter_custom(|iters| {
                    let mut total = std::time::Duration::ZERO;
                    for i in 0..iters as usize {
                        if i % COLD_COPIES == 0 {
                            flush_cache(&mut scratch);
                        }
                        let r = &readers[i % COLD_COPIES];
                        let t = std::time::Instant::now();
                        r.sample_pose(black_box(times[i % times.len()]), Looping::Clamp, &mut pose);
                        total += t.elapsed();
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_compress, bench_decompress);
criterion_main!(benches);
