//! Credentials for the search-API stores, from `verify`'s flags: a scheme (`basic`, `bearer`,
//! `apikey`, `splunk`), a user for `basic`, and the secret from one of the sources a run's
//! `target.auth` may name (an environment variable, a private token file, the secret store;
//! `config::secrets`). The secret lives in a `Token` (redacted `Debug`, no `Display`); errors
//! name the flag and the source, never a value.

use std::path::Path;

use base64::Engine;

use crate::config::secrets::{self, Store, Token};
use crate::verify::VerifyError;

/// How the secret is sent in `Authorization`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// `Basic base64(user:secret)`: OpenSearch and Elasticsearch users, Splunk users.
    Basic,
    /// `Bearer TOKEN`: a Splunk authentication token, an OpenSearch JWT.
    Bearer,
    /// `ApiKey KEY`: an Elasticsearch API key (its `encoded` form).
    ApiKey,
    /// `Splunk SESSIONKEY`: a Splunk session key.
    Splunk,
}

impl Scheme {
    pub fn parse(s: &str) -> Result<Scheme, VerifyError> {
        match s.to_ascii_lowercase().as_str() {
            "basic" => Ok(Scheme::Basic),
            "bearer" => Ok(Scheme::Bearer),
            "apikey" | "api-key" => Ok(Scheme::ApiKey),
            "splunk" => Ok(Scheme::Splunk),
            _ => Err(VerifyError::Input(format!(
                "--auth-scheme {s:?}: one of basic, bearer, apikey, splunk"
            ))),
        }
    }
}

/// The auth flags as given.
#[derive(Clone, Debug, Default)]
pub struct AuthFlags {
    pub scheme: Option<String>,
    pub user: Option<String>,
    pub token_env: Option<String>,
    pub token_file: Option<String>,
    pub token_secret: Option<String>,
}

/// Resolved credentials: the `Authorization` value is built on demand.
#[derive(Clone, Debug)]
pub struct Credentials {
    pub scheme: Scheme,
    user: Option<String>,
    secret: Token,
}

impl Credentials {
    pub fn new(scheme: Scheme, user: Option<String>, secret: Token) -> Credentials {
        Credentials {
            scheme,
            user,
            secret,
        }
    }

    /// The `Authorization` header value (a secret itself).
    pub fn header_value(&self) -> Token {
        let s = self.secret.expose();
        Token::new(match self.scheme {
            Scheme::Basic => {
                let user = self.user.as_deref().unwrap_or_default();
                let b64 = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{s}"));
                format!("Basic {b64}")
            }
            Scheme::Bearer => format!("Bearer {s}"),
            Scheme::ApiKey => format!("ApiKey {s}"),
            Scheme::Splunk => format!("Splunk {s}"),
        })
    }

    /// Every string that must never reach output: the secret and the encoded header.
    pub fn secrets(&self) -> Vec<String> {
        let h = self.header_value();
        let encoded = h
            .expose()
            .split_once(' ')
            .map(|(_, v)| v.to_string())
            .unwrap_or_default();
        vec![self.secret.expose().to_string(), encoded]
    }
}

/// The credentials the flags name, looked up now; `None` when no flag asks for auth.
pub fn resolve(f: &AuthFlags) -> Result<Option<Credentials>, VerifyError> {
    let sources = [&f.token_env, &f.token_file, &f.token_secret]
        .iter()
        .filter(|s| s.is_some())
        .count();
    if sources > 1 {
        return Err(VerifyError::Input(
            "give one of --token-env, --token-file, --token-secret".into(),
        ));
    }
    let scheme = match (&f.scheme, &f.user) {
        (Some(s), _) => Some(Scheme::parse(s)?),
        (None, Some(_)) => Some(Scheme::Basic),
        (None, None) if sources == 1 => Some(Scheme::Bearer),
        (None, None) => None,
    };
    let Some(scheme) = scheme else {
        return Ok(None);
    };
    match (scheme, &f.user) {
        (Scheme::Basic, None) => {
            return Err(VerifyError::Input(
                "--auth-scheme basic needs --user (the secret is its password)".into(),
            ));
        }
        (Scheme::Basic, Some(u)) if u.is_empty() || u.contains(':') => {
            return Err(VerifyError::Input(
                "--user: a user name, not empty and without `:`".into(),
            ));
        }
        (Scheme::Basic, Some(_)) | (_, None) => {}
        (_, Some(_)) => {
            return Err(VerifyError::Input(
                "--user goes with --auth-scheme basic only".into(),
            ));
        }
    }
    if sources == 0 {
        return Err(VerifyError::Input(
            "auth needs a secret: --token-env VAR, --token-file PATH or --token-secret NAME".into(),
        ));
    }
    let secret = secret(f).map_err(VerifyError::Input)?;
    Ok(Some(Credentials {
        scheme,
        user: f.user.clone(),
        secret,
    }))
}

fn secret(f: &AuthFlags) -> Result<Token, String> {
    if let Some(var) = &f.token_env {
        return match std::env::var(var) {
            Ok(v) if !v.is_empty() => Ok(Token::new(v)),
            Ok(_) => Err(format!("--token-env: environment variable {var} is empty")),
            Err(_) => Err(format!(
                "--token-env: environment variable {var} is not set"
            )),
        };
    }
    if let Some(file) = &f.token_file {
        let text = secrets::read_private_file(Path::new(file))
            .map_err(|e| format!("--token-file: {e}"))?;
        let t = text.trim_end_matches(['\r', '\n']);
        if t.is_empty() {
            return Err(format!("--token-file: {file} is empty"));
        }
        return Ok(Token::new(t.to_string()));
    }
    if let Some(name) = &f.token_secret {
        let dir = secrets::default_dir().map_err(|e| format!("--token-secret: {e}"))?;
        return Store::new(dir)
            .get(name)
            .map_err(|e| format!("--token-secret: {e}"));
    }
    Err("no secret source given".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::os::unix::fs::PermissionsExt;

    fn flags(scheme: Option<&str>, user: Option<&str>, file: Option<&str>) -> AuthFlags {
        AuthFlags {
            scheme: scheme.map(str::to_string),
            user: user.map(str::to_string),
            token_file: file.map(str::to_string),
            ..AuthFlags::default()
        }
    }

    #[test]
    fn schemes_and_headers() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("tok");
        std::fs::write(&f, "s3cr3t\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let file = f.to_str();
        assert!(resolve(&flags(None, None, None)).unwrap().is_none());
        let c = resolve(&flags(None, Some("svc"), file)).unwrap().unwrap();
        assert_eq!(c.scheme, Scheme::Basic);
        assert_eq!(c.header_value().expose(), "Basic c3ZjOnMzY3IzdA==");
        assert_eq!(c.secrets(), vec!["s3cr3t", "c3ZjOnMzY3IzdA=="]);
        let c = resolve(&flags(None, None, file)).unwrap().unwrap();
        assert_eq!(c.header_value().expose(), "Bearer s3cr3t");
        for (s, want) in [("apikey", "ApiKey s3cr3t"), ("SPLUNK", "Splunk s3cr3t")] {
            let c = resolve(&flags(Some(s), None, file)).unwrap().unwrap();
            assert_eq!(c.header_value().expose(), want);
        }
        assert!(!format!("{c:?}").contains("s3cr3t"));
        // A token file others may read is refused, naming the flag and not the value.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = resolve(&flags(None, None, file)).unwrap_err().to_string();
        assert!(e.starts_with("--token-file:") && e.contains("0600"), "{e}");
        assert!(!e.contains("s3cr3t"));
    }

    #[test]
    fn contradictions_are_refused() {
        let file = Some("/nonexistent/ib-token");
        for f in [
            flags(Some("basic"), None, file),
            flags(Some("bearer"), Some("u"), file),
            flags(Some("digest"), None, file),
            flags(None, Some("u"), None),
            flags(None, Some("a:b"), file),
            AuthFlags {
                token_env: Some("A".into()),
                token_file: Some("/x".into()),
                ..AuthFlags::default()
            },
        ] {
            assert!(matches!(resolve(&f), Err(VerifyError::Input(_))), "{f:?}");
        }
        let unset = AuthFlags {
            token_env: Some("IB_AUTH_TEST_SURELY_UNSET_VAR".into()),
            ..AuthFlags::default()
        };
        let e = resolve(&unset).unwrap_err().to_string();
        assert!(
            e.contains("IB_AUTH_TEST_SURELY_UNSET_VAR is not set"),
            "{e}"
        );
    }
}
