//! Reading YAML files (configs and packs) into plain Rust values while collecting every
//! problem with its field path and line:column. The schema is the reading code itself: each
//! `Obj::get` names a key it knows, and `Obj::finish` reports every other key as unknown, with
//! a did-you-mean. Anchors, aliases and tags are refused (no YAML bombs: an alias is never
//! expanded); files over their limit (`MAX_CONFIG_BYTES` here, the pack loader's own) and
//! nesting deeper than `MAX_DEPTH` are refused before building a tree.

pub mod diag;

use diag::{Diags, Pos, did_you_mean};
use marked_yaml::{LoadError, LoaderOptions, Node};
use std::collections::BTreeMap;
use std::path::Path;

pub use marked_yaml::Node as YamlNode;

/// Config and scenario files larger than this are refused (4 MiB): the largest example config
/// is a few KiB, and even a config listing hundreds of targets stays far below it.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;
/// Deeper nesting is refused: real files nest a handful of levels.
pub const MAX_DEPTH: usize = 64;

/// Reads `path` as UTF-8 text with the config limit (`MAX_CONFIG_BYTES`); see `read_text_max`.
pub fn read_text(path: &Path) -> Result<String, String> {
    read_text_max(path, MAX_CONFIG_BYTES)
}

/// Reads `path` as UTF-8 text through `fsio::read_text`: a regular file on a real filesystem
/// of at most `max` bytes (the read itself stops after `max` + 1 bytes), refusing a missing
/// file, a directory, a FIFO, a device such as `/dev/zero`, a file under `/proc` and binary
/// data with a message that names the file (and the limit).
pub fn read_text_max(path: &Path, max: u64) -> Result<String, String> {
    crate::fsio::read_text(path, max).map_err(|e| e.to_string())
}

/// Parses `text` into a tree whose top level is a mapping. Syntax problems become diagnostics.
pub fn parse(text: &str, d: &mut Diags) -> Option<Node> {
    if text.trim().is_empty() {
        d.error("", Some(Pos { line: 1, column: 1 }), "the file is empty");
        return None;
    }
    if let Some(pos) = too_deep(text) {
        d.error(
            "",
            Some(pos),
            format!("nesting deeper than {MAX_DEPTH} levels"),
        );
        return None;
    }
    let opts = LoaderOptions::default().error_on_duplicate_keys(true);
    match marked_yaml::parse_yaml_with_options(0, text, opts) {
        Ok(node) => Some(node),
        Err(e) => {
            let (pos, msg) = load_error(&e);
            d.error("", pos, msg);
            None
        }
    }
}

fn load_error(e: &LoadError) -> (Option<Pos>, String) {
    let at = |m: &marked_yaml::Marker| {
        Some(Pos {
            line: m.line(),
            column: m.column(),
        })
    };
    match e {
        LoadError::TopLevelMustBeMapping(m) => (
            at(m),
            "the top level must be a mapping of keys to values".into(),
        ),
        LoadError::TopLevelMustBeSequence(m) => (at(m), "the top level must be a list".into()),
        LoadError::UnexpectedAnchor(m) => {
            (at(m), "YAML anchors and aliases are not supported".into())
        }
        LoadError::MappingKeyMustBeScalar(m) => (at(m), "mapping keys must be plain names".into()),
        LoadError::UnexpectedTag(m) => (at(m), "YAML tags (!...) are not supported".into()),
        LoadError::ScanError(m, se) => (at(m), format!("invalid YAML: {}", se.info())),
        LoadError::DuplicateKey(inner) => {
            let k = &inner.key;
            let p = k.span().start().and_then(at);
            (p, format!("duplicate key {:?}", k.as_str()))
        }
    }
}

/// The position of the first place nesting goes past `MAX_DEPTH`, found with the event parser
/// alone so that no deep tree is ever built (dropping one recurses).
fn too_deep(text: &str) -> Option<Pos> {
    use yaml_rust2::parser::{Event, Parser};
    let mut parser = Parser::new_from_str(text);
    let mut depth = 0usize;
    loop {
        match parser.next_token() {
            Ok((Event::StreamEnd, _)) | Err(_) => return None,
            Ok((Event::MappingStart(..) | Event::SequenceStart(..), mark)) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(Pos {
                        line: mark.line(),
                        column: mark.col() + 1,
                    });
                }
            }
            Ok((Event::MappingEnd | Event::SequenceEnd, _)) => depth = depth.saturating_sub(1),
            Ok(_) => {}
        }
    }
}

/// The position a node starts at.
pub fn pos_of(node: &Node) -> Option<Pos> {
    match node {
        Node::Mapping(m) => pos_of_mapping(m),
        _ => node.span().start().map(|m| Pos {
            line: m.line(),
            column: m.column(),
        }),
    }
}

/// A word for what a node is, for "expected X, found Y" messages.
fn found(node: &Node) -> String {
    match node {
        Node::Scalar(s) => format!("{:?}", s.as_str()),
        Node::Mapping(_) => "a mapping".into(),
        Node::Sequence(_) => "a list".into(),
    }
}

/// True for `~`, `null` and an empty value, written plain (unquoted).
pub fn is_null(node: &Node) -> bool {
    match node {
        Node::Scalar(s) => {
            s.may_coerce() && matches!(s.as_str(), "" | "~" | "null" | "Null" | "NULL")
        }
        _ => false,
    }
}

/// Every problem found while reading, plus the position of every field that was present, so
/// that cross-field checks made later can point at the right line.
#[derive(Default)]
pub struct Reader {
    pub diags: Diags,
    pub positions: BTreeMap<String, Pos>,
}

impl Reader {
    pub fn error(&mut self, path: &str, message: impl Into<String>) {
        let pos = self.pos(path);
        self.diags.error(path, pos, message);
    }

    pub fn warning(&mut self, path: &str, message: impl Into<String>) {
        let pos = self.pos(path);
        self.diags.warning(path, pos, message);
    }

    /// The position of `path`, or of its nearest present parent.
    pub fn pos(&self, path: &str) -> Option<Pos> {
        let mut p = path;
        loop {
            if let Some(pos) = self.positions.get(p) {
                return Some(*pos);
            }
            match p.rfind(['.', '[']) {
                Some(i) => p = &p[..i],
                None => return self.positions.get("").copied(),
            }
        }
    }

    /// Whether the field at `path` was written in the file.
    pub fn present(&self, path: &str) -> bool {
        self.positions.contains_key(path)
    }

    /// Reads any value as `T` at `path`, reporting a type error there.
    pub fn value<T: FromYaml>(&mut self, node: &Node, path: &str) -> Option<T> {
        if let Some(p) = pos_of(node) {
            self.positions.entry(path.to_string()).or_insert(p);
        }
        match T::from_yaml(node, path, self) {
            Ok(v) => Some(v),
            Err(msg) => {
                self.diags.error(path, pos_of(node), msg);
                None
            }
        }
    }

    /// Opens the mapping `node` at `path` for reading its keys.
    pub fn obj<'a>(&mut self, node: &'a Node, path: &str) -> Option<Obj<'a>> {
        if let Some(p) = pos_of(node) {
            self.positions.entry(path.to_string()).or_insert(p);
        }
        match node {
            Node::Mapping(m) => Some(Obj {
                map: m,
                path: path.to_string(),
                known: Vec::new(),
            }),
            other => {
                self.diags.error(
                    path,
                    pos_of(other),
                    format!(
                        "expected a mapping of keys to values, found {}",
                        found(other)
                    ),
                );
                None
            }
        }
    }
}

/// A mapping being read; see the module header.
pub struct Obj<'a> {
    map: &'a marked_yaml::types::MarkedMappingNode,
    path: String,
    known: Vec<&'static str>,
}

impl<'a> Obj<'a> {
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The dotted path of `key` under this mapping.
    pub fn child_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The raw node under `key`, if present and not null; marks `key` as known.
    pub fn node(&mut self, key: &'static str) -> Option<&'a Node> {
        self.known.push(key);
        self.map.get_node(key).filter(|n| !is_null(n))
    }

    /// An optional field.
    pub fn get<T: FromYaml>(&mut self, r: &mut Reader, key: &'static str) -> Option<T> {
        let node = self.node(key)?;
        let path = self.child_path(key);
        r.value(node, &path)
    }

    /// A required field: its absence is an error at the mapping's position.
    pub fn req<T: FromYaml>(&mut self, r: &mut Reader, key: &'static str) -> Option<T> {
        match self.node(key) {
            Some(node) => {
                let path = self.child_path(key);
                r.value(node, &path)
            }
            None => {
                let pos = pos_of_mapping(self.map);
                r.diags
                    .error(&self.child_path(key), pos, "required field is missing");
                None
            }
        }
    }

    /// A nested mapping, read by `f`; `None` when absent or not a mapping.
    pub fn sub<T>(
        &mut self,
        r: &mut Reader,
        key: &'static str,
        f: impl FnOnce(&mut Reader, Obj<'a>) -> T,
    ) -> Option<T> {
        let node = self.node(key)?;
        let path = self.child_path(key);
        let obj = r.obj(node, &path)?;
        Some(f(r, obj))
    }

    /// The mapping itself, for free-form keys (names chosen by the file's author); no key is
    /// reported as unknown.
    pub fn into_map(self) -> &'a marked_yaml::types::MarkedMappingNode {
        self.map
    }

    /// Reports every key that no `get`/`req`/`sub`/`node` call asked for.
    pub fn finish(self, r: &mut Reader) {
        for (k, v) in self.map.iter() {
            let key = k.as_str();
            if self.known.contains(&key) {
                continue;
            }
            let path = self.child_path(key);
            let pos = k
                .span()
                .start()
                .map(|m| Pos {
                    line: m.line(),
                    column: m.column(),
                })
                .or_else(|| pos_of(v));
            let msg = match did_you_mean(key, &self.known) {
                Some(s) => format!("unknown field {key:?}; did you mean {s:?}?"),
                None => {
                    let mut known = self.known.clone();
                    known.sort_unstable();
                    known.dedup();
                    format!(
                        "unknown field {key:?}; known fields here: {}",
                        known.join(", ")
                    )
                }
            };
            r.diags.error(&path, pos, msg);
        }
    }
}

/// Where a mapping starts: its first key (the mapping's own start marker is less useful).
fn pos_of_mapping(m: &marked_yaml::types::MarkedMappingNode) -> Option<Pos> {
    m.keys()
        .next()
        .and_then(|k| k.span().start())
        .or_else(|| m.span().start())
        .map(|s| Pos {
            line: s.line(),
            column: s.column(),
        })
}

/// A value that can be read from a YAML node. `Err` is the message; the reader adds the path.
pub trait FromYaml: Sized {
    fn from_yaml(node: &Node, path: &str, r: &mut Reader) -> Result<Self, String>;
}

fn scalar<'n>(node: &'n Node, what: &str) -> Result<&'n str, String> {
    match node {
        Node::Scalar(s) => Ok(s.as_str()),
        other => Err(format!("expected {what}, found {}", found(other))),
    }
}

impl FromYaml for String {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        scalar(node, "a string").map(str::to_string)
    }
}

impl FromYaml for bool {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        match scalar(node, "true or false")? {
            "true" | "True" | "TRUE" => Ok(true),
            "false" | "False" | "FALSE" => Ok(false),
            s => Err(format!("expected true or false, found {s:?}")),
        }
    }
}

/// Integers allow `_` separators (`1_000_000`).
fn parse_int<T: std::str::FromStr>(node: &Node, what: &str) -> Result<T, String> {
    let s = scalar(node, what)?;
    let cleaned: String = s.chars().filter(|c| *c != '_').collect();
    if cleaned.starts_with('-') && what.contains("non-negative") {
        return Err(format!("expected {what}, found {s:?} (negative)"));
    }
    cleaned
        .parse::<T>()
        .map_err(|_| format!("expected {what}, found {s:?}"))
}

impl FromYaml for u64 {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        parse_int(node, "a non-negative integer")
    }
}

impl FromYaml for u32 {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        parse_int(node, "a non-negative integer (at most 4294967295)")
    }
}

impl FromYaml for u16 {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        parse_int(node, "a non-negative integer (at most 65535)")
    }
}

impl FromYaml for u8 {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        parse_int(node, "a non-negative integer (at most 255)")
    }
}

impl FromYaml for i64 {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        parse_int(node, "an integer")
    }
}

impl FromYaml for f64 {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        let s = scalar(node, "a number")?;
        let cleaned: String = s.chars().filter(|c| *c != '_').collect();
        match cleaned.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(format!("expected a number, found {s:?}")),
        }
    }
}

impl FromYaml for crate::config::units::Dur {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        crate::config::units::parse_duration(scalar(node, "a duration such as 90s")?)
    }
}

impl FromYaml for crate::config::units::Size {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        crate::config::units::parse_size(scalar(node, "a size such as 512KB")?)
    }
}

impl FromYaml for crate::config::units::DataRate {
    fn from_yaml(node: &Node, _: &str, _: &mut Reader) -> Result<Self, String> {
        crate::config::units::parse_data_rate(scalar(node, "a data rate such as 20MB/s")?)
    }
}

/// Lists: each item is read at `path[i]`; bad items are reported and skipped.
impl<T: FromYaml> FromYaml for Vec<T> {
    fn from_yaml(node: &Node, path: &str, r: &mut Reader) -> Result<Self, String> {
        match node {
            Node::Sequence(items) => Ok(items
                .iter()
                .enumerate()
                .filter_map(|(i, n)| r.value(n, &format!("{path}[{i}]")))
                .collect()),
            other => Err(format!("expected a list, found {}", found(other))),
        }
    }
}

/// A mapping with free-form keys (entity pool sizes, choice weights), kept in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pairs<T>(pub Vec<(String, T)>);

impl<T: FromYaml> FromYaml for Pairs<T> {
    fn from_yaml(node: &Node, path: &str, r: &mut Reader) -> Result<Self, String> {
        match node {
            Node::Mapping(m) => Ok(Pairs(
                m.iter()
                    .filter_map(|(k, v)| {
                        let p = format!("{path}.{}", k.as_str());
                        r.value(v, &p).map(|val| (k.as_str().to_string(), val))
                    })
                    .collect(),
            )),
            other => Err(format!("expected a mapping, found {}", found(other))),
        }
    }
}

/// Declares a string enum readable from YAML, with its spellings, a `name()` for output, and
/// a did-you-mean for misspellings.
#[macro_export]
macro_rules! yaml_enum {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($(#[$vm])* $variant),+ }

        impl $name {
            pub const NAMES: &'static [&'static str] = &[$($text),+];
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
            pub fn parse(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(match $crate::yaml::diag::did_you_mean(other, Self::NAMES) {
                        Some(g) => format!("{other:?} is not one of {}; did you mean {g:?}?", Self::NAMES.join(", ")),
                        None => format!("{other:?} is not one of {}", Self::NAMES.join(", ")),
                    }),
                }
            }
        }

        impl $crate::yaml::FromYaml for $name {
            fn from_yaml(node: &$crate::yaml::YamlNode, _: &str, _: &mut $crate::yaml::Reader) -> Result<Self, String> {
                match node {
                    $crate::yaml::YamlNode::Scalar(s) => $name::parse(s.as_str()),
                    _ => Err(format!("expected one of {}", Self::NAMES.join(", "))),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// `s` as a YAML double-quoted scalar (JSON's string syntax is YAML's): text from a command
/// line written into a config this way cannot change the document's shape.
pub fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Reader, Option<Node>) {
        let mut r = Reader::default();
        let n = parse(text, &mut r.diags);
        (r, n)
    }

    #[test]
    fn unknown_keys_are_reported_with_suggestion_and_position() {
        let (mut r, n) = read("a: 1\nbatch:\n  max_evnets: 5\n");
        let n = n.unwrap();
        let mut o = r.obj(&n, "").unwrap();
        let a: Option<u64> = o.get(&mut r, "a");
        assert_eq!(a, Some(1));
        o.sub(&mut r, "batch", |r, mut b| {
            let _: Option<u64> = b.get(r, "max_events");
            b.finish(r);
        });
        o.finish(&mut r);
        let msgs: Vec<String> = r.diags.items.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            msgs,
            vec![
                "batch.max_evnets (3:3): unknown field \"max_evnets\"; did you mean \"max_events\"?"
            ]
        );
    }

    #[test]
    fn type_errors_name_path_and_value() {
        let (mut r, n) = read("n: abc\nflag: maybe\nlist: [1, x, 3]\n");
        let n = n.unwrap();
        let mut o = r.obj(&n, "").unwrap();
        assert_eq!(o.get::<u64>(&mut r, "n"), None);
        assert_eq!(o.get::<bool>(&mut r, "flag"), None);
        assert_eq!(o.get::<Vec<u64>>(&mut r, "list"), Some(vec![1, 3]));
        o.finish(&mut r);
        let msgs: Vec<String> = r.diags.items.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            msgs[0],
            "n (1:4): expected a non-negative integer, found \"abc\""
        );
        assert_eq!(
            msgs[1],
            "flag (2:7): expected true or false, found \"maybe\""
        );
        assert_eq!(
            msgs[2],
            "list[1] (3:11): expected a non-negative integer, found \"x\""
        );
    }

    #[test]
    fn required_and_null() {
        let (mut r, n) = read("x: ~\ny:\n");
        let n = n.unwrap();
        let mut o = r.obj(&n, "").unwrap();
        assert_eq!(o.req::<String>(&mut r, "x"), None);
        assert_eq!(o.get::<String>(&mut r, "y"), None);
        o.finish(&mut r);
        assert_eq!(r.diags.items.len(), 1);
        let msg = r.diags.items[0].to_string();
        assert!(
            msg.starts_with("x (1:1): required field is missing"),
            "{msg}"
        );
    }

    #[test]
    fn syntax_errors_have_positions() {
        for (text, want) in [
            ("", "empty"),
            ("a: [1, 2\n", "invalid YAML"),
            ("- 1\n- 2\n", "top level must be a mapping"),
            ("a: &x 1\nb: *x\n", "anchors"),
            ("a: 1\na: 2\n", "duplicate key"),
            ("a: !tag 1\n", "tags"),
        ] {
            let (r, n) = read(text);
            assert!(n.is_none(), "{text:?}");
            let msg = r.diags.items[0].to_string();
            assert!(msg.contains(want), "{text:?}: {msg}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_without_building_a_tree() {
        let text = format!("a: {}1{}\n", "[".repeat(10_000), "]".repeat(10_000));
        let (r, n) = read(&text);
        assert!(n.is_none());
        let m = &r.diags.items[0].message;
        assert!(
            m.contains("nesting deeper") || m.contains("recursion limit"),
            "{m}"
        );
        let block: String = (0..200)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
            .collect();
        let (r, n) = read(&block);
        assert!(n.is_none());
        assert!(
            r.diags.items[0].message.contains("nesting deeper"),
            "{:?}",
            r.diags.items
        );
    }

    #[test]
    fn files_over_the_limit_are_refused_naming_file_and_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.yaml");
        let line = "k: v\n";
        let lines = MAX_CONFIG_BYTES as usize / line.len() + 1;
        std::fs::write(&p, line.repeat(lines)).unwrap();
        let e = read_text(&p).unwrap_err();
        assert!(e.starts_with(&p.display().to_string()), "{e}");
        assert!(
            e.ends_with(&format!(
                "file is {} bytes; the limit is 4194304 bytes (4MiB)",
                lines * line.len()
            )),
            "{e}"
        );
        // At the limit it is read.
        std::fs::write(&p, "a".repeat(16)).unwrap();
        assert_eq!(read_text_max(&p, 16).unwrap().len(), 16);
        assert!(
            read_text_max(&p, 15)
                .unwrap_err()
                .contains("limit is 15 bytes")
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_endless_file_is_refused_unread() {
        // /dev/zero's size reads as 0: it is refused for what it is, before any read.
        let e = read_text_max(Path::new("/dev/zero"), 1024).unwrap_err();
        assert_eq!(
            e,
            "/dev/zero: is a character device, not a regular file (only regular files are read)"
        );
    }

    #[test]
    fn billion_laughs_is_refused_quickly_at_the_first_anchor() {
        // Nine levels of ten aliases each: 10^9 "lol"s if aliases were expanded.
        let mut text = String::from("a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n");
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
        for w in names.windows(2) {
            let refs = vec![format!("*{}", w[0]); 10].join(", ");
            text.push_str(&format!("{}: &{} [{refs}]\n", w[1], w[1]));
        }
        let t = std::time::Instant::now();
        let (r, n) = read(&text);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            t.elapsed()
        );
        assert!(n.is_none());
        assert_eq!(r.diags.items.len(), 1);
        assert_eq!(
            r.diags.items[0].to_string(),
            "(file) (1:7): YAML anchors and aliases are not supported"
        );
    }

    #[test]
    fn the_depth_error_names_the_line_past_the_limit() {
        let block: String = (0..=MAX_DEPTH)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
            .collect::<String>()
            + &format!("{}leaf: 1\n", "  ".repeat(MAX_DEPTH + 1));
        let (r, n) = read(&block);
        assert!(n.is_none());
        let d = &r.diags.items[0];
        assert_eq!(d.message, "nesting deeper than 64 levels");
        // Mapping 65 opens at the 65th key, on line 65.
        assert_eq!(d.pos.map(|p| p.line), Some(MAX_DEPTH + 1), "{d}");
        // One level less is read.
        let ok: String = (0..MAX_DEPTH - 1)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
            .collect::<String>()
            + &format!("{}leaf: 1\n", "  ".repeat(MAX_DEPTH - 1));
        let (r, n) = read(&ok);
        assert!(n.is_some(), "{:?}", r.diags.items);
    }

    crate::yaml_enum!(
        pub enum Color {
            Red = "red",
            Green = "green",
        }
    );

    #[test]
    fn enums() {
        assert_eq!(Color::parse("red"), Ok(Color::Red));
        assert_eq!(
            Color::parse("gren").unwrap_err(),
            "\"gren\" is not one of red, green; did you mean \"green\"?"
        );
        assert_eq!(
            Color::parse("blue").unwrap_err(),
            "\"blue\" is not one of red, green"
        );
        assert_eq!(Color::Green.to_string(), "green");
    }
}
