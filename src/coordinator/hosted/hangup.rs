//! Ending a coordinator-owned session ends its processes inside the Agent Sandbox.
//!
//! Killing the coordinator's `podman exec` is not enough: with a terminal, the pseudo-terminal
//! inside the sandbox belongs to conmon, not to `podman exec`, so the session's command (and
//! everything it started) would run on in the sandbox, unseen, until the Domain is torn down.
//! So `lazaret kill` first hangs up, inside the sandbox, every process of the terminal sessions
//! whose processes carry the session's `LAZARET_SESSION` (as a terminal hangup would), and kills
//! what is still there two seconds later.
//!
//! What the sandbox wrote (environments, `/proc`) can at most make this signal other processes
//! of the same sandbox, which the sandbox can do itself.

use crate::runtime::sandbox::{exec_args, ExecRequest};
use lazaret_protocol::SessionId;

/// `sh -c SCRIPT lazaret SESSION_ID`: hang up the session's terminal sessions, then kill.
const SCRIPT: &str = r#"id=$1
leaders=
for d in /proc/[0-9]*; do
  tr '\000' '\n' < "$d/environ" 2>/dev/null | grep -qxF "LAZARET_SESSION=$id" || continue
  s=$(cat "$d/stat" 2>/dev/null) || continue
  rest=${s##*)}; set -- $rest; leaders="$leaders $4 "
done
[ -n "$leaders" ] || exit 0
signal() {
  found=1
  for d in /proc/[0-9]*; do
    s=$(cat "$d/stat" 2>/dev/null) || continue
    rest=${s##*)}; set -- $rest
    case "$leaders" in *" $4 "*) found=0; [ -n "$sig" ] && kill "-$sig" "${d#/proc/}" 2>/dev/null;; esac
  done
  return $found
}
sig=HUP; signal
sig=; i=0
while [ $i -lt 20 ] && signal; do sleep 0.1; i=$((i+1)); done
sig=KILL; signal
exit 0
"#;

/// The `podman` arguments that hang up `session`'s processes in `sandbox`.
pub fn args(sandbox: &str, session: &SessionId) -> Vec<String> {
    let req = ExecRequest {
        command: vec![
            "/bin/sh".into(),
            "-c".into(),
            SCRIPT.into(),
            "lazaret".into(),
            session.as_str().to_owned(),
        ],
        workdir: "/".into(),
        tty: false,
        term: None,
        env: Vec::new(),
    };
    exec_args(sandbox, &req)
}

/// Runs the hang-up (blocking).
pub fn run(program: &str, sandbox: &str, session: &SessionId) -> anyhow::Result<()> {
    let out = std::process::Command::new(program)
        .args(args(sandbox, session))
        .stdin(std::process::Stdio::null())
        .output()?;
    if !out.status.success() {
        anyhow::bail!(
            "hanging up the session in the sandbox: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}
