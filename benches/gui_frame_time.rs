//! Measurements, printed (no timed assertions): UI frame time while a batch runs, scan + listing
//! time of 10,000 clip files, frame time while scrolling a 10,000-row table, and frame time while
//! the mesh view plays a 3,000-vertex skinned clip.
//!
//! `cargo bench --bench gui_frame_time [-- FILTER]` (a benchmark, not a test: speed is measured,
//! never asserted).

/// The generated skinned glTF the tests use too.
#[path = "../tests/it/common/skinned.rs"]
mod skinned;

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::gui::{AppState, Persisted};
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};
use std::path::Path;
use std::time::{Duration, Instant};

fn harness(state: AppState) -> Harness<'static, AppState> {
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_max_steps(400)
        .build_ui_state(|ui, s: &mut AppState| s.ui(ui), state)
}

fn stats(mut v: Vec<f64>) -> String {
    if v.is_empty() {
        return "no frames".into();
    }
    v.sort_by(f64::total_cmp);
    let p = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    format!(
        "{} frames: mean {:.2} ms, p50 {:.2}, p99 {:.2}, max {:.2}",
        v.len(),
        mean,
        p(0.5),
        p(0.99),
        v[v.len() - 1]
    )
}

fn state(input: &Path, out: &Path) -> AppState {
    AppState::new(Persisted {
        input_dir: input.display().to_string(),
        output_dir: out.display().to_string(),
        ..Default::default()
    })
}

/// One egui frame (input → layout → shapes, no GPU), timed.
fn timed_step(h: &mut Harness<'_, AppState>) -> f64 {
    timed_step_cpu(h).0
}

/// CPU time consumed by the calling thread so far, in ms: what the frame itself cost, apart from
/// the time the OS gave the core to another thread (wall − CPU).
fn thread_cpu_ms() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: writes into the timespec we own.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6
    }
    #[cfg(not(target_os = "linux"))]
    {
        0.0
    }
}

/// One frame: (wall ms, this thread's CPU ms).
fn timed_step_cpu(h: &mut Harness<'_, AppState>) -> (f64, f64) {
    let c = thread_cpu_ms();
    let t = Instant::now();
    h.step();
    (t.elapsed().as_secs_f64() * 1000.0, thread_cpu_ms() - c)
}

/// Runs "Compress all" on `n` generated clips of `samples` samples and prints the frame times
/// while the batch runs.
fn frame_time_during_batch(n: usize, samples: usize) {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    for i in 0..n {
        let clip = generate(&GenerateOptions {
            name: format!("walk_{i:04}"),
            num_samples: samples,
            seed: i as u64,
            ..Default::default()
        });
        std::fs::write(
            input.path().join(format!("walk_{i:04}.acl.sjson")),
            write_acl_clip(&clip),
        )
        .unwrap();
    }
    let mut h = harness(state(input.path(), out.path()));
    h.run();
    h.get_by_label("Scan").click();
    for _ in 0..100_000 {
        h.step();
        if h.state().library.rows.len() >= n && h.state().jobs.inspect_job.is_none() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    h.get_by_label("Compress all").click();
    let mut during = Vec::new();
    let mut during_cpu = Vec::new();
    let started = Instant::now();
    for _ in 0..100_000 {
        let running = h.state().batch_running();
        let (ms, cpu) = timed_step_cpu(&mut h);
        if running {
            during.push(ms);
            during_cpu.push(cpu);
        } else if !h.state().is_busy() && !during.is_empty() {
            break;
        }
        // ~60 Hz, like the real event loop while it polls.
        std::thread::sleep(Duration::from_millis(16));
        if started.elapsed() > Duration::from_secs(300) {
            break;
        }
    }
    let s = h.state();
    assert_eq!(s.library.summary.compressed, n, "every clip compressed");
    println!(
        "FRAME TIME during batch ({} clips of {samples} samples, {:.1} s wall): {}",
        s.library.rows.len(),
        started.elapsed().as_secs_f64(),
        stats(during)
    );
    println!(
        "  CPU time of the UI thread per frame: {}",
        stats(during_cpu)
    );
    println!(
        "  app's own readout: {} frames during batch, mean {:.2} ms, worst {:.2} ms (AppState::ui only)",
        s.frame_stats.frames_during_batch,
        s.frame_stats.sum_during_batch_ms / s.frame_stats.frames_during_batch.max(1) as f64,
        s.frame_stats.worst_during_batch_ms
    );
}

fn frame_time_while_a_batch_runs() {
    frame_time_during_batch(200, 300);
}

fn frame_time_while_a_batch_of_5000_clips_runs() {
    frame_time_during_batch(5000, 4);
}

fn scan_10k_files_and_scroll_the_table() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let clip = generate(&GenerateOptions {
        num_samples: 4,
        ..Default::default()
    });
    let text = write_acl_clip(&clip);
    for d in 0..100 {
        let dir = input.path().join(format!("set_{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..100 {
            std::fs::write(dir.join(format!("c_{i:03}.acl.sjson")), &text).unwrap();
        }
    }
    let mut h = harness(state(input.path(), out.path()));
    let t = Instant::now();
    h.get_by_label("Scan").click();
    for _ in 0..100_000 {
        h.step();
        if h.state().library.rows.len() >= 10_000 {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let listed = t.elapsed();
    println!(
        "SCAN 10,000 files: pipeline::scan {:.0} ms; rows listed in the table after {:.0} ms",
        h.state()
            .library
            .scan_time
            .unwrap_or_default()
            .as_secs_f64()
            * 1000.0,
        listed.as_secs_f64() * 1000.0
    );
    assert_eq!(h.state().library.rows.len(), 10_000);
    // Scroll the virtualised table with the mouse wheel while the inspection still streams in,
    // then again once every file has been read.
    h.hover_at(egui::pos2(700.0, 450.0));
    let scroll = |h: &mut Harness<'_, AppState>, label: &str| {
        let mut frames = Vec::new();
        let mut ui_ms = Vec::new();
        for i in 0..300 {
            let dy = if (i / 100) % 2 == 0 { -120.0 } else { 120.0 };
            h.event(egui::Event::MouseWheel {
                unit: egui::MouseWheelUnit::Point,
                delta: egui::vec2(0.0, dy),
                modifiers: egui::Modifiers::NONE,
                phase: egui::TouchPhase::Move,
                source: egui::MouseWheelSource::Wheel,
            });
            frames.push(timed_step(h));
            ui_ms.push(*h.state().frame_stats.recent_ms.back().unwrap_or(&0.0) as f64);
        }
        println!(
            "FRAME TIME scrolling 10,000 rows ({label}): kittest step {}",
            stats(frames)
        );
        println!("  AppState::ui alone: {}", stats(ui_ms));
    };
    scroll(&mut h, "while the files are being read");
    for _ in 0..100_000 {
        if h.state().jobs.inspect_job.is_none() {
            break;
        }
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    scroll(&mut h, "idle");
}

/// Plays a 3,000-vertex skinned clip in the mesh view (the generated tube: 8 bones, 61
/// samples) and prints the frame times (target: p99 ≤ 16 ms, issue 25).
fn frame_time_playing_a_3000_vertex_skinned_clip() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    skinned::write_skinned_gltf(input.path(), "tube", 120, 8, 61);
    let mut h = harness(state(input.path(), out.path()));
    h.run();
    h.get_by_label("Compress all").click();
    for _ in 0..100_000 {
        h.step();
        if h.state().library.summary.compressed >= 1 && !h.state().is_busy() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    h.get_by_value("tube · bend").click();
    for _ in 0..100_000 {
        h.step();
        if h.state().detail.mesh.frame.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(h.state().detail.mesh.frame.is_some(), "the mesh is shown");
    h.get_by_label("Play").click();
    let (mut frames, mut cpu, mut shown) =
        (Vec::new(), Vec::new(), std::collections::HashSet::new());
    for _ in 0..300 {
        let (ms, c) = timed_step_cpu(&mut h);
        frames.push(ms);
        cpu.push(c);
        if let Some(f) = &h.state().detail.mesh.frame {
            shown.insert(f.sample);
        }
        // ~60 Hz, like the real event loop while it plays.
        std::thread::sleep(Duration::from_millis(16));
    }
    assert!(h.state().detail.viewer.playing);
    println!(
        "FRAME TIME playing a 3,000-vertex skinned clip (mesh view, overlay; {} distinct samples shown of 61): {}",
        shown.len(),
        stats(frames)
    );
    println!("  CPU time of the UI thread per frame: {}", stats(cpu));
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
    if wanted("frame_time_while_a_batch_runs") {
        eprintln!("== frame_time_while_a_batch_runs");
        frame_time_while_a_batch_runs();
    }
    if wanted("frame_time_while_a_batch_of_5000_clips_runs") {
        eprintln!("== frame_time_while_a_batch_of_5000_clips_runs");
        frame_time_while_a_batch_of_5000_clips_runs();
    }
    if wanted("scan_10k_files_and_scroll_the_table") {
        eprintln!("== scan_10k_files_and_scroll_the_table");
        scan_10k_files_and_scroll_the_table();
    }
    if wanted("frame_time_playing_a_3000_vertex_skinned_clip") {
        eprintln!("== frame_time_playing_a_3000_vertex_skinned_clip");
        frame_time_playing_a_3000_vertex_skinned_clip();
    }
}
