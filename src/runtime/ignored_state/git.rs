//! Host git, hardened: nothing from the repository is executed (no fsmonitor hook, no hooks, no
//! pager), the environment cannot redirect it to another repository, and it is killed after a
//! timeout.

use anyhow::{bail, Context};
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What to tell the user when git cannot be used.
const TURN_OFF: &str = "or set `isolate_ignored = false` in the profile to share ignored paths \
                        with the host instead";

/// One hardened git invocation context for a workspace.
pub(super) struct Git<'a> {
    pub workspace: &'a Path,
    pub timeout: Duration,
    /// Tests only: `HOME` (and `XDG_CONFIG_HOME` beneath it) of the git child, so the
    /// developer's own configuration cannot change test outcomes.
    pub home: Option<&'a Path>,
}

/// What a git run produced.
pub(super) struct Ran {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// Outcome of listing the ignored paths.
pub(super) enum Listing {
    /// Git's raw `-z` entries, relative to the workspace root, directories ending in `/`.
    Entries(Vec<Vec<u8>>),
    /// Git says the workspace is not a repository (its stderr, trimmed).
    NotARepository(String),
}

impl Git<'_> {
    fn command(&self, args: &[&OsStr]) -> Command {
        let mut cmd = Command::new("git");
        // Every GIT_* variable goes: GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_CONFIG_*,
        // GIT_EXEC_PATH, … could redirect git or inject configuration.
        for (key, _) in std::env::vars_os() {
            if key.as_bytes().starts_with(b"GIT_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("LC_ALL", "C");
        if let Some(parent) = self.workspace.parent() {
            // A broken `.git` at the root must not send git looking further up.
            cmd.env("GIT_CEILING_DIRECTORIES", parent);
        }
        if let Some(home) = self.home {
            cmd.env("HOME", home)
                .env("XDG_CONFIG_HOME", home.join(".config"));
        }
        let mut work_tree = OsString::from("--work-tree=");
        work_tree.push(self.workspace);
        cmd.arg("--no-pager")
            .arg("-C")
            .arg(self.workspace)
            // Overrides a `core.worktree` in the repository's configuration.
            .arg(work_tree)
            .args(["-c", "core.fsmonitor=false"])
            .args(["-c", "core.untrackedCache=false"])
            .args(["-c", "core.hooksPath=/dev/null"])
            .args(args);
        cmd
    }

    /// Runs git with `args`, feeding `input` on stdin (null stdin when `None`).
    pub fn run(&self, args: &[&OsStr], input: Option<Vec<u8>>) -> anyhow::Result<Ran> {
        let mut cmd = self.command(args);
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "git is not installed (or not on PATH): Lazaret runs it to find the workspace's \
                 Git-ignored paths for Ignored Workspace State; install git, {TURN_OFF}"
            ),
            Err(e) => return Err(e).context("starting git to find the workspace's ignored paths"),
        };
        let writer = match (input, child.stdin.take()) {
            (Some(data), Some(mut stdin)) => Some(std::thread::spawn(move || {
                // A write error means git exited early; its status tells what happened.
                let _ = stdin.write_all(&data);
            })),
            _ => None,
        };
        let stdout = child.stdout.take().map(|mut s| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = s.read_to_end(&mut buf);
                buf
            })
        });
        let stderr = child.stderr.take().map(|mut s| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = s.read_to_end(&mut buf);
                buf
            })
        });
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            if let Some(status) = child.try_wait().context("waiting for git")? {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "git took longer than {:?} to list the ignored paths of {} and was stopped; \
                     if the workspace is very large, add directory patterns to .gitignore, \
                     {TURN_OFF}",
                    self.timeout,
                    self.workspace.display()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        if let Some(w) = writer {
            let _ = w.join();
        }
        let stdout = stdout.and_then(|t| t.join().ok()).unwrap_or_default();
        let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
        Ok(Ran {
            status,
            stdout,
            stderr: String::from_utf8_lossy(&stderr).trim().to_owned(),
        })
    }

    /// Git's own evaluation of the ignored, untracked paths; wholly ignored directories are
    /// collapsed into one entry.
    pub fn list_ignored(&self) -> anyhow::Result<Listing> {
        let args = [
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ]
        .map(OsStr::new);
        let ran = self.run(&args, None)?;
        if !ran.status.success() {
            if ran.stderr.contains("not a git repository") {
                return Ok(Listing::NotARepository(ran.stderr));
            }
            bail!(
                "git could not list the ignored paths of {} ({}): {}; fix the repository, {TURN_OFF}",
                self.workspace.display(),
                ran.status,
                ran.stderr
            );
        }
        Ok(Listing::Entries(split_z(&ran.stdout)))
    }

    /// Which of `paths` (raw, directories ending in `/`) a pattern of the effective ignore
    /// rules matches. Tracked paths are never reported.
    pub fn check_ignore(&self, paths: &[Vec<u8>]) -> anyhow::Result<Vec<Vec<u8>>> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut input = Vec::new();
        for p in paths {
            input.extend_from_slice(p);
            input.push(0);
        }
        let args = ["check-ignore", "-z", "--stdin"].map(OsStr::new);
        let ran = self.run(&args, Some(input))?;
        // 0: some are ignored; 1: none is.
        match ran.status.code() {
            Some(0) | Some(1) => Ok(split_z(&ran.stdout)),
            _ => bail!(
                "git could not check the ignored paths of {} ({}): {}; {TURN_OFF}",
                self.workspace.display(),
                ran.status,
                ran.stderr
            ),
        }
    }
}

pub fn split_z(out: &[u8]) -> Vec<Vec<u8>> {
    out.split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// `<workspace>/.git/info/exclude`, when `.git` is a real directory.
pub(super) fn info_exclude(workspace: &Path) -> Option<PathBuf> {
    let git = workspace.join(".git");
    let meta = std::fs::symlink_metadata(&git).ok()?;
    meta.is_dir().then(|| git.join("info").join("exclude"))
}
