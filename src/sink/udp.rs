//! Syslog over UDP (RFC 5426): one message per datagram. Each worker thread owns one socket of
//! a SO_REUSEPORT group bound to the same address, so several senders spread over the workers
//! (one sender's datagrams stay on one, like a TCP connection). Sockets ask for an 8 MiB
//! receive buffer (SO_RCVBUF, then SO_RCVBUFFORCE when allowed; best effort) so that a burst
//! from a fast sender waits in the kernel instead of being dropped.
//!
//! `Rx` receives up to `BATCH` datagrams per syscall with `recvmmsg` on Linux (a loop of
//! `recv` elsewhere) into one preallocated buffer of `BATCH` slots of `SLOT` bytes; a longer
//! datagram is truncated to its slot and counted (`udp_truncated`).

use std::io;
use std::net::SocketAddr;

/// Datagrams per syscall.
pub const BATCH: usize = 32;
/// Bytes kept of each datagram (the rest of a longer one is lost, and counted).
pub const SLOT: usize = 32 * 1024;
/// Receive buffer asked for.
const RCVBUF: usize = 8 * 1024 * 1024;

/// Binds `n` sockets to `addr` in one SO_REUSEPORT group (the first one resolves port 0).
pub(crate) fn bind_group(addr: SocketAddr, n: usize) -> Result<Vec<mio::net::UdpSocket>, String> {
    let mut out = Vec::with_capacity(n);
    let mut at = addr;
    for _ in 0..n.max(1) {
        let s = bind_one(at)?;
        if at.port() == 0 {
            at = s
                .local_addr()
                .map_err(|e| format!("cannot read the bound address of {addr}: {e}"))?;
        }
        out.push(s);
    }
    Ok(out)
}

fn bind_one(addr: SocketAddr) -> Result<mio::net::UdpSocket, String> {
    use socket2::{Domain, Protocol, Socket, Type};
    let err = |what: &str, e: io::Error| format!("cannot {what} {addr} (syslog UDP): {e}");
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| err("open a socket for", e))?;
    #[cfg(unix)]
    set_int(&s, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)
        .map_err(|e| err("set SO_REUSEPORT on", e))?;
    let _ = s.set_recv_buffer_size(RCVBUF);
    // SO_RCVBUFFORCE passes over `net.core.rmem_max` when the process may (CAP_NET_ADMIN).
    #[cfg(target_os = "linux")]
    if s.recv_buffer_size().unwrap_or(0) < RCVBUF {
        let _ = set_int(
            &s,
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            RCVBUF as libc::c_int,
        );
    }
    s.bind(&addr.into()).map_err(|e| err("bind", e))?;
    s.set_nonblocking(true)
        .map_err(|e| err("set non-blocking on", e))?;
    Ok(mio::net::UdpSocket::from_std(s.into()))
}

#[cfg(unix)]
fn set_int(
    s: &socket2::Socket,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid fd and a pointer to a c_int of the size given.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One worker's UDP socket and its receive slots.
pub(crate) struct Rx {
    pub sock: mio::net::UdpSocket,
    buf: Box<[u8]>,
    lens: [usize; BATCH],
    truncated: [bool; BATCH],
    n: usize,
}

impl Rx {
    pub fn new(sock: mio::net::UdpSocket) -> Rx {
        Rx {
            sock,
            buf: vec![0; BATCH * SLOT].into_boxed_slice(),
            lens: [0; BATCH],
            truncated: [false; BATCH],
            n: 0,
        }
    }

    /// Receives the next batch: the number of datagrams (`WouldBlock` when none waits).
    pub fn recv(&mut self) -> io::Result<usize> {
        self.n = 0;
        self.n = self.recv_batch()?;
        Ok(self.n)
    }

    /// The buffer the datagrams of the last batch are in.
    pub fn base(&self) -> &[u8] {
        &self.buf
    }

    /// Datagram `i` of the last batch (as much as fit its slot), and whether it was cut.
    pub fn datagram(&self, i: usize) -> (&[u8], bool) {
        if i >= self.n {
            return (&[], false);
        }
        let at = i * SLOT;
        let len = self.lens.get(i).map_or(0, |n| (*n).min(SLOT));
        (
            self.buf.get(at..at + len).unwrap_or_default(),
            self.truncated.get(i).copied().unwrap_or(false),
        )
    }

    #[cfg(target_os = "linux")]
    fn recv_batch(&mut self) -> io::Result<usize> {
        use std::os::fd::AsRawFd;
        // SAFETY: zeroed iovec and mmsghdr are valid (null pointers, zero lengths).
        let mut iov: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
        let mut hdrs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
        let base = self.buf.as_mut_ptr();
        for (i, (v, h)) in iov.iter_mut().zip(hdrs.iter_mut()).enumerate() {
            // SAFETY: slot i lies inside `buf` (BATCH * SLOT bytes).
            v.iov_base = unsafe { base.add(i * SLOT) }.cast();
            v.iov_len = SLOT;
            h.msg_hdr.msg_iov = v;
            h.msg_hdr.msg_iovlen = 1;
        }
        loop {
            // SAFETY: every header points at one iovec of a slot of `buf`, all of which
            // outlive the call; no addresses or control data are asked for.
            let n = unsafe {
                libc::recvmmsg(
                    self.sock.as_raw_fd(),
                    hdrs.as_mut_ptr(),
                    BATCH as _,
                    libc::MSG_DONTWAIT as _,
                    std::ptr::null_mut(),
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            let n = (n as usize).min(BATCH);
            let slots = self.lens.iter_mut().zip(self.truncated.iter_mut());
            for ((len, cut), h) in slots.zip(hdrs.iter().take(n)) {
                *len = h.msg_len as usize;
                *cut = h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
            }
            return Ok(n);
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn recv_batch(&mut self) -> io::Result<usize> {
        let mut n = 0;
        while n < BATCH {
            let at = n * SLOT;
            match self.sock.recv(&mut self.buf[at..at + SLOT]) {
                Ok(len) => {
                    self.lens[n] = len;
                    // Without MSG_TRUNC a full slot is the only hint.
                    self.truncated[n] = len == SLOT;
                    n += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && n > 0 => break,
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}
