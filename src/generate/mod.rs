//! The event generator: renders one event of a compiled `program::Program` into a caller's
//! buffer. Event i depends only on (seed, the program's per-source salt, i) and the context the
//! caller passes (time, agent, sequence number), so the same seed gives the same bytes whatever
//! the thread count, and two sources rendered with one seed do not share ids. Rendering draws every slot
//! once, then walks the event's ops: literal copies, pre-escaped table entries, and numbers
//! written with `num`. No allocation (once the output buffer has room), no locks, no I/O.

pub mod alias;
pub mod program;
pub mod replay;
pub mod replay_stream;
pub mod time;
pub mod timeline;

use std::sync::Arc;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::bytes::{
    Sink, write_hex, write_hex_min, write_i64, write_u64, write_u64_padded, write_uuid,
};
use program::{AcctStyle, Draw, NumFmt, Op, Program};
use time::TsWriter;

/// What the caller knows about the event being rendered.
#[derive(Clone, Copy, Debug, Default)]
pub struct EventCtx {
    /// The event's index in the run (its identity for determinism and counters).
    pub index: u64,
    /// The event's time before jitter and slot offsets, ns since the epoch.
    pub time_ns: i64,
    /// The accounting agent (worker/connection).
    pub agent: u32,
    /// The accounting sequence number within the agent.
    pub seq: u64,
    /// When its batch was due to be sent (the intended time, wall clock, ms since the epoch),
    /// carried in the accounting tag so a store can tell the send → stored lag; `None` where
    /// events must depend on (seed, index) alone (deterministic mode, `gen`, packs' checks).
    pub sent_ms: Option<u64>,
}

/// What a scenario stage adds to an event it renders: entities pinned for the whole scenario
/// and the stage's ATT&CK ids, written into the accounting tag.
#[derive(Clone, Copy, Debug)]
pub struct Stage<'a> {
    /// (slot, entity index): the slot renders this entity instead of a draw.
    pub pins: &'a [(u16, u64)],
    pub tactic: &'a str,
    pub technique: &'a str,
}

pub struct Generator {
    program: Arc<Program>,
    /// The run's seed mixed with the program's salt.
    seed: u64,
    jitter_ns: u64,
    run_id: Vec<u8>,
    vals: Vec<[u64; 2]>,
    ts: Vec<TsWriter>,
    /// The last send time written and its digits: a batch's events share one, so it is
    /// formatted once per batch, not per event.
    sent: SentDigits,
}

/// A send time and its decimal digits.
#[derive(Clone, Default)]
pub(crate) struct SentDigits {
    ms: Option<u64>,
    digits: [u8; 20],
    len: usize,
}

impl SentDigits {
    /// The digits of `ms`, formatted only when it differs from the last one.
    #[inline]
    #[allow(
        clippy::indexing_slicing,
        reason = "digits has 20 bytes, the most a u64 has in decimal"
    )]
    fn of(&mut self, ms: u64) -> &[u8] {
        if self.ms != Some(ms) {
            let mut b = itoa::Buffer::new();
            let d = b.format(ms).as_bytes();
            self.digits[..d.len()].copy_from_slice(d);
            self.len = d.len();
            self.ms = Some(ms);
        }
        &self.digits[..self.len]
    }
}

/// Spreads an event index over the seed space (SplitMix64's finaliser).
#[inline]
fn mix(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform draw in `0..span` from 64 random bits.
#[inline]
fn below(r: u64, span: u64) -> u64 {
    ((u128::from(r) * u128::from(span)) >> 64) as u64
}

impl Generator {
    /// `run_id` is copied once; `seed` fixes every random choice, together with the program's
    /// per-source salt (mixed in here, once, not per event).
    pub fn new(program: Arc<Program>, seed: u64, run_id: &str) -> Self {
        let vals = vec![[0; 2]; program.max_slots];
        let ts = program.ts_sites.iter().map(|f| TsWriter::new(*f)).collect();
        Generator {
            seed: mix(seed, program.salt),
            program,
            jitter_ns: 0,
            run_id: run_id.as_bytes().to_vec(),
            vals,
            ts,
            sent: SentDigits::default(),
        }
    }

    /// Each event's time moves by a uniform amount in `-jitter..=jitter`.
    pub fn with_jitter(mut self, jitter_ns: u64) -> Self {
        self.jitter_ns = jitter_ns;
        self
    }

    /// Appends one event to `out`; returns the index of the event type chosen.
    #[inline]
    pub fn render(&mut self, ctx: &EventCtx, out: &mut Vec<u8>) -> usize {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix(self.seed, ctx.index));
        let e = self.program.pick.sample(rng.next_u64());
        self.render_with(e, &mut rng, ctx, None, out);
        e
    }

    /// Appends one event of type `event` (an index into the program's events).
    pub fn render_event(&mut self, event: usize, ctx: &EventCtx, out: &mut Vec<u8>) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix(self.seed, ctx.index));
        let _ = rng.next_u64();
        self.render_with(event, &mut rng, ctx, None, out);
    }

    /// Appends one event of type `event` for a scenario stage: its pinned slots render the
    /// scenario's entities and its tag carries the stage's tactic and technique.
    pub fn render_stage(&mut self, event: usize, ctx: &EventCtx, stage: &Stage, out: &mut Vec<u8>) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix(self.seed, ctx.index));
        let _ = rng.next_u64();
        self.render_with(event, &mut rng, ctx, Some(stage), out);
    }

    #[allow(
        clippy::indexing_slicing,
        reason = "per-event hot path; pack::compile makes every op's literal range lie within its \
                  event's lit, its table index < tables.len() and its slot < max_slots (vals has \
                  max_slots entries); event comes from the program's own sampler or a compiled \
                  stage, < events.len()"
    )]
    fn render_with(
        &mut self,
        event: usize,
        rng: &mut Xoshiro256PlusPlus,
        ctx: &EventCtx,
        stage: Option<&Stage>,
        out: &mut Vec<u8>,
    ) {
        let program = &*self.program;
        let ev = &program.events[event];
        let time = if self.jitter_ns == 0 {
            ctx.time_ns
        } else {
            let j = below(rng.next_u64(), 2 * self.jitter_ns + 1) as i64 - self.jitter_ns as i64;
            ctx.time_ns.saturating_add(j)
        };
        for (slot, d) in self.vals.iter_mut().zip(&ev.draws) {
            *slot = draw(d, rng, ctx, time);
        }
        if let Some(st) = stage {
            for &(slot, v) in st.pins {
                if let Some(x) = self.vals.get_mut(usize::from(slot)) {
                    *x = [v, 0];
                }
            }
        }
        let lit = &ev.lit;
        for op in &ev.ops {
            match op {
                Op::Lit { start, end } => {
                    out.extend_from_slice(&lit[*start as usize..*end as usize])
                }
                Op::Str { slot, table } => {
                    out.extend_from_slice(
                        program.tables[*table as usize].get(self.vals[*slot as usize][0] as usize),
                    );
                }
                Op::Num { slot, how } => {
                    let v = self.vals[*slot as usize];
                    write_num(*how, v, &mut self.ts, out);
                }
                Op::Acct(style) => {
                    write_acct(*style, &self.run_id, ctx, &mut self.sent, out);
                    if let Some(st) = stage {
                        write_attack(*style, st, out);
                    }
                    out.put_slice(acct_pieces(*style)[3]);
                }
            }
        }
    }
}

#[inline]
fn draw(d: &Draw, rng: &mut Xoshiro256PlusPlus, ctx: &EventCtx, time: i64) -> [u64; 2] {
    match d {
        Draw::Choice(a) => [a.sample(rng.next_u64()) as u64, 0],
        Draw::Entity { n } => {
            let x = rng.next_u64() >> 32;
            [(((x * x) >> 32) * n) >> 32, 0]
        }
        Draw::Int { min, span } => [
            min.wrapping_add(below(rng.next_u64(), *span) as i64) as u64,
            0,
        ],
        Draw::IntLog {
            ln_lo,
            ln_hi,
            shift,
            max,
        } => {
            let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            let v = (ln_lo + u * (ln_hi - ln_lo)).exp() as i64 - shift;
            [v.clamp(0, *max) as u64, 0]
        }
        Draw::Ipv4 { base, size } => [u64::from(*base) + below(rng.next_u64(), *size), 0],
        Draw::Ipv6 { base, host_bits } => {
            let r = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
            let host = if *host_bits >= 128 {
                r
            } else {
                r & ((1u128 << host_bits) - 1)
            };
            let v = base | host;
            [(v >> 64) as u64, v as u64]
        }
        Draw::Random => [rng.next_u64(), rng.next_u64()],
        Draw::Counter { start, step } => [
            start.wrapping_add(step.wrapping_mul(ctx.index as i64)) as u64,
            0,
        ],
        Draw::Time { lo, span } => {
            let off = if *span <= 1 {
                *lo
            } else {
                lo.wrapping_add(below(rng.next_u64(), *span) as i64)
            };
            [time.wrapping_add(off) as u64, 0]
        }
        Draw::Seq => [ctx.seq, 0],
    }
}

#[inline]
#[allow(
    clippy::indexing_slicing,
    reason = "per-event hot path; a Ts site is an index pack::compile gave into the generator's \
              ts writers, one per site"
)]
fn write_num(how: NumFmt, v: [u64; 2], ts: &mut [TsWriter], out: &mut Vec<u8>) {
    match how {
        NumFmt::Dec => write_u64(v[0], out),
        NumFmt::SignedDec => write_i64(v[0] as i64, out),
        NumFmt::HexPrefixed => {
            out.extend_from_slice(b"0x");
            write_hex_min(v[0], false, out);
        }
        NumFmt::HexUpper => write_hex_min(v[0], true, out),
        NumFmt::Float { decimals } => {
            let x = v[0] as i64;
            if x < 0 {
                out.push(b'-');
            }
            let a = x.unsigned_abs();
            if decimals == 0 {
                write_u64(a, out);
            } else {
                let scale = 10u64.pow(u32::from(decimals));
                write_u64(a / scale, out);
                out.push(b'.');
                write_u64_padded(a % scale, usize::from(decimals), out);
            }
        }
        NumFmt::Ipv4 => write_ipv4(v[0] as u32, out),
        NumFmt::Ipv6 => write_ipv6((u128::from(v[0]) << 64) | u128::from(v[1]), out),
        NumFmt::Uuid { upper } => write_uuid(v[0], v[1], upper, out),
        NumFmt::Hex { len, upper } => {
            let len = usize::from(len);
            let mut left = len;
            let words = [
                v[0],
                v[1],
                v[0].rotate_left(17) ^ v[1],
                v[1].rotate_left(29) ^ v[0],
            ];
            for w in words {
                if left == 0 {
                    break;
                }
                let n = left.min(16);
                write_hex(w, n, upper, out);
                left -= n;
            }
        }
        NumFmt::Ts(site) => ts[site as usize].write(v[0] as i64, out),
    }
}

#[inline]
pub fn write_ipv4(a: u32, out: &mut Vec<u8>) {
    let [first, rest @ ..] = a.to_be_bytes();
    write_u64(u64::from(first), out);
    for x in rest {
        out.push(b'.');
        write_u64(u64::from(x), out);
    }
}

/// RFC 5952 text: lower-case hex, the longest run of two or more zero groups as `::`.
#[allow(
    clippy::indexing_slicing,
    reason = "g has 8 entries and i < 8 is the loop condition"
)]
pub fn write_ipv6(a: u128, out: &mut Vec<u8>) {
    let g: [u16; 8] = std::array::from_fn(|i| (a >> (112 - 16 * i)) as u16);
    let (mut best, mut best_len, mut cur, mut cur_len) = (8, 0, 0, 0);
    for (i, x) in g.iter().enumerate() {
        if *x == 0 {
            if cur_len == 0 {
                cur = i;
            }
            cur_len += 1;
            if cur_len > best_len {
                best = cur;
                best_len = cur_len;
            }
        } else {
            cur_len = 0;
        }
    }
    if best_len < 2 {
        best = 8;
    }
    let mut i = 0;
    while i < 8 {
        if i == best {
            out.extend_from_slice(b"::");
            i += best_len;
            continue;
        }
        if i > 0 && i != best + best_len {
            out.push(b':');
        }
        write_hex_min(u64::from(g[i]), false, out);
        i += 1;
    }
}

/// The literal before the send time in each style (the tag's optional fourth member).
fn acct_sent_piece(style: AcctStyle) -> &'static [u8] {
    match style {
        AcctStyle::Json { .. } => b",\"sent\":",
        AcctStyle::Sd => b"\" sent=\"",
        AcctStyle::Cef => b" ingestbenchSent=",
        AcctStyle::Kv => b" ingestbench_sent=",
        AcctStyle::Csv => b",ingestbench_sent=",
    }
}

/// The literal pieces around the run id, the agent and the sequence number in each style.
fn acct_pieces(style: AcctStyle) -> [&'static [u8]; 4] {
    match style {
        AcctStyle::Json {
            leading_comma: true,
        } => [
            b",\"ingestbench\":{\"run\":\"",
            b"\",\"agent\":",
            b",\"seq\":",
            b"}",
        ],
        AcctStyle::Json {
            leading_comma: false,
        } => [
            b"\"ingestbench\":{\"run\":\"",
            b"\",\"agent\":",
            b",\"seq\":",
            b"}",
        ],
        AcctStyle::Sd => [
            b"[ingestbench@32473 run=\"",
            b"\" agent=\"",
            b"\" seq=\"",
            b"\"]",
        ],
        AcctStyle::Cef => [
            b" ingestbenchRun=",
            b" ingestbenchAgent=",
            b" ingestbenchSeq=",
            b"",
        ],
        AcctStyle::Kv => [
            b" ingestbench_run=",
            b" ingestbench_agent=",
            b" ingestbench_seq=",
            b"",
        ],
        AcctStyle::Csv => [
            b",ingestbench_run=",
            b",ingestbench_agent=",
            b",ingestbench_seq=",
            b"",
        ],
    }
}

pub(crate) fn write_acct(
    style: AcctStyle,
    run: &[u8],
    ctx: &EventCtx,
    sent: &mut SentDigits,
    out: &mut Vec<u8>,
) {
    let [before_run, before_agent, before_seq, _] = acct_pieces(style);
    out.put_slice(before_run);
    out.put_slice(run);
    out.put_slice(before_agent);
    write_u64(u64::from(ctx.agent), out);
    out.put_slice(before_seq);
    write_u64(ctx.seq, out);
    if let Some(ms) = ctx.sent_ms {
        out.put_slice(acct_sent_piece(style));
        out.put_slice(sent.of(ms));
    }
}

/// What closes a tag `write_acct` began.
pub(crate) fn acct_close(style: AcctStyle) -> &'static [u8] {
    acct_pieces(style)[3]
}

/// A stage's tactic and technique inside the tag, before its closing piece.
fn write_attack(style: AcctStyle, stage: &Stage, out: &mut Vec<u8>) {
    let [before_tactic, before_technique, after] = attack_pieces(style);
    out.put_slice(before_tactic);
    out.put_slice(stage.tactic.as_bytes());
    out.put_slice(before_technique);
    out.put_slice(stage.technique.as_bytes());
    out.put_slice(after);
}

/// The literal pieces around the tactic and the technique in each style (the tag's optional
/// fifth and sixth members).
fn attack_pieces(style: AcctStyle) -> [&'static [u8]; 3] {
    match style {
        AcctStyle::Json { .. } => [b",\"tactic\":\"", b"\",\"technique\":\"", b"\""],
        AcctStyle::Sd => [b"\" tactic=\"", b"\" technique=\"", b""],
        AcctStyle::Cef => [b" ingestbenchTactic=", b" ingestbenchTechnique=", b""],
        AcctStyle::Kv => [b" ingestbench_tactic=", b" ingestbench_technique=", b""],
        AcctStyle::Csv => [b",ingestbench_tactic=", b",ingestbench_technique=", b""],
    }
}

/// An event for a person: indented JSON for JSON events, anything else as it is.
pub fn pretty(ev: &[u8], json: bool) -> String {
    if json && let Ok(v) = serde_json::from_slice::<serde_json::Value>(ev) {
        return serde_json::to_string_pretty(&v).unwrap_or_default();
    }
    String::from_utf8_lossy(ev).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6(s: &str) -> String {
        let a: std::net::Ipv6Addr = s.parse().unwrap();
        let mut out = Vec::new();
        write_ipv6(u128::from(a), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ipv6_text_matches_std() {
        for s in [
            "2001:db8::1",
            "::",
            "::1",
            "2001:db8:0:1:1:1:1:1",
            "2001:0:0:1::1",
            "fe80::1:0:0:1",
            "1:2:3:4:5:6:7:8",
            "2001:db8:85a3::8a2e:370:7334",
        ] {
            let want = s.parse::<std::net::Ipv6Addr>().unwrap().to_string();
            assert_eq!(v6(s), want, "{s}");
        }
    }

    #[test]
    fn ipv4_text() {
        let mut out = Vec::new();
        write_ipv4(0x0a14_0e57, &mut out);
        assert_eq!(out, b"10.20.14.87");
    }

    /// One event type whose only op writes a random UUID.
    fn uuid_program(salt: u64) -> Arc<Program> {
        Arc::new(Program {
            events: vec![program::CompiledEvent {
                name: "e".into(),
                weight: 1,
                mitre: Vec::new(),
                lit: Vec::new(),
                ops: vec![Op::Num {
                    slot: 0,
                    how: NumFmt::Uuid { upper: false },
                }],
                draws: vec![Draw::Random],
                slot_names: vec!["id".into()],
            }],
            pick: alias::Alias::new(&[1]),
            tables: Vec::new(),
            max_slots: 1,
            accounting: false,
            ts_sites: Vec::new(),
            salt,
        })
    }

    fn uuids(salt: u64, seed: u64) -> Vec<Vec<u8>> {
        let mut g = Generator::new(uuid_program(salt), seed, "r");
        (0..50)
            .map(|index| {
                let mut out = Vec::new();
                g.render(
                    &EventCtx {
                        index,
                        ..EventCtx::default()
                    },
                    &mut out,
                );
                out
            })
            .collect()
    }

    #[test]
    fn the_salt_separates_sources_and_keeps_each_deterministic() {
        let (a, b) = (Program::salt_of("pack.a"), Program::salt_of("pack.b"));
        assert_ne!(a, b);
        assert_eq!(a, Program::salt_of("pack.a"));
        assert_eq!(uuids(a, 7), uuids(a, 7));
        let (one, other) = (uuids(a, 7), uuids(b, 7));
        assert!(one.iter().all(|u| !other.contains(u)));
        assert_ne!(uuids(a, 7), uuids(a, 8));
    }

    #[test]
    fn below_is_in_range() {
        for r in [0, 1, u64::MAX, 1 << 63] {
            assert!(below(r, 7) < 7);
        }
        assert_eq!(below(u64::MAX, 1), 0);
    }
}
