//! Where the time of a plain HTTP request goes (`adapter: http`), phase by phase, as hey and
//! rpcload report it: connect (TCP), TLS handshake, request write, wait (the last byte written
//! to the first byte of the answer: time to first byte), response read, and the whole
//! transaction. A request that opened its connection carries that connection's connect and
//! TLS time; one on a kept connection carries none (0), so the phases of every request add up
//! to its transaction exactly, and so do their means. Each phase keeps an HDR histogram in
//! microseconds (percentiles) and exact nanosecond sums (means, fastest, slowest).

use hdrhistogram::Histogram;

use super::{MAX_LATENCY_US, new_histogram};

/// One phase over many requests.
#[derive(Clone, Debug)]
pub struct Phase {
    pub hist: Histogram<u64>,
    pub sum_ns: u64,
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Default for Phase {
    fn default() -> Self {
        Phase {
            hist: new_histogram(),
            sum_ns: 0,
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl Phase {
    pub fn record(&mut self, ns: u64) {
        self.hist
            .saturating_record((ns / 1000).clamp(0, MAX_LATENCY_US));
        self.sum_ns = self.sum_ns.saturating_add(ns);
        self.count += 1;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn add(&mut self, o: &Phase) {
        let _ = self.hist.add(&o.hist);
        self.sum_ns = self.sum_ns.saturating_add(o.sum_ns);
        self.count += o.count;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
    }

    /// The mean in nanoseconds, when anything was recorded.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64)
    }
}

/// The phases of one request, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub connect: u64,
    pub tls: u64,
    pub write: u64,
    pub wait: u64,
    pub read: u64,
}

impl Request {
    pub fn total(&self) -> u64 {
        self.connect + self.tls + self.write + self.wait + self.read
    }
}

/// Every phase over many requests.
#[derive(Clone, Debug, Default)]
pub struct Phases {
    pub connect: Phase,
    pub tls: Phase,
    pub write: Phase,
    pub wait: Phase,
    pub read: Phase,
    pub total: Phase,
    /// Connections opened (each request that opened one carried its setup).
    pub connections: u64,
    /// Bytes of response bodies read.
    pub body_bytes: u64,
}

impl Phases {
    pub fn record(&mut self, r: &Request, opened: bool) {
        self.connect.record(r.connect);
        self.tls.record(r.tls);
        self.write.record(r.write);
        self.wait.record(r.wait);
        self.read.record(r.read);
        self.total.record(r.total());
        self.connections += u64::from(opened);
    }

    pub fn add(&mut self, o: &Phases) {
        self.connect.add(&o.connect);
        self.tls.add(&o.tls);
        self.write.add(&o.write);
        self.wait.add(&o.wait);
        self.read.add(&o.read);
        self.total.add(&o.total);
        self.connections += o.connections;
        self.body_bytes += o.body_bytes;
    }

    /// `(name, phase)` in the order a request goes through them, the total last.
    pub fn named(&self) -> [(&'static str, &Phase); 6] {
        [
            ("connect", &self.connect),
            ("tls", &self.tls),
            ("write", &self.write),
            ("wait", &self.wait),
            ("read", &self.read),
            ("total", &self.total),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_add_up_to_the_transaction_and_merge() {
        let mut a = Phases::default();
        let fresh = Request {
            connect: 120_000,
            tls: 800_000,
            write: 3_000,
            wait: 450_000,
            read: 2_000,
        };
        let kept = Request {
            write: 1_000,
            wait: 300_000,
            read: 1_500,
            ..Request::default()
        };
        a.record(&fresh, true);
        a.record(&kept, false);
        let mut b = Phases::default();
        b.record(&kept, false);
        a.add(&b);
        assert_eq!(a.total.count, 3);
        assert_eq!(a.connections, 1);
        let sum: f64 = a
            .named()
            .iter()
            .take(5)
            .map(|(_, p)| p.mean_ns().unwrap())
            .sum();
        assert!((sum - a.total.mean_ns().unwrap()).abs() < 1e-6);
        assert_eq!(a.connect.min_ns, 0);
        assert_eq!(a.connect.max_ns, 120_000);
        assert_eq!(a.total.max_ns, fresh.total());
        // Percentiles in microseconds.
        assert_eq!(a.wait.hist.value_at_quantile(1.0) / 10, 45);
    }
}
