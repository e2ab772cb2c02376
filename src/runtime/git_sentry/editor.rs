//! Editor configuration directories the profile asks to hide (`.vscode`, `.idea`…): host editors
//! may run what they configure, so the sandbox gets an empty tmpfs in their place.

use super::Planner;
use anyhow::bail;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

impl Planner {
    pub(super) fn hide_editor_dirs(&mut self, dirs: &[PathBuf]) -> anyhow::Result<()> {
        for rel in dirs {
            check_relative(rel)?;
            let host = self.ws.join(rel);
            match first_unusual(&self.ws, rel)? {
                None => {
                    self.out.mounts.push(super::SandboxMount::tmpfs(
                        &Path::new(crate::domain::workspace::SANDBOX_WORKSPACE).join(rel),
                        "Git Sentry: editor configuration hidden",
                    ));
                }
                Some(Unusual::Absent) => self.notes.push(format!(
                    "editor directory {} does not exist: as documented it is not created, so \
                     not hidden (what the sandbox writes there reaches the host)",
                    host.display()
                )),
                Some(Unusual::Symlink(at)) => self.notes.push(format!(
                    "editor directory {}: {} is a symlink, which Git Sentry does not follow, so \
                     it is not hidden",
                    host.display(),
                    at.display()
                )),
                Some(Unusual::NotDir(at)) => self.notes.push(format!(
                    "editor directory {}: {} is not a directory, so it is not hidden",
                    host.display(),
                    at.display()
                )),
            }
        }
        Ok(())
    }
}

enum Unusual {
    Absent,
    Symlink(PathBuf),
    NotDir(PathBuf),
}

/// The first component of `ws/rel` that is not a real directory, if any.
fn first_unusual(ws: &Path, rel: &Path) -> anyhow::Result<Option<Unusual>> {
    let mut at = ws.to_path_buf();
    for c in rel.components() {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Some(Unusual::Absent)),
            Err(e) => bail!("cannot inspect {}: {e}", at.display()),
            Ok(m) if m.file_type().is_symlink() => return Ok(Some(Unusual::Symlink(at))),
            Ok(m) if !m.is_dir() => return Ok(Some(Unusual::NotDir(at))),
            Ok(_) => {}
        }
    }
    Ok(None)
}

/// A workspace-relative path of plain names, not inside `.git` (hiding that would break git).
fn check_relative(rel: &Path) -> anyhow::Result<()> {
    let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain || rel.as_os_str().is_empty() {
        bail!(
            "hide_editor_dirs entry {:?} must be a path relative to the workspace, without `..`",
            rel
        );
    }
    if rel.components().next() == Some(Component::Normal(".git".as_ref())) {
        bail!(
            "hide_editor_dirs entry {:?} lies in .git: Git Sentry already protects what it must \
             there, and hiding more would break git",
            rel
        );
    }
    Ok(())
}
