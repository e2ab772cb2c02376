//! Logging with `tracing` to `$XDG_STATE_HOME/lazaret/lazaret.log`; `-v` raises verbosity.

use crate::domain::layout::Layout;
use std::fs::OpenOptions;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::sync::Mutex;
use tracing_subscriber::EnvFilter;

/// Installs the file logger. Failing to log is not a reason to fail the command: it is reported
/// once on stderr and the command goes on.
pub fn init(layout: &Layout, verbosity: u8) {
    let level = match verbosity {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_env("LAZARET_LOG").unwrap_or_else(|_| EnvFilter::new(level));
    let dir = layout.state_dir();
    let file = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .and_then(|_| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(dir.join("lazaret.log"))
        });
    match file {
        Ok(file) => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_ansi(false)
                .with_writer(Mutex::new(file))
                .try_init();
        }
        Err(e) => crate::say!(
            "lazaret: warning: cannot open the log in {}: {e} (continuing without a log)",
            dir.display()
        ),
    }
}
