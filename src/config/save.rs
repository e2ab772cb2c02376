//! `lazaret net allow --save`: the destination goes into the profile's `[network]` table of the
//! host configuration file — only on this explicit flag, with the changed lines shown, the
//! file's comments kept, and the result validated as the configuration before it is written.

use crate::config::edit::{allow_in_profile, ProfileEdit};
use crate::config::host_paths::HostPaths;
use crate::config::{trust, HostConfig};
use crate::domain::layout::Layout;
use crate::network::run_rules::Target;
use crate::network::NamePattern;
use crate::profile::AgentProfile;
use anyhow::{bail, Context};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A validated change of the configuration file, not yet written.
pub struct Prepared {
    pub path: PathBuf,
    pub shown: String,
    pub edit: ProfileEdit,
}

/// The change that adds `target` to `profile`; None when the profile allows it already.
pub fn prepare(
    layout: &Layout,
    config: &HostConfig,
    profile: &AgentProfile,
    target: &Target,
) -> anyhow::Result<Option<Prepared>> {
    let host = HostPaths::from_layout(layout);
    let path = config.path.clone();
    let shown = host.show(&path);
    let text = trust::read_trusted(&path, &shown)?.unwrap_or_default();
    let in_file = config.from_file.contains(&profile.name);
    let Some(edit) = allow_in_profile(&text, profile, in_file, target)
        .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?
    else {
        return Ok(None);
    };
    let after = HostConfig::from_text(&edit.text, &path, &host)
        .context("the changed configuration would not be valid; nothing was written")?;
    let p = after.profile(Some(&profile.name))?;
    let holds = match target {
        Target::Address(a) => p
            .network
            .allow
            .iter()
            .any(|x| x.to_string() == format!("{a}/32")),
        Target::Name(n) => p
            .network
            .allow_names
            .iter()
            .any(|s| NamePattern::parse(s).is_ok_and(|x| x == *n)),
        Target::Port(..) | Target::NamePort(..) => false,
    };
    if !holds {
        bail!(
            "{shown}: the change did not make profile {} allow {target}; nothing was written",
            profile.name
        );
    }
    Ok(Some(Prepared { path, shown, edit }))
}

/// Writes the change: atomically, with the file's mode (0600 for a new file), through a
/// symlink to where it points (a dotfiles checkout stays one).
pub fn write(p: &Prepared) -> anyhow::Result<()> {
    let real = std::fs::canonicalize(&p.path).unwrap_or_else(|_| p.path.clone());
    let dir = real.parent().unwrap_or(Path::new("/"));
    if !dir.exists() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let mode = std::fs::metadata(&real).map_or(0o600, |m| m.permissions().mode() & 0o7777);
    let name = real
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("config.toml");
    let tmp = dir.join(format!(".{name}.lazaret-tmp"));
    std::fs::write(&tmp, &p.edit.text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode))?;
    std::fs::rename(&tmp, &real).with_context(|| format!("writing {}", p.shown))
}
