//! The export row and the export itself (json / csv / dot of the shown report, written atomically).

use super::fmt_count;
use super::{HeadersSettings, HeadersState};
use eframe::egui;
use std::path::PathBuf;

impl HeadersState {
    pub(super) fn export_row(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        ui.add_space(2.0);
        ui.horizontal(|ui| {
            let l = ui.label("Export to:");
            ui.add(egui::TextEdit::singleline(&mut s.export_path).desired_width(320.0))
                .labelled_by(l.id)
                .on_hover_text("Path without extension; .json / .csv / .dot is added");
            let has = self.report(s).is_some();
            for (label, ext) in [
                ("Export JSON", "json"),
                ("Export CSV", "csv"),
                ("Export dot", "dot"),
            ] {
                if ui.add_enabled(has, egui::Button::new(label)).clicked() {
                    self.message = Some(self.export(s, ext));
                }
            }
        });
        ui.add_space(2.0);
    }

    /// Writes the shown report as `ext` (json / csv / dot); returns the message to show.
    pub fn export(&self, s: &HeadersSettings, ext: &str) -> (String, bool) {
        let Some(r) = self.report(s) else {
            return ("Nothing to export yet: scan first".into(), true);
        };
        let base = s.export_path.trim();
        if base.is_empty() {
            return ("Export: type a path first".into(), true);
        }
        let path = PathBuf::from(format!("{base}.{ext}"));
        let text = match ext {
            "json" => r.to_json(),
            "csv" => r.to_csv(),
            _ => r.to_dot(),
        };
        let written = crate::fsio::write_atomic(&path, text.as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", path.display()));
        match written {
            Ok(()) => (
                format!(
                    "Exported {} files ({}) to {}",
                    fmt_count(r.headers.len() as u64),
                    r.mode,
                    path.display()
                ),
                false,
            ),
            Err(e) => (format!("Export failed: {e}"), true),
        }
    }
}
