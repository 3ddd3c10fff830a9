//! Loss by stage: every event the schedule asked for in its window put in exactly one stage —
//! not sent (the shortfall, and whose it is), refused (failed for good, split by what the
//! failure counters can tell), unconfirmed (syslog written and never confirmed, by cause),
//! accepted; and the accepted split again into stored and
//! accepted-but-not-stored where a store was asked (the built-in sink's `verification`, the
//! config's `verify` stores). Beside the stages: the copies a store holds twice, and for a UDP
//! target the datagrams the receiving socket's buffer dropped (`observe::udp_drops`). Built
//! from figures the report already holds (`of`), by one pure function (`stage`); the text
//! block is `text`. Nothing here reads the environment.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::observe::udp_drops::RcvbufDrops;
use crate::report::text::count;
use crate::report::{GivenUpAfter, Report, Summary};

#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Loss {
    /// Events due in the schedule's window (`target_eps × window_s`).
    pub scheduled: u64,
    /// Due and never sent (`summary.shortfall_events`).
    pub not_sent: u64,
    /// Whose the shortfall is (`summary.shortfall_by`).
    #[serde(deserialize_with = "crate::report::de::leak")]
    pub not_sent_by: &'static str,
    /// Sent and failed for good (`summary.events_failed`), split by what is known of why.
    pub refused: Refused,
    /// Syslog over TCP, TLS or UDP: written and never confirmed (`summary.events_unconfirmed`),
    /// and by cause; left out when there are none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unconfirmed: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unconfirmed_by: BTreeMap<String, u64>,
    /// Sent and accepted (HTTP 2xx; syslog: taken by the peer's TCP and kept, UDP: sent).
    pub accepted: u64,
    /// Of the accepted, those the store holds, by the store that found the most missing
    /// (`store`); null when no store was asked.
    pub stored: Option<u64>,
    /// Of the accepted, those the store does not hold (at most `accepted`: a store's count
    /// covers the warm-up too); null when no store was asked.
    pub accepted_not_stored: Option<u64>,
    /// The store `stored` and `accepted_not_stored` come from: `built-in sink`, or a
    /// `verify.sources` spec.
    pub store: Option<String>,
    /// Copies beyond the first that store holds. Beside the stages, not one of them: an event
    /// stored twice is stored.
    pub duplicated: Option<u64>,
    /// Every store asked, with its own figures.
    pub stores: Vec<StoreLoss>,
    /// UDP targets: the datagrams the receiving socket's buffer dropped during the run, from
    /// /proc/net/udp, or why that cannot be read. Part of `accepted_not_stored` where a store
    /// was asked; a lower bound of the loss where none was (when the run is the port's only
    /// sender: the kernel counts every sender's datagrams).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_rcvbuf_drops: Option<RcvbufDrops>,
    /// `scheduled − (not_sent + refused + unconfirmed + accepted)`: 0 when the counters close. Negative when
    /// events due in the warm-up were answered in the window (they count as answered, not as
    /// scheduled); positive when sent events were never answered either way.
    pub unattributed: i64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The refused events: an exact split by what the counters count in events, and the causes
/// behind them as the attempts met them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Refused {
    pub events: u64,
    /// In batches given up after the retry limits (429/503 and HEC busy codes, resets,
    /// timeouts: whatever made them go again).
    pub retries_exhausted: u64,
    /// Syslog messages over `max_message_bytes`, left out.
    pub oversize: u64,
    /// The rest: refused by an answer that is not retried (4xx/5xx other than 429/503,
    /// 401/403) or still unanswered when the run ended.
    pub other: u64,
    /// Each event once, by what failed it for good: the refusing answer's status (`other`'s
    /// answered part), what the last attempt of a batch given up after its retries met
    /// (`retries_exhausted` split), and the events still unanswered at the end.
    pub by_status: BTreeMap<String, u64>,
    pub given_up_after: GivenUpAfter,
    pub unfinished: u64,
    /// Of `other`: answered 2xx in words the engine cannot read (never resent; the store may
    /// hold them), and refused by an HEC code (`{"6": n}`, a 200 included).
    #[serde(default)]
    pub unreadable_2xx: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_hec_code: BTreeMap<String, u64>,
    /// Counted per attempt, not per event: what the attempts met.
    pub causes: Causes,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Causes {
    pub status_429: u64,
    pub status_503: u64,
    /// 4xx answers other than 429, 401 and 403.
    pub status_4xx: u64,
    /// 5xx answers other than 503.
    pub status_5xx: u64,
    /// 401 and 403 answers (the run stops at the first).
    pub auth_failures: u64,
    pub connect_errors: u64,
    pub connection_resets: u64,
    pub timeouts: u64,
}

/// What one store said.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct StoreLoss {
    pub store: String,
    /// Accepted events it does not hold (over the whole run, warm-up included).
    pub lost: u64,
    pub duplicated: u64,
    /// False when the run's failed lists overflowed: `lost` is not exact.
    pub exact: bool,
}

/// The figures the stages are made of.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    pub scheduled: u64,
    pub shortfall: u64,
    pub shortfall_by: &'static str,
    pub accepted: u64,
    pub failed: u64,
    pub unconfirmed: u64,
    pub unconfirmed_by: BTreeMap<String, u64>,
    pub retries_exhausted: u64,
    pub oversize: u64,
    pub by_status: BTreeMap<String, u64>,
    pub given_up_after: GivenUpAfter,
    pub unfinished: u64,
    pub unreadable_2xx: u64,
    pub by_hec_code: BTreeMap<String, u64>,
    pub causes: Causes,
    pub stores: Vec<StoreLoss>,
    pub udp: Option<RcvbufDrops>,
}

/// The stages of `rep` (`scheduled`: the events due in its window), with the UDP target's
/// receive-buffer drops when they were read.
pub fn of(rep: &Report, scheduled: u64, udp: Option<RcvbufDrops>) -> Loss {
    let s = &rep.summary;
    stage(&Figures {
        scheduled,
        shortfall: s.shortfall_events,
        shortfall_by: s.shortfall_by,
        accepted: s.events_accepted,
        failed: s.events_failed,
        unconfirmed: s.events_unconfirmed,
        unconfirmed_by: s.events_unconfirmed_by.clone(),
        retries_exhausted: s.events_retries_exhausted,
        oversize: s.oversize_events,
        by_status: s.events_failed_by_status.clone(),
        given_up_after: s.events_given_up_after.clone(),
        unfinished: s.events_unfinished,
        unreadable_2xx: s.events_unreadable_2xx,
        by_hec_code: s.events_failed_by_hec_code.clone(),
        causes: causes(s, &rep.status),
        stores: stores(rep),
        udp,
    })
}

/// The attempts' answers and errors, by cause.
fn causes(s: &Summary, status: &BTreeMap<String, u64>) -> Causes {
    let mut c = Causes {
        auth_failures: s.auth_failures,
        connect_errors: s.connect_errors,
        connection_resets: s.connection_resets,
        timeouts: s.timeouts,
        ..Causes::default()
    };
    for (code, n) in status {
        match code.parse::<u16>().unwrap_or(0) {
            429 => c.status_429 += n,
            503 => c.status_503 += n,
            401 | 403 => {}
            400..=499 => c.status_4xx += n,
            500..=599 => c.status_5xx += n,
            _ => {}
        }
    }
    c
}

/// Every store that said what it holds: the built-in sink, then the `verify` stores.
fn stores(rep: &Report) -> Vec<StoreLoss> {
    let builtin = rep.verification.iter().map(|v| StoreLoss {
        store: v.store.clone(),
        lost: v.lost_events,
        duplicated: v.duplicates,
        exact: true,
    });
    let asked = rep
        .store_verification
        .iter()
        .filter_map(|sv| sv.result.as_ref())
        .flat_map(|v| {
            v.sources.iter().map(|src| StoreLoss {
                store: src.source.clone(),
                lost: src.comparison.lost,
                duplicated: src.comparison.duplicated,
                exact: v.exact,
            })
        });
    builtin.chain(asked).collect()
}

/// The stages, pure.
pub fn stage(f: &Figures) -> Loss {
    let refused = Refused {
        events: f.failed,
        retries_exhausted: f.retries_exhausted.min(f.failed),
        oversize: f.oversize.min(f.failed.saturating_sub(f.retries_exhausted)),
        other: f.failed.saturating_sub(f.retries_exhausted + f.oversize),
        by_status: f.by_status.clone(),
        given_up_after: f.given_up_after.clone(),
        unfinished: f.unfinished,
        unreadable_2xx: f.unreadable_2xx,
        by_hec_code: f.by_hec_code.clone(),
        causes: f.causes.clone(),
    };
    // The store that found the most missing speaks for the stage (the first on a tie).
    let worst = f
        .stores
        .iter()
        .reduce(|a, b| if b.lost > a.lost { b } else { a });
    let not_stored = worst.map(|w| w.lost.min(f.accepted));
    let in_stages = i128::from(f.shortfall)
        + i128::from(f.failed)
        + i128::from(f.unconfirmed)
        + i128::from(f.accepted);
    Loss {
        scheduled: f.scheduled,
        not_sent: f.shortfall,
        not_sent_by: f.shortfall_by,
        refused,
        unconfirmed: f.unconfirmed,
        unconfirmed_by: f.unconfirmed_by.clone(),
        accepted: f.accepted,
        stored: not_stored.map(|n| f.accepted - n),
        accepted_not_stored: not_stored,
        store: worst.map(|w| w.store.clone()),
        duplicated: worst.map(|w| w.duplicated),
        stores: f.stores.clone(),
        udp_rcvbuf_drops: f.udp.clone(),
        unattributed: (i128::from(f.scheduled) - in_stages) as i64,
    }
}

/// The "loss by stage" block of the text report.
pub fn text(o: &mut String, l: &Loss) {
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "loss by stage (of {} events scheduled)",
        count(l.scheduled)
    );
    let by = if l.not_sent > 0 {
        format!("  (whose: {})", l.not_sent_by)
    } else {
        String::new()
    };
    let _ = writeln!(o, "  not sent             {:>12}{by}", count(l.not_sent));
    let _ = writeln!(
        o,
        "  refused              {:>12}{}",
        count(l.refused.events),
        refused_detail(&l.refused)
    );
    if l.unconfirmed > 0 {
        let by: Vec<String> = l
            .unconfirmed_by
            .iter()
            .map(|(k, n)| format!("{k} {}", count(*n)))
            .collect();
        let _ = writeln!(
            o,
            "  unconfirmed          {:>12}  (written, never confirmed: {})",
            count(l.unconfirmed),
            by.join(", ")
        );
    }
    let _ = writeln!(o, "  accepted             {:>12}", count(l.accepted));
    match (l.stored, l.accepted_not_stored, &l.store) {
        (Some(stored), Some(lost), Some(store)) => {
            let _ = writeln!(o, "    stored             {:>12}  ({store})", count(stored));
            let _ = writeln!(o, "    not stored         {:>12}", count(lost));
            let _ = writeln!(
                o,
                "  duplicated           {:>12}  (extra copies, beside the stages)",
                count(l.duplicated.unwrap_or(0))
            );
        }
        _ => {
            let _ = writeln!(
                o,
                "    stored             {:>12}  (no store was asked)",
                "not known"
            );
        }
    }
    if let Some(u) = &l.udp_rcvbuf_drops {
        match u.datagrams {
            Some(n) => {
                let _ = writeln!(
                    o,
                    "  udp rcvbuf drops     {:>12}  (the kernel, at {}: /proc/net/udp)",
                    count(n),
                    u.address
                );
            }
            None => {
                let _ = writeln!(o, "  udp rcvbuf drops     {:>12}", "not known");
            }
        }
        if let Some(n) = &u.note {
            let _ = writeln!(o, "    ({n})");
        }
    }
    if l.unattributed != 0 {
        let _ = writeln!(
            o,
            "  unattributed         {:>12}  (the warm-up's events answered in the window, or sent and never answered)",
            l.unattributed
        );
    }
}

fn refused_detail(r: &Refused) -> String {
    if r.events == 0 {
        return String::new();
    }
    let c = &r.causes;
    let causes: Vec<String> = [
        ("429", c.status_429),
        ("503", c.status_503),
        ("other 4xx", c.status_4xx),
        ("other 5xx", c.status_5xx),
        ("401/403", c.auth_failures),
        ("connect errors", c.connect_errors),
        ("resets", c.connection_resets),
        ("timeouts", c.timeouts),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(what, n)| format!("{what} {}", count(*n)))
    .collect();
    let causes = if causes.is_empty() {
        String::new()
    } else {
        format!("; attempts met {}", causes.join(", "))
    };
    let g = &r.given_up_after;
    let after: Vec<String> = [
        ("429", g.status_429),
        ("503", g.status_503),
        ("busy", g.busy),
        ("transport", g.transport),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(what, n)| format!("{what} {}", count(*n)))
    .collect();
    let after = if after.is_empty() {
        String::new()
    } else {
        format!(" after {}", after.join(", "))
    };
    let mut finals: Vec<String> = r
        .by_status
        .iter()
        .map(|(st, n)| format!("{st} {}", count(*n)))
        .collect();
    finals.extend(
        r.by_hec_code
            .iter()
            .map(|(c, n)| format!("HEC code {c} {}", count(*n))),
    );
    if r.unreadable_2xx > 0 {
        finals.push(format!(
            "answered 2xx, unreadable {}",
            count(r.unreadable_2xx)
        ));
    }
    if r.unfinished > 0 {
        finals.push(format!("unanswered {}", count(r.unfinished)));
    }
    let finals = if finals.is_empty() {
        String::new()
    } else {
        format!(": {}", finals.join(", "))
    };
    format!(
        "  (retries exhausted {}{after}, oversize {}, other {}{finals}{causes})",
        count(r.retries_exhausted),
        count(r.oversize),
        count(r.other)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> Figures {
        Figures {
            scheduled: 10_000,
            shortfall: 400,
            shortfall_by: "target",
            accepted: 9_000,
            failed: 600,
            retries_exhausted: 500,
            oversize: 30,
            causes: Causes {
                status_503: 42,
                ..Causes::default()
            },
            ..Figures::default()
        }
    }

    fn total(l: &Loss) -> i64 {
        (l.not_sent + l.refused.events + l.accepted) as i64 + l.unattributed
    }

    #[test]
    fn every_scheduled_event_is_in_one_stage() {
        let l = stage(&figures());
        assert_eq!(
            (l.not_sent, l.refused.events, l.accepted),
            (400, 600, 9_000)
        );
        assert_eq!(l.unattributed, 0);
        assert_eq!(total(&l), 10_000);
        let r = &l.refused;
        assert_eq!((r.retries_exhausted, r.oversize, r.other), (500, 30, 70));
        assert_eq!(r.retries_exhausted + r.oversize + r.other, r.events);
        assert_eq!(
            (l.stored, l.accepted_not_stored, l.store),
            (None, None, None)
        );
    }

    #[test]
    fn the_store_that_lost_most_splits_the_accepted() {
        let mut f = figures();
        f.stores = vec![
            StoreLoss {
                store: "built-in sink".into(),
                lost: 3,
                duplicated: 1,
                exact: true,
            },
            StoreLoss {
                store: "file:/var/log/out.log".into(),
                lost: 12,
                duplicated: 0,
                exact: true,
            },
        ];
        let l = stage(&f);
        assert_eq!(l.store.as_deref(), Some("file:/var/log/out.log"));
        assert_eq!((l.stored, l.accepted_not_stored), (Some(8_988), Some(12)));
        assert_eq!(
            l.stored.unwrap() + l.accepted_not_stored.unwrap(),
            l.accepted
        );
        assert_eq!(l.duplicated, Some(0));
        assert_eq!(l.stores.len(), 2);
        // A store's count that covers more than the accepted (the warm-up) is clipped.
        f.stores[1].lost = 50_000;
        let l = stage(&f);
        assert_eq!((l.stored, l.accepted_not_stored), (Some(0), Some(9_000)));
        assert_eq!(l.stores[1].lost, 50_000);
    }

    #[test]
    fn counters_that_do_not_close_are_unattributed_not_hidden() {
        // Events due in the warm-up, answered in the window: more answered than scheduled.
        let mut f = figures();
        f.accepted += 25;
        let l = stage(&f);
        assert_eq!(l.unattributed, -25);
        assert_eq!(total(&l), 10_000);
        // Failure counters that overlap never make a split add to more than refused.
        f.retries_exhausted = 700;
        let r = stage(&f).refused;
        assert_eq!((r.retries_exhausted, r.oversize, r.other), (600, 0, 0));
    }

    #[test]
    fn statuses_are_grouped_by_cause() {
        let s = Summary {
            auth_failures: 1,
            timeouts: 2,
            ..Summary::default()
        };
        let status: BTreeMap<String, u64> = [
            ("200", 90),
            ("401", 1),
            ("404", 3),
            ("413", 1),
            ("429", 7),
            ("500", 4),
            ("503", 5),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        let c = causes(&s, &status);
        assert_eq!(
            (c.status_429, c.status_503, c.status_4xx, c.status_5xx),
            (7, 5, 4, 4)
        );
        assert_eq!((c.auth_failures, c.timeouts), (1, 2));
    }

    #[test]
    fn the_text_block_names_the_stages_and_what_is_not_known() {
        let mut o = String::new();
        let mut l = stage(&figures());
        l.udp_rcvbuf_drops = Some(RcvbufDrops {
            address: "192.0.2.1:514".into(),
            note: Some("not readable here".into()),
            ..RcvbufDrops::default()
        });
        text(&mut o, &l);
        assert!(
            o.contains("loss by stage (of 10,000 events scheduled)"),
            "{o}"
        );
        assert!(
            o.contains("not sent                      400  (whose: target)"),
            "{o}"
        );
        assert!(
            o.contains("retries exhausted 500, oversize 30, other 70; attempts met 503 42"),
            "{o}"
        );
        assert!(o.contains("(no store was asked)"), "{o}");
        assert!(o.contains("udp rcvbuf drops        not known"), "{o}");
        assert!(!o.contains("unattributed"), "{o}");
        assert!(o.lines().all(|l| !l.ends_with(' ')), "{o}");
    }
}
