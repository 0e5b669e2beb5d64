//! Fuzz target `capi`: the runtime's C API (`clipforge-runtime-capi`) driven by a random
//! program of calls, including NULL and misaligned pointers, short arrays, NaN times, freed,
//! forged and wrong-kind handles (see `clipforge_fuzz::capi_entry`).
#![no_main]

#[global_allocator]
static ALLOC: clipforge_fuzz::LimitAlloc = clipforge_fuzz::LimitAlloc;

libfuzzer_sys::fuzz_target!(init: { clipforge_fuzz::init(); }, |data: &[u8]| {
    clipforge_fuzz::run(data, clipforge_fuzz::capi_entry::capi);
});
