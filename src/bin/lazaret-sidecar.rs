//! `lazaret-sidecar`: PID 1 of the Network Sidecar, a trusted shell-less runc container that owns
//! the Domain's network namespace (spec §3.5). It loads the policy Lazaret rendered, checks that
//! IPv6 is off, reports `ready` (or `failed: …`) in its host-private status dir, then waits.

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitCode};

use nix::sys::signal::{SigSet, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;

const DIR: &str = "/run/lazaret";
const NFT: &str = "/usr/sbin/nft";

fn report(name: &str, text: &str) -> std::io::Result<()> {
    let tmp = Path::new(DIR).join(format!(".{name}.tmp"));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, Path::new(DIR).join(name))
}

fn install_policy() -> Result<(), String> {
    let policy = Path::new(DIR).join("policy.nft");
    let out = Command::new(NFT)
        .arg("-f")
        .arg(&policy)
        .output()
        .map_err(|e| format!("cannot run {NFT}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "nft -f {} failed: {}",
            policy.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    for knob in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{knob}/disable_ipv6");
        match std::fs::read_to_string(&path) {
            Ok(v) if v.trim() == "1" => {}
            Ok(v) => return Err(format!("{path} is {} (IPv6 must be disabled)", v.trim())),
            // No IPv6 in this kernel at all: nothing to disable.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("reading {path}: {e}")),
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut signals = SigSet::empty();
    for s in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGCHLD,
    ] {
        signals.add(s);
    }
    if let Err(e) = signals.thread_block() {
        eprintln!("lazaret-sidecar: blocking signals: {e}");
        return ExitCode::FAILURE;
    }
    if let Err(e) = install_policy() {
        eprintln!("lazaret-sidecar: {e}");
        let _ = report("failed", &e);
        return ExitCode::FAILURE;
    }
    if let Err(e) = report("ready", "policy installed\n") {
        eprintln!("lazaret-sidecar: reporting ready: {e}");
        return ExitCode::FAILURE;
    }
    loop {
        match signals.wait() {
            Ok(Signal::SIGCHLD) => {
                while let Ok(status) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                    if status == nix::sys::wait::WaitStatus::StillAlive {
                        break;
                    }
                }
            }
            Ok(_) => return ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("lazaret-sidecar: waiting for signals: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
}
