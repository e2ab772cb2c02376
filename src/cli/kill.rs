//! `lazaret kill`: end a coordinator-owned session, and wait until it has left the Domain (and,
//! when it was the last one, until the Domain is torn down: FR-6).

use crate::coordinator::liveness::process_alive;
use crate::coordinator::status::DomainStatus;
use crate::domain::layout::Layout;
use clap::Args;
use lazaret_client::{connection, locate};
use std::time::{Duration, Instant};

/// End a session (its command is hung up) and wait until it is gone
///
/// Ends a session the Session Coordinator owns, attached or not: its command is hung up (and
/// killed 3 s later if it is still there). `lazaret kill` returns once the session has left the
/// Domain; when it was the Domain's last session, once the Domain is torn down, as after the
/// last `lazaret run` — so `lazaret kill X && lazaret ps` never lists X. Each wait is bounded
/// (30 s); past it, kill says what is still there and exits 125.
///
/// Examples:
///   lazaret kill 3fa9c1              by Session ID (a unique prefix is enough)
///   lazaret kill --no-wait 3fa9c1    ask for the end and return at once
///   lazaret kill --last
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct KillArgs {
    /// Session ID or a unique prefix of it (see `lazaret ps`).
    #[arg(value_name = "SESSION", conflicts_with = "last")]
    pub session: Option<String>,
    /// The most recently started coordinator-owned session.
    #[arg(long)]
    pub last: bool,
    /// Return once the coordinator took the request, without waiting for the session to leave
    /// or the Domain's teardown.
    #[arg(long)]
    pub no_wait: bool,
}

/// How long each wait lasts at most: the session leaving, then the Domain's teardown.
const WAIT: Duration = Duration::from_secs(30);

/// How often the Domain's status is looked at while waiting.
const POLL: Duration = Duration::from_millis(50);

/// Where an ended session is, as `lazaret ps` would see it.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    /// Still listed by its Domain.
    Listed,
    /// Gone; other sessions keep the Domain running.
    Left,
    /// Gone, and the Domain is being torn down (no session left, the coordinator still runs).
    TearingDown,
    /// Gone, and the Domain lingers without a session (`linger`): torn down after that time.
    Lingering(u64),
    /// Gone, and so is the Domain (its coordinator exited).
    DomainGone,
}

/// The state of `session` from its Domain's status file (None: removed, which the coordinator
/// does first when it tears the Domain down) and whether the coordinator still runs.
pub fn progress(status: Option<&DomainStatus>, coordinator_runs: bool, session: &str) -> Progress {
    if !coordinator_runs {
        return Progress::DomainGone;
    }
    match status {
        Some(s) if s.sessions.iter().any(|x| x.session_id == session) => Progress::Listed,
        Some(s) if !s.sessions.is_empty() => Progress::Left,
        Some(s) if s.linger_secs > 0 => Progress::Lingering(s.linger_secs),
        _ => Progress::TearingDown,
    }
}

pub fn execute(layout: &Layout, args: KillArgs) -> anyhow::Result<i32> {
    crate::session::refuse_root()?;
    if args.session.is_none() && !args.last {
        anyhow::bail!(
            "name the session to end (lazaret kill SESSION, see `lazaret ps`) or use --last"
        );
    }
    let found = locate::find(&layout.runtime_root()?, args.session.as_deref(), args.last)?;
    let short = &found.session_id.as_str()[..12];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut conn = connection::connect(&found.domain.address, "kill")
            .await
            .map_err(connection::join_err)?;
        conn.end(&found.session_id).await?;
        conn.close().await;
        anyhow::Ok(())
    })?;
    if args.no_wait {
        crate::say!("lazaret: asked session {short} to end");
        return Ok(0);
    }
    let status_path = found.domain.address.socket.with_file_name("status.json");
    let pid = found.domain.status.coordinator_pid;
    let look = || {
        progress(
            DomainStatus::read(&status_path).as_ref(),
            process_alive(pid),
            found.session_id.as_str(),
        )
    };
    let Some(now) = wait_until(|| Some(look()).filter(|p| *p != Progress::Listed)) else {
        anyhow::bail!(
            "session {short} was asked to end but is still listed after {} s (see `lazaret ps`)",
            WAIT.as_secs()
        );
    };
    let domain = &found.domain.status.domain_id;
    match now {
        Progress::Left => {
            crate::say!("lazaret: ended session {short}");
            return Ok(0);
        }
        Progress::Lingering(secs) => {
            crate::say!(
                "lazaret: ended session {short}, the last of Domain {domain}, which stays up                  {secs} s for the next `lazaret run` (linger) before it is torn down"
            );
            return Ok(0);
        }
        _ => {}
    }
    // The last session: the coordinator exits once the teardown finished (or a new session
    // arrived in the meantime and keeps the Domain).
    let torn_down = wait_until(|| Some(look()).filter(|p| *p != Progress::TearingDown));
    match torn_down {
        Some(Progress::DomainGone) => {
            crate::say!("lazaret: ended session {short}, the last of Domain {domain}: torn down");
            Ok(0)
        }
        Some(_) => {
            crate::say!("lazaret: ended session {short}; Domain {domain} runs on (a new session)");
            Ok(0)
        }
        None => anyhow::bail!(
            "ended session {short}, the last of Domain {domain}, but its teardown did not finish \
             within {} s: its Session Coordinator (pid {pid}) still runs (see `lazaret ps`)",
            WAIT.as_secs()
        ),
    }
}

/// Polls `done` until it returns something, for at most [`WAIT`].
fn wait_until<T>(mut done: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(t) = done() {
            return Some(t);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazaret_protocol::status::SessionStatus;

    fn status(sessions: &[&str]) -> DomainStatus {
        DomainStatus {
            domain_id: "d".into(),
            profile: "p".into(),
            workspace: "/w".into(),
            coordinator_pid: 1,
            coordinator_id: "c".into(),
            sandbox: "s".into(),
            sessions: sessions
                .iter()
                .map(|id| SessionStatus {
                    hosted: true,
                    ..SessionStatus::registered(id, "c", 0)
                })
                .collect(),
            failures: vec![],
            linger_secs: 0,
            idle_stop_secs: 0,
        }
    }

    #[test]
    fn an_ended_session_is_followed_until_it_left_and_the_last_until_the_domain_is_gone() {
        let both = status(&["a", "b"]);
        assert_eq!(progress(Some(&both), true, "a"), Progress::Listed);
        assert_eq!(progress(Some(&status(&["b"])), true, "a"), Progress::Left);
        // The last session left: the teardown runs until the coordinator exits; it removes
        // the status file first.
        assert_eq!(
            progress(Some(&status(&[])), true, "a"),
            Progress::TearingDown
        );
        assert_eq!(progress(None, true, "a"), Progress::TearingDown);
        assert_eq!(progress(None, false, "a"), Progress::DomainGone);
        assert_eq!(progress(Some(&both), false, "a"), Progress::DomainGone);
        // A Domain that lingers keeps its status (no session) until its time is up.
        let mut lingering = status(&[]);
        lingering.linger_secs = 30;
        assert_eq!(
            progress(Some(&lingering), true, "a"),
            Progress::Lingering(30)
        );
    }
}
