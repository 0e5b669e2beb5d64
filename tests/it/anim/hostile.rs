//! Hostile clip input through the binary (issue 10, the animation side): the memory cases run
//! the real binary under an address-space limit (`ulimit -v`), so an allocation of gigabytes
//! would fail the test with an abort instead of passing; special files; no panic text from
//! dependencies reaches the user. The library-level cases are `clipforge-anim`'s `hostile` tests.

use crate::common;
use crate::common::hostile_inputs::*;

use clipforge::anim::{formats, limits};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn clipforge() -> Command {
    common::clipforge()
}

/// Runs the binary with `args` under a 2 GiB address-space limit and a 60 s deadline; a hang
/// fails the test (the child is killed) instead of blocking the suite.
fn run_limited(args: &[&str]) -> Output {
    let mut script = String::from("ulimit -v 2097152; exec \"$0\"");
    for i in 1..=args.len() {
        script.push_str(&format!(" \"${i}\""));
    }
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(common::BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "clipforge {args:?} hung; stderr: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A refusal: exit code 1 (not a signal, not success), no panic text, and `needle` on stderr.
fn assert_refused(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(needle), "expected '{needle}' in: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace") && !err.contains("RUST_BACKTRACE"),
        "panic text reached the user: {err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Budgets

#[test]
fn memory_bombs_through_the_binary_stay_under_an_address_space_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("one.acl.sjson"), SJSON_HUGE_ONE_BONE).unwrap();
    std::fs::write(d.join("zero.acl.sjson"), SJSON_ZERO_BONES).unwrap();
    let (far, _) = chain_gltf(&[0.0, 1.6e6], 1, &[0], 1, None);
    std::fs::write(d.join("far.gltf"), far).unwrap();
    let (forty, _) = chain_gltf(&[0.0, 5000.0], 1, &[0], 40, None);
    std::fs::write(d.join("forty.gltf"), forty).unwrap();
    for name in ["one.acl.sjson", "zero.acl.sjson", "far.gltf", "forty.gltf"] {
        let out = d.join(format!("{name}.out.acl.sjson"));
        let o = run_limited(&["convert", s(&d.join(name)), "-o", s(&out)]);
        assert_refused(&o, limits::OVER_BUDGET);
        assert!(!out.exists());
    }
    // A batch: every bomb refused, the process survives to the end (exit 1: some clips failed).
    let o = run_limited(&["compress", s(d), "-o", s(&d.join("out"))]);
    assert_refused(&o, limits::OVER_BUDGET);
}

// ---------------------------------------------------------------------------------------------
// Special files

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success());
}

#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("x.bvh");
    mkfifo(&fifo);
    let e = formats::load_clips(&fifo).unwrap_err();
    assert!(e.message.contains("FIFO"), "{e}");
    let o = run_limited(&["convert", s(&fifo), "-o", s(&d.join("o.acl.sjson"))]);
    assert_refused(&o, "FIFO");
    let cfa = d.join("x.cfa");
    mkfifo(&cfa);
    let e = clipforge::anim::limits::read_cfa_file(&cfa).unwrap_err();
    assert!(e.to_string().contains("FIFO"), "{e}");
    let e = clipforge::anim::limits::read_cfa_file(Path::new("/dev/zero")).unwrap_err();
    assert!(e.to_string().contains("character device"), "{e}");

    // glTF buffers: a FIFO next to the file, /dev/stdin, /dev/zero.
    mkfifo(&d.join("pipe.bin"));
    for (uri, needle) in [
        ("pipe.bin", "FIFO"),
        ("/dev/stdin", "relative path"),
        ("/dev/zero", "relative path"),
    ] {
        let (json, _) = chain_gltf(&[0.0, 1.0, 2.0], 2, &[1], 1, Some(uri));
        let g = d.join("fifo-buffer.gltf");
        std::fs::write(&g, json).unwrap();
        let e = formats::load_clips(&g).unwrap_err();
        assert!(e.message.contains(needle), "{uri}: {e}");
        let o = run_limited(&["convert", s(&g), "-o", s(&d.join("o.acl.sjson"))]);
        assert_refused(&o, needle);
    }
}

// ---------------------------------------------------------------------------------------------
// Panics of the gltf crate

#[test]
fn gltf_channels_the_crate_would_panic_on_are_plain_errors() {
    let (json, _) = chain_gltf(&[0.0, 1.0, 2.0], 2, &[1], 1, None);
    let bad_node = json.replace(r#""node":1"#, r#""node":99"#);
    let e = load_text(&bad_node, "node.gltf").unwrap_err();
    assert!(e.message.contains("target node 99 does not exist"), "{e}");
    let bad_path = json.replace(r#""path":"rotation""#, r#""path":"colour""#);
    let e = load_text(&bad_path, "path.gltf").unwrap_err();
    assert!(e.message.contains("invalid target path"), "{e}");
    // Accessors whose extent the crate computes with unchecked arithmetic.
    let huge = json.replacen(r#""count":3"#, r#""count":4000000000"#, 1);
    let e = load_text(&huge, "count.gltf").unwrap_err();
    assert!(!e.message.is_empty());
    let zero = json.replacen(r#""count":3"#, r#""count":0"#, 1);
    assert!(load_text(&zero, "zero.gltf").is_err());
    // Rotations of u32 components: the crate's reader reaches `unreachable!()`.
    let u32_rot = json.replace(
        r#""componentType":5126,"count":3,"type":"VEC4""#,
        r#""componentType":5125,"count":3,"type":"VEC4""#,
    );
    assert_ne!(u32_rot, json);
    let e = load_text(&u32_rot, "u32.gltf").unwrap_err();
    assert!(e.message.contains("not allowed for Rotation"), "{e}");

    // Through the binary: one plain error line, no panic text or backtrace.
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("node.gltf", &bad_node),
        ("path.gltf", &bad_path),
        ("count.gltf", &huge),
        ("u32.gltf", &u32_rot),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let o = clipforge()
            .env("RUST_BACKTRACE", "1")
            .args(["convert", s(&p), "-o", s(&dir.path().join("o.acl.sjson"))])
            .output()
            .unwrap();
        assert_refused(&o, name);
    }
}
