//! Lazaret's own messages to the developer's terminal (DX-4, SR-7): every line goes through
//! [`escape::message`](super::escape::message), the escaping the cards use, so that a name the
//! sandbox chose (a `.gitignore` line, a nested repository's path, a worktree name, a path in
//! an error) reaches the terminal as text, never as a control sequence: no clipboard set (OSC
//! 52), no title, no query whose reply the shell would read as typing, no carriage return
//! over a warning, no bidi override. Only the message's own newlines pass.
//!
//! The invariant, not a list of sites: [`say!`](crate::say) (stderr) and
//! [`say_out!`](crate::say_out) (stdout) are the only ways the engine's host-side code prints;
//! a source test fails on any `println!`/`eprintln!`/`print!`/`eprint!` or raw
//! `std::io::stdout()`/`stderr()` outside the few files that write on purpose what is not a
//! message (the sandbox's filtered output, JSON made printable by `cli::safe_json`, protocol
//! lines to a parent process).
//!
//! Writing never fails the command: a closed stderr or a reader that went away (`| head`)
//! loses the message, as it would anyway.

use std::io::Write;

use super::escape;

/// `text`, escaped as a message, on stderr; `newline` ends the line.
pub fn to_stderr(text: &str, newline: bool) {
    write_to(&mut std::io::stderr().lock(), text, newline);
}

/// `text`, escaped as a message, on stdout; `newline` ends the line.
pub fn to_stdout(text: &str, newline: bool) {
    write_to(&mut std::io::stdout().lock(), text, newline);
}

fn write_to(out: &mut impl Write, text: &str, newline: bool) {
    let mut shown = escape::message(text);
    if newline {
        shown.push('\n');
    }
    let _ = out.write_all(shown.as_bytes());
    let _ = out.flush();
}

/// Standard output for code that writes a report with `write!` (to a writer it can be tested
/// with): every piece escaped as a message, like [`say_out!`](crate::say_out).
pub fn stdout() -> Escaped<std::io::StdoutLock<'static>> {
    Escaped(std::io::stdout().lock())
}

/// A writer whose every piece of text is escaped as a message. `write!` hands it whole
/// `str` pieces; bytes that are not UTF-8 are shown as U+FFFD.
pub struct Escaped<W: Write>(pub W);

impl<W: Write> Write for Escaped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(escape::message(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// A line of Lazaret's own on stderr, escaped (see [`crate::terminal::say`]).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::terminal::say::to_stderr(&format!($($arg)*), true)
    };
}

/// Text of Lazaret's own on stderr without a newline (a question before its answer), escaped.
#[macro_export]
macro_rules! say_inline {
    ($($arg:tt)*) => {
        $crate::terminal::say::to_stderr(&format!($($arg)*), false)
    };
}

/// A line of Lazaret's own on stdout (a report, a listing), escaped.
#[macro_export]
macro_rules! say_out {
    ($($arg:tt)*) => {
        $crate::terminal::say::to_stdout(&format!($($arg)*), true)
    };
}

/// Text of Lazaret's own on stdout without a newline, escaped.
#[macro_export]
macro_rules! say_out_inline {
    ($($arg:tt)*) => {
        $crate::terminal::say::to_stdout(&format!($($arg)*), false)
    };
}

#[cfg(test)]
#[path = "say_tests.rs"]
mod tests;
