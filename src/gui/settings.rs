//! The settings panel: error threshold, shell distance, presets, skip cache, worker threads.
//! Changing a value that affects compression marks existing results stale (the model compares
//! each result's settings with the current ones).

use super::command::Command;
use crate::anim::CompressionSettings;
use eframe::egui;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Preset {
    /// ACL's default: 0.01 cm at a 3 cm shell.
    Default,
    /// Hero / cinematic clips: 10× tighter.
    HighQuality,
    /// Background characters and crowds: 10× looser.
    Crowd,
    Custom,
}

impl Preset {
    pub const ALL: [Preset; 4] = [
        Preset::Default,
        Preset::HighQuality,
        Preset::Crowd,
        Preset::Custom,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Preset::Default => "Default (0.01 cm)",
            Preset::HighQuality => "High quality (0.001 cm)",
            Preset::Crowd => "Crowd / LOD (0.1 cm)",
            Preset::Custom => "Custom",
        }
    }

    /// (threshold cm, shell distance override cm)
    pub(super) fn values(self) -> Option<(f32, Option<f32>)> {
        match self {
            Preset::Default => Some((crate::anim::DEFAULT_ERROR_THRESHOLD_CM, None)),
            Preset::HighQuality => Some((0.001, None)),
            Preset::Crowd => Some((0.1, Some(3.0))),
            Preset::Custom => None,
        }
    }
}

impl SettingsState {
    /// The preset these values are (Custom when none): a threshold typed to 0.01 cm with no
    /// shell override is Default, not "Custom" beside a field reading 0.0100.
    fn matching_preset(&self) -> Preset {
        let shell = self.override_shell.then_some(self.shell_distance_cm);
        Preset::ALL
            .into_iter()
            .find(|p| p.values() == Some((self.error_threshold_cm, shell)))
            .unwrap_or(Preset::Custom)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SettingsState {
    pub preset: Preset,
    pub error_threshold_cm: f32,
    /// Override every bone's shell distance with `shell_distance_cm`.
    pub override_shell: bool,
    pub shell_distance_cm: f32,
    pub use_skip_cache: bool,
    /// Worker threads; 0 = every core but one (the UI keeps one).
    pub jobs: usize,
}

impl Default for SettingsState {
    fn default() -> Self {
        Self {
            preset: Preset::Default,
            error_threshold_cm: crate::anim::DEFAULT_ERROR_THRESHOLD_CM,
            override_shell: false,
            shell_distance_cm: 3.0,
            use_skip_cache: true,
            jobs: 0,
        }
    }
}

impl SettingsState {
    pub fn compression(&self) -> CompressionSettings {
        CompressionSettings {
            error_threshold: self.error_threshold_cm,
            shell_distance: self.override_shell.then_some(self.shell_distance_cm),
            ..Default::default()
        }
    }

    fn apply_preset(&mut self, p: Preset) {
        self.preset = p;
        if let Some((t, shell)) = p.values() {
            self.error_threshold_cm = t;
            self.override_shell = shell.is_some();
            if let Some(s) = shell {
                self.shell_distance_cm = s;
            }
        }
    }
}

/// The settings panel of the Clips tab. It edits the persisted settings (shared: the table,
/// the batch and the Lab read them) and reports what others must follow as [`Command`]s.
#[derive(Default)]
pub struct SettingsView;

impl SettingsView {
    /// `running`: a batch runs (the settings are locked); `stale`: rows made with other settings.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut SettingsState,
        running: bool,
        stale: usize,
    ) -> Vec<Command> {
        let mut out = Vec::new();
        ui.heading("Settings");
        let before = s.compression();
        ui.add_enabled_ui(!running, |ui| {
            let l = ui.label("Preset");
            egui::ComboBox::from_id_salt("cf_preset")
                .selected_text(s.preset.label())
                .show_ui(ui, |ui| {
                    for p in Preset::ALL {
                        if ui.selectable_label(s.preset == p, p.label()).clicked() {
                            s.apply_preset(p);
                        }
                    }
                })
                .response
                .labelled_by(l.id);
            ui.add_space(6.0);
            let l = ui.label("Error threshold (cm)");
            let r = ui
                .add(
                    egui::DragValue::new(&mut s.error_threshold_cm)
                        // Bounds of the field's own type: 0.0001 as an f64 is above the f32
                        // value stored, which the field clamped again each frame and took for
                        // a change from elsewhere, replacing the text being typed.
                        .range(0.0001f32..=10.0f32)
                        .speed(0.0005)
                        // Applied on Enter or leaving the field: "0.0" on the way to "0.05"
                        // is not a threshold (it made every row stale).
                        .update_while_editing(false)
                        // Enough for every figure the app asks for ("raise the threshold to at
                        // least 0.00111 cm"): at 4 the field showed 0.00111 as 0.0011.
                        .max_decimals(6),
                )
                .labelled_by(l.id)
                .on_hover_text("Max object-space error of the virtual vertices, in cm");
            if r.changed() {
                s.preset = s.matching_preset();
            }
            ui.add_space(6.0);
            if ui
                .checkbox(&mut s.override_shell, "Override shell distance")
                .on_hover_text("Virtual vertex distance for every bone (else each bone's own, 3 cm by default)")
                .changed()
            {
                s.preset = s.matching_preset();
            }
            ui.add_enabled_ui(s.override_shell, |ui| {
                ui.horizontal(|ui| {
                    let l = ui.label("Shell distance (cm)");
                    if ui
                        .add(egui::DragValue::new(&mut s.shell_distance_cm)
                                .range(0.1f32..=1000.0f32)
                                .speed(0.1)
                                .update_while_editing(false))
                        .labelled_by(l.id)
                        .changed()
                    {
                        s.preset = s.matching_preset();
                    }
                });
            });
            ui.add_space(6.0);
            ui.checkbox(&mut s.use_skip_cache, "Skip unchanged clips")
                .on_hover_text("Skip clips whose input and settings match the last run (skip cache)");
            ui.horizontal(|ui| {
                let l = ui.label("Threads (0 = auto)");
                ui.add(egui::DragValue::new(&mut s.jobs).range(0..=256)).labelled_by(l.id);
            });
        });
        if s.compression() != before {
            out.push(Command::SettingsChanged);
        }
        if stale > 0 {
            ui.add_space(8.0);
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!(
                    "{} stale: settings changed since {} made.",
                    crate::pipeline::report::count(stale, "result is", "results are"),
                    if stale == 1 { "it was" } else { "they were" }
                ),
            );
            if ui
                .add_enabled(!running, egui::Button::new("Recompress stale"))
                .clicked()
            {
                out.push(Command::RecompressStale);
            }
        }
        ui.add_space(12.0);
        ui.separator();
        ui.label(egui::RichText::new("Keys").strong());
        ui.label("Ctrl+O  open folder\nCtrl+Enter  compress all\nEsc  cancel");
        out
    }
}
