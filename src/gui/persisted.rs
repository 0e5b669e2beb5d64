//! What survives a restart (eframe persistence, RON under the app's data dir): folders, recent
//! folders, settings, pipelines, the open tab, sort and export name, the Headers tab's project.

use super::headers_tab::HeadersSettings;
use super::model::SortState;
use super::pipelines::SavedPipeline;
use super::settings::SettingsState;
use super::util::{bundled_assets_dir, default_output_dir};
use serde::{Deserialize, Serialize};

/// The export file name (without extension), in the current output folder.
pub const DEFAULT_EXPORT_NAME: &str = "clipforge-report";

/// Top-level tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Tab {
    #[default]
    Clips,
    Charts,
    Lab,
    Watch,
    Headers,
}

/// Everything that survives a restart.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Persisted {
    pub input_dir: String,
    pub output_dir: String,
    pub recent_inputs: Vec<String>,
    pub recent_outputs: Vec<String>,
    pub settings: SettingsState,
    /// Input folders watched by versions before pipelines (read once: they become pipelines).
    #[serde(skip_serializing)]
    pub watched: Vec<String>,
    /// The Watch tab's pipelines (each its own input, output and settings) and which ran.
    pub pipelines: Vec<SavedPipeline>,
    /// The pipelines file the Watch tab saves to / loads from.
    pub pipelines_file: String,
    pub tab: Tab,
    pub sort: SortState,
    pub export_path: String,
    /// The Headers tab's project and view settings.
    pub headers: HeadersSettings,
}

impl Default for Persisted {
    fn default() -> Self {
        let input = bundled_assets_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let output = default_output_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        Self {
            input_dir: input,
            output_dir: output,
            recent_inputs: Vec::new(),
            recent_outputs: Vec::new(),
            settings: SettingsState::default(),
            watched: Vec::new(),
            pipelines: Vec::new(),
            pipelines_file: String::new(),
            tab: Tab::Clips,
            sort: SortState::default(),
            export_path: String::new(),
            headers: HeadersSettings::default(),
        }
    }
}

impl Persisted {
    /// Puts the current input and output folders first in their Recent lists.
    pub fn remember_recent(&mut self) {
        fn push(list: &mut Vec<String>, v: &str) {
            if v.is_empty() {
                return;
            }
            list.retain(|x| x != v);
            list.insert(0, v.to_string());
            list.truncate(8);
        }
        push(&mut self.recent_inputs, &self.input_dir);
        push(&mut self.recent_outputs, &self.output_dir);
    }
}
