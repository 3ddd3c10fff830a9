//! One client connection on mio: an explicit non-blocking connect (`Connecting` until the
//! socket is writable and has no pending error), an optional TLS session driven without
//! blocking (`Handshaking` until rustls is done), writes that stop at `WouldBlock` and keep
//! their offset, reads into the connection's `ResponseReader`, and a close that deregisters.
//! Errors are values for the worker to count, never panics. The socket is TCP, or a Unix
//! stream socket (plain HTTP load's `--unix-socket`); everything above it is the same. A
//! connection counts the bytes it handed to its socket (`wire_bytes`, TLS records and the
//! handshake included) and says how many of them the kernel still holds (`unsent`: SIOCOUTQ,
//! bytes the peer's TCP has not acknowledged) and whether the peer's receive window is open
//! again (`peer`: TCP_INFO) — what syslog's confirmation is built on.

use std::io::{self, IoSlice, Read, Write};
use std::net::SocketAddr;

use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use rustls::ClientConnection;

use crate::net::http::ResponseReader;
use crate::net::tls::{TlsClient, describe};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Connecting,
    Handshaking,
    Open,
}

pub struct Conn {
    pub token: Token,
    pub state: State,
    /// When the TCP connection of the current setup was established.
    pub connected_at: Option<std::time::Instant>,
    stream: Option<Stream>,
    tls: Option<ClientConnection>,
    pub reader: ResponseReader,
    /// Bytes handed to the socket since this connection's setup began (TLS records, the
    /// handshake included): with `unsent`, how far the peer's TCP has acknowledged.
    pub wire_bytes: u64,
    /// The widest receive window the peer has advertised on this connection (seen by `peer`).
    window_max: u64,
}

/// What the peer's TCP says of a connection (`Conn::peer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerState {
    /// How far it has acknowledged this connection's bytes (of `wire_bytes`).
    pub acked: u64,
    /// Its receive window is open: at least half the widest it has advertised (and not 0),
    /// so its buffer is not half full of bytes its application has not read. A reader's
    /// window at rest is not quite its widest (86 % was measured); a receiver that stops
    /// reading has its window fall below half as the bytes pile up — the sender's own
    /// silly-window rule sends nothing more once the window is under half its widest and
    /// under one segment (64 KiB on loopback), which can leave it there, never at 0.
    /// `None` where the kernel does not tell (not Linux, before Linux 6.2, not TCP).
    pub window_open: Option<bool>,
}

/// What a read found.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadStatus {
    /// Read everything available for now.
    Drained,
    /// The peer closed its side.
    Eof,
}

/// Why a connection could not be set up.
#[derive(Debug)]
pub enum ConnectError {
    Io(io::Error),
    /// The TLS handshake failed; the text names why (expired, unknown issuer, name mismatch).
    Tls(String),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Io(e) => write!(f, "{e}"),
            ConnectError::Tls(m) => f.write_str(m),
        }
    }
}

/// Where a connection goes.
#[derive(Clone, Copy, Debug)]
pub enum Peer<'a> {
    Tcp(SocketAddr),
    Unix(&'a std::path::Path),
}

/// The socket under a connection.
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Stream::Tcp(s) => s.take_error(),
            Stream::Unix(s) => s.take_error(),
        }
    }

    /// `Ok` once the connect has completed, `NotConnected` while it is in progress.
    fn connected(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.peer_addr().map(|_| ()),
            Stream::Unix(s) => s.peer_addr().map(|_| ()),
        }
    }

    fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }

    fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Stream::Tcp(s) => s,
            Stream::Unix(s) => s,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write_vectored(bufs),
            Stream::Unix(s) => s.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

/// How long a run (and a probe) waits for its first connection setup — the TCP connect and,
/// with TLS, the handshake — before the target counts as not reached: what never answers a
/// connect is down, what never answers a handshake speaks something other than TLS.
pub const FIRST_SETUP_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Plaintext rustls may hold before it has written it out as TLS records.
const TLS_BUFFER: usize = 256 * 1024;

impl Conn {
    pub fn new(token: Token) -> Self {
        Conn {
            token,
            state: State::Closed,
            connected_at: None,
            stream: None,
            tls: None,
            reader: ResponseReader::new(),
            wire_bytes: 0,
            window_max: 0,
        }
    }

    /// Starts a non-blocking connect to `addr`; with `tls`, a TLS session follows.
    pub fn connect(
        &mut self,
        addr: SocketAddr,
        tls: Option<&TlsClient>,
        registry: &Registry,
    ) -> io::Result<()> {
        self.connect_to(Peer::Tcp(addr), tls, registry)
    }

    /// Starts a non-blocking connect to `peer` (TCP or a Unix socket); with `tls`, a TLS
    /// session follows.
    pub fn connect_to(
        &mut self,
        peer: Peer,
        tls: Option<&TlsClient>,
        registry: &Registry,
    ) -> io::Result<()> {
        self.close(registry);
        let mut s = match peer {
            Peer::Tcp(addr) => {
                let s = TcpStream::connect(addr)?;
                s.set_nodelay(true)?;
                Stream::Tcp(s)
            }
            Peer::Unix(path) => Stream::Unix(UnixStream::connect(path)?),
        };
        registry.register(
            s.source(),
            self.token,
            Interest::READABLE | Interest::WRITABLE,
        )?;
        self.stream = Some(s);
        self.state = State::Connecting;
        self.connected_at = None;
        self.wire_bytes = 0;
        self.window_max = 0;
        self.reader.clear();
        if let Some(t) = tls {
            let mut c = ClientConnection::new(t.config.clone(), t.server_name.clone())
                .map_err(|e| io::Error::other(e.to_string()))?;
            c.set_buffer_limit(Some(TLS_BUFFER));
            self.tls = Some(c);
        }
        Ok(())
    }

    /// Drives the setup on readiness: `Ok(true)` once open (TCP connected and, with TLS, the
    /// handshake done), `Ok(false)` while in progress.
    pub fn progress(&mut self) -> Result<bool, ConnectError> {
        if self.state == State::Connecting {
            let Some(s) = &self.stream else {
                return Err(ConnectError::Io(io::ErrorKind::NotConnected.into()));
            };
            if let Some(e) = s.take_error().map_err(ConnectError::Io)? {
                return Err(ConnectError::Io(e));
            }
            match s.connected() {
                Ok(()) => {
                    self.connected_at = Some(std::time::Instant::now());
                    self.state = if self.tls.is_some() {
                        State::Handshaking
                    } else {
                        State::Open
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return Ok(false),
                Err(e) => return Err(ConnectError::Io(e)),
            }
        }
        if self.state == State::Handshaking {
            self.drive_tls()?;
            if self.tls.as_ref().is_some_and(|t| !t.is_handshaking()) {
                self.state = State::Open;
            }
        }
        Ok(self.state == State::Open)
    }

    /// Moves TLS records both ways until the socket would block.
    fn drive_tls(&mut self) -> Result<(), ConnectError> {
        let (Some(s), Some(t)) = (&mut self.stream, &mut self.tls) else {
            return Ok(());
        };
        loop {
            let mut progressed = false;
            while t.wants_write() {
                match t.write_tls(s) {
                    Ok(0) => break,
                    Ok(n) => {
                        self.wire_bytes += n as u64;
                        progressed = true;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(ConnectError::Io(e)),
                }
            }
            if t.wants_read() {
                match t.read_tls(s) {
                    Ok(0) => {
                        return Err(ConnectError::Tls(
                            "the server closed the connection during the TLS handshake".into(),
                        ));
                    }
                    Ok(_) => {
                        progressed = true;
                        if let Err(e) = t.process_new_packets() {
                            // Send the alert before giving up, as a well-behaved client does.
                            let _ = t.write_tls(s);
                            return Err(ConnectError::Tls(describe(&e)));
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(ConnectError::Io(e)),
                }
            }
            if !progressed || !t.is_handshaking() && !t.wants_write() {
                return Ok(());
            }
        }
    }

    /// Writes from `bufs` starting `offset` bytes in, until done or `WouldBlock`. Returns the
    /// new offset. (With TLS, bytes count once rustls has taken them; they reach the socket as
    /// it drains, which `flush` continues.)
    pub fn write_from(&mut self, bufs: [&[u8]; 2], mut offset: usize) -> io::Result<usize> {
        let total = bufs[0].len() + bufs[1].len();
        if self.tls.is_some() {
            while offset < total {
                let slices = slices_from(bufs, offset);
                let n = self
                    .tls
                    .as_mut()
                    .map_or(Ok(0), |t| t.writer().write_vectored(&slices))?;
                offset += n;
                let flushed = self.flush()?;
                if n == 0 && !flushed {
                    break;
                }
            }
            self.flush()?;
            return Ok(offset);
        }
        let Some(s) = &mut self.stream else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        while offset < total {
            match s.write_vectored(&slices_from(bufs, offset)) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    offset += n;
                    self.wire_bytes += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(offset)
    }

    /// With TLS: writes pending records to the socket; `Ok(true)` if some went out.
    pub fn flush(&mut self) -> io::Result<bool> {
        let (Some(s), Some(t)) = (&mut self.stream, &mut self.tls) else {
            return Ok(false);
        };
        let mut any = false;
        while t.wants_write() {
            match t.write_tls(s) {
                Ok(0) => break,
                Ok(n) => {
                    self.wire_bytes += n as u64;
                    any = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(any)
    }

    /// Bytes the kernel still holds of what this connection wrote: SIOCOUTQ, the bytes the
    /// peer's TCP has not acknowledged (sent or not). `None` without a socket, or where the
    /// kernel cannot say (not Linux).
    pub fn unsent(&self) -> Option<u64> {
        let s = self.stream.as_ref()?;
        outq(s.fd())
    }

    /// How far the peer's TCP has acknowledged this connection's bytes (`wire_bytes` less
    /// `unsent`; every byte written where the kernel cannot say), and whether its receive
    /// window is open again.
    pub fn peer(&mut self) -> PeerState {
        let acked = self.wire_bytes.saturating_sub(self.unsent().unwrap_or(0));
        let window = match &self.stream {
            Some(s @ Stream::Tcp(_)) => send_window(s.fd()),
            _ => None,
        };
        let window_open = window.map(|(w, unit)| {
            self.window_max = self.window_max.max(w);
            w >= (self.window_max / 2).max(unit)
        });
        PeerState { acked, window_open }
    }

    /// Has the kernel probe the peer after `idle` without traffic, and every `idle` after
    /// (TCP keepalive): the peer's answer carries its receive window as it is then, so a
    /// window its application opened again by reading is seen even when the peer sent no
    /// update of its own (Linux announces a reopened window only when it at least doubles);
    /// a peer that answers nothing is found dead. A no-op on a Unix socket.
    pub fn probe_when_idle(&self, idle: std::time::Duration) -> io::Result<()> {
        if let Some(Stream::Tcp(s)) = &self.stream {
            let ka = socket2::TcpKeepalive::new()
                .with_time(idle)
                .with_interval(idle);
            socket2::SockRef::from(s).set_tcp_keepalive(&ka)?;
        }
        Ok(())
    }

    /// Whether this connection runs TLS.
    pub fn has_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Whether written bytes are still waiting in the TLS session for the socket.
    pub fn pending_tls(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.wants_write())
    }

    /// Reads everything available into the response reader.
    pub fn read_available(&mut self) -> io::Result<ReadStatus> {
        self.read_ready(false)
    }

    /// Reads what is available into the response reader. With `short_is_all`, a plain TCP
    /// read that fills less than the room it was given ends it: the kernel hands over all it
    /// holds, so the socket is drained and new data raises a new edge — one `recv` an
    /// answer, not a second one for `EAGAIN`. The caller passes `false` when the event also
    /// says the peer closed, so the end of stream is read now.
    pub fn read_ready(&mut self, short_is_all: bool) -> io::Result<ReadStatus> {
        let Some(s) = &mut self.stream else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if let Some(t) = &mut self.tls {
            // Plaintext is taken out between reads: rustls holds at most 16 KiB of it and
            // refuses to read more until it is (a larger answer would otherwise break the
            // connection).
            loop {
                loop {
                    if self.reader.is_full() {
                        // The answer is over the cap: `poll` says so; reading on would
                        // only fill memory.
                        return Ok(ReadStatus::Drained);
                    }
                    match t.reader().read(self.reader.spare()) {
                        Ok(0) => return Ok(ReadStatus::Eof),
                        Ok(n) => self.reader.filled(n),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                            return Ok(ReadStatus::Eof);
                        }
                        Err(e) => return Err(e),
                    }
                }
                match t.read_tls(s) {
                    Ok(0) => {
                        // What came before the close is still to be taken out.
                        while !self.reader.is_full() {
                            match t.reader().read(self.reader.spare()) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => self.reader.filled(n),
                            }
                        }
                        return Ok(ReadStatus::Eof);
                    }
                    Ok(_) => {
                        t.process_new_packets()
                            .map_err(|e| io::Error::other(describe(&e)))?;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        return Ok(ReadStatus::Drained);
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        loop {
            if self.reader.is_full() {
                // As above: the reader's cap, never a larger buffer.
                return Ok(ReadStatus::Drained);
            }
            let room = self.reader.spare();
            let room_len = room.len();
            match s.read(room) {
                Ok(0) => return Ok(ReadStatus::Eof),
                Ok(n) => {
                    self.reader.filled(n);
                    if short_is_all && n < room_len {
                        return Ok(ReadStatus::Drained);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(ReadStatus::Drained),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads and drops whatever the peer sends (syslog receivers send nothing); reports EOF.
    pub fn discard_input(&mut self) -> io::Result<ReadStatus> {
        let r = self.read_available();
        self.reader.clear();
        r
    }

    pub fn close(&mut self, registry: &Registry) {
        if let Some(mut s) = self.stream.take() {
            let _ = registry.deregister(s.source());
        }
        self.tls = None;
        self.state = State::Closed;
        self.reader.clear();
    }

    pub fn is_open(&self) -> bool {
        self.state == State::Open
    }

    pub fn is_setting_up(&self) -> bool {
        matches!(self.state, State::Connecting | State::Handshaking)
    }
}

/// The peer's advertised receive window (bytes) and its unit (1 << the peer's window
/// scale), from TCP_INFO; `None` where the kernel does not give `tcpi_snd_wnd` (before 6.2).
#[cfg(target_os = "linux")]
fn send_window(fd: std::os::fd::RawFd) -> Option<(u64, u64)> {
    // SAFETY: a plain C struct; zero is a valid value for every field.
    let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: TCP_INFO writes at most `len` bytes into the struct we own and sets `len` to
    // what it wrote; `fd` is the connection's open TCP socket.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&raw mut ti).cast(),
            &mut len,
        )
    };
    let need = std::mem::offset_of!(libc::tcp_info, tcpi_snd_wnd) + 4;
    if rc != 0 || (len as usize) < need {
        return None;
    }
    let scale = u32::from(ti.tcpi_snd_rcv_wscale & 0x0f);
    Some((u64::from(ti.tcpi_snd_wnd), 1u64 << scale.min(14)))
}

#[cfg(not(target_os = "linux"))]
fn send_window(_fd: std::os::fd::RawFd) -> Option<(u64, u64)> {
    None
}

/// SIOCOUTQ of a socket: bytes in its send queue not yet acknowledged by the peer.
#[cfg(target_os = "linux")]
fn outq(fd: std::os::fd::RawFd) -> Option<u64> {
    let mut n: libc::c_int = 0;
    // SAFETY: SIOCOUTQ (TIOCOUTQ on Linux) writes one int into the one we own; `fd` is the
    // connection's open socket.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut n) };
    (rc == 0).then(|| u64::try_from(n).unwrap_or(0))
}

#[cfg(not(target_os = "linux"))]
fn outq(_fd: std::os::fd::RawFd) -> Option<u64> {
    None
}

#[allow(
    clippy::indexing_slicing,
    reason = "per-write hot path; the first arm has offset < bufs[0].len(), the second offset - \
              bufs[0].len() <= bufs[1].len() (a link's offset never passes its batch's wire \
              length)"
)]
fn slices_from<'a>(bufs: [&'a [u8]; 2], offset: usize) -> [IoSlice<'a>; 2] {
    if offset < bufs[0].len() {
        [IoSlice::new(&bufs[0][offset..]), IoSlice::new(bufs[1])]
    } else {
        [
            IoSlice::new(&bufs[1][offset - bufs[0].len()..]),
            IoSlice::new(&[]),
        ]
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use std::io::Read;
    use std::time::{Duration, Instant};

    use super::*;

    /// Writes `n` bytes on `c` (looping over `WouldBlock` for at most a second).
    fn write_n(c: &mut Conn, n: usize) {
        let buf = vec![b'x'; n];
        let mut off = 0;
        let until = Instant::now() + Duration::from_secs(1);
        while off < n && Instant::now() < until {
            off = c.write_from([&buf, &[]], off).unwrap();
        }
    }

    /// Connects a `Conn` to a local listener; the accepted end with it.
    fn pair() -> (Conn, std::net::TcpStream, mio::Poll) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let poll = mio::Poll::new().unwrap();
        let mut c = Conn::new(Token(0));
        c.connect(l.local_addr().unwrap(), None, poll.registry())
            .unwrap();
        let (peer, _) = l.accept().unwrap();
        let until = Instant::now() + Duration::from_secs(5);
        while !c.progress().unwrap() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        (c, peer, poll)
    }

    /// The state once it settles (acknowledgements arrive within moments on loopback).
    fn settled(c: &mut Conn, want_acked: u64) -> PeerState {
        let until = Instant::now() + Duration::from_secs(2);
        loop {
            let p = c.peer();
            if p.acked >= want_acked || Instant::now() > until {
                return p;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn the_peers_acknowledgement_and_window_are_read() {
        // A peer that never reads: what it took acknowledged, its window closing as its
        // buffer fills (writes stop at WouldBlock with bytes unsent).
        let (mut c, _idle, _p) = pair();
        write_n(&mut c, 60_000);
        assert_eq!(c.wire_bytes, 60_000);
        let p = settled(&mut c, 60_000);
        assert_eq!(p.acked, 60_000, "{p:?}");
        let fill = vec![b'x'; 1 << 20];
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until && c.write_from([&fill, &[]], 0).unwrap() > 0 {}
        std::thread::sleep(Duration::from_millis(100));
        let p = c.peer();
        assert!(c.unsent().unwrap() > 0, "{p:?}");
        assert!(p.acked > 60_000 && p.acked < c.wire_bytes, "{p:?}");
        assert_eq!(p.window_open, Some(false), "{p:?}");
        // A peer that reads everything: the window opens again.
        let (mut c, mut reader, _p) = pair();
        write_n(&mut c, 60_000);
        let mut buf = vec![0u8; 65_536];
        let mut got = 0;
        reader
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        while got < 60_000 {
            got += reader.read(&mut buf).unwrap();
        }
        // Another small write brings an acknowledgement with the window as it is now.
        write_n(&mut c, 100);
        let p = settled(&mut c, 60_100);
        assert_eq!(p.acked, 60_100, "{p:?}");
        if p.window_open.is_some() {
            let until = Instant::now() + Duration::from_secs(2);
            let mut p = p;
            while p.window_open != Some(true) && Instant::now() < until {
                let _ = reader.read(&mut buf);
                std::thread::sleep(Duration::from_millis(10));
                p = c.peer();
            }
            assert_eq!(p.window_open, Some(true), "{p:?}");
        }
        assert_eq!(c.unsent(), Some(0));
    }
}
