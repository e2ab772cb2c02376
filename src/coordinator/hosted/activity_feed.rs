//! The sessions' activity for the control centres (issue #15): the last activity sent per
//! session, so that a change is sent once to every centre, nothing is sent when nothing
//! changed, and a centre that starts watching gets every session's activity at once.

use super::viewer::{Outbound, OutboundSender};
use lazaret_protocol::activity::SessionActivity;
use lazaret_protocol::messages::CoordinatorMessage;
use lazaret_protocol::SessionId;
use std::collections::BTreeMap;

#[derive(Default)]
pub struct ActivityFeed {
    sent: BTreeMap<String, (SessionId, SessionActivity)>,
}

impl ActivityFeed {
    /// `activity` is `session`'s now: the message for the centres when it changed.
    pub fn update(
        &mut self,
        session: &SessionId,
        activity: SessionActivity,
    ) -> Option<CoordinatorMessage> {
        let key = session.as_str().to_owned();
        if self.sent.get(&key).is_some_and(|(_, a)| *a == activity) {
            return None;
        }
        self.sent.insert(key, (session.clone(), activity.clone()));
        Some(message(session, activity))
    }

    /// The session ended: it is no longer sent to centres that start watching.
    pub fn forget(&mut self, session: &str) {
        self.sent.remove(session);
    }

    /// Every session's activity, for a centre that starts watching now.
    pub fn greet(&self, out: &OutboundSender) {
        for (id, activity) in self.sent.values() {
            let _ = out.send(Outbound::Message(message(id, activity.clone())));
        }
    }
}

fn message(session: &SessionId, activity: SessionActivity) -> CoordinatorMessage {
    CoordinatorMessage::SessionActivity {
        session_id: session.clone(),
        activity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> SessionId {
        SessionId::parse(&format!("{n:02x}").repeat(32)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_change_is_sent_once_and_the_same_activity_never_again() {
        let mut feed = ActivityFeed::default();
        let a = SessionActivity {
            last_output_unix_ms: 10,
            running: true,
            idle_after_ms: 5_000,
            ..SessionActivity::default()
        };
        assert!(feed.update(&id(1), a.clone()).is_some());
        assert!(feed.update(&id(1), a.clone()).is_none());
        let bell = SessionActivity {
            attention: "bell".into(),
            ..a.clone()
        };
        match feed.update(&id(1), bell.clone()) {
            Some(CoordinatorMessage::SessionActivity {
                session_id,
                activity,
            }) => {
                assert_eq!(session_id, id(1));
                assert_eq!(activity, bell);
            }
            other => panic!("expected the new activity, got {other:?}"),
        }
        assert!(feed.update(&id(2), a.clone()).is_some(), "another session");
        feed.forget(id(1).as_str());
        assert!(feed.update(&id(1), bell).is_some(), "forgotten: sent again");
    }

    #[test]
    fn a_new_centre_gets_every_sessions_activity() {
        let mut feed = ActivityFeed::default();
        for n in 1..=3 {
            feed.update(&id(n), SessionActivity::default());
        }
        feed.forget(id(2).as_str());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        feed.greet(&tx);
        let mut got = Vec::new();
        while let Ok(Outbound::Message(CoordinatorMessage::SessionActivity {
            session_id, ..
        })) = rx.try_recv()
        {
            got.push(session_id);
        }
        assert_eq!(got, vec![id(1), id(3)]);
    }
}
