//! Runs a host command (here: `podman exec` into the sandbox) attached to the developer's
//! terminal: through a PTY with raw mode and resize forwarding, or through plain pipes.

use super::cancel::Cancel;
use super::gate::TerminalGate;
use super::output_filter::OutputFilter;
use super::raw_mode::RawModeGuard;
use super::signals::SignalForwarder;
use crate::profile::TerminalAccess;
use anyhow::Context;
use portable_pty::PtySize;
use std::io::{Read, Write};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// Exit status as a shell reports it: the code, or 128 + signal.
fn status_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

fn host_size() -> PtySize {
    let (cols, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}

/// Runs `program args` under a new PTY wired to the host terminal; returns its exit status.
/// `gate` lets an escalation prompt take the terminal from it for a while.
pub fn run_in_pty(
    program: &str,
    args: &[String],
    cancel: &Cancel,
    gate: Arc<TerminalGate>,
) -> anyhow::Result<i32> {
    let super::pty::PtyChild {
        mut child,
        mut reader,
        mut writer,
        master,
    } = super::pty::spawn(program, args, host_size())?;
    // The command's exit ends the output, not the PTY's end of file: with `runsc exec` the
    // sandbox holds the terminal itself, and a daemon the command left behind keeps it open
    // (see `output_end`).
    let exited = Arc::new(crate::wake::WakeFlag::new());
    let mut end = master
        .as_raw_fd()
        .and_then(|fd| {
            // SAFETY: the master's descriptor is open while `master` lives (this whole call).
            let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            nix::unistd::dup(borrowed).ok()
        })
        .map(|fd| super::output_end::OutputEnd::new(fd, exited.clone()));
    let master = Arc::new(Mutex::new(master));

    let mut cancel_killer = child.clone_killer();
    cancel.arm(Box::new(move || {
        let _ = cancel_killer.kill();
    }));
    let _raw = RawModeGuard::enable()?;
    let killer = Mutex::new(child.clone_killer());
    let resize_master = master.clone();
    let signals = SignalForwarder::start(
        move |_| {
            if let Ok(mut k) = killer.lock() {
                let _ = k.kill();
            }
        },
        move || {
            if let Ok(m) = resize_master.lock() {
                let _ = m.resize(host_size());
            }
        },
    )?;
    // After a prompt covered the screen, a size change makes full-screen programs redraw.
    let redraw_master = master.clone();
    gate.set_redraw(Box::new(move || {
        if let Ok(m) = redraw_master.lock() {
            let size = host_size();
            let _ = m.resize(PtySize {
                cols: size.cols.saturating_sub(1).max(1),
                ..size
            });
            let _ = m.resize(size);
        }
    }));
    // Size may have changed between openpty and installing the SIGWINCH handler.
    if let Ok(m) = master.lock() {
        let _ = m.resize(host_size());
    }

    let out_gate = gate.clone();
    let output = std::thread::spawn(move || {
        let mut stdout = std::io::stdout();
        let mut buf = [0u8; 16 * 1024];
        let mut filtered = Vec::with_capacity(buf.len());
        loop {
            if end.as_mut().is_some_and(|e| !e.wait()) {
                break;
            }
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let mut filter = out_gate.output();
                    filtered.clear();
                    filter.filter(&buf[..n], &mut filtered);
                    if stdout
                        .write_all(&filtered)
                        .and_then(|_| stdout.flush())
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    // Stdin is read until the process ends; this thread is not joined (a read may block).
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 4096];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) if gate.route_input(&buf[..n]) => {}
                Ok(n) => {
                    if writer
                        .write_all(&buf[..n])
                        .and_then(|_| writer.flush())
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });

    let status = child.wait().context("waiting for the command")?;
    exited.set();
    cancel.disarm();
    // The output is drained: until the PTY's end of file, or the terminal is quiet after the
    // exit (what the command left behind may hold it open).
    let _ = output.join();
    drop(signals);
    let code = i32::try_from(status.exit_code()).unwrap_or(1);
    Ok(code)
}

/// Runs `program args` with the inherited stdin/stdout/stderr; returns its exit status.
/// A stdout or stderr that is a terminal gets the sandbox's output through the
/// [`OutputFilter`] (what `access` does not allow never reaches it); files and pipes get it
/// unchanged.
pub fn run_with_pipes(
    program: &str,
    args: &[String],
    cancel: &Cancel,
    access: TerminalAccess,
) -> anyhow::Result<i32> {
    use std::io::IsTerminal;
    let mut cmd = Command::new(program);
    cmd.args(args);
    let filter_out = std::io::stdout().is_terminal();
    let filter_err = std::io::stderr().is_terminal();
    if filter_out {
        cmd.stdout(std::process::Stdio::piped());
    }
    if filter_err {
        cmd.stderr(std::process::Stdio::piped());
    }
    let mut copies = Vec::new();
    let code = run_child_with(cmd, program, cancel, |child| {
        if let Some(out) = child.stdout.take() {
            copies.push(copy_filtered(out, std::io::stdout(), access));
        }
        if let Some(err) = child.stderr.take() {
            copies.push(copy_filtered(err, std::io::stderr(), access));
        }
    });
    for c in copies {
        let _ = c.join();
    }
    code
}

/// Copies `from` to the terminal `to` through an [`OutputFilter`] until EOF.
pub(crate) fn copy_filtered(
    from: impl Read + Send + 'static,
    to: impl Write + Send + 'static,
    access: TerminalAccess,
) -> std::thread::JoinHandle<()> {
    copy_until(from, to, Some(access), None)
}

/// Copies `from` to `to` (through an [`OutputFilter`] when `access` is given) until EOF, or
/// until `end` says the output is over.
fn copy_until(
    mut from: impl Read + Send + 'static,
    mut to: impl Write + Send + 'static,
    access: Option<TerminalAccess>,
    mut end: Option<super::output_end::OutputEnd>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut filter = access.map(OutputFilter::new);
        let mut buf = [0u8; 16 * 1024];
        let mut filtered = Vec::with_capacity(buf.len());
        loop {
            if end.as_mut().is_some_and(|e| !e.wait()) {
                break;
            }
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let out = match filter.as_mut() {
                        Some(f) => {
                            filtered.clear();
                            f.filter(&buf[..n], &mut filtered);
                            &filtered[..]
                        }
                        None => &buf[..n],
                    };
                    if to.write_all(out).and_then(|_| to.flush()).is_err() {
                        break;
                    }
                }
            }
        }
    })
}

/// As [`run_with_pipes`], for a command `runsc exec` runs (issue #18): runsc would hand this
/// process's own descriptors to the sandbox, where whatever the command leaves behind could
/// hold them — and the caller's pipe — open after it ended. So the command gets pipes of its
/// own, relayed here: stdin until its end, stdout and stderr until their end or until the
/// command exited and they stayed quiet (see [`super::output_end`]).
pub fn run_relayed(
    program: &str,
    args: &[String],
    cancel: &Cancel,
    access: TerminalAccess,
) -> anyhow::Result<i32> {
    use std::io::IsTerminal;
    use std::os::fd::AsFd;
    use std::process::Stdio;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let exited = Arc::new(crate::wake::WakeFlag::new());
    let end_of = |fd: std::os::fd::BorrowedFd<'_>| {
        nix::unistd::dup(fd)
            .ok()
            .map(|fd| super::output_end::OutputEnd::new(fd, exited.clone()))
    };
    let mut copies = Vec::new();
    let code = run_child_with(cmd, program, cancel, |child| {
        if let Some(mut input) = child.stdin.take() {
            // Not joined: a read of this process's stdin may block after the command ended.
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut input);
            });
        }
        if let Some(out) = child.stdout.take() {
            let filter = std::io::stdout().is_terminal().then_some(access);
            let end = end_of(out.as_fd());
            copies.push(copy_until(out, std::io::stdout(), filter, end));
        }
        if let Some(err) = child.stderr.take() {
            let filter = std::io::stderr().is_terminal().then_some(access);
            let end = end_of(err.as_fd());
            copies.push(copy_until(err, std::io::stderr(), filter, end));
        }
    });
    exited.set();
    for c in copies {
        let _ = c.join();
    }
    code
}

/// Runs `program args` with stdin closed and stdout/stderr written to the given files (a
/// non-interactive Client Session); returns its exit status.
pub fn run_captured(
    program: &str,
    args: &[String],
    cancel: &Cancel,
    stdout: std::fs::File,
    stderr: std::fs::File,
) -> anyhow::Result<i32> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    run_child(cmd, program, cancel)
}

/// Spawns `cmd`, forwards termination signals to it (Lazaret outlives them to tear down),
/// lets `cancel` kill it, and returns its exit status.
fn run_child(cmd: Command, program: &str, cancel: &Cancel) -> anyhow::Result<i32> {
    run_child_with(cmd, program, cancel, |_| {})
}

/// [`run_child`], calling `started` with the child before waiting for it.
fn run_child_with(
    mut cmd: Command,
    program: &str,
    cancel: &Cancel,
    started: impl FnOnce(&mut std::process::Child),
) -> anyhow::Result<i32> {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent. If this CLI is
    // killed outright, its `podman exec` goes with it instead of lingering as an orphan (the
    // spawning thread waits for the child, so it outlives it otherwise).
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().with_context(|| format!("running {program}"))?;
    started(&mut child);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    cancel.arm(Box::new(move || {
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    }));
    let signals = SignalForwarder::start(
        move |sig| {
            if let Ok(sig) = nix::sys::signal::Signal::try_from(sig) {
                let _ = nix::sys::signal::kill(pid, sig);
            }
        },
        || {},
    )?;
    let status = child.wait().context("waiting for the command")?;
    cancel.disarm();
    drop(signals);
    Ok(status_code(status))
}
