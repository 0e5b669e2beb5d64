//! `examples/c/play.c` and `examples/cpp/play.cpp`, compiled with the system C and C++
//! compilers (`cc`, `c++`; skipped with a message when one is missing) against this crate's
//! staticlib (and the C one also against the cdylib), run on `.cfa` files made here from bundled
//! and generated clips: the checksum each prints equals the one computed through the Rust API
//! (`clipforge_runtime::ClipReader`), bit for bit, and so does each example's second checksum,
//! of two clips blended, taken to object space and a small mesh skinned (the runtime's jobs
//! called from Rust, step for step). On a damaged, truncated or foreign file each
//! exits with status 1 and prints the reader's message.

use clipforge_anim::generate::{GenerateOptions, generate};
use clipforge_anim::{CompressionSettings, RawClip, compress};
use clipforge_runtime::jobs::{
    BlendJob, BlendLayer, LocalToObjectJob, PaletteOut, PoseRef, SkinJob, SkinningPaletteJob,
};
use clipforge_runtime::{ClipReader, Defaults, Looping, NO_PARENT, Pose};
use glam::Mat4;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What the staticlib needs from the system on Linux (`cargo rustc -p clipforge-runtime-capi
/// --release --crate-type staticlib -- --print native-static-libs`; docs/RUNTIME.md).
const NATIVE_LIBS: &[&str] = &[
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The folder holding `libclipforge_runtime_capi.{a,so}` of this build: cargo writes them,
/// without a hash in the name, beside this test binary in `deps/` (and copies them one up). The
/// newer of the two is taken, and one older than the runtime's sources is refused: `cargo test`
/// does not always rewrite them, and a warm target once linked a library from before a format
/// change (its players called the new files "unsupported").
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let newest = [deps, deps.parent().unwrap()]
        .into_iter()
        .filter_map(|d| {
            let m = std::fs::metadata(d.join("libclipforge_runtime_capi.a")).ok()?;
            Some((m.modified().ok()?, d.to_path_buf()))
        })
        .max();
    let Some((built, dir)) = newest else {
        panic!(
            "libclipforge_runtime_capi.a not found beside {}",
            exe.display()
        );
    };
    let sources = newest_source(&repo().join("crates/runtime/src"))
        .max(newest_source(&repo().join("crates/runtime-capi/src")));
    assert!(
        sources.is_none_or(|s| s <= built),
        "{} is older than the runtime's sources: run `cargo build --release -p \
         clipforge-runtime-capi` (with this CARGO_TARGET_DIR) and test again",
        dir.join("libclipforge_runtime_capi.a").display()
    );
    dir
}

/// The latest modification time of the `.rs` files under `dir`.
fn newest_source(dir: &Path) -> Option<std::time::SystemTime> {
    let mut newest = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        let t = if p.is_dir() {
            newest_source(&p)
        } else if p.extension().is_some_and(|x| x == "rs") {
            e.metadata().ok().and_then(|m| m.modified().ok())
        } else {
            None
        };
        newest = newest.max(t);
    }
    newest
}

fn have(compiler: &str) -> bool {
    let found = Command::new(compiler)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        println!("SKIPPED: no `{compiler}` on this machine; the {compiler} example is not checked");
    }
    found
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn compile(cmd: &mut Command, what: &str) {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "compiling {what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The examples' checksum through the Rust API: FNV-1a 64 over the float bits of the pose at
/// every 1/60 s (clamped), rotations xyzw, then translations xyz, then scales xyz.
fn rust_checksum(bytes: &[u8]) -> (u32, u64) {
    let reader = ClipReader::new(bytes).unwrap();
    let frames = (reader.duration() * 60.0) as u32 + 1;
    let mut pose = Pose::new(reader.num_bones());
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: &[f32]| {
        for f in v {
            for byte in f.to_bits().to_le_bytes() {
                h ^= byte as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
    };
    for i in 0..frames {
        reader.sample_pose(i as f32 / 60.0, Looping::Clamp, &mut pose);
        for q in &pose.rotations {
            eat(&q.to_array());
        }
        for t in &pose.translations {
            eat(&t.to_array());
        }
        for s in &pose.scales {
            eat(&s.to_array());
        }
    }
    (frames, h)
}

/// The examples' character update through the Rust API (`blend_and_skin` in
/// `examples/c/play.c` and `examples/cpp/play.cpp`, step for step): `a` sampled skipping defaults onto its bind pose, `b`
/// half its length later, blended (weights moving from `a` to `b`, `b` weighted per bone; rest
/// pose `a`'s bind pose), local → object, palette (identity inverse binds), 4 vertices a bone
/// skinned to the bone and its parent. FNV-1a 64 of the skinned positions and normals.
fn rust_skinned_checksum(a: &[u8], b: &[u8]) -> u64 {
    let (a, b) = (ClipReader::new(a).unwrap(), ClipReader::new(b).unwrap());
    let n = a.num_bones();
    let frames = (a.duration() * 60.0) as u32 + 1;
    let parents: Vec<u32> = (0..n)
        .map(|i| a.skeleton().parent(i).map_or(NO_PARENT, |p| p as u32))
        .collect();
    let (mut pa, mut pb, mut rest) = (Pose::new(n), Pose::new(n), Pose::new(n));
    a.bind_pose_into(&mut pa);
    a.bind_pose_into(&mut rest);
    let (mut blended, mut object) = (Pose::new(n), Pose::new(n));
    let ib = vec![Mat4::IDENTITY; n];
    let mut palette = vec![Mat4::ZERO; n];
    let bone_w: Vec<f32> = (0..n).map(|j| if j % 2 == 1 { 1.0 } else { 0.5 }).collect();
    let (mut pos, mut nor, mut joints, mut weights) = (vec![], vec![], vec![], vec![]);
    for v in 0..n * 4 {
        let (bone, k) = (v / 4, v % 4);
        pos.push([k as f32, (bone % 7) as f32 * 0.5, -(k as f32) * 0.25]);
        let odd = k & 1 == 1;
        nor.push([f32::from(u8::from(odd)), f32::from(u8::from(!odd)), 0.0]);
        joints.extend([
            bone as u16,
            a.skeleton().parent(bone).unwrap_or(bone) as u16,
        ]);
        weights.extend([0.75f32, 0.25]);
    }
    let (mut out_pos, mut out_nor) = (vec![[0.0f32; 3]; n * 4], vec![[0.0f32; 3]; n * 4]);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for i in 0..frames {
        let (t, w) = (i as f32 / 60.0, i as f32 / frames as f32);
        a.sample_pose_with(t, Looping::Clamp, Defaults::Skip, &mut pa);
        b.sample_pose(t + 0.5 * b.duration(), Looping::Wrap, &mut pb);
        let layers = [
            BlendLayer {
                pose: PoseRef::from(&pa),
                weight: 1.0 - w,
                bone_weights: None,
            },
            BlendLayer {
                pose: PoseRef::from(&pb),
                weight: w,
                bone_weights: Some(&bone_w),
            },
        ];
        BlendJob {
            layers: &layers,
            additive: &[],
            rest: PoseRef::from(&rest),
            threshold: 0.1,
            out_rotations: &mut blended.rotations,
            out_translations: &mut blended.translations,
            out_scales: &mut blended.scales,
        }
        .run()
        .unwrap();
        LocalToObjectJob::new(
            &parents,
            PoseRef::from(&blended),
            &mut object.rotations,
            &mut object.translations,
            &mut object.scales,
        )
        .run()
        .unwrap();
        SkinningPaletteJob {
            object: PoseRef::from(&object),
            inverse_bind: &ib,
            joints: None,
            out: PaletteOut::Mat4(&mut palette),
        }
        .run()
        .unwrap();
        SkinJob {
            palette: &palette,
            influences: 2,
            joints: &joints,
            weights: &weights,
            positions: &pos,
            normals: &nor,
            out_positions: &mut out_pos,
            out_normals: &mut out_nor,
        }
        .run()
        .unwrap();
        for x in out_pos.iter().chain(&out_nor).flatten() {
            for byte in x.to_bits().to_le_bytes() {
                h ^= byte as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}

fn bundled(rel: &str) -> RawClip {
    let path = repo().join("assets/clips").join(rel);
    clipforge_anim::formats::load_clips(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .remove(0)
}

/// `.cfa` files: bundled clips (one with animated scale, one single frame), a generated one
/// at 30 Hz whose duration is not a multiple of 1/60 s, and another generated one of the same
/// skeleton (last: the example's second clip in the blend run).
fn make_clips(dir: &Path) -> Vec<PathBuf> {
    let clips = [
        ("walk_fast", bundled("locomotion/walk_fast.acl.sjson")),
        ("swing_scaled", bundled("combat/swing_scaled.acl.sjson")),
        ("single_frame", bundled("misc/pose_single_frame.acl.sjson")),
        (
            "generated",
            generate(&GenerateOptions {
                num_samples: 37,
                sample_rate: 30.0,
                with_scale: true,
                ..Default::default()
            }),
        ),
        (
            "generated_other",
            generate(&GenerateOptions {
                num_samples: 52,
                sample_rate: 30.0,
                with_scale: false,
                ..Default::default()
            }),
        ),
    ];
    clips
        .into_iter()
        .map(|(name, clip)| {
            let bytes = compress(&clip, &CompressionSettings::default())
                .unwrap()
                .bytes;
            let path = dir.join(format!("{name}.cfa"));
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect()
}

/// The checksum of the `skinned N vertices checksum H` line.
fn parse_skinned(stdout: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(stdout);
    let line = text.lines().find(|l| l.starts_with("skinned "))?;
    u64::from_str_radix(line.split_whitespace().nth(4)?, 16).ok()
}

/// (frames, checksum) from a `frames N checksum H` line.
fn parse(stdout: &[u8]) -> Option<(u32, u64)> {
    let text = String::from_utf8_lossy(stdout);
    let line = text.lines().find(|l| l.starts_with("frames "))?;
    let w: Vec<&str> = line.split_whitespace().collect();
    Some((
        w.get(1)?.parse().ok()?,
        u64::from_str_radix(w.get(3)?, 16).ok()?,
    ))
}

/// The example players, compiled into `dir`: C static and shared (with `cc`), C++ static (with
/// `c++`).
fn players(dir: &Path, cc: bool, cxx: bool) -> Vec<(&'static str, PathBuf)> {
    let root = repo();
    let include = root.join("crates/runtime-capi/include");
    let libs = lib_dir();
    let staticlib = libs.join("libclipforge_runtime_capi.a");
    let mut players: Vec<(&str, PathBuf)> = Vec::new();
    if cc {
        let exe = dir.join("play_c");
        compile(
            Command::new("cc")
                .args([
                    "-std=c99",
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                    "-pedantic",
                    "-O2",
                    "-I",
                ])
                .arg(&include)
                .arg(root.join("examples/c/play.c"))
                .arg(&staticlib)
                .args(NATIVE_LIBS)
                .arg("-o")
                .arg(&exe),
            "examples/c/play.c (static)",
        );
        players.push(("C, static", exe));
        let exe = dir.join("play_c_shared");
        compile(
            Command::new("cc")
                .args([
                    "-std=c99",
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                    "-pedantic",
                    "-O2",
                    "-I",
                ])
                .arg(&include)
                .arg(root.join("examples/c/play.c"))
                .arg("-L")
                .arg(&libs)
                .arg("-lclipforge_runtime_capi")
                .arg(format!("-Wl,-rpath,{}", libs.display()))
                .arg("-o")
                .arg(&exe),
            "examples/c/play.c (shared)",
        );
        players.push(("C, shared", exe));
    }
    if cxx {
        let exe = dir.join("play_cpp");
        compile(
            Command::new("c++")
                .args([
                    "-std=c++17",
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                    "-pedantic",
                    "-O2",
                    "-I",
                ])
                .arg(&include)
                .arg(root.join("examples/cpp/play.cpp"))
                .arg(&staticlib)
                .args(NATIVE_LIBS)
                .arg("-o")
                .arg(&exe),
            "examples/cpp/play.cpp (static)",
        );
        players.push(("C++, static", exe));
    }

    players
}

#[test]
fn examples_print_the_rust_api_checksum_and_fail_cleanly_on_bad_files() {
    let (cc, cxx) = (have("cc"), have("c++"));
    if !cc && !cxx {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let players = players(tmp.path(), cc, cxx);
    let clips = make_clips(tmp.path());
    // Each clip alone (blended with itself), then the two generated clips blended together.
    let (generated, other) = (&clips[clips.len() - 2], &clips[clips.len() - 1]);
    let runs: Vec<(&PathBuf, Option<&PathBuf>)> = clips
        .iter()
        .map(|c| (c, None))
        .chain([(generated, Some(other))])
        .collect();
    for (clip, second) in runs {
        let bytes = std::fs::read(clip).unwrap();
        let expected = rust_checksum(&bytes);
        let skinned =
            rust_skinned_checksum(&bytes, &std::fs::read(second.unwrap_or(clip)).unwrap());
        for (what, exe) in &players {
            let out = run(Command::new(exe).arg(clip).args(second));
            assert_eq!(
                parse_skinned(&out.stdout),
                Some(skinned),
                "{what} on {} {second:?}: printed\n{}{}",
                clip.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.status.success(),
                "{what} on {}: {}",
                clip.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                parse(&out.stdout),
                Some(expected),
                "{what} on {}: printed\n{}",
                clip.display(),
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }

    // Bad files: a flipped byte (the checksum catches it), half a file, a text file, no file.
    let good = std::fs::read(&clips[0]).unwrap();
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    let bad = [
        ("flipped.cfa", flipped, "checksum mismatch"),
        ("half.cfa", good[..good.len() / 2].to_vec(), "truncated"),
        ("text.cfa", b"not a clip at all\n".to_vec(), "bad magic"),
    ];
    for (name, bytes, message) in &bad {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        for (what, exe) in &players {
            let out = run(Command::new(exe).arg(&path));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what} on {name}: {stderr}");
            assert!(
                stderr.contains(message)
                    && stderr.contains(name)
                    && stderr.contains("cf_clip_create"),
                "{what} on {name}: expected {message:?} in\n{stderr}"
            );
            assert!(out.stdout.is_empty(), "{what} on {name} printed a checksum");
        }
    }
    for (what, exe) in &players {
        let out = run(Command::new(exe).arg(tmp.path().join("missing.cfa")));
        assert_eq!(out.status.code(), Some(1), "{what} on a missing file");
    }
}
