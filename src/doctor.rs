//! Host prerequisite checks behind `lazaret doctor`: each says what it found and the exact fix.

use crate::domain::layout::Layout;
use crate::profile::DEFAULT_BASE_IMAGE;
use crate::runtime::runsc_wrapper::find_runsc;
use crate::runtime::sidecar_image::{sibling_binary, NFT};
use serde::Serialize;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

const SETUP: &str = "run scripts/setup install (as root or with sudo) from a Lazaret checkout";

fn check(name: &'static str, ok: bool, detail: String, fix: impl Into<String>) -> Check {
    Check {
        name,
        status: if ok { Status::Ok } else { Status::Fail },
        detail,
        fix: (!ok).then(|| fix.into()),
    }
}

fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Runs every check; the order is the order a fix would be applied in.
pub fn run_all(layout: &Layout, profile: Option<&str>) -> Vec<Check> {
    let mut checks = vec![user_check()];
    let podman = output("podman", &["version", "--format", "{{.Client.Version}}"]);
    checks.push(check(
        "podman",
        podman.is_some(),
        podman
            .clone()
            .map_or("podman not found".into(), |v| format!("podman {v}")),
        format!("apt-get install podman, or {SETUP}"),
    ));
    checks.push(runsc_check());
    checks.push(helper_check("lazaret-runsc"));
    checks.push(helper_check("lazaret-sidecar"));
    checks.push(check(
        "runc",
        Path::new("/usr/sbin/runc").is_file() || Path::new("/usr/bin/runc").is_file(),
        "runc runs the trusted Network Sidecar".into(),
        "apt-get install runc",
    ));
    checks.push(check(
        "nftables",
        Path::new(NFT).is_file(),
        format!("{NFT} installs the sidecar's policy"),
        "apt-get install nftables",
    ));
    checks.push(check(
        "slirp4netns",
        output("slirp4netns", &["--version"]).is_some(),
        "gives the sidecar's namespace its reach".into(),
        "apt-get install slirp4netns",
    ));
    checks.push(subid_check("/etc/subuid"));
    checks.push(subid_check("/etc/subgid"));
    checks.push(runtime_dir_check(layout));
    checks.push(tun_check());
    if podman.is_some() {
        checks.push(storage_check());
        checks.push(image_check());
        checks.push(trust_check(layout, profile));
    }
    checks.push(cgroup_check());
    checks.extend(limit_checks(&crate::runtime::limits::detect()));
    if let Ok(cfg) = crate::config::HostConfig::load(layout) {
        checks.push(profile_bounds_check(&cfg.profiles, pid_max()));
    }
    checks.push(config_check(layout));
    checks
}

/// The "resource limits" section (issue #19): for `memory`, `pids`, `cpus` and `disk` of a
/// profile, whether this host enforces them, by what, and why not through cgroups.
pub fn limit_checks(host: &crate::runtime::limits::HostCgroups) -> Vec<Check> {
    crate::runtime::limits::enforcement(host)
        .into_iter()
        .map(|e| Check {
            name: match e.resource {
                "memory" => "limits: memory",
                "pids" => "limits: pids",
                "cpus" => "limits: cpus",
                _ => "limits: disk",
            },
            status: if e.enforced { Status::Ok } else { Status::Warn },
            detail: match &e.why_not_cgroups {
                Some(why) => format!("{} (not by cgroups: {why})", e.how),
                None => e.how.clone(),
            },
            fix: None,
        })
        .collect()
}

/// Host tasks one task inside may take at worst under the ptrace platform: its stub process
/// gets a thread for every Sentry thread that ran it (measured 22–31 under a fork bomb).
pub const HOST_TASKS_PER_TASK: u64 = 32;

/// Whether every profile bounds `pids` and `memory` (issue #31): without `pids` a fork bomb
/// inside takes the developer's own task budget (under the ptrace platform every task inside is
/// a host task of theirs, each with a PID of the host), without `memory` a sandbox takes the
/// host's memory; and whether a profile's `pids` could take half of the host's PIDs
/// (`pid_max`: `/proc/sys/kernel/pid_max`, None when unknown). A warning naming the profiles
/// and how to set them; the built-in profiles set both.
pub fn profile_bounds_check(
    profiles: &[crate::profile::AgentProfile],
    pid_max: Option<u64>,
) -> Check {
    let mut unbounded = Vec::new();
    let mut too_many = Vec::new();
    for p in profiles {
        let missing: Vec<&str> = [
            ("pids", p.limits.pids.is_none()),
            ("memory", p.limits.memory.is_none()),
        ]
        .into_iter()
        .filter_map(|(k, none)| none.then_some(k))
        .collect();
        if !missing.is_empty() {
            unbounded.push(format!("{} (no {})", p.name, missing.join(", no ")));
        }
        if let (Some(n), Some(max)) = (p.limits.pids, pid_max) {
            if n.saturating_mul(HOST_TASKS_PER_TASK) > max / 2 {
                too_many.push(format!("{} (pids = {n})", p.name));
            }
        }
    }
    let fix = format!(
        "set pids = {} and memory = \"{}\" (or your own numbers) in each of them in your \
         configuration file; docs/limits.md says how the defaults were measured",
        crate::config::limits::DEFAULT_PIDS,
        crate::config::limits::DEFAULT_MEMORY_TEXT
    );
    let mut said = Vec::new();
    if !unbounded.is_empty() {
        said.push(format!(
            "unbounded profiles: {} — a fork bomb inside takes your user's task budget (each \
             task inside is a host task of yours), a memory hog the host's memory",
            unbounded.join("; ")
        ));
    }
    if let (false, Some(max)) = (too_many.is_empty(), pid_max) {
        said.push(format!(
            "{}: a fork bomb inside could take over half of this host's {max} PIDs (up to \
             {HOST_TASKS_PER_TASK} host tasks per task inside under ptrace)",
            too_many.join("; ")
        ));
    }
    if said.is_empty() {
        return Check {
            name: "limits: profiles",
            status: Status::Ok,
            detail: "every profile bounds pids and memory".into(),
            fix: None,
        };
    }
    Check {
        name: "limits: profiles",
        status: Status::Warn,
        detail: said.join("; "),
        fix: Some(fix),
    }
}

/// This host's `kernel.pid_max`.
fn pid_max() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|t| t.trim().parse().ok())
}

/// The host configuration parses and validates (profiles, rules, network prefixes).
fn config_check(layout: &Layout) -> Check {
    let path = crate::config::config_file(layout);
    match crate::config::HostConfig::load(layout) {
        Ok(c) => check(
            "configuration",
            true,
            match &c.source {
                Some(file) => format!("{} ({} profiles)", file.display(), c.profiles.len()),
                None => format!("{}: absent, built-in profiles only", path.display()),
            },
            "",
        ),
        Err(e) => check(
            "configuration",
            false,
            format!("{e:#}"),
            "fix the file named above; `lazaret config check` repeats the check",
        ),
    }
}

fn user_check() -> Check {
    let root = nix::unistd::geteuid().is_root();
    check(
        "user",
        !root,
        if root {
            "running as root: Lazaret refuses root (SR-1)".into()
        } else {
            format!("uid {}", nix::unistd::geteuid())
        },
        "run lazaret as an unprivileged user (scripts/setup creates one when run as root)",
    )
}

fn runsc_check() -> Check {
    let Some(runsc) = find_runsc(std::env::var_os("LAZARET_RUNSC").as_deref()) else {
        return check(
            "runsc",
            false,
            "runsc not found".into(),
            format!("install runsc ≥ 2024 (Debian trixie's): {SETUP}"),
        );
    };
    let version = output(&runsc.display().to_string(), &["--version"]).unwrap_or_default();
    let date = version
        .split(|c: char| !c.is_ascii_digit())
        .find(|w| w.len() == 8 && w.starts_with("20"))
        .and_then(|w| w.parse::<u32>().ok());
    let ok = date.is_some_and(|d| d >= 20240101);
    check(
        "runsc",
        ok,
        format!(
            "{} ({})",
            runsc.display(),
            version.lines().next().unwrap_or("no version")
        ),
        format!(
            "runsc older than 2024 breaks `stat` in the sandbox; install trixie's runsc: {SETUP}"
        ),
    )
}

fn helper_check(name: &'static str) -> Check {
    match sibling_binary(name) {
        Ok(p) => check(name, true, p.display().to_string(), ""),
        Err(e) => check(name, false, e.to_string(), SETUP),
    }
}

fn subid_check(file: &'static str) -> Check {
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_default();
    let uid = nix::unistd::getuid().to_string();
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let ok = text.lines().any(|l| {
        let first = l.split(':').next().unwrap_or_default();
        !user.is_empty() && (first == user || first == uid)
    });
    check(
        if file.ends_with("subuid") {
            "subuid"
        } else {
            "subgid"
        },
        ok,
        format!("{file} entry for {user}"),
        format!("usermod --add-subuids 200000-265535 --add-subgids 200000-265535 {user}"),
    )
}

fn runtime_dir_check(layout: &Layout) -> Check {
    let uid = nix::unistd::getuid().as_raw();
    let fix = format!(
        "install -d -m 0700 -o {uid} /run/user/{uid} (as root) and export XDG_RUNTIME_DIR=/run/user/{uid}"
    );
    let Ok(dir) = layout.xdg_runtime_dir() else {
        return check(
            "xdg-runtime-dir",
            false,
            "XDG_RUNTIME_DIR is not set".into(),
            fix,
        );
    };
    match std::fs::metadata(dir) {
        Ok(m) => {
            let private = m.uid() == uid && m.permissions().mode() & 0o077 == 0;
            check(
                "xdg-runtime-dir",
                private,
                format!(
                    "{} (uid {}, mode {:o})",
                    dir.display(),
                    m.uid(),
                    m.permissions().mode() & 0o7777
                ),
                fix,
            )
        }
        Err(e) => check(
            "xdg-runtime-dir",
            false,
            format!("{}: {e}", dir.display()),
            fix,
        ),
    }
}

fn tun_check() -> Check {
    let ok = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .is_ok();
    check(
        "/dev/net/tun",
        ok,
        if ok {
            "openable".into()
        } else {
            "cannot be opened read-write".into()
        },
        "chmod 0666 /dev/net/tun (as root; slirp4netns needs it rootless)",
    )
}

fn storage_check() -> Check {
    let driver = output(
        "podman",
        &["info", "--format", "{{.Store.GraphDriverName}}"],
    )
    .unwrap_or_default();
    let mut c = check(
        "rootless-storage",
        driver == "overlay",
        format!("driver {driver:?}"),
        "put [storage] driver = \"overlay\" in ~/.config/containers/storage.conf (then podman system reset)",
    );
    if driver == "vfs" {
        c.status = Status::Warn;
        c.detail
            .push_str(": works, but every container start copies the image");
    }
    c
}

fn image_check() -> Check {
    let ok = Command::new("podman")
        .args(["image", "exists", DEFAULT_BASE_IMAGE])
        .status()
        .is_ok_and(|s| s.success());
    check(
        "base-image",
        ok,
        DEFAULT_BASE_IMAGE.into(),
        format!("build it: {SETUP}"),
    )
}

/// Which of the host's CAs a sandbox of `profile` (None: the default one) gets beyond its image's own
/// (issue #32), from which host file; or that none are needed, or that the profile turns it off.
fn trust_check(layout: &Layout, profile: Option<&str>) -> Check {
    let name = "trust: host CAs";
    let profile = crate::config::HostConfig::load(layout).and_then(|c| c.profile(profile));
    let outcome = profile.and_then(|p| {
        let Some(host) = crate::trust::sandbox::host_trust(&p)? else {
            return Ok(if p.trust_host_cas() {
                "the host names no CA bundle (no SSL_CERT_FILE, no system bundle): nothing is added"
                    .to_owned()
            } else {
                format!("off in profile {:?} (trust_host_cas = false)", p.name)
            });
        };
        let req = crate::runtime::state_anchor_ns::NsRequest::ImageTrust {
            image: p.image.clone(),
        };
        let podman = crate::runtime::podman::Podman::default();
        let out =
            crate::runtime::state_anchor::call_raw(&podman, "reading the image's CA bundle", &req)?;
        let report: crate::runtime::state_anchor_ns::NsReport = serde_json::from_str(out.trim())?;
        let image = report.trust_bundle;
        let added = match &image {
            Some(b) => crate::trust::sandbox::extras_of(&host, b)?,
            None => Vec::new(),
        };
        let summary = crate::trust::report::summary(&host, image.as_ref(), &added);
        Ok(format!("profile {:?}: {summary}", p.name))
    });
    match outcome {
        Ok(detail) => Check {
            name,
            status: Status::Ok,
            detail,
            fix: None,
        },
        Err(e) => Check {
            name,
            status: Status::Warn,
            detail: format!("{e:#}"),
            fix: Some(
                "fix the CA bundle named above, or set `trust_host_cas = false` in the profile"
                    .into(),
            ),
        },
    }
}

fn cgroup_check() -> Check {
    let v2 = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    Check {
        name: "cgroups",
        status: Status::Ok,
        detail: if v2 {
            "cgroup v2 (runsc runs with --ignore-cgroups; profile bounds: see limits below)".into()
        } else {
            "cgroup v1/hybrid: no rootless cgroup limits; runsc runs with --ignore-cgroups \
             (profile bounds: see limits below)"
                .into()
        },
        fix: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doctor_warns_of_each_profile_without_pids_or_memory() {
        let host = crate::config::host_paths::HostPaths {
            home: "/home/dev".into(),
            config_dir: "/home/dev/.config/lazaret".into(),
            storage_root: "/home/dev/.local/share/lazaret".into(),
            state_dir: "/home/dev/.local/state/lazaret".into(),
            runtime_root: None,
        };
        let builtin = crate::config::HostConfig::builtin_only(
            &host,
            std::path::Path::new("/home/dev/.config/lazaret/config.toml"),
        )
        .unwrap()
        .profiles;
        // The built-in profiles are bounded: nothing to warn of.
        let c = profile_bounds_check(&builtin, Some(32768));
        assert_eq!(c.status, Status::Ok, "{c:?}");
        let mut open = builtin[0].clone();
        open.name = "open".into();
        open.limits.pids = None;
        let mut half = builtin[0].clone();
        half.name = "half".into();
        half.limits.memory = None;
        let mut all = builtin.clone();
        all.extend([open, half]);
        let c = profile_bounds_check(&all, None);
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("open (no pids)"), "{}", c.detail);
        assert!(c.detail.contains("half (no memory)"), "{}", c.detail);
        assert!(!c.detail.contains("shell"), "{}", c.detail);
        assert!(c.fix.unwrap_or_default().contains("pids = "));
        // pids = 1024 on a host of 32768 PIDs: a bomb could take all of them.
        let mut wide = builtin[0].clone();
        wide.name = "wide".into();
        wide.limits.pids = Some(1024);
        let c = profile_bounds_check(&[wide.clone()], Some(32768));
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("wide (pids = 1024)"), "{}", c.detail);
        assert_eq!(
            profile_bounds_check(&[wide], Some(4_194_304)).status,
            Status::Ok
        );
    }
}
