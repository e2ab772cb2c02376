//! `lazaret approve` and `lazaret deny`: decide a waiting escalation request from any
//! terminal of the developer (issue #15). The decision goes to the request's Session
//! Coordinator over its socket (mutual TLS, a Client CLI of that Domain labelled `cli`) and
//! competes with every other client's: the first decision wins, the others' prompts are
//! withdrawn and told who decided, and the coordinator logs and traces the decider.

use super::decide_report::{emit, report, Report, EXIT_UNKNOWN, EXIT_USAGE};
use super::escalations::waiting;
use crate::domain::layout::Layout;
use clap::Args;
use lazaret_client::connection;
use lazaret_client::locate::{self, RunningDomain};
use lazaret_protocol::escalation::{DecideAnswer, Decision, REQUEST_ID_HEX_LEN};

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
    decide(layout, &args.id, decision, args.json)
}

pub fn deny(layout: &Layout, args: DenyArgs) -> anyhow::Result<i32> {
    decide(layout, &args.id, Decision::Deny {}, args.json)
}

fn decide(layout: &Layout, id: &str, decision: Decision, json: bool) -> anyhow::Result<i32> {
    crate::session::refuse_root()?;
    if let Some(problem) = id_problem(id) {
        eprintln!("lazaret: {problem}");
        return Ok(EXIT_USAGE);
    }
    if let Err(e) = decision.validate() {
        eprintln!("lazaret: the edited command is invalid: {e}");
        return Ok(EXIT_USAGE);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (request_id, domains) = match resolve(&rt, layout, id)? {
        Ok(found) => found,
        // A usage error (an ambiguous prefix) prints no JSON, like a malformed ID.
        Err(report) if report.code == EXIT_USAGE => {
            eprintln!("lazaret: {}", report.text);
            return Ok(EXIT_USAGE);
        }
        Err(report) => return Ok(emit(json, id, None, &DecideAnswer::Unknown {}, report)),
    };
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
                eprintln!(
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
        let report = report(&request_id, &decision, &answer);
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

/// The full request ID and the Domains to ask. A full ID goes to every running Domain (the
/// one that knows it answers); a prefix must name exactly one waiting request.
fn resolve(
    rt: &tokio::runtime::Runtime,
    layout: &Layout,
    id: &str,
) -> anyhow::Result<Result<(String, Vec<RunningDomain>), Report>> {
    let domains = locate::domains(&layout.runtime_root()?)?;
    if domains.is_empty() {
        return Ok(Err(Report {
            code: EXIT_UNKNOWN,
            text: "no running Domain: no escalation request waits for a decision".into(),
        }));
    }
    if id.len() == REQUEST_ID_HEX_LEN {
        return Ok(Ok((id.to_owned(), domains)));
    }
    let matching: Vec<_> = waiting(rt, layout)?
        .0
        .into_iter()
        .filter(|l| l.request_id.starts_with(id))
        .collect();
    match matching.as_slice() {
        [one] => {
            let domain = domains
                .into_iter()
                .filter(|d| d.status.domain_id == one.domain_id)
                .collect();
            Ok(Ok((one.request_id.clone(), domain)))
        }
        [] => Ok(Err(Report {
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
                "{id} is the start of {} waiting requests' IDs; give more of the ID (see \
                 `lazaret escalations`)",
                more.len()
            ),
        })),
    }
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
