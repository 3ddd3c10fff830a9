//! Correlated attack scenarios with MITRE ATT&CK ground truth. A scenario file (`file`, the
//! Go tool's format) lists stages — a tactic, a technique, a source pack, a count and a time
//! window each — and the entities shared by every stage. `plan` resolves it against the
//! packs and the shipped ATT&CK table (`attack`), `play` places and renders its events in
//! time order, and `truth` says what was sent when, for scoring detections. `ingestbench
//! scenario` plays one to stdout; `run --scenario` mixes one into a run's background load.

pub mod attack;
pub mod file;
pub mod plan;
pub mod play;
pub mod truth;

use std::path::Path;
use std::sync::Arc;

use crate::pack::Catalog;
use crate::pack::entities::Entities;
use crate::yaml::Reader;
use file::{ScenarioDef, Speed};
use plan::Scenario;

/// A scenario file read, with what is needed to point at its lines.
pub struct Opened {
    pub def: ScenarioDef,
    file: String,
    reader: Reader,
}

impl Opened {
    /// The file's name without its directory and extension, the scenario's name by default.
    fn stem(&self) -> String {
        Path::new(&self.file)
            .file_stem()
            .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned())
    }

    /// `file:line:column: path: message`.
    pub fn located(&self, (path, msg): &(String, String)) -> String {
        crate::pack::located(&self.file, &self.reader, path, None, msg)
    }

    /// Resolves the scenario against `catalog` with the entity pools `entities` makes from
    /// its seed: `seed` when given, else the file's, else a random one. Warnings come back
    /// located.
    pub fn resolve(
        &self,
        catalog: &Catalog,
        entities: impl FnOnce(u64) -> Arc<Entities>,
        seed: Option<u64>,
        speed: Option<Speed>,
        default_speed: Speed,
    ) -> Result<(Scenario, Vec<String>), Vec<String>> {
        let seed = seed
            .or(self.def.seed)
            .unwrap_or_else(crate::run::source::random_seed);
        let pools = entities(seed);
        let mut def = self.def.clone();
        def.name.get_or_insert_with(|| self.stem());
        match plan::resolve(&def, catalog, pools, seed, speed, default_speed) {
            Ok((s, w)) => Ok((s, w.iter().map(|p| self.located(p)).collect())),
            Err(e) => Err(e.iter().map(|p| self.located(p)).collect()),
        }
    }
}

/// Reads and checks the scenario file at `path` (not yet against the packs).
pub fn open(path: &Path) -> Result<Opened, Vec<String>> {
    let text = crate::yaml::read_text(path).map_err(|e| vec![e])?;
    open_text(&path.display().to_string(), &text)
}

/// Reads scenario text; `file` names it in messages.
pub fn open_text(file: &str, text: &str) -> Result<Opened, Vec<String>> {
    let mut reader = Reader::default();
    let def = file::read(&mut reader, text);
    match def {
        Some(def) if !reader.diags.has_errors() => Ok(Opened {
            def,
            file: file.to_string(),
            reader,
        }),
        _ => Err(reader
            .diags
            .errors()
            .map(|d| crate::pack::located(file, &reader, &d.path, d.pos, &d.message))
            .collect()),
    }
}
