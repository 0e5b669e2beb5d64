//! The `capi` fuzz target's inputs, replayed through its own entry point
//! (`fuzz/src/capi_entry.rs`, included here): every committed seed (`fuzz/seeds/capi/`) and
//! saved crash (`fuzz/regressions/capi/`, each with a `.txt` note), strict contract checks on.
//! The main crate's `tests/fuzz_regressions.rs` replays the other targets; this crate is the
//! one that links the C API.
//!
//! The seed program is also built afresh around clips compressed now, and must reach the valid
//! paths (readers created, poses sampled, freed handles refused), so the target keeps testing
//! sampling whatever the format version. `CLIPFORGE_UPDATE_SEEDS=1` rewrites the committed seed.
//!
//! One test function: the entry checks that handles it never created are refused, which another
//! test creating clips on another thread of this binary could contradict.

#[path = "../../../fuzz/src/capi_entry.rs"]
mod capi_entry;

mod common;

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn inputs(folder: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(fuzz_dir().join(folder).join("capi")) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file() && !matches!(p.extension().and_then(|e| e.to_str()), Some("txt" | "md"))
        })
        .collect();
    v.sort();
    v
}

/// Runs an input on a thread with the fuzz binaries' 8 MiB main-thread stack.
fn replay(bytes: Vec<u8>) -> capi_entry::Stats {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || capi_entry::run(&bytes))
        .unwrap()
        .join()
        .unwrap_or_else(|_| panic!("input failed"))
}

fn fresh_seed() -> Vec<u8> {
    capi_entry::seed_program(&common::cfa(31), &common::cfs())
}

#[test]
fn capi_seeds_and_regressions_replay_and_the_seed_reaches_every_path() {
    let fresh = fresh_seed();
    assert!(
        fresh.len() < 65536,
        "the seed must fit the target's -max_len"
    );
    let seed_path = fuzz_dir().join("seeds/capi/tour.bin");
    if std::env::var_os("CLIPFORGE_UPDATE_SEEDS").is_some() {
        std::fs::create_dir_all(seed_path.parent().unwrap()).unwrap();
        let tmp = seed_path.with_extension("tmp");
        std::fs::write(&tmp, &fresh).unwrap();
        std::fs::rename(&tmp, &seed_path).unwrap();
    }
    let stats = replay(fresh);
    assert!(
        stats.clips_created >= 1
            && stats.scalars_created >= 1
            && stats.samples_ok >= 4
            && stats.stale_refused >= 4
            && stats.jobs_ok >= 5
            && stats.samplers_created >= 1
            && stats.sampler_samples_ok >= 8,
        "the seed program no longer reaches the valid paths: {stats:?}"
    );

    let seeds = inputs("seeds");
    assert!(!seeds.is_empty(), "no committed seed for fuzz target capi");
    for p in seeds {
        println!(
            "seed {}: {:?}",
            p.display(),
            replay(std::fs::read(&p).unwrap())
        );
    }
    for p in inputs("regressions") {
        assert!(
            p.with_file_name(format!("{}.txt", p.file_name().unwrap().to_string_lossy()))
                .is_file(),
            "regression input {} has no note",
            p.display()
        );
        replay(std::fs::read(&p).unwrap());
    }
}
