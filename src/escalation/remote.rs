//! Where an escalated `git push` / `fetch` / `pull` / `ls-remote` goes (issue #30, item 6):
//! the remote's URL resolved by the host's git from the host's own configuration (the sandbox
//! cannot write it), shown on the card; refused when it is a repository inside the workspace
//! (a local transport runs that repository's hooks, which the sandbox writes), or when the
//! command names the program to run for the transport (`--upload-pack`, `--receive-pack`,
//! `--exec`: a local transport runs it on the host).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

/// The git subcommands that talk to a remote.
const REMOTE_COMMANDS: [&str; 4] = ["push", "fetch", "pull", "ls-remote"];

/// The subcommand of a git argv and the arguments after it (global options skipped).
fn subcommand(argv: &[String]) -> Option<(&str, &[String])> {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if matches!(a, "-C" | "-c" | "--namespace" | "--config-env") {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            return Some((a, &argv[i + 1..]));
        }
    }
    None
}

/// The remote named in `args` (the first operand), if any.
fn remote_operand(args: &[String]) -> Option<&str> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return args.get(i + 1).map(String::as_str);
        }
        // Options of these commands that take the next argument as their value.
        if matches!(
            a,
            "-o" | "--push-option" | "--repo" | "-j" | "--jobs" | "--depth"
        ) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            return Some(a);
        }
        i += 1;
    }
    None
}

/// What the card says of the destination (`Ok`), or why the command is refused (`Err`);
/// `None` for other commands. `git`: the resolved host git; `env`: the escalation's hardened
/// environment; `cwd`: the request's directory on the host.
pub fn destination(
    git: &Path,
    env: &[(OsString, OsString)],
    argv: &[String],
    workspace: &Path,
    cwd: &Path,
) -> Option<Result<String, String>> {
    let (sub, args) = subcommand(argv)?;
    if !REMOTE_COMMANDS.contains(&sub) {
        return None;
    }
    if let Some(opt) = args.iter().find(|a| {
        ["--upload-pack", "--receive-pack", "--exec"]
            .iter()
            .any(|o| a.starts_with(o))
    }) {
        return Some(Err(format!(
            "git's {} option names a program the transport runs (on the host, for a local \
             repository)",
            opt.split('=').next().unwrap_or(opt)
        )));
    }
    let remote = remote_operand(args);
    let mut c = Command::new(git);
    c.env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .args(["ls-remote", "--get-url"]);
    if let Some(r) = remote {
        c.arg("--").arg(r);
    }
    let url = match c.output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        _ => return Some(Err("the host's git cannot tell where this remote is".into())),
    };
    let shown = crate::runtime::git_boundary::printable(&url);
    if let Some(path) = local_path(&url, cwd) {
        let storage = crate::domain::layout::Layout::from_env()
            .ok()
            .map(|l| l.storage_root());
        if sandbox_writes(&path, workspace, storage.as_deref()) {
            return Some(Err(format!(
                "the remote {shown} is a repository inside the workspace or Lazaret's storage: a \
                 local transport runs its hooks and reads its configuration, which the sandbox \
                 writes"
            )));
        }
    }
    let verb = if sub == "push" {
        "pushes to"
    } else {
        "talks to"
    };
    Some(Ok(format!("git {sub} {verb} {shown}")))
}

/// Whether the local path `path` (as written, normalised, never resolved) lies where the sandbox
/// writes: the workspace, or Lazaret's storage (a Domain's private git directory, its Ignored
/// Workspace State). Judged on the path as written: a symlink the sandbox made in the workspace
/// is inside it whatever it points to now, and could point elsewhere by the time git opens it;
/// outside those two places every component is the developer's.
fn sandbox_writes(path: &Path, workspace: &Path, storage: Option<&Path>) -> bool {
    path.starts_with(workspace) || storage.is_some_and(|s| path.starts_with(s))
}

/// The host path a URL names when it is a local repository (a path or `file://`), resolved
/// against `cwd` and normalised without touching the file system.
fn local_path(url: &str, cwd: &Path) -> Option<PathBuf> {
    let path = if let Some(p) = url.strip_prefix("file://") {
        p.to_owned()
    } else if url.contains("://") {
        return None;
    } else if let Some(colon) = url.find(':') {
        // `host:path` (scp-like) unless a slash comes first.
        if url[..colon].contains('/') {
            url.to_owned()
        } else {
            return None;
        }
    } else {
        url.to_owned()
    };
    let mut out = PathBuf::new();
    for c in cwd.join(path).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_remote_operand_is_found_past_options() {
        let argv = v(&[
            "git", "-C", "x", "push", "-o", "ci.skip", "--force", "up", "HEAD",
        ]);
        let (sub, args) = subcommand(&argv).unwrap_or(("", &[]));
        assert_eq!(sub, "push");
        assert_eq!(remote_operand(args), Some("up"));
        assert_eq!(remote_operand(&v(&["--all"])), None);
    }

    #[test]
    fn a_path_is_judged_as_written_never_through_a_symlink() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (ws, store) = (t.path().join("ws"), t.path().join("store"));
        let _ = std::fs::create_dir_all(&ws);
        let _ = std::fs::create_dir_all(store.join("domains/x/git"));
        // A symlink the sandbox made, pointing out of the workspace (into a private git dir).
        let _ = std::os::unix::fs::symlink(store.join("domains/x/git"), ws.join("pd"));
        let p = local_path("./pd", &ws).unwrap_or_default();
        assert!(sandbox_writes(&p, &ws, Some(&store)));
        assert!(sandbox_writes(
            &store.join("domains/x/git"),
            &ws,
            Some(&store)
        ));
        assert!(!sandbox_writes(
            &t.path().join("elsewhere.git"),
            &ws,
            Some(&store)
        ));
    }

    #[test]
    fn local_paths_are_told_from_urls() {
        let cwd = Path::new("/w/sub");
        assert_eq!(
            local_path(".git/up.git", cwd),
            Some(PathBuf::from("/w/sub/.git/up.git"))
        );
        assert_eq!(local_path("../x.git", cwd), Some(PathBuf::from("/w/x.git")));
        assert_eq!(local_path("file:///w/y", cwd), Some(PathBuf::from("/w/y")));
        assert_eq!(local_path("git@host:repo.git", cwd), None);
        assert_eq!(local_path("https://h/r.git", cwd), None);
        assert_eq!(
            local_path("\u{043e}rigin", cwd),
            Some(PathBuf::from("/w/sub/\u{043e}rigin"))
        );
    }
}
