//! Writes the bundled sample library in `assets/` from the procedural generator, so the app and
//! the README's first command have clips to work on with nothing downloaded.
//! `cargo run --no-default-features --example make_assets`

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};

fn main() -> std::io::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/clips");
    let set = [
        ("locomotion/walk_slow", 1, 90, 30.0, false),
        ("locomotion/walk_fast", 2, 60, 30.0, false),
        ("locomotion/jog", 3, 48, 24.0, false),
        ("idle/idle_breathe", 4, 120, 30.0, false),
        ("idle/idle_look", 5, 75, 30.0, false),
        ("combat/swing_scaled", 6, 40, 30.0, true),
        ("combat/hit_react", 7, 20, 30.0, false),
        ("misc/pose_single_frame", 8, 1, 30.0, false),
    ];
    for (name, seed, num_samples, sample_rate, with_scale) in set {
        let path = root.join(format!("{name}.acl.sjson"));
        std::fs::create_dir_all(path.parent().unwrap())?;
        let leaf = name.rsplit('/').next().unwrap().to_string();
        let clip = generate(&GenerateOptions {
            name: leaf,
            num_samples,
            sample_rate,
            seed,
            with_scale,
        });
        std::fs::write(&path, write_acl_clip(&clip))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
