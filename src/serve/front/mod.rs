//! The HTTP/1.1 front every web surface of this binary sits behind: the status page and
//! `/metrics` of a run, and the control panel of `ingestbench serve`. It replaced tiny_http
//! 0.12, which could not be made safe from outside (it drained an unread body into a buffer
//! of the declared size when a request was dropped — one `Content-Length: 1000000000000`
//! aborted the process — read header lines without a limit, and ran a thread per connection).
//!
//! One thread owns the listener and every connection (mio, edge-triggered, non-blocking);
//! each connection is a `conn::Conn`, which judges a request by its head alone
//! (`Service::admit`) before it reads a byte of its body, reads exactly the body the route
//! takes within a deadline, and closes a connection whose head lied (`wire`). A request
//! ready to be answered goes to a few handler threads (`Service::answer`); their answers
//! come back through a channel and a `mio::Waker`. So a client that stalls (slowloris, a
//! body that never comes, an answer never read) costs a buffer and a deadline, never a
//! thread; at `Limits::connections` the connection that has waited longest for its head is
//! dropped for a new one.

pub mod conn;
pub mod wire;

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use super::guard::{self, Head, Reply, Response};
use conn::{Bodies, Conn};

/// What a web surface does with requests. `admit` runs on the front's own thread and must
/// be quick; `answer` runs on a handler thread.
pub trait Service: Send + Sync + 'static {
    /// What `admit` learnt about a request that `answer` needs.
    type Route: Send + 'static;

    /// Judges a request by its head alone (nothing of its body has been read): its route and
    /// the most body bytes that route takes, or the answer that refuses it.
    fn admit(&self, head: &Head) -> Result<(Self::Route, usize), Response>;

    /// Answers an admitted request, given its whole body (at most the limit `admit` gave).
    fn answer(&self, route: Self::Route, body: Vec<u8>) -> Response;
}

/// How much one server takes at once.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Handler threads.
    pub threads: usize,
    /// Open connections; at the limit, the one that has waited longest for a head is closed
    /// for a new one.
    pub connections: usize,
    /// Requests whose body is being received at once; more are answered 503.
    pub bodies: usize,
}

/// How often the front looks at its deadlines and its stop flag.
const TICK: Duration = Duration::from_millis(100);

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);

/// Binds `addr` (port 0 picks a free port).
pub fn bind(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    std::net::TcpListener::bind(addr)
}

/// A running front; `shutdown` (or drop) stops it.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    threads: Vec<JoinHandle<()>>,
}

impl Server {
    /// Serves `svc` on `listener` with a front thread named `name` and `limits.threads`
    /// handler threads.
    pub fn start<S: Service>(
        name: &str,
        listener: std::net::TcpListener,
        svc: Arc<S>,
        limits: Limits,
    ) -> io::Result<Server> {
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let mut listener = TcpListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let stop = Arc::new(AtomicBool::new(false));
        let (jobs_tx, jobs_rx) = crossbeam_channel::bounded(limits.threads.max(1) * 8);
        let (done_tx, done_rx) = crossbeam_channel::unbounded();
        let mut threads = Vec::new();
        for i in 0..limits.threads.max(1) {
            let (svc, jobs, done) = (svc.clone(), jobs_rx.clone(), done_tx.clone());
            let (waker, stop) = (waker.clone(), stop.clone());
            let t = thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || handle_jobs(&*svc, &jobs, &done, &waker, &stop))?;
            threads.push(t);
        }
        let front = Front {
            poll,
            listener,
            svc,
            conns: HashMap::new(),
            next: 2,
            limits,
            bodies: Bodies {
                count: Arc::new(AtomicUsize::new(0)),
                most: limits.bodies,
            },
            jobs: jobs_tx,
            done: done_rx,
            stop: stop.clone(),
        };
        let t = thread::Builder::new()
            .name(name.to_string())
            .spawn(move || front.run())?;
        threads.push(t);
        Ok(Server {
            addr,
            stop,
            waker,
            threads,
        })
    }

    /// The address bound (the real port when 0 was asked).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving and waits up to `wait` for the threads (a handler still busy is left
    /// to finish on its own); the listener is closed when the front thread ends.
    pub fn shutdown(mut self, wait: Duration) {
        self.signal();
        let deadline = Instant::now() + wait;
        for t in std::mem::take(&mut self.threads) {
            while !t.is_finished() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(5));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }

    fn signal(&self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.waker.wake();
    }
}

/// A server dropped without `shutdown` still stops, within a tick, without waiting.
impl Drop for Server {
    fn drop(&mut self) {
        self.signal();
    }
}

/// A request for a handler: which connection, and what to answer.
struct Job<R> {
    id: usize,
    route: R,
    body: Vec<u8>,
}

/// A handler thread: answers jobs until the front stops. A handler that panics answers 500.
fn handle_jobs<S: Service>(
    svc: &S,
    jobs: &Receiver<Job<S::Route>>,
    done: &Sender<(usize, Response)>,
    waker: &Waker,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Acquire) {
        let job = match jobs.recv_timeout(TICK) {
            Ok(j) => j,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
        };
        let r = catch_unwind(AssertUnwindSafe(|| svc.answer(job.route, job.body)))
            .unwrap_or_else(|_| refusal(500, "internal error"));
        if done.send((job.id, r)).is_err() {
            return;
        }
        let _ = waker.wake();
    }
}

fn refusal(status: u16, message: &str) -> Response {
    guard::response(Reply::error(status, message), guard::SELF_CSP)
}

struct Client<R> {
    stream: TcpStream,
    conn: Conn<R>,
    /// Its write side has been shut (it lingers).
    shut: bool,
}

/// The front thread's state.
struct Front<S: Service> {
    poll: Poll,
    listener: TcpListener,
    svc: Arc<S>,
    conns: HashMap<usize, Client<S::Route>>,
    next: usize,
    limits: Limits,
    bodies: Bodies,
    jobs: Sender<Job<S::Route>>,
    done: Receiver<(usize, Response)>,
    stop: Arc<AtomicBool>,
}

impl<S: Service> Front<S> {
    fn run(mut self) {
        let mut events = Events::with_capacity(256);
        while !self.stop.load(Ordering::Acquire) {
            if let Err(e) = self.poll.poll(&mut events, Some(TICK))
                && e.kind() != io::ErrorKind::Interrupted
            {
                thread::sleep(TICK);
            }
            let now = Instant::now();
            let mut touched: Vec<usize> = events
                .iter()
                .map(|e| e.token().0)
                .filter(|t| *t >= 2)
                .collect();
            // Accepting on every tick: an accept that failed (no file descriptor left) is
            // tried again without waiting for another edge.
            self.accept(now, &mut touched);
            while let Ok((id, r)) = self.done.try_recv() {
                if let Some(c) = self.conns.get_mut(&id) {
                    c.conn.answered(&r, now);
                    touched.push(id);
                }
            }
            for id in touched {
                self.drive(id, now);
            }
            self.expire(now);
        }
    }

    fn accept(&mut self, now: Instant, touched: &mut Vec<usize>) {
        loop {
            let stream = match self.listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            if self.conns.len() >= self.limits.connections && !self.evict_one() {
                drop(stream);
                continue;
            }
            let _ = stream.set_nodelay(true);
            let id = self.next;
            self.next = self.next.wrapping_add(1).max(2);
            let mut client = Client {
                stream,
                conn: Conn::new(now),
                shut: false,
            };
            let interest = Interest::READABLE | Interest::WRITABLE;
            if self
                .poll
                .registry()
                .register(&mut client.stream, Token(id), interest)
                .is_ok()
            {
                self.conns.insert(id, client);
                touched.push(id);
            }
        }
    }

    /// Closes the connection that has waited longest for a request head; false when every
    /// connection is busy with a request.
    fn evict_one(&mut self) -> bool {
        let oldest = self
            .conns
            .iter()
            .filter_map(|(id, c)| c.conn.evictable_since().map(|t| (t, *id)))
            .min();
        match oldest {
            Some((_, id)) => {
                self.close(id);
                true
            }
            None => false,
        }
    }

    fn close(&mut self, id: usize) {
        if let Some(mut c) = self.conns.remove(&id) {
            let _ = self.poll.registry().deregister(&mut c.stream);
        }
    }

    fn expire(&mut self, now: Instant) {
        let ids: Vec<usize> = self.conns.keys().copied().collect();
        for id in ids {
            if self.conns.get_mut(&id).is_some_and(|c| c.conn.expire(now)) {
                self.drive(id, now);
            }
        }
    }

    /// Reads, parses, dispatches and writes for one connection as far as it goes without
    /// blocking; closes it when it is finished with.
    fn drive(&mut self, id: usize, now: Instant) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        // Each pass either makes progress or stops; a pipelined request is taken only once
        // the answer before it has been written, so a few passes are all there is.
        for _ in 0..8 {
            let before = (c.conn.pending().len(), c.conn.room());
            flush(c, now);
            fill(c);
            // A service that panics judging a head loses that connection, not the front.
            let svc = &*self.svc;
            let advanced =
                catch_unwind(AssertUnwindSafe(|| c.conn.advance(svc, &self.bodies, now)));
            let ready = advanced.unwrap_or_else(|_| {
                c.conn.broken();
                None
            });
            if let Some(ready) = ready {
                let job = Job {
                    id,
                    route: ready.route,
                    body: ready.body,
                };
                match self.jobs.try_send(job) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                        c.conn.answered(&refusal(503, "busy; try again"), now);
                    }
                }
            }
            flush(c, now);
            if c.conn.lingering() && !c.shut {
                // The answer is out: the client sees the end of it now, and what it still
                // sends is read and dropped until it closes or the linger ends.
                let _ = c.stream.shutdown(std::net::Shutdown::Write);
                c.shut = true;
            }
            if c.conn.closed() || (c.conn.pending().len(), c.conn.room()) == before {
                break;
            }
        }
        if c.conn.closed() {
            self.close(id);
        }
    }
}

/// Writes what the connection has to write until the socket would block.
fn flush<R>(c: &mut Client<R>, now: Instant) {
    while !c.conn.pending().is_empty() {
        match c.stream.write(c.conn.pending()) {
            Ok(0) => return c.conn.peer_closed(),
            Ok(n) => c.conn.wrote(n, now),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(_) => return c.conn.broken(),
        }
    }
}

/// Reads what the connection takes until the socket would block or it takes no more.
fn fill<R>(c: &mut Client<R>) {
    let mut scratch = [0u8; 16 * 1024];
    loop {
        let room = c.conn.room().min(scratch.len());
        if room == 0 {
            return;
        }
        let Some(buf) = scratch.get_mut(..room) else {
            return;
        };
        match c.stream.read(buf) {
            Ok(0) => return c.conn.peer_closed(),
            Ok(n) => c.conn.received(buf.get(..n).unwrap_or_default()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(_) => return c.conn.broken(),
        }
    }
}
