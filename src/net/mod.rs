//! Network plumbing that knows nothing of event formats: non-blocking client connections on
//! mio (`conn`) and HTTP/1.1 request heads and response reading (`http`).

pub mod conn;
pub mod http;
pub mod tls;
pub mod udp;
