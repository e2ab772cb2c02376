//! Late input drained before the terminal goes back to cooked mode (DX-4). The sandbox's
//! output may ask the terminal something (CSI 6n, DA) just before the command ends; the
//! terminal's reply (`ESC [ 12 ; 1 R`) then arrives after Lazaret stopped reading, and the
//! host shell would read it as typed input. So, on the way out, input is discarded until the
//! terminal has been quiet for [`QUIET`] (at most [`MOST`] in all), then once more.

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::termios::{tcflush, FlushArg};
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

/// Input must have stopped this long before the terminal is handed back.
pub const QUIET: Duration = Duration::from_millis(80);
/// The longest the drain waits, whatever keeps arriving.
pub const MOST: Duration = Duration::from_millis(400);

/// Discards the input waiting on terminal `fd` until none came for `quiet` (or `most` has
/// passed), then discards what is left.
pub fn drain(fd: BorrowedFd<'_>, quiet: Duration, most: Duration) {
    let until = Instant::now() + most;
    loop {
        let _ = tcflush(fd, FlushArg::TCIFLUSH);
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        let wait = PollTimeout::try_from(quiet.min(left)).unwrap_or(PollTimeout::ZERO);
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        match poll(&mut fds, wait) {
            Ok(0) => return,
            Ok(_) => {
                let readable = fds[0]
                    .revents()
                    .is_some_and(|r| r.contains(PollFlags::POLLIN));
                if !readable {
                    // Hung up or an error: nothing more will be read from it.
                    return;
                }
            }
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return,
        }
    }
}

/// [`drain`] on stdin with the default times, if stdin is a terminal.
pub fn drain_stdin() {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        use std::os::fd::AsFd;
        drain(stdin.as_fd(), QUIET, MOST);
    }
}

#[cfg(test)]
#[path = "drain_tests.rs"]
mod tests;
