//! The files a user names, read and written one way each. Reading (`read_bytes`,
//! `read_text`, `open_regular`): a regular file on a real filesystem only — a FIFO, a device
//! such as `/dev/zero`, a socket, a directory or anything under a kernel pseudo-filesystem
//! (`/proc`, `/sys`, …: sizes that read as 0, reads that block forever) is refused before a
//! byte is read — and never more than a cap, each refusal naming the path and the cap.
//! Writing (`write_atomic`, `AtomicFile`): into a temporary file beside the destination,
//! flushed to disk (fsync), then renamed over it, so a write that fails (disk full, a file
//! size limit, an unwritable directory) leaves what was there untouched and says so. A
//! destination that is a device or a FIFO (`/dev/stdout`, `/dev/null`, a pipe) is written
//! in place, never replaced. Every file the program reads or writes for a user goes
//! through here.

use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config::units::Size;

/// Why a file could not be read or written; every message names the path.
#[derive(Debug)]
pub enum FileError {
    NotFound(PathBuf),
    IsDir(PathBuf),
    /// A FIFO, a device, a socket: `kind` says which.
    NotRegular {
        path: PathBuf,
        kind: &'static str,
    },
    /// A file of a kernel pseudo-filesystem (`fs` names it).
    Pseudo {
        path: PathBuf,
        fs: &'static str,
    },
    /// Over the cap: `size` is the file's size when it said so, `None` when more was read.
    TooLarge {
        path: PathBuf,
        size: Option<u64>,
        max: u64,
    },
    /// Not UTF-8 text, or text with NUL bytes.
    NotText {
        path: PathBuf,
        why: String,
    },
    /// The system said no: `op` is `read` or `write`.
    Io {
        path: PathBuf,
        op: &'static str,
        err: io::Error,
    },
}

impl FileError {
    pub fn path(&self) -> &Path {
        match self {
            FileError::NotFound(p) | FileError::IsDir(p) => p,
            FileError::NotRegular { path, .. }
            | FileError::Pseudo { path, .. }
            | FileError::TooLarge { path, .. }
            | FileError::NotText { path, .. }
            | FileError::Io { path, .. } => path,
        }
    }

    fn io(path: &Path, op: &'static str, err: io::Error) -> FileError {
        if op == "read" && err.kind() == io::ErrorKind::NotFound {
            return FileError::NotFound(path.to_path_buf());
        }
        // tempfile adds the temporary file's name to its errors: the path named is ours.
        let err = err.raw_os_error().map_or(err, io::Error::from_raw_os_error);
        FileError::Io {
            path: path.to_path_buf(),
            op,
            err,
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.path().display();
        match self {
            FileError::NotFound(_) => write!(f, "{p}: not found"),
            FileError::IsDir(_) => write!(f, "{p}: is a directory, not a file"),
            FileError::NotRegular { kind, .. } => write!(
                f,
                "{p}: is a {kind}, not a regular file (only regular files are read)"
            ),
            FileError::Pseudo { fs, .. } => write!(
                f,
                "{p}: is on {fs}, a kernel pseudo-filesystem (only files on a real filesystem are read)"
            ),
            FileError::TooLarge { size, max, .. } => {
                match size {
                    Some(n) => write!(f, "{p}: file is {n} bytes")?,
                    None => write!(f, "{p}: more than {max} bytes read")?,
                }
                write!(f, "; the limit is {max} bytes ({})", Size(*max))
            }
            FileError::NotText { why, .. } => write!(f, "{p}: {why}"),
            FileError::Io { op, err, .. } => write!(f, "{p}: cannot {op}: {}", reason(err)),
        }
    }
}

impl std::error::Error for FileError {}

fn reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// What a non-regular file is, in words.
fn kind(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_fifo() {
        "FIFO (named pipe)"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Kernel pseudo-filesystems by `statfs` magic: their files claim sizes they do not have,
/// and some block a reader forever (`/proc/kmsg`, tracing pipes).
const PSEUDO: &[(i64, &str)] = &[
    (0x9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0x0027_e0eb, "cgroupfs"),
    (0x6367_7270, "cgroup2fs"),
    (0xcafe_4a11, "bpffs"),
    (0x6e73_6673, "nsfs"),
    (0x5049_5045, "pipefs"),
    (0x0000_1cd1, "devpts"),
    (0xde5e_81e4, "efivarfs"),
    (0x6265_6570, "configfs"),
];

fn pseudo(st: &libc::statfs) -> Option<&'static str> {
    #[allow(clippy::unnecessary_cast, reason = "f_type's width differs by target")]
    let ty = st.f_type as i64;
    PSEUDO.iter().find(|(m, _)| *m == ty).map(|(_, n)| *n)
}

/// The pseudo-filesystem `path` is on, asked before anything opens it.
fn pseudo_at(path: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path and statfs writes a statfs into the buffer,
    // which is read only when the call succeeded.
    let rc = unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) };
    // SAFETY: statfs returned 0, so it filled the buffer.
    (rc == 0).then(|| pseudo(unsafe { st.assume_init_ref() }))?
}

/// The pseudo-filesystem an open file is on (the path may have been swapped meanwhile).
fn pseudo_of(file: &File) -> Option<&'static str> {
    use std::os::fd::AsRawFd;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: the fd is open for the call; the buffer is read only when it succeeded.
    let rc = unsafe { libc::fstatfs(file.as_raw_fd(), st.as_mut_ptr()) };
    // SAFETY: fstatfs returned 0, so it filled the buffer.
    (rc == 0).then(|| pseudo(unsafe { st.assume_init_ref() }))?
}

/// `path` opened for reading when it is a regular file on a real filesystem, with its
/// metadata. Nothing that could block or have side effects on open (a FIFO, a device) is
/// opened: its kind is checked from its path first, and again on the open file.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), FileError> {
    let meta = std::fs::metadata(path).map_err(|e| FileError::io(path, "read", e))?;
    check_regular(path, &meta)?;
    let refuse = |fs| FileError::Pseudo {
        path: path.to_path_buf(),
        fs,
    };
    if let Some(fs) = pseudo_at(path) {
        return Err(refuse(fs));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| FileError::io(path, "read", e))?;
    let meta = file
        .metadata()
        .map_err(|e| FileError::io(path, "read", e))?;
    check_regular(path, &meta)?;
    if let Some(fs) = pseudo_of(&file) {
        return Err(refuse(fs));
    }
    Ok((file, meta))
}

fn check_regular(path: &Path, meta: &Metadata) -> Result<(), FileError> {
    if meta.is_dir() {
        return Err(FileError::IsDir(path.to_path_buf()));
    }
    if !meta.is_file() {
        return Err(FileError::NotRegular {
            path: path.to_path_buf(),
            kind: kind(meta),
        });
    }
    Ok(())
}

/// The most a fixed request body file (`target.http.body_file`, `http -D`) may be.
pub const MAX_BODY_FILE_BYTES: u64 = 256 << 20;

/// What `read_bytes(path, max)` would refuse without reading it (`validate`): a file that is
/// not a regular one on a real filesystem, or over `max` bytes now.
pub fn check_size(path: &Path, max: u64) -> Result<(), FileError> {
    let (_, meta) = open_regular(path)?;
    if meta.len() > max {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            size: Some(meta.len()),
            max,
        });
    }
    Ok(())
}

/// The whole of `path`, a regular file of at most `max` bytes. The read stops after
/// `max` + 1 bytes whatever the file's size said (a file growing meanwhile).
pub fn read_bytes(path: &Path, max: u64) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path)?;
    let too_large = |size| FileError::TooLarge {
        path: path.to_path_buf(),
        size,
        max,
    };
    if meta.len() > max {
        return Err(too_large(Some(meta.len())));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io(path, "read", e))?;
    if bytes.len() as u64 > max {
        return Err(too_large(None));
    }
    Ok(bytes)
}

/// `read_bytes` as UTF-8 text without NUL bytes (configs, packs, reports, PEM files).
pub fn read_text(path: &Path, max: u64) -> Result<String, FileError> {
    let bytes = read_bytes(path, max)?;
    let not_text = |why: String| FileError::NotText {
        path: path.to_path_buf(),
        why,
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        not_text(format!(
            "not UTF-8 text (invalid byte at offset {}); is this a binary file?",
            e.utf8_error().valid_up_to()
        ))
    })?;
    if text.contains('\0') {
        return Err(not_text(
            "contains NUL bytes; is this a binary file?".into(),
        ));
    }
    Ok(text)
}

/// How `write_atomic` makes a file.
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    /// The new file's mode (the umask applies); `None`: an existing file's, else 0o666.
    pub mode: Option<u32>,
    /// Create the destination's missing directories.
    pub create_dirs: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            mode: None,
            create_dirs: true,
        }
    }
}

/// Where bytes for `path` go.
enum Dest {
    /// A regular file (or none yet): replaced whole by a rename.
    Replace(PathBuf),
    /// A device, a FIFO or a descriptor's alias (`/dev/stdout`): written in place.
    Stream(PathBuf),
}

/// Whether `path` names a descriptor or device by a kernel alias (`/dev/stdout`,
/// `/proc/self/fd/1`): written in place even when what it leads to is a regular file, so
/// the file behind a redirection is appended to by the descriptor, not replaced under it.
fn alias(path: &Path) -> bool {
    path.starts_with("/dev") || path.starts_with("/proc")
}

fn destination(path: &Path) -> Result<Dest, FileError> {
    let werr = |e| FileError::io(path, "write", e);
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Dest::Replace(path.to_path_buf()));
        }
        Err(e) => return Err(werr(e)),
    };
    if link.is_file() {
        return Ok(Dest::Replace(path.to_path_buf()));
    }
    let meta = if link.file_type().is_symlink() {
        match std::fs::metadata(path) {
            Ok(m) => m,
            // A dangling link: replaced by the file.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Dest::Replace(path.to_path_buf()));
            }
            Err(e) => return Err(werr(e)),
        }
    } else {
        link
    };
    if meta.is_dir() {
        return Err(FileError::IsDir(path.to_path_buf()));
    }
    if meta.is_file() && !alias(path) {
        // Write where the link leads, and keep the link.
        return std::fs::canonicalize(path).map(Dest::Replace).map_err(werr);
    }
    Ok(Dest::Stream(path.to_path_buf()))
}

/// Writes `bytes` as the whole of `path`: a temporary file in the same directory, fsync'd,
/// renamed over `path`. On any failure the file that was at `path` is as it was.
pub fn write_atomic(path: &Path, bytes: &[u8], o: WriteOptions) -> Result<(), FileError> {
    let mut f = AtomicFile::create(path, o)?;
    f.write_all(bytes)
        .map_err(|e| FileError::io(path, "write", e))?;
    f.commit()
}

/// A file being written that appears at its path whole, or not at all: `commit` renames
/// it into place; dropped uncommitted, it is removed and the old file stays.
pub struct AtomicFile {
    path: PathBuf,
    out: Out,
}

enum Out {
    Temp {
        tmp: tempfile::NamedTempFile,
        target: PathBuf,
    },
    Stream(File),
}

impl AtomicFile {
    /// Starts writing `path` (the destination's directory is checked writable now, by
    /// creating the temporary file in it).
    pub fn create(path: &Path, o: WriteOptions) -> Result<AtomicFile, FileError> {
        let werr = |e| FileError::io(path, "write", e);
        let out = match destination(path)? {
            Dest::Stream(p) => Out::Stream(
                OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NOCTTY)
                    .open(&p)
                    .map_err(werr)?,
            ),
            Dest::Replace(target) => {
                let dir = match target.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                if o.create_dirs {
                    std::fs::create_dir_all(&dir).map_err(werr)?;
                }
                let mode = o.mode.or_else(|| {
                    std::fs::metadata(&target)
                        .ok()
                        .filter(Metadata::is_file)
                        .map(|m| m.permissions().mode() & 0o7777)
                });
                let name = target
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let tmp = tempfile::Builder::new()
                    .prefix(&format!(".{name}."))
                    .suffix(".tmp")
                    .permissions(std::fs::Permissions::from_mode(mode.unwrap_or(0o666)))
                    .tempfile_in(&dir)
                    .map_err(werr)?;
                if let Some(m) = mode {
                    // The umask narrowed the mode asked: an existing file's mode is kept.
                    let _ = tmp
                        .as_file()
                        .set_permissions(std::fs::Permissions::from_mode(m));
                }
                Out::Temp { tmp, target }
            }
        };
        Ok(AtomicFile {
            path: path.to_path_buf(),
            out,
        })
    }

    /// The path this file will have.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes to disk and renames into place (a stream is flushed only).
    pub fn commit(self) -> Result<(), FileError> {
        let path = self.path;
        let werr = |e| FileError::io(&path, "write", e);
        match self.out {
            Out::Stream(mut f) => f.flush().map_err(werr),
            Out::Temp { tmp, target } => {
                tmp.as_file().sync_all().map_err(werr)?;
                tmp.persist(&target).map_err(|e| werr(e.error))?;
                if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
                    // The rename itself on disk; a filesystem that cannot sync a directory
                    // has the file whole already.
                    let _ = File::open(dir).and_then(|d| d.sync_all());
                }
                Ok(())
            }
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.out {
            Out::Temp { tmp, .. } => tmp.write(buf),
            Out::Stream(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            Out::Temp { tmp, .. } => tmp.flush(),
            Out::Stream(f) => f.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_regular_files_up_to_the_cap_and_names_path_and_cap() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read_bytes(&p, 10).unwrap(), b"0123456789");
        let e = read_bytes(&p, 9).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: file is 10 bytes; the limit is 9 bytes (9B)",
                p.display()
            )
        );
        let e = read_text(&d.path().join("none"), 9).unwrap_err();
        assert!(matches!(e, FileError::NotFound(_)), "{e}");
        assert!(e.to_string().ends_with("none: not found"), "{e}");
        let e = read_text(d.path(), 9).unwrap_err().to_string();
        assert!(e.ends_with("is a directory, not a file"), "{e}");
    }

    #[test]
    fn devices_fifos_and_pseudo_files_are_refused_unread() {
        for (p, want) in [
            (
                "/dev/zero",
                "/dev/zero: is a character device, not a regular file",
            ),
            (
                "/dev/null",
                "/dev/null: is a character device, not a regular file",
            ),
            ("/proc/self/status", "/proc/self/status: is on procfs"),
            (
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "/sys/kernel/mm/transparent_hugepage/enabled: is on sysfs",
            ),
        ] {
            let e = read_bytes(Path::new(p), 1 << 20).unwrap_err().to_string();
            assert!(e.starts_with(want), "{p}: {e}");
        }
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: opening it for reading would block; it is refused first.
        let e = read_bytes(&fifo, 10).unwrap_err().to_string();
        assert!(e.contains("is a FIFO (named pipe)"), "{e}");
        let link = d.path().join("zero.log");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = open_regular(&link).unwrap_err().to_string();
        assert!(e.contains("zero.log: is a character device"), "{e}");
    }

    #[test]
    fn binary_data_is_not_text() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("b");
        std::fs::write(&p, b"ab\xffcd").unwrap();
        assert!(
            read_text(&p, 100)
                .unwrap_err()
                .to_string()
                .contains("offset 2")
        );
        std::fs::write(&p, b"ab\0cd").unwrap();
        assert!(read_text(&p, 100).unwrap_err().to_string().contains("NUL"));
    }

    #[test]
    fn atomic_write_replaces_whole_and_keeps_the_old_file_on_failure() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/report.json");
        write_atomic(&p, b"first", WriteOptions::default()).unwrap();
        write_atomic(&p, b"second", WriteOptions::default()).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        // A file where the directory should be: nothing can be written under it.
        let f = d.path().join("file");
        std::fs::write(&f, "keep").unwrap();
        let e = write_atomic(&f.join("r.json"), b"x", WriteOptions::default()).unwrap_err();
        assert!(e.to_string().contains("file/r.json: cannot write"), "{e}");
        // Dropped before commit: the old file stays, no temporary file is left.
        let mut w = AtomicFile::create(&p, WriteOptions::default()).unwrap();
        w.write_all(b"half").unwrap();
        drop(w);
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["report.json"]);
        let e = write_atomic(d.path(), b"x", WriteOptions::default()).unwrap_err();
        assert!(e.to_string().ends_with("is a directory, not a file"), "{e}");
    }

    #[test]
    fn modes_links_and_devices() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("secret");
        let o = WriteOptions {
            mode: Some(0o600),
            create_dirs: false,
        };
        write_atomic(&p, b"s", o).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p), 0o600);
        // An existing file's mode is kept.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"t", WriteOptions::default()).unwrap();
        assert_eq!(mode(&p), 0o640);
        // A link stays a link; the file it leads to is replaced.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        write_atomic(&link, b"via link", WriteOptions::default()).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"via link");
        // A device is written in place, never replaced.
        write_atomic(Path::new("/dev/null"), b"x", WriteOptions::default()).unwrap();
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        let e = write_atomic(Path::new("/dev/full"), b"x", WriteOptions::default()).unwrap_err();
        assert!(e.to_string().starts_with("/dev/full: cannot write"), "{e}");
    }
}
