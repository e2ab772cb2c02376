//! `lazaret-escalate`: the Escalation Client (spec §3.6). Run inside the Agent Sandbox, it asks
//! for one command to run on the host: it signs a request with the session's Session Anchor,
//! drops it into the Escalation Mailbox by atomic rename, waits for the result, replays the host
//! command's stdout and stderr and exits with its status (or an `EXIT_*` code).
//!
//! Kept light so that it links statically (`-C target-feature=+crt-static`) and runs in any
//! image: clap, serde_json and `lazaret_protocol::escalation` only — no name resolution, no
//! async runtime, randomness from `/dev/urandom`. User documentation: `docs/escalation.md`.

#[path = "escalate/clipboard_shim.rs"]
mod clipboard_shim;
#[path = "escalate/keep_terminal.rs"]
mod keep_terminal;
#[path = "escalate/result_poll.rs"]
mod result_poll;

use clap::Parser;
use lazaret_protocol::escalation::{
    record_file_name, EscalationResult, Outcome, RequestBody, SignedRequest, DEFAULT_MAILBOX,
    ENV_DOMAIN, ENV_MAILBOX, ENV_SESSION, ENV_SESSION_ANCHOR, EXIT_CLIENT_ERROR, EXIT_TIMED_OUT,
    MAX_RESULT_BYTES, RECORD_VERSION, REQUEST_DIR, RESULT_DIR,
};
use lazaret_protocol::{DomainId, SessionAnchor, SessionId};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long after `--timeout` the client still waits for the coordinator's own result.
const GRACE: Duration = Duration::from_secs(10);
/// Consecutive unreadable reads of a present result before giving up on it (at least 100 ms
/// of them: see `result_poll`).
const PARSE_RETRIES: u32 = 100;

const AFTER_HELP: &str = "\
The command runs on the host, with the developer's authority, only when the developer approves
it in their `lazaret run` terminal (they may also edit or deny it) or when it matches an
auto-approval rule in the host configuration. It runs as an argument vector, without a shell,
in the host directory that corresponds to the current directory under /workspace (outside
/workspace the request is denied). Sessions without a terminal (`lazaret exec`) only get
auto-approved commands.

Exit status:
  0-255  the host command's own status (128+N when signal N ended it)
  240    denied
  241    timed out: no decision in time, the command ran too long, or no result came
  242    cancelled
  243    failed: Lazaret could not run the command
  244    lazaret-escalate itself failed (usage, environment, mailbox)

See docs/escalation.md in the Lazaret repository.";

/// Ask for a command to run on the host, outside the sandbox.
#[derive(Debug, Parser)]
#[command(name = "lazaret-escalate", version, after_help = AFTER_HELP)]
struct Cli {
    /// Why the command should run on the host; shown to the developer with the command.
    #[arg(long, value_name = "TEXT", default_value = "")]
    justification: String,
    /// Seconds allowed for the decision and the host command together (1-3600).
    #[arg(long, value_name = "SECS", default_value_t = 300,
          value_parser = clap::value_parser!(u32).range(1..=3600))]
    timeout: u32,
    /// The command and its arguments, exactly as they should run on the host.
    #[arg(value_name = "CMD", required = true, num_args = 1.., trailing_var_arg = true,
          allow_hyphen_values = true)]
    command: Vec<String>,
}

/// Why the client stops without a result to pass on.
struct Failure {
    status: u8,
    message: String,
}

fn client_error(message: impl Into<String>) -> Failure {
    Failure {
        status: EXIT_CLIENT_ERROR,
        message: message.into(),
    }
}

fn main() -> ExitCode {
    // Under the names of the clipboard tools agents call, it is the clipboard shim.
    let args: Vec<String> = std::env::args().collect();
    if let Some(tool) = args.first().and_then(|a| clipboard_shim::Tool::named(a)) {
        return ExitCode::from(clipboard_shim::main(tool, &args[1..]));
    }
    // How a session's command starts: with its terminal where `/dev/tty` finds it.
    if args.get(1).is_some_and(|a| a == "--keep-terminal") {
        return ExitCode::from(keep_terminal::exec(&args[2..]));
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version print to stdout and succeed; usage errors get our code.
            return ExitCode::from(if e.use_stderr() { EXIT_CLIENT_ERROR } else { 0 });
        }
    };
    match run(cli) {
        Ok(status) => ExitCode::from(status),
        Err(f) => {
            eprintln!("lazaret-escalate: {}", f.message);
            ExitCode::from(f.status)
        }
    }
}

fn run(cli: Cli) -> Result<u8, Failure> {
    let argv = cli.command.clone();
    let result = ask(cli.command, cli.justification, cli.timeout)?;
    Ok(deliver(&result, &argv))
}

/// Sends one request and waits for its result.
fn ask(
    argv: Vec<String>,
    justification: String,
    timeout: u32,
) -> Result<EscalationResult, Failure> {
    let domain = env_var(ENV_DOMAIN)?;
    let session = env_var(ENV_SESSION)?;
    let anchor = env_var(ENV_SESSION_ANCHOR)?;
    if DomainId::parse(&domain).is_none() {
        return Err(client_error(format!("{ENV_DOMAIN} is not a Domain ID")));
    }
    SessionId::parse(&session).map_err(|e| client_error(format!("{ENV_SESSION}: {e}")))?;
    let anchor = SessionAnchor::parse(&anchor)
        .map_err(|e| client_error(format!("{ENV_SESSION_ANCHOR}: {e}")))?;
    let mailbox =
        PathBuf::from(std::env::var_os(ENV_MAILBOX).unwrap_or_else(|| DEFAULT_MAILBOX.into()));

    let cwd = std::env::current_dir()
        .map_err(|e| client_error(format!("cannot read the current directory: {e}")))?;
    let cwd = cwd
        .to_str()
        .ok_or_else(|| client_error("the current directory is not UTF-8"))?
        .to_owned();
    let body = RequestBody {
        v: RECORD_VERSION,
        domain_id: domain,
        session_id: session,
        request_id: random_request_id()
            .map_err(|e| client_error(format!("cannot read /dev/urandom: {e}")))?,
        created_unix_ms: now_unix_ms(),
        argv,
        cwd,
        justification,
        timeout_secs: timeout,
    };
    body.validate()
        .map_err(|e| client_error(format!("cannot send this request: {e}")))?;
    let request = SignedRequest::sign(body, &anchor);
    let id = request.body.request_id.clone();
    let placed = submit(&mailbox, &request)?;

    let deadline = Instant::now() + Duration::from_secs(u64::from(timeout)) + GRACE;
    let result = match wait_for_result(&mailbox, &request, &anchor, deadline)? {
        Some(result) => result,
        None => {
            // Best effort: a request nobody picked up should not run later.
            let _ = std::fs::remove_file(&placed);
            return Err(Failure {
                status: EXIT_TIMED_OUT,
                message: format!(
                    "timed out: no result for request {id} after {} s (is the session's \
                     `lazaret` still running?)",
                    u64::from(timeout) + GRACE.as_secs()
                ),
            });
        }
    };
    Ok(result)
}

fn env_var(name: &str) -> Result<String, Failure> {
    std::env::var(name).map_err(|_| {
        client_error(format!(
            "{name} is not set: lazaret-escalate works only inside a `lazaret run` or \
             `lazaret exec` session"
        ))
    })
}

/// 16 random bytes as 32 lowercase hex digits: the Escalation Request ID.
fn random_request_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// How long a full mailbox is waited for: the coordinator clears what floods it, and the space
/// comes back once the sandbox lets go of the removed files (issue #19: a flood, cleared, then
/// an escalation at once found the mailbox's tmpfs still full).
const FULL_MAILBOX_WAIT: Duration = Duration::from_secs(3);

/// Writes `req/.<id>.tmp`, then renames it to `req/<id>.json`. Returns the final path. A full
/// mailbox (ENOSPC) is tried again for [`FULL_MAILBOX_WAIT`].
fn submit(mailbox: &Path, request: &SignedRequest) -> Result<PathBuf, Failure> {
    let dir = mailbox.join(REQUEST_DIR);
    let id = &request.body.request_id;
    let tmp = dir.join(format!(".{id}.tmp"));
    let dest = dir.join(record_file_name(id));
    let deadline = Instant::now() + FULL_MAILBOX_WAIT;
    let mut pause = Duration::from_millis(10);
    loop {
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            // Readable by the host user whatever uid the sandbox maps us to; no secret inside.
            .mode(0o644)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&request.to_bytes()))
            .and_then(|()| std::fs::rename(&tmp, &dest));
        let Err(e) = written else {
            return Ok(dest);
        };
        let _ = std::fs::remove_file(&tmp);
        let full = e.raw_os_error() == Some(libc::ENOSPC);
        if full && Instant::now() < deadline {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
            continue;
        }
        let hint = if full {
            "the Escalation Mailbox stayed full: something in the sandbox is filling it; the \
             coordinator clears it, try again"
        } else {
            "is the Escalation Mailbox mounted?"
        };
        return Err(client_error(format!(
            "cannot write the request to {}: {e} ({hint})",
            dir.display()
        )));
    }
}

/// Polls `res/<id>.json` until `deadline`. `None`: no result came. A result counts only when
/// its signature (Session Anchor, over this request's signature) checks out: anything else in
/// its place was not written by the coordinator for this request, and is refused.
fn wait_for_result(
    mailbox: &Path,
    request: &SignedRequest,
    anchor: &SessionAnchor,
    deadline: Instant,
) -> Result<Option<EscalationResult>, Failure> {
    let id = request.body.request_id.as_str();
    let path = mailbox.join(RESULT_DIR).join(record_file_name(id));
    let mut bad_reads = 0;
    let delivered = Instant::now();
    loop {
        match read_capped(&path) {
            Ok(Some(bytes)) => match EscalationResult::parse(&bytes) {
                Ok(result) if result.request_id == id => {
                    return match result.verify(anchor, &request.sig) {
                        Ok(()) => Ok(Some(result)),
                        Err(e) => Err(client_error(format!(
                            "{}: refused, not a result from the coordinator for this request \
                             ({e}); nothing of it is shown",
                            path.display()
                        ))),
                    }
                }
                Ok(_) => {
                    return Err(client_error(format!(
                        "{}: wrong request ID",
                        path.display()
                    )))
                }
                Err(e) if bad_reads >= PARSE_RETRIES => {
                    return Err(client_error(format!(
                        "unreadable result {}: {e}",
                        path.display()
                    )))
                }
                Err(_) => bad_reads += 1,
            },
            Ok(None) => {}
            Err(e) => {
                return Err(client_error(format!("cannot read {}: {e}", path.display())));
            }
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(result_poll::pause(delivered.elapsed()));
    }
}

/// The file's bytes (one more than the cap at most, so that the parser sees it is too large),
/// or `None` if it does not exist yet.
fn read_capped(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    let cap = u64::try_from(MAX_RESULT_BYTES)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    file.take(cap).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Replays the output, says what happened when the command did not simply complete, and gives
/// the exit status.
fn deliver(result: &EscalationResult, requested: &[String]) -> u8 {
    let stdout = result.stdout_bytes().unwrap_or_default();
    let stderr = result.stderr_bytes().unwrap_or_default();
    // A closed stdout or stderr (EPIPE) must not change the status.
    let _ = std::io::stdout().lock().write_all(&stdout);
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().lock().write_all(&stderr);
    let note = |what: &str| {
        if result.message.is_empty() {
            eprintln!("lazaret-escalate: {what}");
        } else {
            eprintln!("lazaret-escalate: {what}: {}", result.message);
        }
    };
    if let Some(ran) = result.ran_argv.as_deref().filter(|ran| *ran != requested) {
        eprintln!("lazaret-escalate: the developer edited the command; ran: {ran:?}");
    }
    if result.truncated {
        eprintln!("lazaret-escalate: output truncated at 1 MiB per stream");
    }
    match result.outcome {
        Outcome::Completed if result.exit_code.is_none() => {
            note("failed: the command completed without an exit status")
        }
        Outcome::Completed => {}
        Outcome::Denied => note("denied"),
        Outcome::TimedOut => note("timed out"),
        Outcome::Cancelled => note("cancelled"),
        Outcome::Failed => note("failed"),
    }
    result.client_exit_status()
}
