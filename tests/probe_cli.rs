//! `ingestbench probe` end to end: the real binary against the built-in sink (lphc, HEC,
//! syslog over TCP and UDP: every step passes and the batch is found stored), a standalone
//! `ingestbench sink` with a token probed with the wrong one (auth fails, exit 4, the framing
//! step skipped), a refused port (connect fails, exit 6), HTTPS sinks whose certificate has an
//! unknown issuer or is for another name (the TLS step fails saying which, exit 6, and still
//! shows the chain) or is trusted through `ca_file` (version, cipher, days left; HEC health
//! decoded), a listener that never answers (cut off by `--timeout`), and flag and config
//! errors (exit 2). All on 127.0.0.1; every probe ends by itself within seconds.

mod support;

use std::net::TcpListener;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::peers::Certs;
use support::{SinkProc, all, bin, write_config};

/// Runs `ingestbench probe ARGS --output json` with `env`: exit code, the JSON, all output.
fn probe(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Value, String) {
    let mut c = bin();
    c.arg("probe").args(args).args(["--output", "json"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let o: Output = c.output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), v, all(&o))
}

fn probe_config(yaml: &str, env: &[(&str, &str)]) -> (Option<i32>, Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "p.yaml", yaml);
    probe(&["--config", &cfg], env)
}

fn config(target: &str, source: &str) -> String {
    format!(
        "schema_version: \"1.0\"\ntarget:\n{target}source: {{ id: {source} }}\nworkload: {{ eps: 50, stop: {{ after: 10s }} }}\n"
    )
}

/// The step called `name`, which must be there.
fn step<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no steps: {v}"))
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}: {v}"))
}

fn verdicts(v: &Value) -> Vec<(String, String)> {
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn stored_distinct(v: &Value) -> u64 {
    step(v, "framing")["details"]["stored"]["distinct"]
        .as_u64()
        .unwrap_or_else(|| panic!("no stored count: {}", step(v, "framing")))
}

#[test]
fn every_step_passes_against_the_builtin_sink() {
    let (code, v, out) = probe_config(
        &config("  adapter: lphc\n  url: builtin\n", "aws.cloudtrail"),
        &[],
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["schema"], "ingestbench.probe/1");
    assert_eq!(v["verdict"]["pass"], true);
    assert_eq!(v["verdict"]["exit_code"], 0);
    assert_eq!(
        verdicts(&v),
        pairs(&[
            ("resolve", "pass"),
            ("connect", "pass"),
            ("tls", "skipped"),
            ("auth", "pass"),
            ("framing", "pass"),
        ])
    );
    let r = step(&v, "resolve");
    assert_eq!(r["details"]["host"], "127.0.0.1");
    assert_eq!(r["details"]["addresses"].as_array().unwrap().len(), 1);
    assert!(r["elapsed_ms"].as_f64().unwrap() >= 0.0);
    let port = r["details"]["port"].as_u64().unwrap();
    assert_ne!(port, 0, "the built-in sink's own port");
    assert_eq!(v["target"]["address"], format!("127.0.0.1:{port}"));
    assert_eq!(
        step(&v, "connect")["details"]["address"],
        format!("127.0.0.1:{port}")
    );
    let a = step(&v, "auth");
    assert_eq!(a["details"]["status"], 200, "{a}");
    assert_eq!(a["details"]["path"], "/ingest");
    let f = step(&v, "framing");
    assert_eq!(f["details"]["events_accepted"], 5, "{f}");
    assert_eq!(f["details"]["status"]["200"], 1, "{f}");
    assert_eq!(f["details"]["stored"]["store"], "the built-in sink");
    assert_eq!(f["details"]["stored"]["run_id"], v["run_id"]);
    assert_eq!(stored_distinct(&v), 5);
    assert_eq!(f["details"]["stored"]["duplicates"], 0);
}

#[test]
fn the_text_output_is_one_line_per_step_and_the_verdict_last() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "p.yaml",
        &config("  adapter: lphc\n  url: builtin\n", "aws.cloudtrail"),
    );
    let o = bin().args(["probe", "--config", &cfg]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .skip(1)
        .collect();
    assert!(heads[0].starts_with("PASS  resolve  127.0.0.1:"), "{text}");
    assert!(heads[0].ends_with(" ms"), "{text}");
    assert!(heads[2].starts_with("SKIP  tls"), "{text}");
    assert!(
        heads[4].starts_with("PASS  framing  5 of 5 events accepted"),
        "{text}"
    );
    assert!(
        text.contains("stored: 5 of 5 distinct in the built-in sink"),
        "{text}"
    );
    assert_eq!(text.lines().last(), Some("PASS  exit 0"), "{text}");
}

#[test]
fn hec_against_the_builtin_sink_decodes_health_and_answers() {
    let (code, v, out) = probe_config(
        &config(
            "  adapter: generic-hec\n  url: builtin\n  hec: { ack: true }\n  auth: { scheme: splunk, token_env: PROBE_TOKEN }\n",
            "windows.security",
        ),
        &[("PROBE_TOKEN", "t0ken-probe")],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("t0ken-probe"), "the token is never printed");
    let a = step(&v, "auth");
    assert_eq!(a["details"]["health"]["code"], 17, "{a}");
    assert_eq!(a["details"]["health"]["text"], "HEC is healthy");
    assert_eq!(a["details"]["hec_code"], 0, "{a}");
    assert_eq!(a["details"]["path"], "/services/collector/event");
    let f = step(&v, "framing");
    assert_eq!(f["details"]["hec_codes"]["0"], 1, "{f}");
    assert_eq!(stored_distinct(&v), 5);
}

#[test]
fn a_wrong_token_fails_auth_with_exit_4_and_skips_the_rest() {
    let sink = SinkProc::start(&["--http", "127.0.0.1:0", "--token", "right-token"]);
    let url = format!("http://127.0.0.1:{}", sink.port);
    let (code, v, out) = probe(
        &[
            "--url",
            &url,
            "--adapter",
            "generic-hec",
            "--token-env",
            "PROBE_TOKEN",
        ],
        &[("PROBE_TOKEN", "wrong-token")],
    );
    assert_eq!(code, Some(4), "{out}");
    assert!(!out.contains("wrong-token"), "the token is never printed");
    let a = step(&v, "auth");
    assert_eq!(a["verdict"], "fail", "{a}");
    assert_eq!(a["exit_code"], 4);
    assert_eq!(a["details"]["status"], 403, "{a}");
    assert_eq!(a["details"]["hec_code"], 4);
    assert_eq!(a["details"]["hec_text"], "Invalid token");
    assert!(
        a["error"]
            .as_str()
            .unwrap()
            .contains("authentication failed"),
        "{a}"
    );
    assert_eq!(step(&v, "framing")["verdict"], "skipped");
    assert_eq!(v["verdict"]["exit_code"], 4);
    // Nothing of the probe's was stored, and the right token passes.
    assert_eq!(sink.stats()["runs"].as_object().unwrap().len(), 0);
    let (code, v, out) = probe(
        &[
            "--url",
            &url,
            "--adapter",
            "generic-hec",
            "--token-env",
            "PROBE_TOKEN",
        ],
        &[("PROBE_TOKEN", "right-token")],
    );
    assert_eq!(code, Some(0), "{out}");
    let f = step(&v, "framing");
    assert_eq!(
        f["details"]["stored"]["store"],
        "the target (an ingestbench sink)"
    );
    assert_eq!(stored_distinct(&v), 5);
}

#[test]
fn a_refused_port_fails_connect_with_exit_6() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (code, v, out) = probe(&["--url", &format!("http://127.0.0.1:{port}/ingest")], &[]);
    assert_eq!(code, Some(6), "{out}");
    assert_eq!(
        verdicts(&v),
        pairs(&[
            ("resolve", "pass"),
            ("connect", "fail"),
            ("tls", "skipped"),
            ("auth", "skipped"),
            ("framing", "skipped"),
        ])
    );
    let c = step(&v, "connect");
    assert!(c["error"].as_str().unwrap().contains("refused"), "{c}");
    assert_eq!(c["exit_code"], 6);
}

fn https_sink(certs: &Certs, name: &str, extra: &[&str]) -> SinkProc {
    let (cert, key) = (certs.pem(name), certs.key(name));
    let mut args = vec![
        "--http",
        "127.0.0.1:0",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    SinkProc::start(&args)
}

#[test]
fn tls_refusals_name_the_reason_and_still_show_the_chain() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path());
    let ca = certs.ca().display().to_string();
    for (cert, reason, subject, issuer) in [
        (
            "rogue",
            "unknown issuer",
            "CN=localhost",
            "CN=not the ingestbench test CA",
        ),
        (
            "wrong-name",
            "name mismatch",
            "CN=other.example",
            "CN=ingestbench test CA",
        ),
    ] {
        let sink = https_sink(&certs, cert, &[]);
        let (code, v, out) = probe_config(
            &config(
                &format!(
                    "  adapter: lphc\n  url: \"https://127.0.0.1:{}/ingest\"\n  tls: {{ ca_file: \"{ca}\", server_name: localhost }}\n",
                    sink.port
                ),
                "aws.cloudtrail",
            ),
            &[],
        );
        assert_eq!(code, Some(6), "{cert}: {out}");
        let t = step(&v, "tls");
        assert_eq!(t["verdict"], "fail", "{cert}: {t}");
        assert!(t["error"].as_str().unwrap().contains(reason), "{cert}: {t}");
        assert_eq!(t["details"]["server_name"], "localhost");
        let chain = t["details"]["chain"]
            .as_array()
            .unwrap_or_else(|| panic!("{t}"));
        assert_eq!(chain[0]["subject"], subject, "{cert}: {t}");
        assert_eq!(chain[0]["issuer"], issuer, "{cert}: {t}");
        assert!(chain[0]["days_left"].as_i64().unwrap() > 14, "{t}");
        assert_eq!(step(&v, "auth")["verdict"], "skipped");
    }
}

#[test]
fn a_trusted_certificate_passes_with_version_cipher_and_days_left() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path());
    let sink = https_sink(&certs, "server", &["--token", "probe-secret"]);
    let (code, v, out) = probe(
        &[
            "--url",
            &format!("https://127.0.0.1:{}", sink.port),
            "--adapter",
            "generic-hec",
            "--token-env",
            "PROBE_TOKEN",
            "--ca-file",
            certs.ca().to_str().unwrap(),
            "--server-name",
            "localhost",
        ],
        &[("PROBE_TOKEN", "probe-secret")],
    );
    assert_eq!(code, Some(0), "{out}");
    let t = step(&v, "tls");
    assert_eq!(t["verdict"], "pass", "{t}");
    let version = t["details"]["version"].as_str().unwrap();
    assert!(version == "TLS 1.3" || version == "TLS 1.2", "{t}");
    assert!(
        t["details"]["cipher"].as_str().unwrap().starts_with("TLS"),
        "{t}"
    );
    assert_eq!(t["details"]["sni"], "localhost");
    assert_eq!(t["details"]["verified"], true);
    let chain = t["details"]["chain"].as_array().unwrap();
    assert_eq!(chain[0]["subject"], "CN=localhost");
    assert_eq!(chain[0]["issuer"], "CN=ingestbench test CA");
    let days = chain[0]["days_left"].as_i64().unwrap();
    assert!((800..=826).contains(&days), "825-day certificate: {days}");
    let a = step(&v, "auth");
    assert_eq!(a["details"]["health"]["code"], 17, "{a}");
    assert_eq!(a["details"]["hec_code"], 0, "{a}");
    assert_eq!(
        stored_distinct(&v),
        5,
        "asked over HTTPS with the same trust"
    );
}

#[test]
fn syslog_probes_against_the_builtin_sink() {
    let (code, v, out) = probe_config(
        &config("  adapter: syslog\n  url: builtin\n", "linux.syslog"),
        &[],
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["target"]["transport"], "syslog+tcp");
    let a = step(&v, "auth");
    assert_eq!(a["details"]["framing"], "octet counting", "{a}");
    assert!(a["details"]["answer"].is_null());
    assert_eq!(step(&v, "framing")["details"]["events_sent"], 5);
    assert_eq!(stored_distinct(&v), 5);

    let (code, v, out) = probe_config(
        &config(
            "  adapter: syslog\n  url: builtin\n  syslog: { transport: udp }\n",
            "linux.syslog",
        ),
        &[],
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["target"]["transport"], "syslog+udp");
    let c = step(&v, "connect");
    assert_eq!(c["verdict"], "skipped", "{c}");
    assert!(c["error"].as_str().unwrap().contains("UDP"), "{c}");
    assert_eq!(step(&v, "auth")["details"]["framing"], "one datagram");
    assert_eq!(stored_distinct(&v), 5);
}

#[test]
fn a_listener_that_never_answers_is_cut_off_by_the_timeout() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let t0 = Instant::now();
    let (code, v, out) = probe(
        &[
            "--url",
            &format!("https://127.0.0.1:{port}/ingest"),
            "--timeout",
            "1s",
        ],
        &[],
    );
    drop(l);
    assert_eq!(code, Some(6), "{out}");
    let t = step(&v, "tls");
    assert!(t["error"].as_str().unwrap().contains("cut off"), "{t}");
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_eq!(v["timeout_s"], 1.0);
}

#[test]
fn flag_and_config_errors_exit_2() {
    let (code, _, out) = probe(&["--url", "http://127.0.0.1:9/"], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("--adapter"), "{out}");
    let (code, _, out) = probe(&[], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("--config FILE") && out.contains("--url URL"),
        "{out}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        "p.yaml",
        &config(
            "  adapter: lphc\n  url: builtin\n  bogus: 1\n",
            "aws.cloudtrail",
        ),
    );
    let (code, _, out) = probe(&["--config", &cfg], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("bogus"), "{out}");
    let (code, _, out) = probe(&["--config", &cfg, "--adapter", "lphc"], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("--adapter"), "{out}");
    let (code, _, out) = probe(
        &[
            "--url",
            "http://127.0.0.1:9/ingest",
            "--token-env",
            "PROBE_UNSET_VAR",
        ],
        &[],
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("PROBE_UNSET_VAR"), "{out}");
    let (code, _, out) = probe(
        &["--url", "http://127.0.0.1:9/ingest", "--timeout", "0s"],
        &[],
    );
    assert_eq!(code, Some(2), "{out}");
}

#[test]
fn a_certificate_expiring_within_14_days_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = Certs::make(tmp.path());
    let d = &certs.dir;
    let sh = format!(
        "set -e; cd '{}'; openssl req -newkey rsa:2048 -nodes -keyout soon.key -out soon.csr -subj /CN=localhost 2>/dev/null; \
         printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > soon.ext; \
         openssl x509 -req -in soon.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out soon.pem -extfile soon.ext -days 5 2>/dev/null",
        d.display()
    );
    let o = std::process::Command::new("bash")
        .args(["-c", &sh])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", all(&o));
    let sink = https_sink(&certs, "soon", &[]);
    let (code, v, out) = probe(
        &[
            "--url",
            &format!("https://127.0.0.1:{}/ingest", sink.port),
            "--ca-file",
            certs.ca().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, Some(0), "a warning is not a failure: {out}");
    let t = step(&v, "tls");
    assert_eq!(t["verdict"], "warn", "{t}");
    assert!(t["error"].as_str().unwrap().contains("expires in"), "{t}");
    assert!(t["details"]["chain"][0]["days_left"].as_i64().unwrap() <= 5);
    assert_eq!(t["details"]["sni"], Value::Null, "no SNI for an IP address");
    assert_eq!(step(&v, "framing")["verdict"], "pass");
}

#[test]
fn with_ceiling_the_probe_ends_with_a_short_search() {
    let tmp = tempfile::tempdir().unwrap();
    // A search bounded by max_eps: two steps (200, then 400 eps), both held by the sink.
    let yaml = "schema_version: \"1.0\"\ntarget:\n  adapter: lphc\n  url: builtin\n  batch: { max_events: 20 }\nsource: { id: aws.cloudtrail }\nworkload:\n  find_ceiling: true\n  ceiling: { start_eps: 200, max_eps: 400 }\n";
    let cfg = write_config(tmp.path(), "c.yaml", yaml);
    let (code, v, out) = probe(&["--config", &cfg, "--ceiling"], &[]);
    assert_eq!(code, Some(0), "{out}");
    let s = step(&v, "ceiling");
    assert_eq!(s["verdict"], "pass", "{s:#}");
    let c = &s["details"]["ceiling"];
    assert_eq!(c["limited_by"], "max_eps", "{c:#}");
    assert_eq!(c["ceiling_eps"].as_f64(), Some(400.0), "{c:#}");
    assert_eq!(
        c["hold_s"].as_f64(),
        Some(3.0),
        "the probe's search is the short one"
    );
    let rates: Vec<f64> = c["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["target_eps"].as_f64().unwrap())
        .collect();
    assert_eq!(rates, [200.0, 400.0]);
    assert_eq!(s["lines"].as_array().unwrap().len(), 2, "{s:#}");
    // Too little time for a search is said, not cut short silently.
    let (code, v, out) = probe(&["--config", &cfg, "--ceiling", "--timeout", "8s"], &[]);
    assert_eq!(code, Some(2), "{out}");
    let s = step(&v, "ceiling");
    assert!(
        s["error"].as_str().unwrap().contains("needs at least"),
        "{s:#}"
    );
}
