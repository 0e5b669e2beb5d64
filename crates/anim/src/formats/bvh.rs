//! BVH (Biovision Hierarchy) motion-capture importer.
//!
//! Hand-written rather than using the `bvh_anim` crate: its last release is old (edition 2018,
//! bstr 0.1, lexical 2.1, smallvec 0.6) and BVH is a small text format; owning the ~300 lines
//! also lets every error name its line.
//!
//! Conventions (the same as the reference converter `bvh_to_acl.py`, so both agree):
//! - Bones: every ROOT/JOINT in file order (parents before children); `End Site` blocks are
//!   skipped; several ROOTs are allowed.
//! - Rotation channels are applied intrinsically in the listed order, in degrees, acting on column
//!   vectors: "Zrotation Xrotation Yrotation" gives R = Rz · Rx · Ry. Each joint may use its own
//!   order. Quaternions are built in f64, normalized, and stored with w ≥ 0.
//! - Translation: position channels replace the OFFSET (a missing component keeps the OFFSET's);
//!   a joint without position channels gets its OFFSET as a constant translation.
//! - Bind pose: translation = OFFSET, rotation identity. Shell distance 3.0 (ACL's default).
//!   Units as in the file (usually centimetres).
//! - Sample rate: round(1 / Frame Time) when within 1e-3 of an integer, else the exact value.
//! - Frames: `Frames:` is authoritative. Fewer data lines is an error naming the line where data
//!   ran out; extra lines are ignored with a warning (as the reference converter does).
//! - Line endings LF, CRLF or lone CR; a UTF-8 BOM is skipped; non-UTF-8 text is read as Latin-1.
//! - Wrong value counts, bad or non-finite numbers, unknown channels and malformed hierarchies are
//!   errors naming the line.

use super::{
    ImportError, ImportWarning, build_clip, check_size, file_stem, quat_from_f64, skeleton_ordered,
};
use crate::clip::RawClip;
use crate::skeleton::BoneDesc;
use clipforge_base::text::cut_token;
use glam::{Quat, Vec3};
use std::borrow::Cow;
use std::path::Path;

/// Shell distance given to every BVH bone (ACL's default).
pub(crate) const BVH_SHELL_DISTANCE: f32 = 3.0;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Channel {
    Pos(usize),
    Rot(usize),
}

#[derive(Debug)]
struct Joint {
    name: String,
    parent: Option<usize>,
    offset: [f64; 3],
    channels: Vec<Channel>,
    first_channel: usize,
    /// A CHANNELS line was read: a second one would leave the first's values unassigned in every
    /// frame (and used to index past the joint's channels).
    has_channels_line: bool,
}

/// A parsed BVH file before conversion.
struct Bvh {
    joints: Vec<Joint>,
    frame_time: f64,
    /// `frames × num_channels` values.
    values: Vec<f64>,
    num_frames: usize,
    num_channels: usize,
}

fn decode(bytes: &[u8]) -> Cow<'_, str> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(bytes.iter().map(|&b| b as char).collect()), // Latin-1
    }
}

/// Lines with their 1-based numbers; `\n`, `\r\n` and lone `\r` all end a line.
fn lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push((out.len() + 1, &text[start..i]));
                i += 1;
                start = i;
            }
            b'\r' => {
                out.push((out.len() + 1, &text[start..i]));
                i += if b.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < b.len() {
        out.push((out.len() + 1, &text[start..]));
    }
    out
}

/// Reads a BVH file's bytes into one clip, plus warnings (extra frames).
pub(crate) fn read_bvh(
    bytes: &[u8],
    path: &Path,
) -> Result<(RawClip, Vec<ImportWarning>), ImportError> {
    let text = decode(bytes);
    let mut warnings = Vec::new();
    let bvh = parse(&text, path, &mut warnings)?;
    Ok((convert(&bvh, path, bytes.len())?, warnings))
}

fn err<T>(path: &Path, line: usize, msg: impl Into<String>) -> Result<T, ImportError> {
    Err(ImportError::new(path, Some(line), msg))
}

fn number(path: &Path, line: usize, text: &str, what: &str) -> Result<f64, ImportError> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => err(path, line, format!("non-finite number '{text}' in {what}")),
        Err(_) => err(
            path,
            line,
            format!("bad number '{}' in {what}", cut_token(text, 80)),
        ),
    }
}

fn parse(text: &str, path: &Path, warnings: &mut Vec<ImportWarning>) -> Result<Bvh, ImportError> {
    let all = lines(text);
    let Some(motion) = all
        .iter()
        .position(|(_, l)| l.trim().eq_ignore_ascii_case("MOTION"))
    else {
        let last = all.len().max(1);
        return err(
            path,
            last,
            "no MOTION section (not a BVH file, or truncated)",
        );
    };
    let tokens: Vec<(usize, &str)> = all[..motion]
        .iter()
        .flat_map(|&(n, l)| l.split_whitespace().map(move |t| (n, t)))
        .collect();
    let motion_line = all[motion].0;
    let joints = parse_hierarchy(&tokens, path, motion_line)?;
    let num_channels: usize = joints.iter().map(|j| j.channels.len()).sum();

    let mut rest = all[motion + 1..]
        .iter()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some(&(frames_no, frames_line)) = rest.next() else {
        return err(path, motion_line, "MOTION section lacks 'Frames:'");
    };
    let frames_line = frames_line.trim();
    let num_frames = match frames_line.split_once(':') {
        Some((k, v)) if k.trim().eq_ignore_ascii_case("frames") => {
            match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return err(
                        path,
                        frames_no,
                        format!("bad frame count in '{frames_line}' (need an integer >= 1)"),
                    );
                }
            }
        }
        _ => {
            return err(
                path,
                frames_no,
                format!("expected 'Frames: N', found '{frames_line}'"),
            );
        }
    };
    let Some(&(time_no, time_line)) = rest.next() else {
        return err(path, frames_no, "MOTION section lacks 'Frame Time:'");
    };
    let time_line = time_line.trim();
    let frame_time = match time_line.split_once(':') {
        Some((k, v))
            if k.split_whitespace()
                .map(str::to_ascii_lowercase)
                .eq(["frame", "time"]) =>
        {
            number(path, time_no, v.trim(), "Frame Time")?
        }
        _ => {
            return err(
                path,
                time_no,
                format!("expected 'Frame Time: T', found '{time_line}'"),
            );
        }
    };
    if frame_time <= 0.0 {
        return err(
            path,
            time_no,
            format!("Frame Time must be > 0, found {frame_time}"),
        );
    }

    // Each value takes at least two characters of the text: reserve no more than it can hold,
    // whatever 'Frames:' declares.
    let mut values = Vec::with_capacity(
        num_frames
            .saturating_mul(num_channels)
            .min(text.len() / 2 + 1),
    );
    let mut got = 0usize;
    let mut last_line = time_no;
    for &(no, line) in rest.by_ref() {
        if got == num_frames {
            let extra = 1 + all[all.iter().position(|&(n, _)| n == no).unwrap_or(0) + 1..]
                .iter()
                .filter(|(_, l)| !l.trim().is_empty())
                .count();
            warnings.push(ImportWarning {
                path: path.to_path_buf(),
                line: Some(no),
                message: format!("{extra} data line(s) beyond 'Frames: {num_frames}' ignored"),
            });
            break;
        }
        let before = values.len();
        for tok in line.split_whitespace() {
            values.push(number(path, no, tok, "frame data")?);
        }
        let count = values.len() - before;
        if count != num_channels {
            return err(
                path,
                no,
                format!(
                    "frame {} has {count} values, expected {num_channels} (one per channel)",
                    got + 1
                ),
            );
        }
        got += 1;
        last_line = no;
    }
    if got < num_frames {
        let at = all.last().map_or(last_line, |&(n, _)| n.max(last_line));
        return err(
            path,
            at,
            format!(
                "header says 'Frames: {num_frames}' but the data ends after {got} frame line(s) (last data on line {last_line})"
            ),
        );
    }
    Ok(Bvh {
        joints,
        frame_time,
        values,
        num_frames,
        num_channels,
    })
}

fn parse_hierarchy(
    tokens: &[(usize, &str)],
    path: &Path,
    motion_line: usize,
) -> Result<Vec<Joint>, ImportError> {
    let mut p = HierarchyParser {
        tokens,
        pos: 0,
        path,
        motion_line,
        joints: Vec::new(),
        channel_count: 0,
        names: std::collections::HashSet::new(),
    };
    let (l, first) = p.take("HIERARCHY")?;
    if !first.eq_ignore_ascii_case("HIERARCHY") {
        return err(
            path,
            l,
            format!("file does not start with HIERARCHY (found '{first}')"),
        );
    }
    // Stack of open blocks: Some(joint) for a ROOT/JOINT body, None for an End Site.
    let mut stack: Vec<Option<usize>> = Vec::new();
    loop {
        if stack.is_empty() {
            if p.pos == tokens.len() {
                break;
            }
            stack.push(Some(p.root()?));
            continue;
        }
        let current = *stack.last().unwrap_or(&None);
        let (l, tok) = p.take("'}'")?;
        let key = tok.to_ascii_uppercase();
        match (key.as_str(), current) {
            ("}", _) => {
                stack.pop();
            }
            ("OFFSET", _) => {
                let mut o = [0.0; 3];
                for c in &mut o {
                    let (ln, t) = p.take("OFFSET value")?;
                    *c = number(path, ln, t, "OFFSET")?;
                }
                if let Some(j) = current {
                    p.joints[j].offset = o;
                }
            }
            ("CHANNELS", Some(j)) => p.channels(j)?,
            ("JOINT", Some(j)) => stack.push(Some(p.joint(j)?)),
            ("END", Some(_)) => {
                p.end_site()?;
                stack.push(None);
            }
            _ => {
                let inside = current.map_or("End Site".to_string(), |j| {
                    format!("joint {}", p.joints[j].name)
                });
                return err(
                    path,
                    l,
                    format!("unexpected '{}' in {inside}", cut_token(tok, 80)),
                );
            }
        }
    }
    if p.joints.is_empty() {
        return err(path, motion_line, "hierarchy has no ROOT");
    }
    Ok(p.joints)
}

/// The HIERARCHY section's reader: the tokens, where it is in them, and what it has built.
struct HierarchyParser<'t, 'a> {
    tokens: &'a [(usize, &'t str)],
    pos: usize,
    path: &'a Path,
    motion_line: usize,
    joints: Vec<Joint>,
    /// Channels declared so far (the next joint's first channel in a frame).
    channel_count: usize,
    /// Names seen so far: a set, so that a file with tens of thousands of joints stays linear.
    names: std::collections::HashSet<&'t str>,
}

impl<'t> HierarchyParser<'t, '_> {
    /// The next token (line, text); at the end, an error naming `what` was expected.
    fn take(&mut self, what: &str) -> Result<(usize, &'t str), ImportError> {
        match self.tokens.get(self.pos) {
            Some(&t) => {
                self.pos += 1;
                Ok(t)
            }
            None => err(
                self.path,
                self.motion_line,
                format!("hierarchy ends early: expected {what} before MOTION"),
            ),
        }
    }

    fn open_joint(
        &mut self,
        name: (usize, &'t str),
        parent: Option<usize>,
    ) -> Result<usize, ImportError> {
        if !self.names.insert(name.1) {
            return err(
                self.path,
                name.0,
                format!("duplicate joint name '{}'", cut_token(name.1, 80)),
            );
        }
        self.joints.push(Joint {
            name: name.1.to_string(),
            parent,
            offset: [0.0; 3],
            channels: Vec::new(),
            first_channel: 0,
            has_channels_line: false,
        });
        Ok(self.joints.len() - 1)
    }

    /// `ROOT name {` (the keyword not read yet): the new joint.
    fn root(&mut self) -> Result<usize, ImportError> {
        let (l, tok) = self.take("ROOT")?;
        if !tok.eq_ignore_ascii_case("ROOT") {
            return err(
                self.path,
                l,
                format!("expected ROOT, found '{}'", cut_token(tok, 80)),
            );
        }
        let name = self.take("root name")?;
        let j = self.open_joint(name, None)?;
        let (l, brace) = self.take("'{'")?;
        if brace != "{" {
            return err(
                self.path,
                l,
                format!("expected '{{' after ROOT {}, found '{brace}'", name.1),
            );
        }
        Ok(j)
    }

    /// `name {` after JOINT inside joint `parent`: the new joint.
    fn joint(&mut self, parent: usize) -> Result<usize, ImportError> {
        let name = self.take("joint name")?;
        let child = self.open_joint(name, Some(parent))?;
        let (l2, brace) = self.take("'{'")?;
        if brace != "{" {
            return err(
                self.path,
                l2,
                format!("expected '{{' after JOINT {}, found '{brace}'", name.1),
            );
        }
        Ok(child)
    }

    /// `Site {` after End.
    fn end_site(&mut self) -> Result<(), ImportError> {
        let (l2, site) = self.take("Site")?;
        if !site.eq_ignore_ascii_case("Site") {
            return err(
                self.path,
                l2,
                format!("expected 'End Site', found 'End {site}'"),
            );
        }
        let (l3, brace) = self.take("'{'")?;
        if brace != "{" {
            return err(
                self.path,
                l3,
                format!("expected '{{' after End Site, found '{brace}'"),
            );
        }
        Ok(())
    }

    /// `count name…` after CHANNELS in joint `j`.
    fn channels(&mut self, j: usize) -> Result<(), ImportError> {
        let path = self.path;
        let (ln, count) = self.take("channel count")?;
        if self.joints[j].has_channels_line {
            return err(
                path,
                ln,
                format!("second CHANNELS line for {}", self.joints[j].name),
            );
        }
        self.joints[j].has_channels_line = true;
        let count: usize = count.parse().ok().filter(|&c| c <= 64).ok_or_else(|| {
            ImportError::new(
                path,
                Some(ln),
                format!("bad channel count '{count}' for {}", self.joints[j].name),
            )
        })?;
        self.joints[j].first_channel = self.channel_count;
        self.joints[j].channels.clear();
        for _ in 0..count {
            let (ln, name) = self.take("channel name")?;
            let ch = match name.to_ascii_lowercase().as_str() {
                "xposition" => Channel::Pos(0),
                "yposition" => Channel::Pos(1),
                "zposition" => Channel::Pos(2),
                "xrotation" => Channel::Rot(0),
                "yrotation" => Channel::Rot(1),
                "zrotation" => Channel::Rot(2),
                _ => {
                    return err(
                        path,
                        ln,
                        format!("unsupported channel '{name}' on {}", self.joints[j].name),
                    );
                }
            };
            let joint = &mut self.joints[j];
            if joint.channels.contains(&ch) {
                return err(
                    path,
                    ln,
                    format!("duplicate channel '{name}' on {}", joint.name),
                );
            }
            joint.channels.push(ch);
        }
        self.channel_count += count;
        Ok(())
    }
}

/// Quaternion (x, y, z, w) Hamilton product in f64.
fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

fn axis_quat(axis: usize, degrees: f64) -> [f64; 4] {
    let (s, c) = (degrees.to_radians() * 0.5).sin_cos();
    let mut q = [0.0, 0.0, 0.0, c];
    q[axis] = s;
    q
}

fn convert(bvh: &Bvh, path: &Path, input_len: usize) -> Result<RawClip, ImportError> {
    let nb = bvh.joints.len();
    let n = bvh.num_frames;
    check_size(path, None, nb, n, input_len)?;
    let descs: Vec<BoneDesc> = bvh
        .joints
        .iter()
        .map(|j| {
            let mut d = BoneDesc::new(j.name.clone(), j.parent);
            d.shell_distance = BVH_SHELL_DISTANCE;
            d.bind_translation =
                Vec3::new(j.offset[0] as f32, j.offset[1] as f32, j.offset[2] as f32);
            d
        })
        .collect();
    let skeleton = skeleton_ordered(descs)
        .map_err(|e| ImportError::new(path, None, format!("invalid hierarchy: {e}")))?;
    let mut rotations = vec![Quat::IDENTITY; nb * n];
    let mut translations = vec![Vec3::ZERO; nb * n];
    let scales = vec![Vec3::ONE; nb * n];
    for f in 0..n {
        let frame = &bvh.values[f * bvh.num_channels..(f + 1) * bvh.num_channels];
        for (b, j) in bvh.joints.iter().enumerate() {
            let mut q = [0.0, 0.0, 0.0, 1.0];
            let mut t = j.offset;
            for (k, ch) in j.channels.iter().enumerate() {
                let v = frame[j.first_channel + k];
                match *ch {
                    Channel::Rot(axis) => q = qmul(q, axis_quat(axis, v)), // intrinsic: post-multiply
                    Channel::Pos(axis) => t[axis] = v,
                }
            }
            let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
            let sign = if q[3] < 0.0 { -1.0 } else { 1.0 };
            let q = q.map(|c| sign * c / len);
            rotations[b * n + f] = quat_from_f64(q);
            translations[b * n + f] = Vec3::new(t[0] as f32, t[1] as f32, t[2] as f32);
        }
    }
    let rate = 1.0 / bvh.frame_time;
    let sample_rate = if (rate - rate.round()).abs() <= 1e-3 {
        rate.round()
    } else {
        rate
    };
    build_clip(
        path,
        file_stem(path),
        skeleton,
        sample_rate as f32,
        n,
        rotations,
        translations,
        scales,
        &|_, _, _| None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DMat3, DVec3};

    fn load(text: &str) -> Result<(RawClip, Vec<ImportWarning>), ImportError> {
        read_bvh(text.as_bytes(), Path::new("test.bvh"))
    }

    const ORDERS: [&str; 6] = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"];

    fn hierarchy_text(orders: &[&str], eol: &str) -> String {
        let mut h = vec![
            "HIERARCHY".to_string(),
            "ROOT root".into(),
            "{".into(),
            "  OFFSET 1 2 3".into(),
            "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation".into(),
        ];
        for (k, o) in orders.iter().enumerate() {
            let ch: Vec<String> = o.chars().map(|c| format!("{c}rotation")).collect();
            h.push(format!("  JOINT j{k}"));
            h.push("  {".into());
            h.push(format!("    OFFSET {} {} 4.5", k + 1, 2 * k as i32 - 3));
            h.push(format!("    CHANNELS 3 {}", ch.join(" ")));
        }
        h.extend([
            "End Site".to_string(),
            "{".into(),
            "OFFSET 0 1 0".into(),
            "}".into(),
        ]);
        h.extend(std::iter::repeat_n("}".to_string(), orders.len() + 1));
        h.join(eol)
    }

    fn euler(axis: usize, deg: f64) -> DMat3 {
        let r = deg.to_radians();
        match axis {
            0 => DMat3::from_rotation_x(r),
            1 => DMat3::from_rotation_y(r),
            _ => DMat3::from_rotation_z(r),
        }
    }

    #[test]
    fn every_rotation_order_matches_euler_matrices() {
        let vals: Vec<f64> = (0..3 * 8)
            .map(|i| ((i * 37 % 360) as f64) - 170.0 + 0.25 * i as f64)
            .collect();
        let frame: Vec<String> = vals.iter().map(|v| format!("{v}")).collect();
        let zero = vec!["0"; 24].join(" ");
        let text = format!(
            "{}\nMOTION\nFrames: 2\nFrame Time: 0.0083333\n{}\n{}\n",
            hierarchy_text(&ORDERS, "\n"),
            zero,
            frame.join(" ")
        );
        let (clip, warnings) = load(&text).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(clip.sample_rate, 120.0);
        assert_eq!(clip.num_bones(), 7);
        assert_eq!(clip.skeleton.names[0], "root");
        // Frame 0: zero rotations, root translation = position channels, others = OFFSET.
        assert_eq!(clip.translations[0], Vec3::new(0.0, 0.0, 0.0));
        assert_eq!(
            clip.translations[clip.index(3, 0)],
            Vec3::new(3.0, 1.0, 4.5)
        );
        for b in 0..7 {
            assert_eq!(clip.rotations[clip.index(b, 0)], Quat::IDENTITY);
        }
        // Frame 1: compare every local rotation with the product of Euler matrices in listed order.
        let orders: Vec<&str> = std::iter::once("ZXY").chain(ORDERS).collect();
        for (b, order) in orders.iter().enumerate() {
            let base = if b == 0 { 3 } else { 3 + 3 * b };
            let mut m = DMat3::IDENTITY;
            for (k, c) in order.chars().enumerate() {
                let axis = (c as u8 - b'X') as usize;
                m *= euler(axis, vals[base + k]);
            }
            let q = clip.rotations[clip.index(b, 1)].as_dquat();
            assert!(q.w >= 0.0);
            for v in [DVec3::X, DVec3::Y, DVec3::Z] {
                let d = (m * v - q * v).length();
                assert!(d < 1e-6, "bone {b} order {order}: {d}");
            }
        }
        assert_eq!(
            clip.translations[clip.index(0, 1)],
            Vec3::new(vals[0] as f32, vals[1] as f32, vals[2] as f32)
        );
    }

    #[test]
    fn line_endings_bom_and_end_sites() {
        for eol in ["\n", "\r\n", "\r"] {
            let text = format!(
                "\u{feff}{}{eol}MOTION{eol}Frames: 1{eol}{eol}Frame Time: 0.033333{eol}{}{eol}",
                hierarchy_text(&["ZXY"], eol),
                "1 2 3 90 0 0 0 0 0"
            );
            let (clip, _) = load(&text).unwrap();
            assert_eq!(clip.num_bones(), 2, "End Site must not be a bone");
            assert_eq!(clip.sample_rate, 30.0);
            assert_eq!(clip.num_samples, 1);
            let q = clip.rotations[0];
            assert!((q.z - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6, "{q}");
        }
    }

    #[test]
    fn frame_count_mismatches() {
        let base = format!(
            "{}\nMOTION\nFrames: 3\nFrame Time: 0.04\n",
            hierarchy_text(&["ZXY"], "\n")
        );
        let row = "0 0 0 0 0 0 0 0 0\n";
        // Lines: hierarchy is 15 lines, MOTION 16, Frames 17, Frame Time 18, data from 19.
        let e = load(&format!("{base}{row}{row}")).unwrap_err();
        assert!(
            e.message.contains("'Frames: 3' but the data ends after 2"),
            "{e}"
        );
        assert_eq!(e.line, Some(20));
        let (clip, w) = load(&format!("{base}{row}{row}{row}{row}\n{row}")).unwrap();
        assert_eq!(clip.num_samples, 3);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message
                .contains("2 data line(s) beyond 'Frames: 3' ignored"),
            "{}",
            w[0]
        );
        assert_eq!(w[0].line, Some(22));
        assert_eq!(clip.sample_rate, 25.0);
    }

    #[test]
    fn bad_values_name_their_line() {
        let base = format!(
            "{}\nMOTION\nFrames: 2\nFrame Time: 0.0123\n",
            hierarchy_text(&["ZXY"], "\n")
        );
        let e = load(&format!("{base}0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0\n")).unwrap_err();
        assert_eq!(e.line, Some(20));
        assert!(e.message.contains("8 values, expected 9"), "{e}");
        let e = load(&format!("{base}0 0 0 0 0 0 0 0 0\n0 0 0 0 inf 0 0 0 0\n")).unwrap_err();
        assert_eq!(e.line, Some(20));
        assert!(e.message.contains("non-finite"), "{e}");
        let e = load(&format!("{base}0 0 0 0 0 0 0 0 x1\n")).unwrap_err();
        assert_eq!(e.line, Some(19));
        assert!(e.message.contains("bad number 'x1'"), "{e}");
        // Non-integer rate: kept exact.
        let (clip, _) = load(&format!("{base}0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0 0\n")).unwrap();
        assert_eq!(clip.sample_rate, (1.0 / 0.0123f64) as f32);
    }

    #[test]
    fn hierarchy_errors() {
        let e = load("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Wrotation\n}\nMOTION\nFrames: 1\nFrame Time: 1\n0\n").unwrap_err();
        assert!(
            e.message.contains("unsupported channel 'Wrotation'") && e.line == Some(5),
            "{e}"
        );
        let e = load("HIERARCHY\nROOT a\n{\nOFFSET 0 0\n}\nMOTION\nFrames: 1\nFrame Time: 1\n\n")
            .unwrap_err();
        assert!(
            e.message.contains("bad number '}'") && e.line == Some(5),
            "{e}"
        );
        let e =
            load("HIERARCHY\nROOT a\n{\nJOINT a\n{\n}\n}\nMOTION\nFrames: 1\nFrame Time: 1\n\n")
                .unwrap_err();
        assert!(
            e.message.contains("duplicate joint name 'a'") && e.line == Some(4),
            "{e}"
        );
        let e = load("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\n").unwrap_err();
        assert!(e.message.contains("no MOTION"), "{e}");
        let e = load("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nMOTION\nFrames: 1\nFrame Time: 1\n\n")
            .unwrap_err();
        assert!(
            e.message.contains("hierarchy ends early") && e.line == Some(5),
            "{e}"
        );
    }

    #[test]
    fn positions_on_every_joint_and_multiple_roots() {
        let text = "HIERARCHY\nROOT a\n{\nOFFSET 1 2 3\nCHANNELS 3 Xrotation Yrotation Zrotation\n\
                    JOINT b\n{\nOFFSET 4 5 6\nCHANNELS 4 Yposition Zrotation Xrotation Yrotation\n}\n}\n\
                    ROOT c\n{\nOFFSET 7 8 9\nCHANNELS 2 Zposition Xposition\n}\n\
                    MOTION\nFrames: 1\nFrame Time: 0.5\n0 0 0 50 0 0 0 70 80\n";
        let (clip, _) = load(text).unwrap();
        assert_eq!(clip.skeleton.names, ["a", "b", "c"]);
        assert_eq!(
            clip.skeleton.parents,
            [crate::NO_PARENT, 0, crate::NO_PARENT]
        );
        assert_eq!(clip.sample_rate, 2.0);
        assert_eq!(clip.translations[0], Vec3::new(1.0, 2.0, 3.0)); // no position channels: OFFSET
        assert_eq!(clip.translations[1], Vec3::new(4.0, 50.0, 6.0)); // Y replaced, X/Z from OFFSET
        assert_eq!(clip.translations[2], Vec3::new(80.0, 8.0, 70.0));
        assert_eq!(clip.skeleton.bind_translations[2], Vec3::new(7.0, 8.0, 9.0));
        assert_eq!(clip.skeleton.shell_distances, [3.0; 3]);
    }
}
