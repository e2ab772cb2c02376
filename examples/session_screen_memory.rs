//! What the Session Coordinator's per-session terminal state costs (issue #14 item 7): memory of
//! 8 sessions holding 5,000 lines of 190-column scrollback, and how fast `process` digests
//! output compared with a bare `alacritty_terminal` that keeps its whole history as cells.
//!
//! `cargo run --release --example session_screen_memory`

use std::time::Instant;

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::Config;
use alacritty_terminal::vte::ansi::Processor;
use alacritty_terminal::Term;
use lazaret::coordinator::screen::SessionScreen;

const SESSIONS: usize = 8;
const ROWS: u16 = 50;
const COLS: u16 = 190;
const SCROLLBACK: usize = 5_000;
const CHUNK: usize = 16 * 1024;
const MIB: usize = 1 << 20;

/// Resident set size of this process, from /proc/self/status (kB → bytes).
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// A line of `width` printable characters, plain or in coloured runs of 19 cells.
fn line(n: usize, width: usize, coloured: bool, out: &mut Vec<u8>) {
    for i in 0..width {
        if coloured && i % 19 == 0 {
            out.extend_from_slice(format!("\x1b[{};{}m", 31 + (i / 19) % 7, 1 + n % 2).as_bytes());
        }
        out.push(b' ' + ((n * 7 + i) % 95) as u8);
    }
    if coloured {
        out.extend_from_slice(b"\x1b[0m");
    }
    out.extend_from_slice(b"\r\n");
}

fn scrollback_text(lines: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for n in 0..lines {
        // Every third line coloured.
        line(n, usize::from(COLS), n.is_multiple_of(3), &mut out);
    }
    out
}

fn yes(len: usize) -> Vec<u8> {
    b"y\r\n".iter().copied().cycle().take(len).collect()
}

fn lines_of(width: usize, coloured: bool, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 2 * width);
    let mut n = 0;
    while out.len() < len {
        line(n, width, coloured, &mut out);
        n += 1;
    }
    out
}

struct Size(usize, usize);

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.0
    }
    fn screen_lines(&self) -> usize {
        self.0
    }
    fn columns(&self) -> usize {
        self.1
    }
}

fn mb_per_s(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / MIB as f64 / secs
}

fn throughput(name: &str, data: &[u8]) {
    let mut screen = SessionScreen::new(ROWS, COLS, SCROLLBACK);
    let start = Instant::now();
    for chunk in data.chunks(CHUNK) {
        screen.process(chunk);
        screen.take_replies();
    }
    let ours = mb_per_s(data.len(), start.elapsed().as_secs_f64());
    let config = Config {
        scrolling_history: SCROLLBACK,
        ..Config::default()
    };
    let size = Size(usize::from(ROWS), usize::from(COLS));
    let mut term = Term::new(config, &size, VoidListener);
    let mut parser: Processor = Processor::new();
    let start = Instant::now();
    for chunk in data.chunks(CHUNK) {
        parser.advance(&mut term, chunk);
    }
    let bare = mb_per_s(data.len(), start.elapsed().as_secs_f64());
    println!(
        "  {name:<28} SessionScreen {ours:7.1} MB/s   bare alacritty {bare:7.1} MB/s   ratio {:.2}",
        ours / bare
    );
}

fn main() {
    println!("memory: {SESSIONS} sessions of {ROWS}x{COLS}, {SCROLLBACK} lines of scrollback each");
    let text = scrollback_text(SCROLLBACK + usize::from(ROWS));
    let before = rss();
    let mut screens: Vec<SessionScreen> = (0..SESSIONS)
        .map(|_| SessionScreen::new(ROWS, COLS, SCROLLBACK))
        .collect();
    for screen in &mut screens {
        for chunk in text.chunks(CHUNK) {
            screen.process(chunk);
        }
        // The shell's prompt after the output: nothing scrolls, the emulator's row cache goes.
        screen.process(b"$ ");
    }
    let after = rss();
    let heap: usize = screens.iter().map(SessionScreen::heap_bytes).sum();
    let kept: usize = screens.iter().map(SessionScreen::history_len).sum();
    println!(
        "  fed {:.1} MB per session; history lines kept: {kept}",
        text.len() as f64 / 1e6
    );
    println!(
        "  RSS delta {:.1} MB, heap_bytes sum {:.1} MB ({:.2} MB per session)",
        after.saturating_sub(before) as f64 / 1e6,
        heap as f64 / 1e6,
        heap as f64 / 1e6 / SESSIONS as f64
    );
    let cells = SESSIONS * (SCROLLBACK + usize::from(ROWS)) * usize::from(COLS) * 24;
    println!(
        "  for comparison, the same history as alacritty cells (24 B each): {:.1} MB",
        cells as f64 / 1e6
    );
    let snapshot_start = Instant::now();
    let snapshot = screens[0].snapshot(SCROLLBACK);
    let snapshot_time = snapshot_start.elapsed();
    let json = serde_json::to_vec(&snapshot).unwrap_or_default();
    let ansi = snapshot.to_ansi_with_history(true);
    println!(
        "  snapshot with full history: {:?}, JSON {:.2} MB, ANSI {:.2} MB; screen only: JSON {} B",
        snapshot_time,
        json.len() as f64 / 1e6,
        ansi.len() as f64 / 1e6,
        serde_json::to_vec(&screens[0].snapshot(0))
            .unwrap_or_default()
            .len()
    );
    drop(screens);

    println!("throughput: {ROWS}x{COLS}, {} KiB chunks", CHUNK / 1024);
    throughput("plain 80-column lines", &lines_of(80, false, 32 * MIB));
    throughput("yes", &yes(32 * MIB));
    throughput("coloured 190-column lines", &lines_of(190, true, 32 * MIB));
}
