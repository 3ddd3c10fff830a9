//! The control panel's JSON API (`serve::panel`, docs/panel.md) over plain HTTP on 127.0.0.1:
//! every endpoint against a panel started as a library with temporary directories — packs,
//! samples, the ATT&CK table, configs and scenarios validated, previewed, saved and deleted,
//! reports listed, opened, downloaded and compared, and a real run against the built-in sink
//! started, refused a second time, steered and finished into a saved report; then every
//! refusal: writes without their directories, traversal (`..%2f`, absolute paths, symlinks out
//! of the directory), oversize bodies, cross-origin and cross-site requests, the wrong Host,
//! a missing token; and `ingestbench serve`'s start-up rules as a process. Every run is bounded
//! (a few seconds) and stops by itself.

mod support;

use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use ingestbench::serve::panel::{PanelOptions, PanelServer};
use serde_json::{Value, json};
use support::raw_http::{Answer, assert_safe_headers, http};

const JSON: (&str, &str) = ("Content-Type", "application/json");

struct Panel {
    server: Option<PanelServer>,
    dir: tempfile::TempDir,
}

impl Panel {
    /// A panel with the directories named in `dirs` (of "configs", "scenarios", "reports"),
    /// with `token`, or without one (`no_token`, as `serve --no-token` asks).
    fn start(dirs: &[&str], token: Option<&str>) -> Panel {
        Panel::start_with(dirs, |o| {
            o.token = token.map(String::from);
            o.no_token = token.is_none();
        })
    }

    /// A panel with the directories named in `dirs`, its options then set by `set`.
    fn start_with(dirs: &[&str], set: impl FnOnce(&mut PanelOptions)) -> Panel {
        let dir = tempfile::tempdir().unwrap();
        let sub = |name: &str| {
            dirs.contains(&name).then(|| {
                let p = dir.path().join(name);
                fs::create_dir_all(&p).unwrap();
                p
            })
        };
        let mut opts = PanelOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            allow_remote: false,
            token: None,
            no_token: false,
            allow_launch: false,
            allow_env: Vec::new(),
            configs_dir: sub("configs"),
            scenarios_dir: sub("scenarios"),
            reports_dir: sub("reports"),
            packs_dir: None,
            secrets_dir: dir.path().join("secrets"),
        };
        set(&mut opts);
        let server = PanelServer::start(opts).expect("the panel starts");
        Panel {
            server: Some(server),
            dir,
        }
    }

    fn addr(&self) -> SocketAddr {
        self.server.as_ref().unwrap().addr()
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn get(&self, path: &str) -> Answer {
        http(self.addr(), "GET", path, &[], "")
    }

    fn send(&self, method: &str, path: &str, body: &Value) -> Answer {
        http(self.addr(), method, path, &[JSON], &body.to_string())
    }
}

impl Drop for Panel {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown();
        }
    }
}

fn ok(a: &Answer) -> Value {
    assert_eq!(a.status, 200, "{}", a.body);
    a.json()
}

fn example(path: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// A short run against the built-in sink: `eps` for `duration`.
fn run_config(name: &str, eps: u32, duration: &str) -> String {
    format!(
        "schema_version: \"1.0\"\nname: {name}\nseed: 7\ntarget:\n  adapter: lphc\n  url: builtin\n  batch: {{ max_events: 20 }}\nsource:\n  id: aws.cloudtrail\nworkload:\n  profile: steady\n  eps: {eps}\n  stop: {{ after: {duration} }}\n"
    )
}

fn wait_for(what: &str, within: Duration, mut f: impl FnMut() -> bool) {
    let until = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < until, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn packs_samples_and_the_attack_table() {
    let p = Panel::start(&[], None);
    let info = ok(&p.get("/api/info"));
    assert_eq!(info["attack_version"], "ATT&CK Enterprise v18.1");
    assert_eq!(info["dirs"]["configs"], Value::Null);
    assert_eq!(info["token"], false);

    let packs = ok(&p.get("/api/packs"));
    let ids: Vec<&str> = packs["packs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    for id in ["aws.cloudtrail", "windows.security", "identity.okta"] {
        assert!(ids.contains(&id), "{ids:?}");
    }
    assert_eq!(packs["errors"], json!([]));

    let win = ok(&p.get("/api/packs/windows.security"));
    assert_eq!(win["hosts"], "windows");
    let events = win["events"].as_array().unwrap();
    let shares: f64 = events.iter().map(|e| e["share"].as_f64().unwrap()).sum();
    assert!((shares - 100.0).abs() < 1e-6, "{shares}");
    let failed = events
        .iter()
        .find(|e| {
            e["mitre"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m.as_str().unwrap().starts_with("T1110"))
        })
        .expect("an event type for T1110");
    assert!(!failed["fields"].as_array().unwrap().is_empty());
    assert!(failed["roles"].get("user").is_some(), "{failed}");

    // The same seed renders the same events; another seed others.
    let a = ok(&p.get("/api/packs/aws.cloudtrail/sample?seed=11&count=2"));
    let b = ok(&p.get("/api/packs/aws.cloudtrail/sample?seed=11&count=2"));
    let c = ok(&p.get("/api/packs/aws.cloudtrail/sample?seed=12&count=2"));
    // Times are the clock's (two requests may straddle a second); everything drawn from the
    // seed is the same.
    let ids = |v: &Value| -> Vec<Value> {
        v["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| serde_json::from_str::<Value>(e["text"].as_str().unwrap()).unwrap())
            .map(|e| {
                json!([
                    e["eventID"],
                    e["requestID"],
                    e["eventName"],
                    e["userIdentity"]["arn"]
                ])
            })
            .collect()
    };
    assert_eq!(ids(&a), ids(&b));
    assert_ne!(ids(&a), ids(&c));
    assert_eq!(a["events"].as_array().unwrap().len(), 2);
    let text = a["events"][0]["text"].as_str().unwrap();
    serde_json::from_str::<Value>(text).expect("a CloudTrail sample is JSON");
    assert!(a["events"][0]["pretty"].as_str().unwrap().contains("\n  "));
    assert_eq!(
        p.get("/api/packs/aws.cloudtrail/sample?count=0").status,
        400
    );
    assert_eq!(p.get("/api/packs/aws.cloudtrail/sample?seed=x").status, 400);
    let none = p.get("/api/packs/nope.pack");
    assert_eq!(none.status, 404);
    assert!(none.error().contains("known:"), "{}", none.body);

    let att = ok(&p.get("/api/attack"));
    assert_eq!(att["tactics"].as_array().unwrap().len(), 14);
    let t1110 = att["techniques"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "T1110")
        .unwrap();
    assert_eq!(t1110["name"], "Brute Force");
    assert_eq!(t1110["tactics"], json!(["TA0006"]));
}

#[test]
fn configs_are_validated_at_their_lines_saved_only_when_valid_and_deleted() {
    let p = Panel::start(&["configs"], None);
    let list = ok(&p.get("/api/configs"));
    assert_eq!(list["writable"], true);
    assert_eq!(list["configs"], json!([]));

    let good = run_config("panel-a", 50, "2s");
    let v = ok(&p.send("POST", "/api/configs/validate", &json!({ "text": good })));
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["summary"]["source"], "aws.cloudtrail");
    assert_eq!(v["summary"]["stop"]["after"], "2s");

    let bad = good.replace("  url: builtin\n", "  url: builtin\n  colour: red\n");
    let v = ok(&p.send("POST", "/api/configs/validate", &json!({ "text": bad })));
    assert_eq!(v["valid"], false);
    let e = &v["errors"][0];
    assert_eq!(e["path"], "target.colour");
    assert_eq!(e["line"], 7, "{e}");
    assert!(e["column"].as_u64().unwrap() > 0);

    // A token source shows by name; the config never holds a value.
    let hec = good.replace(
        "  adapter: lphc\n  url: builtin\n",
        "  adapter: lphc\n  url: builtin\n  auth: { scheme: bearer, token_env: PANEL_TEST_TOKEN }\n",
    );
    let v = ok(&p.send("POST", "/api/configs/validate", &json!({ "text": hec })));
    assert_eq!(v["summary"]["auth"], "token_env: PANEL_TEST_TOKEN", "{v}");
    // …and the panel, started without `--allow-env PANEL_TEST_TOKEN`, will not read it.
    assert_eq!(v["valid"], false, "{v}");
    assert_eq!(v["errors"][0]["path"], "target.auth.token_env", "{v}");
    assert_eq!(v["errors"][0]["line"], 7, "{v}");

    let saved = p.send("PUT", "/api/configs/a.yaml", &json!({ "text": good }));
    assert_eq!(ok(&saved)["name"], "a.yaml");
    assert_eq!(fs::read_to_string(p.path("configs/a.yaml")).unwrap(), good);
    let refused = p.send("PUT", "/api/configs/b.yaml", &json!({ "text": bad }));
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.json()["errors"][0]["path"], "target.colour");
    assert!(!p.path("configs/b.yaml").exists());

    let edited = good.replace("eps: 50", "eps: 60");
    ok(&p.send("PUT", "/api/configs/a.yaml", &json!({ "text": edited })));
    assert_eq!(ok(&p.get("/api/configs/a.yaml"))["text"], edited);
    let names: Vec<Value> = ok(&p.get("/api/configs"))["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].clone())
        .collect();
    assert_eq!(names, [json!("a.yaml")]);

    ok(&http(
        p.addr(),
        "DELETE",
        "/api/configs/a.yaml",
        &[JSON],
        "",
    ));
    assert!(!p.path("configs/a.yaml").exists());
    assert_eq!(p.get("/api/configs/a.yaml").status, 404);
    assert_eq!(
        http(p.addr(), "DELETE", "/api/configs/a.yaml", &[JSON], "").status,
        404
    );
    // The wrong body shape says what it should be.
    let shape = p.send("POST", "/api/configs/validate", &json!({ "yaml": good }));
    assert_eq!(shape.status, 400);
    assert!(shape.error().contains("\"text\""), "{}", shape.body);
}

#[test]
fn scenarios_are_validated_previewed_and_saved() {
    let p = Panel::start(&["scenarios"], None);
    let text = example("examples/scenarios/brute-force-valid-account-execution.yaml");
    let v = ok(&p.send("POST", "/api/scenarios/validate", &json!({ "text": text })));
    assert_eq!(v["valid"], true, "{v}");
    let s = &v["summary"];
    let stages = s["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 3);
    assert_eq!(stages[0]["technique"], "T1110");
    assert_eq!(stages[0]["tactic_name"], "Credential Access");
    assert!(!stages[0]["draws"].as_array().unwrap().is_empty());
    assert_eq!(
        s["events"].as_u64().unwrap(),
        stages
            .iter()
            .map(|s| s["count"].as_u64().unwrap())
            .sum::<u64>()
    );

    let pv = ok(&p.send(
        "POST",
        "/api/scenarios/preview",
        &json!({ "text": text, "per_stage": 2 }),
    ));
    let pst = pv["stages"].as_array().unwrap();
    assert_eq!(pst.len(), 3);
    for st in pst {
        let evs = st["events"].as_array().unwrap();
        assert_eq!(evs.len(), 2, "{st}");
        assert!(evs[0]["time"].as_str().unwrap().starts_with("20"));
        // Every stage event carries its technique.
        let t = st["technique"].as_str().unwrap();
        assert!(evs[0]["text"].as_str().unwrap().contains(t), "{st}");
    }

    let bad = text.replacen("technique: T1110", "technique: T9999", 1);
    let v = ok(&p.send("POST", "/api/scenarios/validate", &json!({ "text": bad })));
    assert_eq!(v["valid"], false);
    let e = &v["errors"][0];
    assert!(e["path"].as_str().unwrap().ends_with("technique"), "{e}");
    assert!(e["line"].as_u64().unwrap() > 1, "{e}");
    let refused = p.send("PUT", "/api/scenarios/bad.yaml", &json!({ "text": bad }));
    assert_eq!(refused.status, 422);
    assert!(!p.path("scenarios/bad.yaml").exists());
    let pv = p.send("POST", "/api/scenarios/preview", &json!({ "text": bad }));
    assert_eq!(pv.status, 422);

    ok(&p.send("PUT", "/api/scenarios/chain.yaml", &json!({ "text": text })));
    assert_eq!(
        ok(&p.get("/api/scenarios"))["scenarios"][0]["name"],
        "chain.yaml"
    );
    assert_eq!(ok(&p.get("/api/scenarios/chain.yaml"))["text"], text);
    ok(&http(
        p.addr(),
        "DELETE",
        "/api/scenarios/chain.yaml",
        &[JSON],
        "",
    ));
    assert!(!p.path("scenarios/chain.yaml").exists());
}

/// What a config sent to the panel may do (docs/panel.md): by default no program is started,
/// no file written outside `--reports-dir`, no environment variable read that `--allow-env`
/// does not name; `--allow-launch` lifts the first two. Each refusal names the field, its
/// line and the flag.
#[test]
fn configs_sent_to_the_panel_start_nothing_write_only_reports_and_read_only_allowed_env() {
    let p = Panel::start(&["configs", "reports"], None);
    let keep = tempfile::tempdir().unwrap();
    let marker = keep.path().join("ran-a-program");
    let base = run_config("doors", 20, "1s");
    let launch = format!(
        "{base}observability:\n  target:\n    command: /bin/sh\n    args: [\"-c\", \"touch {}; exec sleep 30\"]\n",
        marker.display()
    );
    let outside = p.path("outside.json");
    let write_out = format!(
        "{base}observability:\n  report: {}\n  csv: ../outside.csv\n",
        outside.display()
    );
    let restart = format!(
        "{base}faults:\n  - {{ at: 500ms, action: restart, target: \"name:nothing-here\", command: /bin/sh, args: [\"-c\", \"touch {}\"] }}\n",
        marker.display()
    );
    let env = base.replace(
        "  url: builtin\n",
        "  url: builtin\n  auth: { scheme: bearer, token_env: IB_PANEL_DOOR_SECRET }\n",
    );
    let cases: [(&str, &String, &[&str], &str); 4] = [
        (
            "launch",
            &launch,
            &["observability.target"],
            "--allow-launch",
        ),
        (
            "write outside",
            &write_out,
            &["observability.report", "observability.csv"],
            "--reports-dir",
        ),
        (
            "restart",
            &restart,
            &["faults[0].command", "faults[0].action"],
            "--allow-launch",
        ),
        ("env", &env, &["target.auth.token_env"], "--allow-env"),
    ];
    for (what, text, paths, flag) in cases {
        let a = p.send("POST", "/api/run", &json!({ "text": text }));
        assert_eq!(a.status, 422, "{what}: {}", a.body);
        let errors = a.json()["errors"].clone();
        for (i, path) in paths.iter().enumerate() {
            let m = errors[i]["message"].as_str().unwrap_or_default();
            assert!(m.starts_with(path) && m.contains(flag), "{what}: {m}");
            assert!(m.contains(&format!("{path} (")), "placed at its line: {m}");
        }
        let v = ok(&p.send("POST", "/api/configs/validate", &json!({ "text": text })));
        assert_eq!(v["valid"], false, "{what}: {v}");
        assert_eq!(v["errors"][0]["path"], paths[0], "{what}: {v}");
        let put = p.send("PUT", "/api/configs/door.yaml", &json!({ "text": text }));
        assert_eq!(put.status, 422, "{what}: {}", put.body);
    }
    assert_eq!(ok(&p.get("/api/run"))["active"], false);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!marker.exists(), "a program ran");
    assert!(!outside.exists() && !p.path("outside.csv").exists());

    // Inside --reports-dir, by a relative name: written there.
    let inside = format!("{base}observability:\n  report: doors-own.json\n");
    let a = p.send("POST", "/api/run", &json!({ "text": inside }));
    assert_eq!(a.status, 202, "{}", a.body);
    wait_for("the run ends", Duration::from_secs(20), || {
        ok(&p.get("/api/run"))["active"] == false
    });
    assert!(p.path("reports/doors-own.json").is_file());
    drop(p);

    // --allow-env names the variable: the config may read it.
    let p = Panel::start_with(&[], |o| {
        o.no_token = true;
        o.allow_env = vec!["IB_PANEL_DOOR_SECRET".into()];
    });
    let v = ok(&p.send("POST", "/api/configs/validate", &json!({ "text": env })));
    assert_eq!(v["valid"], true, "{v}");
    drop(p);

    // --allow-launch: the config's program runs, as a config given to `run` would.
    let p = Panel::start_with(&["reports"], |o| {
        o.no_token = true;
        o.allow_launch = true;
    });
    let a = p.send("POST", "/api/run", &json!({ "text": launch }));
    assert_eq!(a.status, 202, "{}", a.body);
    wait_for("the program ran", Duration::from_secs(10), || {
        marker.exists()
    });
    wait_for("the run ends", Duration::from_secs(20), || {
        ok(&p.get("/api/run"))["active"] == false
    });
}

/// A panel run's own status page and /metrics ask for the panel's token: nobody without it
/// steers or reads the panel's run through them.
#[test]
fn a_panel_runs_status_page_and_metrics_ask_for_the_panels_token() {
    let token = "panel-token-for-its-runs-0123";
    let p = Panel::start(&[], Some(token));
    let auth = ("Authorization", "Bearer panel-token-for-its-runs-0123");
    let free = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    };
    let (status, metrics) = (free(), free());
    let text = format!(
        "{}observability:\n  dashboard: true\n  dashboard_listen: \"{status}\"\n  prometheus: \"{metrics}\"\n",
        run_config("served", 50, "3s")
    );
    let a = http(
        p.addr(),
        "POST",
        "/api/run",
        &[auth, JSON],
        &json!({ "text": text }).to_string(),
    );
    assert_eq!(a.status, 202, "{}", a.body);
    wait_for("the status page", Duration::from_secs(5), || {
        std::net::TcpStream::connect(status).is_ok()
    });
    assert_eq!(http(status, "GET", "/status.json", &[], "").status, 401);
    assert_eq!(http(status, "GET", "/status.json", &[auth], "").status, 200);
    assert_eq!(
        http(status, "POST", "/control/stop", &[JSON], "{}").status,
        401
    );
    assert_eq!(http(metrics, "GET", "/metrics", &[], "").status, 401);
    assert_eq!(http(metrics, "GET", "/metrics", &[auth], "").status, 200);
    wait_for("the run ends", Duration::from_secs(20), || {
        http(p.addr(), "GET", "/api/run", &[auth], "").json()["active"] == false
    });
    let last = http(p.addr(), "GET", "/api/run", &[auth], "").json()["last"].clone();
    assert_eq!(last["exit_code"], 0, "{last}");
}

#[test]
fn a_run_is_started_refused_twice_steered_and_reported() {
    let p = Panel::start(&["configs", "reports", "scenarios"], None);
    fs::write(
        p.path("configs/live.yaml"),
        run_config("panel-live", 200, "30s"),
    )
    .unwrap();
    // Nothing to steer yet.
    assert_eq!(p.send("POST", "/api/run/pause", &json!({})).status, 409);
    assert_eq!(ok(&p.get("/api/run"))["active"], false);

    let started = p.send("POST", "/api/run", &json!({"config": "live.yaml"}));
    assert_eq!(started.status, 202, "{}", started.body);
    assert_eq!(started.json()["name"], "panel-live");
    let again = p.send("POST", "/api/run", &json!({"config": "live.yaml"}));
    assert_eq!(again.status, 409);
    assert!(
        again.error().contains("one run at a time"),
        "{}",
        again.body
    );

    let sent = |p: &Panel| {
        ok(&p.get("/api/run"))["snapshot"]["cumulative"]["events_sent"]
            .as_u64()
            .unwrap_or(0)
    };
    wait_for("events sent", Duration::from_secs(10), || sent(&p) > 0);
    let first = sent(&p);
    wait_for("more events sent", Duration::from_secs(10), || {
        sent(&p) > first
    });
    let st = ok(&p.get("/api/run"));
    assert_eq!(st["active"], true);
    assert_eq!(st["config"], "live.yaml");
    assert_eq!(st["snapshot"]["schema"], "ingestbench.status/1");

    ok(&p.send("POST", "/api/run/rate", &json!({"eps": 400})));
    let rate = |p: &Panel| ok(&p.get("/api/run"))["snapshot"]["rate_eps"].as_f64();
    wait_for("the target follows", Duration::from_secs(5), || {
        rate(&p) == Some(400.0)
    });
    assert_eq!(
        p.send("POST", "/api/run/rate", &json!({"eps": 1, "factor": 2}))
            .status,
        400
    );
    ok(&p.send("POST", "/api/run/pause", &json!({})));
    assert_eq!(p.send("POST", "/api/run/pause", &json!({})).status, 409);
    ok(&p.send("POST", "/api/run/resume", &json!({})));
    ok(&p.send("POST", "/api/run/stop", &json!({})));

    wait_for("the run ends", Duration::from_secs(20), || {
        ok(&p.get("/api/run"))["active"] == false
    });
    let last = ok(&p.get("/api/run"))["last"].clone();
    assert_eq!(last["config"], "live.yaml");
    // Stopped through control: aborted, never a pass.
    assert_eq!(last["exit_code"], 6, "{last}");
    assert_eq!(last["pass"], false);
    let name = last["report"].as_str().unwrap().to_string();
    assert!(
        name.starts_with("panel-live-") && name.ends_with(".json"),
        "{name}"
    );
    let on_disk: Value =
        serde_json::from_str(&fs::read_to_string(p.path("reports").join(&name)).unwrap()).unwrap();
    let actions: Vec<&str> = on_disk["control"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["rate", "pause", "resume", "stop"]);

    // A second, short run that ends by itself and passes; then the two compared.
    fs::write(
        p.path("configs/short.yaml"),
        run_config("panel-short", 100, "2s"),
    )
    .unwrap();
    let started = p.send(
        "POST",
        "/api/run",
        &json!({"config": "short.yaml", "eps": 150}),
    );
    assert_eq!(started.status, 202, "{}", started.body);
    wait_for("the short run ends", Duration::from_secs(20), || {
        ok(&p.get("/api/run"))["last"]["config"] == "short.yaml"
    });
    let last = ok(&p.get("/api/run"))["last"].clone();
    assert_eq!(last["exit_code"], 0, "{last}");
    let short = last["report"].as_str().unwrap().to_string();

    let list = ok(&p.get("/api/reports"));
    let rows = list["reports"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let row = rows.iter().find(|r| r["name"] == short.as_str()).unwrap();
    assert_eq!(row["run_name"], "panel-short");
    assert_eq!(row["pass"], true);
    assert_eq!(row["target"], "builtin");
    assert!(
        (row["target_eps"].as_f64().unwrap() - 150.0).abs() < 1.0,
        "{row}"
    );

    let cmp = ok(&p.get(&format!("/api/reports/compare?a={name}&b={short}")));
    let verdict = cmp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "pass")
        .unwrap();
    assert_eq!(
        (&verdict["better"], &verdict["differs"]),
        (&json!("b"), &json!(true))
    );
    let target = cmp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "target_eps")
        .unwrap();
    assert_eq!(target["differs"], true, "{target}");
    // `last` is the short run, in memory, the same as its file.
    let last_report = ok(&p.get("/api/reports/last"));
    assert_eq!(last_report["run_id"], row_run_id(&p, &short));
    assert_eq!(p.get("/api/reports/compare?a=last").status, 400);

    let dl = p.get(&format!("/api/reports/{short}?download=1"));
    assert_eq!(
        dl.header("Content-Disposition"),
        Some(format!("attachment; filename=\"{}\"", short).as_str())
    );
    let csv = p.get(&format!("/api/reports/{short}/csv"));
    assert_eq!(csv.status, 200);
    assert!(csv.header("Content-Type").unwrap().starts_with("text/csv"));
    let mut lines = csv.body.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("t,target_eps,events_sent")
    );
    assert!(lines.count() >= 2);

    // A config that does not validate is refused with its problems, and nothing starts.
    let bad = p.send(
        "POST",
        "/api/run",
        &json!({"text": "schema_version: \"1.0\"\nnope: 1\n"}),
    );
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert!(!bad.json()["errors"].as_array().unwrap().is_empty());
    let flag = p.send(
        "POST",
        "/api/run",
        &json!({"config": "short.yaml", "duration": "soon"}),
    );
    assert_eq!(flag.status, 422, "{}", flag.body);
    assert!(flag.error().contains("duration"), "{}", flag.body);
    assert_eq!(ok(&p.get("/api/run"))["active"], false);
}

fn row_run_id(p: &Panel, name: &str) -> Value {
    ok(&p.get(&format!("/api/reports/{name}")))["run_id"].clone()
}

#[test]
fn without_directories_writes_are_refused_and_the_panel_says_why() {
    let p = Panel::start(&[], None);
    for kind in ["configs", "scenarios"] {
        let l = ok(&p.get(&format!("/api/{kind}")));
        assert_eq!(l["dir"], Value::Null);
        assert_eq!(l["writable"], false);
        let reason = l["reason"].as_str().unwrap();
        assert!(reason.contains(&format!("--{kind}-dir")), "{reason}");
        let put = p.send(
            "PUT",
            &format!("/api/{kind}/x.yaml"),
            &json!({"text": "a: 1"}),
        );
        assert_eq!(put.status, 404);
        assert!(
            put.error().contains(&format!("--{kind}-dir")),
            "{}",
            put.body
        );
        assert_eq!(
            http(
                p.addr(),
                "DELETE",
                &format!("/api/{kind}/x.yaml"),
                &[JSON],
                ""
            )
            .status,
            404
        );
        assert_eq!(p.get(&format!("/api/{kind}/x.yaml")).status, 404);
    }
    let r = ok(&p.get("/api/reports"));
    assert!(r["reason"].as_str().unwrap().contains("--reports-dir"));
    assert_eq!(p.get("/api/reports/x.json").status, 404);
    assert_eq!(p.get("/api/reports/last").status, 404);
    let by_name = p.send("POST", "/api/run", &json!({"config": "x.yaml"}));
    assert_eq!(by_name.status, 404);
    // Validation needs no directory.
    let v = ok(&p.send(
        "POST",
        "/api/configs/validate",
        &json!({"text": run_config("x", 1, "1s")}),
    ));
    assert_eq!(v["valid"], true);
}

#[test]
fn traversal_and_symlinks_out_of_the_directory_are_refused() {
    let p = Panel::start(&["configs"], None);
    let outside = p.path("outside.yaml");
    fs::write(&outside, "secret: 1\n").unwrap();
    std::os::unix::fs::symlink(&outside, p.path("configs/link.yaml")).unwrap();
    fs::write(p.path("configs/fine.yaml"), "a: 1\n").unwrap();

    for path in [
        "/api/configs/..%2foutside.yaml",
        "/api/configs/..%2F..%2Fetc%2Fpasswd",
        "/api/configs/%2Fetc%2Fpasswd",
        "/api/configs/%2e%2e",
        "/api/configs/.hidden.yaml",
        "/api/configs/fine.txt",
        "/api/configs/link.yaml",
    ] {
        let a = p.get(path);
        assert_eq!(a.status, 400, "{path}: {}", a.body);
        assert!(!a.body.contains("secret"), "{path}");
    }
    // A literal `..` segment routes nowhere.
    assert_eq!(p.get("/api/configs/../outside.yaml").status, 404);
    // The link is not listed; the plain file is.
    let names: Vec<Value> = ok(&p.get("/api/configs"))["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].clone())
        .collect();
    assert_eq!(names, [json!("fine.yaml")]);

    // Writing and deleting by a traversing name touch nothing; writing over the link's name
    // replaces the link, never what it points to.
    let text = run_config("t", 1, "1s");
    for name in ["..%2foutside.yaml", "%2Ftmp%2Fx.yaml"] {
        let a = p.send(
            "PUT",
            &format!("/api/configs/{name}"),
            &json!({"text": text}),
        );
        assert_eq!(a.status, 400, "{name}");
        let d = http(
            p.addr(),
            "DELETE",
            &format!("/api/configs/{name}"),
            &[JSON],
            "",
        );
        assert_eq!(d.status, 400, "{name}");
    }
    ok(&p.send("PUT", "/api/configs/link.yaml", &json!({"text": text})));
    assert_eq!(fs::read_to_string(&outside).unwrap(), "secret: 1\n");
    assert!(
        !fs::symlink_metadata(p.path("configs/link.yaml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(outside.exists());
}

#[test]
fn oversize_cross_origin_and_unauthenticated_requests_are_refused() {
    let p = Panel::start(&["configs"], Some("s3cret-token-0123456789"));
    let auth = ("Authorization", "Bearer s3cret-token-0123456789");
    // The page and its files need no token; the API does.
    for path in ["/", "/panel.js", "/panel.css"] {
        let a = p.get(path);
        assert_eq!(a.status, 200, "{path}");
        assert_safe_headers(&a);
    }
    let page = p.get("/");
    let csp = page.header("Content-Security-Policy").unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe"),
        "{csp}"
    );
    assert!(
        p.get("/panel.js")
            .header("Content-Type")
            .unwrap()
            .starts_with("text/javascript")
    );
    let no_token = p.get("/api/info");
    assert_eq!(no_token.status, 401);
    assert_safe_headers(&no_token);
    assert!(!no_token.body.contains("s3cret"));
    let wrong = http(
        p.addr(),
        "GET",
        "/api/info",
        &[("Authorization", "Bearer nope")],
        "",
    );
    assert_eq!(wrong.status, 401);
    let info = http(p.addr(), "GET", "/api/info", &[auth], "");
    assert_eq!(info.json()["token"], true);

    let text = json!({"text": run_config("o", 1, "1s")}).to_string();
    let put = |headers: &[(&str, &str)], body: &str| {
        http(p.addr(), "PUT", "/api/configs/o.yaml", headers, body)
    };
    let cases: Vec<(u16, Vec<(&str, &str)>)> = vec![
        (401, vec![JSON]),
        (403, vec![auth, JSON, ("Origin", "http://evil.example")]),
        (403, vec![auth, JSON, ("Sec-Fetch-Site", "cross-site")]),
        (403, vec![auth, JSON, ("Host", "evil.example")]),
        (415, vec![auth, ("Content-Type", "text/plain")]),
        (415, vec![auth]),
    ];
    for (want, headers) in &cases {
        let a = put(headers, &text);
        assert_eq!(a.status, *want, "{headers:?}: {}", a.body);
        assert_safe_headers(&a);
    }
    // A cross-origin run start and control are refused the same way.
    let evil = [auth, JSON, ("Origin", "http://evil.example")];
    assert_eq!(http(p.addr(), "POST", "/api/run", &evil, &text).status, 403);
    assert_eq!(
        http(p.addr(), "POST", "/api/run/stop", &evil, "{}").status,
        403
    );
    assert!(!p.path("configs/o.yaml").exists());

    // Over 1 MiB: refused by its length, and when it lies about none.
    let big = "x".repeat((1 << 20) + 10);
    let a = put(&[auth, JSON], &big);
    assert_eq!(a.status, 413, "{}", a.body);
    for huge in ["99999999", "1000000000000", "99999999999999999999999"] {
        let claimed = http(
            p.addr(),
            "PUT",
            "/api/configs/o.yaml",
            &[auth, JSON, ("Content-Length", huge)],
            "",
        );
        assert_eq!(claimed.status, 413, "{huge}");
    }
    // Two lengths (this helper adds one to a POST): which one is true is not guessed.
    let two = http(
        p.addr(),
        "POST",
        "/api/configs/validate",
        &[auth, JSON, ("Content-Length", "2")],
        "{}",
    );
    assert_eq!(two.status, 400);
    // A same-origin write with the token goes through.
    let same = [
        auth,
        JSON,
        ("Origin", &*format!("http://127.0.0.1:{}", p.addr().port())),
    ];
    assert_eq!(put(&same, &text).status, 200);
    assert!(p.path("configs/o.yaml").exists());
    // Wrong methods name the right ones.
    let m = http(p.addr(), "POST", "/api/info", &[auth, JSON], "{}");
    assert_eq!((m.status, m.header("Allow")), (405, Some("GET")));
    assert_eq!(
        http(p.addr(), "GET", "/api/nothing", &[auth], "").status,
        404
    );
}

#[test]
fn a_stalled_body_and_a_long_idle_leave_the_panel_answering() {
    use std::io::Write;
    let p = Panel::start(&["configs"], None);
    // Bodies announced and never sent: each holds a thread of its own, not a serving thread.
    let mut stalled = Vec::new();
    for _ in 0..3 {
        let mut s = std::net::TcpStream::connect(p.addr()).unwrap();
        let head = format!(
            "POST /api/configs/validate HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
            p.addr().port()
        );
        s.write_all(head.as_bytes()).unwrap();
        stalled.push(s);
    }
    assert_eq!(p.get("/api/info").status, 200);
    // No new connection for longer than the sockets' timeouts: the listener still accepts
    // (a read timeout on the listener made accept give up after 10 s, and tiny_http with it).
    std::thread::sleep(Duration::from_secs(11));
    assert_eq!(p.get("/api/info").status, 200);
    drop(stalled);
}

/// `ingestbench serve` on 127.0.0.1 port 0 with `args`: the process and the address it
/// printed to open.
fn serve_process(args: &[&str], env: &[(&str, &str)]) -> (std::process::Child, String, String) {
    let bin = env!("CARGO_BIN_EXE_ingestbench");
    let mut child = std::process::Command::new(bin)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut err, &mut line).unwrap();
    let mut next = String::new();
    if args.contains(&"--no-token") {
        std::io::BufRead::read_line(&mut err, &mut next).unwrap();
    }
    let url = line
        .trim()
        .strip_prefix("control panel: ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    (child, url, next)
}

fn addr_of(url: &str) -> SocketAddr {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn the_serve_command_refuses_unsafe_starts_and_stops_on_sigterm() {
    let bin = env!("CARGO_BIN_EXE_ingestbench");
    // A refused start exits at once; one that serves instead is stopped after 10 s (and the
    // assertion on its exit code fails).
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = std::process::Command::new(bin);
        c.arg("serve");
        if !args.contains(&"--listen") {
            c.args(["--listen", "127.0.0.1:0"]);
        }
        c.args(args)
            .env_remove("PANEL_TEST_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        support::stop_child(&mut child);
        child.wait_with_output().unwrap()
    };
    // (flags, environment, what stderr says)
    type Refused<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let refused: &[Refused] = &[
        // Tokens shorter than 16 characters are refused, on loopback and beyond.
        (
            &["--token-env", "PANEL_TEST_TOKEN"],
            &[("PANEL_TEST_TOKEN", "x")],
            "16 to 1024",
        ),
        (
            &[
                "--listen",
                "0.0.0.0:0",
                "--allow-remote",
                "--token-env",
                "PANEL_TEST_TOKEN",
            ],
            &[("PANEL_TEST_TOKEN", "0123456789abcde")],
            "16 to 1024",
        ),
        (&["--listen", "0.0.0.0:0"], &[], "not a loopback address"),
        (
            &["--listen", "0.0.0.0:0", "--allow-remote", "--no-token"],
            &[],
            "--no-token is for loopback only",
        ),
        (&["--token-env", "PANEL_TEST_TOKEN"], &[], "not set"),
        (
            &["--no-token", "--token-env", "PANEL_TEST_TOKEN"],
            &[("PANEL_TEST_TOKEN", "0123456789abcdef0")],
            "opposite",
        ),
        (&["--configs-dir", "/nonexistent/dir"], &[], "--configs-dir"),
    ];
    for (args, env, says) in refused {
        let o = run(args, env);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        for (_, v) in *env {
            assert!(!err.contains(v), "the token was printed: {err}");
        }
    }
    let o = run(
        &[
            "--listen",
            "0.0.0.0:0",
            "--allow-remote",
            "--token-env",
            "PANEL_TEST_TOKEN",
        ],
        &[("PANEL_TEST_TOKEN", "has space in it, long enough")],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("has space"));

    // By default a token is generated and printed once, in the address to open.
    let (mut child, url, _) = serve_process(&[], &[]);
    let (base, token) = url.split_once("#token=").unwrap_or_else(|| panic!("{url}"));
    assert!(
        token.len() >= 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{url}"
    );
    let addr = addr_of(base);
    let page = http(addr, "GET", "/", &[], "");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("panel.js"));
    assert_eq!(http(addr, "GET", "/api/info", &[], "").status, 401);
    let bearer = format!("Bearer {token}");
    let info = http(addr, "GET", "/api/info", &[("Authorization", &bearer)], "");
    assert_eq!(info.json()["token"], true);
    support::stop_child(&mut child);
    assert_eq!(child.wait().unwrap().code(), Some(0));

    // A token given is used and never printed.
    let given = "given-token-0123456789";
    let (mut child, url, _) = serve_process(
        &["--token-env", "PANEL_TEST_TOKEN"],
        &[("PANEL_TEST_TOKEN", given)],
    );
    assert!(!url.contains("token"), "{url}");
    let addr = addr_of(&url);
    assert_eq!(http(addr, "GET", "/api/info", &[], "").status, 401);
    let bearer = format!("Bearer {given}");
    assert_eq!(
        http(addr, "GET", "/api/info", &[("Authorization", &bearer)], "").status,
        200
    );
    support::stop_child(&mut child);
    assert_eq!(child.wait().unwrap().code(), Some(0));

    // --no-token on loopback, when asked: said so.
    let (mut child, url, warning) = serve_process(&["--no-token"], &[]);
    assert!(warning.contains("no token"), "{warning}");
    assert_eq!(http(addr_of(&url), "GET", "/api/info", &[], "").status, 200);
    support::stop_child(&mut child);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
