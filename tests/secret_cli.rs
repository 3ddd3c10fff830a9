//! End to end: `ingestbench secret set|list|rm` file modes, and that no command prints a token.

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};

const TOKEN: &str = "tok-3f9a1c2e-very-secret";

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"));
    c.env_remove("INGESTBENCH_SECRETS_DIR");
    c
}

fn with_stdin(mut c: Command, input: &str) -> Output {
    use std::io::Write;
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The command may refuse its arguments and exit before reading stdin: a broken pipe
    // here is that, not a failure of the test.
    if let Err(e) = child.stdin.take().unwrap().write_all(input.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

fn all(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn mode(p: &std::path::Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn set_list_rm_and_modes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let d = dir.to_str().unwrap();

    let mut c = bin();
    c.args(["secret", "set", "hec-lab", "--dir", d]);
    let o = with_stdin(c, &format!("{TOKEN}\n"));
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(!all(&o).contains(TOKEN));
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("hec-lab")), 0o600);
    assert_eq!(std::fs::read_to_string(dir.join("hec-lab")).unwrap(), TOKEN);

    let o = bin().args(["secret", "list", "--dir", d]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hec-lab\n");
    assert!(!all(&o).contains(TOKEN));

    // A config naming the secret validates without a warning once it exists, and never shows it.
    let cfg = tmp.path().join("c.yaml");
    std::fs::write(
        &cfg,
        "schema_version: \"1.0\"\ntarget:\n  adapter: generic-hec\n  url: http://127.0.0.1:8088\n  auth: { scheme: splunk, token_secret: hec-lab }\nsource: { id: identity.okta }\nworkload: { eps: 10, stop: { after: 5s } }\n",
    )
    .unwrap();
    let o = bin()
        .args([
            "validate",
            "--config",
            cfg.to_str().unwrap(),
            "--secrets-dir",
            d,
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(!all(&o).contains("warning"), "{}", all(&o));
    assert!(!all(&o).contains(TOKEN));

    let o = bin()
        .args(["secret", "rm", "hec-lab", "--dir", d])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let o = bin()
        .args(["secret", "rm", "hec-lab", "--dir", d])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "removing a missing secret is an error"
    );
    let o = bin().args(["secret", "list", "--dir", d]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "");
}

#[test]
fn bad_input_to_set() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap().to_string();
    for (name, input, want) in [
        ("ok", "", "no token"),
        ("ok", "a\nb\n", "several lines"),
        ("../escape", "x", "not a valid secret name"),
    ] {
        let mut c = bin();
        c.args(["secret", "set", name, "--dir", &d]);
        let o = with_stdin(c, input);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", all(&o));
        assert!(all(&o).contains(want), "{name}: {}", all(&o));
    }
}

#[test]
fn token_file_with_loose_mode_is_refused_without_showing_it() {
    let tmp = tempfile::tempdir().unwrap();
    let tok = tmp.path().join("token");
    std::fs::write(&tok, TOKEN).unwrap();
    std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cfg = tmp.path().join("c.yaml");
    std::fs::write(
        &cfg,
        format!(
            "schema_version: \"1.0\"\ntarget:\n  url: http://127.0.0.1:8088/x\n  auth: {{ scheme: bearer, token_file: {} }}\nsource: {{ id: aws.cloudtrail }}\nworkload: {{ eps: 10, stop: {{ after: 5s }} }}\n",
            tok.display()
        ),
    )
    .unwrap();
    let o = bin()
        .args(["validate", "--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        all(&o).contains("target.auth.token_file") && all(&o).contains("0600"),
        "{}",
        all(&o)
    );
    assert!(!all(&o).contains(TOKEN));
    std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = bin()
        .args(["validate", "--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(!all(&o).contains(TOKEN));
}
