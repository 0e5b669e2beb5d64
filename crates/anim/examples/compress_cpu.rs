//! Compression time of `compress()` alone, per clip, in thread CPU time: the ClipForge side of
//! `scripts/bench_compress_vs_acl.sh`, the counterpart of ACL's `acl_bench --cpu-tsv`. Thread CPU
//! time, not wall time, because the benchmark machine is shared (a wall clock counts other
//! jobs' time slices). Loading and parsing are outside the timed call; the float64 check is
//! inside (it is part of `compress()`).
//!
//!     compress_cpu [--rounds N] [--threshold-cm CM] [--hash] [--out DIR] CLIP...
//!
//! Prints `clip\tbytes\tcpu_ms` (median over N rounds, default 1; 4 decimals) per clip: the clip's file name
//! without `.acl.sjson` / `.bvh`; for a file with several clips, the first. `--hash` adds a
//! column with a 64-bit FNV-1a hash of the whole `.cfa` (to check that a change to the
//! compressor leaves its outputs byte-identical). `--out DIR` also writes each clip's `.cfa` there
//! (`NAME.cfa`, for `scripts/cfa_breakdown.py`).

use clipforge_anim::{CompressionSettings, compress, formats::load_clips};
use std::process::ExitCode;

#[cfg(unix)]
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 * 1e-6
}

#[cfg(not(unix))]
fn thread_cpu_ms() -> f64 {
    // No thread clock: wall time (only meaningful on a quiet machine).
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
        * 1e3
}

fn main() -> ExitCode {
    let mut rounds = 1usize;
    let mut threshold = 0.01f32;
    let mut hash = false;
    let mut out_dir: Option<std::path::PathBuf> = None;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => match args.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(n) if n > 0 => rounds = n,
                _ => return usage("--rounds needs a positive integer"),
            },
            "--threshold-cm" => match args.next().and_then(|v| v.parse::<f32>().ok()) {
                Some(t) if t > 0.0 => threshold = t,
                _ => return usage("--threshold-cm needs a positive number"),
            },
            "--hash" => hash = true,
            "--out" => match args.next() {
                Some(d) => out_dir = Some(d.into()),
                None => return usage("--out needs a folder"),
            },
            "-h" | "--help" => return usage(""),
            _ => files.push(a),
        }
    }
    if files.is_empty() {
        return usage("no clips");
    }
    let settings = CompressionSettings {
        error_threshold: threshold,
        ..Default::default()
    };
    println!("clip\tbytes\tcpu_ms{}", if hash { "\tfnv1a" } else { "" });
    let mut status = ExitCode::SUCCESS;
    for f in &files {
        let name = std::path::Path::new(f)
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let name = name
            .trim_end_matches(".acl.sjson")
            .trim_end_matches(".bvh")
            .to_string();
        let clip = match load_clips(std::path::Path::new(f)) {
            Ok(mut c) if !c.is_empty() => c.remove(0),
            Ok(_) => {
                eprintln!("compress_cpu: {f}: no clip");
                continue;
            }
            Err(e) => {
                eprintln!("compress_cpu: {f}: {e}");
                status = ExitCode::from(3);
                continue;
            }
        };
        let mut times = Vec::with_capacity(rounds);
        let mut bytes = 0;
        let mut digest = 0xcbf2_9ce4_8422_2325u64;
        let mut last: Vec<u8> = Vec::new();
        for _ in 0..rounds {
            let t0 = thread_cpu_ms();
            let r = compress(&clip, &settings);
            let t1 = thread_cpu_ms();
            match r {
                Ok(c) => {
                    bytes = c.runtime_bytes;
                    if out_dir.is_some() {
                        last = c.bytes.clone();
                    }
                    digest = c.bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
                    });
                }
                Err(e) => {
                    eprintln!("compress_cpu: {f}: {e}");
                    status = ExitCode::from(3);
                    break;
                }
            }
            times.push(t1 - t0);
        }
        if let Some(d) = &out_dir
            && times.len() == rounds
            && let Err(e) = std::fs::write(d.join(format!("{name}.cfa")), &last)
        {
            eprintln!("compress_cpu: {}: {e}", d.display());
            status = ExitCode::from(3);
        }
        if times.len() == rounds {
            times.sort_by(f64::total_cmp);
            let median = times[rounds / 2];
            if hash {
                println!("{name}\t{bytes}\t{median:.4}\t{digest:016x}");
            } else {
                println!("{name}\t{bytes}\t{median:.4}");
            }
        }
    }
    status
}

fn usage(problem: &str) -> ExitCode {
    if !problem.is_empty() {
        eprintln!("compress_cpu: {problem}");
    }
    eprintln!("usage: compress_cpu [--rounds N] [--threshold-cm CM] [--hash] [--out DIR] CLIP...");
    if problem.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}
