//! Test support for integration tests on the real stack (rootless podman + runsc).
//!
//! Lazaret refuses root, so when the tests run as root (CI) every Lazaret command runs as the
//! unprivileged developer user `$LAZARET_TEST_USER` (default `lazaret`, created by
//! `scripts/setup`) through `runuser`; run as a normal user, the tests run Lazaret as that user.
//! A missing prerequisite fails the test with the setup command to run; nothing is skipped.
#![allow(dead_code)]

pub mod anchors;
pub mod netns;
pub mod tmux;

use lazaret_protocol::DomainId;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The unprivileged user Lazaret runs as in tests.
#[derive(Clone, Debug)]
pub struct Dev {
    /// `Some` when the tests run as root and must switch to this user.
    switch_to: Option<String>,
    pub uid: u32,
    pub home: PathBuf,
    pub runtime_dir: PathBuf,
}

fn passwd_entry(user: &str) -> Option<(u32, PathBuf)> {
    let out = Command::new("getent")
        .args(["passwd", user])
        .output()
        .ok()?;
    let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let fields: Vec<&str> = line.split(':').collect();
    if fields.len() < 7 {
        return None;
    }
    Some((fields[2].parse().ok()?, PathBuf::from(fields[5])))
}

/// The `lazaret` binary under test: `$LAZARET_BIN`, else the one cargo built.
pub fn lazaret_bin() -> PathBuf {
    std::env::var_os("LAZARET_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_lazaret")))
}

pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

impl Dev {
    pub fn get() -> Dev {
        if is_root() {
            let user = std::env::var("LAZARET_TEST_USER").unwrap_or_else(|_| "lazaret".into());
            let Some((uid, home)) = passwd_entry(&user) else {
                panic!(
                    "test user {user:?} does not exist: run `scripts/setup install` as root first"
                );
            };
            Dev {
                switch_to: Some(user),
                uid,
                home,
                runtime_dir: PathBuf::from(format!("/run/user/{uid}")),
            }
        } else {
            let uid = nix::unistd::getuid().as_raw();
            let home = PathBuf::from(std::env::var_os("HOME").expect("HOME is set"));
            let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR")
                .map(PathBuf::from)
                .expect("XDG_RUNTIME_DIR must be set (see `lazaret doctor`)");
            Dev {
                switch_to: None,
                uid,
                home,
                runtime_dir,
            }
        }
    }

    /// A command that runs `program` as the developer user, in a clean login-like environment.
    pub fn command(&self, program: impl AsRef<Path>) -> Command {
        match &self.switch_to {
            Some(user) => {
                let mut c = Command::new("runuser");
                let path = format!(
                    "{}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
                    lazaret_bin()
                        .parent()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                );
                // From / unless the caller says otherwise: the checkout may be unreadable to the user.
                c.current_dir("/");
                c.args(["-u", user, "--", "env", "-i"])
                    .arg(format!("HOME={}", self.home.display()))
                    .arg(format!("USER={user}"))
                    .arg(format!("LOGNAME={user}"))
                    .arg(format!("PATH={path}"))
                    .arg(format!("XDG_RUNTIME_DIR={}", self.runtime_dir.display()))
                    .arg("TERM=xterm-256color")
                    .arg(program.as_ref());
                c
            }
            None => Command::new(program.as_ref()),
        }
    }

    pub fn lazaret(&self) -> Command {
        self.command(lazaret_bin())
    }

    pub fn sh(&self, script: &str) -> Output {
        self.command("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .output()
            .expect("running sh as the developer")
    }

    /// The developer's Domain Key (see `src/domain/key.rs`), created as Lazaret creates it if
    /// no Lazaret command made it yet: Domain IDs are keyed with it.
    pub fn domain_key(&self) -> lazaret_protocol::DomainKey {
        let out = self.sh(
            "set -e; d=\"${XDG_DATA_HOME:-$HOME/.local/share}/lazaret\"; mkdir -p -m 700 \"$d\"; \
             if [ ! -e \"$d/domain-id.key\" ]; then umask 077; t=\"$d/.domain-id.key.$$.tmp\"; \
             head -c 32 /dev/urandom > \"$t\"; ln \"$t\" \"$d/domain-id.key\" 2>/dev/null || true; \
             rm -f \"$t\"; fi; od -An -v -tx1 \"$d/domain-id.key\"",
        );
        let hex: String = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect();
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
            .collect();
        lazaret_protocol::DomainKey::from_bytes(&bytes)
            .unwrap_or_else(|| panic!("reading the Domain Key: {out:?}"))
    }

    /// The Domain ID Lazaret gives (`profile`, canonical `workspace`) for this developer.
    pub fn domain_id(&self, profile: &str, workspace: &Path) -> DomainId {
        DomainId::derive_keyed(&self.domain_key(), profile, workspace)
    }

    /// A fresh Git workspace owned by the developer, removed (with any leftover containers of
    /// its Domain) when dropped.
    pub fn workspace(&self, name: &str) -> TestWorkspace {
        let out = self.sh(&format!(
            "set -e; base=\"$HOME/lazaret-tests\"; mkdir -p \"$base\"; \
             d=$(mktemp -d \"$base/{name}-XXXXXX\"); cd \"$d\"; git init -q; \
             git -c user.name=t -c user.email=t@localhost commit -q --allow-empty -m init; \
             pwd -P"
        ));
        assert!(
            out.status.success(),
            "creating a workspace: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        TestWorkspace::at(
            self,
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()),
        )
    }
}

/// The built-in default Agent Profile.
pub const DEFAULT_PROFILE: &str = "shell";

pub struct TestWorkspace {
    pub dev: Dev,
    pub path: PathBuf,
    pub domain: DomainId,
    /// `XDG_CONFIG_HOME` given to every Lazaret command of this workspace (outside it: SR-2).
    pub config_home: Option<PathBuf>,
    /// `--profile` given to every `lazaret run`.
    pub profile: Option<String>,
}

/// A sandbox command that holds its session open until the test calls
/// [`TestWorkspace::release`].
pub const HOLD: &str = "while [ ! -e /workspace/.go ]; do sleep 0.1; done";

/// Waits for a spawned `lazaret run` and collects its output.
pub fn finish(child: Child) -> Run {
    Run::from(child.wait_with_output().expect("waiting for lazaret"))
}

/// Output of one `lazaret` invocation, with its streams as text.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl TestWorkspace {
    /// An existing directory of the developer's (canonical path) as a workspace, removed
    /// when dropped.
    pub fn at(dev: &Dev, path: PathBuf) -> TestWorkspace {
        TestWorkspace {
            dev: dev.clone(),
            domain: dev.domain_id(DEFAULT_PROFILE, &path),
            path,
            config_home: None,
            profile: None,
        }
    }

    /// `lazaret run -- <cmd>` in `dir` (relative to the workspace) with `stdin` piped in.
    pub fn run_in(&self, dir: &str, cmd: &[&str], stdin: Option<&str>) -> Run {
        let mut child = self.spawn_in(dir, &[], cmd, stdin.is_some());
        if let Some(text) = stdin {
            use std::io::Write;
            let mut pipe = child.stdin.take().expect("stdin pipe");
            pipe.write_all(text.as_bytes()).expect("writing stdin");
        }
        finish(child)
    }

    pub fn run(&self, cmd: &[&str]) -> Run {
        self.run_in("", cmd, None)
    }

    /// `lazaret run -- <cmd>` with extra variables in the CLI's environment (given through
    /// `env`: runuser rebuilds the environment).
    pub fn run_with_env(&self, env: &[&str], cmd: &[&str]) -> Run {
        finish(self.spawn_in("", env, cmd, false))
    }

    /// Starts `lazaret run -- <cmd>` in the background; see [`HOLD`] and [`Self::release`].
    pub fn spawn(&self, cmd: &[&str]) -> Child {
        self.spawn_in("", &[], cmd, false)
    }

    /// Uses `profile`, defined by the host configuration `config` (TOML) written for this
    /// workspace alone, outside it.
    pub fn with_profile(mut self, profile: &str, config: &str) -> TestWorkspace {
        let home = PathBuf::from(format!("{}.config", self.path.display()));
        let dir = home.join("lazaret");
        let out = self.dev.sh(&format!(
            "set -e; mkdir -p '{d}'; cat > '{d}/config.toml' <<'LAZARET_EOF'\n{config}\nLAZARET_EOF\nchmod 600 '{d}/config.toml'; \
             [ -d \"$HOME/.config/containers\" ] && ln -sfn \"$HOME/.config/containers\" '{h}/containers' || true",
            h = home.display(),
            d = dir.display()
        ));
        assert!(
            out.status.success(),
            "writing the test configuration: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.domain = self.dev.domain_id(profile, &self.path);
        self.config_home = Some(home);
        self.profile = Some(profile.to_owned());
        self
    }

    /// `env` arguments every Lazaret command of this workspace needs.
    pub fn env_args(&self) -> Vec<String> {
        self.config_home
            .iter()
            .map(|h| format!("XDG_CONFIG_HOME={}", h.display()))
            .collect()
    }

    /// `lazaret ARGS` in the workspace as the developer, with this workspace's configuration.
    pub fn lazaret(&self, args: &[&str]) -> Run {
        self.lazaret_env(&[], args)
    }

    /// As [`Self::lazaret`], with extra `NAME=value` variables.
    pub fn lazaret_env(&self, env: &[&str], args: &[&str]) -> Run {
        let out = self
            .dev
            .command("env")
            .args(self.env_args())
            .args(env)
            .arg(lazaret_bin())
            .args(args)
            .current_dir(&self.path)
            .stdin(Stdio::null())
            .output()
            .expect("running lazaret");
        Run::from(out)
    }

    /// A shell script run as the developer on the host, in the workspace.
    pub fn host_sh(&self, script: &str) -> String {
        let out = self
            .dev
            .command("sh")
            .args(["-c", script])
            .current_dir(&self.path)
            .stdin(Stdio::null())
            .output()
            .expect("running sh as the developer");
        assert!(
            out.status.success(),
            "host script failed: {script}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The Domain Root of this workspace's Domain.
    pub fn domain_root(&self) -> PathBuf {
        self.dev
            .home
            .join(".local/share/lazaret/domains")
            .join(self.domain.as_str())
    }

    pub fn spawn_in(&self, dir: &str, env: &[&str], cmd: &[&str], stdin: bool) -> Child {
        let mut c = self.dev.command("env");
        c.args(self.env_args())
            .args(env)
            .arg(lazaret_bin())
            .arg("run");
        if let Some(p) = &self.profile {
            c.args(["--profile", p]);
        }
        c.arg("--")
            .args(cmd)
            .current_dir(self.path.join(dir))
            .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn().expect("spawning lazaret run")
    }

    /// Lets every session running [`HOLD`] end.
    pub fn release(&self) {
        let go = self.dev.sh(&format!("touch '{}/.go'", self.path.display()));
        assert!(
            go.status.success(),
            "{}",
            String::from_utf8_lossy(&go.stderr)
        );
    }

    /// The host pid of this Domain's `role` container's main process (`sidecar`, `sandbox`),
    /// once it runs (waits up to a minute).
    pub fn container_pid(&self, role: &str) -> Option<u32> {
        let name = format!("lazaret-{}-{role}", self.domain);
        wait_for(Duration::from_secs(60), || {
            let out = self
                .dev
                .command("podman")
                .args(["inspect", "--format", "{{.State.Pid}}", &name])
                .stdin(Stdio::null())
                .output()
                .ok()?;
            let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
            (pid > 0).then_some(pid)
        })
    }

    /// Containers of this Domain that still exist.
    pub fn containers(&self) -> Vec<String> {
        self.try_containers().expect("running podman ps")
    }

    fn try_containers(&self) -> Result<Vec<String>, String> {
        let out = self
            .dev
            .command("podman")
            .args(["ps", "-a", "--format", "{{.Names}}", "--filter"])
            .arg(format!("label=lazaret.domain={}", self.domain))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// Host processes whose command line names this Domain (conmon names its container).
    pub fn processes(&self) -> Vec<String> {
        let needle = format!("lazaret-{}", self.domain);
        processes_matching(&needle)
            .into_iter()
            .map(|(pid, cmd)| format!("{pid}: {cmd}"))
            .collect()
    }

    /// Waits (90 s at most) until the Domain's teardown has ended (its last step removes the
    /// resource marker), then asserts nothing of it is left.
    pub fn wait_torn_down(&self) {
        let marker = self.runtime_dir().join("resources");
        wait_for(Duration::from_secs(90), || {
            (self.containers().is_empty() && self.processes().is_empty() && !marker.exists())
                .then_some(())
        })
        .unwrap_or_else(|| {
            panic!(
                "not torn down: containers {:?}, processes {:?}, marker {}",
                self.containers(),
                self.processes(),
                marker.exists()
            )
        });
        self.assert_nothing_left();
    }

    /// After every test: nothing of the Domain runs (FR-6) once its coordinator has finished.
    /// The last `lazaret run` returns when the sandbox has stopped; the coordinator removes the
    /// sidecar and unmounts the State Anchors after that (issue #18), holding the lifecycle
    /// lock until done — waited for here (60 s at most), then everything is checked.
    pub fn assert_nothing_left(&self) {
        self.wait_coordinator_done(Duration::from_secs(60));
        assert_eq!(
            self.containers(),
            Vec::<String>::new(),
            "containers left behind"
        );
        assert_eq!(
            self.processes(),
            Vec::<String>::new(),
            "processes left behind"
        );
        let runtime = self
            .dev
            .runtime_dir
            .join("lazaret")
            .join(self.domain.as_str());
        assert!(
            !runtime.join("resources").exists(),
            "the resource marker says the Domain is still up"
        );
        let mounts = self
            .dev
            .command("podman")
            .args(["unshare", "cat", "/proc/self/mountinfo"])
            .stdin(Stdio::null())
            .output()
            .expect("reading podman's mount table");
        let left: Vec<String> = String::from_utf8_lossy(&mounts.stdout)
            .lines()
            .filter(|l| l.contains(self.domain.as_str()))
            .map(str::to_owned)
            .collect();
        assert_eq!(
            left,
            Vec::<String>::new(),
            "State Anchor mounts left behind"
        );
    }
}

impl Drop for TestWorkspace {
    fn drop(&mut self) {
        for name in self.try_containers().unwrap_or_default() {
            let _ = self
                .dev
                .command("podman")
                .args(["rm", "-f", "-t", "0", &name])
                .output();
        }
        // The Git Sentry's record of the workspace goes with it.
        let sentry = lazaret::runtime::git_sentry::record::record_path(
            &lazaret::runtime::git_sentry::record::store_dir(
                &self.dev.home.join(".local/share/lazaret"),
            ),
            &self.path,
        );
        let mut doomed = vec![self.path.clone(), self.domain_root(), sentry];
        doomed.extend(self.config_home.clone());
        // Anchor upper dirs hold files of subordinate uids: remove inside the user namespace.
        let _ = self
            .dev
            .command("podman")
            .args(["unshare", "rm", "-rf"])
            .args(&doomed)
            .stdin(Stdio::null())
            .output();
    }
}

/// Polls `f` until it returns `Some` or `timeout` passes.
pub fn wait_for<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Host processes whose command line contains `needle`: (pid, command line).
pub fn processes_matching(needle: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) {
            found.push((pid, text));
        }
    }
    found
}

/// Replays every trace this workspace's Domain coordinators recorded against the protocol
/// model (trace conformance); returns the action names of all of them, in order.
pub fn assert_traces_conform(ws: &TestWorkspace) -> Vec<String> {
    let dir = ws.dev.home.join(".local/state/lazaret/traces");
    let mut actions = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("trace dir").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(ws.domain.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).expect("trace readable");
        let trace = lazaret::coordinator::trace::Trace::from_jsonl(&text)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        lazaret::coordinator::trace::replay(&trace)
            .unwrap_or_else(|e| panic!("{name} does not conform to the model: {e}\n{text}"));
        actions.extend(trace.events.iter().map(|e| e.name().to_owned()));
        actions.push("--".into());
    }
    assert!(
        !actions.is_empty(),
        "no trace of {} in {}",
        ws.domain.as_str(),
        dir.display()
    );
    actions
}

/// `lazaret ps --json` as the developer (all the developer's running Domains).
pub fn ps_json(dev: &Dev) -> serde_json::Value {
    let out = dev
        .lazaret()
        .args(["ps", "--json"])
        .output()
        .expect("lazaret ps");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("ps --json is JSON")
}

impl TestWorkspace {
    /// The runtime dir of this workspace's Domain (socket, status, resource marker, mailbox).
    /// Waits until no coordinator holds the Domain's lifecycle lock (never creates the file:
    /// it belongs to the developer user).
    pub fn wait_coordinator_done(&self, limit: Duration) {
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.runtime_dir().join("lifecycle.lock");
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        else {
            return;
        };
        let deadline = std::time::Instant::now() + limit;
        while file.try_lock_shared().is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the Domain's coordinator still holds {} after {limit:?}",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn runtime_dir(&self) -> std::path::PathBuf {
        self.dev
            .runtime_dir
            .join("lazaret")
            .join(self.domain.as_str())
    }

    /// This workspace's Domain's sessions as `lazaret ps --json` lists them (empty when it is
    /// not running).
    pub fn sessions(&self) -> Vec<serde_json::Value> {
        ps_json(&self.dev)
            .as_array()
            .into_iter()
            .flatten()
            .find(|d| d["domain_id"] == self.domain.as_str())
            .and_then(|d| d["sessions"].as_array().cloned())
            .unwrap_or_default()
    }

    /// This workspace's Domain's waiting escalation requests, as `lazaret escalations --json`
    /// lists them.
    pub fn escalations(&self) -> Vec<serde_json::Value> {
        let run = self.lazaret(&["escalations", "--json"]);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert!(run.stdout.is_ascii(), "{run:?}");
        let all: serde_json::Value = serde_json::from_str(&run.stdout).expect("escalations --json");
        all.as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["domain_id"] == self.domain.as_str())
            .cloned()
            .collect()
    }
}

/// Processes whose working directory is `dir` and whose arguments include every one of
/// `args` (a leak check for commands a test started through `runuser`, which a kill of the
/// wrapper does not reach).
pub fn processes_in(dir: &std::path::Path, args: &[&str]) -> Vec<u32> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let have: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            args.iter().all(|a| have.contains(&a.as_bytes()))
                && std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == dir)
        })
        .collect()
}

impl TestWorkspace {
    /// A 1×1 PNG next to the workspace, readable by the developer (a clipboard reader run by
    /// the coordinator reads it, for image-paste tests).
    #[allow(dead_code)]
    pub fn image_file(&self) -> PathBuf {
        const PNG: &[u8] = &[
            0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
            0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00,
            0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78,
            0x9c, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00,
            0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
        ];
        use std::os::unix::fs::PermissionsExt;
        let path = PathBuf::from(format!("{}.png", self.path.display()));
        std::fs::write(&path, PNG).expect("writing the test image");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
            .expect("chmod the test image");
        path
    }
}

/// `pid` and all its descendants (host pids).
pub fn process_tree(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if let Some(pp) = ppid {
            parent_of.push((p, pp));
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let cur = out[i];
        out.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == cur)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    out
}

/// The built-in profile's bounds as `lazaret profile show` prints them.
pub fn default_bounds(ws: &TestWorkspace) -> (u64, String) {
    let shown = ws.lazaret(&["profile", "show", "shell"]);
    let line = shown
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("limits:"))
        .unwrap_or_else(|| panic!("the default profile has no bounds: {shown:?}"))
        .trim()
        .to_owned();
    let pids = line
        .split(", ")
        .find_map(|p| p.strip_prefix("pids "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no pids in the default profile's {line:?}"));
    let memory = line
        .split(", ")
        .find_map(|p| p.strip_prefix("memory "))
        .unwrap_or_else(|| panic!("no memory in the default profile's {line:?}"))
        .to_owned();
    (pids, memory)
}

/// A shell script for inside: a counted spawn of `count` processes sleeping `secs` (perl's
/// `fork` returns undef at a bound; it prints `spawned N` and reaps them), then `bomb-start`, a
/// fork bomb (`b(){ b|b& }; b`) for 8 s, and `bomb-end`.
pub fn fork_bomb_script(count: u32, secs: u32) -> String {
    let spawn = format!(
        "my @k; for (1..{count}) {{ my $p = fork; last unless defined $p; \
         if ($p == 0) {{ sleep {secs}; exit 0 }} push @k, $p }} \
         print 'spawned ', scalar(@k), \"\\n\"; kill 'KILL', @k; waitpid($_, 0) for @k;"
    );
    format!(
        "perl -e '{}'; echo bomb-start; timeout -s KILL 12 bash -c 'b(){{ b|b& }}; b; \
         while [ $SECONDS -lt 8 ]; do :; done' 2>/dev/null; echo bomb-end",
        spawn.replace('\'', "'\\''")
    )
}
