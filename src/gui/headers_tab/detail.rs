//! The detail view of the selected file: its figures, includers / includes (an edge picked for
//! What-if), the why-chain from a TU and the what-if of removing an edge or emptying the file.

use super::fmt_count;
use super::{HeadersSettings, HeadersState, PickedEdge};
use crate::gui::headers_job::ScanOutcome;
use crate::gui::util::fmt_counted;
use crate::headers::report::DetailLink;
use crate::headers::{Mode, Report, WhatIf};
use eframe::egui;

impl HeadersState {
    pub(super) fn detail_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(sel) = self.selected.clone() else {
            return;
        };
        let gen_mode = (self.generation, s.show_mode);
        // Long paths and the summary line are cut with "…" (full text on hover) instead of
        // widening the panel, which would push the why / what-if column off the window.
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        // Taken out for the frame so the why / what-if sections can update `self` while reading it.
        let Some(outcome) = self.outcome.take() else {
            return;
        };
        self.detail_inner(ui, s, &outcome, &sel, gen_mode);
        self.outcome = Some(outcome);
    }

    fn detail_inner(
        &mut self,
        ui: &mut egui::Ui,
        s: &HeadersSettings,
        outcome: &ScanOutcome,
        sel: &str,
        gen_mode: (u64, Mode),
    ) {
        let Some(r) = outcome.report(s.show_mode) else {
            return;
        };
        // The detail (sorted includer / include lists, large for a popular header) is built once
        // per selection and scan, not every frame.
        let key = (gen_mode.0, gen_mode.1, sel.to_string());
        if self.detail.as_ref().is_none_or(|(k, _)| *k != key) {
            let Some(node) = r.find(sel) else {
                return;
            };
            self.detail = Some((key, r.detail(node)));
        }
        let Some((dkey, d)) = self.detail.take() else {
            return;
        };
        let mut refocus: Option<String> = None;
        let mut pick: Option<PickedEdge> = None;
        let mut back = false;
        let mut close = false;
        ui.add_space(4.0);
        // Wrapped: beside a long path the line was cut at the window's edge ("… incl…").
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(!self.history.is_empty(), egui::Button::new("Back"))
                .on_hover_text("The previously shown file")
                .clicked()
            {
                back = true;
            }
            if ui.button("Close").clicked() {
                close = true;
            }
            ui.label(egui::RichText::new(&d.path).strong().size(15.0));
            if let Some(e) = &d.entry {
                ui.weak(format!(
                    // Counted nouns: a header of one TU read "reached by 1 TUs".
                    "{} · reached by {} · contributes {} · includes {} ({}) · included by {}, directly or not",
                    fmt_counted(e.lines as u64, "line"),
                    fmt_counted(e.tu_count as u64, "TU"),
                    fmt_counted(e.contributed, "line"),
                    // Project files: the list below also names system headers, which are
                    // not counted ("includes 0 files" beside "Directly includes (38)").
                    fmt_counted(e.transitive_includes as u64, "project file"),
                    fmt_counted(e.transitive_lines, "line"),
                    fmt_counted(e.included_by_count as u64, "file")
                ));
            }
        });
        ui.separator();
        let picked = self.picked.clone();
        ui.columns(3, |cols| {
            // Includers: the count is how many files reach each includer.
            let side = LinkColumn {
                title: format!("Directly included by ({})", d.includers.len()),
                hover: "Direct includers. Count: files that include that includer, directly or not. Double-click to open",
                count: "incl. by",
                id: "hh_includers",
                empty: "Nothing includes it (a translation unit, or unused)",
                picked: picked.as_ref(),
            };
            side.show(&mut cols[0], &d.includers, &mut refocus, &mut pick, |l| {
                (
                    PickedEdge {
                        from: l.path.clone(),
                        to: d.path.clone(),
                    },
                    format!("{}:{}", l.path, l.line),
                    None,
                )
            });
            // Includes: the count is how many files each include pulls in.
            let side = LinkColumn {
                title: format!("Directly includes ({})", d.includes.len()),
                hover: "Direct includes. Count: files each one includes, directly or not. Click to pick it for What-if, double-click to open",
                count: "pulls in",
                id: "hh_includes",
                empty: "Includes no project file",
                picked: picked.as_ref(),
            };
            side.show(&mut cols[1], &d.includes, &mut refocus, &mut pick, |l| {
                (
                    PickedEdge {
                        from: d.path.clone(),
                        to: l.path.clone(),
                    },
                    l.path.clone(),
                    Some(format!("#include at line {} of {}", l.line, d.path)),
                )
            });
            let ui = &mut cols[2];
            egui::ScrollArea::vertical()
                .id_salt("hh_why_whatif")
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    // Columns are justified; wrapped text here should not be.
                    ui.with_layout(egui::Layout::top_down(egui::Align::LEFT), |ui| {
                        self.why_ui(ui, r, &d.path, gen_mode);
                        ui.separator();
                        self.what_if_ui(ui, r, &d.path);
                    });
                });
        });
        self.detail = Some((dkey, d));
        if let Some(p) = pick
            && self.picked.as_ref() != Some(&p)
        {
            self.picked = Some(p);
            self.what_if = None;
        }
        if let Some(p) = refocus {
            self.select(&p);
        } else if back {
            self.back();
        } else if close {
            if let Some(p) = self.selected.take() {
                self.history.push(p);
            }
            self.picked = None;
        }
    }

    pub(super) fn why_ui(
        &mut self,
        ui: &mut egui::Ui,
        r: &Report,
        path: &str,
        gen_mode: (u64, Mode),
    ) {
        ui.label(egui::RichText::new("Why is it included?").strong())
            .on_hover_text("The shortest #include chain from a translation unit");
        let mut go = false;
        ui.horizontal(|ui| {
            let l = ui.label("From TU:");
            let resp = ui
                .add(
                    egui::TextEdit::singleline(&mut self.from_tu)
                        .hint_text("any (optional)")
                        .desired_width((ui.available_width() - 90.0).max(60.0)),
                )
                .labelled_by(l.id);
            if resp.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                go = true;
            }
            if ui.button("Show chain").clicked() {
                go = true;
            }
        });
        let key = (
            gen_mode.0,
            gen_mode.1,
            path.to_string(),
            self.from_tu.trim().to_string(),
        );
        // Automatic for a new selection when cheap (one BFS per TU over its own edges).
        let cheap = crate::gui::headers_job::why_is_cheap(r);
        let stale = self
            .why_key
            .as_ref()
            .is_none_or(|k| k.0 != key.0 || k.1 != key.1 || k.2 != key.2);
        if go || (stale && cheap) {
            let from = (!key.3.is_empty()).then_some(key.3.as_str());
            self.why = Some(r.why_chain(path, from));
            self.why_key = Some(key);
        } else if stale {
            self.why = None;
        }
        match &self.why {
            Some(Ok(chain)) => {
                for (i, st) in chain.iter().enumerate() {
                    ui.horizontal(|ui| {
                        ui.add_space(10.0 * i as f32);
                        if st.line > 0 {
                            ui.label(format!("{}:{}", st.file, st.line))
                                .on_hover_text(format!("#include at line {}", st.line));
                            ui.weak("#include");
                        } else {
                            ui.label(egui::RichText::new(&st.file).strong());
                        }
                    });
                }
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().warn_fg_color, e.to_string());
            }
            None => {
                ui.weak("Press Show chain");
            }
        }
    }

    fn what_if_ui(&mut self, ui: &mut egui::Ui, r: &Report, path: &str) {
        ui.label(egui::RichText::new("What if…").strong())
            .on_hover_text("Evaluated on this scan's include graph, without rescanning");
        let mut run: Option<(String, WhatIf)> = None;
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Make it empty")
                .on_hover_text("This file with 0 lines and no includes")
                .clicked()
            {
                run = Some((format!("{path} empty"), WhatIf::EmptyFile(path.to_string())));
            }
            let picked = self.picked.clone();
            if ui
                .add_enabled(
                    picked.is_some(),
                    egui::Button::new("Remove the picked #include"),
                )
                .on_hover_text("Pick an include (or an includer) with a click first")
                .on_disabled_hover_text("Click an include or an includer on the left first")
                .clicked()
                && let Some(e) = picked
            {
                run = Some((
                    format!("{} without #include {}", e.from, e.to),
                    WhatIf::RemoveInclude {
                        from: e.from,
                        to: e.to,
                    },
                ));
            }
        });
        if let Some((label, w)) = run {
            self.what_if = Some((label, r.what_if(&w)));
        }
        if let Some(e) = &self.picked
            && self.what_if.is_none()
        {
            ui.weak(format!("picked: {} includes {}", e.from, e.to));
        }
        match &self.what_if {
            Some((label, Ok(w))) => {
                ui.label(egui::RichText::new(label).italics())
                    .on_hover_text(&w.note);
                ui.label(format!(
                    "Total Parsed {} -> {}",
                    fmt_count(w.total_parsed_before),
                    fmt_count(w.total_parsed_after)
                ));
                ui.label(
                    egui::RichText::new(format!(
                        "saves {} ({:.1}%), {} affected",
                        fmt_counted(w.saved, "line"),
                        w.saved_percent,
                        fmt_counted(w.tus_affected as u64, "TU")
                    ))
                    .strong(),
                )
                .on_hover_text(&w.note);
            }
            Some((label, Err(e))) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("{label}: {e}"));
            }
            None => {}
        }
    }
}

/// One side of the detail view (includers or includes): a titled, scrolling list of linked
/// files with their counts. Click picks the edge for What-if, double-click refocuses on the file.
struct LinkColumn<'a> {
    title: String,
    hover: &'a str,
    /// The count column's header (what each row's number counts).
    count: &'a str,
    id: &'a str,
    empty: &'a str,
    picked: Option<&'a PickedEdge>,
}

impl LinkColumn<'_> {
    /// `row` gives each link's edge, label and optional hover text.
    fn show(
        &self,
        ui: &mut egui::Ui,
        links: &[DetailLink],
        refocus: &mut Option<String>,
        pick: &mut Option<PickedEdge>,
        row: impl Fn(&DetailLink) -> (PickedEdge, String, Option<String>),
    ) {
        ui.label(egui::RichText::new(&self.title).strong())
            .on_hover_text(self.hover);
        if !links.is_empty() {
            ui.horizontal(|ui| {
                ui.add_sized(
                    [44.0, 14.0],
                    egui::Label::new(egui::RichText::new(self.count).small().weak()),
                )
                .on_hover_text(self.hover);
                ui.label(egui::RichText::new("file").small().weak());
            });
        }
        egui::ScrollArea::vertical()
            .id_salt(self.id)
            .auto_shrink([false, false])
            .show(ui, |ui| {
                if links.is_empty() {
                    ui.weak(self.empty);
                }
                for l in links {
                    let (edge, label, hover) = row(l);
                    let mut r = link_row(ui, l.count, &label, self.picked == Some(&edge));
                    if let Some(h) = hover {
                        r = r.on_hover_text(h);
                    }
                    if r.double_clicked() || r.triple_clicked() {
                        *refocus = Some(l.path.clone());
                    } else if r.clicked() {
                        *pick = Some(edge);
                    }
                }
            });
    }
}

/// One row of an includers / includes list: the count, then the path as a selectable button.
fn link_row(ui: &mut egui::Ui, count: u32, text: &str, picked: bool) -> egui::Response {
    ui.horizontal(|ui| {
        ui.add_sized(
            [44.0, 18.0],
            egui::Label::new(egui::RichText::new(fmt_count(count as u64)).monospace()),
        );
        ui.add(egui::Button::selectable(picked, text).truncate())
    })
    .inner
}
