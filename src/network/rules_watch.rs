//! The sidecar's wake-up when the host writes the run's rules (issue #18: an idle Domain costs
//! nothing). The rules file arrives in the sidecar's bind-mounted state dir by a rename on the
//! host, which inotify inside the container sees (same inode, same kernel): the sidecar then
//! reads it at once instead of looking every 500 ms. Only events naming the rules file wake
//! it (the sidecar's own reports in the same dir do not).

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use std::path::Path;

/// Calls `wake` (on a thread of its own) whenever a file named `name` is written or renamed
/// into `dir`; false when inotify is not available (the caller then keeps looking itself).
pub fn start(dir: &Path, name: &str, wake: impl Fn() + Send + 'static) -> bool {
    let inotify = Inotify::init(InitFlags::IN_CLOEXEC).and_then(|i| {
        let mask =
            AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_CLOSE_WRITE | AddWatchFlags::IN_ONLYDIR;
        i.add_watch(dir, mask).map(|_| i)
    });
    let Ok(inotify) = inotify else {
        return false;
    };
    let name = std::ffi::OsString::from(name);
    std::thread::Builder::new()
        .name("rules-watch".into())
        .spawn(move || {
            while let Ok(events) = inotify.read_events() {
                if events
                    .iter()
                    .any(|e| e.name.as_deref() == Some(name.as_os_str()))
                {
                    wake();
                }
            }
        })
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn only_the_named_file_wakes() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let (tx, rx) = mpsc::channel();
        assert!(start(t.path(), "rules.json", move || {
            let _ = tx.send(());
        }));
        std::fs::write(t.path().join("ledger"), b"x")?;
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
        std::fs::write(t.path().join(".rules.tmp"), b"{}")?;
        std::fs::rename(t.path().join(".rules.tmp"), t.path().join("rules.json"))?;
        assert!(rx.recv_timeout(Duration::from_secs(5)).is_ok());
        Ok(())
    }
}
