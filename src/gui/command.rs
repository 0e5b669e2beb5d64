//! Cross-view actions as values: a view never reaches into another view or into the jobs; it
//! returns [`Command`]s, and `AppState::handle` (in `gui/mod.rs`) carries each out in one place.

use super::drop::DropAction;
use super::model::RowKey;
use std::path::PathBuf;

/// Which clips "Compress" works on.
#[derive(Clone, Debug, PartialEq)]
pub enum CompressScope {
    All,
    Files(Vec<PathBuf>),
}

/// Which folder a folder dialog picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialogTarget {
    Input,
    Output,
    /// The Watch tab's add form.
    PipelineInput,
    PipelineOutput,
}

/// One action that reaches beyond the view that asked for it.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Open a clip's detail (a row click); `add` toggles the row in the multi-selection instead
    /// of making it the only selected one.
    OpenClip { key: RowKey, add: bool },
    /// Another folder is open: the detail and the selection belonged to the old one.
    ClearDetail,
    /// Scan the input folder (typed, picked from Recent or from the dialog).
    Scan,
    /// Compress these clips (scans first when the folder was not scanned yet).
    Compress(CompressScope),
    /// Recompress every row whose result was made with other settings.
    RecompressStale,
    /// Cancel the running batch (and, on the Headers and Lab tabs, their jobs).
    Cancel,
    /// Open the native folder dialog for the input or output folder.
    BrowseFolder(DialogTarget),
    /// Tick or untick Watch for an input folder (a pipeline of the Watch tab).
    SetWatched { dir: String, on: bool },
    /// Export the table's results as CSV or JSON into the output folder.
    Export { json: bool },
    /// Compression settings changed: every row's status must be recomputed (stale results).
    SettingsChanged,
    /// A `clipforge.toml` was written (a per-bone table saved, an A/B side kept): what applies
    /// to each clip is read again, and rows made otherwise turn stale.
    SettingsFilesChanged,
    /// Forget the multi-selection.
    ClearSelection,
    /// A one-line message under the folder bar (`error`: shown in red).
    Message { text: String, error: bool },
    /// Files or folders were dropped on the window (what [`super::drop::plan_drop`] decided).
    Drop(DropAction),
    /// "Compare presets…" in a clip's detail: open the A/B window for it.
    ComparePresets(RowKey),
}
