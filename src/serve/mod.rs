//! Serving a running load test over HTTP (tiny_http), reading only the snapshots the
//! coordinator publishes: `metrics` is the Prometheus `/metrics` endpoint.

pub mod metrics;
