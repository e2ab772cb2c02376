//! How fast each pane emulator digests program output, to choose the one `new_emulator` uses.
//!
//! `cargo run --release --example emulator_throughput`
//!
//! Workloads: `yes` output, 80-column ASCII lines, and SGR-coloured text with CJK and emoji;
//! each fed in 16 KiB chunks (a PTY read) to 24×80 and 50×200 screens with 5000 lines of
//! scrollback. Replies are drained after every chunk, as a pane would.

use std::time::Instant;

use lazaret_ui::tui::emulator::Emulator;
use lazaret_ui::tui::emulator_alacritty::AlacrittyEmulator;
use lazaret_ui::tui::emulator_vt100::Vt100Emulator;

const MIB: usize = 1 << 20;
const CHUNK: usize = 16 * 1024;
const SCROLLBACK: usize = 5000;

/// `y\r\n` repeated.
fn yes(len: usize) -> Vec<u8> {
    b"y\r\n".iter().copied().cycle().take(len).collect()
}

/// Lines of 80 printable ASCII characters.
fn ascii_lines(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 82);
    let mut n = 0u32;
    while out.len() < len {
        for i in 0..80u32 {
            out.push(b' ' + ((n.wrapping_mul(7) + i) % 95) as u8);
        }
        out.extend_from_slice(b"\r\n");
        n += 1;
    }
    out.truncate(len);
    out
}

/// Coloured words, CJK and emoji, like a syntax-highlighted diff or a fancy prompt.
fn coloured_unicode(len: usize) -> Vec<u8> {
    let words = [
        "fn",
        "main",
        "日本語",
        "テスト",
        "🚀",
        "✓",
        "漢字",
        "😀",
        "résumé",
        "中文",
    ];
    let mut out = String::with_capacity(len + 64);
    let mut n = 0usize;
    while out.len() < len {
        let word = words[n % words.len()];
        let line_end = if n % 12 == 11 { "\r\n" } else { " " };
        match n % 4 {
            0 => out.push_str(&format!("\x1b[{}m{word}\x1b[0m{line_end}", 31 + n % 7)),
            1 => out.push_str(&format!("\x1b[1;38;5;{}m{word}\x1b[0m{line_end}", n % 256)),
            2 => out.push_str(&format!(
                "\x1b[38;2;{};{};{}m{word}\x1b[0m{line_end}",
                n % 256,
                (n * 3) % 256,
                (n * 7) % 256
            )),
            _ => out.push_str(&format!("{word}{line_end}")),
        }
        n += 1;
    }
    out.into_bytes()
}

/// MB/s (10^6 bytes) for feeding `data` to a fresh emulator, and the screen it ends with.
fn measure(mut emulator: Box<dyn Emulator>, data: &[u8]) -> (f64, String) {
    let start = Instant::now();
    for chunk in data.chunks(CHUNK) {
        emulator.process(chunk);
        std::hint::black_box(emulator.take_replies());
    }
    let screen = emulator.screen_text();
    (
        data.len() as f64 / 1e6 / start.elapsed().as_secs_f64(),
        screen,
    )
}

fn main() {
    let workloads = [
        ("yes (64 MiB)", yes(64 * MIB)),
        ("80-col ASCII (64 MiB)", ascii_lines(64 * MIB)),
        ("SGR+CJK+emoji (16 MiB)", coloured_unicode(16 * MIB)),
    ];
    println!(
        "{:<24} {:>8} {:>14} {:>10} {:>8}",
        "workload", "size", "alacritty MB/s", "vt100 MB/s", "ratio"
    );
    for (name, data) in &workloads {
        for (rows, cols) in [(24u16, 80u16), (50, 200)] {
            let alacritty = Box::new(AlacrittyEmulator::new(rows, cols, SCROLLBACK));
            let (alacritty, a_screen) = measure(alacritty, data);
            let (vt100, v_screen) =
                measure(Box::new(Vt100Emulator::new(rows, cols, SCROLLBACK)), data);
            // Both must have understood the stream alike, or the speeds are not comparable.
            let same = if a_screen == v_screen {
                ""
            } else {
                "  (screens differ!)"
            };
            println!(
                "{:<24} {:>8} {:>14.1} {:>10.1} {:>7.2}x{same}",
                name,
                format!("{rows}x{cols}"),
                alacritty,
                vt100,
                alacritty / vt100
            );
        }
    }
}
