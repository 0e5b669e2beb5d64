//! The committed header `include/clipforge_runtime.h` is what cbindgen generates from
//! `src/lib.rs` (and the modules it names) with `cbindgen.toml`: regenerated in memory here,
//! compared byte for byte.
//! `CLIPFORGE_UPDATE_HEADER=1` writes it instead (temporary file + rename).

use std::path::Path;

#[test]
fn committed_header_matches_the_generator() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).unwrap();
    // No `cargo metadata`: cbindgen follows src/lib.rs's `mod` items to the other files.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen failed on src/lib.rs");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = dir.join("include/clipforge_runtime.h");
    if std::env::var_os("CLIPFORGE_UPDATE_HEADER").is_some() {
        let tmp = path.with_extension("h.tmp");
        std::fs::write(&tmp, &generated).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    if committed != generated {
        let first = committed
            .split(|&b| b == b'\n')
            .zip(generated.split(|&b| b == b'\n'))
            .position(|(a, b)| a != b)
            .map_or("at the end".to_string(), |l| {
                format!("first at line {}", l + 1)
            });
        panic!(
            "{} is not what cbindgen generates from src/lib.rs (differs {first}); regenerate it \
             with\n  CLIPFORGE_UPDATE_HEADER=1 cargo test -p clipforge-runtime-capi --test header\n\
             and commit it",
            path.display()
        );
    }
    // The header names every exported function (cbindgen skips an item it cannot translate
    // with only a warning).
    let text = String::from_utf8(generated).unwrap();
    let mut src = String::new();
    for e in std::fs::read_dir(dir.join("src")).unwrap() {
        src += &std::fs::read_to_string(e.unwrap().path()).unwrap();
    }
    for line in src.lines() {
        if let Some(rest) = line.split("extern \"C\" fn ").nth(1) {
            let name = rest.split('(').next().unwrap();
            assert!(
                text.contains(&format!("{name}(")),
                "{name} is missing from the header"
            );
        }
    }
}
