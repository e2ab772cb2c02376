//! The host terminal while the TUI runs (DX-5): raw mode, alternate screen, mouse capture,
//! bracketed paste and focus events on; all of them off again — in the order that leaves no
//! mode behind (raw off last: mouse and paste off, leave the alternate screen, show the cursor)
//! — on every exit path: drop, error, panic. Stderr is redirected into the TUI while it owns the
//! terminal, so that progress and notes of Lazaret and the programs it runs do not scribble
//! over the screen; they become status messages instead.

use super::event::{AppEvent, AppSender};
use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture,
};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use std::io::{BufRead, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The host terminal set up for the TUI; dropping it restores everything.
pub struct Screen {
    saved_stderr: Option<OwnedFd>,
}

impl Screen {
    pub fn enter(events: AppSender) -> anyhow::Result<Screen> {
        install_panic_hook();
        crossterm::terminal::enable_raw_mode()
            .map_err(|e| anyhow::anyhow!("putting the terminal in raw mode: {e}"))?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut out = std::io::stdout();
        execute!(
            out,
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste,
            EnableFocusChange,
            cursor::Hide
        )
        .map_err(|e| {
            restore();
            anyhow::anyhow!("setting up the terminal: {e}")
        })?;
        let saved_stderr = capture_stderr(events);
        Ok(Screen { saved_stderr })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
        if let Some(fd) = self.saved_stderr.take() {
            // SAFETY: dup2 onto fd 2 of a descriptor this process owns.
            unsafe {
                libc::dup2(fd.as_raw_fd(), 2);
            }
        }
    }
}

/// Restores the host terminal if the TUI set it up; safe to call more than once.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let mut out = std::io::stdout();
        let _ = execute!(
            out,
            DisableMouseCapture,
            DisableBracketedPaste,
            DisableFocusChange,
            LeaveAlternateScreen,
            cursor::Show
        );
        let _ = out.flush();
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| crate::terminal::raw_mode::chain_panic_hook(restore));
}

/// Points fd 2 at a pipe whose lines become [`AppEvent::Message`]s; returns the old stderr.
fn capture_stderr(events: AppSender) -> Option<OwnedFd> {
    let (read, write) = nix::unistd::pipe().ok()?;
    // SAFETY: dup of fd 2, which is open for the life of the process.
    let saved = unsafe { libc::dup(2) };
    if saved < 0 {
        return None;
    }
    // SAFETY: `saved` is a fresh descriptor owned by nothing else.
    let saved = unsafe { OwnedFd::from_raw_fd(saved) };
    // SAFETY: dup2 of a pipe end this process owns onto fd 2.
    if unsafe { libc::dup2(write.as_raw_fd(), 2) } < 0 {
        return None;
    }
    drop(write);
    std::thread::spawn(move || {
        let reader = std::io::BufReader::new(std::fs::File::from(read));
        for line in reader.split(b'\n').map_while(Result::ok) {
            let text = String::from_utf8_lossy(&line).trim_end().to_owned();
            if !text.is_empty() && events.send(AppEvent::Message(text)).is_err() {
                break;
            }
        }
    });
    Some(saved)
}
