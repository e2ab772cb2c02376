//! Routing an Escalation Request to the developer (FR-5): each registered session has its own
//! prompt channel, held by whatever shows that session's terminal — the socket connection of
//! its `lazaret run`, or (issue #7) a TUI pane. A prompt therefore reaches only the session
//! that asked, and the decision comes back on a channel of that one request.
//!
//! Every event on the route is an effect of the protocol core carried out by the
//! coordinator's driver (`ShowPrompt`, `OfferPrompt`, `WithdrawPrompt`; see
//! `coordinator::driver_edges`), in the order of the core's steps.

use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use tokio::sync::mpsc;

/// A decision and who made it: `by` is None for the session's own terminal (a direct `lazaret
/// run`), else the viewer (an attached client or a control centre) whose decision won (FR-5).
#[derive(Debug)]
pub struct Decided {
    pub decision: Decision,
    pub by: Option<crate::coordinator::viewers::ViewerId>,
    /// Told once the protocol core took the decision's step (true) or refused it (false). A
    /// viewer's decision is taken only while the viewer sees the prompt (TLA+ `Decide`), so
    /// the client that decided waits for this before it may detach — a `lazaret deny` that
    /// exits at once would otherwise detach first, and its decision would be refused.
    pub recorded: Option<std::sync::mpsc::Sender<bool>>,
}

impl Decided {
    /// A decision of the session's own terminal.
    pub fn own(decision: Decision) -> Decided {
        Decided {
            decision,
            by: None,
            recorded: None,
        }
    }

    /// A viewer's decision; `recorded` is told when the core took its step.
    pub fn by_viewer(
        decision: Decision,
        by: Option<crate::coordinator::viewers::ViewerId>,
        recorded: std::sync::mpsc::Sender<bool>,
    ) -> Decided {
        Decided {
            decision,
            by,
            recorded: Some(recorded),
        }
    }
}

/// What the coordinator tells a session's terminal.
#[derive(Debug)]
pub enum PromptEvent {
    /// Ask the developer; the answer goes to `reply` (dropped unanswered: the session is gone).
    Ask {
        prompt: EscalationPrompt,
        reply: std::sync::mpsc::Sender<Decided>,
    },
    /// Offer the prompt of `request_id` to a viewer that sees it (one attached to the
    /// session, or a control centre). A session without viewers (a direct `lazaret run`)
    /// shows its prompts on its own terminal only.
    Offer {
        request_id: String,
        viewer: crate::coordinator::viewers::ViewerId,
    },
    /// The prompt for `request_id` needs no answer any more: withdraw it from everyone
    /// showing it. `decided`: the first decision won (its decider is not told, the others
    /// are told who decided).
    Withdraw {
        request_id: String,
        reason: String,
        decided: bool,
    },
}

pub type PromptSender = mpsc::UnboundedSender<PromptEvent>;
pub type PromptReceiver = mpsc::UnboundedReceiver<PromptEvent>;

/// A new session's prompt channel.
pub fn channel() -> (PromptSender, PromptReceiver) {
    mpsc::unbounded_channel()
}
