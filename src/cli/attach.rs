//! `lazaret attach`: a plain terminal attached to a coordinator-owned session.

use crate::domain::layout::Layout;
use clap::Args;
use lazaret_client::{connection, locate};
use lazaret_ui::attach;

/// Attach this terminal to a running session (detach again with ctrl-b d)
///
/// Attaches to a session the Session Coordinator owns — one started with `lazaret run
/// --detachable` or in a `lazaret tui` pane — wherever it was started. The screen is redrawn
/// from the coordinator's copy at once, then you see its live output and your keys reach it.
/// Several terminals may attach to one session; the session takes the size of the one that
/// typed or resized last. Escalation prompts of the session are offered here too: the first
/// decision of any attached client counts.
///
/// Keys: ctrl-b d detaches (the session keeps running; also while an escalation prompt is
/// shown, which then waits for the session's other clients); ctrl-b ctrl-b sends one ctrl-b.
/// Closing the terminal also only detaches. The exit status is the command's when it ends
/// while attached, 0 after a detach.
///
/// Examples:
///   lazaret attach --last            the most recently started session
///   lazaret attach 3fa9c1            by Session ID (a unique prefix is enough)
///   lazaret ps                       lists sessions and who is attached
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct AttachArgs {
    /// Session ID or a unique prefix of it (see `lazaret ps`); without it the only attachable
    /// session.
    #[arg(value_name = "SESSION", conflicts_with = "last")]
    pub session: Option<String>,
    /// The most recently started coordinator-owned session.
    #[arg(long)]
    pub last: bool,
}

pub fn execute(layout: &Layout, args: AttachArgs) -> anyhow::Result<i32> {
    crate::session::refuse_root()?;
    if !crate::terminal::stdin_is_terminal() {
        anyhow::bail!("lazaret attach needs a terminal (stdin is not one)");
    }
    let found = locate::find(&layout.runtime_root()?, args.session.as_deref(), args.last)?;
    let access = terminal_access(layout, &found.domain.status.profile);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let conn = rt
        .block_on(connection::connect(&found.domain.address, "attach"))
        .map_err(connection::join_err)?;
    let outcome = attach::run(&rt, conn, found.session_id.clone(), access, true)?;
    Ok(attach::report(&outcome, &found.session_id))
}

/// What the profile lets the session's output do on this terminal (the default when the
/// profile is gone from the configuration).
pub fn terminal_access(layout: &Layout, profile: &str) -> crate::profile::TerminalAccess {
    crate::config::HostConfig::load(layout)
        .and_then(|c| c.profile(Some(profile)))
        .map(|p| p.terminal)
        .unwrap_or_default()
}
