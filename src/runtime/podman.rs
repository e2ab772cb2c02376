//! Calls to rootless `podman`, each named after the step it serves so that a failure says
//! what was being done ("starting Network Sidecar: podman exited 125: …").

use anyhow::bail;
use std::ffi::OsStr;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// Rootless Podman as the developer user.
#[derive(Clone, Debug)]
pub struct Podman {
    program: String,
}

/// Noise podman prints on every rootless call on hosts without shared mount propagation.
const HARMLESS: &str = "is not a shared mount";

impl Default for Podman {
    fn default() -> Self {
        Podman {
            program: std::env::var("LAZARET_PODMAN").unwrap_or_else(|_| "podman".to_owned()),
        }
    }
}

impl Podman {
    /// A command for podman with the given arguments (for callers that stream its stdio).
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut c = Command::new(&self.program);
        c.args(args);
        c
    }

    /// Runs podman to completion, returning stdout; a non-zero exit becomes an error naming `step`.
    pub fn run<I, S>(&self, step: &str, args: I) -> anyhow::Result<String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.output(step, args)?;
        if !out.status.success() {
            bail!("{step}: {}", describe_failure(&out));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs podman to completion and returns its raw output, whatever its exit status.
    pub fn output<I, S>(&self, step: &str, args: I) -> anyhow::Result<Output>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::null());
        let start = Instant::now();
        let out = cmd.output().map_err(|e| {
            anyhow::anyhow!(
                "{step}: cannot run {}: {e} (is podman installed? see `lazaret doctor`)",
                self.program
            )
        })?;
        tracing::debug!(
            step,
            status = ?out.status.code(),
            ms = start.elapsed().as_millis() as u64,
            "podman"
        );
        Ok(out)
    }
}

/// "podman exited 125: <stderr>" without podman's harmless warnings. Control characters in
/// podman's words are shown escaped: they go to the developer's terminal and the log (podman
/// passes on bytes from conmon and the runtime, e.g. a NUL — which once made the whole log a
/// "binary file" to grep).
pub fn describe_failure(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let msg: Vec<String> = stderr
        .lines()
        .filter(|l| !l.contains(HARMLESS) && !l.trim().is_empty())
        .map(crate::terminal::escape::visible)
        .collect();
    let code = out
        .status
        .code()
        .map_or_else(|| "was killed".to_owned(), |c| format!("exited {c}"));
    if msg.is_empty() {
        format!("podman {code}")
    } else {
        format!("podman {code}: {}", msg.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn podman_s_words_reach_terminal_and_log_without_control_characters() {
        let out = Output {
            status: std::process::ExitStatus::from_raw(125 << 8),
            stdout: Vec::new(),
            stderr: b"Error: conmon bytes \"\": expect { or n, but found \x00, \x1b]0;x\x07\n\
                      WARN: \"/\" is not a shared mount\n"
                .to_vec(),
        };
        let said = describe_failure(&out);
        assert!(
            said.starts_with("podman exited 125: Error: conmon bytes"),
            "{said}"
        );
        assert!(!said.chars().any(|c| c.is_control()), "{said:?}");
        assert!(!said.contains("shared mount"), "{said}");
    }
}
