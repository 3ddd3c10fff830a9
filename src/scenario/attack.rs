//! The shipped MITRE ATT&CK Enterprise table (v18.1: 14 tactics, 216 techniques, 475
//! sub-techniques, none revoked or deprecated), what scenario stages and pack `mitre:` tags
//! are checked against. The data is `enterprise-attack-v18.1.tsv`, read from the STIX objects
//! of `mitre/cti` at the commit "ATT&CK v18.1 Enterprise"; it is parsed once, on first use.

use std::sync::OnceLock;

/// The ATT&CK release the table was read from.
pub const VERSION: &str = "ATT&CK Enterprise v18.1";

/// Enterprise tactics, in kill-chain order: (id, name).
pub const TACTICS: &[(&str, &str)] = &[
    ("TA0043", "Reconnaissance"),
    ("TA0042", "Resource Development"),
    ("TA0001", "Initial Access"),
    ("TA0002", "Execution"),
    ("TA0003", "Persistence"),
    ("TA0004", "Privilege Escalation"),
    ("TA0005", "Defense Evasion"),
    ("TA0006", "Credential Access"),
    ("TA0007", "Discovery"),
    ("TA0008", "Lateral Movement"),
    ("TA0009", "Collection"),
    ("TA0011", "Command and Control"),
    ("TA0010", "Exfiltration"),
    ("TA0040", "Impact"),
];

const DATA: &str = include_str!("enterprise-attack-v18.1.tsv");

/// One technique or sub-technique.
#[derive(Debug, PartialEq, Eq)]
pub struct Technique {
    pub id: &'static str,
    pub name: &'static str,
    /// The tactic ids it serves.
    pub tactics: Vec<&'static str>,
}

impl Technique {
    /// `T1110.003` → `T1110`; a technique is its own parent.
    pub fn parent_id(&self) -> &'static str {
        self.id.split('.').next().unwrap_or(self.id)
    }

    pub fn serves(&self, tactic: &str) -> bool {
        self.tactics.contains(&tactic)
    }

    /// Whether an event tagged `tag` evidences this technique: the same id, or one of its
    /// sub-techniques (a stage asking for T1059 takes events tagged T1059.001).
    pub fn covers(&self, tag: &str) -> bool {
        tag == self.id
            || (!self.id.contains('.')
                && tag
                    .strip_prefix(self.id)
                    .is_some_and(|r| r.starts_with('.')))
    }
}

fn table() -> &'static [Technique] {
    static TABLE: OnceLock<Vec<Technique>> = OnceLock::new();
    TABLE.get_or_init(|| {
        DATA.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let mut f = l.split('\t');
                let (id, name, tactics) = (f.next()?, f.next()?, f.next()?);
                Some(Technique {
                    id,
                    name,
                    tactics: tactics.split(',').collect(),
                })
            })
            .collect()
    })
}

/// Every technique and sub-technique of the table, sorted by id.
pub fn all() -> &'static [Technique] {
    table()
}

/// The technique `id` (exact spelling, e.g. `T1059.001`).
pub fn technique(id: &str) -> Option<&'static Technique> {
    let t = table();
    t.binary_search_by(|x| x.id.cmp(id))
        .ok()
        .and_then(|i| t.get(i))
}

/// The name of tactic `id`.
pub fn tactic_name(id: &str) -> Option<&'static str> {
    TACTICS.iter().find(|(t, _)| *t == id).map(|(_, n)| *n)
}

/// `TA0006 Credential Access`, the form tactics are named in messages.
pub fn tactic_label(id: &str) -> String {
    match tactic_name(id) {
        Some(n) => format!("{id} {n}"),
        None => id.to_string(),
    }
}

/// Why `id` is not a technique in the table, with the nearest known ids.
pub fn unknown_technique(id: &str) -> String {
    let looks = id.len() >= 5
        && id.starts_with('T')
        && id[1..]
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    if !looks {
        return format!("{id:?} is not an ATT&CK technique id such as T1110 or T1059.001");
    }
    let parent = id.split('.').next().unwrap_or(id);
    let subs: Vec<&str> = table()
        .iter()
        .filter(|t| t.parent_id() == parent && t.id != parent)
        .map(|t| t.id)
        .collect();
    let hint = if subs.is_empty() {
        String::new()
    } else {
        format!("; known under {parent}: {}", subs.join(", "))
    };
    format!("{id} is not a technique in {VERSION}{hint}")
}

/// Why `id` is not a tactic, with the list of tactics.
pub fn unknown_tactic(id: &str) -> String {
    let all: Vec<String> = TACTICS.iter().map(|(t, n)| format!("{t} {n}")).collect();
    format!(
        "{id:?} is not an {VERSION} tactic (tactics: {})",
        all.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_every_technique_of_the_release() {
        let t = table();
        assert_eq!(t.iter().filter(|x| !x.id.contains('.')).count(), 216);
        assert_eq!(t.iter().filter(|x| x.id.contains('.')).count(), 475);
        assert!(t.windows(2).all(|w| w[0].id < w[1].id), "sorted for lookup");
        for x in t {
            for tac in &x.tactics {
                assert!(
                    tactic_name(tac).is_some(),
                    "{} has unknown tactic {tac}",
                    x.id
                );
            }
        }
    }

    #[test]
    fn lookups_and_names() {
        let b = technique("T1110").unwrap();
        assert_eq!(b.name, "Brute Force");
        assert_eq!(b.tactics, ["TA0006"]);
        let v = technique("T1078").unwrap();
        assert!(v.serves("TA0001") && v.serves("TA0003") && !v.serves("TA0006"));
        assert_eq!(technique("T1219").unwrap().name, "Remote Access Tools");
        assert!(technique("T1574.002").is_none(), "revoked since v17.0");
        assert_eq!(tactic_label("TA0011"), "TA0011 Command and Control");
    }

    #[test]
    fn a_technique_covers_itself_and_its_sub_techniques_only() {
        let t = technique("T1059").unwrap();
        assert!(t.covers("T1059") && t.covers("T1059.001"));
        assert!(!t.covers("T10590") && !t.covers("T1110"));
        let s = technique("T1059.001").unwrap();
        assert!(s.covers("T1059.001") && !s.covers("T1059") && !s.covers("T1059.003"));
    }

    #[test]
    fn unknown_ids_are_explained() {
        assert!(unknown_technique("T1110.999").contains("known under T1110: T1110.001"));
        assert!(unknown_technique("brute").contains("not an ATT&CK technique id"));
        assert!(unknown_tactic("TA0099").contains("TA0006 Credential Access"));
    }
}
