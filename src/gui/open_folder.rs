//! "Open output folder": shows a folder in the system file manager (`xdg-open` on Linux and
//! the BSDs, `open` on macOS, `explorer` on Windows). The program is spawned and never waited
//! for on the UI thread (a reaper thread collects it), so a slow file manager cannot freeze
//! the app.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The program that opens a folder on this OS, or `None` where none is known.
pub fn opener_program() -> Option<&'static str> {
    opener_for(std::env::consts::OS)
}

/// The program that opens a folder on `os` (a `std::env::consts::OS` value).
pub fn opener_for(os: &str) -> Option<&'static str> {
    match os {
        "linux" | "freebsd" | "openbsd" | "netbsd" | "dragonfly" | "solaris" | "illumos" => {
            Some("xdg-open")
        }
        "macos" => Some("open"),
        "windows" => Some("explorer"),
        _ => None,
    }
}

/// Why a folder could not be opened (shown to the user as is).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OpenFolderError {
    #[error("no folder set")]
    Empty,
    #[error("{0}: the folder does not exist yet (it is created by the first compression)")]
    Missing(PathBuf),
    #[error("{0}: not a folder")]
    NotAFolder(PathBuf),
    #[error("no file manager known on this system ({0}): open {1} yourself")]
    NoOpener(String, PathBuf),
    #[error("could not start {program} to open {path}: {reason}")]
    Spawn {
        program: String,
        path: PathBuf,
        reason: String,
    },
}

/// Checks `folder` and returns the command that would open it (not started).
pub fn open_command(folder: &str, opener: Option<&str>) -> Result<Command, OpenFolderError> {
    let t = folder.trim();
    if t.is_empty() {
        return Err(OpenFolderError::Empty);
    }
    let path = Path::new(t);
    if !path.exists() {
        return Err(OpenFolderError::Missing(path.to_path_buf()));
    }
    if !path.is_dir() {
        return Err(OpenFolderError::NotAFolder(path.to_path_buf()));
    }
    let Some(program) = opener else {
        return Err(OpenFolderError::NoOpener(
            std::env::consts::OS.to_string(),
            path.to_path_buf(),
        ));
    };
    let mut cmd = Command::new(program);
    cmd.arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    Ok(cmd)
}

/// Opens `folder` in the file manager with `opener` (see [`opener_program`]); returns at once.
/// A program that starts but fails later (no file manager behind `xdg-open`) cannot be told
/// apart from a slow one without waiting, so only a failed start is an error here.
pub fn open_folder_with(folder: &str, opener: Option<&str>) -> Result<(), OpenFolderError> {
    let mut cmd = open_command(folder, opener)?;
    let mut child = cmd.spawn().map_err(|e| OpenFolderError::Spawn {
        program: opener.unwrap_or_default().to_string(),
        path: PathBuf::from(folder.trim()),
        reason: if e.kind() == std::io::ErrorKind::NotFound {
            "program not found".into()
        } else {
            e.to_string()
        },
    })?;
    // Reap it off the UI thread so no zombie stays behind.
    let _ = std::thread::Builder::new()
        .name("clipforge-open-folder".into())
        .spawn(move || {
            let _ = child.wait();
        });
    Ok(())
}

/// Opens `folder` with this OS's file manager.
pub fn open_folder(folder: &str) -> Result<(), OpenFolderError> {
    open_folder_with(folder, opener_program())
}

/// The message the app shows after an "Open output folder" click: `(text, is_error)`.
pub fn open_folder_message(folder: &str) -> (String, bool) {
    match open_folder(folder) {
        Ok(()) => (
            format!("Opened {} in the file manager", folder.trim()),
            false,
        ),
        Err(e) => (format!("Could not open the folder: {e}"), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_os_gets_its_opener() {
        assert_eq!(opener_for("linux"), Some("xdg-open"));
        assert_eq!(opener_for("macos"), Some("open"));
        assert_eq!(opener_for("windows"), Some("explorer"));
        assert_eq!(opener_for("haiku"), None);
    }

    #[test]
    fn missing_empty_and_file_paths_are_refused_before_anything_starts() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("not-yet");
        let e = open_command(&missing.display().to_string(), Some("xdg-open")).unwrap_err();
        assert_eq!(e, OpenFolderError::Missing(missing.clone()));
        assert!(e.to_string().contains("does not exist yet"));
        assert_eq!(
            open_command("  ", Some("xdg-open")).unwrap_err(),
            OpenFolderError::Empty
        );
        let f = d.path().join("a.txt");
        std::fs::write(&f, "x").unwrap();
        assert_eq!(
            open_command(&f.display().to_string(), Some("xdg-open")).unwrap_err(),
            OpenFolderError::NotAFolder(f)
        );
        let e = open_command(&d.path().display().to_string(), None).unwrap_err();
        assert!(matches!(e, OpenFolderError::NoOpener(..)));
    }

    #[test]
    fn the_command_names_the_folder_and_a_missing_program_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let folder = d.path().display().to_string();
        let cmd = open_command(&folder, Some("xdg-open")).unwrap();
        assert_eq!(cmd.get_program(), "xdg-open");
        assert_eq!(
            cmd.get_args().collect::<Vec<_>>(),
            vec![d.path().as_os_str()]
        );
        let e = open_folder_with(&folder, Some("clipforge-no-such-opener-program")).unwrap_err();
        assert!(e.to_string().contains("program not found"), "{e}");
    }
}
