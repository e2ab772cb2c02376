use super::*;
use nix::pty::openpty;
use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};
use std::os::fd::{AsFd, OwnedFd};

/// A terminal in raw mode (as `lazaret run` leaves it) and the side that plays the terminal.
fn raw_pty() -> (OwnedFd, OwnedFd) {
    let pty = openpty(None, None).expect("openpty");
    let mut t = tcgetattr(&pty.slave).expect("tcgetattr");
    cfmakeraw(&mut t);
    tcsetattr(&pty.slave, SetArg::TCSANOW, &t).expect("tcsetattr");
    (pty.master, pty.slave)
}

fn pending(fd: BorrowedFd<'_>) -> bool {
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    poll(&mut fds, PollTimeout::from(50u16)).unwrap_or(0) > 0
}

#[test]
fn replies_arriving_late_are_discarded_before_the_terminal_is_handed_back() {
    let (master, slave) = raw_pty();
    nix::unistd::write(&master, b"\x1b[12;1R").expect("write");
    let late = std::thread::spawn(move || {
        // A reply over a slow link, after the drain started, in two parts.
        std::thread::sleep(Duration::from_millis(30));
        let _ = nix::unistd::write(&master, b"\x1bP1$r");
        std::thread::sleep(Duration::from_millis(40));
        let _ = nix::unistd::write(&master, b"rm -rf ~\r\x1b\\");
        master
    });
    drain(slave.as_fd(), QUIET, MOST);
    let master = late.join().expect("join");
    assert!(!pending(slave.as_fd()), "input left for the shell");
    // What is typed afterwards is read as usual.
    nix::unistd::write(&master, b"ls\r").expect("write");
    assert!(pending(slave.as_fd()));
}

#[test]
fn the_drain_is_bounded_whatever_keeps_arriving() {
    let (master, slave) = raw_pty();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let chatter = std::thread::spawn(move || {
        while !flag.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = nix::unistd::write(&master, b"x");
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let started = Instant::now();
    drain(slave.as_fd(), QUIET, Duration::from_millis(200));
    let took = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = chatter.join();
    assert!(took < Duration::from_millis(400), "{took:?}");
}

#[test]
fn a_quiet_terminal_is_handed_back_after_the_quiet_time() {
    let (_master, slave) = raw_pty();
    let started = Instant::now();
    drain(slave.as_fd(), QUIET, MOST);
    let took = started.elapsed();
    assert!(took >= QUIET && took < MOST, "{took:?}");
}
