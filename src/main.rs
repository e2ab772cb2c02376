//! The `lazaret` binary: the only place that exits the process. Exit status: the command's own
//! status for `run`, the documented ones of `approve` and `deny` (docs/escalation.md); 125 when
//! Lazaret itself fails (the message names the failing step).

use clap::Parser;
use lazaret::cli::{self, Cli, Command};
use lazaret::domain::layout::Layout;
use std::process::ExitCode;

/// Status when Lazaret itself fails (as podman and docker do), distinct from a command's.
const LAZARET_FAILED: u8 = 125;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Generated from the CLI's definitions only: nothing to set up, any user (setup runs them
    // as root to install the scripts and the man page).
    let generated = match &cli.command {
        Command::Completions(args) => Some(cli::completions::execute(args)),
        Command::Man(args) => Some(cli::completions::man(args)),
        _ => None,
    };
    if let Some(result) = generated {
        return match result {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                lazaret::say!("lazaret: error: {e:#}");
                ExitCode::from(LAZARET_FAILED)
            }
        };
    }
    // Refuse root before touching anything, not even a log file (SR-1). Commands that only
    // read (the host check, the configuration) are exempt.
    let refused = match cli.command {
        Command::Doctor(_) | Command::Config(_) | Command::Profile(_) => Ok(()),
        // Runs as root of podman's rootless user namespace, never as the host's root.
        Command::StateAnchorNs(_) => Ok(()),
        _ => lazaret::session::refuse_root(),
    };
    let result = refused.and_then(|_| Layout::from_env()).and_then(|layout| {
        lazaret::logging::init(&layout, cli.verbose);
        match cli.command {
            Command::Run(args) => cli::run::execute(&layout, args),
            Command::Tui(args) => cli::tui::execute(&layout, args),
            Command::State(args) => cli::state::execute(&layout, args),
            Command::Exec(args) => cli::exec::execute(&layout, args),
            Command::Ps(args) => cli::ps::execute(&layout, args),
            Command::Attach(args) => cli::attach::execute(&layout, args),
            Command::Kill(args) => cli::kill::execute(&layout, args),
            Command::Escalations(args) => cli::escalations::execute(&layout, args),
            Command::Events(args) => cli::events::execute(&layout, args),
            Command::Approve(args) => cli::decide::approve(&layout, args),
            Command::Deny(args) => cli::decide::deny(&layout, args),
            Command::Net(args) => cli::net::execute(&layout, args),
            Command::Port(args) => cli::port::execute(&layout, args),
            Command::Doctor(args) => cli::doctor::execute(&layout, args),
            Command::Config(args) => cli::config::execute(&layout, args),
            Command::Profile(args) => cli::profile::execute(&layout, args),
            Command::GitSentry(args) => cli::git_sentry::execute(&layout, args),
            Command::Coordinator(args) => cli::coordinator::execute(&layout, args),
            Command::StateAnchorNs(args) => cli::state_anchor_ns::execute(args),
            Command::Setup(args) => cli::setup_then_exec::execute(args),
            Command::Completions(_) | Command::Man(_) => Ok(0),
        }
    });
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(e) => {
            lazaret::terminal::raw_mode::restore();
            tracing::error!("{e:#}");
            lazaret::say!("lazaret: error: {e:#}");
            ExitCode::from(LAZARET_FAILED)
        }
    }
}
