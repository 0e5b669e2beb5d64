//! The float64 measurement of `metric::measure_weighted` [`M`] samples at a time (structure
//! of arrays over samples), bit for bit what the one-pose code computes: glam 0.34's float64
//! arithmetic is plain scalar code, written out here per lane in the same order (local
//! transforms normalized, composed parent first, `axis_images`, distances). The compressor's
//! float64 check was a fifth of the BVH set's compression time; with AVX2 four samples go
//! through each operation at once. `lanes_equal_one_pose` (in `metric.rs`'s tests) checks the
//! equality on real-shaped random clips.

use crate::clip::RawClip;
use crate::skeleton::NO_PARENT;

/// Samples measured together.
pub(crate) const M: usize = 4;
type D = [f64; M];
/// A transform per lane: rotation x, y, z, w, translation x, y, z, scale x, y, z.
pub(crate) type DXf = [D; 10];

/// `local_f64` of `bone` at the samples `s[l]`.
#[inline(always)]
fn local(clip: &RawClip, bone: usize, s: &[usize; M]) -> DXf {
    let mut out = [[0.0f64; M]; 10];
    for l in 0..M {
        let i = clip.index(bone, s[l]);
        let q = clip.rotations[i];
        let (t, sc) = (clip.translations[i], clip.scales[i]);
        let v = [q.x as f64, q.y as f64, q.z as f64, q.w as f64];
        let c = [
            v[0],
            v[1],
            v[2],
            v[3],
            t.x as f64,
            t.y as f64,
            t.z as f64,
            sc.x as f64,
            sc.y as f64,
            sc.z as f64,
        ];
        for k in 0..10 {
            out[k][l] = c[k];
        }
    }
    normalize4(&mut out);
    out
}

/// glam's `DVec4::normalize` of the rotation lanes: `v · (1 / sqrt(((x² + y²) + z²) + w²))`.
#[inline(always)]
fn normalize4(x: &mut DXf) {
    for l in 0..M {
        let d = x[0][l] * x[0][l] + x[1][l] * x[1][l] + x[2][l] * x[2][l] + x[3][l] * x[3][l];
        let r = 1.0 / d.sqrt();
        for c in 0..4 {
            x[c][l] *= r;
        }
    }
}

/// `blend_local(a, b, alpha)` per lane: nlerp on the shorter arc, lerp for the rest.
#[inline(always)]
fn blend(a: &DXf, b: &DXf, alpha: f64) -> DXf {
    let mut out = [[0.0f64; M]; 10];
    for l in 0..M {
        let dot = a[0][l] * b[0][l] + a[1][l] * b[1][l] + a[2][l] * b[2][l] + a[3][l] * b[3][l];
        let sign = if dot < 0.0 { -1.0 } else { 1.0 };
        for c in 0..4 {
            // `-qb` is glam's `qb * -1.0`.
            let qb = if dot < 0.0 { b[c][l] * sign } else { b[c][l] };
            out[c][l] = a[c][l] * (1.0 - alpha) + qb * alpha;
        }
        for c in 4..10 {
            out[c][l] = a[c][l] * (1.0 - alpha) + b[c][l] * alpha;
        }
    }
    normalize4(&mut out);
    out
}

/// glam's `DQuat::mul_vec3(q, v)` per lane.
#[inline(always)]
fn rotate(q: &DXf, v: &[D; 3]) -> [D; 3] {
    let mut out = [[0.0f64; M]; 3];
    for l in 0..M {
        let (bx, by, bz, w) = (q[0][l], q[1][l], q[2][l], q[3][l]);
        let (vx, vy, vz) = (v[0][l], v[1][l], v[2][l]);
        let b2 = bx * bx + by * by + bz * bz;
        let k = w * w - b2;
        let d2 = (vx * bx + vy * by + vz * bz) * 2.0;
        let w2 = w * 2.0;
        let c = [by * vz - vy * bz, bz * vx - vz * bx, bx * vy - vx * by];
        out[0][l] = (vx * k + bx * d2) + c[0] * w2;
        out[1][l] = (vy * k + by * d2) + c[1] * w2;
        out[2][l] = (vz * k + bz * d2) + c[2] * w2;
    }
    out
}

/// `<DTransform as Compose>::compose` per lane.
#[inline(always)]
fn compose(p: &DXf, x: &DXf) -> DXf {
    let mut out = [[0.0f64; M]; 10];
    for l in 0..M {
        let (x0, y0, z0, w0) = (p[0][l], p[1][l], p[2][l], p[3][l]);
        let (x1, y1, z1, w1) = (x[0][l], x[1][l], x[2][l], x[3][l]);
        out[0][l] = w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1;
        out[1][l] = w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1;
        out[2][l] = w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1;
        out[3][l] = w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1;
    }
    normalize4(&mut out);
    let mut ts = [[0.0f64; M]; 3];
    for c in 0..3 {
        for l in 0..M {
            ts[c][l] = x[4 + c][l] * p[7 + c][l];
        }
    }
    let t = rotate(p, &ts);
    for c in 0..3 {
        for l in 0..M {
            out[4 + c][l] = t[c][l] + p[4 + c][l];
            out[7 + c][l] = x[7 + c][l] * p[7 + c][l];
        }
    }
    out
}

/// `metric::axis_images` per lane, the translation added: the three virtual vertices.
#[inline(always)]
fn vertices(x: &DXf, shell: f64) -> [[D; 3]; 3] {
    let mut out = [[[0.0f64; M]; 3]; 3];
    for l in 0..M {
        let (bx, by, bz, w) = (x[0][l], x[1][l], x[2][l], x[3][l]);
        let (ax, ay, az) = (x[7][l] * shell, x[8][l] * shell, x[9][l] * shell);
        let k = w * w - ((bx * bx) + (by * by) + (bz * bz));
        let w2 = w * 2.0;
        let dx = (ax * bx) * 2.0;
        let dy = (ay * by) * 2.0;
        let dz = (az * bz) * 2.0;
        let im = [
            [
                ax * k + bx * dx,
                by * dx + (bz * ax) * w2,
                bz * dx - (ax * by) * w2,
            ],
            [
                bx * dy - (ay * bz) * w2,
                ay * k + by * dy,
                bz * dy + (bx * ay) * w2,
            ],
            [
                bx * dz + (by * az) * w2,
                by * dz - (az * bx) * w2,
                az * k + bz * dz,
            ],
        ];
        for a in 0..3 {
            for c in 0..3 {
                out[a][c][l] = im[a][c] + x[4 + c][l];
            }
        }
    }
    out
}

/// `metric::vertex_error` per lane.
#[inline(always)]
fn vertex_error(raw: &DXf, lossy: &DXf, shell: f64) -> D {
    let (a, b) = (vertices(raw, shell), vertices(lossy, shell));
    let mut worst = [0.0f64; M];
    for c in 0..3 {
        for l in 0..M {
            let d = [
                a[c][0][l] - b[c][0][l],
                a[c][1][l] - b[c][1][l],
                a[c][2][l] - b[c][2][l],
            ];
            worst[l] = worst[l].max(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        }
    }
    // The largest distance is the root of the largest square (a correctly rounded root is
    // monotone, so the same float; NaN is skipped by `max` either way): one root, not three.
    for w in worst.iter_mut() {
        *w = w.sqrt();
    }
    worst
}

/// The object transform of a bone from its parent's (`None` for a root) and its local one.
#[inline(always)]
fn object(parent: Option<&DXf>, local: &DXf) -> DXf {
    match parent {
        None => *local,
        Some(p) => compose(p, local),
    }
}

/// The errors of every bone at the [`M`] samples or intervals `s` (`errs[bone][lane]`):
/// raw against lossy at the samples (`alpha` None), or raw blended at `alpha` between `s` and
/// `s + 1` against the lossy poses' sample `s`. (Written without closures: theirs were not
/// inlined, which kept them out of the AVX2 copy.)
#[inline(always)]
fn errors_body(
    raw: &RawClip,
    lossy: &RawClip,
    s: &[usize; M],
    alpha: Option<f64>,
    shells: &[f32],
    scratch: &mut [Vec<DXf>; 2],
    errs: &mut [D],
) {
    let parents = &raw.skeleton.parents;
    let lossy_parents = &lossy.skeleton.parents;
    let [a, b] = scratch;
    let next = s.map(|i| i + 1);
    for bone in 0..parents.len() {
        let l = match alpha {
            None => local(raw, bone, s),
            Some(alpha) => blend(&local(raw, bone, s), &local(raw, bone, &next), alpha),
        };
        let p = parents[bone];
        a[bone] = object((p != NO_PARENT).then(|| &a[p as usize]), &l);
        let l = local(lossy, bone, s);
        let p = lossy_parents[bone];
        b[bone] = object((p != NO_PARENT).then(|| &b[p as usize]), &l);
        errs[bone] = vertex_error(&a[bone], &b[bone], shells[bone] as f64);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn errors_avx2(
    raw: &RawClip,
    lossy: &RawClip,
    s: &[usize; M],
    alpha: Option<f64>,
    shells: &[f32],
    scratch: &mut [Vec<DXf>; 2],
    errs: &mut [D],
) {
    errors_body(raw, lossy, s, alpha, shells, scratch, errs)
}

/// [`errors_body`], in AVX2 registers where the processor has them (the same IEEE operations).
/// `scratch` holds two poses of `raw`'s bones; `errs` one entry per bone.
pub(crate) fn errors(
    raw: &RawClip,
    lossy: &RawClip,
    s: &[usize; M],
    alpha: Option<f64>,
    shells: &[f32],
    scratch: &mut [Vec<DXf>; 2],
    errs: &mut [D],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2 (checked just above).
        return unsafe { errors_avx2(raw, lossy, s, alpha, shells, scratch, errs) };
    }
    errors_body(raw, lossy, s, alpha, shells, scratch, errs)
}
