//! `lazaret approve` and `lazaret deny`: decide a waiting escalation request from any
//! terminal of the developer (issue #15). The decision goes to the request's Session
//! Coordinator over its socket (mutual TLS, a Client CLI of that Domain labelled `cli`) and
//! competes with every other client's: the first decision wins, the others' prompts are
//! withdrawn and told who decided, and the coordinator logs and traces the decider.

use super::decide_report::{emit, report, Report, EXIT_CHANGED, EXIT_UNKNOWN, EXIT_USAGE};
use super::escalations::{waiting, Listed};
use crate::domain::layout::Layout;
use clap::Args;
use lazaret_client::connection;
use lazaret_client::locate::{self, RunningDomain};
use lazaret_protocol::escalation::{DecideAnswer, Decision, DIGEST_HEX_LEN, REQUEST_ID_HEX_LEN};

/// Approve an escalation request (run its command on the host)
///
/// Approves the waiting Host Escalation request ID (see `lazaret escalations`; a unique prefix
/// of a waiting request's ID is enough): its command runs on the host, and the session that
/// asked gets the result. With --edit, the command given after `--` runs instead.
///
/// The first decision wins: a TUI or an attached terminal showing the same request has its
/// prompt withdrawn and is told it was approved from the command line.
///
/// Exit status: 0 approved; 3 no such request; 4 already decided by another client (it says
/// who); 5 no longer waiting (timed out, or its session ended); 2 malformed ID or command;
/// 125 Lazaret failed (e.g. a coordinator could not be reached).
///
/// Examples:
///   lazaret approve 3fa9c1d2
///   lazaret approve 3fa9c1d2 --edit -- git push origin main
///   lazaret escalations --json | jq -r '.[] | select(.argv == ["git","fetch"]) | .request_id' \
///     | xargs -n1 lazaret approve
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ApproveArgs {
    /// Escalation Request ID, or a unique prefix of a waiting one's.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Run ARGV instead of the requested command.
    #[arg(long, requires = "argv")]
    pub edit: bool,
    /// Approve only if the request's command digest is HASH (12 hex digits: `lazaret
    /// escalations` shows it as `digest …`, its --json as argv_hash). It covers the argv, the
    /// resolved program and the host directory; any other command is refused (exit 6).
    #[arg(long, value_name = "HASH")]
    pub expect_argv_hash: Option<String>,
    /// The command to run instead (with --edit), after `--`.
    #[arg(last = true, value_name = "ARGV", requires = "edit")]
    pub argv: Vec<String>,
    /// Print the outcome as JSON (schema: docs/escalation.md).
    #[arg(long)]
    pub json: bool,
}

/// Deny an escalation request (its command does not run)
///
/// Denies the waiting Host Escalation request ID (see `lazaret escalations`; a unique prefix
/// of a waiting request's ID is enough): the session that asked is told it was denied. The
/// first decision wins: other clients showing the request have their prompt withdrawn.
///
/// Exit status: 0 denied; 3 no such request; 4 already decided by another client (it says
/// who); 5 no longer waiting (timed out, or its session ended); 2 malformed ID; 125 Lazaret
/// failed.
///
/// Examples:
///   lazaret deny 3fa9c1d2
///   lazaret escalations --json | jq -r '.[].request_id' | xargs -n1 lazaret deny
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct DenyArgs {
    /// Escalation Request ID, or a unique prefix of a waiting one's.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Print the outcome as JSON (schema: docs/escalation.md).
    #[arg(long)]
    pub json: bool,
}

pub fn approve(layout: &Layout, args: ApproveArgs) -> anyhow::Result<i32> {
    let decision = if args.edit {
        Decision::Edit { argv: args.argv }
    } else {
        Decision::Approve {}
    };
    let ask = Ask {
        id: &args.id,
        expect: args.expect_argv_hash.as_deref(),
        json: args.json,
    };
    decide(layout, ask, decision)
}

pub fn deny(layout: &Layout, args: DenyArgs) -> anyhow::Result<i32> {
    let ask = Ask {
        id: &args.id,
        expect: None,
        json: args.json,
    };
    decide(layout, ask, Decision::Deny {})
}

/// What the developer asked to decide.
struct Ask<'a> {
    /// The ID or prefix as typed.
    id: &'a str,
    /// The command digest the request must have (`--expect-argv-hash`).
    expect: Option<&'a str>,
    json: bool,
}

fn decide(layout: &Layout, ask: Ask<'_>, decision: Decision) -> anyhow::Result<i32> {
    crate::session::refuse_root()?;
    let (id, json) = (ask.id, ask.json);
    if let Some(problem) = id_problem(id) {
        crate::say!("lazaret: {problem}");
        return Ok(EXIT_USAGE);
    }
    if let Some(problem) = ask.expect.and_then(digest_problem) {
        crate::say!("lazaret: {problem}");
        return Ok(EXIT_USAGE);
    }
    if let Err(e) = decision.validate() {
        crate::say!("lazaret: the edited command is invalid: {e}");
        return Ok(EXIT_USAGE);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (request_id, target, domains) = match resolve(&rt, layout, id)? {
        Ok(found) => found,
        // A usage error (an ambiguous prefix) prints no JSON, like a malformed ID.
        Err(report) if report.code == EXIT_USAGE => {
            crate::say!("lazaret: {}", report.text);
            return Ok(EXIT_USAGE);
        }
        Err(report) => return Ok(emit(json, id, None, &DecideAnswer::Unknown {}, report)),
    };
    // Bound to what was shown: the digest the script expects, the request listed under the
    // prefix typed.
    if let Some(refused) = binding_refused(layout, &ask, &request_id, target.as_ref()) {
        return Ok(emit(
            json,
            &request_id,
            None,
            &DecideAnswer::Unknown {},
            refused,
        ));
    }
    let what = target.as_ref().map(|t| what_runs(t, &decision));
    for d in &domains {
        let answer = rt.block_on(async {
            let mut conn = match connection::connect(
                &d.address,
                crate::coordinator::hosted::prompts::CLI_LABEL,
            )
            .await
            {
                Ok(conn) => conn,
                // Torn down since the listing: the request cannot be waiting there.
                Err(lazaret_client::open::JoinError::NotRunning) => {
                    return Ok(DecideAnswer::Unknown {})
                }
                Err(e) => return Err(connection::join_err(e)),
            };
            let answer = conn
                .decide(&request_id, decision.clone())
                .await
                .map_err(connection::join_err);
            conn.close().await;
            answer
        });
        let answer = match answer {
            Ok(a) => a,
            Err(e) if domains.len() > 1 => {
                crate::say!(
                    "lazaret: Domain {} ({}) could not be asked: {e:#}",
                    d.status.domain_id,
                    d.status.workspace.display()
                );
                continue;
            }
            Err(e) => return Err(e),
        };
        if answer == (DecideAnswer::Unknown {}) {
            continue;
        }
        let mut report = report(&request_id, &decision, &answer);
        if let (DecideAnswer::Decided {}, Some(what)) = (&answer, &what) {
            report.text = format!("{}: {what}", report.text);
        }
        return Ok(emit(json, &request_id, Some(d), &answer, report));
    }
    let report = report(&request_id, &decision, &DecideAnswer::Unknown {});
    Ok(emit(
        json,
        &request_id,
        None,
        &DecideAnswer::Unknown {},
        report,
    ))
}

/// What an approval runs (or a denial keeps from running), escaped, for the report.
fn what_runs(t: &Listed, decision: &Decision) -> String {
    let command = match decision {
        Decision::Edit { argv } => crate::terminal::escape::argv(argv),
        Decision::Approve {} | Decision::Deny {} => t.command.clone(),
    };
    format!(
        "{command} in {} (digest {})",
        crate::terminal::escape::quoted(&t.host_cwd),
        t.argv_hash
    )
}

/// Why deciding `request_id` would not decide what the developer (or script) was shown.
fn binding_refused(
    layout: &Layout,
    ask: &Ask<'_>,
    request_id: &str,
    target: Option<&Listed>,
) -> Option<Report> {
    let nothing = "nothing was decided";
    if let Some(expect) = ask.expect {
        let Some(t) = target else {
            return Some(Report {
                code: EXIT_UNKNOWN,
                text: format!(
                    "escalation request {request_id} does not wait for a decision, so its \
                     command cannot be checked against --expect-argv-hash: {nothing}"
                ),
            });
        };
        if t.argv_hash != expect {
            return Some(Report {
                code: EXIT_CHANGED,
                text: format!(
                    "escalation request {request_id} runs {} (digest {}), not the command of \
                     digest {expect}: {nothing}",
                    t.command, t.argv_hash
                ),
            });
        }
    }
    if ask.id.len() < REQUEST_ID_HEX_LEN {
        let t = target?;
        let root = layout.runtime_root().ok()?;
        let listed = super::listed::recall(&root, crate::coordinator::status::now_unix_ms());
        if let Err(why) = super::listed::check(ask.id, request_id, &t.argv_hash, &listed) {
            return Some(Report {
                code: EXIT_CHANGED,
                text: format!(
                    "{why}: {nothing}. Look at it with `lazaret escalations` and decide it by \
                     its ID"
                ),
            });
        }
    }
    None
}

/// Why `id` cannot be an Escalation Request ID or a prefix of one.
pub fn id_problem(id: &str) -> Option<String> {
    let hex = id
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if id.is_empty() || id.len() > REQUEST_ID_HEX_LEN || !hex {
        return Some(format!(
            "{} is not an Escalation Request ID: those are {REQUEST_ID_HEX_LEN} lowercase hex \
             digits (a unique prefix is enough); see `lazaret escalations`",
            crate::terminal::escape::quoted(id)
        ));
    }
    None
}

/// What to decide: the full request ID, the waiting request it names (when listed), and the
/// Domains to ask. A full ID goes to every running Domain (the one that knows it answers); a
/// prefix must name exactly one waiting request.
fn resolve(
    rt: &tokio::runtime::Runtime,
    layout: &Layout,
    id: &str,
) -> anyhow::Result<Result<Resolved, Report>> {
    let domains = locate::domains(&layout.runtime_root()?)?;
    if domains.is_empty() {
        return Ok(Err(Report {
            code: EXIT_UNKNOWN,
            text: "no running Domain: no escalation request waits for a decision".into(),
        }));
    }
    let listed = waiting(rt, layout)?.0;
    if id.len() == REQUEST_ID_HEX_LEN {
        let target = listed.into_iter().find(|l| l.request_id == id);
        let domains = match &target {
            Some(t) => domains
                .into_iter()
                .filter(|d| d.status.domain_id == t.domain_id)
                .collect(),
            None => domains,
        };
        return Ok(Ok((id.to_owned(), target, domains)));
    }
    let mut matching: Vec<_> = listed
        .into_iter()
        .filter(|l| l.request_id.starts_with(id))
        .collect();
    match matching.len() {
        1 => {
            let one = matching.remove(0);
            let domain = domains
                .into_iter()
                .filter(|d| d.status.domain_id == one.domain_id)
                .collect();
            Ok(Ok((one.request_id.clone(), Some(one), domain)))
        }
        0 => Ok(Err(Report {
            code: EXIT_UNKNOWN,
            text: format!(
                "no waiting escalation request starts with {id} (see `lazaret escalations`); a \
                 request that was decided or timed out is no longer listed: give its full ID \
                 to learn what became of it"
            ),
        })),
        more => Ok(Err(Report {
            code: EXIT_USAGE,
            text: format!(
                "{id} is the start of {more} waiting requests' IDs; give more of the ID (see \
                 `lazaret escalations`)"
            ),
        })),
    }
}

/// The full ID, the waiting request it names (if it is listed) and the Domains to ask.
type Resolved = (String, Option<Listed>, Vec<RunningDomain>);

/// Why `digest` cannot be a command digest.
fn digest_problem(digest: &str) -> Option<String> {
    let hex = digest
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (digest.len() != DIGEST_HEX_LEN || !hex).then(|| {
        format!(
            "{} is not a command digest: those are {DIGEST_HEX_LEN} lowercase hex digits, as \
             `lazaret escalations` shows them (digest …) and its --json gives them (argv_hash)",
            crate::terminal::escape::quoted(digest)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn request_ids_and_prefixes_are_lowercase_hex() {
        assert_eq!(id_problem(ID), None);
        assert_eq!(id_problem("0123ab"), None);
        for bad in ["", "0123AB", "xyz", "../etc", &format!("{ID}0")] {
            assert!(id_problem(bad).is_some(), "{bad:?}");
        }
        let hostile = id_problem("\u{1b}[2J").unwrap_or_default();
        assert!(hostile.contains(r"\u{1b}[2J"), "{hostile}");
    }
}
