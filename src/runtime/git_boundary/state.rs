//! The boundary's host-private state, in `<Domain Root>/git-boundary/`: the base (the references
//! both sides last agreed on), the round lock, the stamp of the private directory's reference
//! directories (`stat` only) and an index follow still to do. Nothing here is read from the
//! private directory.

use super::refs::{self, Head, Oid, Refs};
use super::Boundary;
use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;

impl Boundary {
    /// Whether the host's references differ from what both sides last agreed on (the developer
    /// committed, fetched or switched since): then the sandbox must follow before a session
    /// runs git there.
    pub fn host_moved_since_base(&self) -> bool {
        let base = self.load_base();
        self.layout
            .repo
            .refs()
            .map_or(true, |h| h.refs != base.refs || h.head != base.head)
    }

    /// Whether the private directory's top or reference directories changed since the last
    /// round looked (their `stat`, against the stamp that round saved).
    pub fn changed_since_last_round(&self) -> bool {
        std::fs::read_to_string(self.state.join("stamp")).map_or(true, |s| s != self.stamp())
    }

    /// Whether the private directory has never been made a repository (`stat` of its `HEAD`).
    pub fn is_fresh(&self) -> bool {
        std::fs::symlink_metadata(self.private.join("HEAD")).is_err()
    }

    /// Identity and times of the private directory's top, its reference directories and the
    /// directories of the references both sides last agreed on (`refs/heads/feature`).
    pub(super) fn stamp(&self) -> String {
        use std::os::unix::fs::MetadataExt;
        let mut s = String::new();
        let fixed =
            ["", "refs", "refs/heads", "refs/tags", "packed-refs", "HEAD"].map(String::from);
        let dirs: std::collections::BTreeSet<String> = self
            .load_base()
            .refs
            .keys()
            .filter_map(|n| n.rsplit_once('/').map(|(d, _)| d.to_owned()))
            .take(super::watch::MAX_DIRS)
            .collect();
        for d in fixed.iter().chain(dirs.iter()) {
            match std::fs::symlink_metadata(self.private.join(d)) {
                Ok(m) => {
                    let _ = write!(
                        s,
                        "{} {} {}.{} {};",
                        d,
                        m.ino(),
                        m.mtime(),
                        m.mtime_nsec(),
                        m.size()
                    );
                }
                Err(_) => {
                    let _ = write!(s, "{d} -;");
                }
            }
        }
        s
    }

    pub(super) fn save_stamp(&self, stamp: &str) {
        let _ = std::fs::write(self.state.join("stamp"), stamp);
    }

    pub(super) fn save_pending_index(
        &self,
        before: Option<&Oid>,
        after: &Oid,
    ) -> Result<(), String> {
        let text = format!(
            "{} {}\n",
            before.map_or("-", |o| o.as_str()),
            after.as_str()
        );
        std::fs::write(self.state.join("index-pending"), text)
            .map_err(|e| format!("recording the host index's follow: {e}"))
    }

    /// Makes the host index follow `HEAD` as recorded by [`Self::save_pending_index`], when the
    /// host's `HEAD` (in `host_refs`) still resolves to that commit; drops the record when done
    /// or outdated.
    pub(super) fn follow_pending_index(
        &self,
        host_refs: &Refs,
        msgs: &mut Vec<String>,
    ) -> Result<(), String> {
        let path = self.state.join("index-pending");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(());
        };
        let mut words = text.split_whitespace();
        let before = words.next().and_then(Oid::parse);
        let after = words.next().and_then(Oid::parse);
        if let Some(after) = after.filter(|a| host_refs.head_commit() == Some(a)) {
            if !self.layout.repo.follow_index(before.as_ref(), &after)? {
                msgs.push(
                    "git boundary: what you had staged conflicted with the agent's commit: your \
                     index now matches the commit (your files are unchanged; `git status` shows \
                     what differs)"
                        .into(),
                );
            }
        }
        let _ = std::fs::remove_file(&path);
        Ok(())
    }

    pub(super) fn lock(&self) -> Result<nix::fcntl::Flock<std::fs::File>, String> {
        crate::domain::layout::ensure_private_dir(&self.state).map_err(|e| format!("{e:#}"))?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(self.state.join("lock"))
            .map_err(|e| format!("the git boundary's lock: {e}"))?;
        nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| format!("the git boundary's lock: {e}"))
    }

    pub(super) fn load_base(&self) -> Refs {
        std::fs::read(self.state.join("base"))
            .ok()
            .and_then(|b| refs::parse_listing(&b).ok())
            .unwrap_or_default()
    }

    pub(super) fn save_base(&self, base: &Refs) -> Result<(), String> {
        let mut text = String::new();
        for (n, o) in &base.refs {
            let _ = writeln!(text, "{} {n}", o.as_str());
        }
        match &base.head {
            Some(Head::Branch(b)) => {
                let _ = writeln!(text, "HEAD {b}");
            }
            Some(Head::Detached(o)) => {
                let _ = writeln!(text, "HEAD {}", o.as_str());
            }
            None => text.push_str("HEAD\n"),
        }
        let path = self.state.join("base");
        let tmp = self.state.join("base.tmp");
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .and_then(|mut f| {
                f.write_all(text.as_bytes())?;
                f.sync_all()
            })
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("saving the git boundary's base: {e}"))
    }
}
