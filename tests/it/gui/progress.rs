//! Issue 26 finding 9 in the app, and issue 27's scan item: the batch's progress counts input
//! files (the CLI's unit: known before the batch starts, never growing), with an ETA; the last
//! batch says clips and files; Cancel (Esc) stops a library scan. Driven headless with
//! egui_kittest.
#![cfg(feature = "gui")]

use crate::common::app_folder::harness_on as harness;
use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::gui::{AppState, Command};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use std::path::Path;
use std::time::Duration;

/// `n` generated clips of `samples` samples in `dir`.
fn write_takes(dir: &Path, n: usize, samples: usize) {
    for i in 0..n {
        let clip = generate(&GenerateOptions {
            name: format!("take_{i:02}"),
            num_samples: samples,
            seed: i as u64 + 1,
            ..Default::default()
        });
        std::fs::write(
            dir.join(format!("take_{i:02}.acl.sjson")),
            write_acl_clip(&clip),
        )
        .unwrap();
    }
}

fn wait_idle(h: &mut Harness<'_, AppState>) {
    for _ in 0..6000 {
        h.step();
        let s = h.state();
        if !s.is_busy() && s.jobs.inspect_job.is_none() && s.jobs.cached_job.is_none() {
            h.run_steps(4);
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("background work did not finish");
}

/// Every progress bar text shown while a batch runs says "N / 12 files" (the total is the
/// files' count from the first frame on, never the clips found so far), and the line after it
/// says how many clips came from how many files.
#[test]
fn the_batch_progress_counts_files_known_before_it_starts() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_takes(input.path(), 12, 1500);
    let mut h = harness(input.path(), out.path());
    h.state_mut().handle(Command::Scan);
    wait_idle(&mut h);
    h.get_by_label("Compress all").click();
    let mut seen = Vec::new();
    for _ in 0..6000 {
        h.step();
        if let Some(bar) = h.query_by_label_contains(" · ETA ") {
            seen.push(bar.accesskit_node().label().unwrap_or_default());
        }
        if !h.state().is_busy() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    wait_idle(&mut h);
    assert!(!seen.is_empty(), "no progress bar was shown");
    for text in &seen {
        assert!(
            text.contains(" / 12 files · "),
            "the bar counts something else than the 12 files: {text}"
        );
    }
    h.get_by_label_contains("Last batch: 12 clips from 12 files");
}

/// Cancel (the button, or Esc) stops a running library scan: the scan's token is cancelled,
/// nothing is busy any more, and the message says so.
#[test]
fn cancel_stops_the_library_scan() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_takes(input.path(), 3, 20);
    let mut h = harness(input.path(), out.path());
    h.state_mut().handle(Command::Scan);
    let token = h
        .state()
        .jobs
        .scan_job
        .as_ref()
        .expect("the scan runs")
        .cancel
        .clone();
    h.state_mut().handle(Command::Cancel);
    assert!(token.is_cancelled(), "the scan was not told to stop");
    assert!(!h.state().is_busy(), "the app still waits for the scan");
    h.run_steps(4);
    h.get_by_label_contains("Scan cancelled");
}
