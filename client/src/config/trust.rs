//! The configuration file is trusted input (it grants volumes, network and auto-approval), so
//! it is read only when it is a regular file of the current user that nobody else can write,
//! and only when it lies outside everything mounted into the sandbox (SR-2).

use super::paths::{canonical_best_effort, is_within, overlaps};
use anyhow::{bail, Context};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Largest configuration file read.
pub const MAX_SIZE: u64 = 1 << 20;

/// Reads `path` (reported as `shown`) if it exists. Refuses a non-regular file (after
/// following symlinks), a file owned by someone else or writable by group or others, one
/// larger than [`MAX_SIZE`], and text that is not UTF-8.
pub fn read_trusted(path: &Path, shown: &str) -> anyhow::Result<Option<String>> {
    // O_NONBLOCK: opening a FIFO must not hang; it is refused below like any non-regular file.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(path).is_ok() {
                bail!(
                    "{shown}: is a symlink to a missing file: remove the symlink or restore its \
                     target"
                );
            }
            return Ok(None);
        }
        Err(e) => return Err(e).with_context(|| format!("{shown}: cannot open")),
    };
    let meta = file
        .metadata()
        .with_context(|| format!("{shown}: cannot read its metadata"))?;
    if !meta.is_file() {
        bail!("{shown}: is not a regular file: the configuration must be a plain TOML file");
    }
    let uid = nix::unistd::getuid().as_raw();
    if meta.uid() != uid {
        bail!(
            "{shown}: is owned by uid {}, not by you (uid {uid}): the configuration is trusted, \
             so only you may own it (copy it to a file of your own, or chown it)",
            meta.uid()
        );
    }
    let mode = meta.permissions().mode();
    if mode & 0o022 != 0 {
        bail!(
            "{shown}: has mode {:o}, writable by others than you: the configuration is trusted, \
             so only you may write it (run: chmod go-w {})",
            mode & 0o7777,
            path.display()
        );
    }
    if meta.len() > MAX_SIZE {
        bail!(
            "{shown}: is {} bytes, more than the {MAX_SIZE} a configuration may have: is this \
             the right file?",
            meta.len()
        );
    }
    let mut bytes = Vec::new();
    file.take(MAX_SIZE + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{shown}: cannot read"))?;
    if bytes.len() as u64 > MAX_SIZE {
        bail!("{shown}: grew beyond {MAX_SIZE} bytes while being read");
    }
    match String::from_utf8(bytes) {
        Ok(s) => Ok(Some(s)),
        Err(e) => bail!(
            "{shown}: is not UTF-8 (invalid byte at offset {}): TOML files are UTF-8 text",
            e.utf8_error().valid_up_to()
        ),
    }
}

/// Refuses when the configuration directory or file (its symlink target included) is, or is
/// beneath, any of `mounted`, or when a mounted path lies inside the configuration directory.
/// Checked even when no file exists yet: a sandbox able to create one would configure itself.
pub fn check_outside(
    config_dir: &Path,
    config_file: &Path,
    mounted: &[&Path],
) -> anyhow::Result<()> {
    let dir = canonical_best_effort(config_dir);
    let file = canonical_best_effort(config_file);
    for m in mounted {
        let mc = canonical_best_effort(m);
        if is_within(&file, &mc) {
            let via = if file != config_file {
                format!(" (it resolves to {})", file.display())
            } else {
                String::new()
            };
            bail!(
                "the configuration file {}{via} is inside {}, which is mounted into the \
                 sandbox: the agent could rewrite its own permissions (SR-2). Move the file out \
                 of {} (e.g. to {}) or run Lazaret in another directory",
                config_file.display(),
                m.display(),
                m.display(),
                config_dir.join("config.toml").display()
            );
        }
        if overlaps(&dir, &mc) {
            bail!(
                "the configuration directory {} and {}, which is mounted into the sandbox, \
                 overlap: the agent could create or rewrite Lazaret's configuration (SR-2). Run \
                 Lazaret in a project directory outside {}, or move the configuration by setting \
                 XDG_CONFIG_HOME",
                config_dir.display(),
                m.display(),
                config_dir.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str, mode: u32) -> std::io::Result<()> {
        std::fs::write(path, text)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }

    fn err_of<T>(r: anyhow::Result<T>) -> String {
        r.err().map(|e| format!("{e:#}")).unwrap_or_default()
    }

    #[test]
    fn absent_file_is_none() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        assert_eq!(read_trusted(&t.path().join("config.toml"), "c")?, None);
        Ok(())
    }

    #[test]
    fn private_file_is_read() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let f = t.path().join("config.toml");
        write(&f, "x = 1\n", 0o644)?;
        assert_eq!(read_trusted(&f, "c")?.as_deref(), Some("x = 1\n"));
        Ok(())
    }

    #[test]
    fn writable_by_others_is_refused_with_chmod_hint() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let f = t.path().join("config.toml");
        write(&f, "", 0o664)?;
        assert!(err_of(read_trusted(&f, "c")).contains("chmod go-w"));
        write(&f, "", 0o646)?;
        assert!(err_of(read_trusted(&f, "c")).contains("chmod go-w"));
        Ok(())
    }

    #[test]
    fn a_file_of_another_user_is_refused() -> anyhow::Result<()> {
        // Only root can give a file away; as a normal user the rule is covered by the code path
        // being the same as for the mode check.
        if !nix::unistd::getuid().is_root() {
            return Ok(());
        }
        let t = tempfile::tempdir()?;
        let f = t.path().join("config.toml");
        write(&f, "", 0o600)?;
        std::os::unix::fs::chown(&f, Some(65534), None)?;
        assert!(err_of(read_trusted(&f, "c")).contains("owned by uid 65534"));
        Ok(())
    }

    #[test]
    fn non_regular_files_are_refused() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let d = t.path().join("config.toml");
        std::fs::create_dir(&d)?;
        assert!(err_of(read_trusted(&d, "c")).contains("not a regular file"));
        let fifo = t.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600))?;
        assert!(err_of(read_trusted(&fifo, "c")).contains("not a regular file"));
        let dangling = t.path().join("dangling");
        std::os::unix::fs::symlink(t.path().join("missing"), &dangling)?;
        assert!(err_of(read_trusted(&dangling, "c")).contains("missing file"));
        Ok(())
    }

    #[test]
    fn oversized_file_is_refused() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let f = t.path().join("config.toml");
        write(&f, &"#".repeat(MAX_SIZE as usize + 1), 0o600)?;
        assert!(err_of(read_trusted(&f, "c")).contains("more than"));
        Ok(())
    }

    #[test]
    fn symlinked_file_into_a_workspace_is_refused() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let ws = t.path().join("workspace");
        let cfg = t.path().join("config/lazaret");
        std::fs::create_dir_all(&ws)?;
        std::fs::create_dir_all(&cfg)?;
        write(&ws.join("evil.toml"), "", 0o600)?;
        let file = cfg.join("config.toml");
        std::os::unix::fs::symlink(ws.join("evil.toml"), &file)?;
        let err = err_of(check_outside(&cfg, &file, &[ws.as_path()]));
        assert!(err.contains("resolves to"), "{err}");
        assert!(err.contains(&ws.display().to_string()), "{err}");
        assert!(err.contains("Move the file"), "{err}");
        // The same file as a plain file is fine.
        std::fs::remove_file(&file)?;
        write(&file, "", 0o600)?;
        check_outside(&cfg, &file, &[ws.as_path()])?;
        Ok(())
    }

    #[test]
    fn config_dir_inside_or_containing_a_mount_is_refused() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let home = t.path();
        let cfg = home.join(".config/lazaret");
        let file = cfg.join("config.toml");
        // Workspace = home: the (even not yet existing) configuration would be in the sandbox.
        assert!(err_of(check_outside(&cfg, &file, &[home])).contains("inside"));
        let inner = cfg.join("sub");
        assert!(err_of(check_outside(&cfg, &file, &[inner.as_path()])).contains("overlap"));
        // A symlinked config dir pointing into a mounted path.
        let ws = home.join("ws");
        std::fs::create_dir_all(ws.join("cfg"))?;
        std::fs::create_dir_all(home.join("xdg"))?;
        let linked = home.join("xdg/lazaret");
        std::os::unix::fs::symlink(ws.join("cfg"), &linked)?;
        let err = err_of(check_outside(
            &linked,
            &linked.join("config.toml"),
            &[ws.as_path()],
        ));
        assert!(err.contains("SR-2"), "{err}");
        check_outside(&cfg, &file, &[ws.as_path()])?;
        Ok(())
    }
}
