//! Network plumbing that knows nothing of event formats: non-blocking client connections on
//! mio (`conn`) and HTTP/1.1 request heads and response reading (`http`), TLS client settings
//! (`tls`), UDP batches (`udp`) and HTTPS for ureq with those settings (`ureq_tls`).

pub mod conn;
pub mod http;
pub mod tls;
pub mod udp;
pub mod ureq_tls;
