//! Replays every input the fuzzers saved (`fuzz/regressions/<target>/`) and every committed seed
//! (`fuzz/seeds/<target>/`) through the fuzz targets' own entry points (`fuzz/src/entries.rs`,
//! included here), so each crash found stays a regression test of the main crate.
//!
//! A test binary of its own, beside `tests/it/`: the fuzz entry points set process-wide knobs
//! meant for a fuzz process (e.g. `headers::eval::set_tu_inclusion_budget`, a small per-TU
//! budget), which would cut the real-size scans of the other tests if they shared a process.
//!
//! Inputs whose fix is still pending on another branch are listed in `fuzz/regressions/OPEN`
//! (one `target/file` a line); they are replayed by the ignored test below until the fix lands
//! and the line is removed (docs/RELIABILITY.md).

#[path = "../fuzz/src/entries.rs"]
mod entries;

use std::path::{Path, PathBuf};

/// One saved input: target name, its entry point, file name, path.
type Input = (&'static str, entries::Entry, String, PathBuf);

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

fn open_list() -> Vec<String> {
    std::fs::read_to_string(fuzz_dir().join("regressions/OPEN"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// (target, input file name, path) of every input under `fuzz/<folder>/<target>/`; notes
/// (`*.txt`, `*.md`) are not inputs.
fn inputs(folder: &str) -> Vec<Input> {
    let mut out = Vec::new();
    for &(target, entry) in entries::TARGETS {
        let dir = fuzz_dir().join(folder).join(target);
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for p in files {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".txt") || name.ends_with(".md") || !p.is_file() {
                continue;
            }
            out.push((target, entry, name, p));
        }
    }
    out
}

/// Caps this test process's address space at 4 GiB (the mutant sweep's limit): an input that
/// still blows memory up (an open regression replayed before its fix) then fails this test
/// binary with an allocation failure instead of taking the machine's memory.
fn cap_memory() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let lim = libc::rlimit {
                rlim_cur: 4 << 30,
                rlim_max: 4 << 30,
            };
            // SAFETY: setrlimit reads the struct only.
            unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) };
        });
    }
}

/// Runs each input on a thread with a generous stack: the fuzz binaries run on the main
/// thread (8 MiB), test threads get 2 MiB by default.
fn replay(list: &[Input]) {
    cap_memory();
    let mut failed = Vec::new();
    for (target, entry, name, path) in list {
        let bytes = std::fs::read(path).unwrap();
        let entry = *entry;
        let r = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || entry(&bytes))
            .unwrap()
            .join();
        if r.is_err() {
            failed.push(format!("{target}/{name}"));
        }
    }
    assert!(failed.is_empty(), "fuzz inputs failed: {failed:?}");
}

#[test]
fn seeds_run_through_every_target() {
    let seeds = inputs("seeds");
    for &(target, _) in entries::TARGETS {
        assert!(
            seeds.iter().any(|s| s.0 == target),
            "no committed seed for fuzz target {target}"
        );
    }
    replay(&seeds);
}

/// The committed `.cfa` seeds start the fuzzer inside every optional part of the format: an
/// additive layer (flags bits 2-3), reference rotations (bit 4, and bit 6's 3-byte layout),
/// per-bone precisions (bit 5) and the settings record (bit 7),
/// which compressing the plain sample clips at run time never makes.
#[test]
fn committed_cfa_seeds_cover_every_optional_section() {
    use clipforge::anim::runtime::format::{
        FLAG_ADDITIVE_MASK, FLAG_BONE_PRECISIONS, FLAG_COMPACT_REFERENCES,
        FLAG_ROTATION_REFERENCES, FLAG_SETTINGS,
    };
    let seeds: Vec<u16> = inputs("seeds")
        .iter()
        .filter(|s| s.0 == "cfa")
        .map(|s| {
            let b = std::fs::read(&s.3).unwrap();
            assert_eq!(&b[..4], b"CFA1", "{}", s.2);
            // The flags: u16 at offset 6 (docs/FORMAT.md).
            u16::from_le_bytes([b[6], b[7]])
        })
        .collect();
    for (flag, what) in [
        (FLAG_ADDITIVE_MASK, "an additive layer"),
        (FLAG_ROTATION_REFERENCES, "reference rotations"),
        (FLAG_BONE_PRECISIONS, "per-bone precisions"),
        (FLAG_COMPACT_REFERENCES, "3-byte reference rotations"),
        (FLAG_SETTINGS, "a settings record"),
    ] {
        assert!(
            seeds.iter().any(|f| f & flag != 0),
            "no committed .cfa seed has {what} (flags {seeds:?})"
        );
    }
}

#[test]
fn fixed_regressions_stay_fixed() {
    let open = open_list();
    let all = inputs("regressions");
    for o in &open {
        assert!(
            all.iter().any(|(t, _, n, _)| &format!("{t}/{n}") == o),
            "fuzz/regressions/OPEN names {o}, which is not a saved input"
        );
    }
    for (t, _, n, p) in &all {
        assert!(
            p.with_file_name(format!("{n}.txt")).is_file(),
            "regression input {t}/{n} has no note ({n}.txt: what it is, where it failed)"
        );
    }
    let list: Vec<_> = inputs("regressions")
        .into_iter()
        .filter(|(t, _, n, _)| !open.contains(&format!("{t}/{n}")))
        .collect();
    replay(&list);
}

#[test]
#[ignore = "inputs whose fix is pending on another branch (fuzz/regressions/OPEN)"]
fn open_regressions() {
    let open = open_list();
    let list: Vec<_> = inputs("regressions")
        .into_iter()
        .filter(|(t, _, n, _)| open.contains(&format!("{t}/{n}")))
        .collect();
    // Nothing open: every saved input replays in `fixed_regressions_stay_fixed`.
    if list.is_empty() {
        return;
    }
    replay(&list);
}

#[test]
fn cfa_fix_up_gets_a_mutated_buffer_past_the_checksum() {
    // The structure-aware mutator relies on it: a byte changed in a real .cfa is refused by the
    // checksum; after the fix-up the reader gets past the checksum and judges the content.
    use clipforge::anim::generate::{GenerateOptions, generate};
    use clipforge::anim::runtime::FormatError;
    use clipforge::anim::{ClipReader, CompressionSettings, compress};
    let clip = generate(&GenerateOptions {
        num_samples: 20,
        ..Default::default()
    });
    let mut buf = compress(&clip, &CompressionSettings::default())
        .unwrap()
        .bytes;
    entries::cfa(&buf);
    // Bones count (bytes 20..22) set to 0xFFFF: the content is now wrong.
    buf[20] = 0xff;
    buf[21] = 0xff;
    assert!(matches!(
        ClipReader::new(&buf),
        Err(FormatError::ChecksumMismatch { .. })
    ));
    entries::cfa_fix_up(&mut buf);
    match ClipReader::new(&buf) {
        Err(FormatError::ChecksumMismatch { .. }) => panic!("fix-up left the checksum wrong"),
        Err(_) => {}
        Ok(_) => panic!("a .cfa claiming 65535 bones was accepted"),
    }
    // A grown buffer: the size field follows the length.
    buf.extend_from_slice(&[0; 8]);
    entries::cfa_fix_up(&mut buf);
    assert_eq!(
        u32::from_le_bytes(buf[12..16].try_into().unwrap()) as usize,
        buf.len()
    );
    assert!(!matches!(
        ClipReader::new(&buf),
        Err(FormatError::ChecksumMismatch { .. })
    ));
}
