//! The Domain's failures as a `lazaret run` on a terminal follows them while its command runs
//! (issue #19): the coordinator's status file, read again whenever it is replaced — inotify on
//! the runtime dir wakes the reader, with a look every [`SAFETY_LOOK`] besides (no timer of a
//! second per run: an idle Domain costs nothing, issue #18).

use crate::wake::WakeFlag;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Duration;

/// The look made without an inotify event (and the only one where inotify is missing).
pub const SAFETY_LOOK: Duration = Duration::from_secs(5);

/// Calls `failures` with the Domain's failure list each time it changes (first with the list
/// as it is now), until `stop` is set.
pub fn watch(status: &Path, stop: &WakeFlag, failures: &dyn Fn(Vec<String>)) {
    let name = status.file_name().map(|n| n.to_os_string());
    let inotify = status.parent().and_then(|dir| {
        let i = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
        let mask =
            AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_CLOSE_WRITE | AddWatchFlags::IN_ONLYDIR;
        i.add_watch(dir, mask).ok().map(|_| i)
    });
    let mut last: Option<Vec<String>> = None;
    let mut look = true;
    while !stop.is_set() {
        if look {
            let now = super::status::DomainStatus::read(status)
                .map(|s| s.failures)
                .unwrap_or_default();
            if last.as_ref() != Some(&now) {
                failures(now.clone());
                last = Some(now);
            }
        }
        stop.wait_with(inotify.as_ref().map(AsFd::as_fd), SAFETY_LOOK);
        look = match &inotify {
            // Woken by the stop, an event, or the safety look's time: an event of another
            // file in the runtime dir (the socket, locks) is no reason to read.
            Some(i) => match i.read_events() {
                Ok(events) => events.iter().any(|e| e.name == name),
                Err(_) => true,
            },
            None => true,
        };
    }
    // Closing an inotify instance waits for an SRCU grace period (10–20 ms): not on the
    // session's way out.
    if let Some(i) = inotify {
        let _ = std::thread::Builder::new()
            .name("inotify-close".into())
            .spawn(move || drop(i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::status::DomainStatus;
    use std::sync::mpsc;
    use std::sync::Arc;
    use std::time::Instant;

    fn status_with(failures: &[&str]) -> anyhow::Result<DomainStatus> {
        let mut s: DomainStatus = serde_json::from_value(serde_json::json!({
            "domain_id": "0123456789abcdef",
            "profile": "shell",
            "workspace": "/w",
            "coordinator_pid": 1,
            "coordinator_id": "c",
            "sandbox": "s",
            "sessions": [],
        }))?;
        s.failures = failures.iter().map(|f| f.to_string()).collect();
        Ok(s)
    }

    #[test]
    fn a_new_failure_is_seen_at_once_and_the_watch_stops_when_told() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let path = t.path().join("status.json");
        super::super::status::write(&status_with(&[])?, &path)?;
        let stop = Arc::new(WakeFlag::new());
        let (tx, rx) = mpsc::channel();
        let watcher = {
            let (path, stop) = (path.clone(), stop.clone());
            std::thread::spawn(move || {
                watch(&path, &stop, &|f| {
                    let _ = tx.send(f);
                })
            })
        };
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5))?,
            Vec::<String>::new()
        );
        // Another file in the dir: no new list.
        std::fs::write(t.path().join("other"), b"x")?;
        let written = Instant::now();
        super::super::status::write(&status_with(&["the Network Sidecar exited"])?, &path)?;
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5))?,
            vec!["the Network Sidecar exited".to_owned()]
        );
        assert!(
            written.elapsed() < SAFETY_LOOK / 2,
            "seen after {:?}: not woken by the write",
            written.elapsed()
        );
        // The same list written again is no news.
        super::super::status::write(&status_with(&["the Network Sidecar exited"])?, &path)?;
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        let told = Instant::now();
        stop.set();
        watcher
            .join()
            .map_err(|_| anyhow::anyhow!("the watch panicked"))?;
        assert!(told.elapsed() < Duration::from_secs(1));
        Ok(())
    }
}
