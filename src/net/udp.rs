//! A connected, non-blocking UDP socket that sends a batch of datagrams with as few system
//! calls and as little kernel work as the kernel allows. On Linux: `sendmmsg` (up to 64
//! messages per call), and UDP GSO (`UDP_SEGMENT`, Linux 4.18+): a run of datagrams of one
//! size (plus one shorter tail) goes down the stack as one buffer that the kernel (or the NIC)
//! cuts into those datagrams, so the receiver sees exactly the datagrams it would see without
//! GSO. When the kernel refuses GSO (no support, or a device without checksum offload), the
//! link says why and sends datagram by datagram from then on. Elsewhere: one `send` per
//! datagram. Datagram boundaries are the `ends` offsets into one buffer; `order` is the order
//! to send them in (a permutation of their indices).

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use mio::net::UdpSocket;
use mio::{Interest, Registry, Token};

/// What a link's sends cost: system calls, GSO buffers among the messages they carried, and
/// whether the kernel refused GSO (1 the first time it does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendCost {
    pub calls: u64,
    pub gso_sends: u64,
    pub gso_refused: u64,
}

pub struct UdpLink {
    pub token: Token,
    sock: Option<UdpSocket>,
    gso: Gso,
}

/// A link's GSO state.
#[derive(Default)]
struct Gso {
    /// Largest datagram that may be a segment (path MTU less the IP and UDP headers); 0 when
    /// GSO is off (always, where there is no GSO).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    max_segment: usize,
    /// Why the kernel refused GSO, once it has.
    refused: Option<String>,
}

/// Messages per `sendmmsg` call.
#[cfg(target_os = "linux")]
const VLEN: usize = 64;
/// Datagrams per GSO buffer (the kernel's UDP_MAX_SEGMENTS is 64 or more).
#[cfg(target_os = "linux")]
const MAX_SEGMENTS: usize = 64;
/// Bytes per GSO buffer: one IPv4 datagram's largest payload.
#[cfg(target_os = "linux")]
const MAX_GSO_BYTES: usize = 65_507;
/// Datagrams per `sendmmsg` call in all (the iovec array).
#[cfg(target_os = "linux")]
const MAX_IOV: usize = 1024;

impl UdpLink {
    pub fn new(token: Token) -> Self {
        UdpLink {
            token,
            sock: None,
            gso: Gso::default(),
        }
    }

    /// Binds an ephemeral port of the target's family, connects it to `addr` (so the kernel
    /// reports ICMP port-unreachable as ECONNREFUSED on a later send) and registers it.
    /// `gso` asks for GSO; it is used when the kernel has not refused it before.
    pub fn open(&mut self, addr: SocketAddr, gso: bool, registry: &Registry) -> io::Result<()> {
        self.close(registry);
        let local = if addr.is_ipv4() {
            SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0))
        } else {
            SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0))
        };
        let mut s = UdpSocket::bind(local)?;
        s.connect(addr)?;
        set_send_buffer(&s, 8 << 20);
        self.gso.max_segment = if gso && self.gso.refused.is_none() {
            gso_max_segment(&s, addr.is_ipv4())
        } else {
            0
        };
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

    /// An error the kernel queued on the socket since the last send, taken (cleared): an ICMP
    /// port unreachable arrives as `ConnectionRefused` on a connected socket.
    pub fn take_error(&self) -> Option<io::Error> {
        self.sock
            .as_ref()
            .and_then(|s| s.take_error().ok().flatten())
    }

    /// Why the kernel refused GSO on this link, if it did.
    pub fn gso_refused(&self) -> Option<&str> {
        self.gso.refused.as_deref()
    }

    /// Sends datagrams `order[from..]` of `buf`; returns the position in `order` of the first
    /// one not sent (all sent when it equals `order.len()`), stopping at `WouldBlock`.
    pub fn send_batch(
        &mut self,
        buf: &[u8],
        ends: &[u32],
        order: &[u32],
        mut from: usize,
        cost: &mut SendCost,
    ) -> io::Result<usize> {
        let Some(s) = &self.sock else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        while from < order.len() {
            #[cfg(target_os = "linux")]
            let sent = send_some(s, &mut self.gso, buf, ends, order, from, cost);
            #[cfg(not(target_os = "linux"))]
            let sent = {
                cost.calls += 1;
                s.send(datagram(buf, ends, order[from])).map(|_| 1)
            };
            match sent {
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

/// One `sendmmsg`: datagrams `order[from..]` as far as one call takes them, same-size runs as
/// GSO buffers; returns how many datagrams the kernel took.
#[cfg(target_os = "linux")]
#[allow(
    clippy::indexing_slicing,
    reason = "per-datagram hot path; v < MAX_IOV (iov has MAX_IOV entries) and m < VLEN (msgs, \
              ctl, runs have VLEN) are loop conditions, i < order.len() is checked before each \
              use, and sendmmsg returns at most m (or < 0, handled first)"
)]
fn send_some(
    s: &UdpSocket,
    gso: &mut Gso,
    buf: &[u8],
    ends: &[u32],
    order: &[u32],
    from: usize,
    cost: &mut SendCost,
) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: plain C structs, zero is a valid value for every field.
    let mut iov: [libc::iovec; MAX_IOV] = unsafe { std::mem::zeroed() };
    let mut msgs: [libc::mmsghdr; VLEN] = unsafe { std::mem::zeroed() };
    // Room for one cmsg carrying a u16 (CMSG_SPACE(2) is 24 on 64-bit Linux), aligned.
    let mut ctl = [[0u64; 4]; VLEN];
    let mut runs = [0u16; VLEN];
    let (mut m, mut v, mut i) = (0, 0, from);
    while m < VLEN && v < MAX_IOV && i < order.len() {
        let first = v;
        let seg = datagram(buf, ends, order[i]);
        iov[v] = iovec(seg);
        (v, i) = (v + 1, i + 1);
        let mut total = seg.len();
        if seg.len() <= gso.max_segment {
            // Same-size datagrams, then at most one shorter one to end the run.
            while i < order.len() && v < MAX_IOV && v - first < MAX_SEGMENTS {
                let next = datagram(buf, ends, order[i]);
                if next.len() > seg.len() || total + next.len() > MAX_GSO_BYTES {
                    break;
                }
                iov[v] = iovec(next);
                (v, i) = (v + 1, i + 1);
                total += next.len();
                if next.len() < seg.len() {
                    break;
                }
            }
        }
        let h = &mut msgs[m].msg_hdr;
        h.msg_iov = &mut iov[first];
        h.msg_iovlen = v - first;
        if v - first > 1 {
            // SAFETY: `ctl[m]` is 32 aligned bytes, room for CMSG_SPACE(size_of::<u16>());
            // CMSG_FIRSTHDR/CMSG_DATA stay inside it once msg_control/msg_controllen are set.
            unsafe {
                h.msg_control = ctl[m].as_mut_ptr().cast();
                h.msg_controllen = libc::CMSG_SPACE(2) as usize;
                let c = libc::CMSG_FIRSTHDR(h);
                (*c).cmsg_level = libc::SOL_UDP;
                (*c).cmsg_type = libc::UDP_SEGMENT;
                (*c).cmsg_len = libc::CMSG_LEN(2) as usize;
                std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), seg.len() as u16);
            }
        }
        runs[m] = (v - first) as u16;
        m += 1;
    }
    // SAFETY: `msgs[..m]` point at `iov` and `ctl` entries, which point into `buf`; all
    // outlive the call, and the socket is connected, so no address is needed.
    let sent = unsafe {
        libc::sendmmsg(
            s.as_raw_fd(),
            msgs.as_mut_ptr(),
            m as libc::c_uint,
            libc::MSG_DONTWAIT,
        )
    };
    cost.calls += 1;
    if sent < 0 {
        let e = io::Error::last_os_error();
        if runs[0] > 1 && gso_refusal(&e) {
            // The kernel (or the device) will not segment: say why, and go on without.
            gso.refused = Some(format!("the kernel refused UDP GSO: {e}"));
            gso.max_segment = 0;
            cost.gso_refused += 1;
            return Err(io::ErrorKind::Interrupted.into());
        }
        return Err(e);
    }
    let sent = &runs[..sent as usize];
    cost.gso_sends += sent.iter().filter(|&&k| k > 1).count() as u64;
    Ok(sent.iter().map(|&k| k as usize).sum())
}

/// Datagram `i` of `buf`.
#[allow(
    clippy::indexing_slicing,
    reason = "per-datagram hot path; ends holds the batch's cumulative datagram ends into buf and \
              i is an entry of the batch's order, so < ends.len()"
)]
fn datagram<'a>(buf: &'a [u8], ends: &[u32], i: u32) -> &'a [u8] {
    let i = i as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &buf[start..ends[i] as usize]
}

#[cfg(target_os = "linux")]
fn iovec(b: &[u8]) -> libc::iovec {
    libc::iovec {
        iov_base: b.as_ptr() as *mut libc::c_void,
        iov_len: b.len(),
    }
}

/// Errors that mean "no GSO here" rather than "this datagram failed".
#[cfg(target_os = "linux")]
fn gso_refusal(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL | libc::EIO | libc::ENOPROTOOPT | libc::EOPNOTSUPP | libc::EMSGSIZE)
    )
}

/// The largest GSO segment on the connected socket's path: its MTU less the IP and UDP
/// headers (0 when the MTU is unknown).
#[cfg(target_os = "linux")]
fn gso_max_segment(s: &UdpSocket, v4: bool) -> usize {
    use std::os::fd::AsRawFd;
    let (level, name, headers) = if v4 {
        (libc::IPPROTO_IP, libc::IP_MTU, 28)
    } else {
        (libc::IPPROTO_IPV6, libc::IPV6_MTU, 48)
    };
    let mut mtu: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into the local int.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            level,
            name,
            (&mut mtu as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return 0;
    }
    (mtu as usize)
        .saturating_sub(headers)
        .min(u16::MAX as usize)
}

#[cfg(not(target_os = "linux"))]
fn gso_max_segment(_: &UdpSocket, _: bool) -> usize {
    0
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

    /// Sends `msgs` in `order` and returns what the receiver got, datagram by datagram.
    fn round_trip(msgs: &[String], order: &[u32], gso: bool) -> (Vec<String>, SendCost) {
        let (got, cost, refused) = round_trip_with(msgs, order, gso, |_| {});
        assert_eq!(refused, None);
        (got, cost)
    }

    /// `round_trip`, with `prepare` applied to the link's socket first; also returns why the
    /// kernel refused GSO, if it did.
    fn round_trip_with(
        msgs: &[String],
        order: &[u32],
        gso: bool,
        prepare: impl Fn(&UdpSocket),
    ) -> (Vec<String>, SendCost, Option<String>) {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let poll = mio::Poll::new().unwrap();
        let mut l = UdpLink::new(Token(0));
        l.open(rx.local_addr().unwrap(), gso, poll.registry())
            .unwrap();
        prepare(l.sock.as_ref().unwrap());
        let mut buf = Vec::new();
        let mut ends = Vec::new();
        for m in msgs {
            buf.extend_from_slice(m.as_bytes());
            ends.push(buf.len() as u32);
        }
        // Sent 101 at a time and read back in between, so the receive buffer never overflows.
        let mut cost = SendCost::default();
        let mut got = Vec::new();
        let mut d = [0u8; 2048];
        for chunk in (0..order.len()).step_by(101) {
            let part = &order[..(chunk + 101).min(order.len())];
            let mut from = chunk;
            while from < part.len() {
                from = l.send_batch(&buf, &ends, part, from, &mut cost).unwrap();
            }
            for k in chunk..part.len() {
                let n = rx
                    .recv(&mut d)
                    .unwrap_or_else(|e| panic!("datagram {k} of {}: {e}", order.len()));
                got.push(String::from_utf8(d[..n].to_vec()).unwrap());
            }
        }
        let refused = l.gso_refused().map(str::to_string);
        (got, cost, refused)
    }

    #[test]
    fn sends_every_datagram_in_order() {
        let msgs: Vec<String> = (0..150).map(|i| format!("message {i}")).collect();
        let order: Vec<u32> = (0..150).collect();
        let (got, cost) = round_trip(&msgs, &order, false);
        assert_eq!(got, msgs);
        assert_eq!(cost.gso_sends, 0);
        if cfg!(target_os = "linux") {
            assert_eq!(cost.calls, 3, "101 sent as 64 + 37, then 49");
        }
    }

    /// GSO runs: equal sizes plus one shorter tail; the receiver still gets each datagram
    /// whole and separate, in the order given.
    #[test]
    fn gso_runs_arrive_as_the_same_datagrams() {
        // 300 datagrams of 3 sizes, sent longest first: runs of equal size, each able to end
        // with one shorter datagram, more than 64 per size (the segment cap).
        let msgs: Vec<String> = (0..300)
            .map(|i| match i % 3 {
                0 => format!("a-{i:05}"),
                1 => format!("bb-{i:05}"),
                _ => format!("ccc-{i:05}"),
            })
            .collect();
        let mut order: Vec<u32> = (0..300).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(msgs[i as usize].len()), i));
        let (got, cost) = round_trip(&msgs, &order, true);
        let want: Vec<String> = order.iter().map(|&i| msgs[i as usize].clone()).collect();
        assert_eq!(got, want);
        if cfg!(target_os = "linux") {
            // Sent 101 at a time (see round_trip): [64 c] [36 c + 1 b] | [64 b] [35 b + 1 a]
            // [1 a] | [64 a] [34 a]: one call each, six GSO buffers and one lone datagram.
            assert_eq!(cost.calls, 3);
            assert_eq!(cost.gso_sends, 6);
        }
    }

    /// Datagrams of all different sizes never share a buffer (except a shorter tail).
    #[test]
    fn mixed_sizes_in_generation_order() {
        let msgs: Vec<String> = (0..40).map(|i| "x".repeat(10 + (i * 7) % 23)).collect();
        let order: Vec<u32> = (0..40).collect();
        let (got, _) = round_trip(&msgs, &order, true);
        assert_eq!(got, msgs);
    }

    /// A socket the kernel will not segment for (here: UDP checksums off, SO_NO_CHECK, which
    /// GSO refuses with EINVAL, as it refuses a device without checksum offload with EIO):
    /// the link says so once, and every datagram still arrives, one by one.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_gso_refusal_falls_back_to_single_datagrams() {
        use std::os::fd::AsRawFd;
        const SO_NO_CHECK: libc::c_int = 11;
        let msgs: Vec<String> = (0..150).map(|i| format!("same-size {i:04}")).collect();
        let order: Vec<u32> = (0..150).collect();
        let (got, cost, refused) = round_trip_with(&msgs, &order, true, |s| {
            let one: libc::c_int = 1;
            // SAFETY: setsockopt on the test's socket with a pointer to a local int.
            let r = unsafe {
                libc::setsockopt(
                    s.as_raw_fd(),
                    libc::SOL_SOCKET,
                    SO_NO_CHECK,
                    (&one as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            assert_eq!(r, 0, "SO_NO_CHECK: {}", io::Error::last_os_error());
        });
        assert_eq!(got, msgs);
        let why = refused.expect("the kernel refuses GSO without UDP checksums");
        assert!(why.contains("refused UDP GSO"), "{why}");
        assert_eq!(cost.gso_refused, 1, "{cost:?}");
        assert_eq!(cost.gso_sends, 0, "{cost:?}");
    }
}
