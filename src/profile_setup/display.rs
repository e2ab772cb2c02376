//! How a profile setup's progress is shown (issue #32, DX-5): on a terminal (the developer's
//! for `lazaret run`, a pane's for `lazaret tui`), one line rewritten in place — phase,
//! percentage, seconds so far; elsewhere, plain lines as phases start and at every quarter.
//! Every text is escaped as a message ([`escape::message`]); only this file's own carriage
//! return and erase-line reach the terminal as controls.

use crate::terminal::escape;
use std::io::Write;
use std::time::Instant;

pub struct Display<W: Write> {
    out: W,
    /// Rewrite one line (a terminal) or print plain lines.
    tty: bool,
    profile: String,
    started: Instant,
    phase: Option<String>,
    percent: Option<u8>,
    /// Plain mode: the quarter last printed of the current phase.
    quarter: Option<u8>,
    /// Tty mode: a progress line is on the screen.
    drawn: bool,
}

impl<W: Write> Display<W> {
    pub fn new(out: W, tty: bool, profile: &str) -> Display<W> {
        Display {
            out,
            tty,
            profile: profile.to_owned(),
            started: Instant::now(),
            phase: None,
            percent: None,
            quarter: None,
            drawn: false,
        }
    }

    /// Seconds since the setup started.
    pub fn elapsed_secs(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// A line of Lazaret's own (the progress line, if any, is cleared first).
    pub fn line(&mut self, text: &str) {
        self.clear();
        let _ = writeln!(self.out, "{}", escape::message(text));
        let _ = self.out.flush();
    }

    /// A new phase.
    pub fn phase(&mut self, name: &str, percent: Option<u8>) {
        self.phase = Some(name.to_owned());
        self.percent = percent;
        self.quarter = None;
        if self.tty {
            self.draw();
        } else {
            let shown = self.status();
            self.line(&shown);
            self.quarter = percent.map(|p| p / 25);
        }
    }

    /// How far the current phase is.
    pub fn percent(&mut self, p: u8) {
        if self.percent == Some(p) {
            return;
        }
        self.percent = Some(p);
        if self.tty {
            self.draw();
        } else if self.quarter < Some(p / 25) && p > 0 {
            self.quarter = Some(p / 25);
            let shown = self.status();
            self.line(&shown);
        }
    }

    /// Once a second on a terminal: the seconds move.
    pub fn tick(&mut self) {
        if self.tty {
            self.draw();
        }
    }

    /// Removes the progress line (the setup ended).
    pub fn clear(&mut self) {
        if self.drawn {
            let _ = write!(self.out, "\r\x1b[2K");
            let _ = self.out.flush();
            self.drawn = false;
        }
    }

    fn status(&self) -> String {
        let mut s = format!("lazaret: setup of profile {:?}: ", self.profile);
        s.push_str(self.phase.as_deref().unwrap_or("starting"));
        if let Some(p) = self.percent {
            s.push_str(&format!(" {p} %"));
        }
        s.push_str(&format!(" ({} s)", self.elapsed_secs()));
        s
    }

    fn draw(&mut self) {
        let width = usize::from(columns()).saturating_sub(1).max(20);
        let shown: String = escape::message(&self.status())
            .chars()
            .take(width)
            .collect();
        let _ = write!(self.out, "\r\x1b[2K{shown}");
        let _ = self.out.flush();
        self.drawn = true;
    }
}

/// A display on stderr: one rewritten line when it is a terminal.
pub fn on_stderr(profile: &str) -> Display<std::io::Stderr> {
    use std::io::IsTerminal;
    Display::new(std::io::stderr(), std::io::stderr().is_terminal(), profile)
}

/// The width of the terminal on stderr (80 when unknown).
fn columns() -> u16 {
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct given.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    if ok && ws.ws_col > 0 {
        ws.ws_col
    } else {
        80
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_gets_one_line_rewritten_with_escaped_text() {
        let mut d = Display::new(Vec::new(), true, "claude");
        d.phase("downloading Node.js", None);
        d.percent(42);
        d.line("lazaret: done \x1b]52;c;x\x07");
        let out = String::from_utf8_lossy(&d.out).into_owned();
        assert!(out
            .contains("\r\x1b[2Klazaret: setup of profile \"claude\": downloading Node.js (0 s)"));
        assert!(out.contains("downloading Node.js 42 % (0 s)"));
        assert!(!out.contains("\x1b]52"), "{out:?}");
        assert!(
            out.ends_with("\r\x1b[2Klazaret: done \\u{1b}]52;c;x\\u{7}\n"),
            "{out:?}"
        );
    }

    #[test]
    fn plain_output_gets_a_line_per_phase_and_quarter() {
        let mut d = Display::new(Vec::new(), false, "codex");
        d.phase("downloading", Some(0));
        for p in [1, 10, 26, 30, 51, 99, 100] {
            d.percent(p);
        }
        d.phase("installing @openai/codex", None);
        let out = String::from_utf8_lossy(&d.out).into_owned();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 6, "{out}");
        assert!(lines[1].ends_with("downloading 26 % (0 s)"));
        assert!(lines[5].ends_with("installing @openai/codex (0 s)"));
        assert!(!out.contains('\r'));
    }
}
