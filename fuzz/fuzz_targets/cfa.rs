//! Fuzz target `cfa`: the `.cfa` reader and sampling (see `clipforge_fuzz::entries::cfa`), with
//! the structure-aware mutator of `clipforge_fuzz::mutate`: every mutation is followed by
//! `cfa_fix_up` (total size and CRC-32 recomputed), because a buffer whose checksum does not
//! match is refused before any semantic check; half of the mutations are libFuzzer's own, the
//! rest write values the format must refuse into header fields (counts, segment size, flags:
//! single bits flipped too, so bits 4 and 5, reference rotations and per-bone precision, are
//! reached from any seed) and special floats into aligned 4-byte words (bind rotations, ranges,
//! shell distances, precisions).
#![no_main]

use clipforge_fuzz::{BufferLayout, entries::cfa_fix_up, mutate};
use libfuzzer_sys::{fuzz_mutator, fuzzer_mutate};

clipforge_fuzz::target!(cfa);

const LAYOUT: BufferLayout = BufferLayout {
    header_len: 48,
    fields: &[
        (4, 2),  // version
        (6, 2),  // flags
        (16, 4), // runtime size
        (20, 2), // bones
        (22, 2), // segment size
        (24, 4), // samples
        (32, 4), // segments
        (36, 4), // constant sub-tracks
        (40, 4), // animated sub-tracks
        (44, 4), // quantised-constant sub-tracks
    ],
    flags: Some((6, 2)),
    aligned_floats: true,
    fix_up: cfa_fix_up,
};

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    mutate(&LAYOUT, data, size, max_size, seed, fuzzer_mutate)
});
