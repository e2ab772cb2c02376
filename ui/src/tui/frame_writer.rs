//! Where the TUI's frames go: each frame, with its synchronized-update markers, leaves in one
//! write to the host terminal when it is complete ([`FrameWriter::commit`]), instead of the
//! several writes (and the reader wake-ups) that flushing each piece would cost; the flushes
//! ratatui and crossterm ask for in between only mark the end of a piece. The writer sits inside
//! ratatui's backend, so the frame's end is signalled through a [`Commit`] handle: the next flush
//! after [`Commit::arm`] writes.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct FrameWriter<W: Write> {
    pending: Vec<u8>,
    out: W,
    armed: Arc<AtomicBool>,
}

/// Makes the next flush of its [`FrameWriter`] write what is pending.
#[derive(Clone)]
pub struct Commit(Arc<AtomicBool>);

impl Commit {
    pub fn arm(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl<W: Write> FrameWriter<W> {
    pub fn new(out: W) -> (FrameWriter<W>, Commit) {
        let armed = Arc::new(AtomicBool::new(false));
        let w = FrameWriter {
            pending: Vec::with_capacity(64 * 1024),
            out,
            armed: armed.clone(),
        };
        (w, Commit(armed))
    }

    /// Writes everything pending in one go.
    pub fn commit(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let r = self.out.write_all(&self.pending);
            self.pending.clear();
            r?;
        }
        self.out.flush()
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    /// Writes only when armed ([`Commit::arm`]); else the end of a piece of the frame.
    fn flush(&mut self) -> std::io::Result<()> {
        if self.armed.swap(false, Ordering::SeqCst) {
            self.commit()
        } else {
            Ok(())
        }
    }
}

impl<W: Write> Drop for FrameWriter<W> {
    /// What the terminal's teardown wrote (cursor shown again) still goes out.
    fn drop(&mut self) {
        let _ = self.commit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the writes that reach the terminal.
    struct Writes(Vec<Vec<u8>>);
    impl Write for &mut Writes {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.push(b.to_vec());
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_frame_leaves_in_one_write_when_committed_and_nothing_is_lost_on_drop() {
        let mut seen = Writes(Vec::new());
        {
            let (mut w, commit) = FrameWriter::new(&mut seen);
            w.write_all(b"\x1b[?2026h").expect("write");
            w.flush().expect("flush");
            w.write_all(b"cells").expect("write");
            w.flush().expect("flush");
            w.write_all(b"\x1b[?2026l").expect("write");
            commit.arm();
            w.flush().expect("flush");
            w.write_all(b"\x1b[?25h").expect("write");
        }
        assert_eq!(
            seen.0,
            vec![
                b"\x1b[?2026hcells\x1b[?2026l".to_vec(),
                b"\x1b[?25h".to_vec()
            ]
        );
    }
}
