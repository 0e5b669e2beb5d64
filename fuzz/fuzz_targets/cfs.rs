//! Fuzz target `cfs`: the `.cfs` reader of scalar track lists and its sampling (see
//! `clipforge_fuzz::entries::cfs`), with the structure-aware mutator shared with the `cfa`
//! target (`clipforge_fuzz::mutate`): every mutation is followed by `cfs_fix_up` (CRC-32
//! recomputed), because a buffer whose checksum does not match is refused before any semantic
//! check; half of the mutations are libFuzzer's own, the rest write values the format must
//! refuse into header fields (version, flags, type, counts) and special floats into any 4-byte
//! window (ranges, constants, precisions, raw samples, which are not 4-byte aligned here).
#![no_main]

use clipforge_fuzz::{BufferLayout, entries::cfs_fix_up, mutate};
use libfuzzer_sys::{fuzz_mutator, fuzzer_mutate};

clipforge_fuzz::target!(cfs);

const LAYOUT: BufferLayout = BufferLayout {
    header_len: 24,
    fields: &[
        (4, 2),  // version
        (6, 1),  // flags
        (7, 1),  // track type
        (8, 2),  // tracks
        (10, 2), // stripped tracks
        (12, 4), // stored samples
        (16, 4), // sample rate (as bits)
    ],
    flags: Some((6, 1)),
    aligned_floats: false,
    fix_up: cfs_fix_up,
};

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    mutate(&LAYOUT, data, size, max_size, seed, fuzzer_mutate)
});
