//! Globs over bone names and clip paths (`[[bone]] match`, `--bone`, `[[clip]] match`), on the
//! `globset` crate: `*`, `?`, `[...]`, `{a,b}`, `\` escapes, case-sensitive, `*` crossing `/`.
//! Patterns come from users, so a bad one is a typed error at the place it was given, and
//! matching code compiles each pattern once.

use globset::{GlobBuilder, GlobMatcher};

/// A glob that does not compile: the pattern and globset's own short reason.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("'{pattern}' is not a valid glob: {reason}")]
pub struct BadGlob {
    pub pattern: String,
    pub reason: String,
}

/// One compiled glob over a bone name or a clip's relative path.
#[derive(Clone, Debug)]
pub struct BoneGlob(GlobMatcher);

impl BoneGlob {
    /// Compiles `pattern`. `*` also matches `/` (a clip glob `hero_*` reaches into
    /// subfolders, as documented in PIPELINE.md) and `\` escapes the next character.
    pub fn new(pattern: &str) -> Result<Self, BadGlob> {
        GlobBuilder::new(pattern)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map(|g| Self(g.compile_matcher()))
            .map_err(|e| BadGlob {
                pattern: pattern.to_string(),
                reason: e.kind().to_string(),
            })
    }

    /// Whether `name` matches the whole glob.
    pub fn is_match(&self, name: &str) -> bool {
        self.0.is_match(name)
    }
}

/// Whether `name` matches `pattern`; a pattern that does not compile matches nothing (every
/// place a user gives one checks it with [`BoneGlob::new`] first and says what is wrong).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    BoneGlob::new(pattern).is_ok_and(|g| g.is_match(name))
}

/// A pattern matching exactly `name` (a bone name or relative path): every glob character
/// escaped.
pub fn glob_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{BoneGlob, glob_escape, glob_match};

    #[test]
    fn globs_match_stars_classes_alternatives_and_escapes() {
        assert!(glob_match("*Finger*", "LeftFinger1"));
        assert!(!glob_match("*Finger*", "LeftHand"));
        assert!(glob_match("?Hand", "lHand") && !glob_match("?Hand", "Hand"));
        assert!(glob_match("Finger[12]", "Finger2") && !glob_match("Finger[12]", "Finger3"));
        assert!(glob_match("Finger[0-9]", "Finger7") && !glob_match("Finger[0-9]", "FingerA"));
        assert!(glob_match("Finger[!0-9]", "FingerA") && !glob_match("Finger[^0-9]", "Finger7"));
        assert!(glob_match("{Left,Right}Hand", "RightHand"));
        assert!(!glob_match("{Left,Right}Hand", "Hand"));
        // Escapes: the special characters themselves.
        assert!(glob_match("a\\*b", "a*b") && !glob_match("a\\*b", "axb"));
        assert!(glob_match("a\\?", "a?") && !glob_match("a\\?", "ab"));
        assert!(glob_match("\\[x]", "[x]") && !glob_match("\\[x]", "x"));
        assert!(glob_match("a\\\\b", "a\\b"));
        assert!(glob_match("[]x]", "]"));
        assert!(glob_match("*", "") && glob_match("**", "x") && !glob_match("", "x"));
        // `*` crosses `/` (clip globs over relative paths).
        assert!(glob_match("*hero_*", "sub/hero_1.bvh") && !glob_match("hero_*", "sub/hero_1.bvh"));
        assert!(glob_match("sub/*.bvh", "sub/deeper/a.bvh"));
        // Case-sensitive.
        assert!(!glob_match("hand", "Hand"));
    }

    #[test]
    fn bad_globs_are_refused_with_the_reason() {
        for bad in ["a[b", "{a,b", "a\\"] {
            let e = BoneGlob::new(bad).unwrap_err();
            assert_eq!(e.pattern, bad);
            assert!(!e.reason.is_empty(), "{bad}: {e}");
            assert!(!glob_match(bad, bad), "{bad} matches nothing");
        }
    }

    #[test]
    fn an_escaped_name_matches_itself_only() {
        for name in ["a[1]*?.bvh", "Bip01 {L} Hand, 2", "x\\y", "plain"] {
            let g = BoneGlob::new(&glob_escape(name)).unwrap();
            assert!(g.is_match(name), "{name}");
            assert!(!g.is_match(&format!("{name}x")), "{name}");
        }
        assert_eq!(glob_escape("a[1]*?.bvh"), "a\\[1\\]\\*\\?.bvh");
    }
}
