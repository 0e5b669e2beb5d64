//! Fuzz target `cfs`: the `.cfs` reader of scalar track lists and its sampling (see
//! `clipforge_fuzz::entries::cfs`), with the structure-aware mutator of the `cfa` target adapted:
//! every mutation is followed by `cfs_fix_up` (CRC-32 recomputed), because a buffer whose
//! checksum does not match is refused before any semantic check; half of the mutations are
//! libFuzzer's own, the rest write values the format must refuse into header fields (version,
//! flags, type, counts) and special floats into any 4-byte window (ranges, constants, precisions,
//! raw samples, which are not 4-byte aligned in this format).
#![no_main]

use clipforge_fuzz::entries::cfs_fix_up;
use libfuzzer_sys::{fuzz_mutator, fuzzer_mutate};

clipforge_fuzz::target!(cfs);

/// (offset, width in bytes) of the header's integer fields (docs/FORMAT.md).
const HEADER_FIELDS: &[(usize, usize)] = &[
    (4, 2),  // version
    (6, 1),  // flags
    (7, 1),  // track type
    (8, 2),  // tracks
    (10, 2), // stripped tracks
    (12, 4), // stored samples
    (16, 4), // sample rate (as bits)
];

const INTS: &[u32] = &[
    0,
    1,
    2,
    3,
    7,
    15,
    16,
    17,
    31,
    32,
    255,
    256,
    0x7fff,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0xffff_ffff,
];

const FLOATS: &[f32] = &[
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    -1.0,
    1.0,
    2.0,
    1e-40,
    1e30,
    -1e30,
    f32::MAX,
    f32::MIN_POSITIVE,
];

struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        // xorshift32; the seed comes from libFuzzer, so runs stay reproducible.
        let mut x = self.0.max(1);
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() as usize) % n.max(1)
    }
}

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    let mut rng = Rng(seed);
    let mut size = size;
    match rng.below(4) {
        0 | 1 => size = fuzzer_mutate(data, size, max_size),
        2 if size >= 24 => {
            let (off, w) = HEADER_FIELDS[rng.below(HEADER_FIELDS.len())];
            let cur = match w {
                1 => data[off] as u32,
                2 => u16::from_le_bytes([data[off], data[off + 1]]) as u32,
                _ => u32::from_le_bytes(data[off..off + 4].try_into().unwrap()),
            };
            let v = match rng.below(3) {
                0 => INTS[rng.below(INTS.len())],
                1 => cur.wrapping_add(1),
                _ => cur.wrapping_sub(1),
            };
            data[off..off + w].copy_from_slice(&v.to_le_bytes()[..w]);
        }
        3 if size >= 28 => {
            // Any 4-byte window after the header: floats follow 1-byte codes, unaligned.
            let off = 24 + rng.below(size - 27);
            let f = FLOATS[rng.below(FLOATS.len())];
            data[off..off + 4].copy_from_slice(&f.to_le_bytes());
        }
        _ => size = fuzzer_mutate(data, size, max_size),
    }
    cfs_fix_up(&mut data[..size]);
    size
});
