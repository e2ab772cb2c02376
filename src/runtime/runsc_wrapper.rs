//! The trusted OCI runtime wrapper `lazaret-runsc` that Podman runs instead of `runsc`.
//!
//! Podman does not store `--runtime-flag` values with a container, so a later `podman exec`,
//! `stop` or `rm` would run runsc without them; and conmon passes `--tty` to `runsc exec`, which
//! runsc does not accept. The wrapper always adds the flags this host needs and drops that one
//! flag. See `docs/runtime.md`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Global flags added to every runsc call (runtime-notes: ptrace platform, host network inside
/// the sidecar's namespace, no cgroup delegation on cgroup v1 rootless).
pub const RUNSC_FLAGS: [&str; 3] = ["--ignore-cgroups", "--network=host", "--platform=ptrace"];

/// Where the real runsc is looked for, in order (`LAZARET_RUNSC` first when set).
pub const RUNSC_CANDIDATES: [&str; 3] =
    ["/usr/bin/runsc", "/usr/sbin/runsc", "/usr/local/bin/runsc"];

/// Rewrites the arguments Podman/conmon passed (without argv[0]) into runsc's.
pub fn rewrite_args(args: &[OsString]) -> Vec<OsString> {
    let mut out: Vec<OsString> = RUNSC_FLAGS.iter().map(OsString::from).collect();
    let mut after_exec = false;
    for arg in args {
        if after_exec && is_tty_flag(arg) {
            continue;
        }
        if arg == OsStr::new("exec") {
            after_exec = true;
        }
        out.push(arg.clone());
    }
    out
}

fn is_tty_flag(arg: &OsStr) -> bool {
    matches!(
        arg.to_str(),
        Some("--tty" | "-tty" | "--tty=true" | "-tty=true" | "-t")
    )
}

/// Finds the real runsc.
pub fn find_runsc(env_override: Option<&OsStr>) -> Option<PathBuf> {
    if let Some(p) = env_override {
        return Some(PathBuf::from(p));
    }
    RUNSC_CANDIDATES
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn exec_loses_tty_and_gains_flags() {
        let got = rewrite_args(&v(&[
            "--root",
            "/r",
            "exec",
            "--tty",
            "--process",
            "p",
            "id",
        ]));
        let want = v(&[
            "--ignore-cgroups",
            "--network=host",
            "--platform=ptrace",
            "--root",
            "/r",
            "exec",
            "--process",
            "p",
            "id",
        ]);
        assert_eq!(got, want);
    }

    #[test]
    fn other_subcommands_keep_their_args() {
        let args = v(&[
            "--root",
            "/r",
            "create",
            "--bundle",
            "b",
            "--console-socket",
            "s",
            "id",
        ]);
        assert_eq!(&rewrite_args(&args)[3..], &args[..]);
    }
}
