//! Safe default limits (issue #31, SR-5): an agent that wants the host's resources, in a Domain
//! of the built-in default profile (no bound written by the developer). With the ptrace
//! platform every task inside is a host task of the developer, and the Sentry keeps much of the
//! sandbox's memory outside its application memory file: each attack below took the host's
//! memory before the built-in profiles had `memory`, or before the memory bound counted the
//! Sentry's own memory. The fork bomb has a test binary of its own (`tests/fork_bomb.rs`).

use crate::support::Dev;
use std::time::Instant;

/// Takes 200 MiB, then 256 MiB at a time up to 6 GiB (each chunk written, so really used).
const HOG: &str = r#"
keep = [b'a' * (200 << 20)]
print('small-ok', flush=True)
for i in range(24):
    keep.append(b'a' * (256 << 20))
print('big-ok', flush=True)
"#;

/// Fills a thousand pipes to 1 MiB each and keeps only their read ends.
const PIPES: &str = r#"
import os, fcntl
keep, total, chunk = [], 0, b'x' * 65536
for i in range(1000):
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
    os.set_blocking(w, False)
    try:
        while True:
            total += os.write(w, chunk)
    except BlockingIOError:
        pass
    os.close(w)
    keep.append(r)
print('pipes-ok', total >> 20, 'MiB', flush=True)
"#;

/// The agent, in a Domain of the default profile, takes memory 256 MiB at a time up to
/// 6 GiB: the default `memory` bound stops the whole sandbox before it gets there, and
/// `lazaret run` says why.
#[test]
fn a_memory_hog_in_a_default_domain_is_stopped_at_the_default_bound() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-limits-hog");
    let (_, memory) = crate::support::default_bounds(&ws);
    let started = Instant::now();
    let r = ws.run(&["python3", "-c", HOG]);
    let took = started.elapsed();
    eprintln!("memory hog under the default memory {memory}: {r:?} in {took:?}");
    assert!(r.stdout.contains("small-ok"), "{r:?}");
    assert!(!r.stdout.contains("big-ok"), "the hog got its 6 GiB: {r:?}");
    assert_eq!(r.code, Some(125), "{r:?}");
    let said = format!("it went over the profile's memory limit ({memory})");
    assert!(r.stderr.contains(&said), "{said:?} not in {r:?}");
    ws.wait_torn_down();
}

/// The agent keeps its memory where the memory file does not hold it: in pipe buffers, which
/// the Sentry allocates on its own heap. A thousand pipes filled to 1 MiB each (the reader
/// kept open, the writer closed) hold a GiB under `memory = "512m"`; the bound counts the
/// Sentry's anonymous memory too, so the sandbox is stopped.
#[test]
fn memory_held_in_pipe_buffers_counts_against_the_bound() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-limits-pipes").with_profile(
        "small",
        "[profiles.small]\nextends = \"shell\"\nmemory = \"512m\"\n",
    );
    let r = ws.run(&["python3", "-c", PIPES]);
    eprintln!("pipe buffers under memory = 512m: {r:?}");
    assert!(
        !r.stdout.contains("pipes-ok"),
        "1 GiB held in pipe buffers under memory = 512m: {r:?}"
    );
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr
            .contains("it went over the profile's memory limit (512 MiB)"),
        "{r:?}"
    );
    ws.wait_torn_down();
}
