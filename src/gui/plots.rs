//! Plot helpers shared by the clip detail and the Charts tab: bit-rate histograms, readable
//! value ticks and labels, the hover position. Plain drawing functions over plain data.

use super::model::Library;
use crate::pipeline::report::ClipReport;
use eframe::egui;
use egui_plot::{Bar, BarChart, GridInput, GridMark, HoverPosition, Plot};

/// The raw clip's colour (plots and skeleton viewer).
pub const RAW_COLOR: egui::Color32 = egui::Color32::from_rgb(90, 160, 255);
/// The decompressed clip's colour.
pub const LOSSY_COLOR: egui::Color32 = egui::Color32::from_rgb(255, 145, 40);
pub const THRESHOLD_COLOR: egui::Color32 = egui::Color32::from_rgb(230, 70, 70);

const CONSTANT_COLOR: egui::Color32 = egui::Color32::from_rgb(130, 130, 130);
const DEFAULT_COLOR: egui::Color32 = egui::Color32::from_rgb(175, 175, 175);

/// A bit-rate histogram: "constant" sub-tracks at x = −2, "default" ones at −1 (grey, named in
/// the legend), then one bar per bit width. Hovering names the bar under the pointer in a
/// tooltip (egui_plot's own bar label is dim text over the bars, clipped above the tallest).
pub fn bit_rate_plot(
    ui: &mut egui::Ui,
    id: &str,
    (hist, constant, default): (&[u32], u32, u32),
    [w, h]: [f32; 2],
) {
    let counts: Vec<(i64, u32)> = [(-2, constant), (-1, default)]
        .into_iter()
        .chain(hist.iter().enumerate().map(|(b, &n)| (b as i64, n)))
        .collect();
    let bar = |x: i64, n: u32, c: egui::Color32| Bar::new(x as f64, n as f64).fill(c).width(0.8);
    let animated: Vec<Bar> = counts
        .iter()
        .filter(|&&(x, n)| x >= 0 && n > 0)
        .map(|&(x, n)| bar(x, n, LOSSY_COLOR))
        .collect();
    let max_bits = counts
        .iter()
        .filter(|&&(x, n)| x >= 0 && n > 0)
        .map(|&(x, _)| x)
        .max()
        .unwrap_or(16)
        .max(8);
    // The top tick's number is centred on the plot's edge: half of it stands above the plot,
    // over the row above unless there is room.
    ui.add_space(4.0);
    let resp = Plot::new(id)
        .width(w)
        .height(h)
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .include_y(0.0)
        .include_x(-2.5)
        .include_x(max_bits as f64 + 0.5)
        .include_y(counts.iter().map(|&(_, n)| n).max().unwrap_or(0) as f64 * 1.1)
        // The y axis (sub-tracks) is named in the heading: on a plot this short the rotated
        // title ran past the frame into the heading above it.
        .x_axis_label("bits per component")
        .x_grid_spacer(bit_rate_ticks)
        .x_axis_formatter(move |m, range| {
            // A number is centred on its tick: one in the plot's margin, nearer the right edge
            // than half its width, was cut by it (a "16" read "1"). Such a tick goes unlabelled.
            let frame_px = f64::from((w - Y_AXIS_PX).max(40.0));
            let px_per_bit = frame_px / (range.end() - range.start()).max(1e-9);
            if (range.end() - m.value) * px_per_bit < LABEL_HALF_PX {
                return String::new();
            }
            bit_rate_axis_label(m.value)
        })
        .y_grid_spacer(count_ticks)
        .y_axis_formatter(tick_label)
        .label_formatter(move |hp| {
            let x = hover_point(hp).x.round() as i64;
            let &(_, n) = counts.iter().find(|&&(b, _)| b == x)?;
            Some(match x {
                -2 => format!("constant sub-tracks: {n}"),
                -1 => format!("default sub-tracks: {n}"),
                // The histogram counts each animated sub-track's components once per segment.
                b => format!("{b} bits: {n} components (counted per segment)"),
            })
        })
        .show(ui, |pui| {
            pui.bar_chart(
                BarChart::new("constant", vec![bar(-2, constant, CONSTANT_COLOR)])
                    .color(CONSTANT_COLOR)
                    .allow_hover(false),
            );
            pui.bar_chart(
                BarChart::new("default", vec![bar(-1, default, DEFAULT_COLOR)])
                    .color(DEFAULT_COLOR)
                    .allow_hover(false),
            );
            pui.bar_chart(
                BarChart::new("animated", animated)
                    .color(LOSSY_COLOR)
                    .allow_hover(false),
            );
        });
    let clip = ui.clip_rect();
    ui.data_mut(|d| d.insert_temp(plot_rect_id(id), (resp.response.rect, clip)));
}

/// What a bit-rate plot's y axis (its numbers) takes of its width, at most: the frame is the
/// rest.
const Y_AXIS_PX: f32 = 48.0;
/// Half the width of an x-axis number ("16", "32") with room to spare.
const LABEL_HALF_PX: f64 = 9.0;

/// The colour key of the bit-rate histograms (a legend inside would cover the bars).
pub fn bit_rate_key(ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for (c, name) in [
            (CONSTANT_COLOR, "constant sub-tracks"),
            (DEFAULT_COLOR, "default sub-tracks"),
            (LOSSY_COLOR, ANIMATED_BARS),
        ] {
            let (r, _) = ui.allocate_exact_size(egui::vec2(9.0, 9.0), egui::Sense::hover());
            ui.painter().rect_filled(r, 1.0, c);
            ui.label(egui::RichText::new(name).small());
        }
    });
}

/// The plot position under the pointer, wherever it is.
pub fn hover_point(h: &HoverPosition<'_>) -> egui_plot::PlotPoint {
    match h {
        HoverPosition::NearDataPoint { position, .. } | HoverPosition::Elsewhere { position } => {
            *position
        }
    }
}

/// 1, 2 or 5 × a power of ten, at least `x`.
fn nice_step(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&v| v >= x * 0.999)
        .unwrap_or(10.0 * p)
}

/// Evenly spaced ticks, about `n` over the visible range.
fn ticks(input: GridInput, n: f64, min_step: f64) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) {
        return Vec::new();
    }
    // Never closer than egui_plot's label spacing allows (it hides labels under ~20 px).
    let step = nice_step((span / n).max(input.base_step_size * 3.0)).max(min_step);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last.min(first + 100))
        .map(|i| GridMark {
            value: i as f64 * step,
            step_size: step,
        })
        .collect()
}

/// About six labelled ticks (egui_plot's default labels only 0 and 0.01 on small plots).
pub fn value_ticks(input: GridInput) -> Vec<GridMark> {
    ticks(input, 6.0, 0.0)
}

/// Ticks for counts: whole numbers only.
pub fn count_ticks(input: GridInput) -> Vec<GridMark> {
    ticks(input, 6.0, 1.0)
}

/// X ticks of the bit-rate histograms: bit widths, labelled every 8 (egui_plot labels X ticks
/// only 60 px apart); the constant and default bars are named in the legend.
fn bit_rate_ticks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    (lo.ceil().max(0.0) as i64..=hi.floor().min(64.0) as i64)
        .map(|v| GridMark {
            value: v as f64,
            step_size: match v {
                _ if v % 8 == 0 => 8.0,
                _ if v % 4 == 0 => 4.0,
                _ => 1.0,
            },
        })
        .collect()
}

/// A tick's label with as many decimals as its step needs.
pub fn tick_label(m: GridMark, _: &std::ops::RangeInclusive<f64>) -> String {
    let decimals = (-m.step_size.log10().floor()).max(0.0) as usize;
    format!("{:.*}", decimals, m.value)
}

/// Sum of the bit-rate histograms of every compressed clip.
pub fn batch_histogram(lib: &Library) -> (Vec<u32>, u32, u32) {
    let mut hist = vec![0u32; 33];
    let (mut c, mut d) = (0, 0);
    for r in lib.compressed_rows() {
        let rep = r.good_report().expect("compressed rows have reports");
        for (i, &n) in rep.layout.bit_rate_histogram.iter().enumerate() {
            if i >= hist.len() {
                hist.resize(i + 1, 0);
            }
            hist[i] += n;
        }
        c += rep.layout.constant_subtracks;
        d += rep.layout.default_subtracks;
    }
    (hist, c, d)
}

/// `report`: the clip's row, whatever became of it (a failed or refused one is said as such);
/// `unreadable`: the file is known not to read (the scan's inspection or the detail job), with
/// no report yet, as after a restart.
pub fn bit_rate_plots(
    ui: &mut egui::Ui,
    report: Option<&ClipReport>,
    unreadable: bool,
    lib: &Library,
    h: f32,
) {
    bit_rate_heading(ui, "Bit rates (this clip)");
    let w = ui.available_width();
    // Both plots within the column (the batch plot's axis numbers were cut off below it): the
    // headings, key and caption take ~100 px.
    let h = h.min(((ui.clip_rect().bottom() - ui.cursor().top() - 100.0) / 2.0).max(60.0));
    match report {
        // A refused or failed clip has no output, but it was tried: "not compressed yet" would
        // say a batch is still to come.
        Some(r) if r.below_precision.is_some() => {
            ui.weak("Refused (below float32 precision): no output, no bit rates.");
        }
        Some(r) if r.error.is_some() => {
            // Not "Failed: …": the detail's first line already says that, once.
            ui.weak("No output (the clip failed): no bit rates.");
        }
        Some(r) => {
            ui.weak(format!(
                "{} animated · {} constant · {} default sub-tracks · {}",
                r.layout.animated_subtracks,
                r.layout.constant_subtracks,
                r.layout.default_subtracks,
                super::util::fmt_counted(r.layout.segments as u64, "segment")
            ));
            bit_rate_key(ui);
            bit_rate_plot(
                ui,
                "cf_bits_clip",
                (
                    &r.layout.bit_rate_histogram,
                    r.layout.constant_subtracks,
                    r.layout.default_subtracks,
                ),
                [w, h - 36.0],
            );
        }
        // "Not compressed yet" would promise bit rates a batch cannot give.
        None if unreadable => {
            ui.weak("No output (the file does not read): no bit rates.");
        }
        None => {
            ui.weak("Not compressed yet.");
        }
    }
    bit_rate_heading(ui, "Bit rates (whole batch)");
    let (hist, c, d) = batch_histogram(lib);
    bit_rate_plot(ui, "cf_bits_batch", (&hist, c, d), [w, h]);
}

/// What an animated bit-rate bar counts: components × segments (each component has its own bit
/// width in each segment), so a clip's orange bars add up to more than its animated sub-tracks;
/// the constant and default bars count sub-tracks. Said in the colour key (the headings said
/// "bars: sub-tracks", and a longer text beside them wrapped over them at 1280 px).
pub const ANIMATED_BARS: &str = "animated: components × segments, by bit width";

/// A bit-rate plot's heading (what its bars count is in the colour key).
fn bit_rate_heading(ui: &mut egui::Ui, title: &str) {
    ui.label(egui::RichText::new(title).strong());
}

/// Where a plot was drawn and the visible part of its panel, by plot id (egui temporary data,
/// `(Rect, Rect)`): tests check that its axis is in view.
pub fn plot_rect_id(plot_id: &str) -> egui::Id {
    egui::Id::unique(("cf_plot_rect", plot_id))
}

/// X-axis label of the bit-rate histograms: bits per component (the bars left of 0, constant
/// and default sub-tracks, are named in the legend).
pub fn bit_rate_axis_label(v: f64) -> String {
    if (v - v.round()).abs() > 1e-6 {
        String::new()
    } else if v >= 0.0 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_ticks_are_many_enough_and_labelled_with_their_precision() {
        let input = GridInput {
            bounds: (0.0, 0.011),
            base_step_size: 0.0001,
        };
        let marks = value_ticks(input);
        assert!(marks.len() >= 5, "{} ticks", marks.len());
        let labels: Vec<String> = marks.iter().map(|m| tick_label(*m, &(0.0..=1.0))).collect();
        assert_eq!(labels[..3], ["0.000", "0.002", "0.004"]);
        assert!(
            count_ticks(GridInput {
                bounds: (0.0, 3.0),
                base_step_size: 0.01
            })
            .iter()
            .all(|m| m.value.fract() == 0.0)
        );
    }
}
