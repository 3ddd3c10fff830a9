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
    embed_packs();
    println!("cargo:rerun-if-changed=build.rs");
}

/// Writes `$OUT_DIR/embedded_packs.rs`: every `packs/*.yaml`, so an installed binary has them.
fn embed_packs() {
    let dir = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("packs");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "yaml"));
    files.sort();
    let mut code = String::from("pub static PACKS: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap().to_string_lossy();
        code.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            f.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded_packs.rs");
    std::fs::write(out, code).unwrap();
}
