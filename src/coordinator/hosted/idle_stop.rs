//! `idle_stop` (issue #18): a Domain whose sessions are all coordinator-owned, detached (no
//! client attached: a control centre showing a session counts as attached), without a pending
//! escalation, and without input from the developer for the profile's `idle_stop` is stopped:
//! its sessions are ended as `lazaret kill` ends them, and the last one's end tears the Domain
//! down as always.
//!
//! Idle means the developer's silence, whatever the sandbox prints (issue #31): output is the
//! sandbox's to choose, so counting it let one byte an hour keep a forgotten agent running for
//! ever. "Without input for" counts from the later of a session's last input from a client (or
//! its start) and the first look that saw the Domain qualify after one that did not (somebody
//! attached, a prompt waiting, a `lazaret run` session): a developer who watched a screen for
//! hours and detaches gets the whole `idle_stop` again (a look later at most). The Domain is looked at once a minute at most (every second at least
//! for short settings): idle, it costs one wake-up a minute.

use super::SessionHost;
use std::sync::Arc;
use std::time::Duration;

/// What a look saw of one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// Owned by the coordinator (a `lazaret run` session never qualifies: its terminal holds it).
    pub hosted: bool,
    /// Clients attached to it.
    pub attached: usize,
    /// Its escalations waiting for a decision.
    pub pending: u32,
    /// Since its last input from an attached client (or its start); its output does not count.
    pub quiet_for: Duration,
}

/// What to do after a look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every session qualified and had no input long enough: end them.
    Stop,
    /// Look again after this long; `busy`: the Domain did not qualify now.
    Wait { after: Duration, busy: bool },
}

/// The shortest and longest pause between looks.
const MIN_LOOK: Duration = Duration::from_secs(1);
const MAX_LOOK: Duration = Duration::from_secs(60);

/// How long the developer has been silent in a session at `now_ms`: since its last input from a
/// client (`last_input_ms`, 0: never) or else its start. What the session printed is not asked:
/// the sandbox chooses its output, not the developer's presence.
pub fn input_quiet_for(now_ms: u64, started_ms: u64, last_input_ms: u64) -> Duration {
    let since = if last_input_ms > 0 {
        last_input_ms
    } else {
        started_ms
    };
    Duration::from_millis(now_ms.saturating_sub(since))
}

/// Decides on the sessions seen, `since_busy` after the Domain last did not qualify.
pub fn decide(sessions: &[Seen], idle_stop: Duration, since_busy: Duration) -> Verdict {
    let look = |d: Duration| d.clamp(MIN_LOOK, MAX_LOOK);
    let qualifies = |s: &Seen| s.hosted && s.attached == 0 && s.pending == 0;
    if sessions.is_empty() || !sessions.iter().all(qualifies) {
        // No session: the Domain is being torn down or lingers (`linger` decides).
        return Verdict::Wait {
            after: look(idle_stop),
            busy: true,
        };
    }
    let quiet = sessions
        .iter()
        .map(|s| s.quiet_for)
        .min()
        .unwrap_or_default()
        .min(since_busy);
    match idle_stop.checked_sub(quiet) {
        Some(left) if !left.is_zero() => Verdict::Wait {
            after: look(left),
            busy: false,
        },
        _ => Verdict::Stop,
    }
}

impl SessionHost {
    /// Every session of the Domain as the idle stop looks at it.
    fn idle_seen(&self) -> Vec<Seen> {
        let now = crate::coordinator::status::now_unix_ms();
        let hosted = super::lock(&self.sessions).clone();
        let board = super::lock(&self.board);
        self.list()
            .into_iter()
            .filter(|s| s.running)
            .map(|info| {
                let id = info.session_id.as_str();
                let last_input = hosted.get(id).map_or(0, |s| s.last_input_unix_ms());
                Seen {
                    hosted: info.hosted,
                    attached: info.attached.len(),
                    pending: board.pending_of(id),
                    quiet_for: input_quiet_for(now, info.started_unix_ms, last_input),
                }
            })
            .collect()
    }
}

/// Runs the idle stop of the Domain until it stops it or the coordinator's runtime ends.
pub fn spawn(host: &Arc<SessionHost>, idle_stop: Duration) {
    let host = Arc::downgrade(host);
    tokio::spawn(async move {
        // Since the first look that saw the Domain qualify (a look that did not clears it):
        // silence never counts from before somebody was seen detaching.
        let mut qualified_since: Option<tokio::time::Instant> = None;
        let mut wait = MIN_LOOK;
        loop {
            tokio::time::sleep(wait).await;
            let Some(host) = host.upgrade() else { return };
            let seen = host.idle_seen();
            let since = qualified_since.get_or_insert_with(tokio::time::Instant::now);
            match decide(&seen, idle_stop, since.elapsed()) {
                Verdict::Stop => {
                    tracing::info!(
                        secs = idle_stop.as_secs(),
                        sessions = seen.len(),
                        "idle_stop: every session detached and without input; ending them"
                    );
                    host.end_all("idle_stop (every session detached and without input)");
                    return;
                }
                Verdict::Wait { after, busy } => {
                    if busy {
                        qualified_since = None;
                    }
                    wait = after;
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Duration = Duration::from_secs(3600);

    fn detached(quiet: Duration) -> Seen {
        Seen {
            hosted: true,
            attached: 0,
            pending: 0,
            quiet_for: quiet,
        }
    }

    #[test]
    fn stops_only_when_every_session_is_detached_without_a_prompt_and_without_input_long_enough() {
        let long = 9 * H;
        assert_eq!(
            decide(&[detached(long), detached(long)], 8 * H, long),
            Verdict::Stop
        );
        // The developer typed into one session an hour ago: seven hours to go (looked at again within a minute).
        assert_eq!(
            decide(&[detached(long), detached(H)], 8 * H, long),
            Verdict::Wait {
                after: MAX_LOOK,
                busy: false
            }
        );
        // Somebody attached, a prompt waiting, a `lazaret run` session: never.
        for s in [
            Seen {
                attached: 1,
                ..detached(long)
            },
            Seen {
                pending: 1,
                ..detached(long)
            },
            Seen {
                hosted: false,
                ..detached(long)
            },
        ] {
            let v = decide(&[detached(long), s], 8 * H, long);
            assert_eq!(
                v,
                Verdict::Wait {
                    after: MAX_LOOK,
                    busy: true
                }
            );
        }
        // No session (lingering, or tearing down): not the idle stop's business.
        assert!(matches!(
            decide(&[], 8 * H, long),
            Verdict::Wait { busy: true, .. }
        ));
    }

    #[test]
    fn output_never_keeps_the_domain_only_the_developers_input_does() {
        let start = 1_000_000;
        let now = start + 9 * 3_600_000;
        // Printed a byte a minute ago (output is not asked), no input since its start: nine
        // hours of silence, stopped under `idle_stop = "8h"`.
        let quiet = input_quiet_for(now, start, 0);
        assert_eq!(quiet, 9 * H);
        assert_eq!(decide(&[detached(quiet)], 8 * H, 9 * H), Verdict::Stop);
        // The developer typed an hour ago: seven hours to go.
        let quiet = input_quiet_for(now, start, now - 3_600_000);
        assert_eq!(quiet, H);
        assert!(matches!(
            decide(&[detached(quiet)], 8 * H, 9 * H),
            Verdict::Wait { busy: false, .. }
        ));
        // A clock that went back counts as no silence, never as a long one.
        assert_eq!(input_quiet_for(start, now, 0), Duration::ZERO);
    }

    #[test]
    fn silence_counts_from_when_the_domain_last_did_not_qualify() {
        // Quiet for nine hours, but a client detached a minute ago.
        let v = decide(&[detached(9 * H)], 8 * H, Duration::from_secs(60));
        assert_eq!(
            v,
            Verdict::Wait {
                after: MAX_LOOK,
                busy: false
            }
        );
        // A short setting is looked at as often as needed (never more than once a second).
        let v = decide(
            &[detached(Duration::from_millis(2500))],
            Duration::from_secs(3),
            H,
        );
        assert_eq!(
            v,
            Verdict::Wait {
                after: MIN_LOOK,
                busy: false
            }
        );
        assert_eq!(
            decide(
                &[detached(Duration::from_secs(3))],
                Duration::from_secs(3),
                H
            ),
            Verdict::Stop
        );
    }
}
