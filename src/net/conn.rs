//! One client connection on mio: an explicit non-blocking connect (`Connecting` until the
//! socket is writable and has no pending error), an optional TLS session driven without
//! blocking (`Handshaking` until rustls is done), writes that stop at `WouldBlock` and keep
//! their offset, reads into the connection's `ResponseReader`, and a close that deregisters.
//! Errors are values for the worker to count, never panics. The socket is TCP, or a Unix
//! stream socket (plain HTTP load's `--unix-socket`); everything above it is the same.

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
                    Ok(_) => progressed = true,
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
                Ok(n) => offset += n,
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
                Ok(_) => any = true,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(any)
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
