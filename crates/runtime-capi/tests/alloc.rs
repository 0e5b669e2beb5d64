//! The C API's sampling calls and jobs allocate nothing once a thread has made each call once
//! (the scratch pose and bone list grow on first use): a counting allocator sees no allocation
//! on this thread over many successful calls of each.

mod common;

use common::pose::CPose;

use clipforge_runtime_capi::cf_status::CF_OK;
use clipforge_runtime_capi::*;
use glam::Mat4;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr::{null, null_mut};

/// Counts the allocations of the thread that turned counting on.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counters are thread-local `Cell`s with const
// initialisers (no allocation, no re-entry).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: the caller's contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller's contract.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: the caller's contract.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn create(bytes: &[u8]) -> cf_clip {
    let mut c = cf_clip { id: 0 };
    assert_eq!(
        unsafe { cf_clip_create(bytes.as_ptr(), bytes.len(), &mut c) },
        CF_OK
    );
    c
}

#[test]
fn sampling_calls_and_jobs_allocate_nothing_after_a_threads_first_call() {
    let (bytes, add_bytes) = (common::cfa(40), common::cfa_additive(40));
    let (clip, add) = (create(&bytes), create(&add_bytes));
    let mut n32 = 0u32;
    unsafe { cf_clip_num_bones(clip, &mut n32) };
    let n = n32 as usize;
    let mut parents = vec![0u32; n];
    unsafe { cf_clip_parents(clip, parents.as_mut_ptr(), n) };
    let (mut a, mut b, mut out, mut obj) = (
        CPose::rest(n),
        CPose::rest(n),
        CPose::rest(n),
        CPose::rest(n),
    );
    let list = [3u32, 0, 7, 3];
    let (mut lr, mut lt, mut ls) = ([0f32; 16], [0f32; 12], [0f32; 12]);
    let layers = [
        cf_blend_layer {
            pose: a.c(),
            weight: 0.5,
            bone_weights: null(),
            num_bone_weights: 0,
        },
        cf_blend_layer {
            pose: b.c(),
            weight: 0.5,
            bone_weights: null(),
            num_bone_weights: 0,
        },
    ];
    let mut rest = CPose::rest(n);
    let blend = cf_blend_job {
        layers: layers.as_ptr(),
        num_layers: 2,
        additive: layers[1..].as_ptr(),
        num_additive: 1,
        rest: rest.c(),
        threshold: 0.1,
        out: out.c(),
    };
    let l2o = cf_local_to_object_job {
        parents: parents.as_ptr(),
        num_bones: n,
        local: out.c(),
        start: 0,
        end: n,
        out: obj.c(),
        simd: CF_SIMD_AUTO,
    };
    let ib = vec![Mat4::IDENTITY; n];
    let mut palette = vec![Mat4::IDENTITY; n];
    let pal = cf_skinning_palette_job {
        object: obj.c(),
        inverse_bind: ib.as_ptr().cast(),
        num_joints: n,
        joints: null(),
        joints_count: 0,
        layout: CF_PALETTE_4X4,
        out: palette.as_mut_ptr().cast(),
        out_count: n,
    };
    let nv = 64;
    let pos = vec![[1.0f32, 2.0, 3.0]; nv];
    let joints: Vec<u16> = (0..2 * nv).map(|k| (k % n) as u16).collect();
    let weights = vec![0.5f32; 2 * nv];
    let (mut op, mut o4) = (vec![[0f32; 3]; nv], vec![[0f32; 4]; nv]);
    let skin = cf_skin_job {
        palette: palette.as_ptr().cast(),
        palette_count: n,
        influences: 2,
        joints: joints.as_ptr(),
        joints_count: joints.len(),
        weights: weights.as_ptr(),
        weights_count: weights.len(),
        positions: pos.as_ptr().cast(),
        num_vertices: nv,
        normals: null(),
        normals_count: 0,
        out_positions: op.as_mut_ptr().cast(),
        out_positions_count: nv,
        out_normals: null_mut(),
        out_normals_count: 0,
        simd: CF_SIMD_AUTO,
    };
    let points = cf_transform_points_job {
        matrix: ib.as_ptr().cast(),
        points: pos.as_ptr().cast(),
        num_points: nv,
        out_points: o4.as_mut_ptr().cast(),
        out_points_count: nv,
        normals: null(),
        num_normals: 0,
        out_normals: null_mut(),
        out_normals_count: 0,
        simd: CF_SIMD_AUTO,
    };
    let mut round = |t: f32| unsafe {
        let st = [
            cf_clip_bind_pose(clip, a.c()),
            cf_clip_sample_into(clip, t, CF_LOOPING_CLAMP, CF_DEFAULTS_SKIP, a.c()),
            cf_clip_sample_into(clip, t * 0.5, CF_LOOPING_WRAP, CF_DEFAULTS_WRITE, b.c()),
            cf_clip_sample_additive_onto(add, t, CF_LOOPING_CLAMP, b.c()),
            cf_clip_sample_bones(
                clip,
                t,
                CF_LOOPING_CLAMP,
                list.as_ptr(),
                list.len(),
                lr.as_mut_ptr(),
                16,
                lt.as_mut_ptr(),
                12,
                ls.as_mut_ptr(),
                12,
            ),
            cf_blend_run(&blend),
            cf_local_to_object_run(&l2o),
            cf_skinning_palette_run(&pal),
            cf_skin_run(&skin),
            cf_transform_points_run(&points),
        ];
        assert!(st.iter().all(|&s| s == CF_OK), "{st:?}");
    };
    round(0.0); // the thread's scratch grows here
    COUNTING.with(|c| c.set(true));
    for i in 0..200 {
        round(i as f32 * 0.011);
    }
    COUNTING.with(|c| c.set(false));
    assert_eq!(
        COUNT.with(Cell::get),
        0,
        "allocations in 200 rounds of sampling and jobs"
    );
    // The counter counts: one allocation on this thread is seen.
    COUNTING.with(|c| c.set(true));
    let v = std::hint::black_box(vec![1u8; 3]);
    COUNTING.with(|c| c.set(false));
    assert_eq!((COUNT.with(Cell::get), v.len()), (1, 3));
    assert_eq!(cf_clip_free(clip), CF_OK);
    assert_eq!(cf_clip_free(add), CF_OK);
}
