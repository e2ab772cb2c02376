//! `lazaret escalations`: the escalation requests waiting for a decision, in all the
//! developer's running Domains (issue #15). Each Domain's Session Coordinator is asked over
//! its socket, as the developer's Client CLI (mutual TLS).

use crate::domain::layout::Layout;
use crate::terminal::escape::{argv as shown_argv, visible};
use clap::Args;
use lazaret_client::connection::{self, DomainAddress};
use lazaret_client::locate::{self, RunningDomain};
use lazaret_protocol::escalation::PendingEscalation;
use serde::Serialize;

/// List the escalation requests waiting for a decision
///
/// Lists the Host Escalation requests of all your running Domains that wait for a decision:
/// request ID, Domain and workspace, session, the command (escaped: the sandbox chose every
/// byte of it), its working directory, how long it has waited and how long it has left.
/// Decide one from this or any other terminal with `lazaret approve ID` or `lazaret deny ID`.
///
/// Requests of sessions the Session Coordinator owns are listed (`lazaret run --detachable`,
/// `lazaret tui`); a plain `lazaret run` asks on its own terminal only. Exit status 0, or 125
/// when a running Domain could not be asked (it is named on stderr; the others are listed).
///
/// Examples:
///   lazaret escalations
///   lazaret escalations --json | jq -r '.[].request_id'
///   lazaret escalations --json | jq -r '.[] | select(.argv[0] == "git") | .request_id'
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct EscalationsArgs {
    /// Print a JSON array, oldest request first: request_id, domain_id, profile, workspace,
    /// session_id, argv (exactly as requested, raw), program (the host program argv[0]
    /// resolves to, raw; "" for none), argv_hash (the command digest), command (argv escaped
    /// for display), cwd (in the sandbox), host_cwd, justification, warnings, age_secs,
    /// seconds_left. Every character outside printable ASCII is a \uXXXX escape of JSON:
    /// decode it before showing a raw field on a terminal. Schema: docs/escalation.md.
    #[arg(long)]
    pub json: bool,
    /// Show every field whole (by default each is cut to a head and a tail, saying how many
    /// bytes were left out).
    #[arg(long)]
    pub full: bool,
}

/// One waiting request, as `--json` prints it (docs/escalation.md). `argv`, `cwd` and
/// `justification` are the sandbox's; `command` is `argv` escaped for display.
#[derive(Debug, Serialize)]
pub struct Listed {
    pub request_id: String,
    pub domain_id: String,
    pub profile: String,
    pub workspace: std::path::PathBuf,
    pub session_id: String,
    pub argv: Vec<String>,
    pub program: String,
    pub argv_hash: String,
    pub command: String,
    pub cwd: String,
    pub host_cwd: String,
    pub justification: String,
    pub warnings: Vec<String>,
    pub age_secs: u32,
    pub seconds_left: u32,
}

impl Listed {
    pub fn new(domain: &DomainAddress, p: PendingEscalation) -> Listed {
        let prompt = p.prompt;
        Listed {
            command: shown_argv(&prompt.argv),
            argv_hash: prompt.digest(),
            program: prompt.program.clone(),
            request_id: prompt.request_id,
            domain_id: domain.domain_id.as_str().to_owned(),
            profile: domain.profile.clone(),
            workspace: domain.workspace.clone(),
            session_id: prompt.session_id,
            argv: prompt.argv,
            cwd: prompt.cwd,
            host_cwd: prompt.host_cwd,
            justification: prompt.justification,
            warnings: prompt.warnings,
            age_secs: p.age_secs,
            seconds_left: p.seconds_left,
        }
    }
}

/// The waiting requests of every running Domain, oldest first, and how many Domains could not
/// be asked (each is reported on stderr).
pub fn waiting(
    rt: &tokio::runtime::Runtime,
    layout: &Layout,
) -> anyhow::Result<(Vec<Listed>, usize)> {
    let mut all = Vec::new();
    let mut unasked = 0;
    for d in locate::domains(&layout.runtime_root()?)? {
        match rt.block_on(ask(&d)) {
            Ok(pending) => all.extend(pending.into_iter().map(|p| Listed::new(&d.address, p))),
            Err(e) => {
                unasked += 1;
                say_unasked(&d, &e);
            }
        }
    }
    all.sort_by_key(|l| std::cmp::Reverse(l.age_secs));
    Ok((all, unasked))
}

/// Says on stderr that `d`'s coordinator could not be asked (the command goes on with the
/// other Domains and exits 125 at the end).
pub fn say_unasked(d: &RunningDomain, e: &anyhow::Error) {
    crate::say!(
        "lazaret: Domain {} ({}) could not be asked: {e:#}",
        d.status.domain_id,
        d.status.workspace.display()
    );
}

async fn ask(d: &RunningDomain) -> anyhow::Result<Vec<PendingEscalation>> {
    pending_in(d, crate::coordinator::hosted::prompts::CLI_LABEL).await
}

/// `d`'s waiting requests, asked as a client labelled `label`. A Domain that ended between
/// the listing and the question (torn down meanwhile) has none: it is not an error.
pub async fn pending_in(d: &RunningDomain, label: &str) -> anyhow::Result<Vec<PendingEscalation>> {
    let mut conn = match connection::connect(&d.address, label).await {
        Ok(conn) => conn,
        Err(lazaret_client::open::JoinError::NotRunning) => return Ok(Vec::new()),
        Err(e) => return Err(connection::join_err(e)),
    };
    let pending = conn.escalations().await.map_err(connection::join_err);
    conn.close().await;
    pending
}

/// Text width of a field of the listing (a head and a tail of longer ones).
const WIDTH: usize = 100;

/// One request for the developer's terminal: the card's fields (warnings first, every
/// sandbox-chosen string escaped, each cut to a few lines unless `full`).
pub fn describe(l: &Listed, full: bool) -> Vec<String> {
    let mut lines = vec![format!(
        "{}  digest {}  session {}  {} (profile {})  waiting {} s, {} s left",
        l.request_id,
        l.argv_hash,
        visible(l.session_id.get(..12).unwrap_or(&l.session_id)),
        l.workspace.display(),
        l.profile,
        l.age_secs,
        l.seconds_left
    )];
    for f in lazaret_ui::terminal::card_text::fields(&l.prompt(), WIDTH, full) {
        lines.push(format!("    {:<8} {}", f.label, f.text));
    }
    lines
}

impl Listed {
    /// The prompt this listing entry was made of (for the card's fields).
    fn prompt(&self) -> lazaret_protocol::escalation::EscalationPrompt {
        lazaret_protocol::escalation::EscalationPrompt {
            request_id: self.request_id.clone(),
            profile: self.profile.clone(),
            session_id: self.session_id.clone(),
            argv: self.argv.clone(),
            program: self.program.clone(),
            cwd: self.cwd.clone(),
            host_cwd: self.host_cwd.clone(),
            justification: self.justification.clone(),
            timeout_secs: self.seconds_left,
            warnings: self.warnings.clone(),
        }
    }
}

pub fn execute(layout: &Layout, args: EscalationsArgs) -> anyhow::Result<i32> {
    crate::session::refuse_root()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (listed, unasked) = waiting(&rt, layout)?;
    // What was shown binds the prefixes typed next (`lazaret approve PREFIX`).
    let shown = listed
        .iter()
        .map(|l| super::listed::Shown {
            request_id: l.request_id.clone(),
            digest: l.argv_hash.clone(),
        })
        .collect();
    super::listed::remember(
        &layout.runtime_root()?,
        shown,
        crate::coordinator::status::now_unix_ms(),
    );
    // A Domain left out makes the listing incomplete: scripts must not take it as all.
    let status = if unasked > 0 { UNASKED } else { 0 };
    if args.json {
        // A reader that went away (`| head`) ends the listing quietly.
        crate::say_out!("{}", super::safe_json::to_string(&listed)?);
        return Ok(status);
    }
    if listed.is_empty() {
        crate::say_out!("no escalation request waits for a decision");
        return Ok(status);
    }
    for l in &listed {
        for line in describe(l, args.full) {
            crate::say_out!("{line}");
        }
    }
    crate::say!(
        "decide: lazaret approve ID | lazaret deny ID | lazaret approve ID --edit -- COMMAND… \
         (scripts: lazaret approve ID --expect-argv-hash DIGEST)"
    );
    Ok(status)
}

/// Exit status when a running Domain could not be asked (the others are listed).
pub const UNASKED: i32 = 125;

#[cfg(test)]
mod tests {
    use super::*;
    use lazaret_protocol::escalation::EscalationPrompt;
    use lazaret_protocol::DomainId;

    fn hostile() -> Listed {
        let domain = DomainAddress {
            socket: "/run/x/coordinator.sock".into(),
            profile: "ask".into(),
            domain_id: DomainId::derive("ask", std::path::Path::new("/home/dev/p")),
            workspace: "/home/dev/p".into(),
        };
        let prompt = EscalationPrompt {
            request_id: "0123456789abcdef0123456789abcdef".into(),
            profile: "ask".into(),
            session_id: "fedcba9876543210fedcba9876543210".into(),
            argv: vec![
                "sh".into(),
                "-c".into(),
                "echo \u{1b}]0;owned\u{7} \u{202e}".into(),
            ],
            program: String::new(),
            cwd: "/workspace/\u{9b}2J".into(),
            host_cwd: "/home/dev/p".into(),
            justification: "trust me\u{1b}[2J".into(),
            timeout_secs: 60,
            warnings: vec![],
        };
        Listed::new(
            &domain,
            PendingEscalation {
                prompt,
                age_secs: 5,
                seconds_left: 55,
            },
        )
    }

    #[test]
    fn a_request_is_described_with_every_sandbox_byte_escaped() {
        let l = hostile();
        let text = describe(&l, false).join("\n");
        assert!(
            !text
                .chars()
                .any(|c| crate::terminal::escape::is_escaped(c) && c != '\n'),
            "{text:?}"
        );
        assert!(
            text.starts_with(&format!(
                "0123456789abcdef0123456789abcdef  digest {}  session fedcba987654  \
                 /home/dev/p (profile ask)  waiting 5 s, 55 s left",
                l.argv_hash
            )),
            "{text}"
        );
        // Warnings first: the command holds a non-ASCII character (U+202E).
        assert!(
            text.contains("\n    warning  non-ASCII characters shown escaped"),
            "{text}"
        );
        assert!(
            text.contains(r#"command  ["sh", "-c", "echo \u{1b}]0;owned\u{7} \u{202e}"]"#),
            "{text}"
        );
        assert!(
            text.contains(r#"in       "/workspace/\u{9b}2J" → host "/home/dev/p""#),
            "{text}"
        );
        assert!(text.contains(r#"why      "trust me\u{1b}[2J""#), "{text}");
    }

    #[test]
    fn the_json_keeps_the_exact_argv_and_the_display_form() {
        let text = super::super::safe_json::to_string(&vec![hostile()]).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let l = &v[0];
        assert_eq!(l["argv"][2], "echo \u{1b}]0;owned\u{7} \u{202e}");
        assert_eq!(
            l["command"],
            r#"["sh", "-c", "echo \u{1b}]0;owned\u{7} \u{202e}"]"#
        );
        assert_eq!(l["seconds_left"], 55);
        assert_eq!(l["workspace"], "/home/dev/p");
        let keys: Vec<&str> = l
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(l["argv_hash"].as_str().map(str::len), Some(12));
        assert_eq!(
            keys.len(),
            15,
            "the documented keys (docs/escalation.md): {keys:?}"
        );
    }
}
