//! Build script: records the git commit (when built from a checkout) and the target triple for
//! `ingestbench version`.

use std::process::Command;

fn main() {
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=INGESTBENCH_TARGET={target}");
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=INGESTBENCH_GIT_COMMIT={commit}");
    // Rebuild when HEAD moves (a new commit or a branch switch).
    if let Ok(out) = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .output()
        && out.status.success()
    {
        let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Ok(head) = std::fs::read_to_string(format!("{dir}/HEAD"))
            && let Some(r) = head.strip_prefix("ref: ")
        {
            println!("cargo:rerun-if-changed={dir}/{}", r.trim());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
