//! What is never written out: the values of sensitive request headers and the credentials a
//! URL can carry. Every place a config, a URL or a header line leaves the process — the JSON
//! and text reports, `observability.report`, `--print-config`, the status page, the panel,
//! Prometheus labels, messages — shows them through here, as `<redacted>`. The run itself
//! keeps the real values (it sends them).
//!
//! A header is sensitive by name: `Authorization`, `Proxy-Authorization`, `Cookie`,
//! `Set-Cookie`, and any name holding `auth`, `token`, `secret`, `key`, `pass`, `session`,
//! `cookie`, `credential` or `signature` (`X-API-Key`, `X-Splunk-Token`, …), and the header
//! `target.auth.header` names (where a token flag's value goes). In a URL the password of
//! its userinfo (and the user with it) and the value of every query parameter with such a
//! name (`?token=`, `?api_key=`, `?sig=`) are redacted.

use std::borrow::Cow;

use serde_json::Value;

/// What a redacted value reads as.
pub const REDACTED: &str = "<redacted>";

/// Words that make a header or query parameter name sensitive (matched in lower case).
const SENSITIVE_WORDS: &[&str] = &[
    "auth",
    "token",
    "secret",
    "key",
    "pass",
    "session",
    "cookie",
    "credential",
    "signature",
    "sig",
];

/// Whether a header or query parameter called `name` carries a secret; `also` are more
/// names that do (compared without case).
pub fn sensitive(name: &str, also: &[&str]) -> bool {
    let n = name.trim().to_ascii_lowercase();
    let n = n.as_str();
    also.iter().any(|a| a.trim().eq_ignore_ascii_case(n))
        || SENSITIVE_WORDS.iter().any(|w| {
            // `sig` alone or as a word, not inside another word ("design").
            if *w == "sig" {
                n.split(|c: char| !c.is_ascii_alphanumeric())
                    .any(|part| part == "sig")
            } else {
                n.contains(w)
            }
        })
}

/// A header line (`Name: value`) with its value redacted when the name is sensitive; a line
/// that is not `Name: value` is shown by its first word only.
pub fn header_line<'a>(line: &'a str, also: &[&str]) -> Cow<'a, str> {
    match line.split_once(':') {
        Some((name, _)) if sensitive(name, also) => Cow::Owned(format!("{name}: {REDACTED}")),
        Some(_) => Cow::Borrowed(line),
        None => {
            let first = line.split_whitespace().next().unwrap_or("");
            if first.len() == line.trim().len() {
                Cow::Borrowed(line)
            } else {
                Cow::Owned(format!("{first} {REDACTED}"))
            }
        }
    }
}

/// `u` with the credentials a URL can carry redacted: userinfo, and the values of sensitive
/// query parameters; a store spec's URL too (`sink:http://…`). Anything that is not such a
/// URL comes back as it was.
pub fn url(u: &str) -> Cow<'_, str> {
    if let Some(r) = redacted_url(u) {
        return Cow::Owned(r);
    }
    match u.split_once(':') {
        Some((kind, rest)) if rest.contains("://") && !kind.contains('/') => {
            redacted_url(rest).map_or(Cow::Borrowed(u), |r| Cow::Owned(format!("{kind}:{r}")))
        }
        _ => Cow::Borrowed(u),
    }
}

/// `u` redacted when it is a URL with credentials in it.
fn redacted_url(u: &str) -> Option<String> {
    let Ok(mut parsed) = url::Url::parse(u) else {
        return None;
    };
    let mut changed = false;
    if parsed.password().is_some() || !parsed.username().is_empty() {
        let _ = parsed.set_password(None);
        let _ = parsed.set_username(REDACTED);
        changed = true;
    }
    if parsed.query().is_some() {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if pairs.iter().any(|(k, _)| sensitive(k, &[])) {
            let mut q = parsed.query_pairs_mut();
            q.clear();
            for (k, v) in &pairs {
                let v = if sensitive(k, &[]) {
                    REDACTED
                } else {
                    v.as_str()
                };
                q.append_pair(k, v);
            }
            drop(q);
            changed = true;
        }
    }
    changed.then(|| parsed.to_string())
}

/// A config in its serialized form (the report's `config`, `--print-config`, the panel)
/// with every sensitive header value and URL credential redacted: header lists
/// (`headers`) line by line, URLs (`url`, `urls` and any string that parses as one with
/// credentials) by `url`.
pub fn config(v: &mut Value) {
    let also: Vec<String> = v
        .pointer("/target/auth/header")
        .and_then(Value::as_str)
        .map(|h| vec![h.to_string()])
        .unwrap_or_default();
    let also: Vec<&str> = also.iter().map(String::as_str).collect();
    walk(v, false, &also);
}

fn walk(v: &mut Value, in_headers: bool, also: &[&str]) {
    match v {
        Value::String(s) => {
            let red = if in_headers {
                header_line(s, also)
            } else {
                url(s)
            };
            if let Cow::Owned(r) = red {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| walk(x, in_headers, also)),
        Value::Object(o) => o
            .iter_mut()
            .for_each(|(k, x)| walk(x, k == "headers", also)),
        _ => {}
    }
}

/// `config` on a copy.
pub fn config_value(v: &Value) -> Value {
    let mut v = v.clone();
    config(&mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sensitive_names() {
        for n in [
            "Authorization",
            "proxy-authorization",
            "Cookie",
            "Set-Cookie",
            "X-API-Key",
            "X-Splunk-Token",
            "X-Client-Secret",
            "X-Amz-Signature",
            "sig",
            "Password",
        ] {
            assert!(sensitive(n, &[]), "{n}");
        }
        for n in [
            "Content-Type",
            "Accept",
            "X-Request-Id",
            "User-Agent",
            "design",
        ] {
            assert!(!sensitive(n, &[]), "{n}");
        }
        assert!(sensitive("X-Custom", &["x-custom"]));
    }

    #[test]
    fn header_lines() {
        assert_eq!(
            header_line("Authorization: Bearer S3CRET", &[]),
            "Authorization: <redacted>"
        );
        assert_eq!(header_line("Accept: */*", &[]), "Accept: */*");
        assert_eq!(header_line("Bearer S3CRET", &[]), "Bearer <redacted>");
        assert_eq!(header_line("X-Mine: v", &["X-Mine"]), "X-Mine: <redacted>");
    }

    #[test]
    fn urls() {
        assert_eq!(
            url("https://user:PASS@127.0.0.1:9/x"),
            "https://%3Credacted%3E@127.0.0.1:9/x"
        );
        assert_eq!(
            url("http://127.0.0.1:9/x?token=QT0KEN&a=1"),
            "http://127.0.0.1:9/x?token=%3Credacted%3E&a=1"
        );
        assert_eq!(
            url("sink:http://u:p@127.0.0.1:9"),
            "sink:http://%3Credacted%3E@127.0.0.1:9/"
        );
        for same in [
            "builtin",
            "http://127.0.0.1:9/x?a=1",
            "tcp://127.0.0.1:514",
            "file:/var/log/*.log",
            "sink:http://127.0.0.1:9",
        ] {
            assert_eq!(url(same), same);
        }
    }

    #[test]
    fn configs() {
        let mut v = json!({
            "target": {
                "url": "http://127.0.0.1:9/?api_key=K",
                "urls": ["http://u:p@127.0.0.1:9/"],
                "auth": {"header": "X-Mine", "token_env": "TOKEN"},
                "http": {"headers": ["Authorization: Bearer S", "X-Mine: T", "Accept: x"]}
            }
        });
        config(&mut v);
        let text = v.to_string();
        for secret in ["api_key=K", "u:p@", "Bearer S", "X-Mine: T"] {
            assert!(!text.contains(secret), "{secret}: {text}");
        }
        assert!(text.contains("Accept: x") && text.contains("\"token_env\":\"TOKEN\""));
    }
}
