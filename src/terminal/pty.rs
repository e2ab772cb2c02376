//! A command under a new pseudo-terminal: the one piece `lazaret run`'s passthrough and the
//! panes of `lazaret tui` share.

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use std::io::{Read, Write};

/// A running command and the master side of its PTY.
pub struct PtyChild {
    pub child: Box<dyn Child + Send + Sync>,
    pub reader: Box<dyn Read + Send>,
    pub writer: Box<dyn Write + Send>,
    pub master: Box<dyn MasterPty + Send>,
}

/// The size `rows`×`cols` as portable-pty wants it.
pub fn size(rows: u16, cols: u16) -> PtySize {
    PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}

/// Starts `program args` under a new PTY of `size` (in the current directory).
pub fn spawn(program: &str, args: &[String], size: PtySize) -> anyhow::Result<PtyChild> {
    let pair = native_pty_system()
        .openpty(size)
        .map_err(|e| anyhow::anyhow!("opening a PTY: {e}"))?;
    let mut cmd = CommandBuilder::new(program);
    cmd.args(args);
    if let Ok(dir) = std::env::current_dir() {
        cmd.cwd(dir);
    }
    let child = pair
        .slave
        .spawn_command(cmd)
        .map_err(|e| anyhow::anyhow!("running {program} under a PTY: {e}"))?;
    drop(pair.slave);
    let reader = pair
        .master
        .try_clone_reader()
        .map_err(|e| anyhow::anyhow!("reading the PTY: {e}"))?;
    let writer = pair
        .master
        .take_writer()
        .map_err(|e| anyhow::anyhow!("writing the PTY: {e}"))?;
    Ok(PtyChild {
        child,
        reader,
        writer,
        master: pair.master,
    })
}
