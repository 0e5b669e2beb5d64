//! Batch charts: ratio vs max error (scatter), ratio by clip duration, the max error
//! distribution, and the bit-rate distribution over the batch.

use super::model::{Library, RowKey};
use super::plots::{
    batch_histogram, bit_rate_key, bit_rate_plot, count_ticks, hover_point, tick_label, value_ticks,
};
use eframe::egui;
use egui_plot::{Bar, BarChart, HoverPosition, Plot, PlotPoint, Points, VLine};

const POINT_COLOR: egui::Color32 = egui::Color32::from_rgb(90, 160, 255);
const THRESHOLD_COLOR: egui::Color32 = egui::Color32::from_rgb(230, 70, 70);

/// The distinct error thresholds the clips were compressed with (cm), ascending.
fn thresholds(lib: &Library) -> Vec<f64> {
    let mut t: Vec<f64> = lib
        .compressed_rows()
        .filter_map(|r| r.good_report())
        // A scalar track list is held to its tracks' precision, not to a threshold in cm.
        .filter(|p| p.scalar.is_none())
        .filter_map(|p| p.settings.as_ref())
        .map(|s| s.error_threshold_cm as f64)
        .filter(|t| t.is_finite())
        .collect();
    t.sort_by(f64::total_cmp);
    t.dedup();
    t.truncate(4);
    t
}

/// What a chart's point is called on hover: the table's label and the file (relative to the
/// folder), so two clips named alike in different files are told apart.
pub fn point_name(lib: &Library, row: &super::model::Row) -> String {
    let file = lib
        .root
        .as_deref()
        .and_then(|root| row.key.path.strip_prefix(root).ok())
        .unwrap_or(&row.key.path);
    format!("{}\n{}", row.label, file.display())
}

/// Where a scatter plot keeps its dots' hover names (egui temporary data, `Vec<String>`).
pub fn names_id(plot_id: &str) -> egui::Id {
    egui::Id::unique(("cf_chart_names", plot_id))
}

/// The tab's heading: how many compressed clips the charts show (of how many, with the Clips
/// tab's filter).
fn heading(ui: &mut egui::Ui, shown: usize, all: usize, filter: &str) {
    ui.horizontal(|ui| {
        ui.heading("Charts");
        if shown < all {
            ui.label(format!(
                "{shown} of {all} compressed clips (the Clips tab's filter: {})",
                filter.trim()
            ));
            ui.weak("· click a point to open its clip");
        } else {
            ui.weak(format!(
                "{shown} compressed clips · click a point to open its clip"
            ));
        }
    });
}

/// Draws the charts of the rows the Clips table shows (its filter applies, so a click never
/// opens a clip the table hides); returns the clip whose point was clicked in a scatter plot
/// (the app opens it in the Clips tab).
pub fn charts_ui(ui: &mut egui::Ui, lib: &Library, filter: &str) -> Option<RowKey> {
    let rows: Vec<_> = lib
        .view
        .iter()
        .map(|&i| &lib.rows[i])
        .filter(|r| r.good_report().is_some())
        .collect();
    let all = lib.compressed_rows().count();
    let mut picked = None;
    heading(ui, rows.len(), all, filter);
    if rows.is_empty() {
        ui.add_space(20.0);
        ui.label(if all > 0 {
            "No compressed clip matches the Clips tab's filter."
        } else {
            "No results yet: compress a folder in the Clips tab."
        });
        return None;
    }
    let avail = ui.available_size();
    let w = ((avail.x - 16.0) / 2.0).max(200.0);
    let h = ((avail.y - 60.0) / 2.0).max(120.0);

    // The error charts are in cm: a scalar track list's errors are in its tracks' own units
    // (its `max_error_cm` is 0 by convention), so it is left out of them rather than drawn at
    // 0 cm; the duration chart has every clip.
    let in_cm: Vec<&super::model::Row> = rows
        .iter()
        .copied()
        .filter(|r| r.good_report().is_some_and(|p| p.scalar.is_none()))
        .collect();
    let ratio_err: Vec<[f64; 2]> = in_cm
        .iter()
        .filter_map(|r| r.good_report())
        .map(|p| [p.max_error_cm, p.ratio])
        .collect();
    let ratio_dur: Vec<[f64; 2]> = rows
        .iter()
        .filter_map(|r| r.good_report().map(|p| (r, p)))
        .map(|(r, p)| [r.duration_s.unwrap_or(p.duration_s) as f64, p.ratio])
        .collect();
    let names: Vec<String> = rows.iter().map(|r| point_name(lib, r)).collect();
    let names_cm: Vec<String> = in_cm.iter().map(|r| point_name(lib, r)).collect();
    ui.data_mut(|d| d.insert_temp(names_id("cf_chart_ratio_err"), names_cm.clone()));
    ui.data_mut(|d| d.insert_temp(names_id("cf_chart_ratio_dur"), names.clone()));
    // Same order as each chart's points (`rows` holds only rows with a good report).
    let keys: Vec<&RowKey> = rows.iter().map(|r| &r.key).collect();
    let keys_cm: Vec<&RowKey> = in_cm.iter().map(|r| &r.key).collect();
    let lists = rows.len() - in_cm.len();
    if lists > 0 {
        ui.weak(format!(
            "{} not in the error charts: their errors are in their tracks' own units, not cm",
            super::util::fmt_counted(lists as u64, "scalar track list")
        ));
    }
    let thresholds = thresholds(lib);

    egui::Grid::new("cf_charts")
        .num_columns(2)
        .spacing([16.0, 8.0])
        .show(ui, |ui| {
            let a = scatter(
                ui,
                [w, h],
                ("cf_chart_ratio_err", "Compression ratio vs max error"),
                ("max error (cm)", "err", "cm"),
                (ratio_err, &names_cm, POINT_COLOR),
                &thresholds,
            );
            let b = scatter(
                ui,
                [w, h],
                ("cf_chart_ratio_dur", "Compression ratio by clip duration"),
                ("duration (s)", "duration", "s"),
                (ratio_dur, &names, egui::Color32::from_rgb(120, 200, 120)),
                &[],
            );
            picked = a
                .and_then(|i| keys_cm.get(i))
                .or(b.and_then(|i| keys.get(i)))
                .map(|k| (*k).clone());
            ui.end_row();
            ui.vertical(|ui| {
                ui.label(egui::RichText::new("Max error distribution").strong());
                let errs: Vec<f64> = in_cm
                    .iter()
                    .filter_map(|r| r.good_report())
                    .map(|p| p.max_error_cm)
                    .collect();
                let bins = error_histogram(&errs, 20, &thresholds);
                // What the chart shows, by plot id (scripts and tests read it).
                ui.data_mut(|d| d.insert_temp(bins_id("cf_chart_err_hist"), bins.clone()));
                let bars: Vec<Bar> = bins
                    .iter()
                    .map(|b| {
                        Bar::new((b.lo + b.hi) / 2.0, b.count as f64)
                            .width((b.hi - b.lo) * 0.9)
                            .name(b.label())
                    })
                    .collect();
                let hover_bins = bins.clone();
                Plot::new("cf_chart_err_hist")
                    .width(w)
                    .height(h)
                    .allow_scroll(false)
                    .include_y(0.0)
                    .x_axis_label("max error (cm)")
                    .y_axis_label("clips")
                    .x_grid_spacer(value_ticks)
                    .x_axis_formatter(tick_label)
                    .y_grid_spacer(count_ticks)
                    .y_axis_formatter(tick_label)
                    .label_formatter(move |hp| {
                        let x = hover_point(hp).x;
                        let b = hover_bins.iter().find(|b| x >= b.lo && x <= b.hi)?;
                        Some(format!("{}\n{} clips", b.label(), b.count))
                    })
                    .show(ui, |pui| {
                        pui.bar_chart(
                            BarChart::new("clips", bars)
                                .color(egui::Color32::from_rgb(255, 145, 40))
                                .allow_hover(false),
                        );
                        threshold_lines(pui, &thresholds);
                    });
            });
            ui.vertical(|ui| {
                ui.label(egui::RichText::new("Bit-rate distribution (batch)").strong());
                let (hist, c, d) = batch_histogram(lib);
                bit_rate_key(ui);
                bit_rate_plot(ui, "cf_chart_bits", (&hist, c, d), [w, h - 18.0]);
            });
            ui.end_row();
        });
    picked
}

/// Where a scatter plot keeps its dots' screen positions (egui temporary data, `Vec<Pos2>`).
pub fn points_id(plot_id: &str) -> egui::Id {
    egui::Id::unique(("cf_chart_points", plot_id))
}

/// How far (points) from a clip's dot a click still opens it.
const CLICK_RADIUS: f32 = 10.0;

/// The index of the point nearest `pos` on screen, if within [`CLICK_RADIUS`].
pub fn nearest_point(
    points: &[[f64; 2]],
    pos: egui::Pos2,
    to_screen: impl Fn(&PlotPoint) -> egui::Pos2,
) -> Option<usize> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| (i, to_screen(&PlotPoint::new(p[0], p[1])).distance(pos)))
        .filter(|(_, d)| *d <= CLICK_RADIUS)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// A "ratio against x" scatter plot of the clips; hovering a point names its clip.
/// `plot` is (id, title); `x` is (axis label, hover name, hover unit); then the points with
/// their clips' names and colour, and where to draw threshold lines on the X axis. Returns the
/// index of the point clicked.
fn scatter(
    ui: &mut egui::Ui,
    [w, h]: [f32; 2],
    (id, title): (&str, &str),
    x: (&str, &'static str, &'static str),
    (points, names, color): (Vec<[f64; 2]>, &[String], egui::Color32),
    x_thresholds: &[f64],
) -> Option<usize> {
    let (x_label, x_name, x_unit) = x;
    let pts = points.clone();
    ui.vertical(|ui| {
        ui.label(egui::RichText::new(title).strong());
        let resp = Plot::new(id)
            .width(w)
            .height(h)
            .x_axis_label(x_label)
            .y_axis_label("ratio (×)")
            .y_grid_spacer(value_ticks)
            .y_axis_formatter(tick_label)
            .label_formatter(move |h| hover(h, names, x_name, x_unit, "ratio", "×"))
            .show(ui, |pui| {
                pui.points(Points::new("clips", points).radius(3.0).color(color));
                threshold_lines(pui, x_thresholds);
            });
        let t = resp.transform;
        // The dots on screen, by plot id (scripts and tests click them).
        let screen: Vec<egui::Pos2> = pts
            .iter()
            .map(|p| t.position_from_point(&PlotPoint::new(p[0], p[1])))
            .collect();
        ui.data_mut(|d| d.insert_temp(points_id(id), screen));
        let resp = resp.response;
        let pos = resp.interact_pointer_pos().filter(|_| resp.clicked())?;
        nearest_point(&pts, pos, |p| t.position_from_point(p))
    })
    .inner
}

/// A red vertical line at each error threshold the clips were compressed with.
fn threshold_lines(pui: &mut egui_plot::PlotUi<'_>, thresholds: &[f64]) {
    for &t in thresholds {
        pui.vline(
            VLine::new(format!("threshold {t} cm"), t)
                .color(THRESHOLD_COLOR)
                .allow_hover(false),
        );
    }
}

fn hover(
    h: &HoverPosition<'_>,
    names: &[String],
    xn: &str,
    xu: &str,
    yn: &str,
    yu: &str,
) -> Option<String> {
    Some(match h {
        HoverPosition::NearDataPoint {
            position: p, index, ..
        } => format!(
            "{}\n{xn} {:.4} {xu}\n{yn} {:.2}{yu}",
            names.get(*index).map_or("", |s| s.as_str()),
            p.x,
            p.y
        ),
        HoverPosition::Elsewhere { position: p } => {
            format!("{xn} {:.4} {xu}\n{yn} {:.2}{yu}", p.x, p.y)
        }
    })
}

/// One bar of the max error distribution: the clips with `lo < error <= hi` (the first bar
/// also holds 0).
#[derive(Clone, Debug, PartialEq)]
pub struct HistBin {
    pub lo: f64,
    pub hi: f64,
    pub count: u32,
}

impl HistBin {
    pub fn label(&self) -> String {
        format!("{:.4}–{:.4} cm", self.lo, self.hi)
    }
}

/// Where the max error histogram keeps its bins (egui temporary data, `Vec<HistBin>`).
pub fn bins_id(plot_id: &str) -> egui::Id {
    egui::Id::unique(("cf_chart_bins", plot_id))
}

/// About `bins` equal-width bins from 0 to the largest value, with each threshold inside that
/// range made a bin edge (the uniform edge nearest it moves onto it), so no bar straddles a
/// threshold line: a bar right of a line holds only clips over it. Bins are closed on the right
/// (an error equal to a threshold is within it, as the status says).
pub fn error_histogram(values: &[f64], bins: usize, thresholds: &[f64]) -> Vec<HistBin> {
    let max = values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let bins = bins.max(1);
    let width = if max > 0.0 { max / bins as f64 } else { 1.0 };
    let mut edges: Vec<f64> = (0..=bins).map(|i| i as f64 * width).collect();
    for &t in thresholds.iter().filter(|t| **t > 0.0 && **t < max) {
        // The nearest inner edge moves onto the threshold (keeps the bar count).
        if bins > 1 {
            let i = ((t / width).round() as usize).clamp(1, bins - 1);
            if edges[i - 1] < t && t < edges[i + 1] {
                edges[i] = t;
                continue;
            }
        }
        edges.push(t);
        edges.sort_by(f64::total_cmp);
    }
    edges.dedup();
    let mut out: Vec<HistBin> = edges
        .windows(2)
        .map(|e| HistBin {
            lo: e[0],
            hi: e[1],
            count: 0,
        })
        .collect();
    for &v in values.iter().filter(|v| v.is_finite()) {
        let i = out.iter().position(|b| v <= b.hi).unwrap_or(out.len() - 1);
        out[i].count += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn histogram_counts_every_value() {
        let bars = super::error_histogram(&[0.0, 0.005, 0.01, 0.01], 10, &[]);
        assert_eq!(bars.len(), 10);
        assert!((bars[0].hi - 0.001).abs() < 1e-12);
        let total: u32 = bars.iter().map(|b| b.count).sum();
        assert_eq!(total, 4);
    }

    #[test]
    fn a_threshold_is_a_bin_edge() {
        // The user trial's case: 20 bins to 0.0148 put 0.0099–0.0148 across 0.01.
        let v = [0.002, 0.009966, 0.0099, 0.0148];
        let bars = super::error_histogram(&v, 3, &[0.01]);
        assert!(bars.iter().any(|b| b.hi == 0.01), "{bars:?}");
        assert!(
            bars.iter().all(|b| !(b.lo < 0.01 && b.hi > 0.01)),
            "{bars:?}"
        );
        let over: u32 = bars.iter().filter(|b| b.lo >= 0.01).map(|b| b.count).sum();
        assert_eq!(over, 1);
    }
}
