//! A connected, non-blocking UDP socket that sends a batch of datagrams with as few system
//! calls as the kernel allows: `sendmmsg` (up to 64 messages per call) on Linux, one `send`
//! per datagram elsewhere. Datagram boundaries are the `ends` offsets into one buffer.

use std::io;
use std::net::SocketAddr;

use mio::net::UdpSocket;
use mio::{Interest, Registry, Token};

pub struct UdpLink {
    pub token: Token,
    sock: Option<UdpSocket>,
}

/// Messages per `sendmmsg` call.
const VLEN: usize = 64;

impl UdpLink {
    pub fn new(token: Token) -> Self {
        UdpLink { token, sock: None }
    }

    /// Binds an ephemeral port of the target's family, connects it to `addr` (so the kernel
    /// reports ICMP port-unreachable as ECONNREFUSED on a later send) and registers it.
    pub fn open(&mut self, addr: SocketAddr, registry: &Registry) -> io::Result<()> {
        self.close(registry);
        let local: SocketAddr = if addr.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        }
        .parse()
        .expect("literal address");
        let mut s = UdpSocket::bind(local)?;
        s.connect(addr)?;
        set_send_buffer(&s, 8 << 20);
        registry.register(&mut s, self.token, Interest::WRITABLE)?;
        self.sock = Some(s);
        Ok(())
    }

    pub fn is_open(&self) -> bool {
        self.sock.is_some()
    }

    pub fn close(&mut self, registry: &Registry) {
        if let Some(mut s) = self.sock.take() {
            let _ = registry.deregister(&mut s);
        }
    }

    /// Sends datagrams `from..ends.len()` of `buf`; returns the index of the first one not
    /// sent (all sent when it equals `ends.len()`), stopping at `WouldBlock`.
    pub fn send_batch(&mut self, buf: &[u8], ends: &[u32], mut from: usize) -> io::Result<usize> {
        let Some(s) = &self.sock else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        while from < ends.len() {
            match send_some(s, buf, ends, from) {
                Ok(0) => break,
                Ok(n) => from += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(from)
    }
}

fn bounds(ends: &[u32], i: usize) -> (usize, usize) {
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    (start, ends[i] as usize)
}

#[cfg(target_os = "linux")]
fn send_some(s: &UdpSocket, buf: &[u8], ends: &[u32], from: usize) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let n = (ends.len() - from).min(VLEN);
    // SAFETY: plain C structs, zero is a valid value for every field.
    let mut iov: [libc::iovec; VLEN] = unsafe { std::mem::zeroed() };
    let mut msgs: [libc::mmsghdr; VLEN] = unsafe { std::mem::zeroed() };
    for k in 0..n {
        let (a, b) = bounds(ends, from + k);
        iov[k].iov_base = buf[a..].as_ptr() as *mut libc::c_void;
        iov[k].iov_len = b - a;
        msgs[k].msg_hdr.msg_iov = &mut iov[k];
        msgs[k].msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: `msgs[..n]` point at `iov[..n]`, which point into `buf`; all outlive the call,
    // and the socket is connected, so no address is needed.
    let sent = unsafe {
        libc::sendmmsg(
            s.as_raw_fd(),
            msgs.as_mut_ptr(),
            n as libc::c_uint,
            libc::MSG_DONTWAIT,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(sent as usize)
}

#[cfg(not(target_os = "linux"))]
fn send_some(s: &UdpSocket, buf: &[u8], ends: &[u32], from: usize) -> io::Result<usize> {
    let (a, b) = bounds(ends, from);
    s.send(&buf[a..b]).map(|_| 1)
}

#[cfg(unix)]
fn set_send_buffer(s: &UdpSocket, bytes: i32) {
    use std::os::fd::AsRawFd;
    // SAFETY: setsockopt with a pointer to a local int of the right size; failure is harmless.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            &bytes as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        );
    }
}

#[cfg(not(unix))]
fn set_send_buffer(_: &UdpSocket, _: i32) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_every_datagram_in_order() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let poll = mio::Poll::new().unwrap();
        let mut l = UdpLink::new(Token(0));
        l.open(rx.local_addr().unwrap(), poll.registry()).unwrap();
        let mut buf = Vec::new();
        let mut ends = Vec::new();
        for i in 0..150u32 {
            buf.extend_from_slice(format!("message {i}").as_bytes());
            ends.push(buf.len() as u32);
        }
        let mut from = 0;
        while from < ends.len() {
            from = l.send_batch(&buf, &ends, from).unwrap();
        }
        let mut got = [0u8; 64];
        for i in 0..150 {
            let n = rx.recv(&mut got).unwrap();
            assert_eq!(&got[..n], format!("message {i}").as_bytes());
        }
    }
}
