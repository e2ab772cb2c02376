//! Command-line interface: one file per verb.

pub mod attach;
pub mod completions;
pub mod config;
pub mod coordinator;
pub mod decide;
pub mod decide_report;
pub mod doctor;
pub mod escalations;
pub mod events;
pub mod exec;
pub mod git_sentry;
pub mod kill;
pub mod listed;
pub mod net;
pub mod port;
pub mod profile;
pub mod ps;
pub mod run;
pub mod safe_json;
pub mod setup_then_exec;
pub mod state;
pub mod state_anchor_ns;
pub mod this_domain;
pub mod tui;

use clap::{Parser, Subcommand};

/// Isolated execution of AI coding agents: a rootless gVisor sandbox with your project at
/// /workspace, network egress through a policy sidecar, nothing of your host beyond that.
#[derive(Debug, Parser)]
#[command(name = "lazaret", version, propagate_version = true)]
#[command(
    after_help = "Logs: $XDG_STATE_HOME/lazaret/lazaret.log (raise detail with -v, -vv).\n\
First time on this machine? Run `lazaret doctor` to check the host."
)]
pub struct Cli {
    /// More detail in the log (-v: debug, -vv: trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Run(run::RunArgs),
    Tui(tui::TuiArgs),
    State(state::StateArgs),
    Exec(exec::ExecArgs),
    Ps(ps::PsArgs),
    Attach(attach::AttachArgs),
    Kill(kill::KillArgs),
    Escalations(escalations::EscalationsArgs),
    Events(events::EventsArgs),
    Approve(decide::ApproveArgs),
    Deny(decide::DenyArgs),
    Net(net::NetArgs),
    Port(port::PortArgs),
    Doctor(doctor::DoctorArgs),
    Config(config::ConfigArgs),
    Profile(profile::ProfileArgs),
    GitSentry(git_sentry::GitSentryArgs),
    Completions(completions::CompletionsArgs),
    #[command(name = "__man", hide = true)]
    Man(completions::ManArgs),
    #[command(name = "__coordinator", hide = true)]
    Coordinator(coordinator::CoordinatorArgs),
    #[command(name = "__state-anchor", hide = true)]
    StateAnchorNs(state_anchor_ns::StateAnchorNsArgs),
    #[command(name = "__setup", hide = true)]
    Setup(setup_then_exec::SetupArgs),
}
