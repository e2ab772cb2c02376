//! The Escalation Mailbox on the host (spec §3.6, SR-7): host-private, Domain-scoped dirs in
//! the coordinator's runtime dir; `req/` is bound read-write into the sandbox, `res/` read-only.
//! The mailbox is not an authentication boundary: records are read once through a descriptor
//! opened without following symlinks, regular files only, size-capped, then removed; what they
//! say is trusted only after the signature checks out.

use crate::domain::layout::ensure_private_dir;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Where the sandbox sees the mailbox and the Escalation Client.
pub const SANDBOX_MAILBOX: &str = "/run/lazaret/mailbox";
pub const SANDBOX_CLIENT: &str = "/run/lazaret/bin/lazaret-escalate";

/// `PATH` of commands run in the sandbox: the usual one, then the Escalation Client's dir.
pub const SANDBOX_PATH: &str =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/run/lazaret/bin";

/// What a session's command needs to ask for Host Escalation: its Domain and session, and the
/// session's signing secret (given to this session's processes only).
pub fn session_env(
    domain: &lazaret_protocol::DomainId,
    session: &lazaret_protocol::SessionId,
    anchor: &lazaret_protocol::SessionAnchor,
) -> Vec<(String, String)> {
    vec![
        ("PATH".to_owned(), SANDBOX_PATH.to_owned()),
        ("LAZARET_DOMAIN".to_owned(), domain.as_str().to_owned()),
        ("LAZARET_SESSION".to_owned(), session.as_str().to_owned()),
        (
            "LAZARET_SESSION_ANCHOR".to_owned(),
            String::from(anchor.clone()),
        ),
        ("LAZARET_MAILBOX".to_owned(), SANDBOX_MAILBOX.to_owned()),
    ]
}

#[derive(Clone, Debug)]
pub struct Mailbox {
    pub req: PathBuf,
    pub res: PathBuf,
}

impl Mailbox {
    /// The Domain's mailbox under its runtime dir (as [`Mailbox::prepare`] made it).
    pub fn at(runtime_dir: &Path) -> Mailbox {
        let root = runtime_dir.join("mailbox");
        Mailbox {
            req: root.join("req"),
            res: root.join("res"),
        }
    }

    /// The Domain's mailbox under its runtime dir, created host-private and empty of old records.
    pub fn prepare(runtime_dir: &Path) -> anyhow::Result<Mailbox> {
        let root = runtime_dir.join("mailbox");
        let mb = Mailbox::at(runtime_dir);
        for d in [&root, &mb.req, &mb.res] {
            ensure_private_dir(d)?;
        }
        for d in [&mb.req, &mb.res] {
            for e in std::fs::read_dir(d)?.flatten() {
                let _ = std::fs::remove_file(e.path());
            }
        }
        Ok(mb)
    }

    /// Names of request records waiting (temporary files of the client excluded).
    pub fn pending(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.req) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.starts_with('.'))
            .collect()
    }

    /// Reads the record `name` once and removes it: a regular file, not a symlink, at most
    /// `max` bytes. Whatever it is, it is gone afterwards.
    pub fn take(&self, name: &str, max: usize) -> Result<Vec<u8>, String> {
        let path = self.req.join(name);
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path);
        let result = match opened {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err("a symlink".to_owned()),
            Err(e) => Err(format!("cannot open: {e}")),
            Ok(mut f) => match f.metadata() {
                Ok(m) if !m.is_file() => Err("not a regular file".to_owned()),
                Ok(m) if m.size() > max as u64 => Err(format!("{} bytes, over {max}", m.size())),
                Ok(_) => {
                    let mut bytes = Vec::new();
                    match f.by_ref().take(max as u64 + 1).read_to_end(&mut bytes) {
                        Ok(_) if bytes.len() > max => Err(format!("over {max} bytes")),
                        Ok(_) => Ok(bytes),
                        Err(e) => Err(format!("cannot read: {e}")),
                    }
                }
                Err(e) => Err(format!("cannot inspect: {e}")),
            },
        };
        // Directories planted here are removed too (empty or not, they are the sandbox's).
        if std::fs::remove_file(&path).is_err() {
            let _ = std::fs::remove_dir_all(&path);
        }
        result
    }

    /// Delivers a result by atomic rename.
    pub fn deliver(&self, request_id: &str, bytes: &[u8]) -> std::io::Result<()> {
        let tmp = self.res.join(format!(".{request_id}.tmp"));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, self.res.join(format!("{request_id}.json")))
    }

    /// Removes results older than `age` (their clients have read them or given up).
    pub fn forget_old_results(&self, age: std::time::Duration) {
        for e in std::fs::read_dir(&self.res).into_iter().flatten().flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|d| d > age);
            if old {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_read_once_and_hostile_ones_refused() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let mb = Mailbox::prepare(t.path())?;
        std::fs::write(mb.req.join("a.json"), b"{}")?;
        std::fs::write(mb.req.join(".tmp"), b"x")?;
        std::os::unix::fs::symlink("/etc/passwd", mb.req.join("b.json"))?;
        std::fs::write(mb.req.join("c.json"), vec![b'x'; 100])?;
        std::fs::create_dir(mb.req.join("d.json"))?;
        let mut names = mb.pending();
        names.sort();
        assert_eq!(names, ["a.json", "b.json", "c.json", "d.json"]);
        assert_eq!(mb.take("a.json", 10), Ok(b"{}".to_vec()));
        assert_eq!(mb.take("b.json", 10), Err("a symlink".to_owned()));
        assert!(mb.take("c.json", 10).is_err_and(|e| e.contains("over 10")));
        assert_eq!(mb.take("d.json", 10), Err("not a regular file".to_owned()));
        assert!(mb.pending().is_empty());
        assert!(std::fs::metadata("/etc/passwd").is_ok());
        mb.deliver("r1", b"done")?;
        assert_eq!(std::fs::read(mb.res.join("r1.json"))?, b"done");
        Ok(())
    }
}
