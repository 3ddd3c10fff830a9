//! Files a web page of this binary may list, read, write and delete (the control panel's
//! configs, scenarios and reports): by name, inside one given directory, never outside it.
//!
//! - A name is one path component: letters, digits, `.`, `_`, `-`; not starting with a dot;
//!   ending in one of the directory's extensions. So no `..`, no separators, no absolute path,
//!   no NUL (percent-decoding is the router's job; what it decodes is checked here).
//! - The directory is canonicalised once. A file that exists is resolved again and must still
//!   lie inside it: a symlink pointing out is refused, not followed.
//! - Reads and writes are bounded in size. A write goes to a hidden temporary file in the
//!   directory and is renamed over the name (a symlink of that name is replaced, never
//!   written through).

use std::fmt;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// One directory the panel may use.
#[derive(Clone, Debug)]
pub struct Dir {
    root: PathBuf,
    exts: &'static [&'static str],
    max_bytes: u64,
}

/// A file listed in a directory.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    pub name: String,
    pub bytes: u64,
    /// Seconds since the epoch of the last change.
    pub modified_s: u64,
}

#[derive(Debug, PartialEq, Eq)]
pub enum FileError {
    /// Not a name this directory takes (the reason says why).
    BadName(String),
    NotFound(String),
    /// It resolves outside the directory (a symlink out).
    Outside(String),
    TooLarge {
        name: String,
        limit: u64,
    },
    Io(String),
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::BadName(why) => f.write_str(why),
            FileError::NotFound(n) => write!(f, "{n:?}: no such file"),
            FileError::Outside(n) => write!(f, "{n:?} leads outside the directory: refused"),
            FileError::TooLarge { name, limit } => {
                write!(f, "{name:?} is larger than {limit} bytes")
            }
            FileError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FileError {}

/// The longest name taken.
pub const MAX_NAME: usize = 128;

impl Dir {
    /// `path` must be a directory; names must end in one of `exts` (e.g. `[".yaml", ".yml"]`).
    pub fn open(
        path: &Path,
        exts: &'static [&'static str],
        max_bytes: u64,
    ) -> Result<Dir, FileError> {
        let root = fs::canonicalize(path)
            .map_err(|e| FileError::Io(format!("{}: {e}", path.display())))?;
        if !root.is_dir() {
            return Err(FileError::Io(format!(
                "{}: not a directory",
                path.display()
            )));
        }
        Ok(Dir {
            root,
            exts,
            max_bytes,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The files whose names this directory takes, sorted by name; symlinks out are left out.
    pub fn list(&self) -> Result<Vec<Entry>, FileError> {
        let rd = fs::read_dir(&self.root).map_err(|e| self.io(e))?;
        let mut out = Vec::new();
        for e in rd.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if self.check_name(&name).is_err() {
                continue;
            }
            let Ok(path) = self.existing(&name) else {
                continue;
            };
            let Ok(meta) = fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let modified_s = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            out.push(Entry {
                name,
                bytes: meta.len(),
                modified_s,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The resolved path of an existing `name`, inside the directory (for a reader that
    /// opens the file itself, as a run opens its scenario).
    pub fn path(&self, name: &str) -> Result<PathBuf, FileError> {
        self.check_name(name)?;
        self.existing(name)
    }

    /// The text of `name`, at most `max_bytes`.
    pub fn read(&self, name: &str) -> Result<String, FileError> {
        self.check_name(name)?;
        let path = self.existing(name)?;
        let f = fs::File::open(&path).map_err(|e| self.io(e))?;
        let mut text = String::new();
        f.take(self.max_bytes + 1)
            .read_to_string(&mut text)
            .map_err(|e| self.io(e))?;
        if text.len() as u64 > self.max_bytes {
            return Err(self.too_large(name));
        }
        Ok(text)
    }

    /// Writes `text` as `name`, replacing what was there.
    pub fn write(&self, name: &str, text: &str) -> Result<(), FileError> {
        self.check_name(name)?;
        if text.len() as u64 > self.max_bytes {
            return Err(self.too_large(name));
        }
        let tmp = self
            .root
            .join(format!(".{name}.{}.tmp", std::process::id()));
        // A stale temporary (or a link planted under its name) goes first; O_EXCL then makes
        // sure the file written is a new one, never something a link points to.
        let _ = fs::remove_file(&tmp);
        let written = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.sync_all()));
        if let Err(e) = written.and_then(|()| fs::rename(&tmp, self.root.join(name))) {
            let _ = fs::remove_file(&tmp);
            return Err(self.io(e));
        }
        Ok(())
    }

    /// Removes `name` (a symlink of that name is removed, not what it points to).
    pub fn delete(&self, name: &str) -> Result<(), FileError> {
        self.check_name(name)?;
        let path = self.root.join(name);
        match fs::symlink_metadata(&path) {
            Err(_) => Err(FileError::NotFound(name.into())),
            Ok(m) if m.is_dir() => Err(FileError::BadName(format!("{name:?} is a directory"))),
            Ok(_) => fs::remove_file(&path).map_err(|e| self.io(e)),
        }
    }

    /// Whether `name` is one this directory takes, and if not why.
    pub fn check_name(&self, name: &str) -> Result<(), FileError> {
        let bad = |why: &str| Err(FileError::BadName(format!("{name:?}: {why}")));
        if name.is_empty() || name.len() > MAX_NAME {
            return bad(&format!("a file name is 1 to {MAX_NAME} characters"));
        }
        if name.starts_with('.') {
            return bad("a file name may not start with a dot");
        }
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            return bad("a file name is letters, digits, '.', '_' and '-' only (no directories)");
        }
        if !self
            .exts
            .iter()
            .any(|x| name.len() > x.len() && name.ends_with(x))
        {
            return bad(&format!("the name must end in {}", self.exts.join(" or ")));
        }
        Ok(())
    }

    /// The path of an existing `name`, resolved, and inside the directory.
    fn existing(&self, name: &str) -> Result<PathBuf, FileError> {
        let path = self.root.join(name);
        if fs::symlink_metadata(&path).is_err() {
            return Err(FileError::NotFound(name.into()));
        }
        match fs::canonicalize(&path) {
            Ok(real) if real.starts_with(&self.root) => Ok(real),
            Ok(_) => Err(FileError::Outside(name.into())),
            // A dangling symlink.
            Err(_) => Err(FileError::NotFound(name.into())),
        }
    }

    fn too_large(&self, name: &str) -> FileError {
        FileError::TooLarge {
            name: name.into(),
            limit: self.max_bytes,
        }
    }

    fn io(&self, e: std::io::Error) -> FileError {
        FileError::Io(format!("{}: {e}", self.root.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &[&str] = &[".yaml", ".yml"];

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ib-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn names_are_one_plain_component_with_the_extension() {
        let d = scratch("names");
        let dir = Dir::open(&d, YAML, 1 << 20).unwrap();
        for ok in ["a.yaml", "steady-smoke.yml", "run_2.v1.yaml"] {
            assert!(dir.check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".yaml",
            ".hidden.yaml",
            "../x.yaml",
            "..%2fx.yaml",
            "a/b.yaml",
            "a\\b.yaml",
            "/etc/passwd",
            "x.json",
            "x.yaml\0",
            "nul\0.yaml",
            "é.yaml",
        ] {
            assert!(
                matches!(dir.check_name(bad), Err(FileError::BadName(_))),
                "{bad:?}"
            );
        }
        assert!(
            dir.check_name(&format!("{}.yaml", "a".repeat(200)))
                .is_err()
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn write_read_list_delete() {
        let d = scratch("rw");
        let dir = Dir::open(&d, YAML, 64).unwrap();
        dir.write("one.yaml", "a: 1\n").unwrap();
        dir.write("one.yaml", "a: 2\n").unwrap();
        assert_eq!(dir.read("one.yaml").unwrap(), "a: 2\n");
        fs::write(d.join("notes.txt"), "x").unwrap();
        let names: Vec<String> = dir.list().unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(
            names,
            ["one.yaml"],
            "other files and temporaries are not listed"
        );
        assert!(matches!(
            dir.write("big.yaml", &"x".repeat(65)),
            Err(FileError::TooLarge { .. })
        ));
        fs::write(d.join("huge.yaml"), "y".repeat(100)).unwrap();
        assert!(matches!(
            dir.read("huge.yaml"),
            Err(FileError::TooLarge { .. })
        ));
        dir.delete("one.yaml").unwrap();
        assert_eq!(
            dir.read("one.yaml"),
            Err(FileError::NotFound("one.yaml".into()))
        );
        assert_eq!(
            dir.delete("one.yaml"),
            Err(FileError::NotFound("one.yaml".into()))
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn symlinks_out_of_the_directory_are_refused_and_never_written_through() {
        let d = scratch("links");
        let outside = scratch("links-outside");
        fs::write(outside.join("secret.yaml"), "token: hunter2\n").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.yaml"), d.join("leak.yaml")).unwrap();
        fs::write(d.join("real.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink(d.join("real.yaml"), d.join("alias.yaml")).unwrap();
        let dir = Dir::open(&d, YAML, 1 << 20).unwrap();
        assert_eq!(
            dir.read("leak.yaml"),
            Err(FileError::Outside("leak.yaml".into()))
        );
        let names: Vec<String> = dir.list().unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(
            names,
            ["alias.yaml", "real.yaml"],
            "a link out is not listed"
        );
        assert_eq!(
            dir.read("alias.yaml").unwrap(),
            "a: 1\n",
            "a link inside is fine"
        );
        // Writing the name replaces the link; the file outside is untouched, also when a link
        // was planted under the temporary's name.
        let planted = d.join(format!(".leak.yaml.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(outside.join("secret.yaml"), &planted).unwrap();
        dir.write("leak.yaml", "mine: 1\n").unwrap();
        assert_eq!(
            fs::read_to_string(outside.join("secret.yaml")).unwrap(),
            "token: hunter2\n"
        );
        assert_eq!(dir.read("leak.yaml").unwrap(), "mine: 1\n");
        // Deleting a link removes the link only.
        std::os::unix::fs::symlink(outside.join("secret.yaml"), d.join("gone.yaml")).unwrap();
        dir.delete("gone.yaml").unwrap();
        assert!(outside.join("secret.yaml").exists());
        let _ = fs::remove_dir_all(&d);
        let _ = fs::remove_dir_all(&outside);
    }

    #[test]
    fn a_directory_that_is_not_one_is_an_error() {
        let d = scratch("notdir");
        fs::write(d.join("f"), "x").unwrap();
        assert!(Dir::open(&d.join("f"), YAML, 1).is_err());
        assert!(Dir::open(&d.join("missing"), YAML, 1).is_err());
        let _ = fs::remove_dir_all(&d);
    }
}
