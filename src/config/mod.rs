//! Config files: read (`schema`), checked (`validate`), with units (`units`) and tokens
//! (`secrets`). `load` is the one entry point: a path in, a `Loaded` out with the config (when
//! it has no errors) and every diagnostic. Nothing after setup reads YAML, and workers never
//! see this module's types.

pub mod schema;
pub mod secrets;
pub mod units;
pub mod validate;

use std::path::Path;

use crate::yaml::{self, Reader, diag::Diags};
pub use schema::Config;
use secrets::Store;

/// The result of loading one config file.
pub struct Loaded {
    /// Present only when there are no errors.
    pub config: Option<Config>,
    pub diags: Diags,
}

/// Reads, parses and validates the file at `path`; tokens are looked up in `store` only to
/// warn about missing ones.
pub fn load(path: &Path, store: &Store) -> Loaded {
    match yaml::read_text(path) {
        Ok(text) => load_str(&text, store),
        Err(msg) => {
            let mut diags = Diags::default();
            diags.error("", None, msg);
            Loaded {
                config: None,
                diags,
            }
        }
    }
}

/// As `load`, from text.
pub fn load_str(text: &str, store: &Store) -> Loaded {
    let mut r = Reader::default();
    let config =
        yaml::parse(text, &mut r.diags).and_then(|root| schema::read_config(&mut r, &root));
    if let Some(c) = &config {
        validate::validate(c, &mut r, store);
    }
    // Report in file order, whatever order the rules ran in.
    r.diags
        .items
        .sort_by_key(|d| d.pos.map_or((usize::MAX, 0), |p| (p.line, p.column)));
    let ok = !r.diags.has_errors();
    Loaded {
        config: config.filter(|_| ok),
        diags: r.diags,
    }
}
