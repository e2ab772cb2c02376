//! Hostile-sandbox scenarios (issue #13, spec SR-3, SR-4, SR-7, SR-8, SR-14, DX-4): everything
//! the Agent Sandbox can write is attacker-controlled input for every host-side reader —
//! Lazaret itself, the host commands it runs for escalations, and the developer's own tools
//! after the session. Each test is one attack, written in its doc comment as the agent inside
//! would try it, run on the real stack (rootless podman + runsc + sidecar + git), and asserts
//! the outcome the host must see. `journal/` lists the scenarios with their results.
//!
//! One module per attacked surface:
//! - `git_sentry`: git control files planted through the shared workspace (commondir, gitdir
//!   pointers, config.worktree, alternates, nested repositories) and what host git does next;
//! - `escalated_git`: host commands run for escalations (filters, drivers, `env git`,
//!   `/usr/bin/git`, nested repositories, a working directory swapped for a symlink);
//! - `mailbox`: the Escalation Mailbox as a dumping ground (junk, floods, forged results,
//!   replays) and what the sandbox learns of the host (Domain ID guesses);
//! - `approval`: the approval surfaces (`lazaret run` prompt, TUI panel, passthrough) against
//!   spoofed cards, terminal-generated input and clipboard/notification writes;
//! - `decisions`: what a decision binds to — IDs the coordinator minted, never the sandbox's,
//!   a script's expected command digest (issue #31);
//! - `screen_feed`: what a TUI pane's attachment (`updates: "screen"`) receives of hostile
//!   output — the coordinator's re-encoded screen only — against what `updates: "bytes"` gets;
//! - `clipboard`: the image-paste shim (issue #16) as a way to read the developer's clipboard
//!   without the developer pasting: no key, another session's key, a forged key in output or
//!   through TIOCSTI, a clipboard that holds no image;
//! - `sessions`: coordinator-owned sessions (issue #14): output parked for the next terminal
//!   that attaches, a stalled client, a command that ignores `lazaret kill`'s hangup;
//! - `limits`: the host's memory taken from a Domain of the default profile (memory hog,
//!   memory kept in the Sentry's own heap through pipe buffers; the fork bomb is alone in
//!   `tests/fork_bomb.rs`);
//! - `messages`: Lazaret's own notices, warnings and errors quoting names the sandbox chose;
//! - `isolation`, `network`, `state`: the rest of the checklist in the security test design.

#[path = "../support/mod.rs"]
mod support;

mod approval;
mod clipboard;
mod decisions;
mod escalated_git;
mod git_boundary;
mod git_sentry;
mod isolation;
mod limits;
mod mailbox;
mod messages;
mod network;
mod screen_feed;
mod sessions;
mod state;
