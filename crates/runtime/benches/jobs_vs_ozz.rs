//! ClipForge's runtime jobs timed on the inputs and patterns of the ozz-animation anchor
//! (`anchors/ozz/README.md` specifies them byte for byte; this file follows it section by
//! section), printing the anchor's TSV columns with `ours_ns` in place of `ozz_ns`.
//! `scripts/bench_jobs_vs_ozz.sh` runs it and `ozz_bench` in alternation and prints the ratios.
//!
//! Usage: `jobs_vs_ozz [--clips LIST.tsv] [--fox FOX.cfmesh] [--only clips,l2m,skin,xform] [--quick]
//! [--stateless]`
//! where LIST.tsv has one `name<TAB>path.cfa` line per clip (the `.cfa` compressed by
//! `clipforge compress` from the `.acl.sjson` the anchor converted).
//!
//! A call is `Sampler::sample_pose` (a reader with a per-segment cache, as each ozz character
//! has its `SamplingJob::Context`: one per copy in the cold pattern, one per pattern warm; the
//! same poses as the stateless `ClipReader::sample_pose`, which `--stateless` times instead) +
//! [`LocalToObjectJob`]. What differs from ozz, by design: object-space rotation/translation/
//! scale out, not 4×4 matrices (the `l2m_palette` row adds the 4×4 conversion for a
//! like-for-like figure).

use clipforge_runtime::jobs::{
    LocalToObjectJob, PaletteOut, PoseRef, SimdPath, SkinJob, SkinningPaletteJob,
    TransformPointsJob,
};
use clipforge_runtime::{ClipReader, Looping, NO_PARENT, Pose, Sampler};
use glam::{Mat4, Quat, Vec3A};
use std::hint::black_box;
use std::time::Instant;

// ---------------------------------------------------------------- timing

#[inline(always)]
fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: lfence and rdtsc exist on every x86-64.
    unsafe {
        use std::arch::x86_64::{_mm_lfence, _rdtsc};
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// One measurement: (ns per unit, TSC ticks per unit).
#[derive(Clone, Copy)]
struct M {
    ns: f64,
    tsc: f64,
}

fn measure(units: usize, f: impl FnOnce()) -> M {
    let (t0, c0) = (Instant::now(), tsc());
    f();
    let (c1, t1) = (tsc(), Instant::now());
    M {
        ns: (t1 - t0).as_nanos() as f64 / units as f64,
        tsc: (c1 - c0) as f64 / units as f64,
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Prints one TSV row: median, min, nearest-rank p90 of ns, median TSC.
#[allow(clippy::too_many_arguments)]
fn row(
    case: &str,
    what: &str,
    ms: &[M],
    unit: &str,
    per: usize,
    joints: usize,
    samples: usize,
    bytes: usize,
    notes: &str,
) {
    let mut ns: Vec<f64> = ms.iter().map(|m| m.ns).collect();
    let mut ts: Vec<f64> = ms.iter().map(|m| m.tsc).collect();
    let med = median(&mut ns);
    let p90 = ns[((0.9 * ns.len() as f64).ceil() as usize).max(1) - 1];
    println!(
        "{case}\t{what}\t{med:.2}\t{unit}\t{:.2}\t{p90:.2}\t{:.2}\t{}\t{per}\t{joints}\t{samples}\t{bytes}\t{notes}",
        ns[0],
        median(&mut ts),
        ms.len()
    );
}

// ---------------------------------------------------------------- generators (README "Generators")

struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / 9007199254740992.0)
    }
    fn sym(&mut self, a: f64) -> f64 {
        (2.0 * self.unit() - 1.0) * a
    }
    fn quat(&mut self) -> [f64; 4] {
        let (x, y, z, w) = (self.sym(0.5), self.sym(0.5), self.sym(0.5), 1.0);
        let n = (((x * x + y * y) + z * z) + w * w).sqrt();
        [x / n, y / n, z / n, w / n]
    }
}

fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h = 0xCBF29CE484222325u64;
    for b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100000001B3);
    }
    h
}

fn f32_bytes(v: &[f32]) -> impl Iterator<Item = u8> + '_ {
    v.iter().flat_map(|f| f.to_le_bytes())
}

fn skeleton96() -> (Vec<u32>, u64) {
    let mut r = SplitMix(0x5EED0001);
    let mut parent = vec![-1i16];
    let mut chain = vec![0usize];
    for j in 1..96 {
        let u = r.unit();
        let i = if u < 0.75 || chain.len() == 1 {
            chain.len() - 1
        } else {
            (r.unit() * (chain.len() - 1) as f64).floor() as usize
        };
        parent.push(chain[i] as i16);
        chain.truncate(i + 1);
        chain.push(j);
    }
    let h = fnv(parent.iter().flat_map(|p| p.to_le_bytes()));
    let parents = parent
        .iter()
        .map(|&p| if p < 0 { NO_PARENT } else { p as u32 })
        .collect();
    (parents, h)
}

/// Crowd poses 1000 × 96 as SoA arrays, and the hash of the README's float order.
fn crowd_poses() -> (Vec<Quat>, Vec<Vec3A>, u64) {
    let mut r = SplitMix(0x5EED0002);
    let (mut q, mut t, mut flat) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..1000 * 96 {
        let [x, y, z, w] = r.quat();
        let (tx, ty, tz) = (r.sym(10.0), r.sym(10.0), r.sym(10.0));
        let v = [x, y, z, w, tx, ty, tz].map(|v| v as f32);
        flat.extend_from_slice(&v);
        q.push(Quat::from_xyzw(v[0], v[1], v[2], v[3]));
        t.push(Vec3A::new(v[4], v[5], v[6]));
    }
    (q, t, fnv(f32_bytes(&flat)))
}

fn palette96() -> (Vec<Mat4>, u64) {
    let mut r = SplitMix(0x5EED0003);
    let mut out = Vec::new();
    let mut flat = Vec::new();
    for _ in 0..96 {
        let [x, y, z, w] = r.quat();
        let (tx, ty, tz) = (r.sym(1.0), r.sym(1.0), r.sym(1.0));
        let (xx, yy, zz, xy, xz, yz, wx, wy, wz) = (
            x * x,
            y * y,
            z * z,
            x * y,
            x * z,
            y * z,
            w * x,
            w * y,
            w * z,
        );
        let m = [
            1.0 - 2.0 * (yy + zz),
            2.0 * (xy + wz),
            2.0 * (xz - wy),
            0.0,
            2.0 * (xy - wz),
            1.0 - 2.0 * (xx + zz),
            2.0 * (yz + wx),
            0.0,
            2.0 * (xz + wy),
            2.0 * (yz - wx),
            1.0 - 2.0 * (xx + yy),
            0.0,
            tx,
            ty,
            tz,
            1.0,
        ]
        .map(|v| v as f32);
        flat.extend_from_slice(&m);
        out.push(Mat4::from_cols_array(&m));
    }
    (out, fnv(f32_bytes(&flat)))
}

/// A skinned mesh as `.cfmesh` stores it.
struct Mesh {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    joints: Vec<u16>,
    weights: Vec<f32>,
    k: usize,
    j: usize,
}

impl Mesh {
    fn body_hash(&self) -> u64 {
        let p: Vec<f32> = self.positions.iter().flatten().copied().collect();
        let n: Vec<f32> = self.normals.iter().flatten().copied().collect();
        fnv(f32_bytes(&p)
            .chain(f32_bytes(&n))
            .chain(self.joints.iter().flat_map(|j| j.to_le_bytes()))
            .chain(f32_bytes(&self.weights)))
    }
    fn bytes(&self) -> usize {
        // inputs (positions, normals, joints, weights) + outputs (positions, normals)
        self.positions.len() * (12 + 12 + 2 * self.k + 4 * self.k + 24)
    }
}

fn mesh50000() -> Mesh {
    let mut r = SplitMix(0x5EED0004);
    let mut m = Mesh {
        positions: vec![],
        normals: vec![],
        joints: vec![],
        weights: vec![],
        k: 4,
        j: 96,
    };
    for _ in 0..50_000 {
        m.positions
            .push([r.sym(100.0), r.sym(100.0), r.sym(100.0)].map(|v| v as f32));
        let (x, y, z) = (r.sym(1.0), r.sym(1.0), r.sym(1.0));
        let n = ((x * x + y * y) + z * z).sqrt();
        m.normals.push(if n >= 1e-6 {
            [x / n, y / n, z / n].map(|v| v as f32)
        } else {
            [0.0, 1.0, 0.0]
        });
        let mut js: Vec<u16> = Vec::new();
        while js.len() < 4 {
            let j = (r.unit() * 96.0).floor() as u16;
            if !js.contains(&j) {
                js.push(j);
            }
        }
        m.joints.extend_from_slice(&js);
        let w: Vec<f64> = (0..4).map(|_| 0.05 + r.unit()).collect();
        let s = ((w[0] + w[1]) + w[2]) + w[3];
        m.weights.extend(w.iter().map(|v| (v / s) as f32));
    }
    m
}

fn points8192() -> (Vec<[f32; 3]>, Mat4, u64) {
    let mut r = SplitMix(0x5EED0005);
    let pts: Vec<[f32; 3]> = (0..8192)
        .map(|_| [r.sym(100.0), r.sym(100.0), r.sym(100.0)].map(|v| v as f32))
        .collect();
    let m: Vec<f32> = (0..16).map(|_| r.sym(1.0) as f32).collect();
    let flat: Vec<f32> = pts
        .iter()
        .flatten()
        .copied()
        .chain(m.iter().copied())
        .collect();
    (pts, Mat4::from_cols_slice(&m), fnv(f32_bytes(&flat)))
}

// ---------------------------------------------------------------- files

fn read_cfmesh(path: &str) -> Result<Mesh, String> {
    let b = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    if b.len() < 32 || &b[..8] != b"CFMESH1\0" || u32_at(8) != 1 {
        return Err(format!("{path}: not a version-1 .cfmesh"));
    }
    let (v, k, j) = (
        u32_at(12) as usize,
        u32_at(16) as usize,
        u32_at(20) as usize,
    );
    if !(1..=4).contains(&k) || b.len() != 32 + 24 * v + 6 * k * v {
        return Err(format!("{path}: size does not match V={v} K={k}"));
    }
    let f = |o: usize| f32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let v3 = |base: usize, i: usize| [f(base + 12 * i), f(base + 12 * i + 4), f(base + 12 * i + 8)];
    let (pb, nb, jb, wb) = (32, 32 + 12 * v, 32 + 24 * v, 32 + 24 * v + 2 * k * v);
    Ok(Mesh {
        positions: (0..v).map(|i| v3(pb, i)).collect(),
        normals: (0..v).map(|i| v3(nb, i)).collect(),
        joints: (0..v * k)
            .map(|i| u16::from_le_bytes([b[jb + 2 * i], b[jb + 2 * i + 1]]))
            .collect(),
        weights: (0..v * k).map(|i| f(wb + 4 * i)).collect(),
        k,
        j,
    })
}

// ---------------------------------------------------------------- 1. per clip

const COLD_COPIES: usize = 220;
const FLUSH_BYTES: usize = 40 << 20;

fn flush(buf: &mut [u8]) {
    for i in (0..buf.len()).step_by(64) {
        buf[i] = buf[i].wrapping_add(i as u8);
    }
    black_box(&buf[0]);
}

struct Character {
    pose: Pose,
    object: Pose,
}

impl Character {
    fn new(n: usize) -> Self {
        Character {
            pose: Pose::new(n),
            object: Pose::new(n),
        }
    }
    /// One call: sample (through `s` when given, else statelessly), then local → object (or
    /// sample alone).
    #[inline(always)]
    fn call(&mut self, r: &ClipReader, s: Option<&mut Sampler>, t: f32, with_l2o: bool) {
        match s {
            Some(s) => s.sample_pose(t, Looping::Clamp, &mut self.pose),
            None => r.sample_pose(t, Looping::Clamp, &mut self.pose),
        }
        if with_l2o {
            let parents = &r.skeleton().parents;
            LocalToObjectJob::new(
                parents,
                PoseRef::from(&self.pose),
                &mut self.object.rotations,
                &mut self.object.translations,
                &mut self.object.scales,
            )
            .run()
            .expect("a validated clip's skeleton");
            black_box(&self.object.translations[0]);
        } else {
            black_box(&self.pose.translations[0]);
        }
    }
}

fn time_lists(r: &ClipReader) -> [Vec<f32>; 3] {
    let s = r.num_samples();
    let d = if s <= 1 {
        0.0
    } else {
        (s - 1) as f32 / r.sample_rate()
    };
    let t100 = (0..100).map(|j| d * j as f32 / 99.0).collect();
    let mut t60 = vec![];
    for k in 0.. {
        let t = k as f32 / 60.0;
        if t > d {
            break;
        }
        t60.push(t);
    }
    let mut sm = SplitMix(0xC11FF0E6E);
    let seek = (0..1024)
        .map(|_| ((sm.next() >> 40) as f32 * (1.0 / 16777216.0)) * d)
        .collect();
    [t100, t60, seek]
}

fn bench_clip(
    name: &str,
    path: &str,
    (quick, stateless): (bool, bool),
    flushbuf: &mut [u8],
) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let reader = ClipReader::new(&bytes).map_err(|e| format!("{path}: {e}"))?;
    let nb = reader.num_bones();
    let ns = reader.num_samples();
    let size = bytes.len();
    let [t100, t60, seek] = time_lists(&reader);
    let notes = if stateless {
        "ours;clipreader_sample_pose+local_to_object_job;threshold=default"
    } else {
        "ours;sampler_sample_pose+local_to_object_job;threshold=default"
    };

    // Cold: 220 copies in one page-aligned region, each with its own reader (its own tables,
    // as each ozz copy has its own context).
    let stride = size.div_ceil(4096) * 4096;
    let mut region = vec![0u8; stride * COLD_COPIES + 4096];
    let off = region.as_ptr().align_offset(4096);
    for c in 0..COLD_COPIES {
        region[off + c * stride..off + c * stride + size].copy_from_slice(&bytes);
    }
    let readers: Vec<ClipReader> = (0..COLD_COPIES)
        .map(|c| ClipReader::new(&region[off + c * stride..off + c * stride + size]).unwrap())
        .collect();
    let mut samplers: Vec<Option<Sampler>> = readers
        .iter()
        .map(|r| (!stateless).then(|| Sampler::new(r)))
        .collect();
    let passes = if quick { 11 } else { 101 };
    for (case, l2o) in [("clip_cold", true), ("clip_cold_sample", false)] {
        let mut ch = Character::new(nb);
        let mut n = 0usize;
        let mut ms = vec![];
        for pass in 0..=passes {
            flush(flushbuf);
            let m = measure(COLD_COPIES, || {
                for _ in 0..COLD_COPIES {
                    let c = n % COLD_COPIES;
                    ch.call(&readers[c], samplers[c].as_mut(), t100[n % 100], l2o);
                    n += 1;
                }
            });
            if pass > 0 {
                ms.push(m);
            }
        }
        row(
            case,
            name,
            &ms,
            "call",
            COLD_COPIES,
            nb,
            ns,
            size,
            &format!(
                "{notes};copies=220;flush=40MiB{}",
                if l2o { "" } else { ";sample_only" }
            ),
        );
    }
    drop(samplers);
    drop(readers);

    // Warm rounds: warm (T100), play60, seek, warm_sample, interleaved block by block.
    struct Pat<'a> {
        case: &'static str,
        times: &'a [f32],
        l2o: bool,
        ch: Character,
        sampler: Option<Sampler<'a, 'a>>,
        n: usize,
        ms: Vec<M>,
    }
    let mut pats: Vec<Pat> = [
        ("clip_warm", &t100, true),
        ("clip_play60", &t60, true),
        ("clip_seek", &seek, true),
        ("clip_warm_sample", &t100, false),
    ]
    .into_iter()
    .map(|(case, times, l2o)| Pat {
        case,
        times,
        l2o,
        ch: Character::new(nb),
        sampler: (!stateless).then(|| Sampler::new(&reader)),
        n: 0,
        ms: vec![],
    })
    .collect();
    let rounds = if quick { 11 } else { 101 };
    for round in 0..5 + rounds {
        for p in &mut pats {
            let len = p.times.len();
            let block = len * 256usize.div_ceil(len);
            let m = measure(block, || {
                for _ in 0..block {
                    p.ch.call(&reader, p.sampler.as_mut(), p.times[p.n % len], p.l2o);
                    p.n += 1;
                }
            });
            if round >= 5 {
                p.ms.push(m);
            }
        }
    }
    for p in &pats {
        let len = p.times.len();
        row(
            p.case,
            name,
            &p.ms,
            "call",
            len * 256usize.div_ceil(len),
            nb,
            ns,
            size,
            &format!("{notes}{}", if p.l2o { "" } else { ";sample_only" }),
        );
    }
    Ok(())
}

// ---------------------------------------------------------------- 2. seed 001 crowd

fn bench_crowd(quick: bool) {
    let (parents, hs) = skeleton96();
    let (q, t, hp) = crowd_poses();
    let s = vec![Vec3A::ONE; q.len()];
    let (mut or, mut ot, mut os) = (
        vec![Quat::IDENTITY; q.len()],
        vec![Vec3A::ZERO; q.len()],
        vec![Vec3A::ONE; q.len()],
    );
    let mut pal = vec![Mat4::IDENTITY; q.len()];
    let inv_bind = vec![Mat4::IDENTITY; 96];
    let mut frame = |palette: bool| {
        for c in 0..1000 {
            let r = c * 96..c * 96 + 96;
            LocalToObjectJob::new(
                &parents,
                PoseRef {
                    rotations: &q[r.clone()],
                    translations: &t[r.clone()],
                    scales: &s[r.clone()],
                },
                &mut or[r.clone()],
                &mut ot[r.clone()],
                &mut os[r.clone()],
            )
            .run()
            .unwrap();
            if palette {
                SkinningPaletteJob {
                    object: PoseRef {
                        rotations: &or[r.clone()],
                        translations: &ot[r.clone()],
                        scales: &os[r.clone()],
                    },
                    inverse_bind: &inv_bind,
                    joints: None,
                    out: PaletteOut::Mat4(&mut pal[r.clone()]),
                }
                .run()
                .unwrap();
            }
        }
        black_box(&ot[0]);
    };
    let frames = if quick { 10 } else { 100 };
    for (case, palette, bytes) in [
        ("l2m_crowd", false, 96_000 * (48 + 48)),
        ("l2m_palette_crowd", true, 96_000 * (48 + 48 + 64)),
    ] {
        for _ in 0..3 {
            frame(palette);
        }
        let ms: Vec<M> = (0..frames).map(|_| measure(1, || frame(palette))).collect();
        let mut v: Vec<f64> = ms.iter().map(|m| m.ns).collect();
        let med = median(&mut v);
        row(
            case,
            "1000x96",
            &ms,
            "frame",
            1,
            96,
            1000,
            bytes,
            &format!(
                "ours;ms_per_frame={:.3};ns_per_character={:.1};out={};skeleton96={hs:016x};poses1000x96={hp:016x}",
                med / 1e6,
                med / 1000.0,
                if palette { "qvv+mat4_palette" } else { "qvv" }
            ),
        );
    }
}

// ---------------------------------------------------------------- 3. skinning

fn bench_skin(
    case: &str,
    what: &str,
    mesh: &Mesh,
    palette: &[Mat4],
    runs: usize,
    meas: usize,
    note: &str,
) {
    let v = mesh.positions.len();
    let (mut op, mut on) = (vec![[0.0f32; 3]; v], vec![[0.0f32; 3]; v]);
    let mut reference: Option<Vec<[f32; 3]>> = None;
    for path in [
        SimdPath::Scalar,
        SimdPath::Sse2,
        SimdPath::Avx2Fma,
        SimdPath::Auto,
    ] {
        if !path.available() {
            continue;
        }
        let mut run = || {
            SkinJob {
                palette: &palette[..mesh.j],
                influences: mesh.k,
                joints: &mesh.joints,
                weights: &mesh.weights,
                positions: &mesh.positions,
                normals: &mesh.normals,
                out_positions: &mut op,
                out_normals: &mut on,
            }
            .run_with(path)
            .unwrap();
        };
        for _ in 0..3 {
            run();
        }
        let ms: Vec<M> = (0..meas)
            .map(|_| {
                measure(runs * v, || {
                    for _ in 0..runs {
                        run();
                    }
                })
            })
            .collect();
        // Every path agrees with the scalar one (the tests hold them to 1e-4 relative).
        match &reference {
            None => reference = Some(op.clone()),
            Some(r) => {
                let worst = r
                    .iter()
                    .flatten()
                    .zip(op.iter().flatten())
                    .map(|(a, b)| (a - b).abs() / a.abs().max(1.0))
                    .fold(0.0f32, f32::max);
                assert!(worst < 1e-4, "{path:?} differs from scalar by {worst}");
            }
        }
        let p = if path == SimdPath::Auto {
            format!("auto={:?}", SimdPath::best())
        } else {
            format!("{path:?}")
        };
        row(
            &format!(
                "{case}{}",
                if path == SimdPath::Auto {
                    String::new()
                } else {
                    format!("_{}", p.to_lowercase())
                }
            ),
            what,
            &ms,
            "vertex",
            runs * v,
            mesh.j,
            v,
            mesh.bytes(),
            &format!("ours;{p};runs_per_measurement={runs};{note}"),
        );
    }
}

// ---------------------------------------------------------------- 4. seed 002

fn bench_xform(quick: bool) {
    let (pts, m, h) = points8192();
    let mut out = vec![[0.0f32; 4]; pts.len()];
    let calls = if quick { 2000 } else { 20_000 };
    let mut reference: Option<Vec<[f32; 4]>> = None;
    for (case, path) in [
        ("xform_scalar", SimdPath::Scalar),
        ("xform_sse", SimdPath::Sse2),
        ("xform_avx2fma", SimdPath::Avx2Fma),
    ] {
        if !path.available() {
            continue;
        }
        let mut call = || {
            TransformPointsJob {
                matrix: &m,
                points: &pts,
                out_points: &mut out,
                normals: &[],
                out_normals: &mut [],
            }
            .run_with(path)
            .unwrap();
            black_box(&out[0]);
        };
        for _ in 0..100 {
            call();
        }
        let ms: Vec<M> = (0..calls).map(|_| measure(8192, &mut call)).collect();
        match &reference {
            None => reference = Some(out.clone()),
            Some(r) => {
                let worst = r
                    .iter()
                    .flatten()
                    .zip(out.iter().flatten())
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0f32, f32::max);
                assert!(worst <= 1e-3, "{path:?} differs from scalar by {worst}");
            }
        }
        let mut t: Vec<f64> = ms.iter().map(|m| m.tsc).collect();
        t.sort_by(f64::total_cmp);
        let mid = &t[t.len() / 4..3 * t.len() / 4];
        let mean_mid = mid.iter().sum::<f64>() / mid.len() as f64;
        row(
            case,
            "8192",
            &ms,
            "point",
            8192,
            0,
            0,
            8192 * 28,
            &format!("ours;{path:?};tsc_middle_half_mean={mean_mid:.2};points8192={h:016x}"),
        );
    }
}

// ---------------------------------------------------------------- main

fn main() {
    let mut clips = None;
    let mut fox = None;
    let mut only = "clips,l2m,skin,xform".to_string();
    let mut quick = false;
    let mut stateless = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--clips" => clips = args.next(),
            "--fox" => fox = args.next(),
            "--only" => only = args.next().unwrap_or_default(),
            "--quick" => quick = true,
            "--stateless" => stateless = true,
            "--bench" => {} // cargo bench passes it
            _ => {
                eprintln!(
                    "usage: jobs_vs_ozz [--clips LIST.tsv] [--fox FOX.cfmesh] [--only clips,l2m,skin,xform] [--quick] [--stateless]"
                );
                std::process::exit(2);
            }
        }
    }
    let has = |w: &str| only.split(',').any(|o| o == w);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "case\tclip_or_size\tours_ns\tunit\tmin_ns\tp90_ns\ttsc_cycles\tmeasurements\tper_measurement\tjoints\tsamples\tbytes\tnotes"
    );
    println!(
        "meta\tclipforge\t0\t-\t0\t0\t0\t0\t0\t0\t0\t0\tsimd_best={:?};loadavg1={};quick={}",
        SimdPath::best(),
        load.split_whitespace().next().unwrap_or("?"),
        quick as u8
    );
    if has("clips")
        && let Some(list) = &clips
    {
        let text = std::fs::read_to_string(list).unwrap_or_else(|e| panic!("{list}: {e}"));
        let mut flushbuf = vec![1u8; FLUSH_BYTES];
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (name, path) = line.split_once('\t').expect("LIST: name<TAB>path");
            eprintln!("jobs_vs_ozz: {name}");
            if let Err(e) = bench_clip(name, path, (quick, stateless), &mut flushbuf) {
                eprintln!("jobs_vs_ozz: {e}");
                std::process::exit(1);
            }
        }
    }
    if has("l2m") {
        bench_crowd(quick);
    }
    let (palette, hpal) = palette96();
    if has("skin") {
        let mesh = mesh50000();
        let hm = mesh.body_hash();
        bench_skin(
            "skin_generated",
            "50000v_4inf_pos+nrm",
            &mesh,
            &palette,
            1,
            if quick { 10 } else { 100 },
            &format!("generated;mesh50000={hm:016x};palette96={hpal:016x}"),
        );
        if let Some(f) = &fox {
            match read_cfmesh(f) {
                Ok(mesh) => bench_skin(
                    "skin_fox",
                    &format!("{}v_4inf_pos+nrm", mesh.positions.len()),
                    &mesh,
                    &palette,
                    20,
                    if quick { 20 } else { 200 },
                    &format!(
                        "Fox.glb;cfmesh_body_fnv={:016x};palette96={hpal:016x}",
                        mesh.body_hash()
                    ),
                ),
                Err(e) => {
                    eprintln!("jobs_vs_ozz: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
    if has("xform") {
        bench_xform(quick);
    }
}
