//! A ladder level's error over a segment's samples computed [`L`] samples at a time
//! (structure of arrays), bit for bit what the one-sample code computes with glam: the
//! arithmetic below is glam 0.34's SSE2 arithmetic written out per lane, in the same order
//! (its `Vec4` dot product sums `(x·x + z·z) + (y·y + w·w)`, its quaternion product pairs the
//! terms as `quat_mul` does), so every decoded value, quaternion and error is the same float.
//! The ladders were 14 % of the BVH set's compression time, most of it a division per
//! component and three square roots per sample, which run [`L`] wide here.
//! `lanes_equal_glam` (below) checks the equality on random inputs.

use super::prepare::{Prepared, Track, Xf};
use crate::runtime::format::DROPPED_NONE;
use crate::runtime::quant::{Dequant, RAW_BITS};

/// Samples computed together.
pub(crate) const L: usize = 8;
type F = [f32; L];

/// One track's samples in one segment, as lanes: the values it quantizes and the raw values it
/// is measured against (rotation x, y, z, w or translation/scale x, y, z), padded to a multiple
/// of [`L`] with copies of the first sample (their results are never read).
#[derive(Default)]
pub(crate) struct TrackLanes {
    /// Per chunk of [`L`] samples: values (3), raw (4), w of a segment that drops no
    /// component (1).
    chunks: Vec<[F; 8]>,
    rows: usize,
}

impl TrackLanes {
    /// Fills the lanes of track `t` at the samples of `refs` ((stored, raw) pairs) of segment `seg`.
    pub(crate) fn fill(&mut self, p: &Prepared, t: &Track, seg: usize, refs: &[(usize, usize)]) {
        let n = refs.len();
        self.rows = n;
        self.chunks.clear();
        self.chunks.reserve(n.div_ceil(L));
        let needs_w = t.kind == 0 && t.dropped[seg] == DROPPED_NONE;
        for c in 0..n.div_ceil(L) {
            let mut ch = [[0.0f32; L]; 8];
            for l in 0..L {
                let (i, j) = refs.get(c * L + l).copied().unwrap_or(refs[0]);
                let v = t.values[i];
                let raw = p.raw_local(t.bone, j);
                let rv: [f32; 4] = match t.kind {
                    0 => raw.r.to_array(),
                    1 => raw.t.extend(0.0).to_array(),
                    _ => raw.s.extend(0.0).to_array(),
                };
                for x in 0..3 {
                    ch[x][l] = v[x];
                }
                for x in 0..4 {
                    ch[3 + x][l] = rv[x];
                }
                ch[7][l] = if needs_w { t.w[i] } else { 0.0 };
            }
            self.chunks.push(ch);
        }
    }
}

/// Decoded component at `bits` ([`Dequant::quantize`] then [`Dequant::value`], or the value
/// itself at [`RAW_BITS`]).
#[inline(always)]
fn decode(v: &F, dq: &Dequant, bits: u32) -> F {
    if bits == RAW_BITS {
        return *v;
    }
    if bits == 0 || dq.step <= 0.0 {
        return [dq.value(0); L];
    }
    let max = (1u32 << bits) - 1;
    let maxf = max as f32;
    let mut out = [0.0f32; L];
    for l in 0..L {
        let x = ((v[l] - dq.base) / dq.step).clamp(0.0, maxf);
        // `x + 0.5` is in [0.5, 2^24] or NaN: as i32 it is what `as u32` gives (NaN → 0).
        let q = ((x + 0.5) as i32).min(max as i32);
        out[l] = dq.base + dq.step * q as f32;
    }
    out
}

#[inline(always)]
fn sqrt(mut x: F) -> F {
    for v in x.iter_mut() {
        *v = v.sqrt();
    }
    x
}

/// glam's `Vec4::dot` grouping. (Plain loops throughout: `array::from_fn`'s closures were
/// not inlined, which kept them out of the AVX2 copy.)
#[inline(always)]
fn dot4(a: [&F; 4], b: [&F; 4]) -> F {
    let mut out = [0.0f32; L];
    for l in 0..L {
        out[l] = (a[0][l] * b[0][l] + a[2][l] * b[2][l]) + (a[1][l] * b[1][l] + a[3][l] * b[3][l]);
    }
    out
}

/// The decoded rotation at every lane: the kept components `k`, rebuilt
/// (`rebuild_rotation`) or with the stored `w`, normalized, then turned by the track's
/// reference (`Track::rotation`).
#[inline(always)]
fn rotation(t: &Track, seg: usize, k: [F; 3], w: &F) -> [F; 4] {
    let dropped = t.dropped[seg];
    let mut v: [F; 4] = [k[0], k[1], k[2], *w];
    if dropped != DROPPED_NONE {
        let mut d = [0.0f32; L];
        for l in 0..L {
            d[l] = (1.0 - (k[0][l] * k[0][l] + k[1][l] * k[1][l] + k[2][l] * k[2][l])).max(0.0);
        }
        let d = sqrt(d);
        let dr = dropped as usize;
        // The three kept components in ascending order around the dropped one.
        let mut ki = 0;
        for (c, slot) in v.iter_mut().enumerate() {
            if c == dr {
                *slot = d;
            } else {
                *slot = k[ki];
                ki += 1;
            }
        }
    }
    let len = sqrt(dot4(
        [&v[0], &v[1], &v[2], &v[3]],
        [&v[0], &v[1], &v[2], &v[3]],
    ));
    let mut q = [[0.0f32; L]; 4];
    for c in 0..4 {
        for l in 0..L {
            q[c][l] = v[c][l] / len[l];
        }
    }
    match t.reference {
        None => q,
        Some((r, _)) => quat_mul_scalar_lanes(r.to_array(), &q),
    }
}

/// glam's `Quat::mul_quat(a, b)` with `a` the same in every lane.
#[inline(always)]
fn quat_mul_scalar_lanes(a: [f32; 4], b: &[F; 4]) -> [F; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    let mut out = [[0.0f32; L]; 4];
    for l in 0..L {
        out[0][l] = (ax * bw[l] + aw * bx[l]) + (ay * bz[l] - az * by[l]);
        out[1][l] = (aw * by[l] - ax * bz[l]) + (az * bx[l] + ay * bw[l]);
        out[2][l] = (ax * by[l] + aw * bz[l]) + (az * bw[l] - ay * bx[l]);
        out[3][l] = (aw * bw[l] - ax * bx[l]) - (az * bz[l] + ay * by[l]);
    }
    out
}

/// The error of track `t` at every row with widths `widths` (dequantizers `dq`), as
/// `search::measure_level` computes each: `rotation_lever(raw, q) · dom` for a rotation,
/// `|d − raw| · lever` for a translation or scale. Decoded rotations go to `rots` (one per row).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn errors_body(
    lanes: &TrackLanes,
    t: &Track,
    seg: usize,
    dq: &[Dequant; 3],
    widths: [u32; 3],
    lever: f32,
    errs: &mut Vec<f32>,
    rots: &mut Vec<glam::Quat>,
) {
    errs.clear();
    rots.clear();
    for (ci, ch) in lanes.chunks.iter().enumerate() {
        let k = [
            decode(&ch[0], &dq[0], widths[0]),
            decode(&ch[1], &dq[1], widths[1]),
            decode(&ch[2], &dq[2], widths[2]),
        ];
        let n = (lanes.rows - ci * L).min(L);
        let e: F = if t.kind == 0 {
            let q = rotation(t, seg, k, &ch[7]);
            let raw = [&ch[3], &ch[4], &ch[5], &ch[6]];
            let dot = dot4(raw, [&q[0], &q[1], &q[2], &q[3]]);
            let mut d = [[0.0f32; L]; 4];
            for c in 0..4 {
                for l in 0..L {
                    d[c][l] = if dot[l] < 0.0 {
                        raw[c][l] + q[c][l]
                    } else {
                        raw[c][l] - q[c][l]
                    };
                }
            }
            let len = sqrt(dot4(
                [&d[0], &d[1], &d[2], &d[3]],
                [&d[0], &d[1], &d[2], &d[3]],
            ));
            for l in 0..n {
                rots.push(glam::Quat::from_xyzw(q[0][l], q[1][l], q[2][l], q[3][l]));
            }
            let mut e = [0.0f32; L];
            for l in 0..L {
                e[l] = 2.0 * len[l] * lever;
            }
            e
        } else {
            let mut e = [0.0f32; L];
            for l in 0..L {
                let d = [k[0][l] - ch[3][l], k[1][l] - ch[4][l], k[2][l] - ch[5][l]];
                // glam's `Vec3A::length`: sqrt((x·x + y·y) + z·z).
                e[l] = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() * lever;
            }
            e
        };
        errs.extend_from_slice(&e[..n]);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
fn errors_avx2(
    lanes: &TrackLanes,
    t: &Track,
    seg: usize,
    dq: &[Dequant; 3],
    widths: [u32; 3],
    lever: f32,
    errs: &mut Vec<f32>,
    rots: &mut Vec<glam::Quat>,
) {
    errors_body(lanes, t, seg, dq, widths, lever, errs, rots)
}

/// [`errors_body`], [`L`] lanes wide in AVX2 registers where the processor has them (the
/// same IEEE operations, so the same results either way).
#[allow(clippy::too_many_arguments)]
pub(crate) fn errors(
    lanes: &TrackLanes,
    t: &Track,
    seg: usize,
    dq: &[Dequant; 3],
    widths: [u32; 3],
    lever: f32,
    errs: &mut Vec<f32>,
    rots: &mut Vec<glam::Quat>,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2 (checked just above).
        return unsafe { errors_avx2(lanes, t, seg, dq, widths, lever, errs, rots) };
    }
    errors_body(lanes, t, seg, dq, widths, lever, errs, rots)
}

/// A transform per lane: rotation x, y, z, w, translation x, y, z, scale x, y, z.
pub(crate) type XfL = [F; 10];

/// `x` in every lane.
pub(crate) fn splat(x: &Xf) -> XfL {
    let v = [
        x.r.x, x.r.y, x.r.z, x.r.w, x.t.x, x.t.y, x.t.z, x.s.x, x.s.y, x.s.z,
    ];
    v.map(|c| [c; L])
}

/// Lane `l` of `x`.
#[inline(always)]
pub(crate) fn get(x: &XfL, l: usize) -> Xf {
    Xf {
        r: glam::Quat::from_xyzw(x[0][l], x[1][l], x[2][l], x[3][l]),
        t: glam::Vec3A::new(x[4][l], x[5][l], x[6][l]),
        s: glam::Vec3A::new(x[7][l], x[8][l], x[9][l]),
    }
}

/// Sets lane `l` of `x`.
#[inline(always)]
pub(crate) fn set(x: &mut XfL, l: usize, v: &Xf) {
    let c = [
        v.r.x, v.r.y, v.r.z, v.r.w, v.t.x, v.t.y, v.t.z, v.s.x, v.s.y, v.s.z,
    ];
    for (a, b) in x.iter_mut().zip(c) {
        a[l] = b;
    }
}

/// glam's `Quat::mul_vec3a(q, v)` per lane: `(v·(w² − |b|²) + b·(2·(v·b))) + (b × v)·2w`.
#[inline(always)]
fn rotate(q: [&F; 4], v: [&F; 3]) -> [F; 3] {
    let [bx, by, bz, w] = q;
    let [vx, vy, vz] = v;
    let mut out = [[0.0f32; L]; 3];
    for l in 0..L {
        let b2 = bx[l] * bx[l] + by[l] * by[l] + bz[l] * bz[l];
        let vb = vx[l] * bx[l] + vy[l] * by[l] + vz[l] * bz[l];
        let k = w[l] * w[l] - b2;
        let d2 = vb * 2.0;
        let w2 = w[l] * 2.0;
        let c = [
            by[l] * vz[l] - bz[l] * vy[l],
            bz[l] * vx[l] - bx[l] * vz[l],
            bx[l] * vy[l] - by[l] * vx[l],
        ];
        out[0][l] = (vx[l] * k + bx[l] * d2) + c[0] * w2;
        out[1][l] = (vy[l] * k + by[l] * d2) + c[1] * w2;
        out[2][l] = (vz[l] * k + bz[l] * d2) + c[2] * w2;
    }
    out
}

/// The object transform of a bone from its parent's and its local one
/// (`<Xf as Compose>::compose`, glam's arithmetic).
#[inline(always)]
pub(crate) fn compose(parent: &XfL, local: &XfL) -> XfL {
    let mut out = [[0.0f32; L]; 10];
    let pr = [&parent[0], &parent[1], &parent[2], &parent[3]];
    let q = quat_mul_lanes(pr, [&local[0], &local[1], &local[2], &local[3]]);
    let len = sqrt(dot4(
        [&q[0], &q[1], &q[2], &q[3]],
        [&q[0], &q[1], &q[2], &q[3]],
    ));
    for c in 0..4 {
        for l in 0..L {
            out[c][l] = q[c][l] / len[l];
        }
    }
    let mut ts = [[0.0f32; L]; 3];
    for c in 0..3 {
        for l in 0..L {
            ts[c][l] = local[4 + c][l] * parent[7 + c][l];
        }
    }
    let t = rotate(pr, [&ts[0], &ts[1], &ts[2]]);
    for c in 0..3 {
        for l in 0..L {
            out[4 + c][l] = t[c][l] + parent[4 + c][l];
            out[7 + c][l] = local[7 + c][l] * parent[7 + c][l];
        }
    }
    out
}

/// A root's object transform: its local one without the translation (kept out for float32
/// precision, as `SegmentCtx::object` does).
#[inline(always)]
pub(crate) fn root_object(local: &XfL) -> XfL {
    let mut out = *local;
    for c in 4..7 {
        out[c] = [0.0; L];
    }
    out
}

/// glam's `Quat::mul_quat(a, b)` per lane.
#[inline(always)]
fn quat_mul_lanes(a: [&F; 4], b: [&F; 4]) -> [F; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    let mut out = [[0.0f32; L]; 4];
    for l in 0..L {
        out[0][l] = (ax[l] * bw[l] + aw[l] * bx[l]) + (ay[l] * bz[l] - az[l] * by[l]);
        out[1][l] = (aw[l] * by[l] - ax[l] * bz[l]) + (az[l] * bx[l] + ay[l] * bw[l]);
        out[2][l] = (ax[l] * by[l] + aw[l] * bz[l]) + (az[l] * bw[l] - ay[l] * bx[l]);
        out[3][l] = (aw[l] * bw[l] - ax[l] * bx[l]) - (az[l] * bz[l] + ay[l] * by[l]);
    }
    out
}

/// A bone's raw side per lane: its raw object translation (3) and `raw_vertices` (9).
pub(crate) type RawL = [F; 12];

/// `prepare::vertex_error_to` per lane, times `weight`: the error of object transforms `x`
/// against the raw side `raw`, the lossy side shifted by `offset`.
#[inline(always)]
pub(crate) fn vertex_error(raw: &RawL, x: &XfL, offset: &[F; 3], shell: f32, weight: f32) -> F {
    let mut dt = [[0.0f32; L]; 3];
    for c in 0..3 {
        for l in 0..L {
            dt[c][l] = (x[4 + c][l] + offset[c][l]) - raw[c][l];
        }
    }
    let q = [&x[0], &x[1], &x[2], &x[3]];
    let mut worst = [0.0f32; L];
    for axis in 0..3 {
        // `axis * shell * s`, as glam multiplies it (the zero components included).
        let mut v = [[0.0f32; L]; 3];
        for c in 0..3 {
            let a = if c == axis { 1.0f32 } else { 0.0 } * shell;
            for l in 0..L {
                v[c][l] = a * x[7 + c][l];
            }
        }
        let r = rotate(q, [&v[0], &v[1], &v[2]]);
        for l in 0..L {
            let d = [
                (r[0][l] - raw[3 + 3 * axis][l]) + dt[0][l],
                (r[1][l] - raw[4 + 3 * axis][l]) + dt[1][l],
                (r[2][l] - raw[5 + 3 * axis][l]) + dt[2][l],
            ];
            worst[l] = worst[l].max(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        }
    }
    let mut e = sqrt(worst);
    for v in e.iter_mut() {
        *v *= weight;
    }
    e
}

/// The decoded local values of track `t` in chunk `c` of its lanes with dequantizers `dq` and
/// widths `widths`, written into the sub-track of `local` (as `search::set_local` does).
#[inline(always)]
pub(crate) fn decode_into(
    lanes: &TrackLanes,
    c: usize,
    t: &Track,
    seg: usize,
    dq: &[Dequant; 3],
    widths: [u32; 3],
    local: &mut XfL,
) {
    let ch = &lanes.chunks[c];
    let k = [
        decode(&ch[0], &dq[0], widths[0]),
        decode(&ch[1], &dq[1], widths[1]),
        decode(&ch[2], &dq[2], widths[2]),
    ];
    match t.kind {
        0 => {
            let q = rotation(t, seg, k, &ch[7]);
            local[..4].copy_from_slice(&q);
        }
        1 => local[4..7].copy_from_slice(&k),
        _ => local[7..10].copy_from_slice(&k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::quant::rebuild_rotation;
    use glam::{Quat, Vec3A, Vec4};

    fn rng(seed: u64) -> impl FnMut() -> f32 {
        let mut s = seed;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        }
    }

    /// Each lane primitive against the glam (and `Dequant`) code the search used before, bit
    /// for bit, on random values: decoding at every width, rebuilt and normalized rotations,
    /// products with a reference, the rotation lever and the translation distance.
    #[test]
    fn lanes_equal_glam() {
        let mut r = rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..20_000 {
            let bits = [0, 1, 3, 7, 12, 16, 24, RAW_BITS][round % 8];
            let dq = Dequant::new(r() * 2.0, r().abs() * 3.0, 17, 200, bits.min(24));
            let v: F = std::array::from_fn(|_| r() * 3.0);
            let got = decode(&v, &dq, bits);
            for l in 0..L {
                let want = if bits == RAW_BITS {
                    v[l]
                } else {
                    dq.value(dq.quantize(v[l], bits))
                };
                assert_eq!(got[l].to_bits(), want.to_bits(), "decode {bits} {}", v[l]);
            }
            // Kept components of unit quaternions (a few past the unit sphere, as quantized ones are).
            let qs: [Vec4; L] = std::array::from_fn(|_| {
                Vec4::new(r(), r(), r(), r()).normalize() * (1.0 + r() * 1e-3)
            });
            let dropped = (round % 4) as u8;
            let kept: [[f32; 3]; L] =
                std::array::from_fn(|l| crate::runtime::quant::kept_components(qs[l], dropped));
            let k: [F; 3] = std::array::from_fn(|c| std::array::from_fn(|l| kept[l][c]));
            let mut v4: [F; 4] = [k[0], k[1], k[2], [0.0; L]];
            let d: F = std::array::from_fn(|l| {
                (1.0 - (k[0][l] * k[0][l] + k[1][l] * k[1][l] + k[2][l] * k[2][l])).max(0.0)
            });
            let d = sqrt(d);
            let mut ki = 0;
            for (c, slot) in v4.iter_mut().enumerate() {
                if c == dropped as usize {
                    *slot = d;
                } else {
                    *slot = k[ki];
                    ki += 1;
                }
            }
            let len = sqrt(dot4(
                [&v4[0], &v4[1], &v4[2], &v4[3]],
                [&v4[0], &v4[1], &v4[2], &v4[3]],
            ));
            let reference = Quat::from_vec4(Vec4::new(r(), r(), r(), r()).normalize());
            let mut q = [[0.0f32; L]; 4];
            for c in 0..4 {
                for l in 0..L {
                    q[c][l] = v4[c][l] / len[l];
                }
            }
            let turned = quat_mul_scalar_lanes(reference.to_array(), &q);
            for l in 0..L {
                let want = rebuild_rotation(kept[l], dropped);
                let got = Quat::from_xyzw(q[0][l], q[1][l], q[2][l], q[3][l]);
                assert_eq!(
                    got.to_array().map(f32::to_bits),
                    want.to_array().map(f32::to_bits)
                );
                let want = reference * want;
                let got = Quat::from_xyzw(turned[0][l], turned[1][l], turned[2][l], turned[3][l]);
                assert_eq!(
                    got.to_array().map(f32::to_bits),
                    want.to_array().map(f32::to_bits)
                );
                // The lever, as `errors_body` computes it.
                let raw = Quat::from_vec4(qs[(l + 1) % L]);
                let (va, vb) = (Vec4::from(raw), Vec4::from(want));
                let dot = dot4(
                    [&[va.x; L], &[va.y; L], &[va.z; L], &[va.w; L]],
                    [&[vb.x; L], &[vb.y; L], &[vb.z; L], &[vb.w; L]],
                )[0];
                assert_eq!(dot.to_bits(), va.dot(vb).to_bits());
                let dd = if dot < 0.0 { va + vb } else { va - vb };
                let len = sqrt(dot4(
                    [&[dd.x; L], &[dd.y; L], &[dd.z; L], &[dd.w; L]],
                    [&[dd.x; L], &[dd.y; L], &[dd.z; L], &[dd.w; L]],
                ))[0];
                assert_eq!(
                    (2.0 * len).to_bits(),
                    super::super::prepare::rotation_lever(raw, want).to_bits()
                );
                let (a, b) = (Vec3A::new(r(), r(), r()) * 50.0, Vec3A::new(r(), r(), r()));
                let dv = a - b;
                let got = (dv.x * dv.x + dv.y * dv.y + dv.z * dv.z).sqrt();
                assert_eq!(got.to_bits(), dv.length().to_bits());
            }
        }
    }
}
