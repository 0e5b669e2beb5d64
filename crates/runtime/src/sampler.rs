//! [`Sampler`]: a [`ClipReader`] with a caller-owned cache of what a full pose computes per
//! segment and per stored sample, kept between calls (as ozz's `SamplingJob::Context` and ACL's
//! decompression context are): the four-track groups' dequantization of the current segment
//! (bases, steps and masks from the widths and ranges, nine divisions per group), and the decoded
//! groups of the last two stored samples. A playing character's calls stay in one segment for
//! many calls in a row and, at a frame rate above the clip's sample rate, blend the same two
//! samples again or share one with the previous call: then only the blend and the rotations'
//! finishing are left. The same values (the cache holds what the stateless call computes), so the
//! same poses, bit for bit, as [`ClipReader::sample_pose`]. The cache is created with the
//! sampler (the only allocation); no sampling call allocates. Only the four-track path (x86-64)
//! has something to cache; elsewhere a sampler samples as the reader does.
#![cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "sse2")),
    allow(dead_code)
)]

use crate::{ClipReader, Defaults, Looping, Pose, PoseMut, SampleError};
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use alloc::vec::Vec;

/// What a [`Sampler`] keeps between calls: the groups' dequantization of one segment
/// ([`crate::group4::dequant`] per group of four animated sub-tracks) and the decoded groups of
/// up to two stored samples.
pub(crate) struct SegCache {
    /// The segment the entries are for; [`NO_SEGMENT`] until a call fills them.
    pub(crate) seg: usize,
    /// Per group (index = group); only plain groups' entries are ever written and read (whether
    /// a group is plain depends on the segment's widths only, so on `seg`).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    pub(crate) groups: Vec<crate::group4::Dequant4>,
    /// The stored samples whose decoded groups [`Self::cols`] holds, or [`NO_SAMPLE`].
    pub(crate) sample: [usize; 2],
    /// The first sample of the previous call ([`NO_SAMPLE`] before the first).
    last: usize,
    /// Per slot, per group: the decoded columns and dropped components (what
    /// `ClipReader::decode_groups` finishes), for plain groups (as [`Self::groups`]).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    pub(crate) cols: [Vec<Cols>; 2],
}

/// One group's decoded sample: the components by column, the dropped components by lane.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(crate) type Cols = ([core::arch::x86_64::__m128; 4], u32);

pub(crate) const NO_SEGMENT: usize = usize::MAX;
const NO_SAMPLE: usize = usize::MAX;

/// For one call: the cache slot holding each of its two samples, and the slot each sample that
/// is not held is decoded into.
#[derive(Default)]
pub(crate) struct Slots {
    pub(crate) hit: [Option<usize>; 2],
    pub(crate) fill: [Option<usize>; 2],
}

impl Slots {
    /// Whether the call reads or keeps a sample.
    pub(crate) fn any(&self) -> bool {
        self.hit.iter().chain(&self.fill).any(Option::is_some)
    }
}

impl SegCache {
    /// The slots of a call blending stored samples `i0` and `i1` (one sample when equal). A slot
    /// about to be refilled holds no sample until the call has filled it.
    pub(crate) fn slots(&mut self, i0: usize, i1: usize) -> Slots {
        let find = |i: usize| (0..2).find(|&s| self.sample[s] == i);
        let hit0 = find(i0);
        let hit1 = if i0 == i1 { None } else { find(i1) };
        // Samples are kept only while calls walk the clip sample by sample (playback at or
        // above the clip's rate): calls that jump (seeks, sparse times) would pay the stores
        // and never read them back.
        let walking = self.last.abs_diff(i0) <= 1;
        self.last = i0;
        // A missing sample goes into the slot the other sample of the call does not use.
        let fill0 = (walking && hit0.is_none()).then(|| hit1.map_or(0, |s| 1 - s));
        let fill1 =
            (walking && i0 != i1 && hit1.is_none()).then(|| hit0.or(fill0).map_or(1, |s| 1 - s));
        for t in [fill0, fill1].into_iter().flatten() {
            self.sample[t] = NO_SAMPLE;
        }
        Slots {
            hit: [hit0, hit1],
            fill: [fill0, fill1],
        }
    }
}

/// Samples one clip for one caller (a character playing it), keeping per-segment work between
/// calls: [`Self::sample_pose`] equals [`ClipReader::sample_pose`] bit for bit and is faster
/// when consecutive calls fall in the same segment of the clip (playback, the same clip sampled
/// every frame). One sampler per thread/character (it is `&mut` per call); the reader it borrows
/// stays shared. The cache is a few hundred bytes per four animated sub-tracks, allocated here.
pub struct Sampler<'r, 'a> {
    reader: &'r ClipReader<'a>,
    cache: SegCache,
}

impl<'r, 'a> Sampler<'r, 'a> {
    /// A sampler of `reader` with an empty cache (the first call fills it).
    pub fn new(reader: &'r ClipReader<'a>) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        let num_groups = if reader.grouped {
            reader.num_animated.div_ceil(crate::format::GROUP)
        } else {
            0
        };
        Sampler {
            reader,
            cache: SegCache {
                seg: NO_SEGMENT,
                #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                groups: alloc::vec![crate::group4::Dequant4::zeroed(); num_groups],
                sample: [NO_SAMPLE; 2],
                last: NO_SAMPLE,
                #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                cols: core::array::from_fn(|_| {
                    // SAFETY: SSE2 is part of the x86-64 baseline.
                    let zero = unsafe { core::arch::x86_64::_mm_setzero_ps() };
                    alloc::vec![([zero; 4], 0); num_groups]
                }),
            },
        }
    }

    /// The reader this sampler samples.
    pub fn reader(&self) -> &'r ClipReader<'a> {
        self.reader
    }

    /// [`ClipReader::sample_pose`] (the same bits), reusing this sampler's cache.
    pub fn sample_pose(&mut self, t: f32, looping: Looping, pose: &mut Pose) {
        let r = self.reader;
        if pose.len() != r.num_bones {
            pose.resize(r.num_bones);
        }
        let (i0, i1, alpha) = r.locate(t, looping);
        r.decode_into(
            i0,
            i1,
            alpha,
            Defaults::Write,
            pose.as_pose_mut(),
            Some(&mut self.cache),
        );
    }

    /// [`ClipReader::sample_pose_into`] (the same bits and checks), reusing this sampler's
    /// cache.
    pub fn sample_pose_into(
        &mut self,
        t: f32,
        looping: Looping,
        defaults: Defaults,
        pose: PoseMut<'_>,
    ) -> Result<(), SampleError> {
        let r = self.reader;
        r.check_pose(&pose)?;
        let (i0, i1, alpha) = r.locate(t, looping);
        r.decode_into(i0, i1, alpha, defaults, pose, Some(&mut self.cache));
        Ok(())
    }
}
