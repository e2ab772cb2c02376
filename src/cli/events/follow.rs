//! `lazaret events --follow`: the running Domains are looked for twice a second (as
//! `lazaret ps` finds them); each one's coordinator is watched by a task; the events are
//! printed until stdout's reader is gone.

use super::model::DomainWatch;
use super::show::DomainRef;
use super::watch::{self, Heard};
use super::Printer;
use crate::coordinator::status::now_unix_ms;
use lazaret_client::locate;
use lazaret_protocol::messages::CoordinatorMessage;
use lazaret_protocol::status::DomainStatus;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;

/// How often the running Domains are looked for (and idleness computed).
const POLL: Duration = Duration::from_millis(500);

/// How long a Domain whose status file is gone is still listened to, for what its coordinator
/// says last (a session's exit) before its connection closes.
const LAST_WORDS_MS: u64 = 5_000;

struct Followed {
    domain: DomainRef,
    status_file: PathBuf,
    address: lazaret_client::connection::DomainAddress,
    watch: DomainWatch,
    task: Option<tokio::task::JoinHandle<()>>,
    /// Its task has not said `Gone` yet: it may still tell something.
    listening: bool,
    /// When its status file was first missing.
    missing_since: Option<u64>,
}

impl Drop for Followed {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// Follows every running Domain until stdout's reader is gone.
pub async fn run(root: &Path, printer: &Printer) -> anyhow::Result<i32> {
    let (tx, mut rx) = mpsc::unbounded_channel::<(String, Heard)>();
    // By coordinator ID: a Domain started again is another one.
    let mut followed: BTreeMap<String, Followed> = BTreeMap::new();
    loop {
        // What the coordinators said before looking again (a last word before a Domain's
        // connection closed).
        while let Ok((key, heard)) = rx.try_recv() {
            if !hear(&mut followed, &key, heard, printer)? {
                return Ok(0);
            }
        }
        if !poll(root, &mut followed, &tx, printer)? || super::super::net::reader_gone() {
            return Ok(0);
        }
        let wait = tokio::time::sleep(POLL);
        tokio::pin!(wait);
        loop {
            tokio::select! {
                heard = rx.recv() => {
                    let Some((key, heard)) = heard else { break };
                    if !hear(&mut followed, &key, heard, printer)? {
                        return Ok(0);
                    }
                }
                _ = &mut wait => break,
            }
        }
    }
}

/// Looks for Domains: new ones start, gone ones stop, the others' status is compared.
fn poll(
    root: &Path,
    followed: &mut BTreeMap<String, Followed>,
    tx: &mpsc::UnboundedSender<(String, Heard)>,
    printer: &Printer,
) -> anyhow::Result<bool> {
    let now = now_unix_ms();
    let running = locate::domains(root)?;
    // Those gone first: a Domain started again (another coordinator) comes after.
    let mut stopped = Vec::new();
    for (key, f) in followed.iter_mut() {
        let mut events = Vec::new();
        if !running.iter().any(|d| &d.status.coordinator_id == key) {
            let since = *f.missing_since.get_or_insert(now);
            if !f.listening || now.saturating_sub(since) >= LAST_WORDS_MS {
                events.extend(f.watch.stopped());
                stopped.push(key.clone());
            }
        } else {
            events.extend(f.watch.tick(now));
        }
        if !printer.print(&f.domain, &events)? {
            return Ok(false);
        }
    }
    for key in stopped {
        followed.remove(&key);
    }
    for d in &running {
        let key = d.status.coordinator_id.clone();
        let events = match followed.get_mut(&key) {
            Some(f) => {
                f.missing_since = None;
                if !f.listening {
                    f.task = Some(watch::spawn(f.address.clone(), key.clone(), tx.clone()));
                    f.listening = true;
                }
                f.watch.status(&d.status, now)
            }
            None => {
                let (watch, events) = DomainWatch::start(&d.status, now);
                let task = watch::spawn(d.address.clone(), key.clone(), tx.clone());
                followed.insert(
                    key.clone(),
                    Followed {
                        domain: DomainRef::of(&d.status),
                        status_file: d.address.socket.with_file_name("status.json"),
                        address: d.address.clone(),
                        watch,
                        task: Some(task),
                        listening: true,
                        missing_since: None,
                    },
                );
                events
            }
        };
        if let Some(f) = followed.get(&key) {
            if !printer.print(&f.domain, &events)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// What a Domain's coordinator said; false when stdout's reader is gone.
fn hear(
    followed: &mut BTreeMap<String, Followed>,
    key: &str,
    heard: Heard,
    printer: &Printer,
) -> anyhow::Result<bool> {
    let Some(f) = followed.get_mut(key) else {
        return Ok(true);
    };
    let now = now_unix_ms();
    let mut events = Vec::new();
    let message = match heard {
        Heard::Message(m) => *m,
        Heard::Gone(why) => {
            f.listening = false;
            tracing::debug!(domain = %f.domain.domain_id, "events: connection ended: {why}");
            return Ok(true);
        }
    };
    match message {
        CoordinatorMessage::SessionActivity {
            session_id,
            activity,
        } => {
            events.extend(f.watch.activity(session_id.as_str(), activity, now));
            if f.watch.wants_status() {
                // A session the status file did not list yet: it is there by now.
                if let Some(status) = DomainStatus::read(&f.status_file) {
                    events.extend(f.watch.status(&status, now));
                }
            }
        }
        CoordinatorMessage::SessionExited {
            session_id,
            status,
            reason,
            ..
        } => events.extend(f.watch.exited(session_id.as_str(), status, &reason)),
        CoordinatorMessage::EscalationPrompt { prompt } => events.extend(f.watch.prompt(&prompt)),
        CoordinatorMessage::EscalationWithdrawn { request_id, reason } => {
            events.extend(f.watch.withdrawn(&request_id, &reason))
        }
        _ => {}
    }
    printer.print(&f.domain, &events)
}
