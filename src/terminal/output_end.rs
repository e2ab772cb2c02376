//! When a session's output is over (issue #16). At the PTY's end of file, as before — or once
//! the session's command has exited and its PTY has then been quiet for [`QUIET`] (at most
//! [`LINGER`] after the exit): a process the command left behind may hold the terminal for as
//! long as it runs. Daemons do (Codex's app server): they send their stdio to `/dev/null` but
//! keep descriptor 255, the terminal `/dev/tty` opens (`lazaret-escalate --keep-terminal`),
//! and a background job writing to the terminal holds it too. The session ends with its
//! command, as a tmux pane does; what is left behind keeps running with a terminal nobody reads.
//! The same holds for the pipes of a `lazaret run` that `runsc exec` hands to the sandbox
//! (issue #18): the CLI relays them, and stops once the command exited and they went quiet.

use crate::wake::WakeFlag;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Quiet after the command's exit that ends the output.
pub const QUIET: Duration = Duration::from_millis(300);
/// Longest the output is still read after the command's exit.
pub const LINGER: Duration = Duration::from_secs(3);
/// How often the exit is looked at while the PTY is quiet.
const TICK: Duration = Duration::from_millis(100);

/// Watches the PTY (its own descriptor of the master) and the command's exit.
pub struct OutputEnd {
    fd: OwnedFd,
    exited: Arc<WakeFlag>,
    exited_at: Option<Instant>,
    last_output: Instant,
}

impl OutputEnd {
    pub fn new(fd: OwnedFd, exited: Arc<WakeFlag>) -> OutputEnd {
        OutputEnd {
            fd,
            exited,
            exited_at: None,
            last_output: Instant::now(),
        }
    }

    /// Waits until the PTY has something to read (true), or its output is over (false). While
    /// the command runs it sleeps until output or the exit (no timer: an idle session costs
    /// nothing, issue #18); after the exit it looks every [`TICK`].
    pub fn wait(&mut self) -> bool {
        loop {
            let exited = self.exited.is_set();
            let wake = self.exited.fd().filter(|_| !exited);
            let mut p = [
                libc::pollfd {
                    fd: self.fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: wake.map_or(-1, |w| w.as_raw_fd()),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let tick = if wake.is_some() {
                -1
            } else {
                i32::try_from(TICK.as_millis()).unwrap_or(100)
            };
            // SAFETY: two pollfds (a negative fd is ignored by poll) on descriptors that live
            // as long as this call.
            let n = unsafe { libc::poll(p.as_mut_ptr(), 2, tick) };
            let now = Instant::now();
            if n > 0 && p[0].revents != 0 {
                // Readable, or hung up / in error: the read says which.
                self.last_output = now;
                return true;
            }
            if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return true;
            }
            if !exited {
                continue;
            }
            let exited_at = *self.exited_at.get_or_insert(now);
            if over(now, exited_at, self.last_output) {
                return false;
            }
        }
    }
}

/// Whether output that was last seen at `last_output` is over at `now`, the command having
/// exited at `exited_at`.
pub fn over(now: Instant, exited_at: Instant, last_output: Instant) -> bool {
    let quiet_since = last_output.max(exited_at);
    now.duration_since(quiet_since) >= QUIET || now.duration_since(exited_at) >= LINGER
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_over_after_a_quiet_spell_or_the_linger_after_the_exit() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        assert!(!over(t0 + ms(100), t0, t0), "just exited");
        assert!(over(t0 + QUIET, t0, t0), "quiet since the exit");
        assert!(
            !over(t0 + ms(500), t0, t0 + ms(400)),
            "output after the exit"
        );
        assert!(over(t0 + ms(400) + QUIET, t0, t0 + ms(400)));
        assert!(
            over(t0 + LINGER, t0, t0 + LINGER - ms(1)),
            "a chatty leftover"
        );
    }

    #[test]
    fn a_pipe_held_open_by_someone_else_ends_once_the_command_exited_and_it_is_quiet() {
        let (r, w) = nix::unistd::pipe().expect("a pipe");
        let exited = Arc::new(WakeFlag::new());
        let mut end = OutputEnd::new(r, exited.clone());
        nix::unistd::write(&w, b"x").expect("write");
        assert!(end.wait(), "output is readable");
        let mut byte = [0u8; 1];
        nix::unistd::read(&end.fd, &mut byte).expect("read");
        // While the command runs, the wait sleeps until the exit wakes it.
        let setter = {
            let exited = exited.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                exited.set();
            })
        };
        let t = Instant::now();
        assert!(
            !end.wait(),
            "the writer is still open, yet the output is over"
        );
        assert!(t.elapsed() >= QUIET, "{:?}", t.elapsed());
        assert!(t.elapsed() < LINGER, "{:?}", t.elapsed());
        let _ = setter.join();
        drop(w);
    }
}
