//! The "Headers" tab: the C/C++ header profiler's view arrives with its own change.

use eframe::egui;

pub fn headers_ui(ui: &mut egui::Ui) {
    ui.heading("Headers");
    ui.label("The C/C++ header profiler's view arrives with its own change.");
    ui.weak("Meanwhile it runs from the command line: `clipforge headers --help`.");
}
