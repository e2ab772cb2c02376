//! A tmux server of the developer's, private to one test, to drive interactive `lazaret run`s
//! as a developer would: typing, reading the screen, resizing.

use super::{lazaret_bin, wait_for, Dev, TestWorkspace};
use std::process::{Command, Stdio};
use std::time::Duration;

pub struct Tmux<'a> {
    dev: &'a Dev,
    socket: String,
}

impl<'a> Tmux<'a> {
    /// A server with one session `name` of `cols`×`rows` running a plain bash in `dir`.
    pub fn start(dev: &'a Dev, tag: &str, name: &str, dir: &str, cols: u16, rows: u16) -> Tmux<'a> {
        let tmux = Tmux {
            dev,
            socket: format!("lazaret-test-{tag}-{}", std::process::id()),
        };
        tmux.add(name, dir, cols, rows);
        tmux
    }

    /// Another session `name` on the same server.
    pub fn add(&self, name: &str, dir: &str, cols: u16, rows: u16) {
        self.ok(&[
            "new-session",
            "-d",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
            "-s",
            name,
            "-c",
            dir,
            "bash --norc --noprofile",
        ]);
        self.ok(&["set-option", "-t", name, "remain-on-exit", "on"]);
    }

    pub fn cmd(&self) -> Command {
        let mut c = self.dev.command("tmux");
        c.args(["-f", "/dev/null", "-L", &self.socket]);
        c.stdin(Stdio::null());
        c
    }

    pub fn ok(&self, args: &[&str]) {
        let out = self.cmd().args(args).output().expect("running tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// What `target` shows now (with its scrollback).
    pub fn screen(&self, target: &str) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-J", "-S", "-200", "-t", target])
            .output()
            .expect("capture");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What `target` shows now, without its scrollback.
    pub fn visible(&self, target: &str) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", target])
            .output()
            .expect("capture");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (60 s at most) until what `target` shows now, without its scrollback, satisfies
    /// `pred`; returns it.
    pub fn wait_visible(&self, target: &str, what: &str, pred: impl Fn(&str) -> bool) -> String {
        wait_for(Duration::from_secs(60), || {
            let s = self.visible(target);
            pred(&s).then_some(s)
        })
        .unwrap_or_else(|| {
            panic!(
                "waiting for {what}; {target} shows:\n{}",
                self.visible(target)
            )
        })
    }

    /// A tmux format of `target`, e.g. `#{pane_title}`.
    pub fn format(&self, target: &str, format: &str) -> String {
        let out = self
            .cmd()
            .args(["display-message", "-p", "-t", target, format])
            .output()
            .expect("display-message");
        String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
    }

    /// Types `text` literally.
    pub fn keys(&self, target: &str, text: &str) {
        self.ok(&["send-keys", "-t", target, "-l", text]);
    }

    /// Sends tmux key names (`Enter`, `C-u`, …).
    pub fn key(&self, target: &str, key: &str) {
        self.ok(&["send-keys", "-t", target, key]);
    }

    pub fn type_line(&self, target: &str, line: &str) {
        self.keys(target, line);
        self.key(target, "Enter");
    }

    /// Waits up to 60 s for the sandbox shell's prompt (`sandbox# `, set by typing
    /// `PS1='sandbox# '`) at the start of a line of `target`: the typed `PS1=` line itself,
    /// echoed by the host's terminal before the sandbox shell reads it, does not count.
    pub fn wait_sandbox_prompt(&self, target: &str) -> String {
        self.wait_screen(target, "the sandbox prompt", |s| {
            s.lines().any(|l| l.starts_with("sandbox# "))
        })
    }

    /// Waits up to 60 s for `target`'s screen to satisfy `pred`.
    pub fn wait_screen(&self, target: &str, what: &str, pred: impl Fn(&str) -> bool) -> String {
        wait_for(Duration::from_secs(60), || {
            let s = self.screen(target);
            pred(&s).then_some(s)
        })
        .unwrap_or_else(|| {
            panic!(
                "waiting for {what}; screen of {target}:\n{}",
                self.screen(target)
            )
        })
    }
}

impl Tmux<'_> {
    /// Quits the `lazaret tui` shown in `target` with "end its sessions" and waits for the host
    /// shell (prompt `host$`) to be back.
    pub fn quit_tui_ending_sessions(&self, target: &str) {
        self.key(target, "C-b");
        self.keys(target, "q");
        self.wait_screen(target, "the quit question", |s| {
            s.contains("e ends this TUI's sessions")
        });
        self.keys(target, "e");
        self.wait_screen(target, "the host shell", |s| {
            s.trim_end().ends_with("host$")
        });
    }
}

impl Drop for Tmux<'_> {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}

impl Tmux<'_> {
    /// `lazaret run --detachable -- bash` of `ws` (its configuration and profile) in
    /// `target`, then waits for the sandbox's prompt (`sandbox# `): keys typed before the
    /// client is attached are not delivered.
    pub fn start_detachable(&self, target: &str, ws: &TestWorkspace) {
        let env = ws.env_args().join(" ");
        let lazaret = lazaret_bin().display().to_string();
        let profile = ws
            .profile
            .as_ref()
            .map(|p| format!("--profile {p} "))
            .unwrap_or_default();
        self.type_line(
            target,
            &format!(
                "PS1='host$ '; env {env} {lazaret} run --detachable {profile}-- bash; echo cli-rc=$?"
            ),
        );
        self.wait_screen(target, "the sandbox shell", |s| s.contains(":/workspace# "));
        wait_for(Duration::from_secs(30), || {
            self.type_line(target, "PS1='sandbox# '");
            std::thread::sleep(Duration::from_millis(500));
            self.screen(target).contains("\nsandbox# ").then_some(())
        })
        .unwrap_or_else(|| panic!("no sandbox prompt:\n{}", self.screen(target)));
    }
}
