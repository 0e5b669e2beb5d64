//! The text filter of the app's tables (Clips, Headers): plain text or a regular expression.
//!
//! What the user typed decides the mode, so the filter is one `String` wherever it is stored:
//! - `/pattern/` is always a regex (the `.*` toggle button adds or removes the slashes);
//! - text with regex metacharacters that parses as a regex is one too, and a row also matches
//!   when it holds the text literally (so `walk(1)` still finds "walk(1)");
//! - anything else is a plain substring. All matching ignores case.
//!
//! An invalid regex filters nothing out and its error is shown next to the field.

use eframe::egui;
use regex::{Regex, RegexBuilder};

/// Bounds what a typed pattern may cost to compile (the regex crate's own limit is 10 MiB).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// How a filter text matches.
#[derive(Clone, Debug)]
enum Mode {
    /// Nothing typed, or an invalid forced regex: every row passes.
    All,
    /// Lower-cased substring.
    Plain(String),
    /// A regex; with the literal text too when the mode was guessed from metacharacters.
    Regex(Regex, Option<String>),
}

/// A compiled filter (build it when the text changes, not per row).
#[derive(Clone, Debug)]
pub struct TextFilter {
    mode: Mode,
    error: Option<String>,
}

/// True when `text` is a `/…/` forced regex.
pub fn is_forced_regex(text: &str) -> bool {
    let t = text.trim();
    t.len() >= 2 && t.starts_with('/') && t.ends_with('/')
}

/// The `.*` toggle: wraps the text in slashes or takes them off.
pub fn toggle_regex(text: &str) -> String {
    let t = text.trim();
    if is_forced_regex(t) {
        t[1..t.len() - 1].to_string()
    } else {
        format!("/{t}/")
    }
}

fn has_metacharacters(s: &str) -> bool {
    s.chars().any(|c| "\\.+*?()|[]{}^$".contains(c))
}

fn compile(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| readable_regex_error(&e))
}

/// The regex crate's message is a multi-line picture with carets; keep its last line (the
/// reason) so it fits next to the field.
fn readable_regex_error(e: &regex::Error) -> String {
    match e {
        regex::Error::CompiledTooBig(_) => "pattern too large".into(),
        other => {
            let text = other.to_string();
            text.lines()
                .rev()
                .find(|l| l.trim_start().starts_with("error:"))
                .map(|l| {
                    l.trim_start()
                        .trim_start_matches("error:")
                        .trim()
                        .to_string()
                })
                .unwrap_or_else(|| text.lines().last().unwrap_or("").trim().to_string())
        }
    }
}

impl TextFilter {
    /// Compiles what the user typed (see the module doc for the modes).
    pub fn new(text: &str) -> Self {
        let t = text.trim();
        if t.is_empty() {
            return Self {
                mode: Mode::All,
                error: None,
            };
        }
        if is_forced_regex(t) {
            let pattern = &t[1..t.len() - 1];
            if pattern.is_empty() {
                return Self {
                    mode: Mode::All,
                    error: None,
                };
            }
            return match compile(pattern) {
                Ok(re) => Self {
                    mode: Mode::Regex(re, None),
                    error: None,
                },
                Err(e) => Self {
                    mode: Mode::All,
                    error: Some(format!("invalid regex: {e}")),
                },
            };
        }
        let lower = t.to_lowercase();
        if has_metacharacters(t) {
            match compile(t) {
                Ok(re) => Self {
                    mode: Mode::Regex(re, Some(lower)),
                    error: None,
                },
                Err(e) => Self {
                    mode: Mode::All,
                    error: Some(format!("invalid regex: {e}")),
                },
            }
        } else {
            Self {
                mode: Mode::Plain(lower),
                error: None,
            }
        }
    }

    /// True when a row with this text passes the filter.
    pub fn matches(&self, text: &str) -> bool {
        match &self.mode {
            Mode::All => true,
            Mode::Plain(needle) => text.to_lowercase().contains(needle),
            Mode::Regex(re, literal) => {
                re.is_match(text)
                    || literal
                        .as_ref()
                        .is_some_and(|l| text.to_lowercase().contains(l))
            }
        }
    }

    /// True when it passes every row (nothing typed, or an invalid regex).
    pub fn is_all(&self) -> bool {
        matches!(self.mode, Mode::All)
    }

    /// True when it matches as a regular expression.
    pub fn is_regex(&self) -> bool {
        matches!(self.mode, Mode::Regex(..))
    }

    /// Why the typed regex was not used (shown next to the field).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

/// The filter field: label, text field, `.*` toggle, clear button and the regex error if any.
/// Returns true when the text changed.
pub fn filter_field(ui: &mut egui::Ui, text: &mut String, hint: &str) -> bool {
    let before = text.clone();
    let l = ui.label("Filter:");
    ui.add(
        egui::TextEdit::singleline(text)
            .hint_text(hint)
            .desired_width(220.0),
    )
    .labelled_by(l.id)
    .on_hover_text("Plain text, or a regular expression (e.g. walk|run, ^hero_.*\\.bvh$)");
    let forced = is_forced_regex(text);
    if ui
        .selectable_label(forced, ".*")
        .on_hover_text("Match as a regular expression (/pattern/)")
        .clicked()
    {
        *text = toggle_regex(text);
    }
    if !text.is_empty()
        && ui
            .small_button("Clear")
            .on_hover_text("Clear the filter")
            .clicked()
    {
        text.clear();
    }
    // Compiling per frame would cost; the widget only needs the error, cached by text.
    let id = l.id.with("cf_filter_error");
    let cached: Option<(String, Option<String>)> = ui.data(|d| d.get_temp(id));
    let error = match cached {
        Some((t, e)) if &t == text => e,
        _ => {
            let e = TextFilter::new(text).error().map(str::to_string);
            ui.data_mut(|d| d.insert_temp(id, (text.clone(), e.clone())));
            e
        }
    };
    if let Some(e) = error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    *text != before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_a_case_insensitive_substring() {
        let f = TextFilter::new("Walk");
        assert!(!f.is_regex());
        assert!(f.matches("hero_walk_01"));
        assert!(!f.matches("hero_run_01"));
    }

    #[test]
    fn metacharacters_make_a_regex_and_the_literal_text_still_matches() {
        let f = TextFilter::new("walk|run");
        assert!(f.is_regex());
        assert!(f.matches("hero_RUN"));
        assert!(f.matches("walk"));
        assert!(!f.matches("idle"));
        let f = TextFilter::new("walk(1)");
        assert!(f.matches("walk1"));
        assert!(f.matches("walk(1).bvh"));
    }

    #[test]
    fn slashes_force_a_regex_and_the_toggle_adds_or_removes_them() {
        assert_eq!(toggle_regex("a.b"), "/a.b/");
        assert_eq!(toggle_regex("/a.b/"), "a.b");
        let f = TextFilter::new("/^clip_0[12]$/");
        assert!(f.matches("clip_01") && f.matches("CLIP_02"));
        assert!(!f.matches("clip_03") && !f.matches("xclip_01"));
    }

    #[test]
    fn an_invalid_regex_filters_nothing_out_and_says_why_in_one_line() {
        for text in ["walk(", "/[a-/"] {
            let f = TextFilter::new(text);
            assert!(f.is_all(), "{text}");
            assert!(f.matches("anything"));
            let e = f.error().unwrap();
            assert!(e.starts_with("invalid regex: "), "{e}");
            assert!(!e.contains('\n') && !e.contains('^'), "{e}");
        }
    }

    #[test]
    fn a_huge_pattern_is_refused_not_compiled() {
        let f = TextFilter::new("/(\\w{100}){100}/");
        assert_eq!(f.error(), Some("invalid regex: pattern too large"));
    }
}
