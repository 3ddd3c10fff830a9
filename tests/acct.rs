//! The accounting vocabulary end to end: every pack's events, rendered with tags by the real
//! generator, give back exactly their (run, agent, seq, sent) through `acct::find_tags` — as
//! rendered, and embedded as a JSON string the way an HEC `"event":"…"` envelope carries them;
//! with the send time (realtime runs) and without it (deterministic ones), and with a
//! scenario stage's tactic and technique.

use ingestbench::acct::{self, Tag};
use ingestbench::generate::{EventCtx, Generator, Stage};
use ingestbench::pack::entities::{Entities, Sizes};
use ingestbench::pack::{self, Catalog};

#[test]
fn every_pack_tags_round_trip() {
    let cat = Catalog::discover(None).expect("packs");
    let entities = Entities::generate(3, &Sizes::default());
    let ids = cat.ids();
    assert!(ids.len() >= 12);
    for id in ids {
        let p = pack::load_compiled(&cat, &id, &semver::VersionReq::STAR, &entities, true)
            .unwrap_or_else(|e| panic!("{id}: {e:?}"));
        let mut g = Generator::new(p.program.clone(), 11, "r-0a1b2c3d4e5f");
        let mut ev = Vec::new();
        let mut all = Vec::new();
        for i in 0..300u64 {
            ev.clear();
            let agent = (i % 7) as u32 * 1000;
            let seq = i * 977;
            let sent_ms = (i % 2 == 0).then_some(1_767_600_000_000 + i * 3);
            let ctx = EventCtx {
                index: i,
                time_ns: 1_767_600_000_000_000_000,
                agent,
                seq,
                sent_ms,
            };
            let staged = i % 3 == 0;
            if staged {
                let stage = Stage {
                    pins: &[],
                    tactic: "TA0006",
                    technique: "T1110.003",
                };
                let event = i as usize % p.program.events.len();
                g.render_stage(event, &ctx, &stage, &mut ev);
            } else {
                g.render(&ctx, &mut ev);
            }
            let want = Tag {
                run: b"r-0a1b2c3d4e5f",
                agent,
                seq,
                sent_ms,
                attack: staged.then_some((&b"TA0006"[..], &b"T1110.003"[..])),
            };
            assert_eq!(
                acct::collect_tags(&ev),
                vec![want],
                "{id} event {i}: {}",
                String::from_utf8_lossy(&ev)
            );
            let s = serde_json::to_string(&String::from_utf8_lossy(&ev)).unwrap();
            let envelope = format!(r#"{{"time":1,"event":{s}}}"#);
            assert_eq!(
                acct::collect_tags(envelope.as_bytes()),
                vec![want],
                "{id} event {i} as a JSON string: {envelope}"
            );
            all.extend_from_slice(&ev);
            all.push(b'\n');
        }
        assert_eq!(
            acct::collect_tags(&all).len(),
            300,
            "{id}: tags in one buffer"
        );
    }
}
