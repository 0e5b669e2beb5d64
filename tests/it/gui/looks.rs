//! What the app showed that was not so, each seen in the real window under Xvfb first (issue 29,
//! the app's noticed items): throughput in decimal "KB/s" beside binary KiB sizes, the clip
//! detail's bit-rate column squeezed by rows that did not wrap, a plot title drawn over the
//! heading above it, and a play clock that ran slow when frames were slow.
#![cfg(feature = "gui")]

use crate::common;

use crate::common::app_folder::{
    clip_folders, compressed, open_clip_detail, state_with_output, write_clip,
};
use crate::common::gui::drawn_texts;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::anim::limits::format_byte_rate;
use clipforge::gui::AppState;
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};
use std::path::Path;

/// The app at `size`, `input` typed and compressed into `out`, `clip`'s detail open.
fn detail_at(size: egui::Vec2, input: &Path, out: &Path, clip: &str) -> Harness<'static, AppState> {
    let mut h = Harness::builder()
        .with_size(size)
        .with_max_steps(200)
        .build_ui_state(|ui, s: &mut AppState| s.ui(ui), state_with_output(out));
    h.run();
    common::app_folder::type_input_folder(&mut h, input);
    h.get_by_label("Compress all").click();
    common::gui::wait_idle(&mut h);
    open_clip_detail(&mut h, clip);
    h
}

#[test]
fn throughput_is_written_in_the_binary_units_of_the_sizes_beside_it() {
    let (input, out) = clip_folders(3, 40);
    let h = compressed(input.path(), out.path());
    let kib_s = h
        .state()
        .jobs
        .last_batch
        .as_ref()
        .expect("a batch ran")
        .report
        .totals
        .throughput_kb_s;
    assert!(kib_s > 0.0);
    // Sizes say KiB/MiB (1024); the rate beside them said "KB/s" of the same 1024-byte unit.
    assert_eq!(h.query_all_by_label_contains("KB/s").count(), 0);
    let rate = format_byte_rate(kib_s * 1024.0);
    assert!(rate.ends_with("iB/s") || rate.ends_with(" B/s"), "{rate}");
    h.get_by_label(&format!("Throughput {rate}"));
    // The Last batch line: its time is "0.12 s" or, below 0.1 s, "12 ms".
    h.get_by_label_contains(&format!(" · {rate}"));
}

/// At 1280 px the detail's three columns (error plots, pose, bit rates) have their planned
/// shares: the pose column's option row did not wrap and widened its column, leaving the bit
/// rates ~156 px.
#[test]
fn the_detail_columns_have_their_share_of_the_width_at_1280_px() {
    let (input, out) = clip_folders(2, 40);
    let mut h = detail_at(
        egui::vec2(1280.0, 800.0),
        input.path(),
        out.path(),
        "clip_01",
    );
    h.run();
    // The columns' left edges, read off their headings.
    let left = |label: &str| h.get_by_label(label).rect().min.x;
    let errors = left("Max error over time (cm)");
    let pose = left("Skeleton (raw vs decompressed)");
    let bits = left("Bit rates (whole batch)");
    assert!(errors < pose && pose < bits, "{errors} {pose} {bits}");
    // The bit-rate plots take their column's width; each column has its share of the detail.
    let (plot, _): (egui::Rect, egui::Rect) = h
        .ctx
        .data(|d| d.get_temp(clipforge::gui::plot_rect_id("cf_bits_batch")))
        .expect("the batch bit-rate plot was drawn");
    assert!(
        plot.right() <= 1280.0,
        "the bit rates end at {}",
        plot.right()
    );
    let widths = [pose - errors, bits - pose, plot.width() + 12.0];
    let total: f32 = widths.iter().sum();
    let shares = clipforge::gui::DETAIL_COLUMN_SHARES;
    for (i, (w, s)) in widths.iter().zip(shares).enumerate() {
        assert!(
            (w / total - s).abs() <= 0.03 && *w >= 280.0,
            "column {i} is {w} px of {total} (share {s}): {widths:?}"
        );
    }
}

/// Nothing is drawn over the bit-rate headings: the whole-batch plot's rotated "sub-tracks"
/// title, centred on a plot shorter than itself, ran up into "Bit rates (whole batch)".
#[test]
fn nothing_is_drawn_over_the_bit_rate_headings() {
    let (input, out) = clip_folders(2, 40);
    for size in [egui::vec2(1280.0, 800.0), egui::vec2(1400.0, 950.0)] {
        let mut h = detail_at(size, input.path(), out.path(), "clip_01");
        h.run();
        let texts = drawn_texts(&h);
        for heading in ["Bit rates (this clip)", "Bit rates (whole batch)"] {
            let at = h.get_by_label(heading).rect().shrink(1.0);
            let over: Vec<&(String, egui::Rect)> = texts
                .iter()
                .filter(|(t, r)| t != heading && r.intersects(at))
                .collect();
            assert!(
                over.is_empty(),
                "{size:?}: drawn over '{heading}' {at:?}: {over:?}"
            );
        }
        // What the bars count is still said.
        // What the bars count is still said: in the colour key (an animated bar counts
        // components × segments, not sub-tracks as the headings said).
        h.get_by_label("animated: components × segments, by bit width");
        h.get_by_label("constant sub-tracks");
    }
}

/// Playing keeps the clip's tempo whatever the frame time: the harness steps 0.25 s a frame,
/// and the clock used to advance at most 0.1 s a frame (a 61-sample clip showed 21 of its
/// samples, in slow motion). Now 4 frames are one second of the clip, and every sample comes
/// round.
#[test]
fn playing_keeps_the_clips_tempo_when_frames_are_slow() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let clip = generate(&GenerateOptions {
        name: "walk".into(),
        num_samples: 61,
        seed: 5,
        ..Default::default()
    });
    let rate = clip.sample_rate as f64;
    write_clip(input.path(), &clip);
    let mut h = detail_at(egui::vec2(1400.0, 950.0), input.path(), out.path(), "walk");
    h.get_by_label("Play").click();
    h.step();
    assert!(h.state().detail.viewer.playing);
    let start = h.state().detail.viewer.sample as f64;
    let step_s = 0.25;
    let frames = 8;
    for _ in 0..frames {
        h.step();
    }
    let expected = ((start + frames as f64 * step_s * rate) % 61.0).floor();
    let now = h.state().detail.viewer.sample as f64;
    assert!(
        (now - expected).abs() <= 1.0,
        "after {frames} frames of {step_s} s at {rate} Hz: sample {now}, expected {expected}"
    );
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..300 {
        h.step();
        seen.insert(h.state().detail.viewer.sample as usize);
    }
    assert_eq!(seen.len(), 61, "samples shown in 300 frames: {seen:?}");
}

/// The bit-rate plots' x-axis numbers lie within the plot's width, wherever the last bit width
/// falls: centred on a tick in the plot's margin, a "16" ran past the right edge, where the
/// column cut it (ux32's tour). Every last bit width from 8 to 32, at the widths the clip
/// detail and the Charts tab give the plot.
#[test]
fn the_bit_rate_plots_axis_numbers_stay_within_the_plot() {
    let (mut cut, mut checked) = (Vec::new(), 0);
    for max_bits in 8..=32usize {
        let hist: Vec<u32> = (0..=max_bits).map(|b| 1 + b as u32).collect();
        for w in [240.0f32, 268.0, 304.0, 420.0, 600.0] {
            let mut h = egui_kittest::Harness::builder()
                .with_size(egui::vec2(w + 40.0, 200.0))
                .build_ui(|ui| {
                    clipforge::gui::bit_rate_plot(ui, "t_bits", (&hist, 3, 4), [w, 120.0]);
                });
            h.run();
            let (plot, _): (egui::Rect, egui::Rect) = h
                .ctx
                .data(|d| d.get_temp(clipforge::gui::plot_rect_id("t_bits")))
                .expect("the plot was drawn");
            let mut texts = Vec::new();
            for c in &h.output().shapes {
                collect_texts(&c.shape, &mut texts);
            }
            let numbers: Vec<&(String, egui::Rect)> = texts
                .iter()
                .filter(|(t, r)| t.parse::<u32>().is_ok() && r.min.y >= plot.bottom() - 1.0)
                .collect();
            // (egui_plot leaves a tick unlabelled closer than 60 px to the next.)
            checked += numbers.len();
            for (t, r) in numbers {
                if r.max.x > plot.right() + 0.5 {
                    cut.push(format!(
                        "{max_bits} bits at {w} px: \"{t}\" ends at {} past {}",
                        r.max.x,
                        plot.right()
                    ));
                }
            }
        }
    }
    assert!(checked >= 200, "only {checked} numbers drawn");
    assert!(cut.is_empty(), "{cut:#?}");
}

/// Every text shape (its text and on-screen box) under `s`.
fn collect_texts(s: &egui::Shape, out: &mut Vec<(String, egui::Rect)>) {
    match s {
        egui::Shape::Text(t) => out.push((t.galley.text().to_string(), t.visual_bounding_rect())),
        egui::Shape::Vec(v) => v.iter().for_each(|s| collect_texts(s, out)),
        _ => {}
    }
}
