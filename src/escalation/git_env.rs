//! The environment of every host command run for an escalation (SR-4, SR-7): git hardening
//! passed through the environment, which every child inherits — so git started by any wrapper
//! (`env`, `make`, `sh -c`, `xargs`…) is hardened as much as git asked for directly — and the
//! coordinator's own variables that would change what git or a shell executes scrubbed.
//!
//! What host git then reads as configuration: the developer's global configuration
//! (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`), the protected repository's configuration
//! (which the sandbox never sees: it has a private git directory, issue #30), and the settings
//! below, which override both. Not the system configuration (`GIT_CONFIG_NOSYSTEM`), not the
//! coordinator's `GIT_*` variables, and not any repository the sandbox made: `GIT_DIR` pins the
//! host repository, so no discovery happens from the working directory, and there is **no work
//! tree** (`GIT_IMPLICIT_WORK_TREE=0`): git reads nothing of the worktree the sandbox writes —
//! no submodule, attribute or nested repository — and commands that need one (`status`,
//! `pull`, `rebase --continue`) fail with git's "this operation must be run in a work tree".
//! Escalated git is for what needs the developer's credentials or network: `push`, `fetch`,
//! `ls-remote`; the rest runs inside.

use std::ffi::OsString;
use std::path::Path;

/// Where `GIT_DIR` points when the workspace has no protected repository: a path below a file,
/// which git can neither open nor create, so every git the command starts fails.
pub const NO_REPOSITORY: &str = "/dev/null/lazaret-no-protected-repository";

/// Settings given to every git as command-line-level configuration (`GIT_CONFIG_COUNT`), above
/// every configuration file. None of them can make git execute something: they switch off what
/// would.
pub const SETTINGS: &[(&str, &str)] = &[
    // No repository hook, no fsmonitor command, no pager.
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    // Never enter submodules (whose Git directories the sandbox may have replaced).
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    // Transports: no `ext::` (runs a command), local paths only when asked for directly.
    ("protocol.allow", "never"),
    ("protocol.https.allow", "always"),
    ("protocol.http.allow", "always"),
    ("protocol.ssh.allow", "always"),
    ("protocol.git.allow", "always"),
    ("protocol.file.allow", "user"),
    ("protocol.ext.allow", "never"),
];

/// Variables of the coordinator's environment never passed on: every `GIT_*` (they could point
/// git at another repository or configuration), Lazaret's own, the dynamic loader's, and those
/// that make a shell run code or change directory.
pub fn scrubbed(name: &str) -> bool {
    name.starts_with("GIT_")
        || name.starts_with("LAZARET_")
        || name.starts_with("LD_")
        || matches!(
            name,
            "BASH_ENV" | "ENV" | "CDPATH" | "PWD" | "OLDPWD" | "SHELLOPTS" | "BASHOPTS" | "IFS"
        )
}

/// The whole environment of a host command: `inherited` (the coordinator's) without the
/// scrubbed variables, plus the hardening. `protected`: the Git directory and work tree git is
/// pinned to; `None` when the workspace has no protected repository.
pub fn environment(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    protected: Option<(&Path, &Path)>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(k, _)| !k.to_str().is_none_or(scrubbed))
        .collect();
    let mut set = |k: &str, v: OsString| env.push((k.into(), v));
    set("GIT_CONFIG_NOSYSTEM", "1".into());
    set("GIT_TERMINAL_PROMPT", "0".into());
    set("GIT_PAGER", "cat".into());
    match protected {
        Some((git_dir, _work_tree)) => {
            set("GIT_DIR", git_dir.into());
            set("GIT_IMPLICIT_WORK_TREE", "0".into());
        }
        None => set("GIT_DIR", NO_REPOSITORY.into()),
    }
    set("GIT_CONFIG_COUNT", SETTINGS.len().to_string().into());
    for (i, (k, v)) in SETTINGS.iter().enumerate() {
        set(&format!("GIT_CONFIG_KEY_{i}"), (*k).into());
        set(&format!("GIT_CONFIG_VALUE_{i}"), (*v).into());
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(env: &'a [(OsString, OsString)], k: &str) -> Vec<&'a OsString> {
        env.iter().filter(|(n, _)| n == k).map(|(_, v)| v).collect()
    }

    #[test]
    fn inherited_git_and_loader_variables_are_dropped_and_the_hardening_added() {
        let inherited = [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/dev"),
            ("GIT_DIR", "/elsewhere"),
            ("GIT_SSH_COMMAND", "evil"),
            ("GIT_CONFIG_PARAMETERS", "'core.pager'='evil'"),
            ("LD_PRELOAD", "/x.so"),
            ("BASH_ENV", "/x"),
            ("PWD", "/somewhere"),
            ("LAZARET_LOG", "debug"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = environment(inherited, Some((Path::new("/w/.git"), Path::new("/w"))));
        assert_eq!(get(&env, "PATH"), [&OsString::from("/usr/bin")]);
        assert_eq!(get(&env, "HOME").len(), 1);
        for gone in [
            "GIT_SSH_COMMAND",
            "GIT_CONFIG_PARAMETERS",
            "LD_PRELOAD",
            "BASH_ENV",
            "PWD",
            "LAZARET_LOG",
        ] {
            assert!(get(&env, gone).is_empty(), "{gone}");
        }
        assert_eq!(get(&env, "GIT_DIR"), [&OsString::from("/w/.git")]);
        assert!(get(&env, "GIT_WORK_TREE").is_empty());
        assert_eq!(get(&env, "GIT_IMPLICIT_WORK_TREE"), [&OsString::from("0")]);
        assert_eq!(get(&env, "GIT_CONFIG_NOSYSTEM"), [&OsString::from("1")]);
        let n = SETTINGS.len();
        assert_eq!(
            get(&env, "GIT_CONFIG_COUNT"),
            [&OsString::from(n.to_string())]
        );
        assert_eq!(
            get(&env, "GIT_CONFIG_KEY_0"),
            [&OsString::from("core.hooksPath")]
        );
        assert_eq!(
            get(&env, &format!("GIT_CONFIG_VALUE_{}", n - 1)),
            [&OsString::from("never")]
        );
        let none = environment(Vec::new(), None);
        assert_eq!(get(&none, "GIT_DIR"), [&OsString::from(NO_REPOSITORY)]);
        assert!(get(&none, "GIT_WORK_TREE").is_empty());
    }

    #[test]
    fn every_setting_is_one_git_accepts() {
        // Run the host's git with the hardening: `git config --get` through the environment
        // shows each value back (a malformed key would make git fail).
        let mut env = environment(std::env::vars_os(), None);
        env.retain(|(k, _)| k != "GIT_DIR");
        for (k, v) in SETTINGS {
            let out = std::process::Command::new("git")
                .args(["config", "--get", k])
                .env_clear()
                .envs(env.iter().map(|(a, b)| (a, b)))
                .env("HOME", "/nonexistent")
                .current_dir("/")
                .output();
            assert!(out.is_ok(), "git must be installed on the host: {out:?}");
            let Ok(out) = out else { return };
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), *v, "{k}");
        }
    }
}
