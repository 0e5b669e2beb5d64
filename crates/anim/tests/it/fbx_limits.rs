//! The FBX importer under a small memory budget (`anim::limits`, process-wide: this file is its
//! own test binary so no other test sees the setting): the file size, ufbx's allocators and the
//! sample count are all bounded by it, and going over gives an error naming the file.

use crate::common;

use clipforge_anim::formats::load_clips_with_warnings;
use clipforge_anim::limits::set_max_memory_bytes;

#[test]
fn memory_budget_bounds_fbx_import() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    // 01_01_cmu.fbx: 1.7 MB, 39 bones x 2,752 samples (8.6 MB while importing).
    let path = data.join("fbx/isaacgymenvs-cmu/01_01_cmu.fbx");
    for (budget, expect) in [
        (1u64 << 20, "cannot read file"), // the file is larger than half the budget
        (6 << 20, "memory"),              // ufbx's allocators or the sample budget refuse
    ] {
        set_max_memory_bytes(budget);
        let e = load_clips_with_warnings(&path).unwrap_err();
        eprintln!("budget {budget}: {e}");
        assert_eq!(e.path, path);
        assert!(
            e.message.to_lowercase().contains(expect),
            "budget {budget}: {e}"
        );
    }
    set_max_memory_bytes(0);
    assert_eq!(load_clips_with_warnings(&path).unwrap().0.len(), 1);
}
