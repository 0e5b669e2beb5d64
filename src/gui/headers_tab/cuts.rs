//! The Top cuts view: every directive's (and header's) saving, best first, and for the picked
//! row the TUs it touches and the include chain to its file.

use super::{CUTS_CONFIRMED, HeadersSettings, HeadersState, num};
use crate::headers::cuts::{Cut, CutKind};
use crate::headers::{ChainStep, Report};
use eframe::egui;
use egui_extras::{Column, TableBuilder};

/// A cut by what it edits: the same directive (or header) is the same row after a rescan,
/// wherever it is ranked then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutKey {
    pub kind: CutKind,
    pub includer: String,
    pub line: u32,
    pub included: String,
}

impl CutKey {
    pub fn of(c: &Cut) -> CutKey {
        CutKey {
            kind: c.kind,
            includer: c.includer.clone(),
            line: c.line,
            included: c.included.clone(),
        }
    }
}

/// The directive as the list shows it (and its filter matches).
pub fn cut_text(c: &Cut) -> String {
    match c.kind {
        CutKind::Include => format!("{}:{}  #include {}", c.includer, c.line, c.included),
        CutKind::EmptyHeader => format!("{}  (make it empty)", c.included),
    }
}

/// What the Top cuts view shows under its list for the picked row.
pub(super) struct CutDetail {
    tus: Vec<String>,
    why: Option<Result<Vec<ChainStep>, crate::headers::WhyError>>,
}

impl HeadersState {
    /// Top cuts: every directive's (and header's) saving, best first; a row picked shows the TUs
    /// it touches and the include chain to its file from the first of them.
    pub(super) fn cuts_ui(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        let generation = self.generation;
        let busy = self.busy();
        let Some(r) = self.outcome.as_ref().and_then(|o| o.preprocessed.as_ref()) else {
            return;
        };
        let Some(cuts) = &r.cuts else {
            ui.label("The saving of every #include directive is computed by a scan made while this view is shown.");
            if ui
                .add_enabled(!busy, egui::Button::new("Compute cuts (rescan)"))
                .clicked()
            {
                self.start_scan(s, false);
            }
            return;
        };
        if cuts.is_empty() {
            ui.label("No #include directive of the project saves anything.");
            return;
        }
        ui.weak(format!(
            "Total Parsed lines saved (preprocessed) if the #include were removed, or the header emptied; the top {CUTS_CONFIRMED} confirmed by evaluating their TUs again (exact), the rest estimated from the include graphs."
        ));
        let filter = crate::gui::filter::TextFilter::new(self.cut_filter.trim());
        let rows: Vec<(usize, String)> = cuts
            .iter()
            .enumerate()
            .map(|(i, c)| (i, cut_text(c)))
            .filter(|(_, t)| filter.matches(t))
            .take(500)
            .collect();
        ui.horizontal(|ui| {
            crate::gui::filter::filter_field(ui, &mut self.cut_filter, "part of a directive");
            ui.label(format!("{} of {} cuts", rows.len(), cuts.len()));
        });
        let shown = rows.len();
        let text_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        let mut picked = None;
        let list_h = (ui.available_height() * 0.55).max(120.0);
        TableBuilder::new(ui)
            .id_salt("hh_cuts")
            .striped(true)
            .resizable(true)
            .max_scroll_height(list_h)
            .sense(egui::Sense::click())
            .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
            .column(Column::initial(110.0).at_least(60.0))
            .column(Column::initial(60.0).at_least(40.0))
            .column(Column::initial(50.0).at_least(40.0))
            .column(Column::remainder().at_least(200.0).clip(true))
            .header(text_h + 4.0, |mut h| {
                for t in ["Lines saved", "TUs", "Exact", "Directive"] {
                    h.col(|ui| {
                        ui.strong(t);
                    });
                }
            })
            .body(|body| {
                body.rows(text_h, shown, |mut row| {
                    let (i, what) = &rows[row.index()];
                    let c = &cuts[*i];
                    let key = CutKey::of(c);
                    row.set_selected(self.cut_selected.as_ref() == Some(&key));
                    row.col(|ui| num(ui, c.lines_saved.max(0) as u64));
                    row.col(|ui| num(ui, c.tus_affected as u64));
                    row.col(|ui| {
                        ui.label(if c.exact { "yes" } else { "est." });
                    });
                    row.col(|ui| {
                        if ui
                            .add(
                                egui::Label::new(what.as_str())
                                    .truncate()
                                    .sense(egui::Sense::click()),
                            )
                            .clicked()
                        {
                            picked = Some(key.clone());
                        }
                    });
                    if row.response().clicked() {
                        picked = Some(key);
                    }
                });
            });
        if let Some(k) = picked {
            self.cut_selected = Some(k);
        }
        // Still there after a rescan (by identity); gone: nothing picked.
        let Some((key, c)) = self.cut_selected.as_ref().and_then(|k| {
            cuts.iter()
                .find(|c| CutKey::of(c) == *k)
                .map(|c| (k.clone(), c))
        }) else {
            return;
        };
        if self
            .cut_detail
            .as_ref()
            .is_none_or(|(k, _)| k.0 != generation || k.1 != key)
        {
            self.cut_detail = Some(((generation, key), cut_detail(r, c)));
        }
        let Some((_, d)) = &self.cut_detail else {
            return;
        };
        cut_detail_ui(ui, d);
    }
}

/// What the detail of cut `c` of report `r` shows: the TUs it touches (each with its
/// configuration when there are several) and why its header is included.
fn cut_detail(r: &Report, c: &Cut) -> CutDetail {
    // With configurations a file is one TU per configuration: say which.
    let tus: Vec<String> = c
        .tus
        .iter()
        .zip(&c.tu_configs)
        .map(|(&t, &cf)| {
            let path = &r.graph.nodes[t as usize].path;
            match r.configs.get(cf as usize) {
                Some(conf) if r.configs.len() > 1 => format!("{path}  [{}]", conf.name),
                _ => path.clone(),
            }
        })
        .collect();
    let why = c
        .tus
        .first()
        .map(|&t| r.why_chain(&c.included, Some(r.graph.nodes[t as usize].path.as_str())));
    CutDetail { tus, why }
}

/// The picked cut's detail under the list.
fn cut_detail_ui(ui: &mut egui::Ui, d: &CutDetail) {
    ui.separator();
    ui.strong(format!("Translation units touched ({})", d.tus.len()));
    egui::ScrollArea::vertical()
        .id_salt("hh_cut_tus")
        .max_height(ui.available_height() * 0.5)
        .show(ui, |ui| {
            for t in &d.tus {
                ui.label(t);
            }
        });
    if let Some(w) = &d.why {
        ui.strong("Why it is included (from the first TU):");
        match w {
            Ok(chain) => {
                for step in chain {
                    if step.line > 0 {
                        ui.label(format!("{}:{}  #include", step.file, step.line));
                    } else {
                        ui.label(&step.file);
                    }
                }
            }
            Err(e) => {
                ui.weak(e.to_string());
            }
        }
    }
}
