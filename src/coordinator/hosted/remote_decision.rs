//! Escalation prompts decided from any terminal of the developer (issue #15: `lazaret
//! escalations`, `lazaret approve`, `lazaret deny`). The client is authenticated like every
//! other (mutual TLS, a Client CLI identity of this Domain). To decide, it becomes a control
//! centre — in the protocol model too (TLA+ `Watch`), so it sees every prompt of the Domain —
//! and its decision takes the same first-decision-wins path as a TUI's or an attached
//! terminal's ([`super::SessionHost::decide`]): the other clients' prompts are withdrawn and
//! told who decided, the core records the decider, and the log names the client.

use super::prompts::NotTaken;
use super::viewer::{OutboundSender, ViewerKey};
use super::{lock, SessionHost};
use crate::coordinator::event::Event;
use lazaret_protocol::escalation::{DecideAnswer, Decision, PendingEscalation};

impl SessionHost {
    /// The prompts waiting for a decision, oldest first.
    pub fn escalations(&self) -> Vec<PendingEscalation> {
        lock(&self.board).list()
    }

    /// Makes `key` a control centre (TLA+ `Watch`) unless it is one: it is offered every
    /// prompt of the Domain from now on. Returns its queue; None when the Domain takes no
    /// control centre now (not ready) or the client is gone.
    pub(super) fn become_centre(&self, key: ViewerKey) -> Option<OutboundSender> {
        let mut viewers = lock(&self.viewers);
        let v = viewers.get_mut(&key)?;
        if v.centre.is_none() {
            let viewer = self.engine.registry().connect_viewer();
            if self.engine.viewer_step(Event::Watch { viewer }) {
                v.centre = Some(viewer);
                self.feed_wake.notify_one();
                tracing::info!(%viewer, client = %v.client, label = %v.label, "control centre");
            }
        }
        v.centre.map(|_| v.out.clone())
    }

    /// A decision on `request_id` from a client that need not have shown the prompt: taken
    /// when it is the first, through [`SessionHost::decide`]; otherwise the answer says what
    /// became of the request (and who decided it, when known).
    pub fn decide_remote(
        &self,
        key: ViewerKey,
        request_id: &str,
        decision: Decision,
    ) -> DecideAnswer {
        let by = self.describe(key);
        if let Err(e) = decision.validate() {
            return DecideAnswer::Refused {
                reason: format!("the edited command is invalid: {e}"),
            };
        }
        if !lock(&self.board).is_pending(request_id) {
            let answer = lock(&self.board).concluded(request_id);
            tracing::info!(request = %request_id, ?answer, %by, "escalation decision not taken");
            return answer;
        }
        let Some(out) = self.become_centre(key) else {
            return DecideAnswer::Refused {
                reason: "the Domain takes no decisions now (it is starting, failing or tearing \
                         down); try again in a moment"
                    .into(),
            };
        };
        // The core's `Watch` offers the prompt too; the board offers each prompt once.
        lock(&self.board).offer(request_id, key, &out);
        match self.decide(key, request_id, decision) {
            Ok(()) => DecideAnswer::Decided {},
            // Decided, timed out or withdrawn since it was looked at.
            Err(NotTaken::Unknown) => lock(&self.board).concluded(request_id),
            Err(NotTaken::NotOffered) => DecideAnswer::Refused {
                reason: "this client was not offered the prompt".into(),
            },
        }
    }
}
