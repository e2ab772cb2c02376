//! `lazaret-escalate --keep-terminal CMD [ARG…]` (issue #16): how every session's command
//! starts inside the sandbox. The first of standard input, output and error that is a terminal
//! is duplicated on [`TERMINAL_FD`] (inherited: not close-on-exec), where `/dev/tty` — a
//! symlink to [`DEV_TTY_TARGET`] — finds it; the Session Anchor moves from the environment to
//! a socket of this session's (`session_anchor`); then CMD replaces this process. Without a
//! terminal CMD simply runs. Programs that close every inherited descriptor before they open
//! `/dev/tty` (ssh, sudo, Python's `subprocess` children) do not find it.

use lazaret_protocol::access::TERMINAL_FD;
use lazaret_protocol::escalation::ENV_SESSION_ANCHOR;
use std::os::unix::process::CommandExt;

/// Replaces this process with `argv`; returns only on failure, with the status to exit with
/// (126: not executable, 127: not found, as a shell says).
pub fn exec(argv: &[String]) -> u8 {
    let Some(program) = argv.first() else {
        eprintln!("lazaret: --keep-terminal needs a command");
        return 127;
    };
    // SAFETY: isatty and dup2 on descriptor numbers only; no memory is shared.
    unsafe {
        if let Some(fd) = (0..=2).find(|&fd| libc::isatty(fd) == 1) {
            libc::dup2(fd, TERMINAL_FD);
        }
    }
    let mut command = std::process::Command::new(program);
    command.args(&argv[1..]);
    // The Session Anchor leaves the environment for a socket only this session's processes
    // inherit (issue #31); were the socket not made, it leaves all the same (escalations then
    // fail saying so) rather than stay readable by every other session.
    if let Some(anchor) = std::env::var_os(ENV_SESSION_ANCHOR) {
        command.env_remove(ENV_SESSION_ANCHOR);
        match anchor.to_str().map(super::session_anchor::hide) {
            Some(Ok(())) => {
                command.env(
                    super::session_anchor::ENV_ANCHOR_FD,
                    super::session_anchor::ANCHOR_FD.to_string(),
                );
            }
            _ => eprintln!(
                "lazaret: this session cannot ask for Host Escalation (its Session Anchor \
                 could not be kept for it)"
            ),
        }
    }
    let err = command.exec();
    eprintln!("lazaret: {program}: {err}");
    if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}
