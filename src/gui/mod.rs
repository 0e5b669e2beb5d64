//! The egui desktop app. PLACEHOLDER: lands with the app change.

/// Opens the app window; returns an error message when no window can be opened.
pub fn run_app() -> Result<(), String> {
    Err("the desktop app is not built yet".into())
}
