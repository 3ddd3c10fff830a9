//! End to end over HTTPS: `ingestbench run` with an `https://` url and `target.tls.ca_file`
//! through nginx terminating TLS (tests/support/peers.rs, started on 127.0.0.1 with the
//! throwaway certificates of scripts/make-test-certs.sh) to `ingestbench sink`. Every event
//! must be accepted and stored once; a front presenting a certificate from an unknown issuer
//! ends the run with exit 6, naming the problem.

mod support;

use std::path::Path;

use support::peers::HttpsFront;
use support::{all, run_json, write_config};

fn https_config(dir: &Path, port: u16, ca: &Path, total: u64) -> String {
    write_config(
        dir,
        "run.yaml",
        &format!(
            "schema_version: \"1.0\"\ntarget:\n  url: \"https://127.0.0.1:{port}/ingest\"\n  tls: {{ ca_file: \"{}\", server_name: localhost }}\n  batch: {{ max_events: 100 }}\nsource: {{ id: firewall.traffic }}\nworkload: {{ eps: 2000, stop: {{ total_events: {total} }} }}\n",
            ca.display()
        ),
    )
}

#[test]
fn https_through_nginx_stores_every_event_once() {
    let Some(front) = HttpsFront::start("server") else {
        return;
    };
    let (ng, sink, certs, tmp) = (&front.nginx, &front.sink, &front.certs, &front.tmp);
    let cfg = https_config(tmp.path(), ng.port, &certs.ca(), 3000);
    let (o, v) = run_json(&cfg, 1, 2);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}\nnginx:\n{}",
        all(&o),
        ng.log_text()
    );
    let s = &v["summary"];
    assert_eq!(s["events_accepted"], 3000, "{s}");
    assert_eq!(s["events_failed"], 0, "{s}");
    assert_eq!(v["status"]["200"], s["batches_accepted"], "{}", v["status"]);
    let st = sink.stats();
    let run = &st["runs"][v["run_id"].as_str().unwrap()];
    assert_eq!(run["distinct"], 3000, "{st}");
    assert_eq!(run["duplicates"], 0, "{st}");
}

#[test]
fn https_front_with_unknown_issuer_aborts_with_exit_6() {
    let Some(front) = HttpsFront::start("rogue") else {
        return;
    };
    let (ng, sink, certs, tmp) = (&front.nginx, &front.sink, &front.certs, &front.tmp);
    let cfg = https_config(tmp.path(), ng.port, &certs.ca(), 100);
    let (o, _) = run_json(&cfg, 1, 1);
    let text = all(&o);
    assert_eq!(o.status.code(), Some(6), "{text}");
    assert!(text.to_lowercase().contains("unknown issuer"), "{text}");
    assert_eq!(sink.stats()["events_received"], 0);
}
