//! The per-file table: sorting, filtering and its rows (the view is rebuilt only when the
//! scan, mode, filter or sort changed).

use super::fmt_count;
use super::{HeaderColumn, HeadersSettings, HeadersState, num};
use eframe::egui;
use egui_extras::{Column, TableBuilder};

const COLUMNS: [(HeaderColumn, &str, &str); 9] = [
    (HeaderColumn::Path, "File", "Path (relative to its root)"),
    (HeaderColumn::Lines, "Lines", "Lines in the file"),
    (
        HeaderColumn::Tus,
        "TUs",
        "Translation units that reach this file",
    ),
    (
        HeaderColumn::Contributed,
        "Contributed",
        "Lines × TUs: what this file adds to Total Parsed",
    ),
    (
        HeaderColumn::Rebuilds,
        "Rebuilds",
        "History: the TU rebuilds its changes caused over the period (commits × TUs reaching it)",
    ),
    (
        HeaderColumn::Seconds,
        "Seconds",
        "Measured: the frontend seconds this file adds to the build (its own ms per TU × TUs; \
         greyed: no measured TU included it, estimated from its lines)",
    ),
    (
        HeaderColumn::TransitiveIncludes,
        "Incl. (trans.)",
        "Files it includes, directly or not",
    ),
    (
        HeaderColumn::TransitiveLines,
        "Lines (trans.)",
        "Lines of those files",
    ),
    (
        HeaderColumn::IncludedBy,
        "Included by",
        "Files that include it, directly or not",
    ),
];

impl HeadersState {
    pub(super) fn rebuild_view(&mut self, s: &HeadersSettings) {
        let key = (
            self.generation,
            s.show_mode,
            // Not lowercased: the filter may be a regex (`\D` is not `\d`); TextFilter ignores case.
            self.filter.trim().to_string(),
            s.sort,
        );
        if self.view_key.as_ref() == Some(&key) {
            return;
        }
        let Some(r) = self.outcome.as_ref().and_then(|o| o.report(s.show_mode)) else {
            self.view.clear();
            return;
        };
        let f = crate::gui::filter::TextFilter::new(&key.2);
        let mut v: Vec<usize> = (0..r.headers.len())
            .filter(|&i| f.matches(&r.headers[i].path))
            .collect();
        let h = &r.headers;
        v.sort_by(|&a, &b| {
            let (x, y) = (&h[a], &h[b]);
            let o = match s.sort.column {
                HeaderColumn::Path => x.path.cmp(&y.path),
                HeaderColumn::Lines => x.lines.cmp(&y.lines),
                HeaderColumn::Tus => x.tu_count.cmp(&y.tu_count),
                HeaderColumn::Contributed => x.contributed.cmp(&y.contributed),
                HeaderColumn::TransitiveIncludes => {
                    x.transitive_includes.cmp(&y.transitive_includes)
                }
                HeaderColumn::TransitiveLines => x.transitive_lines.cmp(&y.transitive_lines),
                HeaderColumn::IncludedBy => x.included_by_count.cmp(&y.included_by_count),
                HeaderColumn::Rebuilds => rebuilds(x).cmp(&rebuilds(y)),
                HeaderColumn::Seconds => x
                    .seconds_contributed
                    .unwrap_or(0.0)
                    .total_cmp(&y.seconds_contributed.unwrap_or(0.0)),
            };
            let o = if s.sort.ascending { o } else { o.reverse() };
            o.then_with(|| x.path.cmp(&y.path))
        });
        self.view = v;
        self.view_key = Some(key);
    }

    /// Paths of the table's rows, in display order (for tests and export checks).
    pub fn table_paths(&mut self, s: &HeadersSettings) -> Vec<String> {
        self.rebuild_view(s);
        let Some(r) = self.report(s) else {
            return Vec::new();
        };
        self.view
            .iter()
            .map(|&i| r.headers[i].path.clone())
            .collect()
    }

    pub(super) fn table_ui(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        self.rebuild_view(s);
        ui.horizontal(|ui| {
            crate::gui::filter::filter_field(ui, &mut self.filter, "part of a path");
            if let Some(r) = self.report(s) {
                ui.label(format!(
                    "{} of {} files",
                    fmt_count(self.view.len() as u64),
                    fmt_count(r.headers.len() as u64)
                ));
                ui.weak("· click a row for its detail; translation units in italics");
            }
        });
        let Some(r) = self.outcome.as_ref().and_then(|o| o.report(s.show_mode)) else {
            if self.job.is_some() {
                ui.add_space(20.0);
                ui.vertical_centered(|ui| ui.label("Scanning…"));
            }
            return;
        };
        let text_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        let mut sort = s.sort;
        let mut clicked: Option<String> = None;
        let selected = self.selected.clone();
        let view = &self.view;
        // The Seconds column only once measured (`Measure`, module `seconds`).
        let timed = r.predicted_frontend_s.is_some();
        // The Rebuilds column only with a history period.
        let churned = r.churn.is_some();
        TableBuilder::new(ui)
            .id_salt("hh_table")
            .striped(true)
            .resizable(true)
            .sense(egui::Sense::click())
            .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
            // The path takes what the number columns leave (recomputed each frame: not resizable).
            .column(
                Column::remainder()
                    .at_least(160.0)
                    .clip(true)
                    .resizable(false),
            )
            .column(Column::initial(60.0).at_least(44.0))
            .column(Column::initial(50.0).at_least(40.0))
            .column(Column::initial(96.0).at_least(60.0))
            .columns(Column::initial(80.0).at_least(56.0), churned as usize)
            .columns(Column::initial(80.0).at_least(56.0), timed as usize)
            .column(Column::initial(100.0).at_least(60.0))
            .column(Column::initial(104.0).at_least(60.0))
            .column(Column::initial(90.0).at_least(60.0))
            .columns(Column::initial(70.0).at_least(40.0), r.configs.len())
            .min_scrolled_height(0.0)
            .header(text_h + 4.0, |mut header| {
                for (col, title, tip) in COLUMNS {
                    if (col == HeaderColumn::Seconds && !timed)
                        || (col == HeaderColumn::Rebuilds && !churned)
                    {
                        continue;
                    }
                    header.col(|ui| {
                        let r = ui.add(
                            egui::Button::new(egui::RichText::new(title).strong()).frame(false),
                        );
                        if sort.column == col {
                            sort_triangle(ui, r.rect, sort.ascending);
                        }
                        if r.on_hover_text(format!("{tip}. Click to sort")).clicked() {
                            if sort.column == col {
                                sort.ascending = !sort.ascending;
                            } else {
                                sort.column = col;
                                sort.ascending = col == HeaderColumn::Path;
                            }
                        }
                    });
                }
                for c in &r.configs {
                    header.col(|ui| {
                        ui.label(egui::RichText::new(format!("TUs {}", c.name)).strong())
                            .on_hover_text(format!(
                                "Translation units of configuration {} that reach this file",
                                c.name
                            ));
                    });
                }
            })
            .body(|body| {
                body.rows(text_h, view.len(), |mut row| {
                    let h = &r.headers[view[row.index()]];
                    row.set_selected(selected.as_deref() == Some(h.path.as_str()));
                    row.col(|ui| {
                        let t = egui::RichText::new(&h.path);
                        let t = if h.tu { t.italics() } else { t };
                        ui.add(egui::Label::new(t).selectable(false).truncate())
                            .on_hover_text(if h.tu {
                                format!("{} (translation unit)", h.path)
                            } else {
                                h.path.clone()
                            });
                    });
                    row.col(|ui| num(ui, h.lines as u64));
                    row.col(|ui| num(ui, h.tu_count as u64));
                    row.col(|ui| num(ui, h.contributed));
                    if churned {
                        row.col(|ui| num(ui, rebuilds(h)));
                    }
                    if timed {
                        row.col(|ui| seconds_cell(ui, h));
                    }
                    row.col(|ui| num(ui, h.transitive_includes as u64));
                    row.col(|ui| num(ui, h.transitive_lines));
                    row.col(|ui| num(ui, h.included_by_count as u64));
                    for &n in h.tu_count_by_config.iter().flatten() {
                        row.col(|ui| num(ui, n as u64));
                    }
                    if row.response().clicked() {
                        clicked = Some(h.path.clone());
                    }
                });
            });
        s.sort = sort;
        if let Some(p) = clicked {
            self.select(&p);
        }
    }
}

fn rebuilds(h: &crate::headers::FileEntry) -> u64 {
    h.churn.as_ref().map_or(0, |c| c.churn_tu_rebuilds)
}

/// Seconds with three decimals ("< 0.001" for a cheap header, not "0.000"), right-aligned;
/// greyed when estimated from lines.
fn seconds_cell(ui: &mut egui::Ui, h: &crate::headers::FileEntry) {
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        ui.add_space(8.0);
        let Some(sec) = h.seconds_contributed else {
            return;
        };
        let t = egui::RichText::new(crate::pipeline::report::format_3_decimals(sec));
        if h.cost_measured == Some(false) {
            ui.label(t.weak())
                .on_hover_text("No measured TU included it: estimated from its lines");
        } else {
            ui.label(t);
        }
    });
}

fn sort_triangle(ui: &egui::Ui, rect: egui::Rect, ascending: bool) {
    // A small triangle (the default fonts have no arrow glyphs).
    let c = egui::pos2(rect.right() + 7.0, rect.center().y);
    let (a, b) = if ascending { (-4.0, 3.0) } else { (4.0, -3.0) };
    ui.painter().add(egui::Shape::convex_polygon(
        vec![
            egui::pos2(c.x, c.y + a),
            egui::pos2(c.x + 4.0, c.y + b),
            egui::pos2(c.x - 4.0, c.y + b),
        ],
        ui.visuals().strong_text_color(),
        egui::Stroke::NONE,
    ));
}
