//! The float functions core lacks (sqrt, floor, ceil, round, Euclidean remainder), from libm:
//! correctly rounded or exact, so they give std's results bit for bit on every target.

#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    libm::sqrtf(x)
}

/// (The format's tests' oracle for the rotation ranges' rounding.)
#[inline]
#[cfg(test)]
pub fn floor(x: f32) -> f32 {
    libm::floorf(x)
}

#[inline]
#[cfg(test)]
pub fn ceil(x: f32) -> f32 {
    libm::ceilf(x)
}

/// Rounds half away from zero, as `f32::round`.
#[inline]
pub fn round(x: f32) -> f32 {
    libm::roundf(x)
}

/// `x.rem_euclid(m)` as std computes it: the remainder of `x / m` made non-negative.
#[inline]
pub fn rem_euclid(x: f32, m: f32) -> f32 {
    let r = libm::fmodf(x, m);
    if r < 0.0 { r + m.abs() } else { r }
}

#[cfg(test)]
mod tests {
    /// The same bits as std's functions, on values around the edges.
    #[test]
    fn matches_std() {
        let mut xs = std::vec![
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            1e-30,
            3.4e38,
            16_777_217.0
        ];
        let mut s = 1u32;
        for _ in 0..10_000 {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let x = f32::from_bits(s);
            if x.is_finite() {
                xs.push(x);
            }
        }
        for &x in &xs {
            assert_eq!(
                super::sqrt(x.abs()).to_bits(),
                x.abs().sqrt().to_bits(),
                "{x}"
            );
            assert_eq!(super::floor(x).to_bits(), x.floor().to_bits(), "{x}");
            assert_eq!(super::ceil(x).to_bits(), x.ceil().to_bits(), "{x}");
            assert_eq!(super::round(x).to_bits(), x.round().to_bits(), "{x}");
            for m in [7.0f32, 26.0, 573.0, 0.3] {
                assert_eq!(
                    super::rem_euclid(x, m).to_bits(),
                    x.rem_euclid(m).to_bits(),
                    "{x} {m}"
                );
            }
        }
    }
}
