//! The optional **settings record** at the end of a `.cfa` (flags bit 7,
//! [`FLAG_SETTINGS`](crate::format::FLAG_SETTINGS); layout in `docs/FORMAT.md`, "Settings
//! record"): the settings a clip was compressed with (error threshold, shell distance, per-bone
//! settings), where each came from, and the ClipForge version that wrote it, so `clipforge
//! inspect` can say what made a file. Informational only: sampling and the C API never read it.
//! This module owns its layout: [`append`] writes it, [`split`] finds and validates it for
//! [`ClipReader::new`](crate::ClipReader::new) (bounded by the buffer, a clear error, no panic).

use crate::FormatError;
use crate::format::{FLAG_SETTINGS, checksum};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The record's own version (its first byte); a reader refuses any other.
pub(crate) const RECORD_VERSION: u8 = 1;
/// Longest ClipForge version string stored.
pub(crate) const MAX_TOOL_VERSION_LEN: usize = 64;
/// Longest per-bone pattern stored (longer ones are cut at a character boundary).
pub(crate) const MAX_PATTERN_LEN: usize = 255;
/// Most per-bone settings stored (the size field is 16 bits).
pub(crate) const MAX_BONE_SETTINGS: usize = 256;
/// The smallest record: version, flags, sources, threshold, an empty-version length byte, the
/// count and the size field.
const MIN_RECORD: usize = 1 + 1 + 1 + 4 + 1 + 2 + 2;

const HAS_SHELL: u8 = 1;
const BONE_HAS_THRESHOLD: u8 = 1 << 2;
const BONE_HAS_SHELL: u8 = 1 << 3;

/// Where a setting came from, most specific last (the pipeline's `SettingSource`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Source {
    /// The defaults of the tool that compressed it.
    #[default]
    Default = 0,
    /// An explicit option: a command line's flag, a pipeline's key, the app's setting.
    Explicit = 1,
    /// A folder's `clipforge.toml`.
    Folder = 2,
    /// A `[[clip]]` table of a `clipforge.toml`.
    Clip = 3,
}

impl Source {
    fn from_bits(b: u8) -> Self {
        match b & 3 {
            0 => Source::Default,
            1 => Source::Explicit,
            2 => Source::Folder,
            _ => Source::Clip,
        }
    }
}

/// One per-bone setting: the bones whose names match `pattern` use its values.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BoneSetting {
    pub pattern: String,
    pub source: Source,
    pub error_threshold_cm: Option<f32>,
    pub shell_distance_cm: Option<f32>,
}

/// What made a `.cfa`: the settings in force and their sources (lengths in cm).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Settings {
    pub error_threshold_cm: f32,
    pub threshold_source: Source,
    /// `None`: each bone's own shell distance (stored in the clip's metadata).
    pub shell_distance_cm: Option<f32>,
    pub shell_source: Source,
    /// In the order they applied (later entries win).
    pub bones: Vec<BoneSetting>,
    /// The ClipForge version that wrote the file.
    pub tool_version: String,
}

fn corrupt<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError::Corrupt(format!(
        "settings record: {}",
        msg.into()
    )))
}

/// `s` cut to at most `max` bytes at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The record's bytes (its size field included).
pub fn encode(s: &Settings) -> Vec<u8> {
    let mut out = Vec::with_capacity(32);
    out.push(RECORD_VERSION);
    out.push(if s.shell_distance_cm.is_some() {
        HAS_SHELL
    } else {
        0
    });
    out.push(s.threshold_source as u8 | (s.shell_source as u8) << 2);
    out.extend(s.error_threshold_cm.to_le_bytes());
    if let Some(d) = s.shell_distance_cm {
        out.extend(d.to_le_bytes());
    }
    let v = cut(&s.tool_version, MAX_TOOL_VERSION_LEN);
    out.push(v.len() as u8);
    out.extend(v.as_bytes());
    let bones = &s.bones[..s.bones.len().min(MAX_BONE_SETTINGS)];
    out.extend((bones.len() as u16).to_le_bytes());
    for b in bones {
        let mut flags = b.source as u8;
        flags |= if b.error_threshold_cm.is_some() {
            BONE_HAS_THRESHOLD
        } else {
            0
        };
        flags |= if b.shell_distance_cm.is_some() {
            BONE_HAS_SHELL
        } else {
            0
        };
        out.push(flags);
        for v in [b.error_threshold_cm, b.shell_distance_cm]
            .into_iter()
            .flatten()
        {
            out.extend(v.to_le_bytes());
        }
        let p = cut(&b.pattern, MAX_PATTERN_LEN);
        out.push(p.len() as u8);
        out.extend(p.as_bytes());
    }
    let size = out.len() + 2;
    out.extend((size as u16).to_le_bytes());
    out
}

/// Appends the record to a `.cfa` buffer that has none (the compressor's output): sets flags
/// bit 7, the total size and the checksum. Refuses a buffer that is not a `.cfa`, already
/// holds a record, or settings that the reader would refuse (not finite, not positive).
pub fn append(buf: &mut Vec<u8>, s: &Settings) -> Result<(), FormatError> {
    if buf.len() < crate::format::HEADER_SIZE || buf[..4] != crate::format::MAGIC {
        return Err(FormatError::BadMagic);
    }
    let flags = u16::from_le_bytes([buf[6], buf[7]]);
    if flags & FLAG_SETTINGS != 0 {
        return corrupt("the buffer already holds one");
    }
    let record = encode(s);
    // The reader's checks, so a writer never makes a file its reader refuses.
    parse(&record[..record.len() - 2])?;
    let total = buf.len() + record.len();
    let total32 = u32::try_from(total).or_else(|_| corrupt("the buffer would exceed 4 GiB"))?;
    buf.extend(&record);
    buf[6..8].copy_from_slice(&(flags | FLAG_SETTINGS).to_le_bytes());
    buf[12..16].copy_from_slice(&total32.to_le_bytes());
    let crc = checksum(buf);
    buf[8..12].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// [`append`] after removing the record the buffer holds, if any (a clip kept from a
/// comparison is recorded with the settings that will make it from now on).
pub fn replace(buf: &mut Vec<u8>, s: &Settings) -> Result<(), FormatError> {
    if buf.len() < crate::format::HEADER_SIZE || buf[..4] != crate::format::MAGIC {
        return Err(FormatError::BadMagic);
    }
    let flags = u16::from_le_bytes([buf[6], buf[7]]);
    let runtime_size = u32::from_le_bytes([buf[16], buf[17], buf[18], buf[19]]) as usize;
    let (start, _) = split(buf, runtime_size.min(buf.len()), flags)?;
    // Checked before the buffer changes, so a refusal leaves it as it was.
    let record = encode(s);
    parse(&record[..record.len() - 2])?;
    buf.truncate(start);
    buf[6..8].copy_from_slice(&(flags & !FLAG_SETTINGS).to_le_bytes());
    append(buf, s)
}

/// Where the names metadata that starts at `meta_start` ends, and the record when `flags` says
/// there is one (it fills the end of the buffer; its last two bytes are its size).
pub(crate) fn split(
    buf: &[u8],
    meta_start: usize,
    flags: u16,
) -> Result<(usize, Option<Settings>), FormatError> {
    let len = buf.len();
    if flags & FLAG_SETTINGS == 0 {
        return Ok((len, None));
    }
    let room = len.saturating_sub(meta_start);
    if room < MIN_RECORD {
        return corrupt(format!(
            "flags say there is one, but only {room} bytes follow the runtime data"
        ));
    }
    let size = u16::from_le_bytes([buf[len - 2], buf[len - 1]]) as usize;
    if size < MIN_RECORD || size > room {
        return corrupt(format!(
            "size {size} is not within {MIN_RECORD}..={room} (the bytes after the runtime data)"
        ));
    }
    let start = len - size;
    Ok((start, Some(parse(&buf[start..len - 2])?)))
}

/// Bounds-checked little-endian reads over the record.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], FormatError> {
        match self.b.get(self.pos..self.pos + n) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => corrupt(format!("truncated in {what} at byte {}", self.pos)),
        }
    }
    fn u8(&mut self, what: &str) -> Result<u8, FormatError> {
        Ok(self.take(1, what)?[0])
    }
    fn f32(&mut self, what: &str) -> Result<f32, FormatError> {
        let s = self.take(4, what)?;
        Ok(f32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn str(&mut self, what: &str) -> Result<String, FormatError> {
        let n = self.u8(what)? as usize;
        let s = self.take(n, what)?;
        String::from_utf8(s.to_vec()).or_else(|_| corrupt(format!("{what} is not UTF-8")))
    }
}

/// A length: finite and > 0 (`positive`) or ≥ 0.
fn length(v: f32, what: &str, positive: bool) -> Result<f32, FormatError> {
    if v.is_finite() && (v > 0.0 || (!positive && v == 0.0)) {
        Ok(v)
    } else {
        corrupt(format!("{what} {v} is not a positive number of cm"))
    }
}

/// The record without its size field.
fn parse(b: &[u8]) -> Result<Settings, FormatError> {
    let mut r = Reader { b, pos: 0 };
    let version = r.u8("version")?;
    if version != RECORD_VERSION {
        return corrupt(format!("unsupported version {version}"));
    }
    let flags = r.u8("flags")?;
    if flags & !HAS_SHELL != 0 {
        return corrupt(format!("unknown flags {flags:#x}"));
    }
    let sources = r.u8("sources")?;
    if sources >> 4 != 0 {
        return corrupt(format!("unknown source bits {sources:#x}"));
    }
    let error_threshold_cm = length(r.f32("threshold")?, "error threshold", true)?;
    let shell_distance_cm = if flags & HAS_SHELL != 0 {
        Some(length(r.f32("shell distance")?, "shell distance", false)?)
    } else {
        None
    };
    let tool_version = r.str("ClipForge version")?;
    if tool_version.len() > MAX_TOOL_VERSION_LEN {
        return corrupt(format!(
            "ClipForge version of {} bytes (at most {MAX_TOOL_VERSION_LEN})",
            tool_version.len()
        ));
    }
    let count = r.take(2, "per-bone count")?;
    let count = u16::from_le_bytes([count[0], count[1]]) as usize;
    if count > MAX_BONE_SETTINGS {
        return corrupt(format!(
            "{count} per-bone settings (at most {MAX_BONE_SETTINGS})"
        ));
    }
    let mut bones = Vec::with_capacity(count);
    for i in 0..count {
        let what = format!("per-bone setting {i}");
        let f = r.u8(&what)?;
        if f & !(3 | BONE_HAS_THRESHOLD | BONE_HAS_SHELL) != 0
            || f & (BONE_HAS_THRESHOLD | BONE_HAS_SHELL) == 0
        {
            return corrupt(format!("{what}: bad flags {f:#x}"));
        }
        let error_threshold_cm = match f & BONE_HAS_THRESHOLD {
            0 => None,
            _ => Some(length(r.f32(&what)?, &format!("{what}: threshold"), true)?),
        };
        let shell_distance_cm = match f & BONE_HAS_SHELL {
            0 => None,
            _ => Some(length(r.f32(&what)?, &format!("{what}: shell"), false)?),
        };
        let pattern = r.str(&what)?;
        if pattern.is_empty() {
            return corrupt(format!("{what}: empty bone pattern"));
        }
        bones.push(BoneSetting {
            pattern,
            source: Source::from_bits(f),
            error_threshold_cm,
            shell_distance_cm,
        });
    }
    if r.pos != b.len() {
        return corrupt(format!("{} unexpected bytes", b.len() - r.pos));
    }
    Ok(Settings {
        error_threshold_cm,
        threshold_source: Source::from_bits(sources),
        shell_distance_cm,
        shell_source: Source::from_bits(sources >> 2),
        bones,
        tool_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn sample() -> Settings {
        Settings {
            error_threshold_cm: 0.02,
            threshold_source: Source::Clip,
            shell_distance_cm: Some(3.0),
            shell_source: Source::Folder,
            bones: vec![BoneSetting {
                pattern: "head*".into(),
                source: Source::Clip,
                error_threshold_cm: Some(0.002),
                shell_distance_cm: None,
            }],
            tool_version: "1.2.3".into(),
        }
    }

    #[test]
    fn records_round_trip_and_stay_small() {
        let s = sample();
        let rec = encode(&s);
        assert_eq!(parse(&rec[..rec.len() - 2]).unwrap(), s);
        let plain = Settings {
            error_threshold_cm: 0.01,
            tool_version: "0.9.0".into(),
            ..Default::default()
        };
        assert_eq!(encode(&plain).len(), 17);
    }

    /// Every truncation and every byte value at every place is refused or read, never a panic.
    #[test]
    fn hostile_records_are_refused_not_panicked_on() {
        let rec = encode(&sample());
        let body = &rec[..rec.len() - 2];
        for n in 0..body.len() {
            let e = parse(&body[..n]).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("corrupt buffer: settings record:"),
                "{e}"
            );
        }
        for i in 0..body.len() {
            for v in [0u8, 1, 0x7f, 0x80, 0xff] {
                let mut b = body.to_vec();
                b[i] = v;
                let _ = parse(&b);
            }
        }
        let mut bad = sample();
        bad.error_threshold_cm = f32::NAN;
        let mut buf = vec![0u8; 48];
        buf[..4].copy_from_slice(&crate::format::MAGIC);
        assert!(append(&mut buf, &bad).is_err());
    }
}
