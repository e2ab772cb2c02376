//! What the passthrough's output filter costs `lazaret run` (DX-4): MB/s of
//! `terminal::output_filter` on typical and worst-case program output, next to a plain copy of
//! the same bytes (what the passthrough did before the filter).
//!
//! `cargo run --release --example output_filter_throughput`
//!
//! Each workload (64 MiB) is fed in 16 KiB chunks, a PTY read, as the passthrough does.

use lazaret_protocol::access::TerminalAccess;
use lazaret_ui::terminal::output_filter::OutputFilter;
use std::time::Instant;

const MIB: usize = 1 << 20;
const TOTAL: usize = 64 * MIB;
const CHUNK: usize = 16 * 1024;

fn cycle(unit: &[u8]) -> Vec<u8> {
    unit.iter().copied().cycle().take(TOTAL).collect()
}

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / MIB as f64 / secs
}

fn main() {
    let ascii: Vec<u8> = (0..80u8)
        .map(|i| b' ' + (i * 7) % 95)
        .chain(*b"\r\n")
        .collect();
    let workloads: Vec<(&str, Vec<u8>)> = vec![
        ("yes (y\\r\\n)", cycle(b"y\r\n")),
        ("80-column ASCII lines", cycle(&ascii)),
        (
            "SGR-coloured CJK and emoji",
            cycle("\x1b[1;31m错误\x1b[0m: 文件 🦀 \x1b[32mok\x1b[0m ünïcödé ś ŝ\r\n".as_bytes()),
        ),
        (
            "cursor-heavy (a full-screen redraw)",
            cycle(b"\x1b[12;40H\x1b[K\x1b[7mstatus\x1b[27m\x1b[?25l\x1b[1;1r\x1b[?25h"),
        ),
        (
            "OSC-heavy (titles, hyperlinks)",
            cycle(b"\x1b]0;build 42\x07\x1b]8;;https://example.org/x\x1b\\link\x1b]8;;\x1b\\\r\n"),
        ),
        (
            "blocked OSC 52 flood",
            cycle(b"\x1b]52;c;c2VjcmV0LWZyb20tc2FuZGJveA==\x07"),
        ),
    ];
    println!("| workload | copy MB/s | filter MB/s | filter / copy |");
    println!("|---|---|---|---|");
    for (name, data) in &workloads {
        let mut out = Vec::with_capacity(CHUNK * 2);
        // Baseline: the copy the passthrough makes anyway (into its write buffer).
        let t = Instant::now();
        let mut n = 0;
        for chunk in data.chunks(CHUNK) {
            out.clear();
            out.extend_from_slice(chunk);
            n += out.len();
        }
        let copy = mbps(data.len(), t.elapsed().as_secs_f64());
        let mut filter = OutputFilter::new(TerminalAccess::default());
        let t = Instant::now();
        let mut kept = 0;
        for chunk in data.chunks(CHUNK) {
            out.clear();
            filter.filter(chunk, &mut out);
            kept += out.len();
        }
        let filtered = mbps(data.len(), t.elapsed().as_secs_f64());
        println!(
            "| {name} | {copy:.0} | {filtered:.0} | {:.2} |",
            filtered / copy
        );
        std::hint::black_box((n, kept));
    }
}
