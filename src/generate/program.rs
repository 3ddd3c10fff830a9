//! The compiled program a generator runs: per event type, its ops (literal byte ranges, slot
//! sites, the accounting tag) and slot draws; per pack, the string tables of pre-escaped values,
//! the timestamp sites, the event-type picker and the per-source salt. Plain data, built once by `pack::compile`
//! and read by `Generator`; `generate` imports nothing from `pack` (pack → generate, one way).

use crate::generate::alias::Alias;
use crate::generate::time::TsFormat;

/// Strings addressed by index, stored back to back.
#[derive(Clone, Debug, Default)]
pub struct StrTable {
    ends: Vec<u32>,
    data: Vec<u8>,
}

impl StrTable {
    pub(crate) fn push(&mut self, s: &[u8]) {
        self.data.extend_from_slice(s);
        self.ends.push(self.data.len() as u32);
    }

    #[inline]
    #[allow(
        clippy::indexing_slicing,
        reason = "per-event hot path; ends holds cumulative ends into data, and i is a table row \
                  drawn below len() (pack::compile bounds every draw by its table's length)"
    )]
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.data[start..self.ends[i] as usize]
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// How a drawn number is written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumFmt {
    Dec,
    SignedDec,
    /// `0x1a2b` (lower case, prefixed)
    HexPrefixed,
    /// `1A2B` (upper case, bare)
    HexUpper,
    Float {
        decimals: u8,
    },
    Ipv4,
    Ipv6,
    Uuid {
        upper: bool,
    },
    Hex {
        len: u8,
        upper: bool,
    },
    Ts(u16),
}

/// Where the accounting tag goes and how it looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcctStyle {
    /// `,"ingestbench":{…}` (default place) or `"ingestbench":{…}` (explicit `{{@acct}}`).
    Json { leading_comma: bool },
    /// `[ingestbench@32473 run="…" agent="…" seq="…"]`
    Sd,
    /// ` ingestbenchRun=… ingestbenchAgent=… ingestbenchSeq=…`
    Cef,
    /// ` ingestbench_run=… ingestbench_agent=… ingestbench_seq=…`
    Kv,
    /// `,ingestbench_run=…,ingestbench_agent=…,ingestbench_seq=…`
    Csv,
}

#[derive(Clone, Debug)]
pub enum Op {
    Lit { start: u32, end: u32 },
    Str { slot: u16, table: u32 },
    Num { slot: u16, how: NumFmt },
    Acct(AcctStyle),
}

/// How a slot's value is drawn, once per event.
#[derive(Clone, Debug)]
pub enum Draw {
    Choice(Alias),
    /// Skewed toward low indices: a few entities are busy, most are quiet.
    Entity {
        n: u64,
    },
    Int {
        min: i64,
        span: u64,
    },
    IntLog {
        ln_lo: f64,
        ln_hi: f64,
        shift: i64,
        max: i64,
    },
    Ipv4 {
        base: u32,
        size: u64,
    },
    Ipv6 {
        base: u128,
        host_bits: u8,
    },
    Random,
    Counter {
        start: i64,
        step: i64,
    },
    Time {
        lo: i64,
        span: u64,
    },
    Seq,
}

#[derive(Clone, Debug)]
pub struct CompiledEvent {
    pub name: String,
    pub weight: u32,
    pub mitre: Vec<String>,
    pub lit: Vec<u8>,
    pub ops: Vec<Op>,
    pub draws: Vec<Draw>,
    /// Field names in draw order (for `sources show`).
    pub slot_names: Vec<String>,
}

/// Everything a `Generator` needs to render a pack's events.
#[derive(Clone, Debug)]
pub struct Program {
    pub events: Vec<CompiledEvent>,
    pub pick: Alias,
    pub tables: Vec<StrTable>,
    pub max_slots: usize,
    pub accounting: bool,
    /// The format of each timestamp site, in `NumFmt::Ts` index order.
    pub ts_sites: Vec<TsFormat>,
    /// Mixed into the run's seed once per generator, so event `i` of two sources rendered with
    /// one seed draws different numbers (no shared ids across sources in one SIEM) while each
    /// source stays a pure function of (seed, salt, index). `pack::compile` sets it from the
    /// pack id with [`Program::salt_of`].
    pub salt: u64,
}

impl Program {
    /// The salt of the source named `id`: a stable 64-bit hash of its bytes (FNV-1a, then
    /// SplitMix64's finaliser), the same on every platform and in every build.
    pub fn salt_of(id: &str) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in id.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }
}
