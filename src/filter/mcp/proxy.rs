//! The proxy's two directions: a [`Peer`] each end writes to, the [`Proxy`] both share (its
//! `pump` relays one direction line by line through [`super::relay`]), and [`serve`], which
//! runs an MCP server behind them.

use super::{mask_last_message, mask_message, relay, Direction, Ids, Options};
use crate::decode::json::Step;
use crate::engine::Engine;
use crate::filter::{Masking, Sink};
use crate::model::Known;
use crate::sync::lock;
use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Mutex};

/// One end of the proxy that both directions may write to: a direction forwards to it, the
/// other answers on it a request that could not be scanned. Closing it (the client hung up)
/// closes the pipe.
pub struct Peer {
    out: Mutex<Option<Box<dyn Write + Send>>>,
}

impl Peer {
    pub fn new(w: impl Write + Send + 'static) -> Peer {
        Peer {
            out: Mutex::new(Some(Box::new(w))),
        }
    }

    /// Write one whole message and flush it. A closed peer is a broken pipe.
    pub fn send(&self, bytes: &[u8]) -> io::Result<()> {
        let mut out = lock(&self.out);
        let w = out
            .as_mut()
            .ok_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe))?;
        w.write_all(bytes)?;
        w.flush()
    }

    /// Close the pipe (the peer reads end of input).
    pub fn close(&self) {
        lock(&self.out).take();
    }
}

/// What both directions share: the engine, the secret values seen in either direction, the
/// options, where findings and warnings go.
pub struct Proxy<'a> {
    pub engine: &'a Engine,
    /// A secret the client sent (a tool's argument) is masked when the server echoes it,
    /// and one the server sent is masked wherever it comes again.
    pub known: Arc<Mutex<Known>>,
    pub opts: Options,
    pub sink: &'a dyn Sink,
    /// Warnings for stderr; they never hold message content.
    pub warn: &'a dyn Fn(&str),
    /// The longest message held and scanned ([`MAX_MESSAGE`]); a longer one is withheld.
    pub max_message: usize,
    /// The identifiers seen in either direction: which a server's message keeps, and which
    /// masked request ids go back to the server as it wrote them.
    pub ids: Arc<Mutex<Ids>>,
}

/// The longest message the proxy holds: well above a large resource blob, well below what
/// masking a copy of it (a few times its size) would exhaust.
pub const MAX_MESSAGE: usize = 256 << 20;

impl<'a> Proxy<'a> {
    /// A proxy that holds messages up to [`MAX_MESSAGE`].
    pub fn new(
        engine: &'a Engine,
        known: Arc<Mutex<Known>>,
        ids: Arc<Mutex<Ids>>,
        opts: Options,
        sink: &'a dyn Sink,
        warn: &'a dyn Fn(&str),
    ) -> Proxy<'a> {
        Proxy {
            engine,
            known,
            opts,
            sink,
            warn,
            max_message: MAX_MESSAGE,
            ids,
        }
    }
}

impl Proxy<'_> {
    /// Relay every line from `input` (`dir`'s sender) to `to`, answering on `back`, until end
    /// of input. When `to` is gone the rest is read and dropped, so the sender never blocks
    /// on a full pipe. Returns the first error writing to `to`, after the input ended.
    pub fn pump(
        &self,
        dir: Direction,
        mut input: impl BufRead,
        to: &Peer,
        back: &Peer,
    ) -> io::Result<()> {
        let mut line = Vec::new();
        let mut gone: Option<io::Error> = None;
        loop {
            line.clear();
            let read = input
                .by_ref()
                .take(self.max_message as u64 + 1)
                .read_until(b'\n', &mut line);
            match read {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // A read error ends this direction like end of input; what was read of a
                    // partial line is dropped, never forwarded unscanned.
                    (self.warn)(&format!("reading from the {}: {e}", dir.sender()));
                    break;
                }
            }
            if line.len() > self.max_message && line.last() != Some(&b'\n') {
                // Too long to hold: withheld whole, whatever the options (it can be neither
                // scanned nor forwarded without holding it).
                let rest = input.skip_until(b'\n').unwrap_or(0);
                (self.warn)(&format!(
                    "a message from the {} is longer than {} bytes ({} or more); withheld",
                    dir.sender(),
                    self.max_message,
                    line.len() + rest
                ));
                continue;
            }
            if gone.is_some() {
                continue;
            }
            let masking = Masking::sharing(self.engine, self.known.clone());
            if dir == Direction::ToServer {
                lock(&self.ids).sent_by_client(&line);
                if !self.opts.mask_requests {
                    // Not masked on the way, but what it holds is known from now on.
                    masking.learn(&line);
                }
            }
            // A client's message keeps every identifier; a server's, the client's own.
            let ids = (dir == Direction::ToClient).then(|| lock(&self.ids));
            let keep =
                |path: &[Step], body: &[u8]| ids.as_ref().is_none_or(|i| i.keeps(path, body));
            // A last line without its end: the sender stopped mid-line.
            let cut = !line.ends_with(b"\n");
            let mut r = relay(&line, dir, self.opts, |b| match cut {
                true => mask_last_message(&masking, dir.sender(), b, &keep),
                false => mask_message(&masking, dir.sender(), b, &keep),
            });
            drop(ids);
            if let Some(b) = r.forward.take() {
                let mut ids = lock(&self.ids);
                r.forward = Some(match dir {
                    Direction::ToServer => ids.restore(b),
                    Direction::ToClient => {
                        ids.note_masked(&line, &b);
                        b
                    }
                });
            }
            for f in &r.findings {
                self.sink.finding(f);
            }
            if let Some(w) = &r.warning {
                (self.warn)(w);
            }
            if let Some(b) = &r.reply {
                // The sender may be gone too; its own direction notices.
                let _ = back.send(b);
            }
            if let Some(b) = &r.forward {
                if let Err(e) = to.send(b) {
                    gone = Some(e);
                }
            }
        }
        match gone {
            Some(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
            _ => Ok(()),
        }
    }
}

/// Run `cmd` as an MCP server behind the proxy: our stdin to its stdin, its stdout masked to
/// ours, its stderr passed through. Returns its exit status once it has exited and all its
/// output was forwarded. The client closing our stdin closes the server's.
pub fn serve(
    engine: std::sync::Arc<Engine>,
    cmd: &[String],
    opts: Options,
    sink: std::sync::Arc<dyn Sink + Send>,
    warn: fn(&str),
) -> io::Result<std::process::ExitStatus> {
    use std::process::{Command, Stdio};
    let (prog, args) = cmd
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    crate::filter::stream::install_forwarding();
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    crate::filter::stream::set_child(child.id());
    let known: Arc<Mutex<Known>> = Arc::default();
    let ids: Arc<Mutex<Ids>> = Arc::default();
    let server = Arc::new(Peer::new(child.stdin.take().expect("piped")));
    let client = Arc::new(Peer::new(io::stdout()));
    let from_server = io::BufReader::new(child.stdout.take().expect("piped"));
    // Not joined: the client may keep its end open after the server exited, and the proxy
    // must still exit then.
    {
        let (engine, sink, known, ids) = (engine.clone(), sink.clone(), known.clone(), ids.clone());
        let (server, client) = (server.clone(), client.clone());
        std::thread::spawn(move || {
            let p = Proxy::new(&engine, known, ids, opts, &*sink, &warn);
            let r = p.pump(Direction::ToServer, io::stdin().lock(), &server, &client);
            if let Err(e) = r {
                warn(&format!("writing to the mcp server: {e}"));
            }
            server.close();
        });
    }
    let p = Proxy::new(&engine, known, ids, opts, &*sink, &warn);
    let r = p.pump(Direction::ToClient, from_server, &client, &server);
    let status = child.wait();
    crate::filter::stream::set_child(0);
    r?;
    status
}
