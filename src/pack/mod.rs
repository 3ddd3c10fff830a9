//! Source packs: finding them (`--packs DIR`, then `./packs`, then the packs embedded in the
//! binary, a pack id found earlier shadowing the same id later), reading them (`load`), building
//! the shared entity pools (`entities`) and compiling templates once (`compile`, checked by
//! `check`). Pack files over `MAX_PACK_BYTES` are refused. Nothing here runs after setup.

pub mod check;
pub mod compile;
pub mod entities;
pub mod load;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::yaml::Reader;
use compile::CompiledPack;
use entities::Entities;
use load::PackDef;

/// Pack files larger than this are refused (16 MiB): the largest built-in pack is about 60 KB,
/// so this leaves room for packs with long value lists while bounding what setup reads.
pub const MAX_PACK_BYTES: u64 = 16 << 20;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_packs.rs"));
}

/// Where a pack's text came from.
#[derive(Clone, Debug)]
pub struct PackSource {
    /// Shown in messages: a path, or `<embedded>/name.yaml`.
    pub file: String,
    pub text: String,
}

/// A pack read and checked, with what is needed to point at its lines.
pub struct OpenPack {
    pub source: PackSource,
    pub def: PackDef,
    reader: Reader,
}

/// The packs available to this run.
pub struct Catalog {
    pub sources: Vec<PackSource>,
    /// Where packs were looked for, for messages.
    pub searched: Vec<String>,
    /// Each pack checked so far as a run would load it (`version_of`), by id: a config's
    /// checks and the run's plan compile it once between them.
    checked: std::sync::Mutex<Vec<(String, Result<semver::Version, String>)>>,
}

impl Catalog {
    /// Every pack file in `dir` (if given), `./packs` and the binary, the first of each id
    /// winning. Unreadable pack files are errors; ids are decided by reading each file's `id`.
    pub fn discover(dir: Option<&Path>) -> Result<Catalog, String> {
        let mut sources: Vec<PackSource> = Vec::new();
        let mut searched = Vec::new();
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(d) = dir {
            if !d.is_dir() {
                return Err(format!("--packs {}: not a directory", d.display()));
            }
            dirs.push(d.to_path_buf());
        }
        let local = PathBuf::from("packs");
        if local.is_dir() && dir.is_none_or(|d| d != local) {
            dirs.push(local);
        }
        for d in dirs {
            searched.push(d.display().to_string());
            let found = read_dir(&d)?;
            identified(&found)?;
            sources.extend(found);
        }
        searched.push("<embedded>".into());
        sources.extend(embedded_sources());
        // Keep the first source of each id.
        let mut seen: Vec<String> = Vec::new();
        sources.retain(|s| match quick_id(&s.text) {
            Some(id) if seen.contains(&id) => false,
            Some(id) => {
                seen.push(id);
                true
            }
            None => true,
        });
        Ok(Catalog {
            sources,
            searched,
            checked: std::sync::Mutex::default(),
        })
    }

    /// The packs built into the binary alone: no directory is read.
    pub fn embedded() -> Catalog {
        Catalog {
            sources: embedded_sources().collect(),
            searched: vec!["<embedded>".into()],
            checked: std::sync::Mutex::default(),
        }
    }

    /// The source whose `id:` is `id`.
    pub fn find(&self, id: &str) -> Option<&PackSource> {
        self.sources
            .iter()
            .find(|s| quick_id(&s.text).as_deref() == Some(id))
    }

    /// Ids of every pack, sorted.
    pub fn ids(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .sources
            .iter()
            .filter_map(|s| quick_id(&s.text))
            .collect();
        v.sort();
        v
    }
}

fn embedded_sources() -> impl Iterator<Item = PackSource> {
    embedded::PACKS.iter().map(|(name, text)| PackSource {
        file: format!("<embedded>/{name}"),
        text: (*text).to_string(),
    })
}

fn read_dir(d: &Path) -> Result<Vec<PackSource>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(d)
        .map_err(|e| format!("{}: {e}", d.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    files.into_iter().map(|p| read_file(&p)).collect()
}

/// The pack files of one directory each name their id, once: a file without a top-level
/// `id:` is refused (a run skipped it without a word while `sources validate` called it
/// invalid), with `sources validate`'s own message for it, and so are two files of one id
/// (which one a run used came down to their names).
fn identified(found: &[PackSource]) -> Result<(), String> {
    let mut ids: Vec<(String, &str)> = Vec::new();
    for src in found {
        let Some(id) = quick_id(&src.text) else {
            let why = open(src)
                .err()
                .map(|e| e.join("; "))
                .unwrap_or_else(|| format!("{}: no top-level `id:` line", src.file));
            return Err(format!(
                "{why} (every pack file in a packs directory names its id; check them with `ingestbench sources validate DIR`)"
            ));
        };
        if let Some((_, other)) = ids.iter().find(|(i, _)| *i == id) {
            return Err(format!(
                "{}: pack id {id} is also {other}'s: give each pack its own id",
                src.file
            ));
        }
        ids.push((id, &src.file));
    }
    Ok(())
}

/// Reads one pack file, refusing one over `MAX_PACK_BYTES` (and what `yaml::read_text_max`
/// refuses) with a message naming it.
pub fn read_file(path: &Path) -> Result<PackSource, String> {
    crate::yaml::read_text_max(path, MAX_PACK_BYTES).map(|text| PackSource {
        file: path.display().to_string(),
        text,
    })
}

/// The value of a top-level `id:` line, without a full parse (for discovery only).
fn quick_id(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("id:"))
        .map(|v| v.trim().trim_matches(['"', '\'']).to_string())
        .filter(|v| !v.is_empty())
}

/// `file:line:column: path: message`, the form every pack problem is shown in.
pub(crate) fn located(
    file: &str,
    r: &Reader,
    path: &str,
    pos: Option<crate::yaml::diag::Pos>,
    msg: &str,
) -> String {
    let pos = pos.or_else(|| r.pos(path));
    let path = if path.is_empty() {
        String::new()
    } else {
        format!("{path}: ")
    };
    match pos {
        Some(p) => format!("{file}:{}:{}: {path}{msg}", p.line, p.column),
        None => format!("{file}: {path}{msg}"),
    }
}

/// Reads and checks one pack's definition (not yet its templates).
pub fn open(source: &PackSource) -> Result<OpenPack, Vec<String>> {
    let mut r = Reader::default();
    let def = load::read_pack(&mut r, &source.text);
    match def {
        Some(def) if !r.diags.has_errors() => Ok(OpenPack {
            source: source.clone(),
            def,
            reader: r,
        }),
        _ => Err(r
            .diags
            .errors()
            .map(|d| located(&source.file, &r, &d.path, d.pos, &d.message))
            .collect()),
    }
}

impl OpenPack {
    /// Compiles the templates against `entities`; warnings come back beside the pack.
    pub fn compile(
        &self,
        entities: &Entities,
        accounting: bool,
    ) -> Result<(Arc<CompiledPack>, Vec<String>), Vec<String>> {
        let at = |(path, msg): (String, String)| {
            located(&self.source.file, &self.reader, &path, None, &msg)
        };
        match compile::compile(&self.def, entities, accounting) {
            Ok((p, warnings)) => Ok((Arc::new(p), warnings.into_iter().map(at).collect())),
            Err(errors) => Err(errors.into_iter().map(at).collect()),
        }
    }
}

/// Finds, opens and compiles the pack `id` whose version satisfies `req`.
pub fn load_compiled(
    catalog: &Catalog,
    id: &str,
    req: &semver::VersionReq,
    entities: &Entities,
    accounting: bool,
) -> Result<Arc<CompiledPack>, Vec<String>> {
    let Some(src) = catalog.find(id) else {
        return Err(vec![unknown_id(catalog, id)]);
    };
    let open = open(src)?;
    if !req.matches(&open.def.version) {
        return Err(vec![format!(
            "pack {id} is version {}, which does not satisfy {req} ({})",
            open.def.version, src.file
        )]);
    }
    open.compile(entities, accounting).map(|(p, _)| p)
}

/// "no pack named …" with a did-you-mean and where packs were looked for.
pub fn unknown_id(catalog: &Catalog, id: &str) -> String {
    let ids = catalog.ids();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let hint = crate::yaml::diag::did_you_mean(id, &refs)
        .map(|g| format!("; did you mean {g:?}?"))
        .unwrap_or_default();
    format!(
        "no source pack {id:?} in {} (known: {}){hint}",
        catalog.searched.join(", "),
        ids.join(", ")
    )
}

impl crate::config::PackIndex for Catalog {
    /// The pack read and compiled (templates trial-rendered) as a run loads it, so a pack
    /// the run would refuse is refused here too.
    fn version_of(&self, id: &str) -> Result<semver::Version, String> {
        if let Ok(done) = self.checked.lock()
            && let Some((_, r)) = done.iter().find(|(i, _)| i == id)
        {
            return r.clone();
        }
        let src = self.find(id).ok_or_else(|| unknown_id(self, id))?;
        let entities = Entities::generate(1, &entities::Sizes::default());
        let r = open(src)
            .and_then(|o| o.compile(&entities, true).map(|_| o.def.version))
            .map_err(|errs| format!("pack {id} is invalid: {}", errs.join("; ")));
        if let Ok(mut done) = self.checked.lock() {
            done.push((id.to_string(), r.clone()));
        }
        r
    }

    /// Renders 200 events of the pack (default entity pools, accounting on) and averages.
    fn mean_event_bytes(&self, id: &str) -> Option<f64> {
        const N: u64 = 200;
        let pack = open(self.find(id)?).ok()?;
        let entities = Entities::generate(1, &entities::Sizes::default());
        let (compiled, _) = pack.compile(&entities, true).ok()?;
        let mut g = crate::generate::Generator::new(compiled.program.clone(), 1, "r-000000000000");
        let mut out = Vec::new();
        for i in 0..N {
            let ctx = crate::generate::EventCtx {
                index: i,
                time_ns: 1_767_225_600_000_000_000,
                agent: 0,
                seq: i,
                sent_ms: None,
            };
            g.render(&ctx, &mut out);
        }
        Some(out.len() as f64 / N as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pack_file_over_the_limit_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.yaml");
        let mut text = String::from("id: big\n");
        let pad = format!("# {}\n", "x".repeat(1021));
        while text.len() as u64 <= MAX_PACK_BYTES {
            text.push_str(&pad);
        }
        std::fs::write(&big, &text).unwrap();
        let e = Catalog::discover(Some(dir.path())).err().expect("refused");
        assert_eq!(
            e,
            format!(
                "{}: file is {} bytes; the limit is 16777216 bytes (16MiB)",
                big.display(),
                text.len()
            )
        );
        // The largest built-in pack is far below the limit.
        let largest = embedded::PACKS
            .iter()
            .map(|(_, t)| t.len())
            .max()
            .unwrap_or(0);
        assert!((largest as u64) < MAX_PACK_BYTES / 64, "{largest}");
    }
}
