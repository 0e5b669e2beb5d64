//! The project editor (left panel): roots, include dirs, defines, compile_commands.json or
//! several configurations, std and compiler, with the folder / file pickers.

use super::{HeadersSettings, HeadersState, Pick};
use crate::gui::headers_job::{CompilerPick, ConfigEntry, HeadersProject, parse_defines};
use eframe::egui;
use std::path::Path;

impl HeadersState {
    pub(super) fn project_ui(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        let p = &mut s.project;
        ui.heading("Project");
        ui.add_space(4.0);
        ui.label(egui::RichText::new("Source roots").strong())
            .on_hover_text("Scanned recursively for .c/.cc/.cpp/.cxx/.m/.mm translation units");
        path_list(ui, "Root", &mut p.roots, false, None);
        ui.horizontal(|ui| {
            if ui.button("Add root").clicked() {
                p.roots.push(String::new());
            }
            if ui
                .button("Browse…")
                .on_hover_text("Folder dialog")
                .clicked()
            {
                let start = p.roots.last().cloned().unwrap_or_default();
                self.open_dialog(Pick::Root, &start);
            }
        });
        ui.add_space(6.0);
        ui.label(egui::RichText::new("Include dirs (-I, in order)").strong());
        let p = &mut s.project;
        let base = p.roots.iter().map(|r| r.trim()).find(|r| !r.is_empty());
        let base = base.map(std::path::PathBuf::from);
        path_list(ui, "-I", &mut p.include_dirs, true, base.as_deref());
        ui.horizontal(|ui| {
            if ui.button("Add dir").clicked() {
                p.include_dirs.push(String::new());
            }
            if ui
                .button("Browse… ")
                .on_hover_text("Folder dialog")
                .clicked()
            {
                let start = p
                    .include_dirs
                    .last()
                    .or(p.roots.first())
                    .cloned()
                    .unwrap_or_default();
                self.open_dialog(Pick::Include, &start);
            }
        });
        ui.add_space(6.0);
        ui.label(egui::RichText::new("System dirs (-isystem, in order)").strong())
            .on_hover_text(
                "Searched after the -I dirs; the compiler's own system dirs come after these",
            );
        let p = &mut s.project;
        path_list(ui, "-isystem", &mut p.system_dirs, true, base.as_deref());
        if ui.button("Add system dir").clicked() {
            p.system_dirs.push(String::new());
        }
        ui.add_space(6.0);
        let l = ui.label(egui::RichText::new("Defines (one per line)").strong());
        ui.add(
            egui::TextEdit::multiline(&mut p.defines)
                .hint_text("NAME\nNAME=VALUE\n-UNAME")
                .desired_rows(3)
                .desired_width(f32::INFINITY)
                .code_editor(),
        )
        .labelled_by(l.id);
        if let Err(e) = parse_defines(&p.defines) {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        ui.add_space(6.0);
        let l = ui.label(egui::RichText::new("compile_commands.json (optional)").strong());
        let mut browse = false;
        ui.horizontal(|ui| {
            let w = (ui.available_width() - 90.0).max(80.0);
            ui.add(
                egui::TextEdit::singleline(&mut p.compile_commands)
                    .hint_text("TUs and flags from a build")
                    .desired_width(w),
            )
            .labelled_by(l.id);
            if ui
                .button("Browse…  ")
                .on_hover_text("File dialog")
                .clicked()
            {
                browse = true;
            }
            if !p.compile_commands.is_empty()
                && ui.small_button("x").on_hover_text("Clear").clicked()
            {
                p.compile_commands.clear();
            }
        });
        if browse {
            let start = s.project.compile_commands.clone();
            self.open_dialog(Pick::CompDb, &start);
        }
        let p = &mut s.project;
        let cc = p.compile_commands.trim();
        if !cc.is_empty() && !Path::new(cc).is_file() {
            ui.colored_label(ui.visuals().error_fg_color, "File not found");
        } else if !cc.is_empty() {
            ui.weak("Translation units and their flags come from this file; the include dirs and defines above are added to each.");
        }
        ui.add_space(6.0);
        configs_ui(ui, &mut p.configs);
        ui.add_space(6.0);
        options_ui(ui, p);
        ui.checkbox(&mut p.disk_cache, "On-disk cache")
            .on_hover_text(
                "Keep the scan in the user cache dir so the next start rescans only what changed",
            );
        ui.add_space(10.0);
        ui.separator();
        ui.label(egui::RichText::new("Reading the numbers").strong());
        ui.weak(
            "Total Parsed: the lines the compiler reads, summed over every translation unit \
             (each TU with all it includes). Blowup: Total Parsed / Total Lines. \
             Contributed: a file's lines × the TUs that reach it; the headers to slim down or \
             include less often are at the top. Project files only: system headers are followed \
             for their macros but not counted.",
        );
    }
}

/// The standards, the history period and the compiler, in a two-column grid.
fn options_ui(ui: &mut egui::Ui, p: &mut HeadersProject) {
    egui::Grid::new("hh_opts")
        .num_columns(2)
        .spacing([8.0, 4.0])
        .show(ui, |ui| {
            let l = ui.label("C++ std:");
            ui.add(
                egui::TextEdit::singleline(&mut p.std)
                    .hint_text("compiler default, e.g. c++17")
                    .desired_width(140.0),
            )
            .labelled_by(l.id);
            ui.end_row();
            let l = ui.label("C std:");
            ui.add(
                egui::TextEdit::singleline(&mut p.cstd)
                    .hint_text("compiler default, e.g. c11")
                    .desired_width(140.0),
            )
            .labelled_by(l.id);
            ui.end_row();
            let l = ui.label("History:");
            ui.add(
                egui::TextEdit::singleline(&mut p.churn_period)
                    .hint_text("off, or a period: 90d, 12w")
                    .desired_width(140.0),
            )
            .labelled_by(l.id)
            .on_hover_text(
                "Rebuild cost from git history: per file, the commits of the period that \
                 changed it times the TUs reaching it (the Rebuilds column); the PCH advice \
                 then keeps out headers that change often",
            );
            ui.end_row();
            let l = ui.label("Compiler:");
            egui::ComboBox::from_id_salt("hh_compiler")
                .selected_text(match p.compiler {
                    CompilerPick::Auto => "Auto (c++, g++, clang++)",
                    CompilerPick::None => "None (built-in macros)",
                    CompilerPick::Named => "Named",
                })
                .show_ui(ui, |ui| {
                    ui.selectable_value(
                        &mut p.compiler,
                        CompilerPick::Auto,
                        "Auto (c++, g++, clang++)",
                    );
                    ui.selectable_value(
                        &mut p.compiler,
                        CompilerPick::None,
                        "None (built-in macros)",
                    );
                    ui.selectable_value(&mut p.compiler, CompilerPick::Named, "Named");
                })
                .response
                .labelled_by(l.id)
                .on_hover_text("Asked for its predefined macros and system include dirs");
            ui.end_row();
            if p.compiler == CompilerPick::Named {
                let l = ui.label("Name:");
                ui.add(
                    egui::TextEdit::singleline(&mut p.compiler_name)
                        .hint_text("g++-12, clang++ …")
                        .desired_width(140.0),
                )
                .labelled_by(l.id);
                ui.end_row();
            }
        });
}

/// The project's build configurations: name and compile_commands.json per row, add / remove.
fn configs_ui(ui: &mut egui::Ui, configs: &mut Vec<ConfigEntry>) {
    ui.label(egui::RichText::new("Configurations (optional)").strong())
        .on_hover_text(
            "Several builds of the tree (debug / release, Linux / Windows) scanned in one run, \
             each from its compile_commands.json; the totals are summed and the table shows \
             each configuration's TU count",
        );
    let mut remove = None;
    for (i, c) in configs.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            let l = ui.label(format!("Config {} name:", i + 1));
            ui.add(
                egui::TextEdit::singleline(&mut c.name)
                    .hint_text("e.g. debug")
                    .desired_width(90.0),
            )
            .labelled_by(l.id);
            if ui
                .small_button("Remove")
                .on_hover_text("Remove this configuration")
                .clicked()
            {
                remove = Some(i);
            }
        });
        ui.horizontal(|ui| {
            let l = ui.label(format!("Config {} file:", i + 1));
            ui.add(
                egui::TextEdit::singleline(&mut c.compile_commands)
                    .hint_text("path/to/compile_commands.json")
                    .desired_width(ui.available_width().max(80.0)),
            )
            .labelled_by(l.id);
        });
        let path = c.compile_commands.trim();
        if !path.is_empty() && !Path::new(path).is_file() {
            ui.colored_label(ui.visuals().error_fg_color, "File not found");
        }
    }
    if let Some(i) = remove {
        configs.remove(i);
    }
    if ui.button("Add configuration").clicked() {
        configs.push(ConfigEntry::default());
    }
    if configs
        .iter()
        .any(|c| !c.compile_commands.trim().is_empty())
    {
        ui.weak("The configurations replace the compile_commands.json above.");
    }
}

/// An editable list of paths (one labelled field each, red when the folder is missing), with
/// remove and, when `movable`, up / down buttons (the search order matters). `base`: where a
/// relative path is taken from (the first source root for include dirs).
fn path_list(
    ui: &mut egui::Ui,
    what: &str,
    list: &mut Vec<String>,
    movable: bool,
    base: Option<&Path>,
) {
    let mut remove = None;
    let mut swap = None;
    let n = list.len();
    for (i, item) in list.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            let l = ui.label(format!("{what} {}:", i + 1));
            let buttons = if movable { 84.0 } else { 30.0 };
            let typed = std::path::PathBuf::from(item.trim());
            let resolved = match base {
                Some(b) if typed.is_relative() => b.join(&typed),
                _ => typed.clone(),
            };
            let missing = !item.trim().is_empty() && !resolved.is_dir();
            let mut te = egui::TextEdit::singleline(item)
                .hint_text("folder path")
                .desired_width((ui.available_width() - buttons).max(80.0));
            if missing {
                te = te.text_color(ui.visuals().error_fg_color);
            }
            let r = ui.add(te).labelled_by(l.id);
            if missing {
                r.on_hover_text(format!("Folder not found: {}", resolved.display()));
            } else if base.is_some() && typed.is_relative() && !item.trim().is_empty() {
                r.on_hover_text(format!(
                    "{} (relative to the first root)",
                    resolved.display()
                ));
            }
            if movable {
                if arrow_button(ui, i > 0, true)
                    .on_hover_text("Search earlier")
                    .clicked()
                {
                    swap = Some((i - 1, i));
                }
                if arrow_button(ui, i + 1 < n, false)
                    .on_hover_text("Search later")
                    .clicked()
                {
                    swap = Some((i, i + 1));
                }
            }
            if ui.small_button("x").on_hover_text("Remove").clicked() {
                remove = Some(i);
            }
        });
    }
    if let Some((a, b)) = swap {
        list.swap(a, b);
    }
    if let Some(i) = remove {
        list.remove(i);
    }
}

/// A small button with a triangle pointing up or down (no arrow glyphs in the default fonts).
fn arrow_button(ui: &mut egui::Ui, enabled: bool, up: bool) -> egui::Response {
    let r = ui.add_enabled(
        enabled,
        egui::Button::new("")
            .small()
            .min_size(egui::vec2(18.0, 18.0)),
    );
    r.widget_info(|| {
        egui::WidgetInfo::labeled(
            egui::Role::Button,
            enabled,
            if up { "Move up" } else { "Move down" },
        )
    });
    let c = r.rect.center();
    let (a, b) = if up { (-4.0, 3.0) } else { (4.0, -3.0) };
    let color = if enabled {
        ui.visuals().strong_text_color()
    } else {
        ui.visuals().weak_text_color()
    };
    ui.painter().add(egui::Shape::convex_polygon(
        vec![
            egui::pos2(c.x, c.y + a),
            egui::pos2(c.x + 4.5, c.y + b),
            egui::pos2(c.x - 4.5, c.y + b),
        ],
        color,
        egui::Stroke::NONE,
    ));
    r
}
