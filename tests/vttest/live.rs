//! vttest's terminal reports answered by Lazaret (issue #16): vttest runs under a pseudo-terminal
//! of the test whose output goes through a pane's chain ([`Chain`]) and whose queries — DSR,
//! DA1, DA2, the cursor reports of the alternate-screen tests — are answered by the Session
//! Coordinator's copy of the terminal, as in a coordinator-owned session. No step may stall:
//! each must bring its screen within [`STEP_TIMEOUT`]. (The sandbox adds nothing here: the
//! coordinator answers on the session's PTY whatever runs behind it.) Needs `vttest`
//! (`scripts/setup` installs it).

use super::chain::Chain;
use super::fixture::{COLS, ROWS};
use portable_pty::{native_pty_system, CommandBuilder, PtySize};
use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// A vttest under a PTY, seen through a pane.
struct Live {
    chain: Chain,
    output: mpsc::Receiver<Vec<u8>>,
    input: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Live {
    fn start() -> Live {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pty");
        let mut cmd = CommandBuilder::new("vttest");
        cmd.env("TERM", "xterm-256color");
        let child = pty
            .slave
            .spawn_command(cmd)
            .expect("vttest is installed (scripts/setup installs it)");
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let input = pty.master.take_writer().expect("pty writer");
        // The master must outlive the child's use of the PTY: leaked for the test's life.
        std::mem::forget(pty.master);
        Live {
            chain: Chain::new(ROWS, COLS),
            output,
            input,
            child,
        }
    }

    /// Types `keys`, then feeds output (answering queries) until the pane shows `want`.
    fn step(&mut self, keys: &str, want: &str) -> String {
        self.input.write_all(keys.as_bytes()).expect("typing");
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            let screen = self.chain.pane().text();
            if screen.contains(want) {
                return screen;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "vttest stalled after typing {keys:?}: no {want:?} within {STEP_TIMEOUT:?}; \
                 the pane shows:\n{screen}"
            );
            if let Ok(bytes) = self
                .output
                .recv_timeout(left.min(Duration::from_millis(100)))
            {
                let replies = self.chain.feed(&bytes, bytes.len());
                self.input.write_all(&replies).expect("answering");
            }
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The line of `screen` that contains `what` (trimmed of the pane's frame).
fn line<'a>(screen: &'a str, what: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(what))
        .map_or("", |l| l.trim_matches('|').trim_end())
}

#[test]
fn menu_6_terminal_reports_are_answered_by_the_coordinator() {
    let mut vt = Live::start();
    vt.step("", "Enter choice number (0 - 12)");
    vt.step("6\r", "Menu 6: Terminal Reports/Responses");

    let dsr = vt.step("3\r", "Push <RETURN>");
    eprintln!("DSR:\n{}", dsr);
    assert!(dsr.contains("TERMINAL OK"), "DSR 5:\n{dsr}");
    assert!(
        line(&dsr, "R ").contains("-- OK"),
        "DSR 6 (cursor position):\n{dsr}"
    );
    vt.step("\r", "Menu 6: Terminal Reports/Responses");

    let da = vt.step("4\r", "Push <RETURN>");
    eprintln!("DA:\n{}", da);
    assert!(
        line(&da, "Report is").contains("-- means VT102"),
        "DA1:\n{da}"
    );
    vt.step("\r", "Menu 6: Terminal Reports/Responses");

    let da2 = vt.step("5\r", "Push <RETURN>");
    eprintln!("DA2:\n{}", da2);
    assert!(da2.contains("<27> [ > "), "DA2:\n{da2}");
    vt.step("\r", "Menu 6: Terminal Reports/Responses");
    vt.step("0\r", "Enter choice number (0 - 12)");
}

/// The xterm alternate-screen tests (menu 11.8.7, modes 47, 1047, 1049) check where the cursor
/// is with DSR 6 after switching back; with 1049 — what terminfo's xterm-256color uses — the main
/// screen and the cursor come back.
#[test]
fn menu_11_8_7_alternate_screen_1049_restores_screen_and_cursor() {
    let mut vt = Live::start();
    vt.step("", "Enter choice number (0 - 12)");
    vt.step("11\r", "Menu 11: Non-VT100 Tests");
    vt.step("8\r", "Menu 11.8: XTERM special features");
    vt.step("7\r", "Menu 11.8.7: XTERM Alternate-Screen features");
    vt.step("5\r", "The next screen will be filled with E's");
    vt.step("\r", "EEEEEEEEEE");
    let back = vt.step("\r", "The original screen should be restored");
    eprintln!("1049, back on the main screen:\n{back}");
    assert!(
        !back.contains('E'.to_string().repeat(10).as_str()),
        "{back}"
    );
    assert!(back.contains("cursor save/restore ok"), "{back}");
}
