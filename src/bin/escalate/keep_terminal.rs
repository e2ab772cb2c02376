//! `lazaret-escalate --keep-terminal CMD [ARG…]` (issue #16): how every session's command
//! starts inside the sandbox. The first of standard input, output and error that is a terminal
//! is duplicated on [`TERMINAL_FD`] (inherited: not close-on-exec), where `/dev/tty` — a
//! symlink to [`DEV_TTY_TARGET`] — finds it; then CMD replaces this process. Without a
//! terminal CMD simply runs. Programs that close every inherited descriptor before they open
//! `/dev/tty` (ssh, sudo, Python's `subprocess` children) do not find it.

use lazaret_protocol::access::TERMINAL_FD;
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
    let err = std::process::Command::new(program).args(&argv[1..]).exec();
    eprintln!("lazaret: {program}: {err}");
    if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}
