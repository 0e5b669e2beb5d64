//! Header profiler benchmark (not a timed test): cold scan, warm rescan with nothing changed,
//! rescan after touching one header, and `g++ -M` over the same translation units.
//!
//! Tree: a copy of `/usr/include/boost` (apt `libboost-dev`) used as a project (`-I <copy>`),
//! with one translation unit per top-level `boost/*.hpp` — the biggest real tree on these
//! machines. Override with `CLIPFORGE_HEADERS_BENCH_TREE=/path/to/tree` (TUs found under it; set
//! `CLIPFORGE_HEADERS_BENCH_INC` to a `:`-separated include list and
//! `CLIPFORGE_HEADERS_BENCH_TOUCH` to the header to modify). `CLIPFORGE_HEADERS_BENCH_GXX=0`
//! skips the `g++ -M` pass. Scans go through the disk cache exactly as the CLI does (a fresh
//! process would: new `Scanner`, cache loaded from disk).
//!
//! Run: `cargo bench --no-default-features --bench headers`

use clipforge::headers::{self, CompilerChoice, Mode, Progress, Project, ScanOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn copy_dir(src: &Path, dst: &Path) {
    let st = Command::new("cp")
        .arg("-r")
        .arg(src)
        .arg(dst)
        .status()
        .expect("cp");
    assert!(st.success());
}

fn main() {
    // `cargo bench` passes --bench; ignore arguments.
    let tmp = tempfile::tempdir().unwrap();
    let (root, inc, touch): (PathBuf, Vec<PathBuf>, PathBuf) = match std::env::var_os(
        "CLIPFORGE_HEADERS_BENCH_TREE",
    ) {
        Some(t) => {
            let t = PathBuf::from(t);
            let inc = std::env::var("CLIPFORGE_HEADERS_BENCH_INC")
                .map(|s| s.split(':').map(PathBuf::from).collect())
                .unwrap_or_else(|_| vec![t.clone()]);
            let touch = PathBuf::from(
                std::env::var("CLIPFORGE_HEADERS_BENCH_TOUCH")
                    .expect("CLIPFORGE_HEADERS_BENCH_TOUCH"),
            );
            (t, inc, touch)
        }
        None => {
            let boost = Path::new("/usr/include/boost");
            if !boost.is_dir() {
                eprintln!(
                    "skipped: /usr/include/boost not found (apt-get install libboost-dev) and CLIPFORGE_HEADERS_BENCH_TREE unset"
                );
                return;
            }
            let root = tmp.path().join("tree");
            std::fs::create_dir_all(root.join("inc")).unwrap();
            copy_dir(boost, &root.join("inc/boost"));
            let mut names: Vec<String> = std::fs::read_dir(boost)
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".hpp"))
                .collect();
            names.sort();
            std::fs::create_dir_all(root.join("src")).unwrap();
            for n in &names {
                std::fs::write(
                    root.join("src")
                        .join(format!("tu_{}.cpp", n.replace('.', "_"))),
                    format!("#include <boost/{n}>\n"),
                )
                .unwrap();
            }
            let inc = vec![root.join("inc")];
            (root, inc, tmp.path().join("tree/inc/boost/config.hpp"))
        }
    };
    let project = Project {
        roots: vec![root.clone()],
        include_dirs: inc.clone(),
        std: Some("c++20".into()),
        compiler: CompilerChoice::Auto,
        cache_file: Some(tmp.path().join("bench.cache")),
        ..Default::default()
    };
    let opts = ScanOptions {
        mode: Mode::Preprocessed,
        ..Default::default()
    };
    let time = |label: &str, o: &ScanOptions| {
        let t = Instant::now();
        let r = headers::scan(&project, o, &Progress::default()).expect("scan");
        let s = t.elapsed().as_secs_f64();
        let p = &r.primary;
        println!(
            "{label:<28} {s:>8.3} s   files {:>6}  TUs {:>5}  total parsed {:>11}  (read {}, TUs evaluated {}, reused {})",
            p.files,
            p.translation_units,
            p.total_parsed,
            p.stats.files_read,
            p.stats.tus_evaluated,
            p.stats.tus_reused
        );
        (s, r)
    };
    println!("tree: {} (include dirs {:?})", root.display(), inc);
    let (cold, r) = time(
        "cold scan (--clean)",
        &ScanOptions {
            clean: true,
            ..opts.clone()
        },
    );
    let tus: Vec<String> = r
        .primary
        .graph
        .tus
        .iter()
        .map(|t| {
            r.primary.graph.nodes[t.node as usize]
                .abs
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let (warm, _) = time("warm rescan, no change", &opts);
    let mut text = std::fs::read(&touch).expect("touch file");
    text.extend_from_slice(b"\n// touched by the benchmark\n");
    std::fs::write(&touch, &text).unwrap();
    let (touched, _) = time("rescan, one header touched", &opts);
    // Touch with an include change: the TUs reaching it are re-preprocessed.
    text.extend_from_slice(b"#include <boost/config/detail/select_compiler_config.hpp>\n");
    std::fs::write(&touch, &text).unwrap();
    let (touched_inc, _) = time("rescan, one #include added", &opts);
    println!(
        "warm/cold {:.1}%  touched/cold {:.1}%  include-changed/cold {:.1}%",
        100.0 * warm / cold,
        100.0 * touched / cold,
        100.0 * touched_inc / cold
    );
    if std::env::var("CLIPFORGE_HEADERS_BENCH_GXX").as_deref() == Ok("0")
        || Command::new("g++").arg("--version").output().is_err()
    {
        return;
    }
    // g++ -M on the same TUs, 2 workers (as ../shared/tools/headers/gt.py).
    let t = Instant::now();
    let incs: Vec<String> = inc.iter().map(|d| format!("-I{}", d.display())).collect();
    let chunks: Vec<Vec<String>> = (0..2)
        .map(|k| tus.iter().skip(k).step_by(2).cloned().collect())
        .collect();
    std::thread::scope(|s| {
        for c in &chunks {
            let incs = &incs;
            s.spawn(move || {
                for tu in c {
                    let _ = Command::new("g++")
                        .args(["-std=c++20", "-M", "-MG"])
                        .args(incs)
                        .arg(tu)
                        .output();
                }
            });
        }
    });
    let g = t.elapsed().as_secs_f64();
    println!(
        "{:<28} {g:>8.3} s   ({} TUs, 2 workers)",
        "g++ -M -MG",
        tus.len()
    );
    println!("cold scan speed-up vs g++ -M: {:.0}x", g / cold);
}
