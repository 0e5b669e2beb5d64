//! Benchmark (`cargo bench --bench headers_app`, driven by `scripts/headers_app_vs_cli.sh`): a clean header scan
//! through the app's path ([`HeadersJob`], the Headers tab's worker, polled as the UI polls it)
//! against the CLI (`clipforge headers ... --clean`, a process of its own), on the same tree
//! with the same flags, alternating, printing medians (wall, and CPU of the process / child) and
//! the app/CLI ratio (issue 12's target: within 1.2x). Speed is measured, never asserted.
//!
//! A second one measures the UI while the tab rescans: frame time and the UI thread's CPU with
//! frames paced as an unthrottled UI (an animated widget asks for a repaint every frame), at
//! 60 Hz, and every 50 ms (what the app asks for while a scan runs), and the scan's wall time
//! under each (egui_kittest frames: layout and tessellation, no GPU).
//!
//! env: CF_BENCH_TREE (run from there), CF_BENCH_ARGS (the CLI's arguments after `headers`),
//! CF_BENCH_RUNS (default 5).

use clipforge::gui::{AppState, HeadersProject, HeadersSettings, HeadersState, Persisted, Tab};
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};
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

/// The benchmark's tree, CLI arguments and run count from the environment (`None`: not set,
/// said on stderr); runs from the tree with a fresh user cache dir (the tab's disk cache goes
/// there), kept alive by the returned folder.
fn bench_setup() -> Option<(String, usize, tempfile::TempDir)> {
    let (Ok(tree), Ok(args)) = (
        std::env::var("CF_BENCH_TREE"),
        std::env::var("CF_BENCH_ARGS"),
    ) else {
        eprintln!("set CF_BENCH_TREE and CF_BENCH_ARGS (see scripts/headers_app_vs_cli.sh)");
        return None;
    };
    let runs: usize = std::env::var("CF_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let work = tempfile::tempdir().unwrap();
    // SAFETY: set before the test starts any thread.
    unsafe { std::env::set_var("XDG_CACHE_HOME", work.path()) };
    std::env::set_current_dir(&tree).unwrap();
    Some((args, runs, work))
}

fn headers_tab_scan_vs_cli() {
    let Some((args, runs, work)) = bench_setup() else {
        return;
    };
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

/// CPU time of the calling thread, in ms.
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the struct we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 * 1e-6
}

fn pct(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

fn ui_frames_during_a_header_rescan() {
    let Some((args, runs, work)) = bench_setup() else {
        return;
    };
    let args: Vec<&str> = args.split_whitespace().collect();
    let state = AppState::new(Persisted {
        input_dir: String::new(),
        tab: Tab::Headers,
        headers: HeadersSettings {
            project: tab_project(&args),
            ..Default::default()
        },
        ..Default::default()
    });
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_max_steps(400)
        .build_ui_state(|ui, s: &mut AppState| s.ui(ui), state);
    // The first look at the tab scans: wait for it.
    let t = Instant::now();
    h.step();
    while h.state().headers.busy() && t.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    let paces = [("unthrottled", 0u64), ("60 Hz", 16), ("every 50 ms", 50)];
    let mut res: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> = vec![Default::default(); paces.len()];
    // Per frame: CPU ms of the UI thread, and whether it was the frame that took the result.
    let mut cpu: Vec<Vec<(f64, bool)>> = vec![Vec::new(); paces.len()];
    let cli_cache = work.path().join("cli.cache");
    let mut cli_wall = Vec::new();
    for _ in 0..runs {
        // The CLI in the same loop, so both see the same machine load.
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
        cli_wall.push(t1.elapsed().as_secs_f64());
        for (i, &(_, pace)) in paces.iter().enumerate() {
            h.get_by_label("Clean rescan").click();
            let t0 = Instant::now();
            let c0 = thread_cpu_ms();
            loop {
                let f0 = Instant::now();
                let fc = thread_cpu_ms();
                h.step();
                res[i].0.push(f0.elapsed().as_secs_f64() * 1e3);
                let last = !h.state().headers.busy();
                cpu[i].push((thread_cpu_ms() - fc, last));
                if last {
                    break;
                }
                // The worker asks for a repaint when it is done (the harness does not see
                // that): wait for the next frame in slices, and stop waiting once the scan says
                // it is done.
                let done = || {
                    h.state()
                        .headers
                        .job
                        .as_ref()
                        .is_some_and(|j| j.progress.phase() == "done")
                };
                while f0.elapsed() < Duration::from_millis(pace) && !done() {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            let wall = t0.elapsed().as_secs_f64();
            res[i].1.push(wall);
            res[i].2.push((thread_cpu_ms() - c0) / 1e3 / wall);
            assert!(
                h.state().headers.error.is_none(),
                "{:?}",
                h.state().headers.error
            );
        }
    }
    let cli = median(cli_wall);
    println!("CLI clean scan {cli:.3} s wall (median of {runs}); app/CLI below");
    for (i, (name, _)) in paces.iter().enumerate() {
        let (frames, walls, ui) = &mut res[i];
        println!(
            "UI {name:>12}: {} frames, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; UI thread {:.0}% \
             of a core; clean rescan {:.3} s wall (median of {runs}), {:.2}x the CLI",
            frames.len(),
            pct(frames, 0.5),
            pct(frames, 0.99),
            pct(frames, 1.0),
            median(ui.clone()) * 100.0,
            median(walls.clone()),
            median(walls.clone()) / cli,
        );
        let mut during: Vec<f64> = cpu[i].iter().filter(|c| !c.1).map(|c| c.0).collect();
        let mut result: Vec<f64> = cpu[i].iter().filter(|c| c.1).map(|c| c.0).collect();
        println!(
            "    UI thread CPU per frame while scanning: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
             the frame taking the result: max {:.2} ms",
            pct(&mut during, 0.5),
            pct(&mut during, 0.99),
            pct(&mut during, 1.0),
            pct(&mut result, 1.0),
        );
    }
}

/// Runs every measurement, or those whose names contain one of the arguments
/// (`cargo bench --bench NAME -- FILTER`; cargo's own `--bench` flag is skipped).
fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted =
        |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()));
    if wanted("headers_tab_scan_vs_cli") {
        eprintln!("== headers_tab_scan_vs_cli");
        headers_tab_scan_vs_cli();
    }
    if wanted("ui_frames_during_a_header_rescan") {
        eprintln!("== ui_frames_during_a_header_rescan");
        ui_frames_during_a_header_rescan();
    }
}
