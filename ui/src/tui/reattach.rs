//! Which detached sessions `lazaret tui` shows again when it starts (issue #14), sans-IO: the
//! detached sessions a TUI started in the Domains of the workspace this TUI was started in (any
//! profile), and how many other detached sessions run elsewhere — those only the session picker
//! (`session-picker`) opens. A session some client is attached to (another TUI, `lazaret
//! attach`) is never taken.

use lazaret_protocol::status::DomainStatus;
use std::path::{Path, PathBuf};

/// A detached session to show again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detached {
    pub workspace: PathBuf,
    pub profile: String,
    pub session_id: String,
    /// What the session runs.
    pub command: Vec<String>,
    /// Where the TUI that last showed it had it (see [`super::layout_hint`]).
    pub layout_hint: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// This workspace's detached TUI sessions, in the Domains' order, oldest first.
    pub here: Vec<Detached>,
    /// Detached coordinator-owned sessions of other workspaces (any client started them).
    pub elsewhere: usize,
}

/// The sessions to show again for a TUI started in `workspace` (a workspace root, as the
/// Domains publish it).
pub fn select<'a>(
    domains: impl IntoIterator<Item = &'a DomainStatus>,
    workspace: &Path,
) -> Selection {
    let mut out = Selection::default();
    for d in domains {
        let mine = d.workspace == workspace;
        let mut sessions: Vec<_> = d
            .sessions
            .iter()
            // A session being ended (or gone) is not shown again.
            .filter(|s| s.hosted && s.running && s.attached.is_empty())
            .collect();
        sessions.sort_by_key(|s| s.started_unix_ms);
        for s in sessions {
            if !mine {
                out.elsewhere += 1;
            } else if s.started_by == "tui" {
                out.here.push(Detached {
                    workspace: d.workspace.clone(),
                    profile: d.profile.clone(),
                    session_id: s.session_id.clone(),
                    command: s.command.clone(),
                    layout_hint: s.layout_hint.clone(),
                });
            }
        }
    }
    out
}

/// The status line's note about the sessions not shown again, if any.
pub fn elsewhere_note(elsewhere: usize, picker_keys: &str) -> Option<String> {
    match elsewhere {
        0 => None,
        1 => Some(format!(
            "1 more detached session in another workspace: {picker_keys}"
        )),
        n => Some(format!(
            "{n} more detached sessions in other workspaces: {picker_keys}"
        )),
    }
}

#[cfg(test)]
#[path = "reattach_tests.rs"]
mod tests;
