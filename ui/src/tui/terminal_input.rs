//! The host terminal's input, read on the TUI's own loop: a key wakes the loop's thread itself
//! (an `AsyncFd` on the terminal), is parsed by crossterm there and handled without a hand-off
//! between threads (issue #14: that hand-off was where the slowest keys lost their
//! milliseconds on a two-vCPU host).
//!
//! crossterm's reader never returns on a terminal that is gone (its read loop retries on EOF
//! and EIO), so it is only asked when the terminal is readable and not hung up, a few events
//! at a time, and a SIGHUP replaces standard input by an empty pipe ([`drop_terminal`]) so
//! that a read caught by the hang-up mid-way returns and the loop sees its `Detach`.

use super::event::{AppEvent, AppSender};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::Notify;

/// Events taken per wake-up before the loop gets to run its other work (output, links,
/// signals): a long paste never starves the rest.
const BATCH: usize = 64;

/// Wakes the reader to drain crossterm at once (see [`start`]'s note on SIGWINCH).
#[derive(Clone, Default)]
pub struct Wake(Arc<Notify>);

impl Wake {
    /// The terminal was resized: crossterm's own SIGWINCH event waits in its queue.
    pub fn resized(&self) {
        self.0.notify_one();
    }
}

/// Starts reading the host terminal: on `rt`'s loop when the terminal can be watched there,
/// on a thread of its own otherwise. `Detach` is sent when the terminal goes away.
///
/// crossterm watches SIGWINCH itself, edge-triggered (mio), and when one wait reports both its
/// signal and the terminal it returns the resize and never reads the terminal's bytes: keys
/// typed after a resize then waited, unread, until the next key (issue #16: Claude Code and
/// Codex seemed to ignore keys after a resize in a pane). So `wake.resized()` (called by the
/// TUI's SIGWINCH handler) drains crossterm at once, while its only news is the resize.
pub fn start(rt: &tokio::runtime::Handle, tx: AppSender, wake: Wake) {
    // crossterm's reader (and its SIGWINCH handler) exists before the first wait.
    let _ = crossterm::event::poll(Duration::ZERO);
    // The loop watches its own duplicate of standard input: the same terminal, and a
    // descriptor that stays valid whatever happens to fd 0 (see `drop_terminal`).
    let watched = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| e.to_string())
        .and_then(|own| {
            let _enter = rt.enter();
            // SAFETY: `own` is an open descriptor owned by the AsyncFd for its whole life.
            unsafe { AsyncFd::register_with_interest(own, Interest::READABLE) }
                .map_err(|e| e.to_string())
        });
    match watched {
        Ok(fd) => {
            rt.spawn(read_on_loop(fd, tx, wake));
        }
        Err(e) => {
            tracing::debug!("terminal input on a thread ({e})");
            std::thread::spawn(move || read_on_thread(&tx));
        }
    }
}

async fn read_on_loop(fd: AsyncFd<OwnedFd>, tx: AppSender, wake: Wake) {
    loop {
        let readable = tokio::select! {
            r = fd.readable() => Some(r),
            () = wake.0.notified() => None,
        };
        let Some(readable) = readable else {
            // A resize: take crossterm's pending events now (its resize is dropped: the
            // handler has sent its own).
            if matches!(drain(fd.get_ref().as_raw_fd(), &tx), Drained::Gone) {
                break;
            }
            continue;
        };
        let Ok(mut ready) = readable else {
            break;
        };
        if ready.ready().is_read_closed() {
            break;
        }
        match drain(fd.get_ref().as_raw_fd(), &tx) {
            Drained::All => ready.clear_ready(),
            Drained::Batch => {}
            Drained::Gone => break,
        }
        drop(ready);
        tokio::task::yield_now().await;
    }
    let _ = tx.send(AppEvent::Detach);
}

enum Drained {
    /// Nothing more to read now.
    All,
    /// [`BATCH`] events taken; more may wait.
    Batch,
    /// The terminal cannot be read any more, or the loop is gone.
    Gone,
}

fn drain(terminal: i32, tx: &AppSender) -> Drained {
    for _ in 0..BATCH {
        if hung_up(terminal) {
            return Drained::Gone;
        }
        match crossterm::event::poll(Duration::ZERO) {
            Ok(true) => {}
            Ok(false) => return Drained::All,
            Err(_) => return Drained::Gone,
        }
        let Ok(ev) = crossterm::event::read() else {
            return Drained::Gone;
        };
        // The SIGWINCH handler sends the resize (crossterm's copy would draw a second frame).
        if matches!(ev, crossterm::event::Event::Resize(..)) {
            continue;
        }
        if tx.send(AppEvent::Input(ev)).is_err() {
            return Drained::Gone;
        }
    }
    Drained::Batch
}

/// Whether the terminal reports a hang-up or an error (checked without waiting).
fn hung_up(terminal: i32) -> bool {
    let mut fds = [libc::pollfd {
        fd: terminal,
        events: libc::POLLIN,
        revents: 0,
    }];
    // SAFETY: one valid pollfd, zero timeout.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
    n > 0 && fds[0].revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

fn read_on_thread(tx: &AppSender) {
    while let Ok(ev) = crossterm::event::read() {
        if tx.send(AppEvent::Input(ev)).is_err() {
            return;
        }
    }
    let _ = tx.send(AppEvent::Detach);
}

/// The terminal is gone (SIGHUP): standard input becomes the read end of an empty,
/// non-blocking pipe, so that a read of the dead terminal that is under way returns
/// ("would block") instead of retrying forever. Async-signal-safe calls only; run from the
/// signal thread.
pub fn drop_terminal() {
    let mut p = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two descriptors; dup2 replaces fd 0 atomically; the write end is
    // kept open (leaked on purpose) so the pipe never reports EOF.
    unsafe {
        if libc::pipe2(p.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) == 0 {
            libc::dup2(p[0], 0);
            libc::close(p[0]);
        }
    }
}
