//! The very first start compresses the bundled samples into the user's own cache folder
//! (`$XDG_CACHE_HOME/clipforge/out`, else `~/.cache/clipforge/out`), not into `/tmp/clipforge-out`,
//! which every user of the machine shares (another user's files, permissions, a planted
//! symlink). The start runs in a child process of this test binary, with its own `HOME`, so the
//! real user's folders are never touched.
#![cfg(feature = "gui")]

use crate::common::gui::{harness, idle, wait_until};
use clipforge::gui::{AppState, Persisted, user_cache_dir};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Set in the child: the output folder it must find as the default.
const CHILD_ENV: &str = "CLIPFORGE_TEST_FIRST_START_OUT";

/// The first start, as `ClipForgeApp::new` does it with nothing stored: the default folders,
/// scan and compress. Runs only as the child of [`first_start_compresses_into_the_users_cache`].
#[test]
fn first_start_child() {
    let Some(want) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let persisted = Persisted::default();
    assert_eq!(Path::new(&persisted.output_dir), Path::new(&want));
    let mut state = AppState::new(persisted);
    state.start(true);
    let mut h = harness(state);
    wait_until(&mut h, 6000, "the first batch", |s| {
        idle(s) && s.jobs.pending_compress.is_none() && s.jobs.last_batch.is_some()
    });
    let t = &h.state().jobs.last_batch.as_ref().unwrap().report.totals;
    assert_eq!((t.failed, t.clips > 0), (0, true), "{t:?}");
}

/// Runs [`first_start_child`] with `HOME` set to `home` (and `XDG_CACHE_HOME` to `xdg`, or
/// unset); returns the `.cfa` files it left under `want`.
fn first_start(home: &Path, xdg: Option<&Path>, want: &Path) -> Vec<PathBuf> {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "gui::first_start::first_start_child",
        "--test-threads=1",
    ])
    .env("HOME", home)
    .env(CHILD_ENV, want)
    .env_remove("XDG_CACHE_HOME");
    if let Some(x) = xdg {
        cmd.env("XDG_CACHE_HOME", x);
    }
    let o = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("1 passed"), "the child ran: {text}");
    walkdir::WalkDir::new(want)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "cfa"))
        .collect()
}

#[test]
fn first_start_compresses_into_the_users_cache() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let bundled =
        walkdir::WalkDir::new(clipforge::gui::bundled_assets_dir().unwrap().join("clips"))
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_file())
            .count();
    assert!(bundled > 0);

    let out = home.join(".cache").join("clipforge").join("out");
    assert_eq!(first_start(&home, None, &out).len(), bundled);

    // $XDG_CACHE_HOME wins over ~/.cache.
    let xdg = dir.path().join("xdg");
    let out = xdg.join("clipforge").join("out");
    assert_eq!(first_start(&home, Some(&xdg), &out).len(), bundled);
}

/// The platform rules of the user's cache folder (Linux and other Unix here): an absolute
/// `$XDG_CACHE_HOME`, else `~/.cache`; a relative value or home is never taken.
#[test]
#[cfg(all(unix, not(target_os = "macos")))]
fn the_users_cache_folder_follows_the_xdg_rules() {
    fn var(v: Option<&'static str>) -> impl Fn(&str) -> Option<OsString> {
        move |k| {
            (k == "XDG_CACHE_HOME")
                .then_some(v)
                .flatten()
                .map(OsString::from)
        }
    }
    let home = Some(PathBuf::from("/home/ann"));
    assert_eq!(
        user_cache_dir(var(None), home.clone()),
        Some(PathBuf::from("/home/ann/.cache"))
    );
    assert_eq!(
        user_cache_dir(var(Some("/var/cache/ann")), home.clone()),
        Some(PathBuf::from("/var/cache/ann"))
    );
    assert_eq!(
        user_cache_dir(var(Some("cache")), home.clone()),
        Some(PathBuf::from("/home/ann/.cache"))
    );
    assert_eq!(user_cache_dir(var(None), Some(PathBuf::from(""))), None);
    assert_eq!(user_cache_dir(var(None), None), None);
}
