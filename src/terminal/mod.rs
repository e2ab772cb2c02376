//! The developer's terminal during `lazaret run` (FR-8, DX-5): a real PTY when stdin is a
//! terminal, plain pipes otherwise; the terminal is restored on every exit path. The terminal
//! front-end pieces (output filter, prompts, raw mode, signals) live in `lazaret-ui`.

pub mod cancel;
pub mod output_end;
pub mod passthrough;
pub mod pty;
pub mod say;

pub use lazaret_ui::terminal::{
    control_bytes, escape, gate, guard, line_editor, output_filter, prompt, raw_mode, signals,
    stdin_is_terminal,
};
