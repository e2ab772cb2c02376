//! `lazaret state`: see and reset what persists in a Domain (FR-11, DX-6, SR-14, OR-5).

use crate::domain::layout::Layout;
use crate::state::runner;
use clap::{Args, Subcommand};

/// See and reset what persists in a Domain: State Anchors and Ignored Workspace State
///
/// A Domain is chosen by the current workspace (and the default profile, or --profile), or by
/// --domain ID as `lazaret state list` shows it; never by a host path.
///
/// Examples:
///   lazaret state list                   every Domain on this machine, with sizes
///   lazaret state inspect                what this workspace's Domain changed in its image
///   lazaret state verify                 check the storage structure (Domain stopped)
///   lazaret state reset --path /usr      forget what was installed under /usr
///   lazaret state reset --all --yes      forget every State Anchor, without asking
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct StateArgs {
    #[command(subcommand)]
    pub command: StateCommand,
}

/// Which Domain.
#[derive(Debug, Args, Clone)]
pub struct Target {
    /// The Domain with this ID (see `lazaret state list`).
    #[arg(long, value_name = "ID")]
    pub domain: Option<String>,
    /// The Domain of this profile in the current workspace (default: the default profile).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// One JSON object on stdout (schema: docs/state.md); strings hold the raw values, every
    /// character outside printable ASCII a \uXXXX escape.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// Every Domain: profile, workspace, ID, active or not, its State Anchors and Ignored
    /// Workspace State with sizes
    List {
        /// One JSON object on stdout (schema: docs/state.md); strings hold the raw values, every
        /// character outside printable ASCII a \uXXXX escape.
        #[arg(long)]
        json: bool,
    },
    /// What a Domain's State Anchors changed against the image: added, modified, deleted
    /// files with sizes and owners (never their contents)
    Inspect {
        #[command(flatten)]
        target: Target,
        /// Most changes listed per anchor.
        #[arg(long, default_value_t = 10_000, value_name = "N")]
        limit: usize,
    },
    /// Structural check of a Domain's storage; needs the Domain stopped
    Verify {
        #[command(flatten)]
        target: Target,
    },
    /// Forget what persists under one persistent path (--path) or all of them (--all); needs
    /// the Domain stopped. Asks for confirmation unless --yes
    Reset {
        #[command(flatten)]
        target: Target,
        /// The container path of the State Anchor to reset (as in the profile's `persistent`).
        #[arg(
            long,
            value_name = "CONTAINER_PATH",
            conflicts_with = "all",
            required_unless_present = "all"
        )]
        path: Vec<String>,
        /// Every State Anchor of the Domain.
        #[arg(long)]
        all: bool,
        /// Do not ask (the safety conditions still apply).
        #[arg(long)]
        yes: bool,
    },
}

pub fn execute(layout: &Layout, args: StateArgs) -> anyhow::Result<i32> {
    crate::session::refuse_root()?;
    match args.command {
        StateCommand::List { json } => runner::list(layout, json),
        StateCommand::Inspect { target, limit } => runner::inspect(layout, &target, limit),
        StateCommand::Verify { target } => runner::verify(layout, &target),
        StateCommand::Reset {
            target,
            path,
            all,
            yes,
        } => runner::reset(layout, &target, &path, all, yes),
    }
}
