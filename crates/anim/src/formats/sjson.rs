//! A small SJSON ("simplified JSON", Bitsquid/Stingray flavour, as read by ACL's sjson-cpp)
//! tokenizer, parser and writer, covering what ACL's `.acl.sjson` files use.
//!
//! Why hand-written: no well-kept, permissively licensed crate reads SJSON. `serde_sjson` is
//! GPL-3.0 (unusable in this MIT crate) and in practice fails on ACL files (any ignored field or a
//! dynamic `Value` target breaks on floats such as `30.0`); the JSON5/Hjson crates use `:` and
//! refuse `=`. The subset is small, so ~400 lines with unit tests is the cheaper dependency.
//!
//! Accepted syntax:
//! - the top level is an implicit object (no braces), `key = value` or `key : value`;
//! - keys are bare identifiers or quoted strings;
//! - values: numbers (kept as their exact source text; `0x…` hexadecimal integers, `inf`/`nan`
//!   are number tokens too so that a later stage can refuse them with a clear message),
//!   `"strings"` (JSON escapes), `true`/`false`/`null`, `[ arrays ]`, `{ objects }`, and bare
//!   words (e.g. `type = float4f` in ACL's format reference), read as strings;
//! - commas between items are optional; `//` line and `/* */` block comments;
//! - a UTF-8 byte-order mark at the start is skipped.
//!
//! Every error carries the 1-based line where it was found. Duplicate keys in one object are an
//! error (naming both lines), since silently keeping one of two values hides broken files.
//!
//! The tree borrows from the source text: strings without escapes and all numbers are slices, so
//! parsing allocates only for arrays and objects.

use clipforge_base::text::cut_token;
use std::borrow::Cow;
use std::fmt;

/// A parse error: 1-based line and what was wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct SjsonError {
    pub line: usize,
    pub message: String,
}

/// A value plus the line where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Node<'a> {
    pub line: usize,
    pub value: Value<'a>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    /// The number exactly as written (`-0.5e3`, `0xFFFFFFFF`, `inf`); see [`Node::as_f64`].
    Number(&'a str),
    /// A quoted string (escapes resolved) or a bare word.
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    /// Entries in file order: (key, line of the key, value).
    Object(Vec<Entry<'a>>),
}

/// One `key = value` entry of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry<'a> {
    pub key: Cow<'a, str>,
    pub line: usize,
    pub value: Node<'a>,
}

impl<'a> Value<'a> {
    /// Short name of the kind of value, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

impl<'a> Node<'a> {
    /// The entries, when this is an object.
    pub fn as_object(&self) -> Option<&[Entry<'a>]> {
        match &self.value {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node<'a>]> {
        match &self.value {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        match self.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The number's value: decimal text parsed as f64 (correctly rounded), `0x…` as an unsigned
    /// integer. `None` when this is not a number or the text does not parse.
    pub fn as_f64(&self) -> Option<f64> {
        match self.value {
            Value::Number(text) => parse_number(text),
            _ => None,
        }
    }

    /// Looks a key up in an object (first match; keys are unique, see the parser).
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.as_object()?
            .iter()
            .find(|e| e.key == key)
            .map(|e| &e.value)
    }
}

/// Parses a number token: decimal (via f64's correctly rounded parser), `0x` hexadecimal integer,
/// or `inf`/`nan` spellings Rust accepts.
pub(crate) fn parse_number(text: &str) -> Option<f64> {
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if body.len() > 2 && (body.starts_with("0x") || body.starts_with("0X")) {
        let v = u64::from_str_radix(&body[2..], 16).ok()? as f64;
        return Some(if neg { -v } else { v });
    }
    // Rust's parser accepts "inf", "infinity", "nan" (any case) and a leading '+'.
    text.parse::<f64>().ok()
}

/// Parses a whole SJSON document (implicit top-level object).
pub fn parse(text: &str) -> Result<Node<'_>, SjsonError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut p = Parser {
        src: text.as_bytes(),
        text,
        pos: 0,
        line: 1,
        depth: 0,
    };
    let entries = p.object_body(None)?;
    Ok(Node {
        line: 1,
        value: Value::Object(entries),
    })
}

/// Deepest nesting accepted, so hostile input cannot overflow the stack.
const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    line: usize,
    depth: usize,
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-' || c == b'+'
}

impl<'a> Parser<'a> {
    fn err<T>(&self, line: usize, message: impl Into<String>) -> Result<T, SjsonError> {
        Err(SjsonError {
            line,
            message: message.into(),
        })
    }

    /// Skips whitespace, commas and comments. Commas are separators everywhere and optional.
    fn skip_trivia(&mut self) -> Result<(), SjsonError> {
        while self.pos < self.src.len() {
            match self.src[self.pos] {
                b'\n' => {
                    self.line += 1;
                    self.pos += 1;
                }
                b'\r' => {
                    // CR LF counts once, a lone CR is a line break too.
                    if self.src.get(self.pos + 1) != Some(&b'\n') {
                        self.line += 1;
                    }
                    self.pos += 1;
                }
                b' ' | b'\t' | b',' | 0x0c => self.pos += 1,
                b'/' if self.src.get(self.pos + 1) == Some(&b'/') => {
                    while self.pos < self.src.len()
                        && self.src[self.pos] != b'\n'
                        && self.src[self.pos] != b'\r'
                    {
                        self.pos += 1;
                    }
                }
                b'/' if self.src.get(self.pos + 1) == Some(&b'*') => {
                    let start = self.line;
                    self.pos += 2;
                    loop {
                        match self.src.get(self.pos) {
                            None => return self.err(start, "unterminated /* comment"),
                            Some(b'*') if self.src.get(self.pos + 1) == Some(&b'/') => {
                                self.pos += 2;
                                break;
                            }
                            Some(b'\n') => self.line += 1,
                            Some(b'\r') if self.src.get(self.pos + 1) != Some(&b'\n') => {
                                self.line += 1
                            }
                            _ => {}
                        }
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// Object entries up to `close` (`Some(b'}')`) or end of input (top level).
    fn object_body(&mut self, close: Option<(u8, usize)>) -> Result<Vec<Entry<'a>>, SjsonError> {
        let mut entries: Vec<Entry<'a>> = Vec::new();
        loop {
            self.skip_trivia()?;
            match (self.peek(), close) {
                (None, None) => return Ok(entries),
                (None, Some((_, open_line))) => {
                    return self.err(self.line, format!("unexpected end of file: '{{' opened on line {open_line} is never closed"));
                }
                (Some(c), Some((cl, _))) if c == cl => {
                    self.pos += 1;
                    return Ok(entries);
                }
                _ => {}
            }
            let key_line = self.line;
            let key = self.key()?;
            self.skip_trivia()?;
            match self.peek() {
                Some(b'=') | Some(b':') => self.pos += 1,
                Some(c) => {
                    return self.err(
                        self.line,
                        format!("expected '=' after key '{key}', found {}", describe(c)),
                    );
                }
                None => {
                    return self.err(
                        self.line,
                        format!("unexpected end of file after key '{key}'"),
                    );
                }
            }
            let value = self.value()?;
            if let Some(prev) = entries.iter().find(|e| e.key == key) {
                return self.err(
                    key_line,
                    format!(
                        "duplicate key '{key}' (first defined on line {})",
                        prev.line
                    ),
                );
            }
            entries.push(Entry {
                key,
                line: key_line,
                value,
            });
        }
    }

    fn key(&mut self) -> Result<Cow<'a, str>, SjsonError> {
        match self.peek() {
            Some(b'"') => self.string(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
                {
                    self.pos += 1;
                }
                Ok(Cow::Borrowed(&self.text[start..self.pos]))
            }
            Some(c) => self.err(self.line, format!("expected a key, found {}", describe(c))),
            None => self.err(self.line, "expected a key, found end of file"),
        }
    }

    fn value(&mut self) -> Result<Node<'a>, SjsonError> {
        self.skip_trivia()?;
        let line = self.line;
        let Some(c) = self.peek() else {
            return self.err(line, "expected a value, found end of file");
        };
        let value = match c {
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return self.err(line, format!("nesting deeper than {MAX_DEPTH} levels"));
                }
                self.pos += 1;
                let v = if c == b'{' {
                    Value::Object(self.object_body(Some((b'}', line)))?)
                } else {
                    Value::Array(self.array_body(line)?)
                };
                self.depth -= 1;
                v
            }
            b'"' => Value::String(self.string()?),
            c if is_word_byte(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_word_byte) {
                    self.pos += 1;
                }
                let word = &self.text[start..self.pos];
                match word {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "null" => Value::Null,
                    _ => {
                        let first = word.as_bytes()[0];
                        let numeric_start = first.is_ascii_digit()
                            || first == b'-'
                            || first == b'+'
                            || first == b'.';
                        let special = || {
                            ["inf", "infinity", "nan"]
                                .iter()
                                .any(|s| word.eq_ignore_ascii_case(s))
                        };
                        if numeric_start || special() {
                            // Cheap syntactic check only; the value is parsed (once) by `as_f64`,
                            // whose `None` callers report as a bad number at this node's line.
                            if !plausible_number(word) {
                                return self
                                    .err(line, format!("bad number '{}'", cut_token(word, 80)));
                            }
                            Value::Number(word)
                        } else if first.is_ascii_alphabetic() || first == b'_' {
                            Value::String(Cow::Borrowed(word))
                        } else {
                            return self.err(line, format!("unexpected '{}'", cut_token(word, 80)));
                        }
                    }
                }
            }
            c => return self.err(line, format!("expected a value, found {}", describe(c))),
        };
        Ok(Node { line, value })
    }

    fn array_body(&mut self, open_line: usize) -> Result<Vec<Node<'a>>, SjsonError> {
        let mut items = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                None => {
                    return self.err(
                        self.line,
                        format!(
                            "unexpected end of file: '[' opened on line {open_line} is never closed"
                        ),
                    );
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(b'}') => {
                    return self.err(self.line, format!("found '}}' where the array opened on line {open_line} should close with ']'"));
                }
                _ => items.push(self.value()?),
            }
        }
    }

    /// A double-quoted string with JSON escapes; borrowed when it has none.
    fn string(&mut self) -> Result<Cow<'a, str>, SjsonError> {
        let start_line = self.line;
        self.pos += 1; // opening quote
        let start = self.pos;
        // Fast path: no escapes.
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    let s = &self.text[start..self.pos];
                    self.pos += 1;
                    return Ok(Cow::Borrowed(s));
                }
                b'\\' => break,
                b'\n' => {
                    self.line += 1;
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
        let mut out = String::from(&self.text[start..self.pos]);
        loop {
            let Some(c) = self.peek() else {
                return self.err(start_line, "unterminated string");
            };
            match c {
                b'"' => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                b'\\' => {
                    let esc = self.src.get(self.pos + 1).copied();
                    self.pos += 2;
                    match esc {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let hex = self.text.get(self.pos..self.pos + 4).unwrap_or("");
                            let code = u32::from_str_radix(hex, 16).ok().filter(|_| hex.len() == 4);
                            let Some(code) = code else {
                                return self.err(self.line, "bad \\u escape in string");
                            };
                            self.pos += 4;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        None => return self.err(start_line, "unterminated string"),
                        Some(e) => {
                            return self.err(
                                self.line,
                                format!("unknown escape '\\{}' in string", e as char),
                            );
                        }
                    }
                }
                _ => {
                    // Copy one whole UTF-8 character (the input is a &str, so boundaries are valid).
                    let ch = self.text[self.pos..].chars().next().unwrap_or('\u{fffd}');
                    if ch == '\n' {
                        self.line += 1;
                    }
                    out.push(ch);
                    self.pos += ch.len_utf8().max(1);
                }
            }
        }
    }
}

/// Whether a word can be a number: decimal characters only, or `0x` + hex digits, or an
/// inf/nan spelling (checked by the caller).
fn plausible_number(word: &str) -> bool {
    let body = word.trim_start_matches(['-', '+']);
    if body.len() > 2 && (body.starts_with("0x") || body.starts_with("0X")) {
        return body[2..].bytes().all(|c| c.is_ascii_hexdigit());
    }
    if body
        .bytes()
        .any(|c| c.is_ascii_alphabetic() && c != b'e' && c != b'E')
    {
        return parse_number(word).is_some();
    }
    body.bytes().any(|c| c.is_ascii_digit())
        && body
            .bytes()
            .all(|c| c.is_ascii_digit() || b".eE+-".contains(&c))
}

fn describe(c: u8) -> String {
    if c.is_ascii_graphic() {
        format!("'{}'", c as char)
    } else {
        format!("byte 0x{c:02X}")
    }
}

// ---------------------------------------------------------------------------------------------
// Writer

/// Appends `s` as a double-quoted SJSON string with JSON escapes.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                use fmt::Write;
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends a float so that parsing the text as f64 and converting to f32 gives back exactly `v`:
/// Rust's shortest round-trip formatting of the f64 widening (always with a decimal point or an
/// exponent, so it reads as a float). Non-finite values are written as `inf`/`-inf`/`nan`
/// (which ACL cannot read; callers validate first).
pub(crate) fn write_f32(out: &mut String, v: f32) {
    write_f64(out, v as f64);
}

/// Appends an f64 with Rust's shortest round-trip formatting.
pub(crate) fn write_f64(out: &mut String, v: f64) {
    use fmt::Write;
    if !v.is_finite() {
        out.push_str(if v.is_nan() {
            "nan"
        } else if v > 0.0 {
            "inf"
        } else {
            "-inf"
        });
        return;
    }
    let start = out.len();
    let _ = write!(out, "{v:?}");
    // `{:?}` prints "1.0", "1e-7", "1.5e20": all parse back as floats already.
    debug_assert!(out[start..].parse::<f64>().ok() == Some(v));
}

/// Appends the IEEE bits of an f64 as 16 upper-case hex digits in quotes (ACL's binary-exact form).
pub(crate) fn write_hex_f64(out: &mut String, v: f64) {
    use fmt::Write;
    let _ = write!(out, "\"{:016X}\"", v.to_bits());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_top_level_with_all_value_kinds() {
        let doc = parse(
            "version = 5\n\"quoted key\" : \"s\\\"x\"\nflag = true, off = false nothing = null\n\
             list = [ 1, -2.5e3 0x1F ] obj = { a = 1 b = [ [1,2] [3,4] ] }\nword = float4f\n",
        )
        .unwrap();
        assert_eq!(doc.get("version").unwrap().as_f64(), Some(5.0));
        assert_eq!(doc.get("quoted key").unwrap().as_str(), Some("s\"x"));
        assert_eq!(doc.get("flag").unwrap().as_bool(), Some(true));
        assert_eq!(doc.get("off").unwrap().as_bool(), Some(false));
        assert_eq!(doc.get("nothing").unwrap().value, Value::Null);
        let list = doc.get("list").unwrap().as_array().unwrap();
        let nums: Vec<f64> = list.iter().map(|n| n.as_f64().unwrap()).collect();
        assert_eq!(nums, [1.0, -2500.0, 31.0]);
        let obj = doc.get("obj").unwrap();
        assert_eq!(obj.get("b").unwrap().as_array().unwrap().len(), 2);
        assert_eq!(doc.get("word").unwrap().as_str(), Some("float4f"));
        assert_eq!(doc.get("word").unwrap().line, 5);
    }

    #[test]
    fn number_text_is_kept_exactly() {
        let doc = parse("a = 0.1000000000000000055511151231257827\nb = 1e-320").unwrap();
        assert_eq!(
            doc.get("a").unwrap().value,
            Value::Number("0.1000000000000000055511151231257827")
        );
        assert_eq!(doc.get("a").unwrap().as_f64(), Some(0.1));
        assert_eq!(doc.get("b").unwrap().as_f64(), Some(1e-320));
        // Syntactically plausible but malformed: kept, and `as_f64` says it does not parse.
        assert_eq!(parse("c = 1.2.3").unwrap().get("c").unwrap().as_f64(), None);
    }

    #[test]
    fn comments_and_line_numbers() {
        let text = "// header\n/* block\n spanning */ a = 1\r\nb = // trailing\n[\r\n 2\r 3 ]\n";
        let doc = parse(text).unwrap();
        let a = &doc.as_object().unwrap()[0];
        assert_eq!((a.key.as_ref(), a.line), ("a", 3));
        let b = doc.get("b").unwrap();
        assert_eq!(b.line, 5);
        let items = b.as_array().unwrap();
        assert_eq!((items[0].line, items[1].line), (6, 7));
    }

    #[test]
    fn errors_carry_line_numbers() {
        let cases: &[(&str, usize, &str)] = &[
            ("a = 1\nb = [ 1, 2\n", 3, "never closed"),
            ("a = 1\n\nb 2", 3, "expected '='"),
            ("a = {\n x = 1\n", 3, "never closed"),
            (
                "a = 1\na = 2",
                2,
                "duplicate key 'a' (first defined on line 1)",
            ),
            ("a = \"abc\n", 1, "unterminated string"),
            ("a = 1x2", 1, "bad number"),
            ("a = --", 1, "bad number"),
            ("a = /* x\n\n", 1, "unterminated /* comment"),
            ("a = [ 1 }", 1, "should close with ']'"),
            ("a = @", 1, "expected a value"),
            ("= 3", 1, "expected a key"),
            ("a =", 1, "end of file"),
            ("x = \"\\q\"", 1, "unknown escape"),
        ];
        for (text, line, needle) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.message.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = format!("a = {}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&text).unwrap_err().message.contains("nesting"));
    }

    #[test]
    fn bom_inf_nan_and_escapes() {
        let doc = parse("\u{feff}a = -inf b = nan c = \"\\u00e9\\n\" d = \"é\"").unwrap();
        assert_eq!(doc.get("a").unwrap().as_f64(), Some(f64::NEG_INFINITY));
        assert!(doc.get("b").unwrap().as_f64().unwrap().is_nan());
        assert_eq!(doc.get("c").unwrap().as_str(), Some("é\n"));
        assert_eq!(doc.get("d").unwrap().as_str(), Some("é"));
    }

    #[test]
    fn writer_round_trips_floats_and_strings() {
        let mut s = String::new();
        for v in [
            0.1f32,
            -0.0,
            1.0,
            3.4028235e38,
            1e-45,
            123456.79,
            f32::MIN_POSITIVE,
        ] {
            s.clear();
            write_f32(&mut s, v);
            let back = s.parse::<f64>().unwrap() as f32;
            assert_eq!(back.to_bits(), v.to_bits(), "{v} -> {s}");
        }
        s.clear();
        write_hex_f64(&mut s, 1.0);
        assert_eq!(s, "\"3FF0000000000000\"");
        s.clear();
        write_string(&mut s, "a\"b\\c\nd");
        let text = format!("k = {s}");
        let doc = parse(&text).unwrap();
        assert_eq!(doc.get("k").unwrap().as_str(), Some("a\"b\\c\nd"));
    }

    proptest::proptest! {
        /// Any finite f32, written as decimal or hex, reads back bit for bit.
        #[test]
        fn any_f32_round_trips(bits in proptest::prelude::any::<u32>()) {
            let v = f32::from_bits(bits);
            proptest::prop_assume!(v.is_finite());
            let mut text = String::from("a = ");
            write_f32(&mut text, v);
            text.push_str(" b = ");
            write_hex_f64(&mut text, v as f64);
            let doc = parse(&text).unwrap();
            let a = doc.get("a").unwrap().as_f64().unwrap() as f32;
            proptest::prop_assert_eq!(a.to_bits(), bits);
            let hex = doc.get("b").unwrap().as_str().unwrap();
            let b = f64::from_bits(u64::from_str_radix(hex, 16).unwrap()) as f32;
            proptest::prop_assert_eq!(b.to_bits(), bits);
        }

        /// Arbitrary text never panics the parser.
        #[test]
        fn arbitrary_text_never_panics(text in "[ -~\\n\\r\\t\\u{e9}]{0,200}") {
            let _ = parse(&text);
        }
    }
}
