//! `lazaret config`: validate and locate the host configuration file.

use crate::config::{self, HostConfig};
use crate::domain::layout::Layout;
use clap::{Args, Subcommand};

/// Check and locate the host configuration file (Agent Profiles)
///
/// The host configuration is one TOML file, $XDG_CONFIG_HOME/lazaret/config.toml (usually
/// ~/.config/lazaret/config.toml). It defines Agent Profiles: the image an agent runs in, its
/// command and environment, the sandbox paths kept across restarts (State Anchors), extra host
/// directories to mount, network allow/deny prefixes and Host Escalation auto-approval rules.
/// Without the file, the built-in profiles shell (the default), claude and codex are used; a
/// profile of the same name in the file replaces a built-in one, and `extends = "NAME"` starts
/// from another profile. The file is trusted: it must be yours, not writable by group or
/// others, and outside every directory mounted into the sandbox.
///
/// Example:
///   default_profile = "py"
///
///   [profiles.py]
///   extends = "shell"                    # everything else as in the built-in shell
///   description = "Python work"
///   env = { HOME = "/root", PIP_CACHE_DIR = "/cache/pip" }
///
///   [[profiles.py.volumes]]
///   host = "~/.cache/pip"                # a host directory shared with the sandbox
///   container = "/cache/pip"             # not inside a persistent path such as /root
///
///   [profiles.py.network]
///   allow = ["10.1.2.0/24"]              # pierce the default private-range deny
///
///   [[profiles.py.auto_approve]]
///   argv = ["git", "fetch"]              # run on the host without asking
///
/// Every key is described in docs/config.md; `lazaret profile show NAME` prints a resolved
/// profile, and `lazaret profile show shell` is a good starting point.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    Check(CheckArgs),
    Path(PathArgs),
}

/// Validate the configuration file and report every problem with its line
///
/// Reads $XDG_CONFIG_HOME/lazaret/config.toml like `lazaret run` does and checks every rule:
/// unknown keys, profile names, paths, volumes, network prefixes, auto-approval rules, the
/// file's owner and mode. Each problem is printed as FILE:LINE:COLUMN: what is wrong and what
/// to do. A missing file is fine (built-in profiles only). Exit status: 0 when valid, 125
/// otherwise.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct CheckArgs {
    /// Print {"ok":true,"file":...,"profiles":[...],"default_profile":...} or
    /// {"ok":false,"error":"..."} instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Print where the configuration file is, or would be
///
/// Prints $XDG_CONFIG_HOME/lazaret/config.toml (or ~/.config/lazaret/config.toml), whether
/// or not the file exists. Create it there to add or change Agent Profiles.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct PathArgs {}

pub fn execute(layout: &Layout, args: ConfigArgs) -> anyhow::Result<i32> {
    match args.command {
        ConfigCommand::Check(a) => check(layout, &a),
        ConfigCommand::Path(_) => {
            crate::say_out!("{}", config::config_file(layout).display());
            Ok(0)
        }
    }
}

fn check(layout: &Layout, args: &CheckArgs) -> anyhow::Result<i32> {
    let cfg = match HostConfig::load(layout) {
        Ok(c) => c,
        Err(e) => {
            if args.json {
                let out = serde_json::json!({ "ok": false, "error": format!("{e:#}") });
                crate::say_out!("{}", crate::cli::safe_json::to_string(&out)?);
            }
            return Err(e);
        }
    };
    if args.json {
        let out = serde_json::json!({
            "ok": true,
            "file": cfg.source,
            "profiles": cfg.names(),
            "default_profile": cfg.default_profile,
        });
        crate::say_out!("{}", crate::cli::safe_json::to_string(&out)?);
        return Ok(0);
    }
    match &cfg.source {
        Some(file) => crate::say_out!(
            "configuration OK: {} ({} profiles, default {})",
            file.display(),
            cfg.profiles.len(),
            cfg.default_profile
        ),
        None => crate::say_out!(
            "no configuration file at {}: built-in profiles only",
            cfg.path.display()
        ),
    }
    Ok(0)
}
