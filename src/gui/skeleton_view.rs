//! The skeleton viewer: raw and decompressed poses drawn together in an orbit-able orthographic
//! 3D projection (drag to orbit, scroll to zoom), a time scrubber, play/pause, the worst bone
//! highlighted, and an error magnifier (the error is usually far below a pixel).

use crate::pipeline::clip_detail::ClipDetail as DetailData;
use eframe::egui;
use glam::{Quat, Vec3};

const RAW_COLOR: egui::Color32 = egui::Color32::from_rgb(90, 160, 255);
const LOSSY_COLOR: egui::Color32 = egui::Color32::from_rgb(255, 145, 40);
const WORST_COLOR: egui::Color32 = egui::Color32::from_rgb(235, 60, 60);
const FOCUS_COLOR: egui::Color32 = egui::Color32::YELLOW;
/// The most the play clock moves in one frame, in seconds (see [`time_controls`]).
const MAX_FRAME_STEP_S: f32 = 0.5;

#[derive(Clone, Debug)]
pub struct ViewerState {
    /// Current sample (a whole number; the views draw it).
    pub sample: f32,
    /// The play clock, in samples (fractional, wrapping at the clip's length): `sample` is
    /// its whole part while playing.
    pub clock: f32,
    pub playing: bool,
    pub yaw: f32,
    pub pitch: f32,
    pub zoom: f32,
    /// Bone picked in the per-bone plot (drawn with a ring).
    pub focus_bone: Option<usize>,
    /// Scales the raw → decompressed offset so sub-millimetre errors become visible; set to the
    /// clip's suggested factor when it loads, unless the user changed it.
    pub magnify: f32,
    pub magnify_set: bool,
    /// Bone whose joint is under the pointer (named next to it).
    pub hovered_bone: Option<usize>,
    /// Screen pixels per clip unit in the last frame drawn (for checks of what is visible).
    pub px_per_unit: f32,
    /// Joints of the drawn sample (raw and decompressed, unmagnified) outside the view in the
    /// last frame drawn at zoom 1: 0 when the framing works.
    pub joints_outside_view: usize,
    /// Where the viewer was drawn in the last frame.
    pub view_rect: egui::Rect,
    /// Screen box of the raw joints drawn in the last frame (for checks of how the pose lies).
    pub drawn_bounds: egui::Rect,
    pub show_raw: bool,
    pub show_lossy: bool,
    /// Keep the character centred instead of framing the whole clip; `None`: automatic (on for
    /// clips that travel further than the body's size, see `ClipDetail::travels`).
    pub follow: Option<bool>,
}

impl Default for ViewerState {
    fn default() -> Self {
        Self {
            sample: 0.0,
            clock: 0.0,
            playing: false,
            yaw: 0.6,
            pitch: 0.25,
            zoom: 1.0,
            focus_bone: None,
            magnify: 1.0,
            magnify_set: false,
            hovered_bone: None,
            px_per_unit: 0.0,
            joints_outside_view: 0,
            view_rect: egui::Rect::NOTHING,
            drawn_bounds: egui::Rect::NOTHING,
            show_raw: true,
            show_lossy: true,
            follow: None,
        }
    }
}

/// Orthographic view: yaw around Y, then pitch around X (Y up).
fn project(p: Vec3, yaw: f32, pitch: f32) -> (f32, f32) {
    let (sy, cy) = yaw.sin_cos();
    let x = cy * p.x + sy * p.z;
    let z = -sy * p.x + cy * p.z;
    let (sp, cp) = pitch.sin_cos();
    let y = cp * p.y - sp * z;
    (x, y)
}

/// "suggested ×N": always there (greyed at the suggested factor), since a button that appeared
/// on the first keystroke moved the panels under the pointer.
fn suggested_button(ui: &mut egui::Ui, v: &mut ViewerState, suggested: f32) {
    if ui
        .add_enabled(
            v.magnify != suggested,
            egui::Button::new(format!("suggested ×{suggested}")).small(),
        )
        .on_hover_text("The factor that makes this clip's largest error a few pixels wide")
        .clicked()
    {
        v.magnify = suggested;
        v.magnify_set = false;
    }
}

/// Play/pause and the time slider, and the playback clock: shared by the skeleton and the
/// mesh views (one `ViewerState::sample`).
pub fn time_controls(ui: &mut egui::Ui, v: &mut ViewerState, d: &DetailData) {
    let ns = d.num_samples.max(1);
    let last = (ns - 1) as f32;
    ui.horizontal_wrapped(|ui| {
        let label = if v.playing { "Pause" } else { "Play" };
        if ui.button(label).clicked() {
            v.playing = !v.playing;
        }
        let mut s = v.sample.round() as usize;
        let l = ui.label("Time");
        let r = ui
            .add(
                egui::Slider::new(&mut s, 0..=ns - 1)
                    .custom_formatter(|x, _| d.time_label(x.round().max(0.0) as usize))
                    .custom_parser(|t| {
                        t.trim_end_matches('s')
                            .trim()
                            .parse::<f64>()
                            .ok()
                            .map(|x| x * d.sample_rate as f64)
                    }),
            )
            .labelled_by(l.id);
        if r.changed() {
            v.sample = s as f32;
            v.playing = false;
        }
    });
    if v.playing {
        // The clock keeps the clip's own tempo whatever the frame rate: it used to advance at
        // most 0.1 s a frame, so frames slower than that (a loaded machine, a large mesh, a
        // test's 0.25 s step) played the clip in slow motion. A longer stall (a dragged
        // window, a debugger) still moves it by at most MAX_FRAME_STEP_S.
        if v.sample != v.clock.floor().min(last) {
            // Moved by a scrub or a click since the last frame: play on from there.
            v.clock = v.sample;
        }
        let dt = ui.input(|i| i.stable_dt).min(MAX_FRAME_STEP_S);
        // Each sample is shown for one sample period, the last one too, then it loops.
        v.clock = (v.clock + dt * d.sample_rate) % ns as f32;
        v.sample = v.clock.floor().min(last);
        ui.ctx().request_repaint();
    }
    v.sample = v.sample.clamp(0.0, last);
}

/// The skeleton viewer of a clip's detail: time controls, view options, the poses, the status
/// lines under them.
pub fn viewer_ui(ui: &mut egui::Ui, v: &mut ViewerState, d: &DetailData) {
    time_controls(ui, v, d);
    view_options(ui, v, d);
    let size = egui::vec2(
        ui.available_width(),
        (ui.available_height() - 44.0).max(120.0),
    );
    let (resp, painter) = ui.allocate_painter(size, egui::Sense::click_and_drag());
    v.view_rect = resp.rect;
    painter.rect_filled(resp.rect, 4.0, ui.visuals().extreme_bg_color);
    orbit_and_zoom(ui, &resp, v);
    let nb = d.names.len();
    let si = v.sample.round() as usize;
    if nb == 0 || d.raw_pos.len() < (si + 1) * nb {
        return;
    }
    draw_poses(ui, &resp, &painter, v, d, si);
    let err = d.per_sample_err.get(si).copied().unwrap_or(0.0);
    ui.label(format!(
        "sample {si}/{} · t {} · error {:.4} cm",
        d.num_samples.max(1) - 1,
        d.time_label(si),
        err,
    ))
    .on_hover_text(format!("The offsets are drawn ×{}", v.magnify));
    ui.label(
        egui::RichText::new("drag: orbit · scroll: zoom · hover: name · double-click: reset")
            .small()
            .color(ui.visuals().weak_text_color()),
    );
}

/// Which poses are drawn, the error magnifier, follow, and the suggested factor.
fn view_options(ui: &mut egui::Ui, v: &mut ViewerState, d: &DetailData) {
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut v.show_raw, egui::RichText::new("raw").color(RAW_COLOR));
        ui.checkbox(
            &mut v.show_lossy,
            egui::RichText::new("decompressed").color(LOSSY_COLOR),
        );
        let l = ui.label("error ×");
        let r = ui
            .add(
                egui::DragValue::new(&mut v.magnify)
                    .range(1.0..=10000.0)
                    .speed(5.0),
            )
            .labelled_by(l.id)
            .on_hover_text("Magnify the difference between raw and decompressed poses");
        if r.changed() {
            v.magnify_set = true;
        }
        let mut follow = v.follow.unwrap_or_else(|| d.travels());
        if ui
            .checkbox(&mut follow, "follow")
            .on_hover_text(
                "Keep the character centred (a walk or a run stays large); \
                 off: the whole clip's path in view",
            )
            .changed()
        {
            v.follow = Some(follow);
        }
        suggested_button(ui, v, d.suggested_magnify);
    });
}

/// Drag orbits, scroll zooms, a double click resets the view (not the time, bone or factor).
fn orbit_and_zoom(ui: &egui::Ui, resp: &egui::Response, v: &mut ViewerState) {
    if resp.dragged() {
        let delta = resp.drag_delta();
        v.yaw += delta.x * 0.01;
        v.pitch = (v.pitch + delta.y * 0.01).clamp(-1.5, 1.5);
    }
    if resp.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            v.zoom = (v.zoom * (1.0 + scroll * 0.002)).clamp(0.2, 10.0);
        }
    }
    if resp.double_clicked() {
        *v = ViewerState {
            sample: v.sample,
            focus_bone: v.focus_bone,
            magnify: v.magnify,
            magnify_set: v.magnify_set,
            follow: v.follow,
            ..Default::default()
        };
    }
}

/// Clip space to the screen: the file's scene rotation (as the mesh view turns the mesh),
/// then the orbit's projection, centred and scaled into the view.
struct Screen {
    center: Vec3,
    scene: Quat,
    yaw: f32,
    pitch: f32,
    scale: f32,
    origin: egui::Pos2,
}

impl Screen {
    /// A point of the clip.
    fn at(&self, p: Vec3) -> egui::Pos2 {
        self.at_turned(self.scene * (p - self.center))
    }

    /// A point already turned by the scene rotation, relative to the centre (the grid, which
    /// lies on the turned scene's floor).
    fn at_turned(&self, p: Vec3) -> egui::Pos2 {
        let (x, y) = project(p, self.yaw, self.pitch);
        egui::pos2(
            self.origin.x + x * self.scale,
            self.origin.y - y * self.scale,
        )
    }
}

/// The rotation the file puts above the clip's skeleton (a glTF Z-up node: CesiumMan), taken
/// from its mesh; identity without one.
fn scene_rotation(d: &DetailData) -> Quat {
    match &d.mesh {
        Some(Ok(m)) => m.mesh.scene_rotation,
        _ => Quat::IDENTITY,
    }
}

/// Sample `si`: the ground grid, the raw and (magnified) decompressed poses, the worst and the
/// picked bone, and the bone under the pointer.
fn draw_poses(
    ui: &egui::Ui,
    resp: &egui::Response,
    painter: &egui::Painter,
    v: &mut ViewerState,
    d: &DetailData,
    si: usize,
) {
    let rect = resp.rect;
    let nb = d.names.len();
    let raw = &d.raw_pos[si * nb..(si + 1) * nb];
    let lossy: Option<Vec<Vec3>> = d.lossy_pos.as_ref().map(|l| {
        l[si * nb..(si + 1) * nb]
            .iter()
            .zip(raw)
            .map(|(q, p)| *p + (*q - *p) * v.magnify)
            .collect()
    });
    // Fixed framing over the whole clip (not this pose): the sphere around every joint of every
    // sample fits the view from any orbit angle. Following: the sphere around this pose, the
    // body's size over the whole clip (so the zoom does not pump from pose to pose).
    let following = v.follow.unwrap_or_else(|| d.travels());
    let (center, radius) = if following {
        d.follow_framing(si)
    } else {
        d.framing()
    };
    let scale = 0.48 * rect.width().min(rect.height()) / radius * v.zoom;
    v.px_per_unit = scale;
    let screen = Screen {
        center,
        scene: scene_rotation(d),
        yaw: v.yaw,
        pitch: v.pitch,
        scale,
        origin: rect.center(),
    };
    let painter = painter.with_clip_rect(rect);
    v.joints_outside_view = raw
        .iter()
        .chain(d.lossy_pos.iter().flat_map(|l| &l[si * nb..(si + 1) * nb]))
        .filter(|p| !rect.contains(screen.at(**p)))
        .count();
    v.drawn_bounds =
        egui::Rect::from_points(&raw.iter().map(|p| screen.at(*p)).collect::<Vec<_>>());
    // The floor: the lowest corner of the clip's box, turned (exact for the quarter turns of
    // an axis change, a bound otherwise).
    let floor = (0..8)
        .map(|c| {
            let pick = |bit: usize, lo: f32, hi: f32| if c >> bit & 1 == 0 { lo } else { hi };
            let (lo, hi) = (d.bounds_min, d.bounds_max);
            let corner = Vec3::new(
                pick(0, lo.x, hi.x),
                pick(1, lo.y, hi.y),
                pick(2, lo.z, hi.z),
            );
            (screen.scene * (corner - center)).y
        })
        .fold(f32::INFINITY, f32::min);
    draw_grid(ui, &painter, &screen, floor, radius);

    let draw = |pose: &[Vec3], color: egui::Color32, width: f32, dot: f32| {
        for b in 0..nb {
            let p = d.parents[b];
            if p != crate::anim::NO_PARENT {
                painter.line_segment(
                    [screen.at(pose[p as usize]), screen.at(pose[b])],
                    egui::Stroke::new(width, color),
                );
            }
        }
        for q in pose {
            painter.circle_filled(screen.at(*q), dot, color);
        }
    };
    if v.show_raw {
        draw(raw, RAW_COLOR, 3.0, 3.5);
    }
    if v.show_lossy
        && let Some(l) = &lossy
    {
        draw(l, LOSSY_COLOR, 1.5, 2.5);
    }
    draw_marked_bones(&painter, &screen, v, d, raw);
    let lossy_pts = lossy.as_deref().filter(|_| v.show_lossy).unwrap_or(&[]);
    let raw_pts = if v.show_raw { raw } else { &[] };
    hover_bone(ui, resp, &painter, &screen, v, d, raw_pts, lossy_pts);
}

/// The ground grid under the clip (at `floor`, the turned scene's lowest y over all samples,
/// relative to the view's centre).
fn draw_grid(ui: &egui::Ui, painter: &egui::Painter, screen: &Screen, floor: f32, radius: f32) {
    let center = Vec3::ZERO;
    let grid_col = ui.visuals().weak_text_color().gamma_multiply(0.35);
    let step = radius / 4.0;
    for k in -4..=4 {
        let o = k as f32 * step;
        let a = Vec3::new(center.x + o, floor, center.z - 4.0 * step);
        let b = Vec3::new(center.x + o, floor, center.z + 4.0 * step);
        painter.line_segment(
            [screen.at_turned(a), screen.at_turned(b)],
            egui::Stroke::new(1.0, grid_col),
        );
        let a = Vec3::new(center.x - 4.0 * step, floor, center.z + o);
        let b = Vec3::new(center.x + 4.0 * step, floor, center.z + o);
        painter.line_segment(
            [screen.at_turned(a), screen.at_turned(b)],
            egui::Stroke::new(1.0, grid_col),
        );
    }
}

/// The worst bone (red ring, named) and the bone picked in the per-bone plot (yellow ring).
fn draw_marked_bones(
    painter: &egui::Painter,
    screen: &Screen,
    v: &ViewerState,
    d: &DetailData,
    raw: &[Vec3],
) {
    let nb = d.names.len();
    let font = egui::FontId::proportional(12.0);
    if let Some(w) = d.worst_bone.filter(|&w| w < nb) {
        let p = screen.at(raw[w]);
        painter.circle_stroke(p, 7.0, egui::Stroke::new(2.0, WORST_COLOR));
        painter.text(
            p + egui::vec2(9.0, -9.0),
            egui::Align2::LEFT_BOTTOM,
            format!("worst: {}", d.names[w]),
            font.clone(),
            WORST_COLOR,
        );
    }
    if let Some(f) = v.focus_bone.filter(|&f| f < nb && Some(f) != d.worst_bone) {
        let p = screen.at(raw[f]);
        painter.circle_stroke(p, 6.0, egui::Stroke::new(2.0, FOCUS_COLOR));
        painter.text(
            p + egui::vec2(9.0, 9.0),
            egui::Align2::LEFT_TOP,
            &d.names[f],
            font,
            FOCUS_COLOR,
        );
    }
}

/// The bone under the pointer (the nearest drawn joint within a few pixels): named with its
/// error beside the pointer; a click picks it.
#[allow(clippy::too_many_arguments)] // one call site; a struct for it would only rename them
fn hover_bone(
    ui: &egui::Ui,
    resp: &egui::Response,
    painter: &egui::Painter,
    screen: &Screen,
    v: &mut ViewerState,
    d: &DetailData,
    raw_pts: &[Vec3],
    lossy_pts: &[Vec3],
) {
    let nb = d.names.len();
    let rect = resp.rect;
    v.hovered_bone = resp.hover_pos().and_then(|m| {
        (0..nb)
            .flat_map(|b| {
                [raw_pts.get(b), lossy_pts.get(b)]
                    .into_iter()
                    .flatten()
                    .map(move |p| (b, screen.at(*p).distance(m)))
            })
            .filter(|&(_, dist)| dist <= 10.0)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(b, _)| b)
    });
    let (Some(b), Some(m)) = (v.hovered_bone, resp.hover_pos()) else {
        return;
    };
    let text = format!(
        "{} · max error {:.4} cm",
        d.names[b],
        d.per_bone_err.get(b).copied().unwrap_or(0.0)
    );
    let font = egui::FontId::proportional(12.0);
    let galley = painter.layout_no_wrap(text, font, ui.visuals().strong_text_color());
    let pos = egui::pos2(
        (m.x + 12.0).min(rect.right() - galley.size().x - 6.0),
        (m.y - 12.0 - galley.size().y).max(rect.top() + 2.0),
    );
    let bg = egui::Rect::from_min_size(pos, galley.size()).expand(3.0);
    painter.rect_filled(bg, 3.0, ui.visuals().window_fill);
    painter.rect_stroke(
        bg,
        3.0,
        ui.visuals().window_stroke,
        egui::StrokeKind::Outside,
    );
    painter.galley(pos, galley, ui.visuals().strong_text_color());
    if resp.clicked() {
        v.focus_bone = Some(b);
    }
}
