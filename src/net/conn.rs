//! One client connection on mio: an explicit non-blocking connect (`Connecting` until the
//! socket is writable and has no pending error), writes that stop at `WouldBlock` and keep
//! their offset, reads into the connection's `ResponseReader`, and a close that deregisters.
//! Errors are values for the worker to count, never panics.

use std::io::{self, IoSlice, Read, Write};
use std::net::SocketAddr;

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};

use crate::net::http::ResponseReader;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Connecting,
    Open,
}

pub struct Conn {
    pub token: Token,
    pub state: State,
    stream: Option<TcpStream>,
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

impl Conn {
    pub fn new(token: Token) -> Self {
        Conn {
            token,
            state: State::Closed,
            stream: None,
            reader: ResponseReader::new(),
        }
    }

    /// Starts a non-blocking connect to `addr`.
    pub fn connect(&mut self, addr: SocketAddr, registry: &Registry) -> io::Result<()> {
        self.close(registry);
        let mut s = TcpStream::connect(addr)?;
        s.set_nodelay(true)?;
        registry.register(&mut s, self.token, Interest::READABLE | Interest::WRITABLE)?;
        self.stream = Some(s);
        self.state = State::Connecting;
        self.reader.clear();
        Ok(())
    }

    /// On a writable event while connecting: `Ok(true)` once connected, `Ok(false)` while still
    /// in progress, `Err` when the connect failed (refused, unreachable…).
    pub fn finish_connect(&mut self) -> io::Result<bool> {
        let Some(s) = &self.stream else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if let Some(e) = s.take_error()? {
            return Err(e);
        }
        match s.peer_addr() {
            Ok(_) => {
                self.state = State::Open;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Writes from `bufs` starting `offset` bytes in, until done or `WouldBlock`. Returns the
    /// new offset.
    pub fn write_from(&mut self, bufs: [&[u8]; 2], mut offset: usize) -> io::Result<usize> {
        let Some(s) = &mut self.stream else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        let total = bufs[0].len() + bufs[1].len();
        while offset < total {
            let slices = if offset < bufs[0].len() {
                [IoSlice::new(&bufs[0][offset..]), IoSlice::new(bufs[1])]
            } else {
                [
                    IoSlice::new(&bufs[1][offset - bufs[0].len()..]),
                    IoSlice::new(&[]),
                ]
            };
            match s.write_vectored(&slices) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => offset += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(offset)
    }

    /// Reads everything available into the response reader.
    pub fn read_available(&mut self) -> io::Result<ReadStatus> {
        let Some(s) = &mut self.stream else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        loop {
            match s.read(self.reader.spare()) {
                Ok(0) => return Ok(ReadStatus::Eof),
                Ok(n) => self.reader.filled(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(ReadStatus::Drained),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    pub fn close(&mut self, registry: &Registry) {
        if let Some(mut s) = self.stream.take() {
            let _ = registry.deregister(&mut s);
        }
        self.state = State::Closed;
        self.reader.clear();
    }

    pub fn is_open(&self) -> bool {
        self.state == State::Open
    }
}
