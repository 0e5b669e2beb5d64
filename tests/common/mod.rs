//! Shared test helpers.
#![allow(dead_code)]

use std::path::PathBuf;

/// The real-data folder (`../shared/data`) when the suite is switched on with
/// `CLIPFORGE_DATA=/path/to/shared/data`. Unset: `None` (the test prints that it skipped).
/// Set but missing: panics, so CI never passes silently without its data.
pub fn real_data() -> Option<PathBuf> {
    let dir = std::env::var_os("CLIPFORGE_DATA")?;
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("acl-regression").is_dir(),
        "CLIPFORGE_DATA={} does not hold the real data (acl-regression/ missing)",
        dir.display()
    );
    Some(dir)
}

/// Use at the top of a real-data test: `let Some(data) = real_data_or_skip!() else { return };`
#[macro_export]
macro_rules! real_data_or_skip {
    () => {{
        let d = common::real_data();
        if d.is_none() {
            eprintln!("skipped: set CLIPFORGE_DATA=../shared/data to run the real-data suite");
        }
        d
    }};
}
