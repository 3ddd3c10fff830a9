//! Tokens: the secret store (`secret set|list|rm`) and looking a token up from the source a
//! config names (`token_env`, `token_file`, `token_secret`). A token lives in a `Token`, whose
//! `Debug` is redacted and which has no `Display`, so it cannot reach output by accident.
//!
//! The store is a directory (mode 0700) with one file per secret (mode 0600). Its place is
//! `--dir`, else `$INGESTBENCH_SECRETS_DIR`, else `$XDG_CONFIG_HOME/ingestbench/secrets`, else
//! `~/.config/ingestbench/secrets`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::config::schema::Auth;

/// A token value. Never printed: `Debug` shows `Token(<redacted>)`.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    pub fn new(value: String) -> Self {
        Token(value)
    }

    /// The value, for building an auth header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// The shortest token a web page of this binary takes (the status page, `/metrics`, the
/// panel): a token anyone can guess in a few tries guards nothing.
pub const MIN_WEB_TOKEN_BYTES: usize = 16;

/// The longest token a web page takes.
pub const MAX_WEB_TOKEN_BYTES: usize = 1024;

/// What a web page's token must be, for messages.
pub const WEB_TOKEN_RULE: &str = "16 to 1024 visible ASCII characters without spaces";

/// `MIN_WEB_TOKEN_BYTES` to `MAX_WEB_TOKEN_BYTES` visible ASCII characters: what an
/// `Authorization` header can carry, and long enough not to be guessed.
pub fn web_token_usable(t: &str) -> bool {
    (MIN_WEB_TOKEN_BYTES..=MAX_WEB_TOKEN_BYTES).contains(&t.len())
        && t.bytes().all(|b| b.is_ascii_graphic())
}

pub const DIR_ENV: &str = "INGESTBENCH_SECRETS_DIR";

/// The store's directory when no `--dir` is given.
pub fn default_dir() -> Result<PathBuf, String> {
    if let Some(d) = std::env::var_os(DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(x).join("ingestbench").join("secrets"));
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(h) => Ok(PathBuf::from(h)
            .join(".config")
            .join("ingestbench")
            .join("secrets")),
        None => Err(format!(
            "cannot place the secret store: set HOME, XDG_CONFIG_HOME or {DIR_ENV}, or pass --dir"
        )),
    }
}

/// Secret names: 1–64 of `A-Z a-z 0-9 _ . -`, not starting with `.` or `-`.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && !name.starts_with(['.', '-']);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a valid secret name (1-64 of A-Z a-z 0-9 _ . -, not starting with . or -)"
        ))
    }
}

pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn new(dir: PathBuf) -> Self {
        Store { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stores `token` under `name`, replacing any earlier value. The directory is created
    /// 0700 and the file written 0600 through a temporary file and a rename, so a reader never
    /// sees half a token.
    pub fn set(&self, name: &str, token: &Token) -> Result<(), String> {
        check_name(name)?;
        if token.expose().is_empty() {
            return Err("the token is empty; nothing stored".into());
        }
        self.ensure_dir()?;
        let path = self.dir.join(name);
        let o = crate::fsio::WriteOptions {
            mode: Some(0o600),
            create_dirs: false,
        };
        // The token never reaches a message: only the name and the directory do.
        crate::fsio::write_atomic(&path, token.expose().as_bytes(), o).map_err(|e| {
            let why = match e {
                crate::fsio::FileError::Io { err, .. } => err.to_string(),
                other => other.to_string(),
            };
            format!(
                "cannot write secret {name:?} in {}: {why}",
                self.dir.display()
            )
        })
    }

    pub fn get(&self, name: &str) -> Result<Token, String> {
        check_name(name)?;
        let path = self.dir.join(name);
        if !path.exists() {
            return Err(format!(
                "no secret named {name:?} in {} (store one with `ingestbench secret set {name}`)",
                self.dir.display()
            ));
        }
        read_private_file(&path).map(|t| Token(t.trim_end_matches(['\r', '\n']).to_string()))
    }

    /// Names only, sorted.
    pub fn list(&self) -> Result<Vec<String>, String> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(format!("cannot list {}: {e}", self.dir.display())),
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| check_name(n).is_ok())
            .collect();
        names.sort();
        Ok(names)
    }

    /// Removes `name`; `Ok(false)` when there was no such secret.
    pub fn remove(&self, name: &str) -> Result<bool, String> {
        check_name(name)?;
        match fs::remove_file(self.dir.join(name)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("cannot remove secret {name:?}: {e}")),
        }
    }

    pub fn contains(&self, name: &str) -> bool {
        check_name(name).is_ok() && self.dir.join(name).is_file()
    }

    fn ensure_dir(&self) -> Result<(), String> {
        if !self.dir.exists() {
            fs::create_dir_all(&self.dir)
                .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        }
        // Tighten it every time: a store left group-readable is fixed, not trusted.
        fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot set mode 0700 on {}: {e}", self.dir.display()))
    }
}

/// The most a token file (or a stored secret) may be: a token is a line, a PEM-sized one
/// at most.
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 << 10;

/// Reads a token file, refusing it when group or others may read or write it (mode 0600 or
/// stricter is required): a token readable by others is a leak the run should not continue.
pub fn read_private_file(path: &Path) -> Result<String, String> {
    check_private_mode(path)?;
    crate::fsio::read_text(path, MAX_TOKEN_FILE_BYTES).map_err(|e| e.to_string())
}

/// `Err` when `path` is missing or its mode lets group or others in.
pub fn check_private_mode(path: &Path) -> Result<(), String> {
    let meta = fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a file", path.display()));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{} has mode {mode:04o}; a token file must be 0600 (chmod 600 {})",
            path.display(),
            path.display()
        ));
    }
    Ok(())
}

/// The token a config's `auth` names, looked up now (at run time). Errors name the source,
/// never a value.
pub fn resolve(auth: &Auth, store: &Store) -> Result<Option<Token>, String> {
    if let Some(var) = &auth.token_env {
        return match std::env::var(var) {
            Ok(v) if !v.is_empty() => Ok(Some(Token(v))),
            Ok(_) => Err(format!(
                "environment variable {var} (target.auth.token_env) is empty"
            )),
            Err(_) => Err(format!(
                "environment variable {var} (target.auth.token_env) is not set"
            )),
        };
    }
    if let Some(file) = &auth.token_file {
        let text = read_private_file(Path::new(file))
            .map_err(|e| format!("target.auth.token_file: {e}"))?;
        let t = text.trim_end_matches(['\r', '\n']);
        if t.is_empty() {
            return Err(format!("target.auth.token_file: {file} is empty"));
        }
        return Ok(Some(Token(t.to_string())));
    }
    if let Some(name) = &auth.token_secret {
        return store
            .get(name)
            .map(Some)
            .map_err(|e| format!("target.auth.token_secret: {e}"));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn set_get_list_rm_with_modes() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path().join("s"));
        store.set("hec-prod", &Token::new("abc123".into())).unwrap();
        store.set("okta", &Token::new("zzz".into())).unwrap();
        assert_eq!(mode(store.dir()), 0o700);
        assert_eq!(mode(&store.dir().join("hec-prod")), 0o600);
        assert_eq!(store.get("hec-prod").unwrap().expose(), "abc123");
        assert_eq!(store.list().unwrap(), vec!["hec-prod", "okta"]);
        store.set("okta", &Token::new("new".into())).unwrap();
        assert_eq!(store.get("okta").unwrap().expose(), "new");
        assert!(store.remove("okta").unwrap());
        assert!(!store.remove("okta").unwrap());
        assert_eq!(store.list().unwrap(), vec!["hec-prod"]);
        assert!(store.get("okta").unwrap_err().contains("no secret named"));
    }

    #[test]
    fn loose_directory_is_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        Store::new(dir.clone())
            .set("a", &Token::new("t".into()))
            .unwrap();
        assert_eq!(mode(&dir), 0o700);
    }

    #[test]
    fn names_are_checked() {
        for bad in [
            "",
            "../x",
            "a/b",
            ".hidden",
            "-x",
            &"x".repeat(65),
            "sp ace",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["a", "hec_prod.v2", "A-1"] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn token_debug_is_redacted() {
        let t = Token::new("s3cr3t".into());
        assert_eq!(format!("{t:?}"), "Token(<redacted>)");
        assert!(!format!("{:?}", Some(t)).contains("s3cr3t"));
    }

    #[test]
    fn token_file_mode_is_enforced() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("tok");
        fs::write(&f, "s3cr3t\n").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
        let auth = Auth {
            scheme: None,
            token_env: None,
            token_file: Some(f.display().to_string()),
            token_secret: None,
            username: None,
            header: None,
        };
        let store = Store::new(tmp.path().join("none"));
        let e = resolve(&auth, &store).unwrap_err();
        assert!(e.contains("0644") && e.contains("0600"), "{e}");
        assert!(!e.contains("s3cr3t"));
        fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(resolve(&auth, &store).unwrap().unwrap().expose(), "s3cr3t");
    }
}
