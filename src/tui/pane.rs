//! A pane: one Client Session the TUI owns, its command in the shared Agent Sandbox under a
//! PTY, and the emulator that PTY's output is parsed into. A reader thread parses at most
//! 64 KiB per hold of the emulator lock, answers the program's terminal queries on the PTY,
//! and marks the pane dirty; the UI thread draws from the emulator and writes input.

use super::emulator::{new_emulator, Emulator};
use super::event::{AppEvent, AppSender};
use super::layout::PaneId;
use super::prompter::PanelPrompter;
use crate::session::{Attach, SessionPlan};
use crate::terminal::cancel::Cancel;
use anyhow::Context;
use portable_pty::{MasterPty, PtySize};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Parsed per hold of the emulator lock, so that drawing and other panes never wait long.
const CHUNK: usize = 64 * 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PaneStatus {
    Starting,
    Running { session: String },
    Exited(i32),
    Failed(String),
}

/// What the pane's threads and the UI share.
pub struct PaneShared {
    emulator: Mutex<Box<dyn Emulator>>,
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    master: Mutex<Option<Box<dyn MasterPty + Send>>>,
    cancel: Mutex<Option<Cancel>>,
    /// Set by the reader when there is something new to draw; cleared by the UI when drawn.
    dirty: AtomicBool,
    size: Mutex<(u16, u16)>,
}

pub struct Pane {
    pub id: PaneId,
    /// The Domain and command the pane's session runs (none for an offline pane).
    pub plan: Option<Arc<SessionPlan>>,
    pub status: PaneStatus,
    /// Lines scrolled back into the history (0: following the output).
    pub scroll: usize,
    shared: Arc<PaneShared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Pane {
    /// Starts a Client Session of `plan`'s Domain in a new pane of `rows`×`cols`.
    pub fn start(
        id: PaneId,
        plan: Arc<SessionPlan>,
        (rows, cols): (u16, u16),
        scrollback: usize,
        events: AppSender,
    ) -> Pane {
        let shared = Arc::new(PaneShared::new((rows, cols), scrollback));
        let for_thread = shared.clone();
        let pane_plan = plan.clone();
        let thread = std::thread::spawn(move || {
            let started = events.clone();
            let for_run = for_thread.clone();
            let output = events.clone();
            let attach = Attach::Embedded {
                run: Box::new(move |program, args, cancel| {
                    run_pty(&for_run, program, args, cancel, &output)
                }),
                prompter: Arc::new(PanelPrompter {
                    pane: id,
                    events: Mutex::new(events.clone()),
                }),
                started: Box::new(move |session| {
                    let _ = started.send(AppEvent::Started {
                        pane: id,
                        session: session.to_owned(),
                    });
                }),
            };
            let result = plan
                .run(attach)
                .map(|(code, _)| code)
                .map_err(|e| format!("{e:#}"));
            for_thread.reset_after_exit();
            let _ = events.send(AppEvent::Ended { pane: id, result });
        });
        Pane {
            id,
            plan: Some(pane_plan),
            status: PaneStatus::Starting,
            scroll: 0,
            shared,
            thread: Some(thread),
        }
    }

    /// A pane with no session behind it: its emulator is fed by the caller (snapshot tests of
    /// the UI, benchmarks of the drawing path).
    pub fn offline(id: PaneId, (rows, cols): (u16, u16), scrollback: usize) -> Pane {
        Pane {
            id,
            plan: None,
            status: PaneStatus::Running {
                session: "0123456789abcdef".into(),
            },
            scroll: 0,
            shared: Arc::new(PaneShared::new((rows, cols), scrollback)),
            thread: None,
        }
    }

    /// Sends input to the pane's program (dropped while it is not running).
    pub fn write(&self, bytes: &[u8]) {
        if let Some(w) = lock(&self.shared.writer).as_mut() {
            let _ = w.write_all(bytes).and_then(|_| w.flush());
        }
    }

    /// Resizes emulator and PTY together (the program gets SIGWINCH).
    pub fn resize(&self, rows: u16, cols: u16) {
        let (rows, cols) = (rows.max(1), cols.max(1));
        {
            let mut size = lock(&self.shared.size);
            if *size == (rows, cols) {
                return;
            }
            *size = (rows, cols);
        }
        lock(&self.shared.emulator).resize(rows, cols);
        if let Some(m) = lock(&self.shared.master).as_ref() {
            let _ = m.resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            });
        }
    }

    /// The emulator, for drawing and input encoding (hold briefly).
    pub fn emulator(&self) -> MutexGuard<'_, Box<dyn Emulator>> {
        lock(&self.shared.emulator)
    }

    /// Whether there is new output since the last call.
    pub fn take_dirty(&self) -> bool {
        self.shared.dirty.swap(false, Ordering::SeqCst)
    }

    /// Ends the pane's command; its session then leaves (the thread finishes on its own).
    pub fn close(&self) {
        if let Some(c) = lock(&self.shared.cancel).as_ref() {
            c.fire();
        }
    }

    /// Waits for the pane's session to have left.
    pub fn join(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    pub fn finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }
}

impl PaneShared {
    fn new((rows, cols): (u16, u16), scrollback: usize) -> PaneShared {
        PaneShared {
            emulator: Mutex::new(new_emulator(rows.max(1), cols.max(1), scrollback)),
            writer: Mutex::new(None),
            master: Mutex::new(None),
            cancel: Mutex::new(None),
            dirty: AtomicBool::new(false),
            size: Mutex::new((rows.max(1), cols.max(1))),
        }
    }

    /// The program died: its modes (mouse, bracketed paste, application cursor) no longer
    /// apply to input, and nothing can be written to it.
    fn reset_after_exit(&self) {
        *lock(&self.writer) = None;
        *lock(&self.master) = None;
        lock(&self.emulator).reset_modes();
        self.dirty.store(true, Ordering::SeqCst);
    }
}

/// Runs `program args` (the session's `podman exec`) under a PTY of the pane's size, parsing
/// its output into the emulator until it ends; returns its status.
fn run_pty(
    shared: &Arc<PaneShared>,
    program: &str,
    args: &[String],
    cancel: &Cancel,
    events: &AppSender,
) -> anyhow::Result<i32> {
    let (rows, cols) = *lock(&shared.size);
    let crate::terminal::pty::PtyChild {
        mut child,
        mut reader,
        writer,
        master,
    } = crate::terminal::pty::spawn(program, args, crate::terminal::pty::size(rows, cols))?;
    *lock(&shared.writer) = Some(writer);
    *lock(&shared.master) = Some(master);
    let mut killer = child.clone_killer();
    cancel.arm(Box::new(move || {
        let _ = killer.kill();
    }));
    *lock(&shared.cancel) = Some(cancel.clone());
    // The size may have changed while the PTY was being opened.
    let now = *lock(&shared.size);
    if now != (rows, cols) {
        if let Some(m) = lock(&shared.master).as_ref() {
            let _ = m.resize(PtySize {
                rows: now.0,
                cols: now.1,
                pixel_width: 0,
                pixel_height: 0,
            });
        }
    }
    let mut buf = vec![0u8; CHUNK];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let replies = {
                    let mut emu = lock(&shared.emulator);
                    emu.process(&buf[..n]);
                    emu.take_replies()
                };
                if !replies.is_empty() {
                    if let Some(w) = lock(&shared.writer).as_mut() {
                        let _ = w.write_all(&replies).and_then(|_| w.flush());
                    }
                }
                if !shared.dirty.swap(true, Ordering::SeqCst) {
                    let _ = events.send(AppEvent::Output);
                }
            }
        }
    }
    let status = child.wait().context("waiting for the pane's command")?;
    cancel.disarm();
    Ok(i32::try_from(status.exit_code()).unwrap_or(1))
}
