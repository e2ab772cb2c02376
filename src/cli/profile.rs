//! `lazaret profile`: list the Agent Profiles and show one resolved.

use crate::config::HostConfig;
use crate::domain::layout::Layout;
use crate::profile::AgentProfile;
use clap::{Args, Subcommand};
use std::fmt::Write;

/// List the Agent Profiles, or show one as Lazaret will use it
///
/// Agent Profiles are the built-in ones (shell, claude, codex) plus those of the host
/// configuration file, $XDG_CONFIG_HOME/lazaret/config.toml (see `lazaret config --help`).
///
/// Examples:
///   lazaret profile list              NAME, SOURCE, IMAGE, DESCRIPTION; * marks the default
///   lazaret profile show claude       every setting of the claude profile, resolved
///   lazaret profile show --json       the default profile as JSON (with its fingerprint)
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ProfileArgs {
    #[command(subcommand)]
    pub command: ProfileCommand,
}

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    List(ListArgs),
    Show(ShowArgs),
}

/// List the Agent Profiles (* marks the default)
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array of {name, source, image, description, default}.
    #[arg(long)]
    pub json: bool,
}

/// Show one Agent Profile with every setting resolved (defaults, `extends`, `~`)
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Profile to show (default: the default profile).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Print the profile as JSON, with its "source" and Configuration "fingerprint".
    #[arg(long)]
    pub json: bool,
}

pub fn execute(layout: &Layout, args: ProfileArgs) -> anyhow::Result<i32> {
    let cfg = HostConfig::load(layout)?;
    match args.command {
        ProfileCommand::List(a) => list(&cfg, &a),
        ProfileCommand::Show(a) => show(&cfg, &a),
    }
}

fn list(cfg: &HostConfig, args: &ListArgs) -> anyhow::Result<i32> {
    if args.json {
        let rows: Vec<serde_json::Value> = cfg
            .profiles
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name,
                    "source": cfg.source_of(&p.name),
                    "image": p.image,
                    "description": p.description,
                    "default": p.name == cfg.default_profile,
                })
            })
            .collect();
        crate::say_out!("{}", crate::cli::safe_json::to_string(&rows)?);
        return Ok(0);
    }
    let rows: Vec<[String; 4]> = cfg
        .profiles
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                cfg.source_of(&p.name).to_string(),
                p.image.clone(),
                p.description.clone(),
            ]
        })
        .collect();
    let header = ["NAME", "SOURCE", "IMAGE", "DESCRIPTION"].map(str::to_owned);
    let width = |i: usize| {
        rows.iter()
            .chain(std::iter::once(&header))
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2) = (width(0), width(1), width(2));
    crate::say_out!(
        "  {:w0$}  {:w1$}  {:w2$}  {}",
        header[0],
        header[1],
        header[2],
        header[3]
    );
    for (p, r) in cfg.profiles.iter().zip(&rows) {
        let mark = if p.name == cfg.default_profile {
            '*'
        } else {
            ' '
        };
        let line = format!("{mark} {:w0$}  {:w1$}  {:w2$}  {}", r[0], r[1], r[2], r[3]);
        crate::say_out!("{}", line.trim_end());
    }
    Ok(0)
}

fn show(cfg: &HostConfig, args: &ShowArgs) -> anyhow::Result<i32> {
    let p = cfg.profile(args.name.as_deref())?;
    if args.json {
        let mut v = serde_json::to_value(&p)?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                "source".into(),
                serde_json::to_value(cfg.source_of(&p.name))?,
            );
            obj.insert("fingerprint".into(), p.fingerprint().into());
            // The effective value, also when unset (the fingerprint's form leaves it out then).
            obj.insert("trust_host_cas".into(), p.trust_host_cas().into());
        }
        crate::say_out!("{}", crate::cli::safe_json::to_string(&v)?);
        return Ok(0);
    }
    crate::say_out_inline!("{}", render(cfg, &p));
    Ok(0)
}

/// `arg` as a POSIX shell word (quoted only when it needs to be).
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./-_".contains(&b));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

fn argv_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_word(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The human form: one field per line, lists indented below their field.
fn render(cfg: &HostConfig, p: &AgentProfile) -> String {
    let mut s = String::new();
    let field = |s: &mut String, k: &str, v: &str| {
        let line = format!("{:<18}{v}", format!("{k}:"));
        let _ = writeln!(s, "{}", line.trim_end());
    };
    let list = |s: &mut String, items: Vec<String>| {
        for i in items {
            let _ = writeln!(s, "  {i}");
        }
    };
    let none_or_empty = |empty: bool| if empty { "(none)" } else { "" };
    field(&mut s, "name", &p.name);
    field(&mut s, "source", &cfg.source_of(&p.name).to_string());
    let is_default = if p.name == cfg.default_profile {
        "yes"
    } else {
        "no"
    };
    field(&mut s, "default", is_default);
    field(&mut s, "description", &p.description);
    field(&mut s, "image", &p.image);
    field(&mut s, "command", &argv_line(&p.command));
    field(&mut s, "env", none_or_empty(p.env.is_empty()));
    list(
        &mut s,
        p.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
    );
    field(&mut s, "persistent", none_or_empty(p.persistent.is_empty()));
    list(
        &mut s,
        p.persistent
            .iter()
            .map(|x| x.display().to_string())
            .collect(),
    );
    field(&mut s, "volumes", none_or_empty(p.volumes.is_empty()));
    list(
        &mut s,
        p.volumes
            .iter()
            .map(|v| {
                let mode = if v.read_only {
                    "read-only"
                } else {
                    "read-write"
                };
                format!("{} -> {} ({mode})", v.host.display(), v.container.display())
            })
            .collect(),
    );
    field(&mut s, "network", "");
    let prefixes = |v: &[crate::runtime::network_policy::Ipv4Prefix]| {
        if v.is_empty() {
            "(none)".to_owned()
        } else {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    list(
        &mut s,
        vec![
            format!("allow: {}", prefixes(&p.network.allow)),
            format!("deny:  {}", prefixes(&p.network.deny)),
        ],
    );
    field(&mut s, "isolate_ignored", &p.isolate_ignored.to_string());
    field(&mut s, "trust_host_cas", &p.trust_host_cas().to_string());
    field(
        &mut s,
        "hide_editor_dirs",
        none_or_empty(p.hide_editor_dirs.is_empty()),
    );
    list(
        &mut s,
        p.hide_editor_dirs
            .iter()
            .map(|x| x.display().to_string())
            .collect(),
    );
    field(
        &mut s,
        "auto_approve",
        none_or_empty(p.auto_approve.is_empty()),
    );
    list(
        &mut s,
        p.auto_approve
            .iter()
            .map(|r| {
                let tail = if r.trailing_args {
                    " ... (any trailing arguments)"
                } else {
                    ""
                };
                format!("{}{tail}", argv_line(&r.argv))
            })
            .collect(),
    );
    match &p.setup {
        None => field(&mut s, "setup", "(none)"),
        Some(setup) => {
            field(&mut s, "setup", "");
            list(
                &mut s,
                vec![
                    format!("creates: {}", setup.creates.display()),
                    format!("command: {}", argv_line(&setup.command)),
                ],
            );
        }
    }
    field(
        &mut s,
        "terminal",
        &format!(
            "clipboard {}, notifications {}, hyperlinks {}, echo_queries {}",
            p.terminal.clipboard,
            p.terminal.notifications,
            p.terminal.hyperlinks,
            p.terminal.echo_queries
        ),
    );
    // Resource bounds (issue #19); `lazaret doctor` says how this host enforces each.
    let limits = crate::runtime::limits::describe(&p.limits);
    field(&mut s, "limits", limits.as_deref().unwrap_or("(none)"));
    field(&mut s, "fingerprint", &p.fingerprint());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("npm"), "npm");
        assert_eq!(shell_word("@openai/codex"), "@openai/codex");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
