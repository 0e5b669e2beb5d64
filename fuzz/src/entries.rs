//! The fuzz targets' entry points: one function per target, taking the raw input bytes.
//!
//! Shared by the libFuzzer binaries (`fuzz/fuzz_targets/*.rs`, through `clipforge_fuzz`) and by
//! the regression replay in the main crate (`tests/fuzz_regressions.rs` includes this file with
//! `#[path]`), so a saved crash input goes through exactly the code that found it. It depends on
//! the `clipforge` library and `std` only (plus `tempfile` for the preprocessor's temporary tree).
//!
//! A failure is a panic, an abort, a hang or a memory blow-up. Besides "no panic", the targets
//! check contracts the project states (docs/RELIABILITY.md lists them), e.g. that a `.cfa` the
//! reader accepts decodes to finite values that re-import. `CLIPFORGE_FUZZ_LAX=1` turns those
//! contract checks off (then only panics, aborts, hangs and blow-ups count), for measuring a
//! build that is known to break a contract.

#![allow(dead_code)]

use clipforge::anim::formats::{self, sjson};
use clipforge::anim::runtime::format::checksum;
use clipforge::anim::{ClipReader, Looping, Pose};
use clipforge::headers::lex::{self, DKind, IncSpec};
use clipforge::headers::pp::{self, Ctx, Host, Macros, Syms};
use clipforge::headers::timing::{self, TuTrace};
use clipforge::headers::util::Interner;
use std::path::Path;

/// A target's entry point: takes one input, panics (or aborts) on a failure.
pub type Entry = fn(&[u8]);

/// Every target, by name (the name of its `fuzz_targets/` binary and of its corpus and
/// regression folders).
pub const TARGETS: &[(&str, Entry)] = &[
    ("acl_sjson", acl_sjson),
    ("bvh", bvh),
    ("gltf", gltf),
    ("fbx", fbx),
    ("cfa", cfa),
    ("cfs", cfs),
    ("headers_lex", headers_lex),
    ("headers_if", headers_if),
    ("headers_pp", headers_pp),
    ("headers_trace", headers_trace),
    ("jobs", jobs),
];

/// Contract checks on (the default) unless `CLIPFORGE_FUZZ_LAX` is set.
pub fn strict() -> bool {
    std::env::var_os("CLIPFORGE_FUZZ_LAX").is_none()
}

/// Importer inputs are given a path inside a folder that does not exist: a relative glTF buffer
/// URI then cannot reach a real file, so the targets stay independent of the file system.
const FAKE_DIR: &str = "/nonexistent-clipforge-fuzz";

fn import(data: &[u8], name: &str) {
    let path = Path::new(FAKE_DIR).join(name);
    if let Ok(clips) = formats::load_clips_from_bytes(data, &path)
        && strict()
    {
        for c in &clips {
            check_clip(c, name);
        }
    }
}

/// What an importer hands the compressor must be well formed: consistent lengths and finite
/// values (the compressor's error metric and range reduction assume it).
fn check_clip(c: &clipforge::anim::RawClip, what: &str) {
    let n = c.num_bones() * c.num_samples;
    assert_eq!(c.rotations.len(), n, "{what}: rotations length");
    assert_eq!(c.translations.len(), n, "{what}: translations length");
    assert_eq!(c.scales.len(), n, "{what}: scales length");
    assert!(
        c.sample_rate.is_finite() && c.sample_rate > 0.0,
        "{what}: accepted sample rate {}",
        c.sample_rate
    );
    for q in &c.rotations {
        assert!(q.is_finite(), "{what}: accepted non-finite rotation {q:?}");
    }
    for v in c.translations.iter().chain(&c.scales) {
        assert!(v.is_finite(), "{what}: accepted non-finite value {v:?}");
    }
}

/// `.acl.sjson`: the SJSON parser on its own, then the whole importer.
pub fn acl_sjson(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = sjson::parse(text);
    }
    import(data, "fuzz.acl.sjson");
}

/// BVH importer.
pub fn bvh(data: &[u8]) {
    import(data, "fuzz.bvh");
}

/// glTF / GLB importer (the gltf crate detects GLB by its magic, whatever the extension), then
/// the skinned-mesh loader on the same bytes; a mesh it accepts is checked (indices, joints,
/// weights summing to 1, finite values) and skinned with its clip's first sample.
pub fn gltf(data: &[u8]) {
    import(data, "fuzz.gltf");
    let path = Path::new(FAKE_DIR).join("fuzz.gltf");
    let Ok(meshes) = clipforge::anim::formats::gltf::load_gltf_meshes(data, &path, None) else {
        return;
    };
    if strict() {
        check_meshes(
            &meshes,
            &formats::load_clips_from_bytes(data, &path).unwrap_or_default(),
        );
    }
}

/// FBX importer (ufbx), then the skinned-mesh loader on the same bytes; a mesh it accepts is
/// checked as glTF's are and skinned with its clip's first sample.
pub fn fbx(data: &[u8]) {
    import(data, "fuzz.fbx");
    let path = Path::new(FAKE_DIR).join("fuzz.fbx");
    let Ok(meshes) = clipforge::anim::formats::fbx::load_fbx_meshes(data, &path) else {
        return;
    };
    if strict() {
        check_meshes(
            &meshes,
            &formats::load_clips_from_bytes(data, &path).unwrap_or_default(),
        );
    }
}

/// Checks each mesh and skins it with the first sample of its clip.
fn check_meshes(meshes: &[clipforge::anim::mesh::ClipMesh], clips: &[clipforge::anim::RawClip]) {
    for m in meshes {
        check_mesh(&m.mesh);
        if let Some(c) = clips.iter().find(|c| c.name == m.clip)
            && let Ok(mut s) = clipforge::anim::mesh::Skinner::new(m.mesh.clone(), c)
            && c.num_samples > 0
        {
            let mut pose = Pose::new(c.num_bones());
            s.skin_sample(c, 0, &mut pose)
                .expect("a checked mesh skins with its clip");
        }
    }
}

/// What the mesh loader hands the skinning job must be consistent: every index in range and
/// weights that sum to 1.
fn check_mesh(m: &clipforge::anim::mesh::SkinnedMesh) {
    use clipforge::anim::mesh::INFLUENCES;
    let nv = m.num_vertices();
    assert_eq!(m.joints.len(), nv * INFLUENCES, "mesh joints length");
    assert_eq!(m.weights.len(), nv * INFLUENCES, "mesh weights length");
    assert_eq!(m.inverse_bind.len(), m.joint_names.len(), "palette length");
    assert!(m.joints.iter().all(|&j| (j as usize) < m.joint_names.len()));
    assert!(m.triangles.iter().flatten().all(|&i| (i as usize) < nv));
    for w in m.weights.chunks_exact(INFLUENCES) {
        let sum: f32 = w.iter().sum();
        assert!((sum - 1.0).abs() < 1e-3, "weights sum to {sum}");
    }
    assert!(m.positions.iter().flatten().all(|x| x.is_finite()));
}

/// Times to sample a clip of duration `d` at: inside, at both ends and outside.
fn sample_times(d: f32) -> [f32; 7] {
    [
        0.0,
        d * 0.37,
        d * 0.5 + 1e-4,
        d,
        -1.0,
        d * 2.5 + 0.1,
        f32::MAX,
    ]
}

/// `.cfa` reader: validation, then sampling every bone at several times in both looping modes,
/// whole poses, every stored sample, and the decode back to a raw clip. Strict: what the reader
/// accepts decodes to finite values, and the decoded clip re-imports (docs/FORMAT.md).
pub fn cfa(data: &[u8]) {
    let Ok(r) = ClipReader::new(data) else {
        return;
    };
    let strict = strict();
    // The settings record (flags bit 7): what the reader accepts is what the writer writes,
    // byte for byte, and its lengths are positive numbers.
    if let Some(s) = r.settings()
        && strict
    {
        let rec = clipforge::anim::runtime::metadata::encode(s);
        assert!(
            data.ends_with(&rec),
            "accepted settings record does not re-encode to its bytes"
        );
        assert!(s.error_threshold_cm.is_finite() && s.error_threshold_cm > 0.0);
        assert!(
            s.shell_distance_cm
                .is_none_or(|d| d.is_finite() && d >= 0.0)
        );
    }
    let nb = r.num_bones();
    let mut pose = Pose::new(nb);
    for looping in [Looping::Clamp, Looping::Wrap] {
        for t in sample_times(r.duration()) {
            r.sample_pose(t, looping, &mut pose);
            if strict {
                for b in 0..nb {
                    assert!(
                        pose.rotations[b].is_finite()
                            && pose.translations[b].is_finite()
                            && pose.scales[b].is_finite(),
                        "accepted .cfa decodes bone {b} at t={t} to non-finite values"
                    );
                }
            }
            for b in 0..nb {
                let (q, t_, s) = r.sample_bone(b, t, looping).expect("bone in range");
                if strict {
                    assert!(
                        q.is_finite() && t_.is_finite() && s.is_finite(),
                        "accepted .cfa: sample_bone({b}, {t}) is not finite"
                    );
                }
            }
        }
    }
    for s in 0..r.num_stored_samples().min(64) {
        r.decode_sample(s, &mut pose);
    }
    let raw = clipforge::anim::decompress::to_raw_clip(&r);
    if strict {
        check_clip(&raw, "decoded .cfa");
        // Re-import through the text format: the importer's limits apply to what we decoded.
        let text = formats::write_acl_clip(&raw);
        if let Err(e) = formats::load_clips_from_bytes(
            text.as_bytes(),
            &Path::new(FAKE_DIR).join("decoded.acl.sjson"),
        ) {
            panic!("accepted .cfa decodes to a clip the importer refuses: {e}");
        }
    }
}

/// Makes a mutated `.cfa` buffer self-consistent where a checksum would otherwise refuse it at
/// once: total size (bytes 12..16) set to the length, CRC-32 (bytes 8..12) recomputed. The
/// custom mutator of the `cfa` target calls it after every mutation, so mutations reach the
/// semantic checks behind the checksum.
pub fn cfa_fix_up(buf: &mut [u8]) {
    if buf.len() < 16 {
        return;
    }
    let len = buf.len() as u32;
    buf[12..16].copy_from_slice(&len.to_le_bytes());
    let crc = checksum(buf);
    buf[8..12].copy_from_slice(&crc.to_le_bytes());
}

/// `.cfs` reader (scalar track lists): validation, then sampling every track at several times in
/// both looping modes, every stored sample, and the decode back to an ACL track list. Strict: what
/// the reader accepts samples to finite values, and the decoded list re-imports as a scalar list.
pub fn cfs(data: &[u8]) {
    use clipforge::anim::runtime::scalar::ScalarReader;
    let Ok(r) = ScalarReader::new(data) else {
        return;
    };
    let strict = strict();
    let mut all = Vec::new();
    let mut one = [0f32; 4];
    for looping in [Looping::Clamp, Looping::Wrap] {
        for t in sample_times(r.duration()) {
            r.sample_all(t, looping, &mut all);
            if strict {
                assert!(
                    all.iter().all(|v| v.is_finite()),
                    "accepted .cfs samples to non-finite values at t={t}"
                );
            }
            for k in 0..r.num_tracks().min(64) {
                r.sample_track(k, t, looping, &mut one);
                if strict {
                    assert!(
                        one.iter().all(|v| v.is_finite()),
                        "accepted .cfs: track {k} at t={t}"
                    );
                }
            }
        }
    }
    // Decoding is bounded by the reader's cap; the text round trip only for lists of fuzz size.
    if r.num_tracks() * r.num_samples() > 1 << 16 {
        return;
    }
    let list = clipforge::anim::scalar::to_raw_scalar_list(&r);
    if strict && !list.tracks.is_empty() {
        let text = formats::acl::write_acl_scalar_list(&list);
        match formats::acl::read_acl_file(&text, &Path::new(FAKE_DIR).join("decoded.acl.sjson")) {
            Ok(formats::acl::AclFile::Scalars(back)) => {
                assert_eq!(
                    back.tracks.len(),
                    list.tracks.len(),
                    "decoded .cfs re-imports with another track count"
                )
            }
            Ok(_) => panic!("decoded .cfs re-imports as a transform clip"),
            Err(e) => panic!("accepted .cfs decodes to a list the importer refuses: {e}"),
        }
    }
}

/// Makes a mutated `.cfs` buffer pass its checksum (bytes 20..24, over every other byte), so
/// mutations reach the semantic checks (the `cfs` target's mutator calls it).
pub fn cfs_fix_up(buf: &mut [u8]) {
    use clipforge::anim::runtime::scalar::{CRC_OFFSET, HEADER_SIZE, checksum};
    if buf.len() < HEADER_SIZE {
        return;
    }
    let crc = checksum(buf);
    buf[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());
}

/// Header lexer: the preprocessing lexer (directives, tokens) and Header Hero's line scanner,
/// then every token of every directive spelled back.
pub fn headers_lex(data: &[u8]) {
    let interner = Interner::new();
    let mut lexed = lex::lex(data, &interner);
    lex::hh_scan(data, &mut lexed);
    let mut out = Vec::new();
    for d in lexed.directives.iter() {
        match &d.kind {
            DKind::If(t) | DKind::Elif(t) => {
                for tok in t {
                    out.clear();
                    lex::spell(tok, &interner, &mut out);
                }
            }
            DKind::Define(m) => {
                for tok in &m.body {
                    out.clear();
                    lex::spell(tok, &interner, &mut out);
                }
            }
            _ => {}
        }
    }
}

/// The evaluator's view of a translation unit: `__has_include` finds `yes.h` only.
struct FuzzHost;

impl Host for FuzzHost {
    fn has_include(&mut self, name: &[u8], _angle: bool, _next: bool) -> bool {
        name == b"yes.h"
    }
    fn line(&self) -> u32 {
        1
    }
    fn file_name(&self) -> Vec<u8> {
        b"fuzz.cpp".to_vec()
    }
    fn base_file(&self) -> Vec<u8> {
        b"fuzz.cpp".to_vec()
    }
    fn include_level(&self) -> u32 {
        0
    }
}

/// Macro expansion and the `#if` evaluator, in memory: the input is lexed, then its directives
/// are applied in order (`#define`, `#undef`, push/pop_macro) and every `#if`/`#elif` and
/// `#include MACRO` is expanded and evaluated, whatever the branch (like "all branches" mode).
pub fn headers_if(data: &[u8]) {
    let interner = Interner::new();
    let syms = Syms::new(&interner);
    let lexed = lex::lex(data, &interner);
    let mut macros = Macros::default();
    let mut host = FuzzHost;
    for clang in [false, true] {
        for d in lexed.directives.iter() {
            match &d.kind {
                DKind::Define(m) => macros.define(m),
                DKind::Undef(s) => macros.undef(*s),
                DKind::PushMacro(s) => macros.push(*s),
                DKind::PopMacro(s) => macros.pop(*s),
                DKind::If(t) | DKind::Elif(t) => {
                    let mut c = Ctx {
                        macros: &mut macros,
                        syms: &syms,
                        interner: &interner,
                        host: &mut host,
                        clang,
                        cplusplus: !clang,
                    };
                    let _ = pp::eval_if(&mut c, t);
                }
                DKind::Include {
                    spec: IncSpec::Macro(t),
                    ..
                } => {
                    let mut c = Ctx {
                        macros: &mut macros,
                        syms: &syms,
                        interner: &interner,
                        host: &mut host,
                        clang,
                        cplusplus: true,
                    };
                    let _ = pp::include_name(&mut c, t);
                }
                _ => {}
            }
        }
        macros = Macros::default();
    }
}

/// File names the `headers_pp` target gives the NUL-separated parts of its input: the first is
/// the translation unit, the others headers it can include by these names.
pub const PP_FILES: &[&str] = &["tu.cpp", "a.h", "b.h", "sub/c.h", "sub/d.hpp"];

/// The `headers_pp` target's inclusions per TU (the CLI's is `MAX_TU_INCLUSIONS`, 100,000).
pub const PP_INCLUSION_BUDGET: u64 = 5_000;

/// The whole header scanner (both modes: all branches and preprocessed) on a temporary tree
/// made from the input: parts separated by NUL bytes become the files of [`PP_FILES`], the tree
/// is its own `-I` dir, and the built-in GCC macro set is used (no compiler is started). The
/// per-TU inclusion budget is lowered to [`PP_INCLUSION_BUDGET`]: inputs that fan includes out
/// (the fuzzer finds them at once) spend the whole budget, so at the CLI's 100,000 an execution
/// takes up to a second and a million of them days; the budget's own path is taken as often.
pub fn headers_pp(data: &[u8]) {
    use clipforge::headers::{self, CompilerChoice, Progress, Project, ScanOptions};
    headers::eval::set_tu_inclusion_budget(PP_INCLUSION_BUDGET);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("sub")).expect("sub dir");
    for (name, part) in PP_FILES.iter().zip(data.split(|&b| b == 0)) {
        std::fs::write(dir.path().join(name), part).expect("write part");
    }
    let project = Project {
        roots: vec![dir.path().to_path_buf()],
        include_dirs: vec![dir.path().to_path_buf(), dir.path().join("sub")],
        compiler: CompilerChoice::None,
        cache_file: Some(dir.path().join("no-cache")),
        ..Project::default()
    };
    let opts = ScanOptions {
        use_disk_cache: false,
        ..ScanOptions::default()
    };
    let _ = headers::scan(&project, &opts, &Progress::default());
}

/// Reads the fuzz input as a stream of bytes (zeros once it runs out).
struct Bytes<'a>(&'a [u8], usize);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let b = self.0.get(self.1).copied().unwrap_or(0);
        self.1 += 1;
        b
    }
    /// `base`, or one less or one more (a length off by one is the classic mistake).
    fn len(&mut self, base: usize) -> usize {
        match self.u8() % 8 {
            0 => base.saturating_sub(1),
            1 => base + 1,
            _ => base,
        }
    }
    /// A float: small values mostly, now and then a special one.
    fn f32(&mut self) -> f32 {
        match self.u8() {
            255 => f32::NAN,
            254 => f32::INFINITY,
            253 => -0.0,
            b => (b as f32 - 126.0) / 32.0,
        }
    }
    fn v3(&mut self, n: usize) -> Vec<glam::Vec3A> {
        (0..n)
            .map(|_| glam::Vec3A::new(self.f32(), self.f32(), self.f32()))
            .collect()
    }
    fn quats(&mut self, n: usize) -> Vec<glam::Quat> {
        (0..n)
            .map(|_| glam::Quat::from_xyzw(self.f32(), self.f32(), self.f32(), self.f32() + 1.0))
            .collect()
    }
    fn pose(&mut self, n: usize) -> (Vec<glam::Quat>, Vec<glam::Vec3A>, Vec<glam::Vec3A>) {
        let (a, b, c) = (self.len(n), self.len(n), self.len(n));
        (self.quats(a), self.v3(b), self.v3(c))
    }
}

/// The runtime jobs (`clipforge::runtime::jobs`): the input picks sizes (often off by one),
/// parent and joint indices (often out of range or out of order), weights and values (NaN and
/// infinities included); every job is validated and run, on every SIMD path for local → object and the vertex jobs.
/// Contract: `run()` returns exactly what `validate()` returns, never panics (the fuzz build has
/// debug assertions and overflow checks), and the SIMD paths agree with the scalar one.
pub fn jobs(data: &[u8]) {
    use clipforge::runtime::NO_PARENT;
    use clipforge::runtime::jobs::PoseRef;
    let mut r = Bytes(data, 0);
    let n = (r.u8() % 40) as usize;
    let parents: Vec<u32> = (0..r.len(n))
        .map(|b| match r.u8() {
            255 => NO_PARENT,
            254 => b as u32,                // itself: out of order
            p => p as u32 % (b as u32 + 2), // mostly before, sometimes b or b + 1
        })
        .collect();
    let (lr, lt, ls) = r.pose(n);
    let local = PoseRef {
        rotations: &lr,
        translations: &lt,
        scales: &ls,
    };
    jobs_local_to_object(&mut r, n, &parents, local);
    jobs_blend(&mut r, n, local);
    jobs_palette(&mut r, n, local);
    jobs_skin(&mut r);
}

/// Every SIMD path, the scalar one first (the others are compared with it), those this CPU
/// lacks included (they must be refused).
const ALL_PATHS: [clipforge::runtime::jobs::SimdPath; 5] = {
    use clipforge::runtime::jobs::SimdPath;
    [
        SimdPath::Scalar,
        SimdPath::Sse2,
        SimdPath::Avx2Fma,
        SimdPath::Neon,
        SimdPath::Auto,
    ]
};

/// [`jobs`]' local → object case: output lengths and the range off by one as often as not.
fn jobs_local_to_object(
    r: &mut Bytes<'_>,
    n: usize,
    parents: &[u32],
    local: clipforge::runtime::jobs::PoseRef<'_>,
) {
    use clipforge::runtime::jobs::*;
    use glam::{Quat, Vec3A};
    let lens = (r.len(n), r.len(n), r.len(n));
    let (start, end) = (r.u8() as usize % (n + 2), r.u8() as usize % (n + 2));
    // The job's contract is unit rotations (the sampler's): the paths normalise differently
    // (exact `q/|q|` on the scalar one, a Newton step from 1 on the others), so they are
    // compared on the same rotations made unit (zero or non-finite ones left as they are).
    let unit: Vec<Quat> = local
        .rotations
        .iter()
        .map(|q| {
            let l = q.length();
            if l.is_finite() && l > 1e-3 {
                *q / l
            } else {
                *q
            }
        })
        .collect();
    let local = PoseRef {
        rotations: &unit,
        ..local
    };
    // Every path, each against validate() and (strict) against the scalar path's outputs.
    type Outputs = (Vec<Quat>, Vec<Vec3A>, Vec<Vec3A>);
    let mut scalar: Option<Outputs> = None;
    for path in ALL_PATHS {
        let (mut or, mut ot, mut os) = (
            vec![Quat::IDENTITY; lens.0],
            vec![Vec3A::ZERO; lens.1],
            vec![Vec3A::ONE; lens.2],
        );
        let mut job = LocalToObjectJob {
            parents,
            local,
            start,
            end,
            out_rotations: &mut or,
            out_translations: &mut ot,
            out_scales: &mut os,
        };
        let v = job.validate();
        let res = job.run_with(path);
        if !path.available() {
            assert!(
                res.is_err(),
                "local_to_object {path:?} ran where it is not available"
            );
            continue;
        }
        assert_eq!(
            res, v,
            "local_to_object {path:?}: run() differs from validate()"
        );
        if res.is_err() || !strict() {
            continue;
        }
        let Some((sr, st, ss)) = &scalar else {
            scalar = Some((or, ot, os));
            continue;
        };
        // Rounding differs between paths (FMA, the normalisation); a translation's error scales
        // with the largest value its chain composed (an ancestor's translation or scale), so
        // the bound is relative to the pose's largest output, not to the value itself.
        let big = st
            .iter()
            .chain(ss)
            .flat_map(|v| v.to_array())
            .filter(|x| x.is_finite())
            .fold(1.0f32, |m, x| m.max(x.abs()));
        let close = |a: f32, b: f32, scale: f32| {
            a == b
                || (a.is_nan() && b.is_nan())
                || !(a.is_finite() && b.is_finite())
                || scale > 1e15
                || (a - b).abs() <= 1e-3 * scale
        };
        for (a, b) in sr.iter().zip(&or) {
            for (x, y) in a.to_array().into_iter().zip(b.to_array()) {
                assert!(
                    close(x, y, 1.0),
                    "local_to_object {path:?}: rotation {b} where scalar gives {a}"
                );
            }
        }
        for (a, b) in st.iter().zip(&ot).chain(ss.iter().zip(&os)) {
            for (x, y) in a.to_array().into_iter().zip(b.to_array()) {
                assert!(
                    close(x, y, big),
                    "local_to_object {path:?}: {b} where scalar gives {a}"
                );
            }
        }
    }
}

/// [`jobs`]' blend case: up to two layers and one additive layer, each with its own lengths.
fn jobs_blend(r: &mut Bytes<'_>, n: usize, local: clipforge::runtime::jobs::PoseRef<'_>) {
    use clipforge::runtime::jobs::*;
    use glam::{Quat, Vec3A};
    let poses: Vec<_> = (0..3).map(|_| r.pose(n)).collect();
    let bws: Vec<Vec<f32>> = (0..3)
        .map(|_| (0..r.len(n)).map(|_| r.f32()).collect())
        .collect();
    let layers: Vec<BlendLayer> = poses
        .iter()
        .zip(&bws)
        .map(|(p, w)| BlendLayer {
            pose: PoseRef {
                rotations: &p.0,
                translations: &p.1,
                scales: &p.2,
            },
            weight: r.f32(),
            bone_weights: (r.u8().is_multiple_of(2)).then_some(&w[..]),
        })
        .collect();
    let nl = (r.u8() % 3) as usize;
    let (mut br, mut bt, mut bs) = (
        vec![Quat::IDENTITY; n],
        vec![Vec3A::ZERO; r.len(n)],
        vec![Vec3A::ONE; n],
    );
    let mut job = BlendJob {
        layers: &layers[..nl],
        additive: &layers[2..],
        rest: local,
        threshold: r.f32(),
        out_rotations: &mut br,
        out_translations: &mut bt,
        out_scales: &mut bs,
    };
    let v = job.validate();
    assert_eq!(job.run(), v, "blend: run() differs from validate()");
}

/// [`jobs`]' skinning-palette case, both output layouts.
fn jobs_palette(r: &mut Bytes<'_>, n: usize, local: clipforge::runtime::jobs::PoseRef<'_>) {
    use clipforge::runtime::jobs::*;
    use glam::Mat4;
    let m = (r.u8() % 20) as usize;
    let inv: Vec<Mat4> = (0..m)
        .map(|_| Mat4::from_cols_array(&[r.f32(); 16]))
        .collect();
    let joints: Vec<u16> = (0..r.len(m))
        .map(|_| r.u8() as u16 % (n as u16 + 2))
        .collect();
    let use_joints = r.u8().is_multiple_of(2);
    let mut pal = vec![Mat4::ZERO; r.len(m)];
    let mut rows = vec![[glam::Vec4::ZERO; 3]; r.len(m)];
    for out in [PaletteOut::Mat4(&mut pal), PaletteOut::Rows3x4(&mut rows)] {
        let mut job = SkinningPaletteJob {
            object: local,
            inverse_bind: &inv,
            joints: use_joints.then_some(&joints[..]),
            out,
        };
        let v = job.validate();
        assert_eq!(job.run(), v, "palette: run() differs from validate()");
    }
}

/// [`jobs`]' skinning and point-transform cases on every SIMD path, compared with the scalar one.
fn jobs_skin(r: &mut Bytes<'_>) {
    use clipforge::runtime::jobs::*;
    use glam::Mat4;
    let k = (r.u8() % 6) as usize;
    let nv = (r.u8() % 24) as usize;
    let palette: Vec<Mat4> = (0..(r.u8() % 8) as usize)
        .map(|_| Mat4::from_cols_array(&std::array::from_fn(|_| r.f32())))
        .collect();
    let pl = palette.len() as u16;
    let sj: Vec<u16> = (0..r.len(nv * k.max(1)))
        .map(|_| r.u8() as u16 % (pl + 1))
        .collect();
    let sw: Vec<f32> = (0..r.len(nv * k.max(1))).map(|_| r.f32()).collect();
    let pos: Vec<[f32; 3]> = (0..nv).map(|_| [r.f32(), r.f32(), r.f32()]).collect();
    let with_normals = r.u8().is_multiple_of(2);
    let nrm: Vec<[f32; 3]> = if with_normals {
        (0..r.len(nv))
            .map(|_| [r.f32(), r.f32(), r.f32()])
            .collect()
    } else {
        vec![]
    };
    let (opl, onl) = (r.len(nv), if with_normals { r.len(nv) } else { 0 });
    let matrix = palette.first().copied().unwrap_or(Mat4::IDENTITY);
    // The scalar path's skinned positions and transformed points.
    type Outputs = (Vec<[f32; 3]>, Vec<[f32; 4]>);
    let mut scalar: Option<Outputs> = None;
    for path in ALL_PATHS {
        let (mut op, mut on) = (vec![[0.0f32; 3]; opl], vec![[0.0f32; 3]; onl]);
        let mut job = SkinJob {
            palette: &palette,
            influences: k,
            joints: &sj,
            weights: &sw,
            positions: &pos,
            normals: &nrm,
            out_positions: &mut op,
            out_normals: &mut on,
        };
        let v = job.validate();
        let res = job.run_with(path);
        if path.available() {
            assert_eq!(res, v, "skin {path:?}: run() differs from validate()");
        } else {
            assert!(res.is_err(), "skin {path:?} ran where it is not available");
        }
        let mut pts = vec![[0.0f32; 4]; nv];
        let mut pn = vec![[0.0f32; 3]; nrm.len()];
        let ok_pts = TransformPointsJob {
            matrix: &matrix,
            points: &pos,
            out_points: &mut pts,
            normals: &nrm,
            out_normals: &mut pn,
        }
        .run_with(path)
        .is_ok();
        if res.is_ok() && ok_pts && strict() {
            match &scalar {
                None => scalar = Some((op.clone(), pts.clone())),
                Some((sp, spts)) => {
                    let close = |a: f32, b: f32| {
                        a == b
                            || (a.is_nan() && b.is_nan())
                            || (a - b).abs() <= 1e-3 * a.abs().max(b.abs()).max(1.0)
                            || !(a.is_finite() && b.is_finite())
                    };
                    for (a, b) in sp.iter().flatten().zip(op.iter().flatten()) {
                        assert!(close(*a, *b), "skin {path:?}: {b} where scalar gives {a}");
                    }
                    for (a, b) in spts.iter().flatten().zip(pts.iter().flatten()) {
                        assert!(close(*a, *b), "points {path:?}: {b} where scalar gives {a}");
                    }
                }
            }
        }
    }
}

/// Trace readers: the input as a clang `-ftime-trace` JSON file and as a trace summary
/// (`<trace>.sum`), both as `clipforge headers --time-trace` reads them. What either accepts
/// names each file once, absolute and normal, sorted by bytes, and gives the TU no more time
/// outside its headers than its whole frontend time.
pub fn headers_trace(data: &[u8]) {
    let base = Path::new("/nonexistent-clipforge-fuzz/traces");
    let trace = timing::parse_trace(data, base).ok();
    let summary = timing::parse_summary(data, base);
    if strict() {
        for (what, t) in [("trace", &trace), ("summary", &summary)] {
            if let Some(t) = t {
                check_trace(t, what);
            }
        }
    }
}

fn check_trace(t: &TuTrace, what: &str) {
    assert!(
        t.own_us <= t.frontend_us,
        "{what}: own time {} over the frontend's {}",
        t.own_us,
        t.frontend_us
    );
    let bytes = |p: &Path| p.as_os_str().as_encoded_bytes().to_vec();
    for w in t.files.windows(2) {
        assert!(
            bytes(&w[0].0) < bytes(&w[1].0),
            "{what}: files not sorted or repeated: {:?}, {:?}",
            w[0].0,
            w[1].0
        );
    }
    for (p, _, _) in &t.files {
        assert!(p.is_absolute(), "{what}: relative file {p:?}");
        assert_eq!(
            &clipforge::headers::util::normalize(p),
            p,
            "{what}: file not normal"
        );
    }
}
