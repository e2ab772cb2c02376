//! `lazaret net`: the Domain's network policy — what it refused (`denials`), what it holds
//! under `default = "ask"` (`held`), and the destinations the developer allows or refuses for
//! the current run (`allow`, `deny`, `revoke`, `rules`).

mod denials;
mod held;
mod rules;

use crate::domain::layout::Layout;
use clap::{Args, Subcommand};

pub use denials::{reader_gone, utc};

/// Network policy of the Domain: what was refused, and what this run allows
#[derive(Debug, Args)]
pub struct NetArgs {
    #[command(subcommand)]
    pub command: NetCommand,
}

#[derive(Debug, Subcommand)]
pub enum NetCommand {
    Denials(denials::DenialsArgs),
    Allow(rules::AllowArgs),
    Revoke(rules::RevokeArgs),
    Deny(held::DenyArgs),
    Held(held::HeldArgs),
    Rules(rules::RulesArgs),
}

pub fn execute(layout: &Layout, args: NetArgs) -> anyhow::Result<i32> {
    let result = match args.command {
        NetCommand::Denials(args) => denials::denials(layout, &args),
        NetCommand::Allow(args) => rules::allow(layout, &args),
        NetCommand::Revoke(args) => rules::revoke(layout, &args),
        NetCommand::Deny(args) => held::deny(layout, &args),
        NetCommand::Held(args) => held::held(layout, &args),
        NetCommand::Rules(args) => rules::rules(layout, &args),
    };
    match result {
        // The reader went away (`| head`): that ends the listing, it is not a failure.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(0)
        }
        other => other,
    }
}
