//! Small helpers every view uses: number formatting and where the bundled sample library is.
//! A leaf: it imports nothing from the other `gui` modules.

use eframe::egui;
use std::path::{Path, PathBuf};

/// The bundled sample library: `assets/` of the crate this was built from, else `./assets`.
pub fn bundled_assets_dir() -> Option<PathBuf> {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    if built.is_dir() {
        return Some(built);
    }
    let cwd = PathBuf::from("assets");
    cwd.is_dir().then(|| cwd.canonicalize().unwrap_or(cwd))
}

/// The output folder until the user picks one (where the first start compresses the bundled
/// samples): `clipforge/out` in the user's own cache folder ([`user_cache_dir`]), never a folder
/// shared by every user such as `/tmp`, where another user's files, permissions or a planted
/// symlink would be in the way. `None` (the field starts empty) when there is no such folder.
pub fn default_output_dir() -> Option<PathBuf> {
    user_cache_dir(|k| std::env::var_os(k), std::env::home_dir())
        .map(|d| d.join("clipforge").join("out"))
}

/// The user's cache folder as the platform's conventions place it (those of the `dirs` crate):
/// `%LOCALAPPDATA%` on Windows, `~/Library/Caches` on macOS, else `$XDG_CACHE_HOME` or
/// `~/.cache` (XDG base directories: a relative `$XDG_CACHE_HOME` is ignored). `var` reads the
/// environment, `home` is the home folder; only absolute paths are taken.
pub fn user_cache_dir(
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    let absolute = |p: PathBuf| p.is_absolute().then_some(p);
    let home = home.and_then(absolute);
    if cfg!(windows) {
        var("LOCALAPPDATA").map(PathBuf::from).and_then(absolute)
    } else if cfg!(target_os = "macos") {
        home.map(|h| h.join("Library").join("Caches"))
    } else {
        var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .and_then(absolute)
            .or_else(|| home.map(|h| h.join(".cache")))
    }
}

/// Whether the footer shows the UI frame time (`CLIPFORGE_FRAME_TIME` set; read once).
pub(crate) fn show_frame_time() -> bool {
    static SHOW: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SHOW.get_or_init(|| std::env::var_os("CLIPFORGE_FRAME_TIME").is_some())
}

/// Formats bytes as the CLI does ("12.3 KiB", "4.5 MiB": binary units, see
/// [`crate::anim::limits::format_bytes`]).
pub(crate) fn fmt_bytes(b: u64) -> String {
    crate::anim::limits::format_bytes(b)
}

/// Formats a byte rate as [`fmt_bytes`] does, per second ("5.9 MiB/s").
pub(crate) fn fmt_rate(bytes_per_s: f64) -> String {
    crate::anim::limits::format_byte_rate(bytes_per_s)
}

/// `n` and `noun`, the noun plural unless `n` is 1 ("1 clip", "12 clips"; nouns taking "-s").
pub(crate) fn fmt_counted(n: u64, noun: &str) -> String {
    format!("{} {noun}{}", fmt_count(n), if n == 1 { "" } else { "s" })
}

/// A duration of work done ("12.3 ms", "< 0.1 ms"): the CLI's words
/// ([`crate::pipeline::report::format_ms`]).
pub(crate) fn fmt_ms(ms: f64) -> String {
    crate::pipeline::report::format_ms(ms)
}

/// Seconds for a headline: "1.23 s" from 0.1 s up, in ms below ("30.0 ms", "0.2 ms",
/// "< 0.1 ms"): the CLI's words ([`crate::pipeline::report::format_seconds`]; a gain of 3 ms
/// read "0.00 s", as if there were none).
pub(crate) fn fmt_seconds(s: f64) -> String {
    crate::pipeline::report::format_seconds(s)
}

/// Thousands separators: 12345 → "12,345".
pub(crate) fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Time spent in `AppState::ui` over the last frames (the footer's readout, the frame-time test).
#[derive(Default)]
pub struct FrameStats {
    pub recent_ms: std::collections::VecDeque<f32>,
    pub worst_during_batch_ms: f32,
    pub frames_during_batch: u64,
    pub sum_during_batch_ms: f64,
}

impl FrameStats {
    pub fn push(&mut self, ms: f32, batch_running: bool) {
        if self.recent_ms.len() >= 120 {
            self.recent_ms.pop_front();
        }
        self.recent_ms.push_back(ms);
        if batch_running {
            self.worst_during_batch_ms = self.worst_during_batch_ms.max(ms);
            self.frames_during_batch += 1;
            self.sum_during_batch_ms += ms as f64;
        }
    }
    /// Forgets the previous batch's figures (a new batch starts).
    pub fn reset_batch(&mut self) {
        self.worst_during_batch_ms = 0.0;
        self.frames_during_batch = 0;
        self.sum_during_batch_ms = 0.0;
    }
    pub fn average_ms(&self) -> f32 {
        if self.recent_ms.is_empty() {
            0.0
        } else {
            self.recent_ms.iter().sum::<f32>() / self.recent_ms.len() as f32
        }
    }
    pub fn max_ms(&self) -> f32 {
        self.recent_ms.iter().copied().fold(0.0, f32::max)
    }
}

/// WCAG contrast ratio of two opaque colours (1 to 21; small text needs 4.5).
pub fn contrast(a: egui::Color32, b: egui::Color32) -> f32 {
    let lum = |c: egui::Color32| {
        let lin = |v: u8| {
            let v = v as f32 / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(c.r()) + 0.7152 * lin(c.g()) + 0.0722 * lin(c.b())
    };
    let (x, y) = (lum(a), lum(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

/// `fg` made readable on `bg` (at least 4.5:1) keeping its hue: mixed toward white on a dark
/// background, toward black on a light one, no further than needed. A status colour (red,
/// amber, green) on the table's blue selection was 1.9–3.2:1; a lighter red still says "failed".
pub fn readable_on(fg: egui::Color32, bg: egui::Color32) -> egui::Color32 {
    const NEEDED: f32 = 4.5;
    if contrast(fg, bg) >= NEEDED {
        return fg;
    }
    let toward = if contrast(egui::Color32::WHITE, bg) >= contrast(egui::Color32::BLACK, bg) {
        egui::Color32::WHITE
    } else {
        egui::Color32::BLACK
    };
    let mix = |t: f32| {
        let m = |a: u8, b: u8| (a as f32 + (b as f32 - a as f32) * t).round() as u8;
        egui::Color32::from_rgb(
            m(fg.r(), toward.r()),
            m(fg.g(), toward.g()),
            m(fg.b(), toward.b()),
        )
    };
    (1..=20)
        .map(|i| mix(i as f32 / 20.0))
        .find(|&c| contrast(c, bg) >= NEEDED)
        .unwrap_or(toward)
}

#[cfg(test)]
mod tests {
    #[test]
    fn headline_seconds_never_round_a_gain_to_nothing() {
        use super::fmt_seconds;
        assert_eq!(fmt_seconds(1.234), "1.23 s");
        assert_eq!(fmt_seconds(0.1), "0.10 s");
        assert_eq!(fmt_seconds(0.003), "3.0 ms");
        assert_eq!(fmt_seconds(-0.04), "-40.0 ms");
        assert_eq!(fmt_seconds(0.0002), "0.2 ms");
        assert_eq!(fmt_seconds(0.00002), "< 0.1 ms");
        assert_eq!(fmt_seconds(0.0), "0.0 ms");
    }
}
