//! `lazaret run`: a terminal straight into the Agent Sandbox of the current workspace.

use crate::domain::layout::Layout;
use crate::session::{self, RunOptions};
use clap::Args;

/// Run a command (default: a shell) in the Agent Sandbox of this workspace
///
/// Runs the command (default: the profile's shell, `bash`) in the Agent Sandbox of the
/// workspace around the current directory. The workspace is the Git top level when inside a
/// repository; it is mounted read-write at /workspace and the command starts in the matching
/// subdirectory. Several `lazaret run`s in one workspace share one sandbox. The exit status is
/// the command's; 125 when Lazaret itself fails.
///
/// Examples:
///   lazaret run                      an interactive shell in the sandbox
///   lazaret run -- make test         one command, then back to the host
///   echo hi | lazaret run -- cat     stdin and stdout as pipes when not a terminal
///   lazaret run --detachable -- claude   a session that outlives this terminal:
///                                    ctrl-b d detaches, `lazaret attach` comes back
///   lazaret run --linger 30s -- make lint   the Domain stays up 30 s after it, so the
///                                    next `lazaret run` joins instead of starting it
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct RunArgs {
    /// Agent Profile to run (default: `default_profile` of the host configuration, else the built-in "shell"; see `lazaret profile list`).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Run the command as a session the Session Coordinator owns: it survives this terminal
    /// (ctrl-b d detaches, closing the terminal too) and `lazaret attach` shows it again.
    #[arg(long)]
    pub detachable: bool,
    /// Keep the Domain up this long after its last session ends ("30s", "5m", "0"), so that
    /// the next `lazaret run` joins it at once instead of starting it again (handy in a loop).
    /// Applies when this run starts the Domain; default: the profile's `linger`, else 0.
    #[arg(long, value_name = "DURATION", value_parser = parse_linger)]
    pub linger: Option<u64>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn execute(layout: &Layout, args: RunArgs) -> anyhow::Result<i32> {
    let opts = RunOptions {
        profile: args.profile,
        command: args.command,
        linger: args.linger,
    };
    if args.detachable {
        return crate::detachable::run(layout, &opts);
    }
    session::run(layout, &opts)
}

fn parse_linger(text: &str) -> Result<u64, String> {
    crate::config::linger::parse(text)
}
