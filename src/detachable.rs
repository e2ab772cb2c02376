//! `lazaret run --detachable`: the command runs as a coordinator-owned session, and this
//! terminal is attached to it — so it survives the terminal and can be attached again later.

use crate::coordinator::client::Registration;
use crate::coordinator::{launch, paths};
use crate::domain::layout::Layout;
use crate::domain::lock::LifecycleLock;
use crate::session::{RunOptions, SessionPlan, TEARDOWN_WAIT};
use lazaret_client::connection;
use lazaret_ui::attach;
use std::time::{Duration, Instant};

pub fn run(layout: &Layout, opts: &RunOptions) -> anyhow::Result<i32> {
    if !crate::terminal::stdin_is_terminal() {
        anyhow::bail!(
            "--detachable needs a terminal (stdin is not one); without it, `lazaret run` runs \
             the command on pipes"
        );
    }
    let plan = SessionPlan::new(layout, opts)?;
    let reg = Registration {
        domain: &plan.domain,
        profile: &plan.profile.name,
        fingerprint: &plan.fingerprint,
        linger: opts.linger,
    };
    let addr = connection::DomainAddress {
        socket: paths::socket(&plan.domain),
        profile: plan.profile.name.clone(),
        domain_id: plan.domain.id.clone(),
        workspace: plan.domain.workspace.root.clone(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cwd = plan.domain.workspace.sandbox_cwd();
    let (conn, info) = launch::join_or_start_with(&reg, |_| {
        rt.block_on(async {
            let mut conn = connection::connect(&addr, "run").await?;
            let info = conn
                .start(
                    &plan.command,
                    &cwd,
                    attach::terminal_size(),
                    &plan.fingerprint,
                )
                .await?;
            Ok((conn, info))
        })
    })?;
    let outcome = attach::run(
        &rt,
        conn,
        info.session_id.clone(),
        plan.profile.terminal,
        true,
    )?;
    if matches!(
        outcome,
        attach::Outcome::Exited(_) | attach::Outcome::SandboxStopped(_)
    ) {
        wait_if_last(&plan, &[info.session_id.as_str().to_owned()]);
    }
    Ok(attach::report(&outcome, &info.session_id))
}

/// When the sessions in `ended` were the Domain's last, waits until the coordinator has torn
/// the Domain down (as `lazaret run` does), so nothing of it runs once this CLI exits.
///
/// The coordinator tells a session's clients that it exited before the session leaves the
/// Domain (its end-of-run Git Sentry check comes first), so the published status may still
/// list the ended sessions for a moment: only other sessions mean the Domain stays.
pub fn wait_if_last(plan: &SessionPlan, ended: &[String]) {
    let deadline = Instant::now() + TEARDOWN_WAIT;
    let status_path = paths::status(&plan.domain);
    while Instant::now() < deadline {
        if let Ok(Some(_lock)) = LifecycleLock::try_acquire(&plan.domain.runtime_dir) {
            return;
        }
        let others = crate::coordinator::status::DomainStatus::read(&status_path)
            .is_some_and(|s| s.has_sessions_besides(ended));
        if others {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
