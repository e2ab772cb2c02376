//! Fault hooks for the real-stack tests, named points in the code that react to the
//! environment (no-ops otherwise):
//! - `LAZARET_TEST_KILL_AT=<name>`: this process kills itself (SIGKILL) at the point;
//! - `LAZARET_TEST_PAUSE_AT=<name>`: this thread sleeps [`PAUSE`] there, to widen a race
//!   window a test wants to be sure is closed.

use std::time::Duration;

/// The environment variable naming the pause point.
pub const PAUSE_AT_ENV: &str = "LAZARET_TEST_PAUSE_AT";

/// How long a pause point pauses.
pub const PAUSE: Duration = Duration::from_millis(500);

/// Kills this process with SIGKILL here when `LAZARET_TEST_KILL_AT` names `name`.
pub fn kill_point(name: &str) {
    if named(crate::state::generations::KILL_AT_ENV, name) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), nix::sys::signal::Signal::SIGKILL);
        std::process::abort();
    }
}

/// Sleeps [`PAUSE`] here when `LAZARET_TEST_PAUSE_AT` names `name`.
pub fn pause_point(name: &str) {
    if named(PAUSE_AT_ENV, name) {
        tracing::debug!(point = name, "test pause");
        std::thread::sleep(PAUSE);
    }
}

fn named(var: &str, name: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| v == name)
}
