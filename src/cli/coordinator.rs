//! Hidden `lazaret __coordinator`: the detached Session Coordinator process, started by the
//! CLI that becomes a Domain's startup leader. Not for direct use.

use crate::domain::layout::Layout;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CoordinatorArgs {
    #[arg(long)]
    pub profile: String,
    #[arg(long)]
    pub workspace: PathBuf,
    /// Seconds the Domain stays up after its last session (over the profile's `linger`).
    #[arg(long)]
    pub linger: Option<u64>,
}

pub fn execute(layout: &Layout, args: CoordinatorArgs) -> anyhow::Result<i32> {
    crate::coordinator::daemon::main(layout, &args.profile, &args.workspace, args.linger)
}
