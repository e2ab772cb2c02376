//! Hidden `lazaret __setup`: a coordinator-owned session whose profile setup is still to run
//! (issue #32). It runs under the session's terminal, so the pane shows the setup's progress
//! at once and keeps its failure on screen; once done it becomes the session's command.
//! Not for direct use.

use crate::profile_setup::Plan;
use anyhow::Context;
use clap::Args;
use std::os::unix::process::CommandExt;

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// The setup to run, as JSON ([`Plan`]).
    #[arg(long)]
    pub plan: String,
    /// The session's command (program and arguments), run once the setup is done.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// Wraps `program args` so that `plan` runs first.
pub fn wrap(
    plan: &Plan,
    program: String,
    args: Vec<String>,
) -> anyhow::Result<(String, Vec<String>)> {
    let exe = crate::runtime::state_anchor::lazaret_binary()?;
    let mut wrapped = vec![
        "__setup".to_owned(),
        "--plan".to_owned(),
        serde_json::to_string(plan)?,
        "--".to_owned(),
        program,
    ];
    wrapped.extend(args);
    Ok((exe.display().to_string(), wrapped))
}

pub fn execute(args: SetupArgs) -> anyhow::Result<i32> {
    let plan: Plan = serde_json::from_str(&args.plan).context("reading the setup's plan")?;
    plan.run()?;
    let (program, rest) = args
        .command
        .split_first()
        .context("no command to run after the setup")?;
    let err = std::process::Command::new(program).args(rest).exec();
    Err(err).with_context(|| format!("running {program}"))
}
