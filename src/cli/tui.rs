//! `lazaret tui`: the full-screen control centre for the Domain of the current workspace.

use crate::domain::layout::Layout;
use clap::Args;
use lazaret_ui::tui::run::{self, TuiOptions};

/// Full-screen control centre: agent panes, escalation approvals, Domain state, denials
///
/// Opens the Domain of the workspace around the current directory (starting it when it does
/// not run; joining it when it does, e.g. next to `lazaret run`s in other terminals). Each
/// pane is a session the Session Coordinator owns, in the shared Agent Sandbox, running the
/// profile's command (or CMD). Side panels show escalation requests of every session of the
/// Domains shown (approve, edit the command, deny — from the keyboard), the Domain's state
/// and its network denials.
///
/// Keys are tmux-like behind a prefix, ctrl-b by default: ctrl-b % and ctrl-b " split,
/// ctrl-b arrows move, ctrl-b a opens the escalations panel, ctrl-b ? lists every binding.
///
/// Sessions outlive the TUI. ctrl-b d detaches: the TUI exits, every session keeps running
/// (`lazaret ps` lists them). ctrl-b q asks: e ends this TUI's sessions, d detaches. A lost
/// terminal (SIGHUP: closed window, dropped SSH connection) or SIGTERM detaches too, never ends.
/// ctrl-b x ends the focused pane's session. Started again in the same workspace, `lazaret tui`
/// shows that workspace's detached TUI sessions again, in the tabs and splits they had; the
/// status line says how many detached sessions run in other workspaces, and ctrl-b s (the
/// session picker) opens any running session of yours. Keys, theme, scrollback:
/// $XDG_CONFIG_HOME/lazaret/tui.toml (docs/tui-config.md).
///
/// Examples:
///   lazaret tui                        the default profile's shell in the first pane
///   lazaret tui --profile claude       Claude Code panes
///   lazaret tui -- python3             every new pane runs python3
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct TuiArgs {
    /// Agent Profile of the panes (default: `default_profile` of the host configuration, else "shell").
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// What each new pane runs, after `--` (default: the profile's command).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn execute(layout: &Layout, args: TuiArgs) -> anyhow::Result<i32> {
    crate::session::refuse_root()?;
    run::run(
        crate::launcher::EngineLauncher::new(layout.clone()),
        &TuiOptions {
            profile: args.profile,
            command: args.command,
            config_dir: layout.config_dir(),
        },
    )
}
