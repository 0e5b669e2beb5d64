//! Detail of a scalar track list (an ACL `float1f`…`vector4f` list compressed to `.cfs`): each
//! output track's largest error (at and between samples) against its own precision, the error
//! over time relative to precision, and the bit-rate histogram of its components.
//!
//! The raw list and the `.cfs` are read and measured by the detail job
//! ([`crate::pipeline::clip_detail::load_scalar_detail`]); this view only draws the result.

use crate::pipeline::clip_detail::ScalarDetail;
use crate::pipeline::report::ClipReport;
use crate::pipeline::scalar::ScalarError;
use eframe::egui;
use egui_plot::{Bar, BarChart, HLine, Legend, Line, Plot, PlotPoints};

/// Whether a row is a scalar list: its report says so, or the detail job found it is one (the
/// clip loader refused it as one, so the job measured it as a list: `has_scalar_detail`).
pub fn is_scalar_row(report: Option<&ClipReport>, has_scalar_detail: bool) -> bool {
    has_scalar_detail || crate::pipeline::clip_detail::is_scalar(report, None)
}

/// The scalar list's detail: summary line, per-track error against precision, error over time,
/// bit-rate histogram.
/// `data`: what the detail job measured (`None` while it runs).
pub fn scalar_detail_ui(ui: &mut egui::Ui, data: Option<&Result<ScalarDetail, ScalarError>>) {
    let data = match data {
        None => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Loading track list…");
            });
            return;
        }
        Some(Ok(d)) => d,
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, e.to_string());
            return;
        }
    };
    ui.label(format!("Scalar track list: {}", data.summary));
    track_table(ui, data);
    ui.separator();
    let avail = ui.available_size();
    let col_w = ((avail.x - 24.0) / 3.0).max(200.0);
    let h = (avail.y - 40.0).max(120.0);
    ui.horizontal_top(|ui| {
        ui.allocate_ui(egui::vec2(col_w, h), |ui| {
            ui.vertical(|ui| error_per_track(ui, data, h - 30.0));
        });
        ui.separator();
        ui.allocate_ui(egui::vec2(col_w, h), |ui| {
            ui.vertical(|ui| error_over_time(ui, data, h - 30.0));
        });
        ui.separator();
        ui.allocate_ui(egui::vec2(ui.available_width(), h), |ui| {
            ui.vertical(|ui| bit_rates(ui, data, h - 30.0));
        });
    });
}

/// One line per output track: its name, precision and largest error (over its precision in red).
fn track_table(ui: &mut egui::Ui, data: &ScalarDetail) {
    egui::ScrollArea::vertical()
        .id_salt("cf_scalar_tracks")
        .max_height(96.0)
        .show(ui, |ui| {
            for (k, name) in data.names.iter().enumerate() {
                // Precisions are f32 in the file: print them as such (0.0001, not 0.0000999…).
                let prec = data.precisions[k] as f32;
                let text = match data.max_error.as_ref().and_then(|e| e.get(k)) {
                    Some(&e) => format!(
                        "Track {k} {name}: max error {e:.6} · precision {prec}{}",
                        if e > data.precisions[k] {
                            " · over"
                        } else {
                            ""
                        }
                    ),
                    None => format!("Track {k} {name}: precision {prec} · not compressed yet"),
                };
                let over = data
                    .max_error
                    .as_ref()
                    .and_then(|e| e.get(k))
                    .is_some_and(|&e| e > data.precisions[k]);
                if over {
                    ui.colored_label(ui.visuals().error_fg_color, text);
                } else {
                    ui.label(text);
                }
            }
        });
}

fn error_per_track(ui: &mut egui::Ui, data: &ScalarDetail, h: f32) {
    ui.label(egui::RichText::new("Max error per track vs its precision").strong());
    let Some(errors) = &data.max_error else {
        ui.weak("Not compressed yet.");
        return;
    };
    let bars: Vec<Bar> = errors
        .iter()
        .enumerate()
        .map(|(k, &e)| {
            let over = e > data.precisions[k];
            Bar::new(k as f64, e)
                .width(0.6)
                .name(&data.names[k])
                .fill(if over {
                    egui::Color32::from_rgb(220, 80, 60)
                } else {
                    egui::Color32::from_rgb(80, 150, 220)
                })
        })
        .collect();
    Plot::new("cf_scalar_err_track")
        .height(h)
        .legend(Legend::default())
        .y_axis_label("|error|")
        .x_axis_label("output track")
        .show(ui, |p| {
            p.bar_chart(BarChart::new("max error", bars));
            // Each track's own precision: a tick across its bar.
            for (k, &prec) in data.precisions.iter().enumerate() {
                let x = k as f64;
                p.line(
                    Line::new(
                        "precision",
                        PlotPoints::from(vec![[x - 0.4, prec], [x + 0.4, prec]]),
                    )
                    .color(egui::Color32::from_rgb(230, 160, 40))
                    .width(2.0),
                );
            }
        });
}

fn error_over_time(ui: &mut egui::Ui, data: &ScalarDetail, h: f32) {
    ui.label(egui::RichText::new("Error over time / precision").strong());
    if data.relative_over_time.is_empty() {
        ui.weak("Not compressed yet.");
        return;
    }
    Plot::new("cf_scalar_err_time")
        .height(h)
        .legend(Legend::default())
        .y_axis_label("error / precision")
        .x_axis_label("sample")
        .show(ui, |p| {
            for (k, series) in data.relative_over_time.iter().enumerate() {
                let pts: Vec<[f64; 2]> = series
                    .iter()
                    .enumerate()
                    .map(|(s, &v)| [s as f64, v])
                    .collect();
                p.line(Line::new(data.names[k].clone(), PlotPoints::from(pts)));
            }
            p.hline(HLine::new("precision", 1.0).color(egui::Color32::from_rgb(230, 160, 40)));
        });
}

fn bit_rates(ui: &mut egui::Ui, data: &ScalarDetail, h: f32) {
    ui.label(egui::RichText::new("Bit rates (components)").strong());
    if data.bit_histogram.is_empty() {
        ui.weak("Not compressed yet.");
        return;
    }
    ui.weak("0 = zero or constant component, 32 = raw float32");
    let bars: Vec<Bar> = data
        .bit_histogram
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(b, &n)| Bar::new(b as f64, n as f64).width(0.8))
        .collect();
    Plot::new("cf_scalar_bits")
        .height(h - 20.0)
        .x_axis_label("bits per sample")
        .y_axis_label("components")
        .show(ui, |p| p.bar_chart(BarChart::new("components", bars)));
}
