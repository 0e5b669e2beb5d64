//! One cancellation token ([`clipforge::task::CancelToken`]) stops every kind of job: a clip
//! batch, a header scan and a header watch (pipelines' watches: tests/it/pipeline/watch.rs, `stop()`).

use clipforge::anim::CompressionSettings;
use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::headers::{self, CompilerChoice, Mode, Project, ScanOptions, Scanner};
use clipforge::pipeline::{self, BatchOptions};
use clipforge::task::CancelToken;
use std::path::Path;
use std::time::{Duration, Instant};

fn write(root: &Path, rel: &str, text: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn header_tree(r: &Path) -> Project {
    write(r, "src/a.cpp", b"#include \"x.h\"\n");
    write(r, "src/x.h", "int a;\n".repeat(50).as_bytes());
    Project {
        roots: vec![r.join("src")],
        compiler: CompilerChoice::None,
        ..Default::default()
    }
}

fn scan_opts() -> ScanOptions {
    ScanOptions {
        mode: Mode::Preprocessed,
        use_disk_cache: false,
        ..Default::default()
    }
}

#[test]
fn a_cancelled_token_stops_a_batch_and_a_header_scan() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in");
    for seed in 0..4 {
        let clip = generate(&GenerateOptions {
            name: format!("c{seed}"),
            num_samples: 20,
            sample_rate: 30.0,
            seed,
            with_scale: false,
        });
        write(
            &input,
            &format!("c{seed}.acl.sjson"),
            write_acl_clip(&clip).as_bytes(),
        );
    }
    let token = CancelToken::new();
    let batch_progress = pipeline::Progress::with_cancel(token.clone());
    let scan_progress = headers::Progress::with_cancel(token.clone());
    token.cancel();

    let out = d.path().join("out");
    let files = pipeline::scan(&input);
    assert_eq!(files.len(), 4);
    let opts = BatchOptions {
        settings: CompressionSettings::default(),
        output_root: out.clone(),
        jobs: 1,
        use_skip_cache: true,
    };
    let report = pipeline::run_batch(
        &files,
        &opts,
        &batch_progress,
        &batch_progress.cancel_token(),
    );
    assert_eq!(report.totals.cancelled, 4, "{:?}", report.totals);
    assert_eq!(batch_progress.done_total(), (4, 4));
    let written = walkdir::WalkDir::new(&out)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().to_string_lossy().ends_with(".cfa"))
        .count();
    assert_eq!(written, 0, "a cancelled batch writes no clip");

    let e = headers::scan(
        &header_tree(&d.path().join("h")),
        &scan_opts(),
        &scan_progress,
    )
    .err()
    .expect("a cancelled scan fails");
    assert_eq!(e, headers::ScanError::Cancelled);
}

#[test]
fn cancelling_stops_a_header_watch_while_it_waits() {
    let d = tempfile::tempdir().unwrap();
    let p = header_tree(d.path());
    let token = CancelToken::new();
    let t2 = token.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let watch = std::thread::spawn(move || {
        let mut s = Scanner::new();
        headers::watch::watch(&p, &scan_opts(), &mut s, &t2, |res| {
            let _ = tx.send(res.map(|r| r.primary.total_parsed));
            true
        })
    });
    let first = rx.recv_timeout(Duration::from_secs(30)).unwrap().unwrap();
    assert_eq!(first, 51);
    let t = Instant::now();
    token.cancel();
    watch.join().unwrap().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "the watch took {:?} to stop",
        t.elapsed()
    );
}
