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

/// runsc's global flags that take their value as the next argument (as Podman and conmon pass
/// them); used to find the subcommand.
const GLOBAL_VALUE_FLAGS: [&str; 5] = ["root", "log", "log-format", "debug-log", "panic-log"];

/// Index of the runsc subcommand (`create`, `exec`, …) in `args`: the first argument that is
/// neither a flag nor the value of a preceding global flag.
pub fn subcommand_index(args: &[OsString]) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].to_str()?;
        if !a.starts_with('-') {
            return Some(i);
        }
        let name = a.trim_start_matches('-');
        if !name.contains('=') && GLOBAL_VALUE_FLAGS.contains(&name) {
            i += 1;
        }
        i += 1;
    }
    None
}

/// What Lazaret needs from a `runsc create` call to put the sandbox in its own PID namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateCall {
    /// Where runsc writes the sandbox's pid (conmon reads the container's pid there).
    pub pid_file: PathBuf,
    /// runsc's state directory (`--root`, else runsc's default).
    pub root: PathBuf,
    /// The OCI bundle (`--bundle`, else the current directory, as runsc does).
    pub bundle: PathBuf,
    pub container_id: String,
}

/// runsc's state directory when no `--root` is given (Podman gives none): under
/// `$XDG_RUNTIME_DIR` when set, as runsc itself decides.
pub fn default_root(xdg_runtime_dir: Option<&OsStr>) -> PathBuf {
    match xdg_runtime_dir.filter(|d| !d.is_empty()) {
        Some(d) => Path::new(d).join("runsc"),
        None => PathBuf::from("/var/run/runsc"),
    }
}

/// Recognises `[global flags] create [flags] ID` and returns the pid file, state directory and
/// container ID. `xdg_runtime_dir` gives runsc's default `--root`.
pub fn create_call(args: &[OsString], xdg_runtime_dir: Option<&OsStr>) -> Option<CreateCall> {
    let sub = subcommand_index(args)?;
    if args[sub] != OsStr::new("create") {
        return None;
    }
    let root = flag_value(&args[..sub], "root")
        .map_or_else(|| default_root(xdg_runtime_dir), PathBuf::from);
    let pid_file = PathBuf::from(flag_value(&args[sub + 1..], "pid-file")?);
    let bundle =
        flag_value(&args[sub + 1..], "bundle").map_or_else(|| PathBuf::from("."), PathBuf::from);
    let container_id = args.last()?.to_str()?.to_owned();
    if container_id.starts_with('-') || args.len() <= sub + 1 {
        return None;
    }
    Some(CreateCall {
        pid_file,
        root,
        bundle,
        container_id,
    })
}

/// The network namespace the OCI spec gives the container, which the sandbox process joins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecNetwork {
    /// `{"type": "network", "path": P}`: join P (Podman's `--network container:<sidecar>`).
    Join(PathBuf),
    /// `{"type": "network"}` without a path: a new, empty one.
    New,
    /// No network namespace entry: the caller's.
    Inherit,
}

/// The pid N of a namespace path `/proc/N/ns/…` (Podman names the sidecar's network namespace
/// so for `--network container:<sidecar>`).
pub fn proc_ns_path_pid(path: &Path) -> Option<i32> {
    let rest = path.to_str()?.strip_prefix("/proc/")?;
    let (pid, ns) = rest.split_once('/')?;
    let pid: i32 = pid.parse().ok()?;
    (ns.starts_with("ns/") && !ns[3..].is_empty() && !ns[3..].contains('/') && pid > 1)
        .then_some(pid)
}

/// Reads the network namespace entry of an OCI `config.json`.
pub fn spec_network(config: &serde_json::Value) -> SpecNetwork {
    let entry = config["linux"]["namespaces"]
        .as_array()
        .and_then(|nss| nss.iter().find(|ns| ns["type"] == "network"));
    match entry {
        None => SpecNetwork::Inherit,
        Some(ns) => match ns["path"].as_str().filter(|p| !p.is_empty()) {
            Some(p) => SpecNetwork::Join(PathBuf::from(p)),
            None => SpecNetwork::New,
        },
    }
}

/// The value of `--name V`, `--name=V`, `-name V` or `-name=V` in `args`.
fn flag_value(args: &[OsString], name: &str) -> Option<OsString> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else { continue };
        let bare = s.trim_start_matches('-');
        if bare.len() + 2 < s.len() || bare.len() == s.len() {
            continue; // not -name or --name
        }
        if bare == name {
            return it.next().cloned();
        }
        if let Some(v) = bare.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            return Some(OsString::from(v));
        }
    }
    None
}

/// runsc's state file of a container (runsc 20240729: `<root>/<id>_sandbox:<id>.state`, locked
/// with flock on the sibling `.lock`).
pub fn state_paths(root: &Path, container_id: &str) -> (PathBuf, PathBuf) {
    let base = format!("{container_id}_sandbox:{container_id}");
    (
        root.join(format!("{base}.state")),
        root.join(format!("{base}.lock")),
    )
}

/// `PPid` and `NSpid` of a `/proc/<pid>/status` text. `NSpid` lists the pid as seen from the
/// status file's PID namespace outwards-in: host pid first, then each nested namespace's.
pub fn parse_status(text: &str) -> Option<(i32, Vec<i32>)> {
    let mut ppid = None;
    let mut nspid = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("PPid:") {
            ppid = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("NSpid:") {
            nspid = v
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<Vec<i32>, _>>()
                .ok();
        }
    }
    Some((ppid?, nspid?))
}

/// Replaces the pids runsc recorded inside the sandbox's PID namespace (sandbox, gofer) with
/// the host pids `to_host` gives, so that later runsc calls, which run in the host's PID
/// namespace, signal and check the right processes. The sandbox pid must map; a gofer pid that
/// does not is cleared (runsc then leaves it alone; it dies with the namespace). Returns the
/// sandbox's host pid.
pub fn rewrite_state_pids(
    state: &mut serde_json::Value,
    to_host: impl Fn(i64) -> Option<i64>,
) -> Result<i64, String> {
    let sandbox = state
        .get_mut("sandbox")
        .and_then(|s| s.get_mut("pid"))
        .ok_or("runsc's state has no sandbox pid")?;
    let inner = sandbox
        .as_i64()
        .ok_or("runsc's sandbox pid is not a number")?;
    let host = to_host(inner).ok_or_else(|| format!("no host process for sandbox pid {inner}"))?;
    *sandbox = host.into();
    if let Some(gofer) = state.get_mut("goferPid") {
        let inner = gofer.as_i64().unwrap_or(0);
        *gofer = (if inner > 0 { to_host(inner) } else { None })
            .unwrap_or(0)
            .into();
    }
    Ok(host)
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
    fn create_call_from_conmon_args() {
        let args = v(&[
            "--ignore-cgroups",
            "--network=host",
            "--root",
            "/run/r",
            "--log-format",
            "json",
            "create",
            "--bundle",
            "/b",
            "--pid-file",
            "/p/pidfile",
            "abc",
        ]);
        assert_eq!(subcommand_index(&args), Some(6));
        assert_eq!(
            create_call(&args, Some(OsStr::new("/run/user/7"))),
            Some(CreateCall {
                pid_file: "/p/pidfile".into(),
                root: "/run/r".into(),
                bundle: "/b".into(),
                container_id: "abc".into(),
            })
        );
    }

    #[test]
    fn create_call_default_root_and_equals_forms() {
        let args = v(&["-log=/l", "create", "-pid-file=/p", "--bundle=/b", "id1"]);
        let got = create_call(&args, Some(OsStr::new("/run/user/7"))).unwrap();
        assert_eq!(got.root, PathBuf::from("/run/user/7/runsc"));
        assert_eq!(got.pid_file, PathBuf::from("/p"));
        assert_eq!(got.container_id, "id1");
        assert_eq!(got.bundle, PathBuf::from("/b"));
        let got = create_call(&args, None).unwrap();
        assert_eq!(got.root, PathBuf::from("/var/run/runsc"));
        let args = v(&["create", "--pid-file", "/p", "id1"]);
        assert_eq!(create_call(&args, None).unwrap().bundle, PathBuf::from("."));
    }

    #[test]
    fn pid_of_a_proc_namespace_path() {
        assert_eq!(proc_ns_path_pid(Path::new("/proc/8934/ns/net")), Some(8934));
        for p in [
            "/run/user/7/netns/n1",
            "/proc/self/ns/net",
            "/proc/1/ns/net",
            "/proc/12/ns/",
            "/proc/12/ns/net/x",
            "/proc/12/fd/3",
            "/proc/-3/ns/net",
        ] {
            assert_eq!(proc_ns_path_pid(Path::new(p)), None, "{p}");
        }
    }

    #[test]
    fn network_namespace_of_the_spec() {
        let spec = serde_json::json!({"linux": {"namespaces": [
            {"type": "pid"},
            {"type": "network", "path": "/run/user/7/netns/n1"},
        ]}});
        assert_eq!(
            spec_network(&spec),
            SpecNetwork::Join("/run/user/7/netns/n1".into())
        );
        let spec = serde_json::json!({"linux": {"namespaces": [{"type": "network"}]}});
        assert_eq!(spec_network(&spec), SpecNetwork::New);
        let spec = serde_json::json!({"linux": {"namespaces": [{"type": "pid"}]}});
        assert_eq!(spec_network(&spec), SpecNetwork::Inherit);
        assert_eq!(spec_network(&serde_json::json!({})), SpecNetwork::Inherit);
    }

    #[test]
    fn not_a_create_call() {
        for args in [
            v(&["--root", "create", "exec", "--pid-file", "/p", "id"]),
            v(&["create", "--bundle", "/b", "id"]),
            v(&["state", "create"]),
            v(&["--root", "/r"]),
            v(&["create", "--pid-file", "/p", "--bundle"]),
        ] {
            assert_eq!(create_call(&args, None), None, "{args:?}");
        }
    }

    #[test]
    fn status_gives_ppid_and_namespace_pids() {
        let text = "Name:\tx\nPid:\t900\nPPid:\t42\nNSpid:\t900\t3\t1\nUid:\t0\n";
        assert_eq!(parse_status(text), Some((42, vec![900, 3, 1])));
        assert_eq!(parse_status("PPid:\t1\n"), None);
    }

    #[test]
    fn state_pids_become_host_pids() {
        let mut state = serde_json::json!({
            "goferPid": 3,
            "sandbox": {"id": "x", "pid": 4, "uid": 0},
            "status": "created"
        });
        let map = |p| {
            [(3, 903), (4, 904)]
                .into_iter()
                .find(|(i, _)| *i == p)
                .map(|x| x.1)
        };
        assert_eq!(rewrite_state_pids(&mut state, map), Ok(904));
        assert_eq!(state["sandbox"]["pid"], 904);
        assert_eq!(state["goferPid"], 903);
        assert_eq!(state["sandbox"]["uid"], 0);
    }

    #[test]
    fn unmapped_pids() {
        let mut state = serde_json::json!({"goferPid": 3, "sandbox": {"pid": 4}});
        assert!(rewrite_state_pids(&mut state, |_| None).is_err());
        let mut state = serde_json::json!({"goferPid": 3, "sandbox": {"pid": 4}});
        assert_eq!(
            rewrite_state_pids(&mut state, |p| (p == 4).then_some(9)),
            Ok(9)
        );
        assert_eq!(state["goferPid"], 0);
        let mut state = serde_json::json!({"goferPid": 3});
        assert!(rewrite_state_pids(&mut state, Some).is_err());
    }

    #[test]
    fn state_file_names() {
        let (s, l) = state_paths(Path::new("/r"), "c1");
        assert_eq!(s, PathBuf::from("/r/c1_sandbox:c1.state"));
        assert_eq!(l, PathBuf::from("/r/c1_sandbox:c1.lock"));
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
