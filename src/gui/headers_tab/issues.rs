//! The missing includes, errors and cycles views.

use super::{HeadersSettings, HeadersState, num};
use eframe::egui;
use egui_extras::{Column, TableBuilder};

impl HeadersState {
    pub(super) fn missing_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(r) = self.report(s) else { return };
        if r.missing.is_empty() {
            ui.label("No missing includes.");
            return;
        }
        ui.weak("Includes that were not found in any search dir, with the places that tried them. Angle includes not found are usually system headers (give their dirs with -I, or pick a compiler).");
        let text_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        TableBuilder::new(ui)
            .id_salt("hh_missing")
            .striped(true)
            .resizable(true)
            .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
            .column(Column::initial(260.0).at_least(100.0).clip(true))
            .column(Column::initial(60.0).at_least(40.0))
            .column(Column::remainder().at_least(120.0).clip(true))
            .header(text_h + 4.0, |mut h| {
                for t in ["Include", "TUs", "Tried by"] {
                    h.col(|ui| {
                        ui.strong(t);
                    });
                }
            })
            .body(|body| {
                body.rows(text_h, r.missing.len(), |mut row| {
                    let m = &r.missing[row.index()];
                    row.col(|ui| {
                        let q = if m.angle {
                            format!("<{}>", m.include)
                        } else {
                            format!("\"{}\"", m.include)
                        };
                        ui.label(q);
                        if m.likely_system {
                            ui.weak("system?");
                        }
                    });
                    row.col(|ui| num(ui, m.tu_count as u64));
                    row.col(|ui| {
                        let sites: Vec<String> = m
                            .tried_by
                            .iter()
                            .map(|t| format!("{}:{}", t.file, t.line))
                            .collect();
                        let shown = if sites.len() > 3 {
                            format!("{} … (+{} more)", sites[..3].join(", "), sites.len() - 3)
                        } else {
                            sites.join(", ")
                        };
                        ui.add(egui::Label::new(shown).truncate())
                            .on_hover_text(sites.join("\n"));
                    });
                });
            });
    }

    pub(super) fn errors_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(r) = self.report(s) else { return };
        if r.errors.is_empty() {
            ui.label("No errors.");
            return;
        }
        let row_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        egui::ScrollArea::both()
            .id_salt("hh_errors")
            .auto_shrink([false, false])
            .show_rows(ui, row_h, r.errors.len(), |ui, range| {
                for e in &r.errors[range] {
                    ui.horizontal(|ui| {
                        ui.label(
                            egui::RichText::new(format!("{}:{}", e.file, e.line))
                                .color(ui.visuals().error_fg_color),
                        );
                        ui.label(&e.message);
                    });
                }
            });
    }

    pub(super) fn cycles_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(r) = self.report(s) else { return };
        if r.cycles.is_empty() {
            ui.label("No include cycles.");
            return;
        }
        ui.weak("Files that include each other (directly or not); include guards usually cut these at run time.");
        let row_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        egui::ScrollArea::both()
            .id_salt("hh_cycles")
            .auto_shrink([false, false])
            .show_rows(ui, row_h, r.cycles.len(), |ui, range| {
                for c in &r.cycles[range] {
                    match c.as_slice() {
                        // A file that includes itself: one path, said in words.
                        [one] => ui.label(format!("{one}  (includes itself)")),
                        _ => ui.label(c.join("  <->  ")),
                    };
                }
            });
    }
}
