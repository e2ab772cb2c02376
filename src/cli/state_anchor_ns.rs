//! Hidden `lazaret __state-anchor REQUEST`: the State Anchor mount helper Lazaret runs inside
//! `podman unshare` (see `runtime::state_anchor`). Not for direct use.

use clap::Args;

#[derive(Debug, Args)]
pub struct StateAnchorNsArgs {
    /// The JSON request Lazaret built.
    pub request: String,
}

pub fn execute(args: StateAnchorNsArgs) -> anyhow::Result<i32> {
    crate::runtime::state_anchor_ns::main(&args.request)
}
