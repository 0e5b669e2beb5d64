//! The ClipForge side of the side-by-side decode benchmark against ACL 2.1: the same clips, time
//! lists, call patterns, cache flush and TSV columns as `anchors/acl/acl_bench.cpp` (the
//! specification is `anchors/acl/README.md`, "Patterns"), timing `clipforge-runtime`'s sampling
//! of `.cfa` buffers that `clipforge compress` wrote from the same `.acl.sjson` files with the
//! default settings. `scripts/bench_runtime_vs_acl.sh` runs both and prints the ratios.
//!
//!     cargo bench -p clipforge-runtime --bench runtime_vs_acl -- [--passes N] [--blocks N] CLIP.cfa...
//!     cargo bench -p clipforge-runtime --bench runtime_vs_acl -- --print-times 26 24
//!
//! `--baseline`: the full pose's build-target copy (SSE2) even where the CPU has AVX2 + BMI2
//! (the copy a CPU without them runs; by default each reader takes the one its CPU allows).
//! `--sampler`: the full-pose patterns through a `Sampler` (the same poses, with a per-segment
//! cache kept between calls, as ACL's and ozz's contexts are): one per copy in the cold pattern.
//!
//! Columns (one row per clip, after the header): as ACL's, with `acl_bytes` = the `.cfa`'s
//! runtime data (what ACL's `get_size()` counts: no names or bind pose) and `compress_ms` = NA
//! (compression is timed by the compressor's own reports, not here).

use clipforge_runtime::{ClipReader, Defaults, Looping, Pose, Sampler};
use std::hint::black_box;
use std::time::Instant;

// Fixed parameters of the patterns (anchors/acl/README.md); change them only together.
const NUM_EVEN_TIMES: u32 = 100;
const PLAYBACK_RATE_HZ: f32 = 60.0;
const NUM_SEEK_TIMES: u32 = 1024;
const SEEK_SEED: u64 = 0x00C_11FF_0E6E;
const COLD_COPIES: usize = 220;
const FLUSH_BYTES: usize = 40 << 20;
const MIN_CALLS_PER_BLOCK: usize = 256;
const WARMUP_BLOCKS: usize = 5;
const NUM_BONES_LIST: usize = 8;
const PAGE: usize = 4096;

struct Options {
    blocks: usize,
    passes: usize,
    header: bool,
    verbose: bool,
    /// Time the full pose's build-target copy (SSE2) even on a CPU with AVX2
    /// (`ClipReader::use_baseline_decoder`).
    baseline: bool,
    /// The full-pose patterns through a `Sampler` (its per-segment cache): one per copy in the
    /// cold pattern, one for the warm patterns.
    sampler: bool,
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v[(q * (v.len() - 1) as f64 + 0.5) as usize]
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// T100, T60 and TSEEK for a clip (README "Patterns"), in float32 exactly as ACL's harness.
struct TimeLists {
    duration: f32,
    even: Vec<f32>,
    playback: Vec<f32>,
    seek: Vec<f32>,
}

fn time_lists(num_samples: u32, sample_rate: f32) -> TimeLists {
    let d = if num_samples > 1 && sample_rate > 0.0 {
        (num_samples - 1) as f32 / sample_rate
    } else {
        0.0
    };
    let even = (0..NUM_EVEN_TIMES)
        .map(|j| d * j as f32 / (NUM_EVEN_TIMES - 1) as f32)
        .collect();
    let mut playback = Vec::new();
    for k in 0u32.. {
        let t = k as f32 / PLAYBACK_RATE_HZ;
        if t > d {
            break;
        }
        playback.push(t);
    }
    let mut s = SEEK_SEED;
    let seek = (0..NUM_SEEK_TIMES)
        .map(|_| ((splitmix64(&mut s) >> 40) as f32 * (1.0 / 16_777_216.0)) * d)
        .collect();
    TimeLists {
        duration: d,
        even,
        playback,
        seek,
    }
}

/// ACL's harness's pose checksum (rotation w + translation x + scale z over the bones).
fn checksum(p: &Pose) -> f64 {
    (0..p.len())
        .map(|i| p.rotations[i].w as f64 + p.translations[i].x as f64 + p.scales[i].z as f64)
        .sum()
}

fn flush_cache(buf: &mut [u8]) {
    for i in (0..buf.len()).step_by(64) {
        buf[i] = buf[i].wrapping_add(i as u8);
    }
    black_box(&buf);
}

/// A warm pattern: calls go through `times` cyclically (the counter runs on across blocks),
/// timed in blocks of whole passes of at least `MIN_CALLS_PER_BLOCK` calls.
struct Warm<'t> {
    times: &'t [f32],
    calls_per_block: usize,
    call: u64,
    ns: Vec<f64>,
}

impl<'t> Warm<'t> {
    fn new(times: &'t [f32]) -> Self {
        let n = times.len();
        Self {
            times,
            calls_per_block: n * MIN_CALLS_PER_BLOCK.div_ceil(n),
            call: 0,
            ns: Vec::new(),
        }
    }

    #[inline(never)]
    fn block(&mut self, pose: &mut Pose, timed: bool, mut f: impl FnMut(u64, f32, &mut Pose)) {
        let n = self.times.len() as u64;
        let t0 = Instant::now();
        for _ in 0..self.calls_per_block {
            f(self.call, self.times[(self.call % n) as usize], pose);
            self.call += 1;
        }
        black_box(&mut *pose);
        let el = t0.elapsed().as_nanos() as f64;
        if timed {
            self.ns.push(el / self.calls_per_block as f64);
        }
    }
}

struct Row {
    pose_cold: f64,
    cold_samples: Vec<f64>,
    pose_warm: f64,
    playback: f64,
    seek: f64,
    bone: f64,
    bones8: f64,
    checksum: f64,
}

/// Page-aligned copies of a buffer (the cold pattern's 220 copies in one allocation).
struct Copies {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Copies {
    fn new(bytes: &[u8], n: usize) -> (Self, usize) {
        let stride = bytes.len().div_ceil(PAGE) * PAGE;
        let layout = std::alloc::Layout::from_size_align(stride * n, PAGE).unwrap();
        // SAFETY: the layout has a non-zero size (a .cfa is at least its header).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory for the cold copies");
        for c in 0..n {
            // SAFETY: copy c lies inside the allocation (c * stride + len <= n * stride).
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.add(c * stride), bytes.len())
            };
        }
        (Self { ptr, layout }, stride)
    }
    fn copy(&self, c: usize, stride: usize, len: usize) -> &[u8] {
        // SAFETY: as in `new`; the memory lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.add(c * stride), len) }
    }
}

impl Drop for Copies {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

fn measure(opt: &Options, bytes: &[u8], reader: &ClipReader, times: &TimeLists) -> Row {
    let num_bones = reader.num_bones();
    let looping = Looping::Clamp;
    let mut pose = Pose::new(num_bones);
    let mut sum = 0.0;

    // Cold full pose: 220 page-aligned copies, each with its own reader, visited in turn.
    let cold_samples = {
        let (copies, stride) = Copies::new(bytes, COLD_COPIES);
        let readers: Vec<ClipReader> = (0..COLD_COPIES)
            .map(|c| {
                let mut r =
                    ClipReader::new(copies.copy(c, stride, bytes.len())).expect("copy reads");
                if opt.baseline {
                    r.use_baseline_decoder();
                }
                r
            })
            .collect();
        let mut samplers: Vec<Sampler> = if opt.sampler {
            readers.iter().map(Sampler::new).collect()
        } else {
            Vec::new()
        };
        let mut flush = vec![1u8; FLUSH_BYTES];
        let mut samples = Vec::new();
        let n = times.even.len();
        let mut call = 0usize;
        for pass in 0..1 + opt.passes {
            flush_cache(&mut flush);
            let t0 = Instant::now();
            for _ in 0..COLD_COPIES {
                let t = times.even[call % n];
                match samplers.get_mut(call % COLD_COPIES) {
                    Some(s) => s.sample_pose(t, looping, &mut pose),
                    None => readers[call % COLD_COPIES].sample_pose(t, looping, &mut pose),
                }
                call += 1;
            }
            black_box(&mut pose);
            let el = t0.elapsed().as_nanos() as f64;
            if pass > 0 {
                samples.push(el / COLD_COPIES as f64);
            }
        }
        sum += checksum(&pose);
        samples
    };

    // Warm patterns: the original buffer, one reader.
    let list: Vec<usize> = {
        let mut l: Vec<usize> = Vec::new();
        for j in 0..NUM_BONES_LIST {
            let b = j * num_bones / NUM_BONES_LIST;
            if num_bones > 0 && l.last() != Some(&b) {
                l.push(b);
            }
        }
        l
    };
    let mut sampler = opt.sampler.then(|| Sampler::new(reader));
    let bone_call = |n: u64, t: f32, p: &mut Pose| {
        let b = (n % num_bones as u64) as usize;
        if let Some((r, tr, s)) = reader.sample_bone(b, t, looping) {
            p.rotations[b] = r;
            p.translations[b] = tr;
            p.scales[b] = s;
        }
    };
    // ACL's pattern is a seek then 8 decompress_track calls; ours is the list call (one seek).
    let list32: Vec<u32> = list.iter().map(|&b| b as u32).collect();
    let bones8_call = |_: u64, t: f32, p: &mut Pose| {
        let _ = reader.sample_bones(&list32, t, looping, Defaults::Write, p);
    };
    let mut warm = Warm::new(&times.even);
    let mut playback = Warm::new(&times.playback);
    let mut seek = Warm::new(&times.seek);
    let mut bone = Warm::new(&times.even);
    let mut bones8 = Warm::new(&times.even);
    for round in 0..WARMUP_BLOCKS + opt.blocks {
        let timed = round >= WARMUP_BLOCKS;
        let mut pose_call = |_: u64, t: f32, p: &mut Pose| match sampler.as_mut() {
            Some(s) => s.sample_pose(t, looping, p),
            None => reader.sample_pose(t, looping, p),
        };
        warm.block(&mut pose, timed, &mut pose_call);
        playback.block(&mut pose, timed, &mut pose_call);
        seek.block(&mut pose, timed, &mut pose_call);
        if num_bones > 0 {
            bone.block(&mut pose, timed, bone_call);
            bones8.block(&mut pose, timed, bones8_call);
        }
    }
    sum += checksum(&pose);
    Row {
        pose_cold: median(&cold_samples),
        cold_samples,
        pose_warm: median(&warm.ns),
        playback: median(&playback.ns),
        seek: median(&seek.ns),
        bone: median(&bone.ns),
        bones8: median(&bones8.ns),
        checksum: sum,
    }
    .with_spread(opt, &[&warm, &playback, &seek, &bone, &bones8])
}

impl Row {
    fn with_spread(self, opt: &Options, ps: &[&Warm; 5]) -> Self {
        if opt.verbose {
            let names = ["pose_warm", "playback", "seek", "bone", "bones8"];
            let mut s = format!(
                "spread (ns/call, p10 / median / p90): pose_cold {:.1} / {:.1} / {:.1}",
                quantile(&self.cold_samples, 0.1),
                quantile(&self.cold_samples, 0.5),
                quantile(&self.cold_samples, 0.9)
            );
            for (p, n) in ps.iter().zip(names) {
                if !p.ns.is_empty() {
                    s += &format!(
                        "; {n} {:.1} / {:.1} / {:.1}",
                        quantile(&p.ns, 0.1),
                        quantile(&p.ns, 0.5),
                        quantile(&p.ns, 0.9)
                    );
                }
            }
            eprintln!("runtime_vs_acl: {s}");
        }
        self
    }
}

fn fmt(v: f64) -> String {
    if v.is_nan() {
        "NA".into()
    } else {
        format!("{v:.1}")
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: runtime_vs_acl [--blocks N] [--passes N] [--no-header] [--baseline] [--sampler] CLIP.cfa...\n\
         \x20      runtime_vs_acl --print-times NUM_SAMPLES SAMPLE_RATE\n\
         (patterns and columns: anchors/acl/README.md; ACL_BENCH_VERBOSE=1 prints the spread)"
    );
    std::process::exit(1)
}

fn main() {
    let mut opt = Options {
        blocks: 101,
        passes: 101,
        header: true,
        verbose: std::env::var_os("ACL_BENCH_VERBOSE").is_some(),
        baseline: false,
        sampler: false,
    };
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    let count = |v: Option<String>| -> usize {
        match v.and_then(|s| s.parse().ok()) {
            Some(n) if (1..=1_000_000).contains(&n) => n,
            _ => usage(),
        }
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => {} // cargo bench passes it
            "--blocks" => opt.blocks = count(args.next()),
            "--passes" => opt.passes = count(args.next()),
            "--no-header" => opt.header = false,
            "--baseline" => opt.baseline = true,
            "--sampler" => opt.sampler = true,
            "--print-times" => {
                let n: u32 = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| usage());
                let r: f32 = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| usage());
                let t = time_lists(n, r);
                println!("D\t{}", t.duration);
                for (name, l) in [("T100", &t.even), ("T60", &t.playback), ("TSEEK", &t.seek)] {
                    for (k, v) in l.iter().enumerate() {
                        println!("{name}\t{k}\t{v}");
                    }
                }
                return;
            }
            "-h" | "--help" => usage(),
            s if s.starts_with('-') => usage(),
            _ => files.push(a),
        }
    }
    if files.is_empty() {
        usage();
    }
    if opt.header {
        println!(
            "clip\tbones\tsamples\tacl_bytes\tcompress_ms\tpose_cold_ns\tpose_warm_ns\tplayback_ns\tseek_ns\tbone_ns\tbones8_ns"
        );
    }
    let mut failed = 0;
    for path in &files {
        let name = std::path::Path::new(path)
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".cfa").to_string())
            .unwrap_or_default();
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("runtime_vs_acl: {name}: cannot read {path}: {e}");
                failed += 1;
                continue;
            }
        };
        let mut reader = match ClipReader::new(&bytes) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("runtime_vs_acl: {name}: refused: {e}");
                failed += 1;
                continue;
            }
        };
        if opt.baseline {
            reader.use_baseline_decoder();
        }
        let times = time_lists(reader.num_samples() as u32, reader.sample_rate());
        let row = measure(&opt, &bytes, &reader, &times);
        let na = reader.num_bones() == 0;
        println!(
            "{name}\t{}\t{}\t{}\tNA\t{}\t{}\t{}\t{}\t{}\t{}",
            reader.num_bones(),
            reader.num_samples(),
            reader.runtime_size(),
            fmt(row.pose_cold),
            fmt(row.pose_warm),
            fmt(row.playback),
            fmt(row.seek),
            fmt(if na { f64::NAN } else { row.bone }),
            fmt(if na { f64::NAN } else { row.bones8 }),
        );
        if opt.verbose {
            eprintln!(
                "runtime_vs_acl: {name}: duration {:.6} s, {} playback calls, pose checksum {:.6}",
                times.duration,
                times.playback.len(),
                row.checksum
            );
        }
    }
    if failed > 0 {
        eprintln!("runtime_vs_acl: {failed} of {} clips failed", files.len());
        std::process::exit(3);
    }
}
