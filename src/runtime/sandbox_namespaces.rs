//! `runsc create` with the Agent Sandbox's host process in its own PID and cgroup namespaces
//! (SR-12).
//!
//! runsc 20240729 starts the sandbox process (the Sentry) in the caller's PID namespace on the
//! ptrace platform (upstream dropped that workaround for an old kernel bug after this release)
//! and never unshares the cgroup namespace. The wrapper therefore unshares both before runsc
//! runs. A Go program cannot run in a process whose children go to another PID namespace (it
//! could not start threads), so the wrapper forks a small init, PID 1 of the new namespace, which
//! mounts that namespace's `/proc` in a private mount namespace and runs `runsc create` there.
//! When runsc is done, the init stays as the namespace's reaper and exits with the sandbox, and
//! the wrapper, still in the host's namespaces:
//! - records the init's host pid in conmon's pid file (conmon, a subreaper, inherits the init
//!   and so sees the container exit when the sandbox exits);
//! - rewrites the pids in runsc's state file to host pids, because every later runsc call
//!   (`start`, `state`, `kill`, `delete`, `exec`) runs in the host's PID namespace.
//!
//! The pure parts (argument and state parsing) are in [`super::runsc_wrapper`].

use super::limits::{self, WrapperLimits};
use super::runsc_wrapper::{
    parse_status, proc_ns_path_pid, rewrite_state_pids, spec_network, state_paths, CreateCall,
    SpecNetwork,
};
use anyhow::{bail, Context};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;

/// Runs `runsc ARGS` (a `create` call) with the sandbox in new PID and cgroup namespaces.
/// Returns the exit status for this process (the wrapper, or the init in the forked child).
pub fn create(runsc: &Path, args: &[OsString], call: &CreateCall) -> anyhow::Result<u8> {
    // SAFETY: unshare only changes this (single-threaded) process's namespaces.
    if unsafe { libc::unshare(libc::CLONE_NEWPID | libc::CLONE_NEWCGROUP) } != 0 {
        bail!(
            "cannot create PID and cgroup namespaces for the Agent Sandbox: {} \
             (SR-12; is podman running rootless with user namespaces?)",
            std::io::Error::last_os_error()
        );
    }
    let (mut report_rx, report_tx) =
        UnixStream::pair().context("creating the init's report channel")?;
    // SAFETY: the wrapper is single-threaded (no thread was started before this point), so the
    // child may run ordinary code before it execs or exits.
    match unsafe { fork() }.context("forking the sandbox's PID namespace init")? {
        ForkResult::Child => {
            drop(report_rx);
            Ok(init(runsc, args, call, report_tx))
        }
        ForkResult::Parent { child } => {
            drop(report_tx);
            let mut report = String::new();
            let _ = report_rx.read_to_string(&mut report);
            match finish_create(call, child, &report) {
                Ok(code) => Ok(code),
                Err(e) => {
                    let _ = kill(child, Signal::SIGKILL);
                    let _ = waitpid(child, None);
                    Err(e)
                }
            }
        }
    }
}

/// The wrapper's side once the init reported: on success, host pids into runsc's state and
/// conmon's pid file.
fn finish_create(call: &CreateCall, init: Pid, report: &str) -> anyhow::Result<u8> {
    let mut words = report.split_whitespace();
    match (
        words.next(),
        words.next().and_then(|w| w.parse::<i64>().ok()),
    ) {
        (Some("created"), Some(_sandbox)) => {}
        (Some("failed"), Some(code)) => {
            let _ = waitpid(init, None);
            return Ok(u8::try_from(code).unwrap_or(1));
        }
        _ => {
            let detail = report.trim();
            bail!("the sandbox's PID namespace init failed: {detail}");
        }
    }
    let children = children_in_namespace(init)?;
    let to_host = |inner: i64| {
        children
            .iter()
            .find(|(_, nspid)| i64::from(*nspid) == inner)
            .map(|(host, _)| i64::from(*host))
    };
    rewrite_state(call, to_host)?;
    std::fs::write(&call.pid_file, init.as_raw().to_string())
        .with_context(|| format!("writing {}", call.pid_file.display()))?;
    Ok(0)
}

/// `(host pid, pid in the init's namespace)` of the init's children (the sandbox and the gofer,
/// reparented to it when runsc exited).
fn children_in_namespace(init: Pid) -> anyhow::Result<Vec<(i32, i32)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").context("listing /proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        if let Some((ppid, nspid)) = parse_status(&text) {
            if ppid == init.as_raw() && nspid.first() == Some(&pid) {
                if let Some(inner) = nspid.get(1) {
                    out.push((pid, *inner));
                }
            }
        }
    }
    Ok(out)
}

/// Rewrites runsc's state file under runsc's own lock, atomically.
fn rewrite_state(call: &CreateCall, to_host: impl Fn(i64) -> Option<i64>) -> anyhow::Result<()> {
    let (state_path, lock_path) = state_paths(&call.root, &call.container_id);
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .open(&lock_path)
        .with_context(|| format!("opening runsc's lock {}", lock_path.display()))?;
    let _lock = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| e)
        .context("locking runsc's state")?;
    let text = std::fs::read(&state_path)
        .with_context(|| format!("reading runsc's state {}", state_path.display()))?;
    let mut state: serde_json::Value =
        serde_json::from_slice(&text).context("parsing runsc's state")?;
    rewrite_state_pids(&mut state, to_host).map_err(|e| anyhow::anyhow!("{e}"))?;
    let tmp = state_path.with_extension("state.lazaret-tmp");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o640)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .with_context(|| format!("writing {}", tmp.display()))?;
    f.write_all(&serde_json::to_vec(&state)?)?;
    drop(f);
    std::fs::rename(&tmp, &state_path).context("replacing runsc's state")?;
    Ok(())
}

/// PID 1 of the sandbox's namespace: mounts this namespace's `/proc`, runs `runsc create`,
/// reports, then reaps until the sandbox exits and exits with its status (which ends every
/// other process of the namespace).
fn init(runsc: &Path, args: &[OsString], call: &CreateCall, mut report: UnixStream) -> u8 {
    let (sandbox, limits) = match run_create(runsc, args, call) {
        Ok(Ok(created)) => created,
        Ok(Err(code)) => {
            let _ = writeln!(report, "failed {code}");
            return code;
        }
        Err(e) => {
            let _ = writeln!(report, "error {e:#}");
            return 1;
        }
    };
    detach_stdio(report.as_raw_fd());
    // The memory bound (issue #19, #31): the Sentry's memory file and statm are opened while this namespace's
    // `/proc` is still mounted; the watch needs nothing else.
    let memory = match limits.memory {
        Some(bound) => {
            let proc_dir = Path::new("/proc").join(sandbox.to_string());
            match limits::SandboxMemory::open(&proc_dir, std::time::Duration::from_secs(5)) {
                Ok(memory) => Some((memory, bound)),
                Err(e) => {
                    let _ = writeln!(report, "error applying memory = {bound} bytes: {e:#}");
                    return 1;
                }
            }
        }
        None => None,
    };
    if let Err(e) = confine_self() {
        let _ = writeln!(report, "error {e:#}");
        return 1;
    }
    let over_memory = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Some((memory, bound)) = memory {
        let over = over_memory.clone();
        std::thread::spawn(move || {
            limits::watch_memory(
                || memory.used(),
                bound,
                || {
                    over.store(true, std::sync::atomic::Ordering::SeqCst);
                    let _ = kill(Pid::from_raw(sandbox), Signal::SIGKILL);
                },
            );
        });
    }
    let _ = writeln!(report, "created {sandbox}");
    drop(report);
    let over = || over_memory.load(std::sync::atomic::Ordering::SeqCst);
    loop {
        match waitpid(Pid::from_raw(-1), None) {
            Ok(WaitStatus::Exited(pid, code)) if pid.as_raw() == sandbox => {
                return u8::try_from(code).unwrap_or(1)
            }
            Ok(WaitStatus::Signaled(pid, _, _)) if pid.as_raw() == sandbox && over() => {
                return limits::MEMORY_LIMIT_EXIT
            }
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid.as_raw() == sandbox => {
                return 128u8.saturating_add(sig as u8)
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return 0,
        }
    }
}

/// Runs runsc inside the new namespaces; `Ok(Ok((sandbox pid, bounds)))`, or `Ok(Err(exit
/// code))`.
fn run_create(
    runsc: &Path,
    args: &[OsString],
    call: &CreateCall,
) -> anyhow::Result<Result<(i32, WrapperLimits), u8>> {
    let (network, limits) = enter_namespaces(call)?;
    // The CPU bound (issue #19): runsc, the Sentry, the Gofer and the ptrace stubs inherit it.
    if let Some(milli) = limits.cpus_milli {
        limits::bind_cpus(milli).context("binding the sandbox to its CPUs (cpus)")?;
    }
    // Podman names the sidecar's network namespace `/proc/<sidecar's host pid>/ns/net`; in
    // this namespace's `/proc` that path is runsc's own (it runs in that network namespace)
    // when runsc gets that pid here.
    let wanted = match &network {
        SpecNetwork::Join(path) => proc_ns_path_pid(path),
        _ => None,
    };
    if let Some(pid) = wanted {
        std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string())
            .context("choosing runsc's pid in the sandbox's PID namespace")?;
    }
    let mut child = Command::new(runsc)
        .args(args)
        .spawn()
        .with_context(|| format!("cannot run {}", runsc.display()))?;
    if let Some(pid) = wanted.filter(|p| i64::from(*p) != i64::from(child.id())) {
        let _ = child.kill();
        let _ = child.wait();
        bail!("runsc did not get pid {pid} in the sandbox's PID namespace");
    }
    let status = child.wait().context("waiting for runsc create")?;
    if !status.success() {
        let code = status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            .unwrap_or(1);
        return Ok(Err(code.max(1)));
    }
    let text = std::fs::read_to_string(&call.pid_file)
        .with_context(|| format!("reading {}", call.pid_file.display()))?;
    let pid = text
        .trim()
        .parse()
        .with_context(|| format!("{} holds no pid", call.pid_file.display()))?;
    Ok(Ok((pid, limits)))
}

/// The init (and so runsc create) enters the namespaces the sandbox process will have: new
/// mount, IPC and UTS namespaces and the spec's network namespace (the sidecar's), so that the
/// container's recorded process shares nothing with the host that the Sentry does not. Its
/// private `/proc` is the new PID namespace's: runsc looks its children up there by the pids
/// it got (`/proc/<pid>/oom_score_adj`), and the sandbox's chroot binds it while it boots, so
/// no host process is listed.
fn enter_namespaces(call: &CreateCall) -> anyhow::Result<(SpecNetwork, WrapperLimits)> {
    use nix::mount::{mount, MsFlags};
    let config = call.bundle.join("config.json");
    let text = std::fs::read(&config).with_context(|| format!("reading {}", config.display()))?;
    let spec: serde_json::Value =
        serde_json::from_slice(&text).with_context(|| format!("parsing {}", config.display()))?;
    let network = spec_network(&spec);
    let limits = WrapperLimits::from_spec(&spec);
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    if network == SpecNetwork::New {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: unshare only changes this (single-threaded) process's namespaces.
    if unsafe { libc::unshare(flags) } != 0 {
        bail!(
            "cannot create mount, IPC and UTS namespaces: {}",
            std::io::Error::last_os_error()
        );
    }
    if let SpecNetwork::Join(path) = &network {
        let ns = std::fs::File::open(path)
            .with_context(|| format!("opening the network namespace {}", path.display()))?;
        // SAFETY: setns only changes this process's network namespace; `ns` is open.
        if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            bail!(
                "cannot join the network namespace {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            );
        }
    }
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_SLAVE,
        None::<&str>,
    )
    .context("making mounts private")?;
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .context("mounting /proc of the sandbox's PID namespace")?;
    Ok((network, limits))
}

/// Once runsc is done the init needs no file system and no privilege: it keeps an empty
/// read-only root and drops every capability, so that whoever could reach it from inside its
/// PID namespace (the Sentry, if compromised) would find nothing the Sentry lacks.
fn confine_self() -> anyhow::Result<()> {
    use nix::mount::{mount, umount2, MntFlags, MsFlags};
    let empty = "/tmp";
    mount(
        Some("tmpfs"),
        empty,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC | MsFlags::MS_RDONLY,
        Some("size=4k,mode=0500"),
    )
    .context("mounting an empty root for the init")?;
    std::env::set_current_dir(empty).context("entering the init's empty root")?;
    nix::unistd::pivot_root(".", ".").context("pivoting to the init's empty root")?;
    umount2(".", MntFlags::MNT_DETACH).context("detaching the host file system")?;
    std::env::set_current_dir("/").context("entering the init's empty root")?;
    drop_capabilities()
}

fn drop_capabilities() -> anyhow::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    // SAFETY: prctl calls on this process with integer arguments.
    unsafe {
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            bail!("setting no_new_privs: {}", std::io::Error::last_os_error());
        }
    }
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads the header and two data structs we own, laid out as the kernel's.
    if unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) } != 0 {
        bail!(
            "dropping the init's capabilities: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// The init keeps none of conmon's descriptors (stdio pipes, sync pipes) once runsc is done.
fn detach_stdio(keep: i32) {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard descriptors of this process.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
    // SAFETY: closes descriptors of this process only; `keep` stays open.
    unsafe {
        if keep > 3 {
            libc::close_range(3, (keep - 1) as u32, 0);
        }
        libc::close_range((keep + 1) as u32, u32::MAX, 0);
    }
}

/// The runsc sandbox process of a container whose recorded process is `pid`: `pid` itself, or,
/// when `pid` is the wrapper's PID namespace init (its executable is `wrapper`), the init's
/// child whose argv[0] is `runsc-sandbox`. Host-side checks inspect the process this returns.
pub fn sandbox_process(pid: u32, wrapper: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    let same_file =
        |a: std::fs::Metadata, b: std::fs::Metadata| a.dev() == b.dev() && a.ino() == b.ino();
    let is_init = match (
        std::fs::metadata(format!("/proc/{pid}/exe")),
        std::fs::metadata(wrapper),
    ) {
        (Ok(a), Ok(b)) => same_file(a, b),
        _ => false,
    };
    if !is_init {
        return pid;
    }
    let Ok(init) = i32::try_from(pid) else {
        return pid;
    };
    let Ok(children) = children_in_namespace(Pid::from_raw(init)) else {
        return pid;
    };
    children
        .iter()
        .filter_map(|(host, _)| u32::try_from(*host).ok())
        .find(|host| {
            std::fs::read(format!("/proc/{host}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).next() == Some(b"runsc-sandbox"))
        })
        .unwrap_or(pid)
}
