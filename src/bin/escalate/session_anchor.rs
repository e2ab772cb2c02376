//! Where a session's processes find its Session Anchor (issue #31): not in the environment —
//! every process inside runs as root, and any of them, in any session, reads any other's
//! `/proc/PID/environ` — but in an inherited socket on [`ANCHOR_FD`], whose buffered bytes are
//! read with `MSG_PEEK` (never consumed). A socket cannot be reopened through `/proc/PID/fd/N`
//! (`ENXIO`), gVisor has no `pidfd_getfd`, and ptrace of a process that is not one's descendant
//! is refused (Yama scope 1), so another session cannot reach it.
//!
//! `--keep-terminal`, the first process of every session, moves the anchor from its own
//! environment into the socket before the session's command replaces it ([`hide`]): the
//! anchor is in an environment only until that `exec`. Programs that close every inherited
//! descriptor (Python's `subprocess` by default) leave their children without it.

use std::os::fd::RawFd;

/// The descriptor the anchor's socket is kept on (next to the terminal's, 255).
pub const ANCHOR_FD: RawFd = 254;
/// Names [`ANCHOR_FD`] for a session's processes (the number; not a secret).
pub const ENV_ANCHOR_FD: &str = "LAZARET_SESSION_ANCHOR_FD";

/// Puts `anchor` in a socket on [`ANCHOR_FD`] (inherited across `exec`); Err when the socket
/// could not be made.
pub fn hide(anchor: &str) -> std::io::Result<()> {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into `fds`; write, dup2 and close take
    // descriptor numbers and a buffer that lives for the call.
    unsafe {
        if libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let [writer, reader] = fds;
        let bytes = anchor.as_bytes();
        let wrote = libc::write(writer, bytes.as_ptr().cast(), bytes.len());
        libc::close(writer);
        if usize::try_from(wrote).ok() != Some(bytes.len()) {
            libc::close(reader);
            return Err(std::io::Error::other(
                "could not write the anchor to its socket",
            ));
        }
        if reader != ANCHOR_FD {
            // dup2 leaves the new descriptor without close-on-exec: it is inherited.
            if libc::dup2(reader, ANCHOR_FD) < 0 {
                let e = std::io::Error::last_os_error();
                libc::close(reader);
                return Err(e);
            }
            libc::close(reader);
        }
    }
    Ok(())
}

/// The anchor in the socket on `fd`, read without consuming it.
pub fn read(fd: RawFd) -> std::io::Result<String> {
    let mut buf = [0u8; 256];
    // SAFETY: recv writes at most `buf.len()` bytes into `buf`, which lives for the call.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_PEEK) };
    let n = usize::try_from(n).map_err(|_| std::io::Error::last_os_error())?;
    String::from_utf8(buf[..n].to_vec())
        .map_err(|_| std::io::Error::other("the anchor's socket holds no text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_anchor_is_read_again_and_again_from_its_socket() {
        // Not on ANCHOR_FD (the test harness may use it): the same socket, read by peeking.
        let mut fds = [0; 2];
        // SAFETY: as in `hide`.
        unsafe {
            assert_eq!(
                libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()),
                0
            );
            let a = b"0123abcd";
            assert_eq!(libc::write(fds[0], a.as_ptr().cast(), a.len()), 8);
            libc::close(fds[0]);
        }
        assert_eq!(read(fds[1]).unwrap(), "0123abcd");
        assert_eq!(read(fds[1]).unwrap(), "0123abcd");
        // A descriptor that is not a socket: an error, not an anchor.
        assert!(read(-1).is_err());
    }
}
