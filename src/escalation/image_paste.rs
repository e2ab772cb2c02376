//! The coordinator's answer to the clipboard shim (issue #16 item 4): a request whose argv is
//! [`PASTE_IMAGE`] is not a Host Escalation — no rule or prompt sees it, nothing the sandbox
//! chose runs — but a read of the host clipboard's image by the developer's own reader
//! command, allowed only when the developer just pressed the paste key in that session's
//! terminal ([`crate::coordinator::paste_keys`]), and passed on only when it is a PNG or JPEG
//! of at most [`MAX_IMAGE_BYTES`].
//!
//! The reader: `LAZARET_CLIPBOARD_IMAGE_COMMAND` (split like a shell line, no shell) in the
//! coordinator's environment; else `wl-paste --no-newline --type image/png` under Wayland
//! (`WAYLAND_DISPLAY`), `xclip -selection clipboard -t image/png -o` under X11 (`DISPLAY`).

use super::host_exec::{self, Ended, Launch};
use lazaret_protocol::clipboard::{image_type, MAX_IMAGE_BYTES, PASTE_IMAGE};
use std::ffi::OsString;
use std::os::fd::AsFd;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The environment variable that names the host's clipboard image reader.
pub const ENV_COMMAND: &str = "LAZARET_CLIPBOARD_IMAGE_COMMAND";

/// How long the reader may take.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `argv` is a paste request.
pub fn is_paste_request(argv: &[String]) -> bool {
    argv.len() == 1 && argv[0] == PASTE_IMAGE
}

/// What answers a paste request.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    Image(Vec<u8>),
    Refused(String),
}

/// The reader's argv from the environment `env` gives.
pub fn reader(env: impl Fn(&str) -> Option<String>) -> Result<Vec<String>, String> {
    if let Some(line) = env(ENV_COMMAND).filter(|l| !l.trim().is_empty()) {
        return shell_words::split(&line)
            .map_err(|e| format!("{ENV_COMMAND} cannot be split into words: {e}"));
    }
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect();
    if env("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty()) {
        return Ok(words(&["wl-paste", "--no-newline", "--type", "image/png"]));
    }
    if env("DISPLAY").is_some_and(|v| !v.is_empty()) {
        return Ok(words(&[
            "xclip",
            "-selection",
            "clipboard",
            "-t",
            "image/png",
            "-o",
        ]));
    }
    Err(format!(
        "the host clipboard cannot be read here: neither WAYLAND_DISPLAY nor DISPLAY is set \
         where the Session Coordinator started; set {ENV_COMMAND} to a command that prints \
         the clipboard's image"
    ))
}

/// Decides a paste request: `enabled` (the profile allows image paste), `pressed` (the paste
/// key was just pressed in that session), then the image `read` returns, checked.
pub fn answer(
    enabled: bool,
    pressed: bool,
    read: impl FnOnce() -> Result<Vec<u8>, String>,
) -> Answer {
    if !enabled {
        return Answer::Refused(
            "image paste is off in this profile ([profiles.NAME.terminal] image_paste = false)"
                .into(),
        );
    }
    if !pressed {
        return Answer::Refused(
            "no image was pasted: press ctrl-v in this session's pane or terminal first (the \
             host clipboard is read only for 10 s after that key)"
                .into(),
        );
    }
    match read() {
        Err(why) => Answer::Refused(why),
        Ok(bytes) if bytes.len() > MAX_IMAGE_BYTES => Answer::Refused(format!(
            "the clipboard's image is larger than {} KiB",
            MAX_IMAGE_BYTES / 1024
        )),
        Ok(bytes) if image_type(&bytes).is_none() => {
            Answer::Refused("the host clipboard holds no PNG or JPEG image".into())
        }
        Ok(bytes) => Answer::Image(bytes),
    }
}

/// Runs the reader on the host with the coordinator's own environment, in `/`.
pub fn read_host_clipboard() -> Result<Vec<u8>, String> {
    let argv = reader(|k| std::env::var(k).ok())?;
    let Some(first) = argv.first() else {
        return Err(format!("{ENV_COMMAND} is empty"));
    };
    let path = std::env::var_os("PATH");
    let program = super::executable::find(first, path.as_deref())?;
    let root = std::fs::File::open("/").map_err(|e| format!("opening /: {e}"))?;
    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let run = host_exec::run(
        &Launch {
            program: &program,
            argv: &argv,
            cwd: root.as_fd(),
            env: &env,
        },
        READ_TIMEOUT,
        &Arc::new(AtomicBool::new(false)),
    );
    match run.ended {
        Ended::Exited(0) if run.truncated => Err(format!(
            "the clipboard's image is larger than {} KiB",
            MAX_IMAGE_BYTES / 1024
        )),
        Ended::Exited(0) => Ok(run.stdout),
        Ended::Exited(code) => Err(format!(
            "the host clipboard reader ({first}) exited with status {code}: the clipboard may \
             hold no image"
        )),
        Ended::TimedOut => Err(format!("the host clipboard reader ({first}) took over 5 s")),
        Ended::Cancelled => Err("cancelled".into()),
        Ended::Failed(why) => Err(format!("the host clipboard reader ({first}): {why}")),
    }
}

#[cfg(test)]
#[path = "image_paste_tests.rs"]
mod tests;
