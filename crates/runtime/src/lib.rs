//! ClipForge's runtime, the part a game links: a validated, read-only view over a compressed
//! `.cfa` buffer ([`ClipReader`]) and `.cfs` scalar track list ([`scalar::ScalarReader`]);
//! full-pose and single-bone sampling at any time (linear interpolation, nlerp for rotations)
//! with no allocation. Layout: `docs/FORMAT.md`.
//!
//! As in ozz-animation, the runtime is its own crate and depends on nothing offline (raw clips,
//! importers, the compressor, the metric live in `clipforge-anim`, above it): the crate graph is
//! the check. Shared with the offline side: [`pose`] (SoA poses, the local → object pass),
//! [`skeleton`] (the hierarchy) and [`limits`] (what a valid buffer may declare).

// No std: a game links it on any target; the reader's tables are built once with `alloc`, and no
// sampling call allocates (tests/no_alloc.rs counts).
#![no_std]
// Parallel arrays indexed by bone (structure-of-arrays) read best as index loops.
#![allow(clippy::needless_range_loop)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub(crate) mod fmath;
pub mod format;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod group4;
pub mod jobs;
pub mod limits;
pub mod metadata;
pub mod pose;
pub mod quant;
pub mod relayout;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod rot4;
mod sampler;
pub mod scalar;
pub mod segmeta;
pub mod skeleton;
mod validate;

pub use pose::{AdditiveFormat, Pose, PoseMut};
pub use sampler::Sampler;
use sampler::SegCache;
pub use skeleton::{BoneDesc, NO_PARENT, Skeleton};

use alloc::string::String;
use alloc::vec::Vec;
use format::*;
use glam::{Quat, Vec3A, Vec4};
use quant::rebuild_rotation_unnormalized;

/// How time outside `[0, duration]` is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Looping {
    /// Time is clamped to the clip.
    #[default]
    Clamp,
    /// Time wraps; the last sample interpolates towards the first.
    Wrap,
}

/// Why a sampling call that takes caller-given indices refused them (nothing was written).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SampleError {
    #[error("bone index {bone} is not a bone of this clip ({num_bones} bones)")]
    NoSuchBone { bone: u32, num_bones: usize },
    #[error("track index {track} is not a track of this list ({num_tracks} tracks)")]
    NoSuchTrack { track: u32, num_tracks: usize },
    #[error("the output has room for {got} entries, the clip needs {expected}")]
    OutputSize { expected: usize, got: usize },
    #[error("not an additive clip (no additive format in its flags)")]
    NotAdditive,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FormatError {
    #[error("buffer truncated: needs {needed} bytes, has {len}")]
    Truncated { needed: usize, len: usize },
    #[error("not a ClipForge .cfa buffer (bad magic)")]
    BadMagic,
    #[error("unsupported .cfa version {0}")]
    UnsupportedVersion(u16),
    #[error(
        "checksum mismatch (stored {stored:08x}, computed {computed:08x}): the buffer is corrupt"
    )]
    ChecksumMismatch { stored: u32, computed: u32 },
    #[error("corrupt buffer: {0}")]
    Corrupt(String),
}

#[inline]
fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
#[inline]
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
#[inline]
fn f32_at(b: &[u8], o: usize) -> f32 {
    f32::from_bits(u32_at(b, o))
}

/// Skeleton and names stored after the runtime data.
#[derive(Clone, Debug)]
struct Metadata<'a> {
    /// In the buffer (checked UTF-8).
    clip_name: &'a str,
    original_num_samples: usize,
    skeleton: Skeleton,
    /// What the clip was compressed with, when the file says ([`metadata`]).
    settings: Option<metadata::Settings>,
}

/// A validated read-only view over a compressed clip. Construction checks every offset, count,
/// width and float, so sampling afterwards cannot read out of bounds or panic.
#[derive(Clone, Debug)]
// In declaration order: what a full-pose call reads comes first, so that a cold call finds it in
// the struct's first cache lines (the metadata, which sampling never reads, last).
#[repr(C)]
pub struct ClipReader<'a> {
    buf: &'a [u8],
    /// The first [`SEG_HEAD`] entries of [`Self::segs`] again, inside the reader: a cold call
    /// in those segments finds its segment's place in a line of the reader (whose address the
    /// caller holds) instead of in a table the reader points to, one dependent miss fewer
    /// before the bits (reader → bits instead of reader → table → bits). Unused entries are
    /// never read (a segment index is below [`Self::num_segments`]).
    seg_head: [SegEntry; SEG_HEAD],
    /// The animated sub-tracks in stream order, with everything the hot path needs of each in
    /// one place (one array walked front to back).
    tracks: Vec<Track>,
    /// Every default and constant sub-track decoded once, at construction: the hot path only
    /// copies them and decodes the animated ones.
    fixed_rotations: Vec<Quat>,
    fixed_translations: Vec<Vec3A>,
    fixed_scales: Vec<Vec3A>,
    /// Per kind (rotation, translation, scale): a bone whose fixed value every default and
    /// constant sub-track of that kind shares bit for bit, or [`NO_FILL`]. The full pose then
    /// fills the pose's array with it instead of copying the table (typically the scales, all
    /// 1: eleven cache lines fewer for 44 bones, cold).
    fill: [u32; 3],
    /// x86-64: the CPU has AVX2, BMI1 and BMI2 ([`jobs::avx2_bmi2`]), so the full pose runs
    /// its copy compiled for them ([`Self::decode_into_avx2`]; the same bits).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    avx2: bool,
    num_bones: usize,
    num_samples: usize,
    num_segments: usize,
    /// Per segment: where its widths (in [`Self::seg_meta`]) and bits (in the buffer) are, its
    /// bits per sample.
    segs: Vec<SegEntry>,
    /// Every segment's metadata (widths, segment ranges, dropped components) as version 4 lays
    /// out a block's, checked: copied from the buffer, or expanded from version 5's coded
    /// metadata (which cannot be read at a segment without the ones before it). The decoder
    /// reads metadata only from here and bits only from the buffer.
    seg_meta: SegMeta,
    /// Version 4 and later: segment ranges in groups of four tracks
    /// ([`format::grouped_range_offset`]), decoded four tracks at a time.
    grouped: bool,
    /// Version 4 on x86-64: [`Self::tracks`] again by groups of four ([`group4`]), what the
    /// full pose reads of them (the track table is not read).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    groups: Vec<Group4>,
    /// Where section 6 (segments) starts: what [`relayout`] keeps before it.
    segments_off: usize,
    num_animated: usize,
    sample_rate: f32,
    wrap: bool,
    /// 0 plain; 1 relative, 2 additive0, 3 additive1 ([`FLAG_ADDITIVE_MASK`]).
    additive: u8,
    /// Reference rotations ([`FLAG_ROTATION_REFERENCES`]), indexed by [`Track::reference`].
    refs: Vec<Quat>,
    /// Per bone: index of its first animated sub-track and how many it has.
    bone_animated: Vec<(u32, u8)>,
    /// Per segment, per animated sub-track: its bit offset inside one sample of the segment
    /// (single bones and bone lists start there instead of walking the widths before it).
    seg_offsets: Vec<u32>,
    /// Bone and sub-track (0 rotation, 1 translation, 2 scale) of every constant sub-track
    /// (kinds 1 and 3): what a pose sampled with [`Defaults::Skip`] still gets written.
    constants: Vec<(u32, u8)>,
    desc_off: usize,
    runtime_size: usize,
    meta: Metadata<'a>,
}

/// A cache line's bytes, on a line boundary ([`SegMeta`]'s storage).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Every segment's metadata in the reader's memory, each segment's block starting on a cache
/// line (but tiny blocks, [`SegMeta::aligned`]): a cold call reads the fewest lines of it (a
/// 40-byte block of a single-segment clip is one line, not two when it straddles a boundary).
/// Reads as bytes ([`core::ops::Deref`]).
#[derive(Clone, Debug)]
struct SegMeta {
    lines: Vec<Line>,
    len: usize,
}

impl SegMeta {
    /// `meta`'s blocks of `block_len` bytes (back to back, then [`segmeta::EXPANDED_TAIL`]
    /// bytes) each moved to the next line boundary, and `segs`' offsets moved with them.
    /// Blocks under half a line stay back to back when there are several (the padding would
    /// more than double them: a clip of one or two animated sub-tracks in thousands of segments
    /// would take up to 8 × its metadata's memory), so the copy is at most twice the expanded
    /// metadata. Offsets past `u32` are refused.
    fn aligned(meta: &[u8], segs: &mut [SegEntry], block_len: usize) -> Result<Self, FormatError> {
        let stride = segmeta::reader_stride(segs.len(), block_len);
        let len = segs.len() * stride + segmeta::EXPANDED_TAIL;
        // Straight into the lines (zeroed: the padding and the tail read as 0), one allocation
        // (a byte buffer first, then the lines, was two: a few per cent of a tiny clip's load).
        let mut lines = alloc::vec![Line([0; 64]); len.div_ceil(64)];
        // SAFETY: `Line` is 64 plain bytes without padding (repr(C) over [u8; 64]): the lines
        // are `64 · lines.len() ≥ len` initialized bytes, borrowed mutably here alone.
        let bytes = unsafe {
            core::slice::from_raw_parts_mut(lines.as_mut_ptr().cast::<u8>(), 64 * lines.len())
        };
        for (s, e) in segs.iter_mut().enumerate() {
            let from = e.widths_off as usize;
            let to = &mut bytes[s * stride..s * stride + block_len];
            to.copy_from_slice(&meta[from..from + block_len]);
            e.widths_off = u32::try_from(s * stride).map_err(|_| {
                FormatError::Corrupt("segment metadata beyond 4 GiB in memory".into())
            })?;
        }
        Ok(Self { lines, len })
    }
}

impl core::ops::Deref for SegMeta {
    type Target = [u8];
    #[inline(always)]
    fn deref(&self) -> &[u8] {
        // SAFETY: `Line` is 64 plain bytes without padding (repr(C) over [u8; 64]), so the
        // vector's lines are `64 · lines.len()` initialized bytes, of which `len` are viewed.
        unsafe { core::slice::from_raw_parts(self.lines.as_ptr().cast::<u8>(), self.len) }
    }
}

/// Where a segment's parts are (validated).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SegEntry {
    /// Byte offset of the widths in the reader's segment metadata (ranges and dropped
    /// components follow them).
    pub(crate) widths_off: u32,
    /// Byte offset of the bit stream in the buffer.
    pub(crate) data_off: u32,
    /// Bits per sample.
    pub(crate) bits: u32,
    /// Version 4 on x86-64: every group of four tracks is plain ([`group4::plain`]), so the
    /// full pose takes the four-lane path without testing each group's widths.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    pub(crate) plain: bool,
}

/// One animated sub-track as the decoder sees it.
#[derive(Clone, Copy, Debug)]
struct Track {
    /// Clip range: min x, y, z then extent x, y, z (rotations: of the kept components).
    range: [f32; 6],
    bone: u16,
    /// Index into [`ClipReader::refs`], or [`NO_REFERENCE`] (a clip has at most 65,535 bones,
    /// so both fit 16 bits: the track is 32 bytes, two to a cache line).
    reference: u16,
    /// 0 rotation, 1 translation, 2 scale.
    kind: u8,
    /// The descriptor's dropped component (rotations).
    dropped: u8,
    /// For a rotation whose dropped component is stored per segment: its slot in the segment's
    /// list, else [`NO_SLOT`].
    slot: u16,
}

const NO_REFERENCE: u16 = u16::MAX;

/// Up to four consecutive animated sub-tracks, lane by lane: what the version-4 full pose
/// needs of each ([`Track`]'s fields; lanes past the last track are never read), in two cache
/// lines.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[derive(Clone, Copy, Debug)]
struct Group4 {
    clip: group4::GroupRanges,
    bone: [u16; 4],
    reference: [u16; 4],
    slot: [u16; 4],
    kind: [u8; 4],
    dropped: [u8; 4],
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
const _: () = assert!(core::mem::size_of::<Group4>() == 128);

/// [`Group4::slot_bytes`] of a group without a per-segment dropped component.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
const NO_SLOTS: u64 = u64::MAX;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
impl Group4 {
    /// The four slots as one word (all ones: no lane has a per-segment dropped component).
    #[inline(always)]
    fn slot_bytes(&self) -> [u8; 8] {
        let s = self.slot.map(u16::to_ne_bytes);
        [
            s[0][0], s[0][1], s[1][0], s[1][1], s[2][0], s[2][1], s[3][0], s[3][1],
        ]
    }

    /// The dropped component of each lane's rotation (one byte a lane) in the segment whose
    /// per-segment dropped components are at `dropped_off` of `seg_meta`. Most groups have no
    /// per-segment one (a clip has few: the roots'), and then it is the group's own four bytes:
    /// one test instead of a test per lane (~110 instructions fewer per 44-bone call).
    #[inline(always)]
    fn dropped_at(&self, seg_meta: &[u8], dropped_off: usize) -> u32 {
        if u64::from_ne_bytes(self.slot_bytes()) == NO_SLOTS {
            return u32::from_le_bytes(self.dropped);
        }
        u32::from_le_bytes(core::array::from_fn(|j| {
            if self.slot[j] == NO_SLOT {
                self.dropped[j]
            } else {
                seg_meta[dropped_off + self.slot[j] as usize]
            }
        }))
    }
    fn new(tracks: &[Track]) -> Self {
        let lane = |j: usize| tracks.get(j);
        Self {
            clip: core::array::from_fn(|row| {
                Vec4::from_array(core::array::from_fn(|j| {
                    lane(j).map_or(0.0, |t| t.range[row])
                }))
            }),
            bone: core::array::from_fn(|j| lane(j).map_or(0, |t| t.bone)),
            reference: core::array::from_fn(|j| lane(j).map_or(NO_REFERENCE, |t| t.reference)),
            slot: core::array::from_fn(|j| lane(j).map_or(NO_SLOT, |t| t.slot)),
            kind: core::array::from_fn(|j| lane(j).map_or(1, |t| t.kind)),
            dropped: core::array::from_fn(|j| lane(j).map_or(0, |t| t.dropped)),
        }
    }
}
const _: () = assert!(core::mem::size_of::<Track>() == 32);

/// A rotation as [`ClipReader::decode_run`] hands it on, per sample: the kept components (lane
/// w: the raw w when the segment drops nothing) and the dropped component.
type RawRotation = ((Vec4, u8), (Vec4, u8));
const NO_SLOT: u16 = u16::MAX;
const NO_FILL: u32 = u32::MAX;
/// Segment entries kept inside the reader ([`ClipReader::seg_head`]): one cache line of them
/// (half of the regression clips have one segment, most of the rest two).
const SEG_HEAD: usize = 4;

/// `dst` gets `src` copied, or `src[fill]` everywhere ([`ClipReader::fill`]).
#[inline(always)]
fn fill_or_copy<T: Copy>(dst: &mut [T], src: &[T], fill: u32) {
    if fill == NO_FILL {
        dst.copy_from_slice(src);
    } else {
        dst.fill(src[fill as usize]);
    }
}

/// Where [`ClipReader::decode_run`] hands each decoded animated sub-track.
trait Sink {
    /// Bone `bone`'s translation (`kind` 1) or scale (x, y, z), blended.
    fn vector(&mut self, kind: u8, bone: u16, v: Vec4);
    /// Bone `bone`'s rotation, raw, with its reference ([`ClipReader::finish_rotation`]
    /// finishes it).
    fn rotation(&mut self, r: &ClipReader, bone: u16, reference: u16, raw: RawRotation);
}

/// One bone's sub-tracks, into (rotation, translation, scale).
struct BoneSink<'o> {
    out: &'o mut (Quat, Vec3A, Vec3A),
    exact: bool,
    alpha: f32,
}

impl Sink for BoneSink<'_> {
    #[inline(always)]
    fn vector(&mut self, kind: u8, _: u16, v: Vec4) {
        match kind {
            1 => self.out.1 = Vec3A::from_vec4(v),
            _ => self.out.2 = Vec3A::from_vec4(v),
        }
    }
    #[inline(always)]
    fn rotation(&mut self, r: &ClipReader, _: u16, reference: u16, raw: RawRotation) {
        self.out.0 = Quat::from_vec4(r.finish_rotation(reference, raw, self.exact, self.alpha));
    }
}

/// Every animated sub-track, into a pose's arrays; on x86-64 the rotations wait in a batch of
/// four ([`rot4`]), so call [`PoseSink::flush`] after the run.
struct PoseSink<'p> {
    rotations: &'p mut [Quat],
    translations: &'p mut [Vec3A],
    scales: &'p mut [Vec3A],
    exact: bool,
    alpha: f32,
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    batch: rot4::Chunk,
}

impl PoseSink<'_> {
    /// Finishes the rotations waiting in the chunk, four at a time.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline(always)]
    fn flush(&mut self, r: &ClipReader) {
        let n = self.batch.len;
        for g in 0..n.div_ceil(4) {
            let q = self.batch.finish4(g, self.exact, self.alpha);
            for (j, q) in q.into_iter().enumerate().take(n - 4 * g) {
                let dest = self.batch.track[4 * g + j];
                self.rotations[(dest & 0xFFFF) as usize] =
                    Quat::from_vec4(r.referenced((dest >> 16) as u16, q));
            }
        }
        self.batch.len = 0;
    }
}

impl Sink for PoseSink<'_> {
    #[inline(always)]
    fn vector(&mut self, kind: u8, bone: u16, v: Vec4) {
        match kind {
            1 => self.translations[bone as usize] = Vec3A::from_vec4(v),
            _ => self.scales[bone as usize] = Vec3A::from_vec4(v),
        }
    }
    #[inline(always)]
    fn rotation(&mut self, r: &ClipReader, bone: u16, reference: u16, raw: RawRotation) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            // Four at a time: square roots and divisions are most of finishing a rotation. The
            // chunk keeps where each goes (bone, reference), so flushing reads no track table.
            self.batch
                .push(bone as u32 | (reference as u32) << 16, raw.0, raw.1);
            if self.batch.len == rot4::CHUNK {
                self.flush(r);
            }
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        {
            self.rotations[bone as usize] =
                Quat::from_vec4(r.finish_rotation(reference, raw, self.exact, self.alpha));
        }
    }
}

/// What a sampling call does with the sub-tracks stored as default (the bind pose value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Defaults {
    /// Written (the bind pose value): the pose is complete after the call.
    #[default]
    Write,
    /// Left as they are in the caller's pose (ACL's `skipped` writer mode): for a caller that
    /// filled them once (e.g. with [`ClipReader::bind_pose_into`]) and saves the writes.
    Skip,
}

/// Where one sample's data lives: its segment's widths, ranges (`usize::MAX` for a
/// single-segment clip, which has none) and per-segment dropped components, and the bit
/// position of the sample.
#[derive(Clone, Copy)]
struct SegView {
    /// [`SegEntry::plain`].
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    plain: bool,
    widths_off: usize,
    ranges_off: usize,
    dropped_off: usize,
    bitpos: usize,
    /// Bits per sample in the segment (what a cold call prefetches of a sample).
    sample_bits: usize,
}

impl<'a> ClipReader<'a> {
    /// Validates `buf` completely and returns a view over it: each section by its own
    /// validator ([`validate`]), in file order, the reader assembled from their results.
    pub fn new(buf: &'a [u8]) -> Result<Self, FormatError> {
        let h = validate::header(buf)?;
        let mut c = validate::Cursor {
            buf,
            pos: HEADER_SIZE,
            end: h.runtime_size,
        };
        let d = validate::descriptors(buf, &mut c, &h)?;
        let fixed = validate::fixed_tables(buf, &mut c, &h, &d)?;
        let clip_ranges = validate::clip_ranges(buf, &mut c, h.version, &d)?;
        let references = validate::references(buf, &mut c, h.flags, &d)?;
        let mut segs = validate::segments(buf, &mut c, &h, &d)?;
        let meta = validate::read_metadata(buf, &h)?;
        let t = validate::tables(
            buf,
            &h,
            &d,
            &fixed,
            &clip_ranges,
            &references,
            &meta.skeleton,
        )?;
        let grouped = h.version >= GROUPED_SEGMENTS_VERSION;
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        let groups = if grouped {
            t.tracks.chunks(GROUP).map(Group4::new).collect()
        } else {
            Vec::new()
        };
        // The expanded metadata allocated after the decoder's other tables (the fixed values,
        // the groups), beside them on the heap: a cold call reads it with them. Versions 1–4
        // copy it from the buffer (validated there), version 5 from its expansion.
        let meta_src = if h.version >= CODED_METADATA_VERSION {
            &segs.meta[..]
        } else {
            buf
        };
        let seg_meta = SegMeta::aligned(meta_src, &mut segs.segs, segs.block_len)?;
        // Read from the copy, whose zero tail lets the last group's 8-byte load stay in bounds.
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if grouped {
            for e in &mut segs.segs {
                e.plain = (0..h.num_animated.div_ceil(GROUP)).all(|g| {
                    let o = e.widths_off as usize + 8 * g;
                    let lanes = (h.num_animated - GROUP * g).min(GROUP);
                    group4::plain(group_widths(&seg_meta, o, lanes))
                });
            }
        }
        let mut seg_head = [SegEntry::default(); SEG_HEAD];
        for (h, e) in seg_head.iter_mut().zip(&segs.segs) {
            *h = *e;
        }
        Ok(Self {
            buf,
            seg_head,
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            groups,
            fill: t.fill,
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            avx2: jobs::avx2_bmi2(),
            num_bones: h.num_bones,
            num_samples: h.num_samples,
            sample_rate: h.sample_rate,
            num_segments: h.num_segs,
            wrap: h.wrap,
            additive: h.additive,
            desc_off: d.desc_off,
            segs: segs.segs,
            grouped,
            segments_off: segs.table_off,
            num_animated: h.num_animated,
            runtime_size: h.runtime_size,
            fixed_rotations: t.fixed_rotations,
            fixed_translations: t.fixed_translations,
            fixed_scales: t.fixed_scales,
            tracks: t.tracks,
            refs: t.refs,
            bone_animated: t.bone_animated,
            seg_offsets: segs.seg_offsets,
            seg_meta,
            constants: t.constants,
            meta,
        })
    }

    pub fn num_bones(&self) -> usize {
        self.num_bones
    }
    /// Samples stored (one fewer than the original when the clip wraps).
    pub fn num_stored_samples(&self) -> usize {
        self.num_samples
    }
    /// Samples of the original clip.
    pub fn num_samples(&self) -> usize {
        self.meta.original_num_samples
    }
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }
    pub fn duration(&self) -> f32 {
        let n = self.meta.original_num_samples;
        if n <= 1 {
            0.0
        } else {
            (n - 1) as f32 / self.sample_rate
        }
    }
    /// True when the compressor found the clip looping and dropped its last sample.
    pub fn is_wrapping(&self) -> bool {
        self.wrap
    }

    /// The clip is an additive layer in this format: 1 relative, 2 additive0, 3 additive1 (ACL's
    /// formats; `docs/FORMAT.md`); 0 for a plain clip.
    pub fn additive_format(&self) -> u8 {
        self.additive
    }
    pub fn num_segments(&self) -> usize {
        self.num_segments
    }
    pub fn num_animated_subtracks(&self) -> usize {
        self.num_animated
    }
    /// Size of the runtime data (without the names/hierarchy/bind-pose metadata).
    pub fn runtime_size(&self) -> usize {
        self.runtime_size
    }
    pub fn total_size(&self) -> usize {
        self.buf.len()
    }
    pub fn clip_name(&self) -> &str {
        self.meta.clip_name
    }
    pub fn skeleton(&self) -> &Skeleton {
        &self.meta.skeleton
    }
    /// The settings the clip was compressed with and their sources, when the file records them
    /// (flags bit 7; files from earlier versions do not).
    pub fn settings(&self) -> Option<&metadata::Settings> {
        self.meta.settings.as_ref()
    }

    /// Kinds (default/constant/animated) of a bone's rotation, translation and scale.
    pub fn subtrack_kinds(&self, bone: usize) -> [u8; 3] {
        unpack_descriptor(self.buf[self.desc_off + bone]).0
    }

    /// Bit widths of every animated sub-track component in every segment.
    pub fn segment_widths(&self, seg: usize) -> impl Iterator<Item = [u32; 3]> + '_ {
        let off = self.segs[seg].widths_off as usize;
        (0..self.num_animated).map(move |a| unpack_widths(u16_at(&self.seg_meta, off + 2 * a)))
    }

    /// Segment of stored sample `sample` and the sample's index inside it.
    #[inline(always)]
    fn segment_of(&self, sample: usize) -> (usize, usize) {
        let seg = (sample / SEGMENT_SIZE).min(self.num_segments - 1);
        (seg, sample - seg * SEGMENT_SIZE)
    }

    /// Where segment `seg`'s widths, ranges, dropped components and bits are, and the bit
    /// position of sample `in_seg` in it.
    #[inline(always)]
    fn view(&self, seg: usize, in_seg: usize) -> SegView {
        let e = if seg < SEG_HEAD {
            self.seg_head[seg]
        } else {
            self.segs[seg]
        };
        let widths_off = e.widths_off as usize;
        let data_off = e.data_off as usize;
        let bits = e.bits as usize;
        let multi = self.num_segments > 1;
        SegView {
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            plain: e.plain,
            widths_off,
            ranges_off: if multi {
                widths_off + 2 * self.num_animated
            } else {
                usize::MAX
            },
            dropped_off: widths_off + self.num_animated * if multi { 8 } else { 2 },
            bitpos: data_off * 8 + in_seg * bits,
            sample_bits: bits,
        }
    }

    /// Base and step of the three components of animated sub-track `a` in a segment (lanes x,
    /// y, z): [`Dequant::new`]'s arithmetic, lane by lane, so the values are the same bits.
    #[inline(always)]
    fn dequant(&self, v: &SegView, a: usize, w: [u32; 3]) -> (Vec4, Vec4) {
        let r = &self.tracks[a].range;
        let cmin = Vec4::new(r[0], r[1], r[2], 0.0);
        let cext = Vec4::new(r[3], r[4], r[5], 0.0);
        // The segment range in 255ths (0 and 255/255 = 1 for a single segment), from the table
        // of the divisions Dequant::new makes.
        let (smin, sext) = if v.ranges_off != usize::MAX {
            let b: [u8; 6] = if self.grouped {
                core::array::from_fn(|row| {
                    self.seg_meta[v.ranges_off + grouped_range_offset(self.num_animated, a, row)]
                })
            } else {
                let o = v.ranges_off + 6 * a;
                self.seg_meta[o..o + 6].try_into().unwrap()
            };
            let f = |q: u8| quant::SEGMENT_FRACTIONS[q as usize];
            (
                Vec4::new(f(b[0]), f(b[1]), f(b[2]), 0.0),
                Vec4::new(f(b[3]), f(b[4]), f(b[5]), 0.0),
            )
        } else {
            (Vec4::ZERO, Vec4::new(1.0, 1.0, 1.0, 0.0))
        };
        let base = cmin + cext * smin;
        let range = cext * sext;
        let inv = Vec4::new(
            quant::inv_steps(w[0]),
            quant::inv_steps(w[1]),
            quant::inv_steps(w[2]),
            0.0,
        );
        let zero = glam::BVec4A::new(w[0] == 0, w[1] == 0, w[2] == 0, false);
        (
            Vec4::select(zero, base + Vec4::splat(0.5) * range, base),
            Vec4::select(zero, Vec4::ZERO, range * inv),
        )
    }

    /// The three components at bit position `pos` with widths `w` (sum `total`): one 8-byte
    /// load and three masks when they fit in it and none is raw, else component by component.
    #[inline(always)]
    fn values(&self, pos: usize, w: [u32; 3], total: u32, dq: (Vec4, Vec4)) -> Vec4 {
        let byte = pos >> 3;
        // Widths are ≤ 24 or 32 (raw): their OR is below 32 when none is raw.
        if total <= 56 && (w[0] | w[1] | w[2]) < quant::RAW_BITS && byte + 8 <= self.buf.len() {
            // The widths were checked (≤ 24 each, or raw), so no shift reaches 64.
            let word =
                u64::from_le_bytes(self.buf[byte..byte + 8].try_into().unwrap()) >> (pos & 7);
            let m = |b: u32| (1u64 << b) - 1;
            let q = Vec4::new(
                (word & m(w[0])) as u32 as f32,
                ((word >> w[0]) & m(w[1])) as u32 as f32,
                ((word >> (w[0] + w[1])) & m(w[2])) as u32 as f32,
                0.0,
            );
            return dq.0 + dq.1 * q;
        }
        self.values_slow(pos, w, dq)
    }

    #[inline(never)]
    fn values_slow(&self, mut pos: usize, w: [u32; 3], dq: (Vec4, Vec4)) -> Vec4 {
        let (base, step) = (dq.0.to_array(), dq.1.to_array());
        let mut out = [0.0f32; 4];
        for k in 0..3 {
            out[k] = if w[k] == quant::RAW_BITS {
                read_raw_f32(self.buf, pos)
            } else {
                let q = if w[k] == 0 {
                    0
                } else {
                    read_bits(self.buf, pos, w[k])
                };
                base[k] + step[k] * q as f32
            };
            pos += w[k] as usize;
        }
        Vec4::from_array(out)
    }

    /// A rotation's kept components `x` as decoded at `v`, with its dropped component (the
    /// segment's, for a per-segment one); when the segment drops nothing, lane w is the raw w
    /// stored after the three components (and `v` moves past it).
    #[inline(always)]
    fn raw_rotation(&self, t: &Track, x: Vec4, v: &mut SegView) -> (Vec4, u8) {
        let d = if t.slot == NO_SLOT {
            t.dropped
        } else {
            self.seg_meta[v.dropped_off + t.slot as usize]
        };
        if d == DROPPED_NONE {
            let w = read_raw_f32(self.buf, v.bitpos);
            v.bitpos += DROPPED_NONE_BITS;
            (Vec4::new(x.x, x.y, x.z, w), d)
        } else {
            (x, d)
        }
    }

    /// The normalized rotation of track `t` from its raw values at both samples (the first alone
    /// when `exact`), blended at `alpha` on the shorter arc, in the clip's space.
    #[inline(always)]
    fn finish_rotation(
        &self,
        reference: u16,
        (r0, r1): RawRotation,
        exact: bool,
        alpha: f32,
    ) -> Vec4 {
        let unpack = |(k, d): (Vec4, u8)| {
            if d == DROPPED_NONE {
                k
            } else {
                rebuild_rotation_unnormalized([k.x, k.y, k.z], d)
            }
        };
        let q0 = unpack(r0);
        if exact {
            return self.referenced(reference, q0.normalize());
        }
        let q1 = unpack(r1);
        let q1 = if q0.dot(q1) < 0.0 { -q1 } else { q1 };
        // Left-multiplying by a unit quaternion is an isometry of 4-space: blending the stored
        // values and then applying the reference equals blending referenced ones.
        self.referenced(reference, q0.lerp(q1, alpha).normalize())
    }

    /// A decoded (normalized) rotation of track `t` in the clip's space: its reference applied
    /// when it has one.
    #[inline(always)]
    fn referenced(&self, reference: u16, q: Vec4) -> Vec4 {
        if reference == NO_REFERENCE {
            q
        } else {
            Vec4::from(self.refs[reference as usize] * Quat::from_vec4(q))
        }
    }

    /// Decodes animated sub-tracks `tracks` (in stream order) at `v0`'s and `v1`'s samples
    /// (positions already at the first of them) into `sink`: translations and scales blended at
    /// `alpha`, rotations raw (finished one at a time, or four at a time in the full pose).
    #[inline(always)]
    fn decode_run(
        &self,
        tracks: core::ops::Range<usize>,
        (mut v0, mut v1): (SegView, SegView),
        same_segment: bool,
        exact: bool,
        alpha: f32,
        sink: &mut impl Sink,
    ) {
        let b = &self.seg_meta[..];
        for a in tracks {
            let t = &self.tracks[a];
            let w0 = unpack_widths(u16_at(b, v0.widths_off + 2 * a));
            let total0 = w0[0] + w0[1] + w0[2];
            let dq0 = self.dequant(&v0, a, w0);
            let x0 = self.values(v0.bitpos, w0, total0, dq0);
            v0.bitpos += total0 as usize;
            if exact {
                if t.kind == 0 {
                    let r0 = self.raw_rotation(t, x0, &mut v0);
                    sink.rotation(self, t.bone, t.reference, (r0, r0));
                } else {
                    sink.vector(t.kind, t.bone, x0);
                }
                continue;
            }
            let (w1, total1, dq1) = if same_segment {
                (w0, total0, dq0)
            } else {
                let w1 = unpack_widths(u16_at(b, v1.widths_off + 2 * a));
                (w1, w1[0] + w1[1] + w1[2], self.dequant(&v1, a, w1))
            };
            let x1 = self.values(v1.bitpos, w1, total1, dq1);
            v1.bitpos += total1 as usize;
            if t.kind == 0 {
                let r0 = self.raw_rotation(t, x0, &mut v0);
                let r1 = self.raw_rotation(t, x1, &mut v1);
                sink.rotation(self, t.bone, t.reference, (r0, r1));
            } else {
                sink.vector(t.kind, t.bone, x0.lerp(x1, alpha));
            }
        }
    }

    /// [`Self::decode_run`] over every animated sub-track of a version-4 buffer, four tracks at
    /// a time ([`group4`]); a group holding a raw component or a raw w goes through
    /// [`Self::decode_run`].
    ///
    /// A sampler's cache is used when both samples are in one segment (then whether a group
    /// takes this path depends on that segment alone, so a sample's cached groups are the ones a
    /// later call reads): the groups' dequantization of segment `s0` (reused when both samples
    /// are in it, refilled when both are in another), and with `SAMPLES` (`slots` says which)
    /// the decoded groups of two samples (reused when a call needs one of them: the same pair
    /// again at another blend, or the next pair sharing a sample).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline(always)]
    fn decode_groups<const AVX2: bool, const SAMPLES: bool>(
        &self,
        (v0, v1): (SegView, SegView),
        (s0, same_segment): (usize, bool),
        (i0, i1): (usize, usize),
        alpha: f32,
        sink: &mut PoseSink,
        (cache, slots): (Option<&mut SegCache>, sampler::Slots),
    ) {
        let n = self.num_animated;
        let exact = i0 == i1;
        let mut cache = cache.filter(|_| same_segment);
        let hit = cache.as_ref().is_some_and(|c| c.seg == s0);
        // Without samples to read or keep, the copy without their tests (as fast as before).
        let slots = if SAMPLES {
            slots
        } else {
            sampler::Slots::default()
        };
        // Whether every plain group's dequantization of segment `s0` is in the cache after this
        // call (a group whose samples both came from the cache computes none).
        let mut dequant_complete = true;
        let (mut p0, mut p1) = (v0.bitpos, v1.bitpos);
        let multi = v0.ranges_off != usize::MAX;
        let widths = |v: &SegView, g: usize, lanes: usize| {
            group_widths(&self.seg_meta, v.widths_off + 8 * g, lanes)
        };
        for g in 0..n.div_ceil(GROUP) {
            let first = GROUP * g;
            let lanes = (n - first).min(GROUP);
            let w0 = widths(&v0, g, lanes);
            let w1 = if same_segment {
                w0
            } else {
                widths(&v1, g, lanes)
            };
            let plain = (v0.plain && v1.plain) || (group4::plain(w0) && group4::plain(w1));
            if !plain {
                let (mut a, mut b) = (v0, v1);
                (a.bitpos, b.bitpos) = (p0, p1);
                self.decode_run(
                    first..first + lanes,
                    (a, b),
                    same_segment,
                    exact,
                    alpha,
                    sink,
                );
                p0 += self.group_bits(&v0, first, lanes);
                p1 += self.group_bits(&v1, first, lanes);
                continue;
            }
            let grp = &self.groups[g];
            let clip = &grp.clip;
            let at = |v: &SegView| multi.then(|| (v.ranges_off + 6 * GROUP * g, lanes));
            let dropped = |v: &SegView| grp.dropped_at(&self.seg_meta, v.dropped_off);
            // Each sample's columns and dropped components: from the sampler's cache when it
            // holds the sample, else decoded (and kept there when it has a slot for it).
            let mut d0 = None;
            let k0 = match (cache.as_deref(), slots.hit[0]) {
                (Some(c), Some(s)) => c.cols[s][g],
                _ => {
                    let d = self.dequant0(&mut cache, hit, g, (w0, at(&v0), clip));
                    d0 = Some(d);
                    let k = (group4::columns::<AVX2>(self.buf, p0, w0, &d), dropped(&v0));
                    if let (Some(c), Some(t)) = (cache.as_deref_mut(), slots.fill[0]) {
                        c.cols[t][g] = k;
                    }
                    k
                }
            };
            p0 += group4::plain_bits(w0);
            let k1 = if exact {
                k0
            } else {
                match (cache.as_deref(), slots.hit[1]) {
                    (Some(c), Some(s)) => c.cols[s][g],
                    _ => {
                        let d = if !same_segment {
                            group4::dequant(&self.seg_meta, w1, at(&v1), clip)
                        } else if let Some(d) = d0 {
                            d
                        } else {
                            let d = self.dequant0(&mut cache, hit, g, (w0, at(&v0), clip));
                            d0 = Some(d);
                            d
                        };
                        let k = (group4::columns::<AVX2>(self.buf, p1, w1, &d), dropped(&v1));
                        if let (Some(c), Some(t)) = (cache.as_deref_mut(), slots.fill[1]) {
                            c.cols[t][g] = k;
                        }
                        k
                    }
                }
            };
            p1 += group4::plain_bits(w1);
            dequant_complete &= d0.is_some();
            if u32::from_le_bytes(grp.kind) == 0 {
                // Four rotations (kind 0 in every lane, so a full group): finished straight
                // from the decoded columns, four lanes at once, without the chunk's round trip
                // (components to rows, rows back to components).
                let q = rot4::finish_columns(k0, (!exact).then_some(k1), alpha);
                for (j, q) in q.into_iter().enumerate() {
                    sink.rotations[grp.bone[j] as usize] =
                        Quat::from_vec4(self.referenced(grp.reference[j], q));
                }
                continue;
            }
            let (x0, x1) = (group4::rows(k0.0), group4::rows(k1.0));
            for j in 0..lanes {
                let (bone, kind) = (grp.bone[j], grp.kind[j]);
                if kind == 0 {
                    let r0 = (x0[j], (k0.1 >> (8 * j)) as u8);
                    let r1 = if exact {
                        r0
                    } else {
                        (x1[j], (k1.1 >> (8 * j)) as u8)
                    };
                    sink.rotation(self, bone, grp.reference[j], (r0, r1));
                } else if exact {
                    sink.vector(kind, bone, x0[j]);
                } else {
                    sink.vector(kind, bone, x0[j].lerp(x1[j], alpha));
                }
            }
        }
        if let Some(c) = cache {
            c.seg = if hit || dequant_complete {
                s0
            } else {
                sampler::NO_SEGMENT
            };
            for (t, i) in [(slots.fill[0], i0), (slots.fill[1], i1)] {
                if let Some(t) = t {
                    c.sample[t] = i;
                }
            }
        }
    }

    /// Group `g`'s dequantization ([`group4::dequant`] of widths, segment ranges and clip
    /// ranges `w`) in the segment of both samples: the cache's when it holds that segment's
    /// (`hit`), else computed (and kept there).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline(always)]
    fn dequant0(
        &self,
        cache: &mut Option<&mut SegCache>,
        hit: bool,
        g: usize,
        (w, ranges, clip): (u64, Option<(usize, usize)>, &group4::GroupRanges),
    ) -> group4::Dequant4 {
        match cache.as_deref_mut() {
            Some(c) if hit => c.groups[g],
            Some(c) => {
                c.groups[g] = group4::dequant(&self.seg_meta, w, ranges, clip);
                c.groups[g]
            }
            None => group4::dequant(&self.seg_meta, w, ranges, clip),
        }
    }

    /// Bits per sample of animated sub-tracks `first .. first + lanes` in the segment at `v`.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline(never)]
    fn group_bits(&self, v: &SegView, first: usize, lanes: usize) -> usize {
        (first..first + lanes)
            .map(|a| track_bits(u16_at(&self.seg_meta, v.widths_off + 2 * a)))
            .sum()
    }

    /// (sample before, sample after, blend) for time `t`.
    #[inline]
    pub(crate) fn locate(&self, t: f32, looping: Looping) -> (usize, usize, f32) {
        let n = self.num_samples;
        if n <= 1 {
            return (0, 0, 0.0);
        }
        let x = t * self.sample_rate;
        let x = if x.is_finite() { x } else { 0.0 };
        match looping {
            Looping::Wrap => {
                let x = fmath::rem_euclid(x, n as f32);
                let i0 = (x as usize).min(n - 1);
                (i0, (i0 + 1) % n, (x - i0 as f32).clamp(0.0, 1.0))
            }
            Looping::Clamp => {
                // A wrapping clip's last original sample is its first stored one.
                let last = if self.wrap { n } else { n - 1 };
                let x = x.clamp(0.0, last as f32);
                let i0 = (x as usize).min(last.saturating_sub(1)).min(n - 1);
                let i1 = if i0 + 1 >= n { 0 } else { i0 + 1 };
                let i1 = if !self.wrap && i1 == 0 { n - 1 } else { i1 };
                (i0, i1, (x - i0 as f32).clamp(0.0, 1.0))
            }
        }
    }

    /// Samples every bone's local transform at time `t` seconds into `pose`. A pose of another
    /// size is resized first (the only allocation a sampling call can make: give it
    /// `Pose::new(reader.num_bones())` once). Resized rather than refused on purpose: this is the
    /// call that cannot fail (a validated reader always yields a pose), and a `Pose` owns its
    /// arrays, so growing them is safe; a caller that must never allocate samples into its own
    /// arrays with [`Self::sample_pose_into`], which refuses a wrong size with
    /// [`SampleError::OutputSize`] before writing anything.
    pub fn sample_pose(&self, t: f32, looping: Looping, pose: &mut Pose) {
        let (i0, i1, alpha) = self.locate(t, looping);
        self.decode_between(i0, i1, alpha, Defaults::Write, pose);
    }

    /// [`Self::sample_pose`], with the default sub-tracks written or left to the caller.
    pub fn sample_pose_with(&self, t: f32, looping: Looping, defaults: Defaults, pose: &mut Pose) {
        let (i0, i1, alpha) = self.locate(t, looping);
        self.decode_between(i0, i1, alpha, defaults, pose);
    }

    /// [`Self::sample_pose_with`] into arrays the caller owns (no copy through a [`Pose`]: with
    /// [`Defaults::Skip`] the default sub-tracks are not touched at all). Fails, before writing
    /// anything, when an array's length is not [`Self::num_bones`].
    pub fn sample_pose_into(
        &self,
        t: f32,
        looping: Looping,
        defaults: Defaults,
        pose: PoseMut<'_>,
    ) -> Result<(), SampleError> {
        self.check_pose(&pose)?;
        let (i0, i1, alpha) = self.locate(t, looping);
        self.decode_into(i0, i1, alpha, defaults, pose, None);
        Ok(())
    }

    /// [`SampleError::OutputSize`] unless each of `pose`'s arrays has [`Self::num_bones`]
    /// entries.
    pub(crate) fn check_pose(&self, pose: &PoseMut<'_>) -> Result<(), SampleError> {
        let n = self.num_bones;
        for got in [
            pose.rotations.len(),
            pose.translations.len(),
            pose.scales.len(),
        ] {
            if got != n {
                return Err(SampleError::OutputSize { expected: n, got });
            }
        }
        Ok(())
    }

    /// Decodes stored sample `sample` exactly (no interpolation).
    pub fn decode_sample(&self, sample: usize, pose: &mut Pose) {
        let s = sample.min(self.num_samples.saturating_sub(1));
        self.decode_between(s, s, 0.0, Defaults::Write, pose);
    }

    /// Decodes at blend `alpha` between stored samples `i0` and `i1` exactly as
    /// [`Self::sample_pose`] does, without going through a time in seconds (the compressor's
    /// check between samples).
    pub fn decode_blend(&self, i0: usize, i1: usize, alpha: f32, pose: &mut Pose) {
        let last = self.num_samples.saturating_sub(1);
        self.decode_between(i0.min(last), i1.min(last), alpha, Defaults::Write, pose);
    }

    /// Samples this additive layer at time `t` seconds into `layer` (caller-owned scratch, sized
    /// like [`Self::sample_pose`]'s pose) and applies it onto `base` in the clip's additive
    /// format ([`pose::apply_additive`]). Fails on a plain clip or a base of the wrong size.
    pub fn sample_additive_onto(
        &self,
        t: f32,
        looping: Looping,
        layer: &mut Pose,
        base: &mut Pose,
    ) -> Result<(), SampleError> {
        let format = AdditiveFormat::from_code(self.additive).ok_or(SampleError::NotAdditive)?;
        if base.len() != self.num_bones {
            return Err(SampleError::OutputSize {
                expected: self.num_bones,
                got: base.len(),
            });
        }
        self.sample_pose(t, looping, layer);
        pose::apply_additive(format, base, layer);
        Ok(())
    }

    /// Writes the bind pose (what every default sub-track decodes to) and the constants: what
    /// a caller sampling with [`Defaults::Skip`] fills its pose with once.
    pub fn bind_pose_into(&self, pose: &mut Pose) {
        if pose.len() != self.num_bones {
            pose.resize(self.num_bones);
        }
        pose.rotations.copy_from_slice(&self.fixed_rotations);
        pose.translations.copy_from_slice(&self.fixed_translations);
        pose.scales.copy_from_slice(&self.fixed_scales);
    }

    fn decode_between(
        &self,
        i0: usize,
        i1: usize,
        alpha: f32,
        defaults: Defaults,
        pose: &mut Pose,
    ) {
        if pose.len() != self.num_bones {
            pose.resize(self.num_bones);
        }
        self.decode_into(i0, i1, alpha, defaults, pose.as_pose_mut(), None);
    }

    /// [`Self::decode_between`] into arrays of [`Self::num_bones`] entries each: the body
    /// compiled for AVX2 + BMI2 where the CPU has them, else for the build's target.
    #[inline(always)]
    pub(crate) fn decode_into(
        &self,
        i0: usize,
        i1: usize,
        alpha: f32,
        defaults: Defaults,
        pose: PoseMut,
        cache: Option<&mut SegCache>,
    ) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the CPU has AVX2, BMI1 and BMI2 and the OS saves
            // the YMM registers (`jobs::avx2_bmi2`).
            return unsafe {
                // A copy each with and without a sampler's cache: the stateless call compiles
                // as if there were no cache (no test per group).
                match cache {
                    Some(c) => {
                        self.decode_into_avx2::<true>(i0, i1, alpha, defaults, pose, Some(c))
                    }
                    None => self.decode_into_avx2::<false>(i0, i1, alpha, defaults, pose, None),
                }
            };
        }
        self.decode_into_body::<false>(i0, i1, alpha, defaults, pose, cache);
    }

    /// [`Self::decode_into_body`] compiled with AVX2, BMI1 and BMI2: VEX-encoded SSE (three
    /// operands, fewer moves) and BMI2's shifts by any register in the bit extraction, about a
    /// tenth fewer cycles warm. The float operations are the same IEEE operations in the same
    /// order (no FMA is enabled, and Rust never contracts), so the poses are the same bits
    /// (`tests/it/runtime/equal.rs` compares both copies).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    unsafe fn decode_into_avx2<const CACHE: bool>(
        &self,
        i0: usize,
        i1: usize,
        alpha: f32,
        defaults: Defaults,
        pose: PoseMut,
        cache: Option<&mut SegCache>,
    ) {
        let cache = if CACHE { cache } else { None };
        self.decode_into_body::<true>(i0, i1, alpha, defaults, pose, cache);
    }

    /// Uses the build target's copy of the full pose even on a CPU with AVX2 (tests compare
    /// the two copies bit for bit; benchmarks time the one a CPU without AVX2 runs).
    #[doc(hidden)]
    pub fn use_baseline_decoder(&mut self) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            self.avx2 = false;
        }
    }

    /// The body of [`Self::decode_into`]. Inlined into both of its copies; `AVX2`: the copy
    /// compiled for AVX2 + BMI2, which also extracts a group's bits with AVX2's per-lane shifts
    /// ([`group4::columns`]).
    #[inline(always)]
    fn decode_into_body<const AVX2: bool>(
        &self,
        i0: usize,
        i1: usize,
        alpha: f32,
        defaults: Defaults,
        pose: PoseMut,
        cache: Option<&mut SegCache>,
    ) {
        // Only the four-track path has something to cache.
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        let _ = cache;
        if self.num_bones == 0 {
            return;
        }
        // Cold (the clip not in cache), the call waits on memory: ask for every line it will
        // read now, so the misses overlap instead of coming one after the other. The segment's
        // metadata and bits first (the buffer's lines, the farthest, and what the decode needs
        // with the groups), then the groups: cold 0.963 × the order groups, fixed tables,
        // metadata, bits (docs/BENCHMARKS.md, dec34).
        let views = if self.tracks.is_empty() {
            None
        } else {
            let (s0, k0) = self.segment_of(i0);
            let (s1, k1) = self.segment_of(i1);
            let v = (self.view(s0, k0), self.view(s1, k1));
            let meta_end = v.0.dropped_off.min(self.seg_meta.len());
            prefetch(&self.seg_meta[v.0.widths_off.min(meta_end)..meta_end]);
            // A sample's bits, and the 8 bytes its last 64-bit load may read past them (not
            // an upper bound per track: every line asked for costs a cold call ~8 ns).
            let bits = |v: &SegView| {
                let at = (v.bitpos / 8).min(self.buf.len());
                &self.buf[at..self.buf.len().min(at + v.sample_bits.div_ceil(8) + 8)]
            };
            prefetch(bits(&v.0));
            prefetch(bits(&v.1));
            // Version 4 reads its groups instead of the track table (x86-64).
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            if self.grouped {
                prefetch(&self.groups);
            } else {
                prefetch(&self.tracks);
            }
            #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
            prefetch(&self.tracks);
            // Not the fixed tables: their copy reads each front to back, which the hardware
            // prefetcher follows; asking for their ~20 lines only cost instructions (without
            // them: cold 0.996, warm 0.980 × with them; without the groups' too: cold 1.20).
            Some(((s0, s1), v))
        };
        match defaults {
            Defaults::Write => {
                fill_or_copy(&mut *pose.rotations, &self.fixed_rotations, self.fill[0]);
                fill_or_copy(
                    &mut *pose.translations,
                    &self.fixed_translations,
                    self.fill[1],
                );
                fill_or_copy(&mut *pose.scales, &self.fixed_scales, self.fill[2]);
            }
            Defaults::Skip => {
                for &(b, kind) in &self.constants {
                    let b = b as usize;
                    match kind {
                        0 => pose.rotations[b] = self.fixed_rotations[b],
                        1 => pose.translations[b] = self.fixed_translations[b],
                        _ => pose.scales[b] = self.fixed_scales[b],
                    }
                }
            }
        }
        let Some(((s0, s1), views)) = views else {
            return;
        };
        let PoseMut {
            rotations,
            translations,
            scales,
        } = pose;
        let mut sink = PoseSink {
            rotations,
            translations,
            scales,
            exact: i0 == i1,
            alpha,
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            batch: rot4::Chunk::new(),
        };
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if self.grouped {
            let mut cache = cache.filter(|_| s0 == s1);
            let slots = match cache.as_deref_mut() {
                Some(c) => c.slots(i0, i1),
                None => sampler::Slots::default(),
            };
            let (segs, samples) = ((s0, s0 == s1), (i0, i1));
            if slots.any() {
                self.decode_groups::<AVX2, true>(
                    views,
                    segs,
                    samples,
                    alpha,
                    &mut sink,
                    (cache, slots),
                );
            } else {
                self.decode_groups::<AVX2, false>(
                    views,
                    segs,
                    samples,
                    alpha,
                    &mut sink,
                    (cache, slots),
                );
            }
        } else {
            self.decode_run(
                0..self.tracks.len(),
                views,
                s0 == s1,
                i0 == i1,
                alpha,
                &mut sink,
            );
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        self.decode_run(
            0..self.tracks.len(),
            views,
            s0 == s1,
            i0 == i1,
            alpha,
            &mut sink,
        );
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        sink.flush(self);
    }

    /// Decodes bone `bone`'s animated sub-tracks between samples `i0` and `i1` into `out`.
    /// `exact`: decode `i0` alone when it equals `i1` (as the full pose does); `sample_bone`
    /// always blends, as it always did (the same value but for the sign of a zero).
    #[inline(always)]
    fn decode_bone(
        &self,
        bone: usize,
        (i0, i1, alpha): (usize, usize, f32),
        views: (SegView, SegView),
        seg: (usize, usize),
        exact: bool,
        out: &mut (Quat, Vec3A, Vec3A),
    ) {
        let (first, count) = self.bone_animated[bone];
        if count == 0 {
            return;
        }
        let first = first as usize;
        let (mut v0, mut v1) = views;
        v0.bitpos += self.seg_offsets[seg.0 * self.num_animated + first] as usize;
        v1.bitpos += self.seg_offsets[seg.1 * self.num_animated + first] as usize;
        let exact = exact && i0 == i1;
        self.decode_run(
            first..first + count as usize,
            (v0, v1),
            seg.0 == seg.1,
            exact,
            alpha,
            &mut BoneSink { out, exact, alpha },
        );
    }

    /// Samples one bone's local transform at time `t` seconds: (rotation, translation, scale).
    pub fn sample_bone(
        &self,
        bone: usize,
        t: f32,
        looping: Looping,
    ) -> Option<(Quat, Vec3A, Vec3A)> {
        if bone >= self.num_bones {
            return None;
        }
        let mut out = (
            self.fixed_rotations[bone],
            self.fixed_translations[bone],
            self.fixed_scales[bone],
        );
        if self.bone_animated[bone].1 == 0 {
            return Some(out);
        }
        let (i0, i1, alpha) = self.locate(t, looping);
        // Interpolating even at an exact sample, as `sample_pose` does through `locate`.
        let (s0, k0) = self.segment_of(i0);
        let (s1, k1) = self.segment_of(i1);
        let views = (self.view(s0, k0), self.view(s1, k1));
        self.decode_bone(bone, (i0, i1, alpha), views, (s0, s1), false, &mut out);
        Some(out)
    }

    /// Samples the bones listed in `bones` (any order; repeats allowed) at time `t` seconds
    /// into `pose` (which must have [`Self::num_bones`] entries; the other bones' entries are
    /// left as they are), with one seek for the whole list (ACL issue #118). Fails, before
    /// writing anything, on an index that is not a bone or a pose of the wrong size.
    pub fn sample_bones(
        &self,
        bones: &[u32],
        t: f32,
        looping: Looping,
        defaults: Defaults,
        pose: &mut Pose,
    ) -> Result<(), SampleError> {
        if pose.len() != self.num_bones {
            return Err(SampleError::OutputSize {
                expected: self.num_bones,
                got: pose.len(),
            });
        }
        if let Some(&b) = bones.iter().find(|&&b| b as usize >= self.num_bones) {
            return Err(SampleError::NoSuchBone {
                bone: b,
                num_bones: self.num_bones,
            });
        }
        if bones.is_empty() {
            return Ok(());
        }
        let (i0, i1, alpha) = self.locate(t, looping);
        let (s0, k0) = self.segment_of(i0);
        let (s1, k1) = self.segment_of(i1);
        let views = if self.tracks.is_empty() {
            None
        } else {
            Some((self.view(s0, k0), self.view(s1, k1)))
        };
        for &b in bones {
            let b = b as usize;
            let mut out = (pose.rotations[b], pose.translations[b], pose.scales[b]);
            let kinds = self.subtrack_kinds(b);
            for (k, &kind) in kinds.iter().enumerate() {
                if kind != KIND_DEFAULT || defaults == Defaults::Write {
                    match k {
                        0 => out.0 = self.fixed_rotations[b],
                        1 => out.1 = self.fixed_translations[b],
                        _ => out.2 = self.fixed_scales[b],
                    }
                }
            }
            if let Some(views) = views {
                self.decode_bone(b, (i0, i1, alpha), views, (s0, s1), true, &mut out);
            }
            (pose.rotations[b], pose.translations[b], pose.scales[b]) = out;
        }
        Ok(())
    }
}

/// The widths of a group of `lanes` tracks at byte `o` (four little-endian u16, lanes past the
/// group's tracks zero). Validation guarantees 8 bytes there.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn group_widths(buf: &[u8], o: usize, lanes: usize) -> u64 {
    let w = u64::from_le_bytes(buf[o..o + 8].try_into().unwrap());
    if lanes == GROUP {
        w
    } else {
        w & ((1u64 << (16 * lanes)) - 1)
    }
}

/// Hints that the lines of `data` will be read soon (x86-64's SSE prefetch; nothing elsewhere:
/// aarch64's prefetch intrinsic is not stable yet).
#[inline(always)]
fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        // From the line holding the first byte to the one holding the last: a slice not starting
        // on a line boundary spans one line more than its length in lines.
        if data.is_empty() {
            return;
        }
        let skew = data.as_ptr() as usize % 64;
        let p = (data.as_ptr() as *const i8).wrapping_sub(skew);
        let n = core::mem::size_of_val(data) + skew;
        let mut o = 0;
        while o < n {
            // SAFETY: a prefetch is only a hint, never a memory access that can fault; the
            // address is in a line holding some byte of `data` (wrapping arithmetic: no
            // pointer is made outside it by `add`).
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(o),
                )
            };
            o += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Normalized linear interpolation, taking the shorter arc.
#[inline(always)]
pub fn nlerp(a: Quat, b: Quat, alpha: f32) -> Quat {
    let (va, vb) = (glam::Vec4::from(a), glam::Vec4::from(b));
    let vb = if va.dot(vb) < 0.0 { -vb } else { vb };
    Quat::from_vec4(va.lerp(vb, alpha).normalize())
}

#[cfg(test)]
mod seg_meta_tests {
    use super::*;

    fn entries(n: usize, block_len: usize) -> Vec<SegEntry> {
        (0..n)
            .map(|s| SegEntry {
                widths_off: (s * block_len) as u32,
                ..SegEntry::default()
            })
            .collect()
    }

    /// Blocks of half a line or more (or a single segment's) start on a line and keep their
    /// bytes; the entries point at them; the tail after the last block is there and zero.
    #[test]
    fn blocks_start_on_lines_and_keep_their_bytes() {
        for (n, block_len) in [(1, 5), (1, 40), (3, 32), (3, 150), (5, 64)] {
            let meta: Vec<u8> = (0..n * block_len + segmeta::EXPANDED_TAIL)
                .map(|i| {
                    if i < n * block_len {
                        (i % 251) as u8 + 1
                    } else {
                        0
                    }
                })
                .collect();
            let mut segs = entries(n, block_len);
            let m = SegMeta::aligned(&meta, &mut segs, block_len).unwrap();
            for (s, e) in segs.iter().enumerate() {
                let at = e.widths_off as usize;
                assert_eq!(
                    (m.as_ptr() as usize + at) % 64,
                    0,
                    "{n} × {block_len}: block {s}"
                );
                assert_eq!(
                    m[at..at + block_len],
                    meta[s * block_len..(s + 1) * block_len]
                );
            }
            let end = segs[n - 1].widths_off as usize + block_len;
            assert!(m.len() >= end + segmeta::EXPANDED_TAIL);
            assert!(m[end..].iter().all(|&b| b == 0));
        }
    }

    /// Several blocks under half a line stay back to back (padding would more than double them).
    #[test]
    fn several_tiny_blocks_are_not_padded() {
        let (n, block_len) = (1000, 10);
        let meta = alloc::vec![7u8; n * block_len + segmeta::EXPANDED_TAIL];
        let mut segs = entries(n, block_len);
        let m = SegMeta::aligned(&meta, &mut segs, block_len).unwrap();
        assert_eq!(m.len(), n * block_len + segmeta::EXPANDED_TAIL);
        assert!(
            segs.iter()
                .enumerate()
                .all(|(s, e)| e.widths_off as usize == s * block_len)
        );
    }
}
