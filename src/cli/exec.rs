//! `lazaret exec`: a non-interactive Client Session for scripts and agents.

use crate::domain::layout::{ensure_private_dir, Layout};
use crate::session::{Attach, RunOptions, SessionPlan};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Run one command without a terminal, output captured (for scripts and agents)
///
/// Runs one command in the Agent Sandbox of the current workspace without a terminal: stdin is
/// closed, stdout and stderr are captured. Joins the Domain if it runs, starts it otherwise.
/// Output beyond --max-output bytes per stream is cut; the full output then stays in a log file
/// whose path is reported.
///
/// Examples:
///   lazaret exec -- make test
///   lazaret exec --json -- git status --short
///     {"exit_code":0,"stdout":"…","stderr":"","duration_ms":612,"session_id":"…",…}
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ExecArgs {
    /// Print one JSON object: exit_code, stdout, stderr, duration_ms, session_id, truncated,
    /// stdout_log, stderr_log (logs only when truncated). Lazaret's own failure: {"error": …}.
    /// Strings hold the raw values (stdout and stderr exactly as the command wrote them, as
    /// UTF-8); every character outside printable ASCII is a \uXXXX escape.
    #[arg(long)]
    pub json: bool,
    /// Agent Profile to run (default: `default_profile` of the host configuration, else the built-in "shell"; see `lazaret profile list`).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Bytes of each stream kept in the output; the rest stays in the log file.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024)]
    pub max_output: usize,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD", required = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Serialize)]
struct ExecResult {
    exit_code: i32,
    stdout: String,
    stderr: String,
    duration_ms: u64,
    session_id: String,
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stdout_log: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr_log: Option<PathBuf>,
    /// What the profile lets the output do to a terminal it is written to.
    #[serde(skip)]
    access: crate::profile::TerminalAccess,
}

pub fn execute(layout: &Layout, args: ExecArgs) -> anyhow::Result<i32> {
    let json = args.json;
    match run(layout, args) {
        Ok((code, result)) => {
            if json {
                crate::say_out!("{}", super::safe_json::to_line(&result)?);
            } else {
                write_output(std::io::stdout(), &result.stdout, result.access)?;
                write_output(std::io::stderr(), &result.stderr, result.access)?;
                if result.truncated {
                    for log in [&result.stdout_log, &result.stderr_log]
                        .into_iter()
                        .flatten()
                    {
                        crate::say!("lazaret: output truncated; full log: {}", log.display());
                    }
                }
            }
            Ok(code)
        }
        Err(e) if json => {
            crate::say_out!(
                "{}",
                super::safe_json::to_line(&serde_json::json!({ "error": format!("{e:#}") }))?
            );
            tracing::error!("{e:#}");
            Ok(125)
        }
        Err(e) => Err(e),
    }
}

/// The command's output as a pipe carries it, or, to a terminal, through the passthrough's
/// filter (DX-4): the same the sandbox's output in `lazaret run` may do there, no more.
fn write_output(
    mut to: impl Write + std::io::IsTerminal,
    text: &str,
    access: crate::profile::TerminalAccess,
) -> std::io::Result<()> {
    if !to.is_terminal() {
        return to.write_all(text.as_bytes());
    }
    let mut shown = Vec::with_capacity(text.len());
    crate::terminal::output_filter::OutputFilter::new(access).filter(text.as_bytes(), &mut shown);
    to.write_all(&shown)
}

fn run(layout: &Layout, args: ExecArgs) -> anyhow::Result<(i32, ExecResult)> {
    let t0 = Instant::now();
    let plan = SessionPlan::new(
        layout,
        &RunOptions {
            profile: args.profile,
            command: args.command,
            linger: None,
        },
    )?;
    let dir = layout.state_dir().join("exec");
    std::fs::create_dir_all(layout.state_dir())?;
    ensure_private_dir(&dir)?;
    let stem = format!(
        "{}-{}",
        crate::coordinator::status::now_unix_ms(),
        std::process::id()
    );
    let out_path = dir.join(format!("{stem}.stdout"));
    let err_path = dir.join(format!("{stem}.stderr"));
    let open = |p: &Path| {
        std::fs::File::options()
            .create_new(true)
            .write(true)
            .open(p)
            .with_context(|| format!("creating {}", p.display()))
    };
    let attach = Attach::Capture {
        stdout: open(&out_path)?,
        stderr: open(&err_path)?,
    };
    let access = plan.profile.terminal;
    let outcome = plan.run(attach);
    let (stdout, out_cut) = read_capped(&out_path, args.max_output)?;
    let (stderr, err_cut) = read_capped(&err_path, args.max_output)?;
    let truncated = out_cut || err_cut;
    if !truncated {
        let _ = std::fs::remove_file(&out_path);
        let _ = std::fs::remove_file(&err_path);
    }
    let (code, session_id) = outcome?;
    Ok((
        code,
        ExecResult {
            exit_code: code,
            stdout,
            stderr,
            duration_ms: t0.elapsed().as_millis() as u64,
            session_id,
            truncated,
            stdout_log: truncated.then_some(out_path),
            stderr_log: truncated.then_some(err_path),
            access,
        },
    ))
}

/// The first `cap` bytes of a file as text, and whether there was more.
fn read_capped(path: &Path, cap: usize) -> anyhow::Result<(String, bool)> {
    let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut buf = Vec::new();
    file.take(cap as u64 + 1).read_to_end(&mut buf)?;
    let cut = buf.len() > cap;
    buf.truncate(cap);
    Ok((String::from_utf8_lossy(&buf).into_owned(), cut))
}
