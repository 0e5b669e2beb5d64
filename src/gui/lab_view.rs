//! The "Lab" tab (issue 16): the three codec families of `anim::lab` side by side, for one clip
//! (size, error over time, bytes and cache lines per pose, context, decode time per access
//! pattern) and over a batch (size vs decode cost per codec, and a table).
//!
//! [`LabView`] owns the tab's state. The lab itself runs on background threads
//! ([`super::jobs::start_lab_clip`], [`super::jobs::start_lab_batch`]); `ui` only starts, polls
//! and draws.

use super::jobs::{self, LabBatchJob, LabBatchRow, LabClipJob, LabClipOutcome};
use super::model::{Library, RowKey, RowStatus};
use super::util::{fmt_bytes, fmt_count, fmt_counted};
use crate::anim::CompressionSettings;
use crate::anim::lab::{self, ClipLab, CodecResult};
use eframe::egui;
use egui_extras::{Column, TableBuilder};
use egui_plot::{Bar, BarChart, HLine, HoverPosition, Legend, Line, Plot, PlotPoints, Points};
use std::sync::Arc;

/// The codecs in the order the lab measures them, with their colours.
pub const CODECS: [(&str, egui::Color32); 3] = [
    (lab::UNIFORM, egui::Color32::from_rgb(90, 160, 255)),
    (lab::KEY_REDUCTION, egui::Color32::from_rgb(255, 145, 40)),
    (lab::SORTED_STREAM, egui::Color32::from_rgb(120, 200, 120)),
];
const THRESHOLD_COLOR: egui::Color32 = egui::Color32::from_rgb(230, 70, 70);

/// A codec's colour in the figures, the plots and their key (tests find its bars by it).
pub fn codec_color(codec: &str) -> egui::Color32 {
    CODECS
        .iter()
        .find(|(c, _)| *c == codec)
        .map_or(egui::Color32::GRAY, |(_, col)| *col)
}

/// Per clip or per batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LabMode {
    #[default]
    Clip,
    Batch,
}

/// The access pattern the batch chart's decode cost is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DecodePattern {
    #[default]
    Forward30,
    Forward60,
    Backward,
    Random,
}

impl DecodePattern {
    pub const ALL: [DecodePattern; 4] = [
        DecodePattern::Forward30,
        DecodePattern::Forward60,
        DecodePattern::Backward,
        DecodePattern::Random,
    ];

    pub fn text(self) -> &'static str {
        match self {
            DecodePattern::Forward30 => "forward 30 Hz",
            DecodePattern::Forward60 => "forward 60 Hz",
            DecodePattern::Backward => "backward",
            DecodePattern::Random => "random seeks",
        }
    }

    pub fn ns(self, c: &CodecResult) -> f64 {
        match self {
            DecodePattern::Forward30 => c.decode_ns.forward_30hz,
            DecodePattern::Forward60 => c.decode_ns.forward_60hz,
            DecodePattern::Backward => c.decode_ns.backward,
            DecodePattern::Random => c.decode_ns.random,
        }
    }
}

/// One codec's series of the batch chart: `[decode ns per pose, KiB]` per clip, and each point's clip.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartSeries {
    pub codec: &'static str,
    pub points: Vec<[f64; 2]>,
    pub clips: Vec<String>,
}

/// The batch chart's points: one per clip per codec (clips that failed have none).
pub fn chart_series(rows: &[LabBatchRow], pattern: DecodePattern) -> Vec<ChartSeries> {
    CODECS
        .iter()
        .map(|(codec, _)| {
            let mut s = ChartSeries {
                codec,
                points: Vec::new(),
                clips: Vec::new(),
            };
            for r in rows {
                let Ok(lab) = &r.result else { continue };
                if let Some(c) = lab.codecs.iter().find(|c| c.codec == *codec) {
                    s.points.push([pattern.ns(c), c.bytes as f64 / 1024.0]);
                    s.clips.push(r.label.clone());
                }
            }
            s
        })
        .collect()
}

/// Per codec over the batch: total bytes and mean decode ns (the chosen pattern).
fn batch_totals(
    rows: &[LabBatchRow],
    pattern: DecodePattern,
) -> Vec<(&'static str, usize, f64, f64, usize)> {
    CODECS
        .iter()
        .map(|(codec, _)| {
            let (mut bytes, mut ns, mut err, mut n) = (0usize, 0.0, 0.0f64, 0usize);
            for r in rows {
                if let Ok(lab) = &r.result
                    && let Some(c) = lab.codecs.iter().find(|c| c.codec == *codec)
                {
                    bytes += c.bytes;
                    ns += pattern.ns(c);
                    err = err.max(c.max_error_cm);
                    n += 1;
                }
            }
            (
                *codec,
                bytes,
                if n > 0 { ns / n as f64 } else { 0.0 },
                err,
                n,
            )
        })
        .collect()
}

fn fmt_ns(ns: f64) -> String {
    if ns <= 0.0 {
        "–".into()
    } else if ns < 10_000.0 {
        format!("{ns:.0} ns")
    } else {
        format!("{:.1} µs", ns / 1000.0)
    }
}

/// The Lab tab's state: the clip it shows, its jobs and their results.
#[derive(Default)]
pub struct LabView {
    pub mode: LabMode,
    /// The clip of the per-clip view (the Clips tab's selection until one is picked here).
    pub selected: Option<RowKey>,
    pub clip_job: Option<LabClipJob>,
    pub clip: Option<Arc<LabClipOutcome>>,
    /// Why the last run on a clip failed, or that it was cancelled.
    pub clip_message: Option<(String, bool)>,
    pub batch_job: Option<LabBatchJob>,
    pub batch_rows: Vec<LabBatchRow>,
    pub batch_message: Option<(String, bool)>,
    pub pattern: DecodePattern,
}

impl LabView {
    /// True while a lab job runs.
    pub fn busy(&self) -> bool {
        self.clip_job.is_some() || self.batch_job.is_some()
    }

    /// Takes what the jobs finished (cheap: channel reads only).
    pub fn poll(&mut self) {
        if let Some(job) = &self.clip_job
            && let Some(r) = job.try_take()
        {
            self.clip_job = None;
            match r {
                Ok(o) => {
                    self.clip = Some(Arc::new(o));
                    self.clip_message = None;
                }
                Err(e) => self.clip_message = Some((e, true)),
            }
        }
        if let Some(job) = &self.batch_job {
            let (rows, finished) = job.drain();
            self.batch_rows.extend(rows);
            if finished {
                let n = self.batch_rows.len();
                let failed = self.batch_rows.iter().filter(|r| r.result.is_err()).count();
                let cancelled = job.cancel.is_cancelled();
                let took = job.started.elapsed().as_secs_f64();
                self.batch_job = None;
                let clips = fmt_counted(n as u64, "clip");
                self.batch_message = Some(if cancelled {
                    (format!("Cancelled: {clips} measured"), false)
                } else if failed > 0 {
                    (format!("{clips} in {took:.1} s, {failed} failed"), true)
                } else {
                    (format!("{clips} in {took:.1} s"), false)
                });
            }
        }
    }

    /// Cancels both jobs. The clip view keeps the result it showed before the run; the batch
    /// keeps the rows measured so far.
    pub fn cancel(&mut self) {
        if self.clip_job.take().is_some() {
            self.clip_message = Some(("Cancelled".into(), false));
        }
        if let Some(job) = self.batch_job.take() {
            job.cancel.cancel();
            let (rows, _) = job.drain();
            self.batch_rows.extend(rows);
            self.batch_message = Some((
                format!(
                    "Cancelled: {} of {} measured",
                    fmt_count(self.batch_rows.len() as u64),
                    fmt_counted(job.total as u64, "clip")
                ),
                false,
            ));
        }
    }

    /// Runs the lab on `key` (replacing a run on another clip).
    /// With the clip's effective settings (`settings`: the Clips tab's, what applies where no
    /// folder file or `[[clip]]` table says otherwise).
    pub fn start_clip(
        &mut self,
        key: RowKey,
        lib: &Library,
        settings: &CompressionSettings,
        ctx: egui::Context,
    ) {
        self.selected = Some(key.clone());
        self.clip_message = None;
        let (opts, text) = jobs::clip_lab_options(lib, &key, settings);
        self.clip_job = Some(jobs::start_lab_clip(key, opts, text, ctx));
    }

    /// Runs the lab over `clips` (`(key, label)`), forgetting the previous batch.
    /// Each clip with its own effective settings (see [`Self::start_clip`]).
    pub fn start_batch(
        &mut self,
        clips: Vec<(RowKey, String)>,
        lib: &Library,
        settings: &CompressionSettings,
        ctx: egui::Context,
    ) {
        if self.batch_job.is_some() || clips.is_empty() {
            return;
        }
        self.batch_rows.clear();
        self.batch_message = None;
        let clips = clips
            .into_iter()
            .map(|(k, l)| {
                let (opts, _) = jobs::clip_lab_options(lib, &k, settings);
                (k, l, opts)
            })
            .collect();
        self.batch_job = Some(jobs::start_lab_batch(clips, ctx));
    }

    /// Draws the tab. `clips_selected` is the Clips tab's selection (the default clip).
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        lib: &Library,
        clips_selected: Option<&RowKey>,
        settings: &CompressionSettings,
    ) {
        self.poll();
        if self.selected.is_none() {
            self.selected = clips_selected
                .cloned()
                .or_else(|| labelled_clips(lib).into_iter().next().map(|(k, _)| k));
        }
        ui.horizontal(|ui| {
            ui.heading("Codec lab");
            ui.separator();
            ui.selectable_value(&mut self.mode, LabMode::Clip, "Per clip");
            ui.selectable_value(&mut self.mode, LabMode::Batch, "Per batch");
            ui.separator();
            ui.label("each clip with its own settings (its folder's clipforge.toml, a kept choice, else the Clips tab's)");
        });
        ui.separator();
        match self.mode {
            LabMode::Clip => self.clip_ui(ui, lib, settings),
            LabMode::Batch => self.batch_ui(ui, lib, settings),
        }
    }

    fn clip_ui(&mut self, ui: &mut egui::Ui, lib: &Library, settings: &CompressionSettings) {
        let clips = labelled_clips(lib);
        if clips.is_empty() {
            ui.add_space(20.0);
            ui.label("No clips: open a folder in the Clips tab.");
            return;
        }
        let label_of = |k: &RowKey| {
            clips
                .iter()
                .find(|(c, _)| c == k)
                .map_or_else(|| k.clip.clone(), |(_, l)| l.clone())
        };
        let mut picked = None;
        ui.horizontal(|ui| {
            let shown = self.selected.as_ref().map_or(String::new(), &label_of);
            let label = ui.label("Clip:");
            egui::ComboBox::from_id_salt("cf_lab_clip")
                .selected_text(shown)
                .width(260.0)
                .height(400.0)
                .show_ui(ui, |ui| {
                    for (k, l) in &clips {
                        if ui
                            .selectable_label(self.selected.as_ref() == Some(k), l)
                            .clicked()
                        {
                            picked = Some(k.clone());
                        }
                    }
                })
                .response
                .labelled_by(label.id);
            let running = self.clip_job.is_some();
            if ui
                .add_enabled(!running, egui::Button::new("Run lab on this clip"))
                .on_hover_text("Compress with the three codecs, measure errors, memory touched and decode times")
                .clicked()
                && let Some(k) = self.selected.clone()
            {
                picked = Some(k);
            }
            if let Some(job) = &self.clip_job {
                ui.spinner();
                ui.label(format!(
                    "{}… {:.1} s",
                    job.stage().text(),
                    job.started.elapsed().as_secs_f32()
                ));
                if ui.button("Cancel").clicked() {
                    self.cancel();
                }
            }
            if let Some((m, err)) = &self.clip_message {
                if *err {
                    ui.colored_label(ui.visuals().error_fg_color, m);
                } else {
                    ui.label(m);
                }
            }
        });
        if let Some(k) = picked {
            // Picking a clip runs the lab on it at once (cancelling a run on another clip).
            self.start_clip(k, lib, settings, ui.ctx().clone());
        }
        let Some(out) = self.clip.clone() else {
            ui.add_space(20.0);
            // With a clip in the box "Pick a clip" read as if none were picked.
            match (&self.selected, self.clip_job.is_some()) {
                (_, true) => {}
                (Some(k), false) => {
                    ui.label(format!(
                        "Press \u{201c}Run lab on this clip\u{201d} to compare the codecs on {}.",
                        label_of(k)
                    ));
                }
                (None, false) => {
                    ui.label("Pick a clip: the lab runs on it at once.");
                }
            }
            return;
        };
        ui.add_space(4.0);
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new(label_of(&out.key)).strong());
            ui.label(format!(
                "{} bones, {} samples at {} Hz, threshold {} cm",
                out.lab.bones, out.lab.samples, out.sample_rate, out.lab.threshold_cm
            ));
            if self.selected.as_ref() != Some(&out.key) {
                ui.weak("(the last clip measured)");
            }
        });
        ui.add(egui::Label::new(format!("Ran with {}", out.settings)).wrap());
        ui.add_space(4.0);
        // The figures and the decode times side by side, the error over time below at full width.
        ui.horizontal_top(|ui| {
            let r = ui.vertical(|ui| figures_grid(ui, &out.lab)).response;
            ui.add_space(16.0);
            ui.vertical(|ui| {
                ui.label(egui::RichText::new("Decode time per pose").strong());
                let w = (ui.available_width() - 4.0).max(160.0);
                decode_plot(ui, &out.lab, [w, (r.rect.height() - 22.0).max(140.0)]);
            });
        });
        ui.add_space(8.0);
        ui.label(egui::RichText::new("Error over time (max over bones at each sample)").strong());
        let avail = ui.available_size();
        error_plot(ui, &out, [avail.x.max(200.0), (avail.y - 24.0).max(140.0)]);
        ui.weak(
            "key_reduction and sorted_stream store the same keys in two layouts: their curves coincide (sorted_stream dashed).",
        );
    }

    fn batch_ui(&mut self, ui: &mut egui::Ui, lib: &Library, settings: &CompressionSettings) {
        let clips = labelled_clips(lib);
        ui.horizontal(|ui| {
            let running = self.batch_job.is_some();
            if ui
                .add_enabled(
                    !running && !clips.is_empty(),
                    egui::Button::new(format!(
                        "Run lab on {}",
                        fmt_counted(clips.len() as u64, "clip")
                    )),
                )
                .on_hover_text("Every clip the Clips tab's table shows (its filter applies), one after the other")
                .clicked()
            {
                self.start_batch(clips.clone(), lib, settings, ui.ctx().clone());
            }
            if let Some(job) = &self.batch_job {
                let done = job.done.load(std::sync::atomic::Ordering::Relaxed);
                let frac = if job.total == 0 {
                    0.0
                } else {
                    done as f32 / job.total as f32
                };
                ui.add(
                    egui::ProgressBar::new(frac)
                        .desired_width(220.0)
                        .text(format!("{done} / {} clips", job.total)),
                );
                if ui.button("Cancel").clicked() {
                    self.cancel();
                }
            }
            if let Some((m, err)) = &self.batch_message {
                if *err {
                    ui.colored_label(ui.visuals().error_fg_color, m);
                } else {
                    ui.label(m);
                }
            }
            ui.separator();
            egui::ComboBox::from_label("decode cost")
                .selected_text(self.pattern.text())
                .show_ui(ui, |ui| {
                    for p in DecodePattern::ALL {
                        ui.selectable_value(&mut self.pattern, p, p.text());
                    }
                });
        });
        if self.batch_rows.is_empty() {
            ui.add_space(20.0);
            ui.label(if clips.is_empty() {
                "No clips: open a folder in the Clips tab."
            } else {
                "Run the lab to compare the codecs over these clips."
            });
            return;
        }
        let avail = ui.available_size();
        let h = ((avail.y - 40.0) * 0.55).max(160.0);
        let series = chart_series(&self.batch_rows, self.pattern);
        ui.horizontal_top(|ui| {
            ui.vertical(|ui| {
                ui.label(
                    egui::RichText::new("Size vs decode cost, a point per clip per codec").strong(),
                );
                batch_chart(ui, &series, self.pattern, [(avail.x * 0.62).max(220.0), h]);
            });
            ui.vertical(|ui| {
                ui.label(egui::RichText::new("Per codec").strong());
                egui::Grid::new("cf_lab_totals")
                    .striped(true)
                    .num_columns(5)
                    .show(ui, |ui| {
                        ui.strong("codec");
                        ui.strong("clips");
                        ui.strong("total size");
                        ui.strong("mean decode");
                        ui.strong("max error");
                        ui.end_row();
                        for (codec, bytes, ns, err, n) in
                            batch_totals(&self.batch_rows, self.pattern)
                        {
                            ui.colored_label(codec_color(codec), codec);
                            ui.label(n.to_string());
                            ui.label(fmt_bytes(bytes as u64));
                            ui.label(fmt_ns(ns));
                            ui.label(format!("{err:.5} cm"));
                            ui.end_row();
                        }
                    });
            });
        });
        ui.add_space(6.0);
        batch_table(ui, &self.batch_rows);
    }
}

/// The clips the Clips tab's table shows (its filter and sort), minus unreadable ones.
fn labelled_clips(lib: &Library) -> Vec<(RowKey, String)> {
    lib.view
        .iter()
        .filter_map(|&i| lib.rows.get(i))
        .filter(|r| {
            !matches!(r.status, RowStatus::Unreadable(_)) && !lib.special.contains(&r.key.path)
        })
        .map(|r| (r.key.clone(), r.label.clone()))
        .collect()
}

/// The figures, a column per codec.
fn figures_grid(ui: &mut egui::Ui, lab: &ClipLab) {
    type Cell = fn(&CodecResult) -> String;
    let rows: [(&str, Cell); 11] = [
        ("size", |c| fmt_bytes(c.bytes as u64)),
        ("keys", |c| fmt_count(c.keys as u64)),
        ("max error", |c| format!("{:.5} cm", c.max_error_cm)),
        ("bytes touched / pose", |c| {
            format!("{:.0} B", c.bytes_touched_per_pose)
        }),
        ("cache lines / pose", |c| {
            format!("{:.1}", c.cache_lines_per_pose)
        }),
        ("context", |c| fmt_bytes(c.context_bytes as u64)),
        ("decode, forward 30 Hz", |c| {
            fmt_ns(c.decode_ns.forward_30hz)
        }),
        ("decode, forward 60 Hz", |c| {
            fmt_ns(c.decode_ns.forward_60hz)
        }),
        ("decode, backward", |c| fmt_ns(c.decode_ns.backward)),
        ("decode, random seeks", |c| fmt_ns(c.decode_ns.random)),
        ("size vs uniform", |_| String::new()),
    ];
    let uniform = lab
        .codecs
        .iter()
        .find(|c| c.codec == lab::UNIFORM)
        .map(|c| c.bytes);
    egui::Grid::new("cf_lab_figures")
        .striped(true)
        .num_columns(lab.codecs.len() + 1)
        .min_col_width(110.0)
        .show(ui, |ui| {
            ui.label("");
            for c in &lab.codecs {
                ui.label(
                    egui::RichText::new(&c.codec)
                        .strong()
                        .color(codec_color(&c.codec)),
                );
            }
            ui.end_row();
            for (name, cell) in rows {
                ui.label(name);
                for c in &lab.codecs {
                    if name == "size vs uniform" {
                        ui.label(uniform.filter(|&u| u > 0).map_or(String::new(), |u| {
                            format!("{:.2}×", c.bytes as f64 / u as f64)
                        }));
                    } else {
                        ui.label(cell(c));
                    }
                }
                ui.end_row();
            }
        });
}

fn error_plot(ui: &mut egui::Ui, out: &LabClipOutcome, size: [f32; 2]) {
    let rate = if out.sample_rate > 0.0 {
        out.sample_rate as f64
    } else {
        1.0
    };
    let threshold = out.lab.threshold_cm as f64;
    Plot::new("cf_lab_err_time")
        .width(size[0])
        .height(size[1])
        .allow_scroll(false)
        .include_y(0.0)
        .include_y(threshold * 1.3)
        .x_axis_label("time (s)")
        .y_axis_label("max error (cm)")
        .legend(Legend::default())
        .label_formatter(|h| {
            Some(match h {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position: p,
                    ..
                } => format!("{plot_name}\nt = {:.3} s\n{:.5} cm", p.x, p.y),
                HoverPosition::Elsewhere { position: p } => {
                    format!("t = {:.3} s\n{:.5} cm", p.x, p.y)
                }
            })
        })
        .show(ui, |pui| {
            for (codec, errs) in &out.series {
                let pts: PlotPoints = errs
                    .iter()
                    .enumerate()
                    .map(|(i, &e)| [i as f64 / rate, e])
                    .collect();
                let mut line = Line::new(codec.as_str(), pts).color(codec_color(codec));
                line = if codec == lab::SORTED_STREAM {
                    line.style(egui_plot::LineStyle::dashed_loose()).width(2.0)
                } else {
                    line.width(2.5)
                };
                pui.line(line);
            }
            pui.hline(HLine::new("threshold", threshold).color(THRESHOLD_COLOR));
        });
}

/// The height of a row of a plot's key (egui_plot's legend: a line of body text and spacing).
const KEY_ROW_PX: f32 = 20.0;

/// Grouped bars: an access pattern per group, a bar per codec.
fn decode_plot(ui: &mut egui::Ui, lab: &ClipLab, size: [f32; 2]) {
    let n = lab.codecs.len().max(1) as f64;
    let width = 0.8 / n;
    let charts: Vec<BarChart> = lab
        .codecs
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let bars = DecodePattern::ALL
                .iter()
                .enumerate()
                .map(|(pi, p)| {
                    let x = pi as f64 + (ci as f64 - (n - 1.0) / 2.0) * width;
                    Bar::new(x, p.ns(c)).width(width * 0.95).name(format!(
                        "{}, {}",
                        c.codec,
                        p.text()
                    ))
                })
                .collect();
            BarChart::new(c.codec.as_str(), bars).color(codec_color(&c.codec))
        })
        .collect();
    // Room above the tallest bar for the key (a row per codec, top right, over the "random"
    // group): sorted_stream's random seeks (tens of µs beside ~1 µs) ran up to the frame under it.
    let tallest = lab
        .codecs
        .iter()
        .flat_map(|c| DecodePattern::ALL.iter().map(|p| p.ns(c)))
        .fold(0.0, f64::max);
    let key_px = KEY_ROW_PX * n as f32 + 16.0;
    // What the bars have: the plot less its x axis' labels.
    let bars_px = (size[1] - 28.0).max(key_px + 40.0);
    let top = tallest * f64::from(bars_px) / f64::from(bars_px - key_px);
    Plot::new("cf_lab_decode")
        .width(size[0])
        .height(size[1])
        .allow_scroll(false)
        .allow_drag(false)
        .include_y(0.0)
        .include_y(top)
        .y_axis_label("ns per pose")
        .legend(Legend::default())
        .x_axis_formatter(|m, _| {
            let i = m.value.round();
            if (m.value - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            match DecodePattern::ALL.get(i as usize) {
                Some(DecodePattern::Forward30) => "fwd 30 Hz".into(),
                Some(DecodePattern::Forward60) => "fwd 60 Hz".into(),
                Some(DecodePattern::Backward) => "backward".into(),
                Some(DecodePattern::Random) => "random".into(),
                None => String::new(),
            }
        })
        .x_grid_spacer(|_| {
            (0..4)
                .map(|i| egui_plot::GridMark {
                    value: i as f64,
                    step_size: 1.0,
                })
                .collect()
        })
        .show(ui, |pui| {
            for c in charts {
                pui.bar_chart(c);
            }
        });
}

fn batch_chart(ui: &mut egui::Ui, series: &[ChartSeries], pattern: DecodePattern, size: [f32; 2]) {
    let names: Vec<(&'static str, Vec<String>)> =
        series.iter().map(|s| (s.codec, s.clips.clone())).collect();
    Plot::new("cf_lab_batch_chart")
        .width(size[0])
        .height(size[1])
        .allow_scroll(false)
        .include_x(0.0)
        .include_y(0.0)
        .x_axis_label(format!("decode ns per pose, {}", pattern.text()))
        .y_axis_label("size (KiB)")
        .legend(Legend::default())
        .label_formatter(move |h| match h {
            HoverPosition::NearDataPoint {
                plot_name,
                position: p,
                index,
            } => {
                let clip = names
                    .iter()
                    .find(|(c, _)| c == plot_name)
                    .and_then(|(_, n)| n.get(*index))
                    .map_or("", String::as_str);
                Some(format!(
                    "{clip}\n{plot_name}\n{:.1} KiB, {:.0} ns",
                    p.y, p.x
                ))
            }
            HoverPosition::Elsewhere { .. } => None,
        })
        .show(ui, |pui| {
            for s in series {
                pui.points(
                    Points::new(s.codec, s.points.clone())
                        .color(codec_color(s.codec))
                        .radius(3.5),
                );
            }
        });
}

/// A row per clip per codec.
fn batch_table(ui: &mut egui::Ui, rows: &[LabBatchRow]) {
    let lines: Vec<(&LabBatchRow, Option<&CodecResult>)> = rows
        .iter()
        .flat_map(|r| match &r.result {
            Ok(lab) => lab.codecs.iter().map(|c| (r, Some(c))).collect::<Vec<_>>(),
            Err(_) => vec![(r, None)],
        })
        .collect();
    let text_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
    TableBuilder::new(ui)
        .id_salt("cf_lab_table")
        .striped(true)
        .resizable(true)
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
        .column(Column::initial(200.0).at_least(80.0).clip(true))
        .column(Column::initial(110.0).at_least(80.0))
        .columns(Column::initial(88.0).at_least(60.0), 8)
        .column(Column::remainder().at_least(80.0))
        .min_scrolled_height(0.0)
        .header(text_h, |mut header| {
            for t in [
                "Clip",
                "Codec",
                "Size",
                "Max error",
                "B / pose",
                "Lines / pose",
                "Context",
                "Fwd 30 Hz",
                "Fwd 60 Hz",
                "Backward",
                "Random",
            ] {
                header.col(|ui| {
                    ui.strong(t);
                });
            }
        })
        .body(|body| {
            body.rows(text_h, lines.len(), |mut row| {
                let (r, c) = lines[row.index()];
                row.col(|ui| {
                    ui.label(&r.label)
                        .on_hover_text(r.key.path.display().to_string());
                });
                match (c, &r.result) {
                    (Some(c), _) => {
                        row.col(|ui| {
                            ui.colored_label(codec_color(&c.codec), &c.codec);
                        });
                        for text in [
                            fmt_bytes(c.bytes as u64),
                            format!("{:.5} cm", c.max_error_cm),
                            format!("{:.0}", c.bytes_touched_per_pose),
                            format!("{:.1}", c.cache_lines_per_pose),
                            fmt_bytes(c.context_bytes as u64),
                            fmt_ns(c.decode_ns.forward_30hz),
                            fmt_ns(c.decode_ns.forward_60hz),
                            fmt_ns(c.decode_ns.backward),
                            fmt_ns(c.decode_ns.random),
                        ] {
                            row.col(|ui| {
                                ui.label(text);
                            });
                        }
                    }
                    (None, Err(e)) => {
                        row.col(|ui| {
                            ui.colored_label(ui.visuals().error_fg_color, "failed");
                        });
                        row.col(|ui| {
                            ui.label(e).on_hover_text(e);
                        });
                        for _ in 0..8 {
                            row.col(|_| {});
                        }
                    }
                    (None, Ok(_)) => {}
                }
            });
        });
}
