//! Publishing a sandbox port on the host (issue #17: `lazaret port publish`): a small forwarder
//! that listens on the host and connects each accepted connection to the port on the loopback
//! of the Domain's network namespace — the sandbox's sockets are host sockets in that
//! namespace (runsc `--network=host`), so a dev server bound to `127.0.0.1` inside is reached
//! too, and the traffic never leaves the namespace's loopback (the egress policy is not
//! involved: it accepts `lo`).
//!
//! It runs inside rootless podman's user namespace (`podman unshare lazaret __state-anchor`,
//! the coordinator starts it): there it may join the sidecar's network namespace. The host
//! listener is bound **before** joining, so it stays in the host's namespace; every socket made
//! after is the Domain's. It says `ready` (or the error) on stdout and serves until its stdin
//! closes — the coordinator ends it on `unpublish`, and its end (a crash included) closes the
//! pipe.

use std::io::{self, BufRead, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Connections served at once; more wait in the listen queue.
pub const MAX_CONNECTIONS: usize = 256;

/// The forwarder's whole life: bind, join, report, serve until stdin closes.
pub fn serve(listen: SocketAddrV4, netns_pid: u32, port: u16) -> anyhow::Result<()> {
    let listener = match bind_then_join(listen, netns_pid) {
        Ok(l) => l,
        Err(e) => {
            println!("error: {e}");
            return Ok(());
        }
    };
    println!("ready");
    io::stdout().flush()?;
    // The coordinator holds our stdin: its end (or `unpublish`) ends us — the listener is shut
    // down, which wakes the accept below, and the process returns (its connections with it).
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        let fd = listener.as_raw_fd();
        std::thread::spawn(move || {
            let mut sink = String::new();
            while io::stdin().lock().read_line(&mut sink).is_ok_and(|n| n > 0) {
                sink.clear();
            }
            stop.store(true, Ordering::SeqCst);
            // SAFETY: shutdown(2) on the listener's descriptor, open until `serve` returns,
            // which happens only after the accept below has seen this.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        });
    }
    let active = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(outside) = conn else { continue };
        if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            let _ = outside.shutdown(Shutdown::Both);
            continue;
        }
        let inside = match TcpStream::connect(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)) {
            Ok(s) => s,
            // Nothing listens inside (yet): the host's client sees the connection closed.
            Err(_) => {
                let _ = outside.shutdown(Shutdown::Both);
                continue;
            }
        };
        active.fetch_add(1, Ordering::SeqCst);
        let done = active.clone();
        std::thread::spawn(move || {
            splice(outside, inside);
            done.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

/// Binds the host listener, then moves this (single-threaded) process into the network
/// namespace of `netns_pid`.
fn bind_then_join(listen: SocketAddrV4, netns_pid: u32) -> anyhow::Result<TcpListener> {
    let listener = TcpListener::bind(listen).map_err(|e| match e.kind() {
        io::ErrorKind::AddrInUse => anyhow::anyhow!(
            "{listen} is in use on the host: choose another host port (HOST_PORT:PORT)"
        ),
        io::ErrorKind::PermissionDenied => anyhow::anyhow!(
            "{listen}: ports below 1024 need privileges on the host: choose a host port from \
             1024 (HOST_PORT:PORT)"
        ),
        _ => anyhow::anyhow!("listening on {listen}: {e}"),
    })?;
    let ns = std::fs::File::open(format!("/proc/{netns_pid}/ns/net"))
        .map_err(|e| anyhow::anyhow!("opening the Domain's network namespace: {e}"))?;
    nix::sched::setns(ns.as_fd(), nix::sched::CloneFlags::CLONE_NEWNET)
        .map_err(|e| anyhow::anyhow!("joining the Domain's network namespace: {e}"))?;
    Ok(listener)
}

/// Copies both ways until both sides are done.
fn splice(outside: TcpStream, inside: TcpStream) {
    let (Ok(mut out_r), Ok(mut in_r)) = (outside.try_clone(), inside.try_clone()) else {
        return;
    };
    let (mut out_w, mut in_w) = (outside, inside);
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut out_r, &mut in_w);
        let _ = in_w.shutdown(Shutdown::Write);
    });
    let _ = io::copy(&mut in_r, &mut out_w);
    let _ = out_w.shutdown(Shutdown::Write);
    let _ = up.join();
}
