//! Procedural clips: a humanoid skeleton with a looping walk-like motion, for tests on a fresh
//! clone (no external data) and for the bundled sample library in `assets/`.

use super::clip::RawClip;
use super::skeleton::{BoneDesc, Skeleton};
use glam::{EulerRot, Quat, Vec3};

/// What to generate.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    pub name: String,
    pub num_samples: usize,
    pub sample_rate: f32,
    /// Varies amplitudes and phases, so several clips differ.
    pub seed: u64,
    /// Animate scale on a few bones.
    pub with_scale: bool,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        Self {
            name: "walk".into(),
            num_samples: 60,
            sample_rate: 30.0,
            seed: 1,
            with_scale: false,
        }
    }
}

/// (name, parent, bind translation in cm)
const BONES: &[(&str, Option<usize>, [f32; 3])] = &[
    ("hips", None, [0.0, 95.0, 0.0]),
    ("spine", Some(0), [0.0, 10.0, 0.0]),
    ("chest", Some(1), [0.0, 15.0, 0.0]),
    ("neck", Some(2), [0.0, 20.0, 0.0]),
    ("head", Some(3), [0.0, 10.0, 0.0]),
    ("l_shoulder", Some(2), [8.0, 17.0, 0.0]),
    ("l_upper_arm", Some(5), [12.0, 0.0, 0.0]),
    ("l_forearm", Some(6), [28.0, 0.0, 0.0]),
    ("l_hand", Some(7), [25.0, 0.0, 0.0]),
    ("l_finger", Some(8), [8.0, 0.0, 0.0]),
    ("r_shoulder", Some(2), [-8.0, 17.0, 0.0]),
    ("r_upper_arm", Some(10), [-12.0, 0.0, 0.0]),
    ("r_forearm", Some(11), [-28.0, 0.0, 0.0]),
    ("r_hand", Some(12), [-25.0, 0.0, 0.0]),
    ("r_finger", Some(13), [-8.0, 0.0, 0.0]),
    ("l_thigh", Some(0), [9.0, -5.0, 0.0]),
    ("l_shin", Some(15), [0.0, -42.0, 0.0]),
    ("l_foot", Some(16), [0.0, -40.0, 0.0]),
    ("l_toe", Some(17), [0.0, -5.0, 12.0]),
    ("r_thigh", Some(0), [-9.0, -5.0, 0.0]),
    ("r_shin", Some(19), [0.0, -42.0, 0.0]),
    ("r_foot", Some(20), [0.0, -40.0, 0.0]),
    ("r_toe", Some(21), [0.0, -5.0, 12.0]),
];

/// Small deterministic generator (SplitMix64) so the crate needs no RNG dependency for this.
struct Rng(u64);
impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The humanoid skeleton used by [`generate`].
pub fn humanoid_skeleton() -> Skeleton {
    let bones = BONES
        .iter()
        .map(|&(name, parent, t)| {
            let mut d = BoneDesc::new(name, parent);
            d.bind_translation = Vec3::from(t);
            d
        })
        .collect();
    Skeleton::from_ordered(bones).expect("the built-in skeleton is valid")
}

/// Generates a clip: a walk cycle with per-seed amplitudes; fingers stay still (constant tracks),
/// translations stay at the bind pose except the hips (default tracks).
pub fn generate(opts: &GenerateOptions) -> RawClip {
    let skeleton = humanoid_skeleton();
    let nb = skeleton.num_bones();
    let ns = opts.num_samples.max(1);
    let mut rng = Rng(opts.seed);
    let params: Vec<[f32; 6]> = (0..nb)
        .map(|_| std::array::from_fn(|_| rng.next_f32()))
        .collect();
    let mut rotations = Vec::with_capacity(nb * ns);
    let mut translations = Vec::with_capacity(nb * ns);
    let mut scales = Vec::with_capacity(nb * ns);
    let cycle = 1.2; // seconds per stride
    for (b, p) in params.iter().enumerate() {
        let name = BONES[b].0;
        for s in 0..ns {
            let t = s as f32 / opts.sample_rate;
            let phase = std::f32::consts::TAU * t / cycle;
            let side = if name.starts_with("r_") {
                std::f32::consts::PI
            } else {
                0.0
            };
            let amp = 0.15 + 0.5 * p[0];
            let rot = if name.ends_with("finger") {
                Quat::from_rotation_z(0.2 * p[1])
            } else {
                Quat::from_euler(
                    EulerRot::XYZ,
                    amp * (phase + side + p[2]).sin(),
                    0.3 * amp * (2.0 * phase + p[3]).sin(),
                    0.2 * amp * (phase + p[4]).cos(),
                )
            };
            rotations.push(rot);
            let mut tr = Vec3::from(BONES[b].2);
            if b == 0 {
                tr += Vec3::new(
                    2.0 * (phase).sin(),
                    3.0 * (2.0 * phase).sin().abs(),
                    110.0 * t,
                );
            }
            translations.push(tr);
            let sc = if opts.with_scale && (name == "chest" || name.ends_with("forearm")) {
                Vec3::splat(1.0 + 0.1 * (phase + p[5]).sin())
            } else {
                Vec3::ONE
            };
            scales.push(sc);
        }
    }
    RawClip::new(
        opts.name.clone(),
        skeleton,
        opts.sample_rate,
        ns,
        rotations,
        translations,
        scales,
    )
    .expect("generated values are finite")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_clip_is_valid_and_seed_dependent() {
        let a = generate(&GenerateOptions::default());
        let b = generate(&GenerateOptions {
            seed: 2,
            ..Default::default()
        });
        assert_eq!(a.num_bones(), BONES.len());
        assert_eq!(a.num_samples, 60);
        assert_ne!(a.rotations, b.rotations);
        assert!(!a.has_scale());
        assert!(
            generate(&GenerateOptions {
                with_scale: true,
                ..Default::default()
            })
            .has_scale()
        );
    }
}
