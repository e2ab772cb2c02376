//! A plain terminal attached to a coordinator-owned session (`lazaret attach`, `lazaret run
//! --detachable`): keystrokes go to the session through the coordinator, its output comes back
//! through the profile's output filter (as in `lazaret run`), the screen is redrawn from the
//! coordinator's state on attach, and `ctrl-b d` detaches. Escalation prompts of the session
//! are offered here too (the first decision of any attached client wins).
//!
//! Losing the terminal (SIGHUP) or SIGTERM/SIGINT detaches; it never ends the session.

use crate::detach_key::DetachKey;
use crate::terminal::gate::TerminalGate;
use crate::terminal::prompt::TerminalPrompter;
use crate::terminal::raw_mode::RawModeGuard;
use crate::terminal::signals::SignalForwarder;
use lazaret_client::connection::Connection;
use lazaret_client::prompts::{OpenPrompts, Prompter};
use lazaret_protocol::access::TerminalAccess;
use lazaret_protocol::escalation::Decision;
use lazaret_protocol::framing::{self, Frame, FrameError};
use lazaret_protocol::messages::{ClientMessage, CoordinatorMessage};
use lazaret_protocol::SessionId;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// How an attachment ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The developer detached (or the terminal went away); the session runs on.
    Detached,
    /// The session's process ended.
    Exited(Option<i32>),
    /// The Agent Sandbox stopped under the command; why.
    SandboxStopped(String),
    /// The coordinator went away.
    Gone(String),
}

enum Cmd {
    Input(Vec<u8>),
    Resize,
    Redraw,
    Detach,
    Decided(String, Option<Decision>),
}

/// Why a prompt on this terminal closes when the developer detaches.
const DETACHED: &str = "you detached; the request waits for the session's other clients \
(lazaret attach, lazaret tui) until it times out";

/// Output chunks queued for the terminal beyond which this client drops output and, once the
/// terminal has caught up, asks for a fresh redraw (at most 256 × 1 MiB frames).
const BEHIND_AFTER: usize = 256;

/// Keys typed before the session is attached that are kept for it (a paste at most).
const MAX_TYPED_AHEAD: usize = 64 * 1024;

/// How often a client that fell behind checks whether its terminal caught up.
const CATCH_UP_CHECK: std::time::Duration = std::time::Duration::from_millis(100);

/// Output on its way to the terminal's writer thread.
struct Output {
    tx: std::sync::mpsc::Sender<lazaret_protocol::framing::Bytes>,
    /// Chunks queued and not written yet.
    queued: Arc<AtomicUsize>,
    /// Output was dropped: a redraw is due once the terminal caught up.
    behind: bool,
}

impl Output {
    /// Queues a chunk, or drops it when the terminal is too far behind; false when the
    /// writer is gone.
    fn push(&mut self, bytes: lazaret_protocol::framing::Bytes) -> bool {
        if self.behind || self.queued.load(Ordering::SeqCst) >= BEHIND_AFTER {
            self.behind = true;
            return true;
        }
        self.queued.fetch_add(1, Ordering::SeqCst);
        self.tx.send(bytes).is_ok()
    }
}

/// Modes a session may have left on, turned off when the terminal is handed back.
const RESET_MODES: &[u8] = b"\x1b[0m\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\
\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[?1l\x1b>";

/// Leaves the alternate screen: the terminal shows its normal screen again, the cursor where it
/// was when the program switched.
const LEAVE_ALT_SCREEN: &[u8] = b"\x1b[?1049l";

/// What hands the terminal back to the developer's shell (issue #32, D5). Attaching does not
/// switch screens (a plain terminal keeps the session's output in its scrollback, as `lazaret
/// run` does), so the alternate screen is left only when the session's program is on it (vim,
/// less): `ESC[?1049l` on the normal screen restores a cursor saved long ago (xterm, VTE, tmux
/// do), and the shell's prompt then lands on the session's old output. On the normal screen
/// the cursor stays below the session's last line.
pub fn hand_back(on_alt_screen: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(RESET_MODES.len() + LEAVE_ALT_SCREEN.len());
    if on_alt_screen {
        out.extend_from_slice(LEAVE_ALT_SCREEN);
    }
    out.extend_from_slice(RESET_MODES);
    out
}

pub fn terminal_size() -> (u16, u16) {
    match crossterm::terminal::size() {
        Ok((cols, rows)) if cols > 0 && rows > 0 => (rows, cols),
        _ => (24, 80),
    }
}

/// Runs the attached terminal until detach, exit or the coordinator's end. With `attach_now`,
/// asks to attach first (else the connection is attached already, e.g. by `start_session`).
pub fn run(
    rt: &tokio::runtime::Runtime,
    mut conn: Connection,
    session: SessionId,
    access: TerminalAccess,
    attach_now: bool,
) -> anyhow::Result<Outcome> {
    let gate = Arc::new(TerminalGate::new(access));
    let prompter: Arc<dyn Prompter> = Arc::new(TerminalPrompter::new(gate.clone()));
    let (cmd_tx, mut cmds) = mpsc::unbounded_channel::<Cmd>();
    let _raw = RawModeGuard::enable()?;
    let signals = {
        let (term, winch) = (cmd_tx.clone(), cmd_tx.clone());
        SignalForwarder::start(
            move |_| {
                let _ = term.send(Cmd::Detach);
            },
            move || {
                let _ = winch.send(Cmd::Resize);
            },
        )?
    };
    let redraw = cmd_tx.clone();
    gate.set_redraw(Box::new(move || {
        let _ = redraw.send(Cmd::Redraw);
    }));
    // Output is written by its own thread: a prompt holds the gate's output while it owns the
    // terminal, and the connection must keep running meanwhile (its decision goes over it).
    // Bounded (see [`Output`]): a terminal that stops taking output never makes this client
    // hold the session's output without limit.
    let (out_tx, out_rx) = std::sync::mpsc::channel::<lazaret_protocol::framing::Bytes>();
    let queued = Arc::new(AtomicUsize::new(0));
    let written = queued.clone();
    let out_gate = gate.clone();
    let writer = std::thread::spawn(move || {
        let mut stdout = std::io::stdout();
        let mut filtered = Vec::new();
        while let Ok(bytes) = out_rx.recv() {
            let mut filter = out_gate.output();
            filtered.clear();
            filter.filter(&bytes, &mut filtered);
            let done = stdout.write_all(&filtered).and_then(|_| stdout.flush());
            written.fetch_sub(1, Ordering::SeqCst);
            if done.is_err() {
                break;
            }
        }
    });
    let out = Output {
        tx: out_tx,
        queued,
        behind: false,
    };
    // Stdin is read until the process ends; this thread is not joined (a read may block).
    let in_gate = gate.clone();
    let input = cmd_tx.clone();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 4096];
        let mut key = DetachKey::default();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => {
                    let _ = input.send(Cmd::Detach);
                    break;
                }
                Ok(n) => {
                    // The detach key counts while a prompt owns the terminal too.
                    let routed = key.route(&in_gate, &buf[..n]);
                    let bytes = routed.for_session;
                    if !bytes.is_empty() && input.send(Cmd::Input(bytes)).is_err() {
                        break;
                    }
                    if routed.detach {
                        let _ = input.send(Cmd::Detach);
                        break;
                    }
                }
            }
        }
    });
    let outcome = rt.block_on(pump(
        &mut conn, &session, attach_now, &mut cmds, cmd_tx, out, prompter,
    ));
    let _ = writer.join();
    drop(signals);
    let back = hand_back(gate.output().modes.alt_screen());
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(&back).and_then(|_| stdout.flush());
    rt.block_on(conn.close());
    outcome
}

/// Attaching at this terminal's size (the redraw replaces whatever the terminal shows).
fn attach_message(session: &SessionId) -> ClientMessage {
    let (rows, cols) = terminal_size();
    ClientMessage::AttachSession {
        session_id: session.clone(),
        rows,
        cols,
        history: 0,
        // A plain terminal keeps the program's bytes in its own scrollback.
        updates: lazaret_protocol::messages::Updates::Bytes,
    }
}

async fn pump(
    conn: &mut Connection,
    session: &SessionId,
    attach_now: bool,
    cmds: &mut mpsc::UnboundedReceiver<Cmd>,
    answers: mpsc::UnboundedSender<Cmd>,
    mut out: Output,
    prompter: Arc<dyn Prompter>,
) -> anyhow::Result<Outcome> {
    let c = &mut conn.conn;
    if attach_now {
        framing::send(c, &attach_message(session)).await?;
    }
    let mut channel: Option<u32> = None;
    let mut open = OpenPrompts::default();
    let mut detaching = false;
    let mut typed_ahead: Vec<u8> = Vec::new();
    let mut tick = tokio::time::interval(CATCH_UP_CHECK);
    loop {
        tokio::select! {
            _ = tick.tick(), if out.behind => {
                // The terminal took what was queued: a fresh redraw replaces what was dropped.
                if out.queued.load(Ordering::SeqCst) == 0 {
                    out.behind = false;
                    channel = None;
                    framing::send(c, &attach_message(session)).await?;
                }
            }
            Some(cmd) = cmds.recv() => match cmd {
                Cmd::Input(bytes) => match channel {
                    Some(ch) => framing::send_data(c, ch, &bytes).await?,
                    // Typed before the session is attached (or while re-attaching): kept, and
                    // sent once it is, in order.
                    None if typed_ahead.len() < MAX_TYPED_AHEAD => typed_ahead.extend(bytes),
                    None => {}
                },
                // A prompt closed by the detach asks for a redraw: not for a terminal leaving.
                Cmd::Resize | Cmd::Redraw if detaching => {}
                Cmd::Resize | Cmd::Redraw => {
                    let now = terminal_size();
                    // A redraw after a prompt: a size change makes full-screen programs redraw.
                    if matches!(cmd, Cmd::Redraw) {
                        let narrower = ClientMessage::ResizeSession {
                            session_id: session.clone(),
                            rows: now.0,
                            cols: now.1.saturating_sub(1).max(1),
                        };
                        framing::send(c, &narrower).await?;
                    }
                    let msg = ClientMessage::ResizeSession {
                        session_id: session.clone(),
                        rows: now.0,
                        cols: now.1,
                    };
                    framing::send(c, &msg).await?;
                }
                Cmd::Detach => {
                    if detaching {
                        continue;
                    }
                    detaching = true;
                    // Closed here only: the coordinator keeps offering them to the session's
                    // other clients and the control centres.
                    open.withdraw_all(DETACHED);
                    let msg = ClientMessage::DetachSession { session_id: session.clone() };
                    framing::send(c, &msg).await?;
                }
                Cmd::Decided(request_id, decision) => {
                    open.answered(&request_id);
                    if let Some(decision) = decision {
                        let msg = ClientMessage::EscalationDecision { request_id, decision };
                        framing::send(c, &msg).await?;
                    }
                }
            },
            frame = framing::recv_frame::<_, CoordinatorMessage>(c) => match frame {
                Ok(Frame::Data { channel: ch, bytes }) => {
                    if channel.is_none_or(|mine| mine == ch) && !out.push(bytes) {
                        return Ok(Outcome::Gone("the terminal output failed".into()));
                    }
                }
                Ok(Frame::Message(msg)) => match msg {
                    CoordinatorMessage::Attached { session_id, channel: ch, .. }
                        if &session_id == session => {
                        channel = Some(ch);
                        if !typed_ahead.is_empty() {
                            framing::send_data(c, ch, &std::mem::take(&mut typed_ahead)).await?;
                        }
                    }
                    CoordinatorMessage::Detached { session_id }
                        if &session_id == session && detaching => return Ok(Outcome::Detached),
                    CoordinatorMessage::SessionExited { session_id, status, reason, sandbox_stopped }
                        if &session_id == session => {
                        open.withdraw_all("the session ended");
                        if sandbox_stopped {
                            return Ok(Outcome::SandboxStopped(reason));
                        }
                        return Ok(Outcome::Exited(status));
                    }
                    CoordinatorMessage::EscalationPrompt { prompt } => {
                        let answers = answers.clone();
                        let mine = prompt.session_id == session.as_str();
                        let p = if mine { Some(&prompter) } else { None };
                        if !mine {
                            // Only the attached session's prompts are shown here (FR-5).
                            continue;
                        }
                        open.open(p, prompt, move |id, d| {
                            let _ = answers.send(Cmd::Decided(id, d));
                        });
                    }
                    CoordinatorMessage::EscalationWithdrawn { request_id, reason } => {
                        open.withdraw(&request_id, &reason);
                    }
                    CoordinatorMessage::Shutdown { reason } => return Ok(Outcome::Gone(reason)),
                    CoordinatorMessage::Error { message } => anyhow::bail!("{message}"),
                    _ => {}
                },
                Err(FrameError::Closed) => return Ok(Outcome::Gone("it closed the connection".into())),
                Err(e) => return Ok(Outcome::Gone(format!("its connection broke: {e}"))),
            },
        }
    }
}

/// What the developer is told when the attachment ends; the exit status of the command.
pub fn report(outcome: &Outcome, session: &SessionId) -> i32 {
    let short = &session.as_str()[..12];
    match outcome {
        Outcome::Detached => {
            eprintln!(
                "\r\nlazaret: detached from session {short}; it keeps running. Back with: \
                 lazaret attach {short}"
            );
            0
        }
        Outcome::Exited(status) => status.unwrap_or(0),
        // Lazaret's failure, not the command's status (runsc's own 128).
        Outcome::SandboxStopped(reason) => {
            eprintln!(
                "\r\nlazaret: error: {}; the command's status is unknown. The next `lazaret run` \
                 starts a new sandbox",
                crate::terminal::escape::visible(reason)
            );
            125
        }
        Outcome::Gone(reason) => {
            eprintln!(
                "\r\nlazaret: the Domain's Session Coordinator went away ({reason}); the session \
                 ended with it"
            );
            125
        }
    }
}

#[cfg(test)]
#[path = "attach_tests.rs"]
mod tests;
