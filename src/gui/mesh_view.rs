//! The clip detail's mesh view: the clip's skinned mesh by the raw pose and by the decompressed
//! pose, overlaid or side by side, each vertex of the decompressed mesh coloured by its distance
//! to the raw one (cm; a colour scale with the threshold marked), the worst vertex named, and
//! play/scrub shared with the skeleton view (one [`ViewerState::sample`]).
//!
//! The view only draws: the mesh is read and measured by the clip detail job
//! ([`crate::pipeline::mesh::MeshDetail`]), and each shown sample is skinned by the mesh worker
//! ([`MeshPlayer`], the runtime's `SkinJob` on its own thread). Drawing projects the skinned
//! vertices and sorts the triangles back to front (egui has no depth buffer).

use super::skeleton_view::{ViewerState, time_controls};
use crate::pipeline::clip_detail::ClipDetail as DetailData;
use crate::pipeline::mesh::{MeshDetail, MeshFrame, MeshPlayer, MeshViewError};
use crate::pipeline::report::ClipReport;
use eframe::egui;
use glam::{Quat, Vec3};
use std::sync::Arc;

const RAW_MESH_COLOR: egui::Color32 = egui::Color32::from_rgb(150, 170, 200);
const WORST_COLOR: egui::Color32 = egui::Color32::from_rgb(235, 60, 60);
/// The view's least height (px): in a shorter panel the detail scrolls.
const MIN_VIEW_HEIGHT: f32 = 150.0;
/// The share of the view's width the legend and the worst vertex may take (they wrap in it).
const OVERLAY_SHARE: f32 = 0.5;
/// The colour scale runs from 0 to this many thresholds (the threshold sits at its middle).
const SCALE_THRESHOLDS: f32 = 2.0;

/// How the two skinnings are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshMode {
    /// The decompressed mesh coloured by error, the raw mesh as a faint layer over it.
    Overlay,
    /// The raw mesh on the left, the decompressed one coloured by error on the right.
    SideBySide,
}

/// The mesh view's state: the measured mesh, its worker and last frame, and the camera.
pub struct MeshView {
    detail: Option<Arc<MeshDetail>>,
    player: Option<MeshPlayer>,
    pub frame: Option<Arc<MeshFrame>>,
    pub error: Option<String>,
    pub mode: MeshMode,
    pub show_raw: bool,
    pub yaw: f32,
    pub pitch: f32,
    pub zoom: f32,
    /// Back-to-front triangle order for (sample, yaw, pitch, side-by-side), reused while the
    /// picture does not change.
    order: Option<((usize, u32, u32), Vec<u32>)>,
    /// Where the mesh was drawn in the last frame (checks of what is visible).
    pub view_rect: egui::Rect,
    /// Vertices drawn in the last frame (both meshes).
    pub vertices_drawn: usize,
    /// Where the drawn vertices fell on screen in the last frame (checks of the framing).
    pub drawn_bounds: egui::Rect,
    /// Width and height the legend and the worst vertex took over the view's top left corner in
    /// the last frame.
    overlay_size: egui::Vec2,
}

impl Default for MeshView {
    fn default() -> Self {
        Self {
            detail: None,
            player: None,
            frame: None,
            error: None,
            mode: MeshMode::Overlay,
            show_raw: false,
            yaw: 0.6,
            pitch: 0.25,
            zoom: 1.0,
            order: None,
            view_rect: egui::Rect::NOTHING,
            vertices_drawn: 0,
            drawn_bounds: egui::Rect::NOTHING,
            overlay_size: egui::Vec2::ZERO,
        }
    }
}

/// Colour of a vertex error on the scale: green at 0, yellow at the threshold, red at
/// [`SCALE_THRESHOLDS`] thresholds and beyond.
pub fn error_color(error_cm: f32, threshold_cm: f32) -> egui::Color32 {
    let t = if threshold_cm > 0.0 {
        (error_cm / (SCALE_THRESHOLDS * threshold_cm)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let t = if t.is_nan() { 1.0 } else { t };
    let lerp = |a: [f32; 3], b: [f32; 3], u: f32| {
        egui::Color32::from_rgb(
            (a[0] + (b[0] - a[0]) * u) as u8,
            (a[1] + (b[1] - a[1]) * u) as u8,
            (a[2] + (b[2] - a[2]) * u) as u8,
        )
    };
    let (green, yellow, red) = (
        [60.0, 190.0, 90.0],
        [240.0, 220.0, 60.0],
        [225.0, 45.0, 45.0],
    );
    if t < 0.5 {
        lerp(green, yellow, t * 2.0)
    } else {
        lerp(yellow, red, (t - 0.5) * 2.0)
    }
}

/// Orthographic view: yaw around Y, then pitch around X (Y up), as the skeleton viewer; the
/// third value is the depth (larger: nearer the eye).
fn project(p: Vec3, yaw: f32, pitch: f32) -> Vec3 {
    let (sy, cy) = yaw.sin_cos();
    let x = cy * p.x + sy * p.z;
    let z = -sy * p.x + cy * p.z;
    let (sp, cp) = pitch.sin_cos();
    Vec3::new(x, cp * p.y - sp * z, sp * p.y + cp * z)
}

impl MeshView {
    /// Shows `detail` (the selected clip's mesh), or nothing; a new detail restarts the worker.
    pub fn set_detail(&mut self, detail: Option<Result<Arc<MeshDetail>, Arc<MeshViewError>>>) {
        let (detail, error) = match detail {
            Some(Ok(d)) => (Some(d), None),
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, None),
        };
        let same = match (&self.detail, &detail) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.player = None;
            self.frame = None;
            self.order = None;
        }
        self.detail = detail;
        self.error = error;
    }

    /// The measured mesh on show, if any.
    pub fn detail(&self) -> Option<&Arc<MeshDetail>> {
        self.detail.as_ref()
    }

    /// The line naming the worst vertex (what the view prints under the legend).
    pub fn worst_text(d: &MeshDetail, sample_rate: f32) -> Option<String> {
        let s = d.error_cm.as_ref()?;
        Some(format!(
            "Worst vertex: #{} ({}) · {:.4} cm at {:.2} s (sample {})",
            s.worst_vertex,
            d.worst_bone.as_deref().unwrap_or("—"),
            s.max,
            s.worst_sample as f64 / sample_rate.max(1e-6) as f64,
            s.worst_sample
        ))
    }

    /// What the view says in place of the worst vertex when there is no vertex error: why, from
    /// the row's `report` (a refused clip was compressed and refused: "compress it" would be
    /// untrue). A refusal names its floor and what to raise the threshold to, as the clip
    /// list's hover does, in few words: the detail's first line gives the whole message, and
    /// this sits in the corner of the view.
    pub fn no_error_text(report: Option<&ClipReport>) -> String {
        use crate::pipeline::report::{three_digits, three_digits_up};
        if let Some(p) = report.and_then(|r| r.below_precision.as_ref()) {
            format!(
                "Refused, no vertex error: below float32 precision (floor {} cm, bone '{}'). \
                 Raise the threshold to at least {} cm.",
                three_digits(p.floor_cm),
                p.bone,
                three_digits_up(p.min_threshold_cm as f64)
            )
        } else if report.is_some_and(|r| r.error.is_some()) {
            "No vertex error: the clip failed to compress (the error is above).".into()
        } else {
            "Compress this clip to see its vertex error.".into()
        }
    }

    /// Draws the view; `threshold`: the clip's error threshold (cm); `report`: its row's last
    /// report, if any.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        v: &mut ViewerState,
        d: &DetailData,
        threshold: f64,
        report: Option<&ClipReport>,
    ) {
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        let Some(detail) = self.detail.clone() else {
            return;
        };
        time_controls(ui, v, d);
        // The worker: started on first show, asked for the sample on screen.
        let player = self.player.get_or_insert_with(|| {
            let ctx = ui.ctx().clone();
            MeshPlayer::start(detail.clone(), 1.0, move || ctx.request_repaint())
        });
        match player.poll() {
            Some(Ok(f)) => self.frame = Some(f),
            Some(Err(e)) => self.error = Some(e.to_string()),
            None => {}
        }
        let sample = v.sample.round() as usize;
        player.request(sample);

        let threshold = threshold as f32;
        ui.horizontal_wrapped(|ui| {
            ui.selectable_value(&mut self.mode, MeshMode::Overlay, "overlay")
                .on_hover_text("The decompressed mesh coloured by its error, in one view");
            ui.selectable_value(&mut self.mode, MeshMode::SideBySide, "side by side")
                .on_hover_text("Raw mesh on the left, decompressed (coloured) on the right");
            if self.mode == MeshMode::Overlay {
                ui.checkbox(&mut self.show_raw, "raw over it")
                    .on_hover_text("Draw the raw mesh as a faint layer over the coloured one");
            }
            ui.weak(format!(
                "{} · {} vertices",
                detail.mesh.name,
                detail.mesh.num_vertices()
            ));
        });
        for w in &detail.mesh.warnings {
            ui.add(
                egui::Label::new(egui::RichText::new(w).color(ui.visuals().warn_fg_color)).wrap(),
            );
        }
        // The view takes the column's remaining height (one line is kept for the sample under
        // it; never below MIN_VIEW_HEIGHT: a shorter panel scrolls), the legend and the worst
        // vertex sit over its top left corner, and the mesh fits the rest: at 1280×800 the
        // legend's and the worst vertex's own rows used to leave the mesh ~90 px.
        let line = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
        let size = egui::vec2(
            ui.available_width(),
            (ui.available_height() - line).max(MIN_VIEW_HEIGHT),
        );
        let (resp, painter) = ui.allocate_painter(size, egui::Sense::click_and_drag());
        let resp = resp.on_hover_text("drag: orbit · scroll: zoom · double-click: reset");
        self.draw(ui, resp, painter, &detail, threshold, sample);
        // The overlay keeps to the left part of the view, so that a standing body can use the
        // view's whole height beside it (the mesh takes the better of beside and below).
        let overlay = egui::Rect::from_min_size(
            self.view_rect.min + egui::vec2(6.0, 6.0),
            egui::vec2(
                OVERLAY_SHARE * self.view_rect.width(),
                self.view_rect.height() - 12.0,
            ),
        );
        let mut top = ui.new_child(
            egui::UiBuilder::new()
                .max_rect(overlay)
                .layout(egui::Layout::top_down(egui::Align::Min)),
        );
        legend(&mut top, threshold, detail.error_cm.is_some());
        match MeshView::worst_text(&detail, d.sample_rate) {
            Some(t) => {
                top.horizontal_wrapped(|ui| {
                    ui.label(egui::RichText::new(t).color(WORST_COLOR));
                    if let Some(s) = &detail.error_cm
                        && ui
                            .small_button("go to")
                            .on_hover_text("Show the sample where the worst vertex is")
                            .clicked()
                    {
                        v.sample = s.worst_sample as f32;
                        v.playing = false;
                    }
                });
            }
            None => {
                top.add(egui::Label::new(
                    egui::RichText::new(Self::no_error_text(report)).weak(),
                ));
            }
        }
        // Next frame's mesh keeps clear of what the overlay took.
        self.overlay_size = top.min_rect().max - self.view_rect.min + egui::vec2(4.0, 4.0);
        let now = detail
            .error_cm
            .as_ref()
            .and_then(|s| s.per_sample_max.get(sample))
            .map_or(String::new(), |e| format!(" · max vertex error {e:.4} cm"));
        ui.label(format!(
            "sample {sample}/{} · t {}{now}",
            d.num_samples.max(1) - 1,
            d.time_label(sample)
        ));
    }

    /// Drag orbits, scroll zooms, a double click resets the camera.
    fn orbit(&mut self, ui: &egui::Ui, resp: &egui::Response) {
        if resp.dragged() {
            let delta = resp.drag_delta();
            self.yaw += delta.x * 0.01;
            self.pitch = (self.pitch + delta.y * 0.01).clamp(-1.5, 1.5);
        }
        if resp.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                self.zoom = (self.zoom * (1.0 + scroll * 0.002)).clamp(0.2, 10.0);
            }
        }
        if resp.double_clicked() {
            (self.yaw, self.pitch, self.zoom) = (0.6, 0.25, 1.0);
        }
    }

    /// Where the mesh (or the two, side by side) is drawn in `rect`: beside the overlay
    /// (legend, worst vertex) or below it, whichever fits the mesh larger (a standing body
    /// beside, a lying one below).
    fn views(&self, rect: egui::Rect, detail: &MeshDetail) -> Vec<egui::Rect> {
        let split = |room: egui::Rect| -> Vec<egui::Rect> {
            if self.mode == MeshMode::SideBySide {
                let (l, r) = room.split_left_right_at_fraction(0.5);
                vec![l, r]
            } else {
                vec![room]
            }
        };
        let ov = self.overlay_size.min(egui::vec2(
            rect.width() * OVERLAY_SHARE + 10.0,
            rect.height() / 2.0,
        ));
        let beside = egui::Rect::from_min_max(rect.min + egui::vec2(ov.x, 0.0), rect.max);
        let below = egui::Rect::from_min_max(rect.min + egui::vec2(0.0, ov.y), rect.max);
        let scene = detail.mesh.scene_rotation;
        let fit = |room: egui::Rect| fit_scale(detail, scene, self.yaw, self.pitch, split(room)[0]);
        split(if fit(beside) > fit(below) {
            beside
        } else {
            below
        })
    }

    fn draw(
        &mut self,
        ui: &mut egui::Ui,
        resp: egui::Response,
        painter: egui::Painter,
        detail: &MeshDetail,
        threshold: f32,
        sample: usize,
    ) {
        let rect = resp.rect;
        self.view_rect = rect;
        painter.rect_filled(rect, 4.0, ui.visuals().extreme_bg_color);
        self.orbit(ui, &resp);
        self.vertices_drawn = 0;
        self.drawn_bounds = egui::Rect::NOTHING;
        let Some(frame) = self.frame.clone() else {
            ui.put(rect, egui::Spinner::new());
            return;
        };
        let painter = painter.with_clip_rect(rect);
        let side = self.mode == MeshMode::SideBySide;
        // The file's scene rotation (a glTF Z-up node above the skeleton) turns the clip's
        // object space upright for drawing; distances, hence the colours, do not change.
        let scene = detail.mesh.scene_rotation;
        let views = self.views(rect, detail);
        let key = (frame.sample, self.yaw.to_bits(), self.pitch.to_bits());
        if self.order.as_ref().is_none_or(|(k, _)| *k != key) {
            self.order = Some((
                key,
                back_to_front(
                    &frame.raw,
                    &detail.mesh.triangles,
                    scene,
                    self.yaw,
                    self.pitch,
                ),
            ));
        }
        let order = self
            .order
            .as_ref()
            .map(|(_, o)| o.as_slice())
            .unwrap_or(&[]);
        let coloured: Vec<egui::Color32> = if frame.error_cm.is_empty() {
            vec![RAW_MESH_COLOR; frame.raw.len()]
        } else {
            frame
                .error_cm
                .iter()
                .map(|&e| error_color(e, threshold))
                .collect()
        };
        let light = Vec3::new(0.3, 0.6, 0.75).normalize();
        let cam = Camera {
            scene,
            center: frame.center,
            scale: fit_scale(detail, scene, self.yaw, self.pitch, views[0]) * self.zoom,
            yaw: self.yaw,
            pitch: self.pitch,
        };
        let lossy = frame.lossy.as_deref().unwrap_or(&frame.raw);
        let layers: Vec<Layer> = if side {
            vec![
                (views[0], frame.raw.as_slice(), None, 255),
                (views[1], lossy, Some(coloured.as_slice()), 255),
            ]
        } else if self.show_raw {
            vec![
                (views[0], lossy, Some(coloured.as_slice()), 255),
                (views[0], frame.raw.as_slice(), None, 70),
            ]
        } else {
            vec![(views[0], lossy, Some(coloured.as_slice()), 255)]
        };
        for (view, pos, colors, alpha) in layers {
            let mut mesh = egui::Mesh::default();
            mesh.vertices.reserve(pos.len());
            for (i, p) in pos.iter().enumerate() {
                let n = frame.normals.get(i).map_or(Vec3::Z, |n| Vec3::from(*n));
                // Lambert with the light fixed to the camera, two-sided.
                let nv = project(scene * n, self.yaw, self.pitch);
                let shade = 0.35 + 0.65 * nv.dot(light).abs();
                let base = colors.map_or(RAW_MESH_COLOR, |c| c[i]);
                let c = egui::Color32::from_rgba_unmultiplied(
                    (base.r() as f32 * shade) as u8,
                    (base.g() as f32 * shade) as u8,
                    (base.b() as f32 * shade) as u8,
                    alpha,
                );
                let at = cam.to_screen(Vec3::from(*p), view);
                self.drawn_bounds.extend_with(at);
                mesh.colored_vertex(at, c);
            }
            mesh.indices.extend_from_slice(order);
            self.vertices_drawn += pos.len();
            painter.add(egui::Shape::mesh(mesh));
            if side {
                let label = if colors.is_some() {
                    "decompressed"
                } else {
                    "raw"
                };
                painter.text(
                    view.left_top() + egui::vec2(6.0, 4.0),
                    egui::Align2::LEFT_TOP,
                    label,
                    egui::FontId::proportional(12.0),
                    ui.visuals().weak_text_color(),
                );
            }
        }
        // The worst vertex, ringed on the decompressed mesh and named.
        if let Some(s) = &detail.error_cm
            && let Some(p) = lossy.get(s.worst_vertex)
        {
            let at = cam.to_screen(Vec3::from(*p), *views.last().unwrap_or(&rect));
            let bone = detail.worst_bone.as_deref().unwrap_or("");
            ring_worst(
                &painter,
                at,
                rect,
                &format!("worst: #{} {bone}", s.worst_vertex),
            );
        }
        hover_vertex(
            resp,
            &cam,
            *views.last().unwrap_or(&rect),
            detail,
            &frame,
            sample,
        );
    }
}

/// The worst vertex's ring at `at`, its label beside it inside `rect`.
fn ring_worst(painter: &egui::Painter, at: egui::Pos2, rect: egui::Rect, text: &str) {
    painter.circle_stroke(at, 7.0, egui::Stroke::new(2.0, WORST_COLOR));
    let galley = painter.layout_no_wrap(
        text.to_string(),
        egui::FontId::proportional(12.0),
        WORST_COLOR,
    );
    // Right of the ring, or left of it where the label would leave the view.
    let x = if at.x + 9.0 + galley.size().x <= rect.right() {
        at.x + 9.0
    } else {
        at.x - 9.0 - galley.size().x
    };
    let y = (at.y - 9.0 - galley.size().y).max(rect.top());
    // On a dark plate: the label may lie over the (red) mesh.
    let plate = egui::Rect::from_min_size(egui::pos2(x, y), galley.size()).expand(2.0);
    painter.rect_filled(plate, 2.0, egui::Color32::from_black_alpha(170));
    painter.galley(egui::pos2(x, y), galley, WORST_COLOR);
}

/// Screen pixels per clip unit that fit the mesh's box (its largest extent over the clip,
/// turned by the scene rotation and the orbit) into `view`, with a margin.
fn fit_scale(detail: &MeshDetail, scene: Quat, yaw: f32, pitch: f32, view: egui::Rect) -> f32 {
    let h = detail.half_extents;
    let mut ext = egui::Vec2::ZERO;
    for k in 0..8 {
        let sign = |bit: usize| if k >> bit & 1 == 0 { -1.0 } else { 1.0 };
        let q = project(
            scene * (h * Vec3::new(sign(0), sign(1), sign(2))),
            yaw,
            pitch,
        );
        ext = ext.max(egui::vec2(q.x.abs(), q.y.abs()));
    }
    // A flat or empty box: fit by its radius instead of dividing by zero.
    let r = detail.radius.max(1e-6);
    let ext = ext.max(egui::Vec2::splat(r * 0.05));
    0.92 * (view.width() / (2.0 * ext.x)).min(view.height() / (2.0 * ext.y))
}

/// The vertex under the pointer (on the decompressed mesh) and its error at this sample.
fn hover_vertex(
    resp: egui::Response,
    cam: &Camera,
    view: egui::Rect,
    detail: &MeshDetail,
    frame: &MeshFrame,
    sample: usize,
) {
    let Some(m) = resp.hover_pos().filter(|_| !frame.error_cm.is_empty()) else {
        return;
    };
    let lossy = frame.lossy.as_deref().unwrap_or(&frame.raw);
    let hit = lossy
        .iter()
        .enumerate()
        .map(|(i, p)| (i, cam.to_screen(Vec3::from(*p), view).distance(m)))
        .filter(|&(_, d)| d <= 8.0)
        .min_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((i, _)) = hit {
        resp.on_hover_text_at_pointer(format!(
            "vertex #{i} ({}) · {:.4} cm at sample {sample}",
            detail.mesh.main_bone_name(i).unwrap_or("—"),
            frame.error_cm[i]
        ));
    }
}

/// One mesh drawn: where, its vertices, their colours (None: the raw mesh's grey) and alpha.
type Layer<'a> = (egui::Rect, &'a [[f32; 3]], Option<&'a [egui::Color32]>, u8);

struct Camera {
    scene: Quat,
    center: Vec3,
    scale: f32,
    yaw: f32,
    pitch: f32,
}

impl Camera {
    fn to_screen(&self, p: Vec3, view: egui::Rect) -> egui::Pos2 {
        let q = project(self.scene * (p - self.center), self.yaw, self.pitch);
        egui::pos2(
            view.center().x + q.x * self.scale,
            view.center().y - q.y * self.scale,
        )
    }
}

/// Triangle indices sorted far to near (painter's algorithm) for the given orbit.
fn back_to_front(
    pos: &[[f32; 3]],
    tris: &[[u32; 3]],
    scene: Quat,
    yaw: f32,
    pitch: f32,
) -> Vec<u32> {
    let depth: Vec<f32> = pos
        .iter()
        .map(|p| project(scene * Vec3::from(*p), yaw, pitch).z)
        .collect();
    let mut keyed: Vec<(f32, u32)> = tris
        .iter()
        .enumerate()
        .map(|(i, t)| (t.iter().map(|&v| depth[v as usize]).sum::<f32>(), i as u32))
        .collect();
    keyed.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    keyed.iter().flat_map(|&(_, i)| tris[i as usize]).collect()
}

/// The colour scale: 0 → [`SCALE_THRESHOLDS`] × threshold, the threshold marked.
fn legend(ui: &mut egui::Ui, threshold: f32, measured: bool) {
    ui.horizontal_wrapped(|ui| {
        ui.label("vertex error (cm):");
        let (rect, _) = ui.allocate_exact_size(egui::vec2(100.0, 14.0), egui::Sense::hover());
        let painter = ui.painter_at(rect.expand2(egui::vec2(0.0, 6.0)));
        let mut m = egui::Mesh::default();
        let steps = 16;
        for k in 0..=steps {
            let u = k as f32 / steps as f32;
            let c = error_color(u * SCALE_THRESHOLDS * threshold, threshold);
            let x = rect.left() + u * rect.width();
            m.colored_vertex(egui::pos2(x, rect.top()), c);
            m.colored_vertex(egui::pos2(x, rect.bottom()), c);
            if k > 0 {
                let i = 2 * k as u32;
                m.add_triangle(i - 2, i - 1, i);
                m.add_triangle(i - 1, i + 1, i);
            }
        }
        painter.add(egui::Shape::mesh(m));
        let tx = rect.left() + rect.width() / SCALE_THRESHOLDS;
        painter.line_segment(
            [
                egui::pos2(tx, rect.top() - 4.0),
                egui::pos2(tx, rect.bottom() + 4.0),
            ],
            egui::Stroke::new(2.0, ui.visuals().strong_text_color()),
        );
        ui.label(format!(
            "0 · threshold {threshold} cm (mark) · ≥ {} cm",
            SCALE_THRESHOLDS * threshold
        ))
        .on_hover_text(if measured {
            "Each vertex of the decompressed mesh is coloured by its distance to the raw mesh"
        } else {
            "Not compressed yet: the mesh shows the raw pose only"
        });
    });
}
