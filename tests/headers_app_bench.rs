//! Benchmark, ignored by default (driven by `scripts/headers_app_vs_cli.sh`): a clean header scan
//! through the app's path ([`HeadersJob`], the Headers tab's worker, polled as the UI polls it)
//! against the CLI (`clipforge headers ... --clean`, a process of its own), on the same tree
//! with the same flags, alternating, printing medians (wall, and CPU of the process / child) and
//! the app/CLI ratio (issue 12's target: within 1.2x). Speed is measured, never asserted.
//!
//! env: CF_BENCH_TREE (run from there), CF_BENCH_ARGS (the CLI's arguments after `headers`),
//! CF_BENCH_RUNS (default 5).
#![cfg(feature = "gui")]

use clipforge::gui::{HeadersProject, HeadersSettings, HeadersState};
use eframe::egui;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The tab's project for the CLI arguments `args` (roots, `-I`, `-D`, `--std`; others ignored).
fn tab_project(args: &[&str]) -> HeadersProject {
    let mut p = HeadersProject {
        roots: vec![],
        include_dirs: vec![],
        defines: String::new(),
        ..Default::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-I" => p.include_dirs.push(it.next().unwrap().to_string()),
            "-D" => p.defines.push_str(&format!("{}\n", it.next().unwrap())),
            "--std" => p.std = it.next().unwrap().to_string(),
            a if !a.starts_with('-') => p.roots.push(a.to_string()),
            _ => {}
        }
    }
    p
}

/// User + system CPU seconds of this process (`who` = RUSAGE_SELF) or its waited-for children.
fn cpu_s(who: i32) -> f64 {
    // SAFETY: getrusage fills the struct we own.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut u);
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
        t(u.ru_utime) + t(u.ru_stime)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
#[ignore = "benchmark: scripts/headers_app_vs_cli.sh"]
fn headers_tab_scan_vs_cli() {
    let (Ok(tree), Ok(args)) = (
        std::env::var("CF_BENCH_TREE"),
        std::env::var("CF_BENCH_ARGS"),
    ) else {
        eprintln!("set CF_BENCH_TREE and CF_BENCH_ARGS (see scripts/headers_app_vs_cli.sh)");
        return;
    };
    let runs: usize = std::env::var("CF_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let work = tempfile::tempdir().unwrap();
    // The tab's disk cache goes to the user cache dir: a fresh one here.
    // SAFETY: set before this test starts any thread.
    unsafe { std::env::set_var("XDG_CACHE_HOME", work.path()) };
    std::env::set_current_dir(&tree).unwrap();
    let args: Vec<&str> = args.split_whitespace().collect();
    let mut settings = HeadersSettings {
        project: tab_project(&args),
        ..Default::default()
    };
    let ctx = egui::Context::default();
    let mut tab = HeadersState::default();
    let cli_cache = work.path().join("cli.cache");
    let (mut app_wall, mut app_cpu, mut cli_wall, mut cli_cpu) = (vec![], vec![], vec![], vec![]);
    for run in 0..runs + 1 {
        // The app: "Clean rescan", then the tab polled as the UI polls it every frame (the
        // worker asks for a repaint when it is done, so the next frame sees the result).
        let c0 = cpu_s(libc::RUSAGE_SELF);
        let t0 = Instant::now();
        tab.start_scan(&settings, true);
        assert!(tab.job.is_some(), "{:?}", tab.error);
        while tab.job.is_some() {
            std::thread::sleep(Duration::from_millis(2));
            tab.poll(&mut settings, &ctx);
        }
        let wall = t0.elapsed().as_secs_f64();
        let cpu = cpu_s(libc::RUSAGE_SELF) - c0;
        let o = tab
            .outcome
            .as_ref()
            .unwrap_or_else(|| panic!("{:?}", tab.error));
        assert!(o.preprocessed.is_some() && o.all_branches.is_some());

        // The CLI, as a user runs it.
        let c1 = cpu_s(libc::RUSAGE_CHILDREN);
        let t1 = Instant::now();
        let st = Command::new(env!("CARGO_BIN_EXE_clipforge"))
            .arg("headers")
            .args(&args)
            .args(["--clean", "-q", "--cache"])
            .arg(&cli_cache)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        let cwall = t1.elapsed().as_secs_f64();
        let ccpu = cpu_s(libc::RUSAGE_CHILDREN) - c1;
        // Run 0 warms the page cache for both.
        if run > 0 {
            app_wall.push(wall);
            app_cpu.push(cpu);
            cli_wall.push(cwall);
            cli_cpu.push(ccpu);
        }
        eprintln!(
            "run {run}: app {wall:.3} s ({cpu:.3} s CPU), cli {cwall:.3} s ({ccpu:.3} s CPU)"
        );
    }
    let (aw, ac, cw, cc) = (
        median(app_wall),
        median(app_cpu),
        median(cli_wall),
        median(cli_cpu),
    );
    println!(
        "clean scan, {runs} runs, medians: app (HeadersJob) {aw:.3} s wall / {ac:.3} s CPU, \
         CLI {cw:.3} s wall / {cc:.3} s CPU; app/CLI {:.2}x wall, {:.2}x CPU",
        aw / cw,
        ac / cc
    );
}
