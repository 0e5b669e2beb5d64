//! Atomic file writes, below every layer: batch outputs, reports and skip caches
//! (`clipforge_pipeline`) and the header profiler's cache (`clipforge_headers`) all replace files
//! this way, so a reader never sees half a file and two writers never share a temporary name.
//! Also the one CSV writer of every report ([`csv_writer`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: the data goes to a temporary file in the same folder
/// (`.<name>.cf-tmp-<pid>-<n>`), is flushed to disk, then renamed over `path`. Readers see the old
/// file or the new one, never a partial one; on any error the temporary file is removed.
/// Missing parent folders are created.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(path, bytes, true)
}

/// [`write_atomic`], with the flush to disk optional: a cache that is checksummed and simply
/// rebuilt when damaged does not need to wait for the disk.
pub fn replace_file(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    replace_file_parts(path, &[bytes], durable)
}

/// [`replace_file`] with the content given in parts, written one after the other (no buffer
/// joining them: the header cache is several megabytes of separately encoded sections).
pub fn replace_file_parts(path: &Path, parts: &[&[u8]], durable: bool) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "path has no file name")
    })?;
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(
        ".{}.cf-tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        n
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        for p in parts {
            f.write_all(p)?;
        }
        if durable {
            f.sync_all()?;
        }
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// True for the temporary files [`write_atomic`] creates (left behind only if the process is killed).
pub fn is_temp_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        n.starts_with('.') && n.contains(".cf-tmp-")
    })
}

/// Opens `path` for reading only if it is a regular file, checked on the opened handle (no race
/// between a `stat` and the `open`). FIFOs are opened non-blocking so that a FIFO without a writer
/// cannot hang the caller before the check refuses it; devices, sockets and folders are refused
/// with an error naming what they are.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", file_kind(&meta.file_type())),
        ));
    }
    #[cfg(unix)]
    {
        // Regular files ignore O_NONBLOCK on Linux, but clear it so the handle behaves as a
        // plain blocking one everywhere.
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own; no memory is passed.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    Ok(file)
}

/// Reads a whole regular file ([`open_regular`]) of at most `max_len` bytes. A larger file is
/// refused before anything is allocated for it; a file that grows while it is read is refused too.
pub fn read_regular(path: &Path, max_len: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len > max_len {
        return Err(too_large(len, max_len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max_len + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_len {
        return Err(too_large(bytes.len() as u64, max_len));
    }
    Ok(bytes)
}

fn too_large(len: u64, max_len: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("file is {len} bytes, more than the {max_len} accepted"),
    )
}

/// What a non-regular file is, in words for an error message.
pub fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.bvh");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = open_regular(&fifo).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = read_regular(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let e = read_regular(dir.path(), 1 << 20).unwrap_err();
        assert!(!e.to_string().is_empty());
    }

    #[test]
    fn read_regular_bounds_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_regular(&f, 10).unwrap(), b"0123456789");
        let e = read_regular(&f, 9).unwrap_err();
        assert!(e.to_string().contains("10 bytes"), "{e}");
    }
}
/// The CSV writer of every report (clip batches and the header profiler): RFC 4180 quoting as
/// spreadsheet tools read it (fields holding a comma, a quote or a line break are quoted, quotes
/// doubled; everything else as is), `\n` line ends. Finish with [`csv_text`], then write the
/// text with [`write_atomic`].
pub fn csv_writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new())
}

/// The text a [`csv_writer`] wrote.
pub fn csv_text(w: csv::Writer<Vec<u8>>) -> String {
    // In memory: flushing cannot fail, and fields are `&str`, so the bytes are UTF-8.
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Why a single named output (`convert -o`, `decompress -o`, a `--json` report) was not written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{}: is an input of this run ({}); refusing to overwrite it", .output.display(), .input.display())]
    WouldReplaceInput { output: PathBuf, input: PathBuf },
    #[error("{}: the folder {} does not exist", .output.display(), .folder.display())]
    MissingFolder { output: PathBuf, folder: PathBuf },
    #[error("{}: is a folder, not a file", .0.display())]
    IsFolder(PathBuf),
    #[error("{}: cannot write: {source}", .output.display())]
    Io {
        output: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The path meaning "standard output" for a single named output.
pub const STDOUT_PATH: &str = "-";

/// Writes one named output the way a user expects of `-o PATH`:
/// - `-` writes to standard output;
/// - a path that is (or leads through a symlink to) a device, FIFO or terminal (`/dev/stdout`,
///   `/dev/null`) is written directly, never replaced by a regular file;
/// - a symlink to a regular file is written through: the file it points to is replaced
///   atomically, the link stays;
/// - any other path is written atomically ([`write_atomic`]), but its folder must exist (a
///   mistyped folder is an error, not a new tree);
/// - a path that is the same file (device + inode, whatever the name) as any of `inputs` is
///   refused before anything is written.
pub fn write_output(path: &Path, bytes: &[u8], inputs: &[&Path]) -> Result<(), OutputError> {
    let io = |source| OutputError::Io {
        output: path.to_path_buf(),
        source,
    };
    if path.as_os_str() == STDOUT_PATH {
        let mut out = std::io::stdout().lock();
        return out.write_all(bytes).and_then(|()| out.flush()).map_err(io);
    }
    check_not_an_input(path, inputs)?;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(OutputError::IsFolder(path.to_path_buf())),
        Ok(meta) if !meta.is_file() => {
            // A device, FIFO or terminal: write to it as it is (no temporary file beside it).
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(io)?;
            f.write_all(bytes).and_then(|()| f.flush()).map_err(io)
        }
        Ok(_) => {
            // A regular file, perhaps behind symlinks: replace the file the links lead to.
            let target = std::fs::canonicalize(path).map_err(io)?;
            write_atomic(&target, bytes).map_err(io)
        }
        Err(_) => {
            let folder = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if !folder.is_dir() {
                return Err(OutputError::MissingFolder {
                    output: path.to_path_buf(),
                    folder,
                });
            }
            if std::fs::symlink_metadata(path).is_ok() {
                // A dangling symlink: writing through it would create a file elsewhere.
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "a symlink to nothing; refusing to replace it",
                )));
            }
            write_atomic(path, bytes).map_err(io)
        }
    }
}

/// Refuses an output that is the same file as an input (device + inode, so `./a`, `a` and a
/// hard link or symlink to it are all caught).
pub(crate) fn check_not_an_input(path: &Path, inputs: &[&Path]) -> Result<(), OutputError> {
    let Ok(out) = std::fs::metadata(path) else {
        return Ok(());
    };
    for input in inputs {
        if let Ok(meta) = std::fs::metadata(input)
            && same_file(&out, &meta)
        {
            return Err(OutputError::WouldReplaceInput {
                output: path.to_path_buf(),
                input: input.to_path_buf(),
            });
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino() && a.is_file()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}
