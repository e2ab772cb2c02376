//! Mounts of the Agent Sandbox beyond its image: the Agent Workspace, Git Sentry protections,
//! Ignored Workspace State, State Anchors, configured volumes. One type, so the sandbox's
//! `podman create` arguments and the tests that check `/proc/self/mountinfo` agree.

use std::path::{Path, PathBuf};

/// What is mounted at a container path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MountKind {
    /// A host path (file or directory) bound in.
    Bind { host: PathBuf, read_only: bool },
    /// Sandbox-local transient storage: a tmpfs inside gVisor, gone with the sandbox.
    Tmpfs,
}

/// One mount of the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxMount {
    /// Absolute container path.
    pub container: PathBuf,
    pub kind: MountKind,
    /// Why it is there, for logs and `--verbose` output (e.g. "Git Sentry: .git/config read-only").
    pub why: String,
}

impl SandboxMount {
    pub fn bind(host: &Path, container: &Path, read_only: bool, why: &str) -> SandboxMount {
        SandboxMount {
            container: container.to_path_buf(),
            kind: MountKind::Bind {
                host: host.to_path_buf(),
                read_only,
            },
            why: why.to_owned(),
        }
    }

    pub fn tmpfs(container: &Path, why: &str) -> SandboxMount {
        SandboxMount {
            container: container.to_path_buf(),
            kind: MountKind::Tmpfs,
            why: why.to_owned(),
        }
    }

    /// `podman create` arguments for this mount. Paths holding a comma cannot be expressed in
    /// `--mount` syntax and are refused with a message naming them.
    pub fn podman_args(&self) -> anyhow::Result<Vec<String>> {
        let dst = checked(&self.container)?;
        Ok(match &self.kind {
            MountKind::Bind { host, read_only } => {
                let src = checked(host)?;
                let ro = if *read_only { ",ro=true" } else { "" };
                vec![
                    "--mount".into(),
                    format!("type=bind,src={src},dst={dst}{ro}"),
                ]
            }
            MountKind::Tmpfs => vec![
                "--mount".into(),
                format!("type=tmpfs,dst={dst},tmpfs-mode=0755"),
            ],
        })
    }
}

fn checked(p: &Path) -> anyhow::Result<String> {
    let s = p.to_str().ok_or_else(|| {
        anyhow::anyhow!(
            "path {} is not valid UTF-8: it cannot be mounted into the sandbox",
            p.display()
        )
    })?;
    if s.contains(',') || s.contains('\n') {
        anyhow::bail!(
            "path {s:?} contains a comma or newline, which podman's mount syntax cannot carry: \
             rename it to use it with Lazaret"
        );
    }
    Ok(s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_and_tmpfs_args() -> anyhow::Result<()> {
        let b = SandboxMount::bind(Path::new("/h/x"), Path::new("/workspace/x"), true, "t");
        assert_eq!(
            b.podman_args()?[1],
            "type=bind,src=/h/x,dst=/workspace/x,ro=true"
        );
        let t = SandboxMount::tmpfs(Path::new("/workspace/.git/hooks"), "t");
        assert_eq!(
            t.podman_args()?[1],
            "type=tmpfs,dst=/workspace/.git/hooks,tmpfs-mode=0755"
        );
        Ok(())
    }

    #[test]
    fn comma_is_refused_by_name() {
        let b = SandboxMount::bind(Path::new("/h/a,b"), Path::new("/w"), false, "t");
        let err = b
            .podman_args()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("a,b"), "{err}");
    }
}
