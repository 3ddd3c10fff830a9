//! Tokens are never written (issue 33, case 25): the values of sensitive headers
//! (`Authorization`, `Proxy-Authorization`, `Cookie`, `X-API-Key`, any name with token,
//! secret, key or auth in it, the header `target.auth.header` names) and URL credentials
//! (`?token=`) appear as `<redacted>` in the JSON, text and CSV reports, in
//! `observability.report`, `--print-config` and messages — while the request still carries
//! them (the built-in sink would refuse nothing, so the run is checked to pass).

mod support;

use std::path::Path;

use support::{all, bin};

const SECRETS: &[&str] = &[
    "S3CRETTOKEN",
    "K3YVALUE",
    "C00KIE",
    "PR0XY",
    "T0KHDR",
    "QT0KEN",
];

fn headers() -> Vec<&'static str> {
    vec![
        "Authorization: Bearer S3CRETTOKEN",
        "X-Api-Key: K3YVALUE",
        "Cookie: sess=C00KIE",
        "Proxy-Authorization: Basic PR0XY",
        "X-Auth-Token: T0KHDR",
        "Accept: text/plain",
    ]
}

fn assert_clean(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} holds {s}:\n{text}");
    }
}

#[test]
fn http_reports_in_every_form_redact_the_header_values() {
    for output in ["json", "text", "csv"] {
        let mut c = bin();
        c.args(["http", "builtin", "-n", "5", "-c", "1", "-o", output]);
        for h in headers() {
            c.args(["-H", h]);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", all(&o));
        assert_clean(output, &all(&o));
        if output == "json" {
            assert!(
                all(&o).contains("\"Authorization: <redacted>\""),
                "{}",
                all(&o)
            );
            assert!(all(&o).contains("\"Accept: text/plain\""), "{}", all(&o));
        }
    }
}

fn config(dir: &Path, url: &str) -> String {
    let p = dir.join("http.yaml");
    let hs: Vec<String> = headers().iter().map(|h| format!("\"{h}\"")).collect();
    std::fs::write(
        &p,
        format!(
            "schema_version: \"1.0\"\n\
             target:\n  adapter: http\n  url: \"{url}\"\n  batch: {{ max_events: 1 }}\n  \
             http: {{ headers: [{}] }}\n\
             workload: {{ profile: closed, stop: {{ total_events: 5 }} }}\n\
             observability:\n  report: {}\n  csv: {}\n  hdr_log: {}\n",
            hs.join(", "),
            dir.join("r.json").display(),
            dir.join("r.csv").display(),
            dir.join("r.hlog").display()
        ),
    )
    .unwrap();
    p.display().to_string()
}

#[test]
fn saved_reports_print_config_and_messages_redact_tokens() {
    let d = tempfile::tempdir().unwrap();
    // A url that refuses connections: the run fails, and says so without the token.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cfg = config(d.path(), &format!("http://127.0.0.1:{port}/x?token=QT0KEN"));
    let o = bin()
        .args(["run", "--config", &cfg, "--output", "json"])
        .output()
        .unwrap();
    assert_clean("run", &all(&o));
    for f in ["r.json", "r.csv", "r.hlog"] {
        let text = std::fs::read_to_string(d.path().join(f)).unwrap_or_default();
        assert_clean(f, &text);
    }
    let saved = std::fs::read_to_string(d.path().join("r.json")).unwrap();
    assert!(saved.contains("Authorization: <redacted>"), "{saved}");
    assert!(saved.contains("token=%3Credacted%3E"), "{saved}");
    let o = bin()
        .args(["run", "--config", &cfg, "--print-config"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_clean("--print-config", &all(&o));
    assert!(all(&o).contains("<redacted>"), "{}", all(&o));
    // The text report of the saved one.
    let o = bin()
        .args(["report", "show"])
        .arg(d.path().join("r.json"))
        .output()
        .unwrap();
    assert_clean("report show", &all(&o));
}
