//! `lazaret completions SHELL` and the man page (`lazaret __man`): both generated from the
//! CLI's own definitions, so they never disagree with `--help`.

use clap::{Args, CommandFactory};

/// Print a shell completion script for lazaret
///
/// Prints the completion script for SHELL on stdout. Load it into the current shell with
/// `source <(lazaret completions bash)` (zsh: `source <(lazaret completions zsh)`; fish:
/// `lazaret completions fish | source`). `scripts/setup` installs all three, and the man page,
/// under its prefix (/usr/local by default), where bash-completion, zsh, fish and man find them.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn execute(args: &CompletionsArgs) -> anyhow::Result<i32> {
    let mut cli = visible(super::Cli::command());
    clap_complete::generate(args.shell, &mut cli, "lazaret", &mut std::io::stdout());
    Ok(0)
}

/// The CLI without its hidden, internal verbs (`__coordinator`, …): clap's generators would
/// offer them.
fn visible(cli: clap::Command) -> clap::Command {
    let verbs: Vec<clap::Command> = cli
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .cloned()
        .collect();
    clap::Command::new("lazaret")
        .version(env!("CARGO_PKG_VERSION"))
        .args(cli.get_arguments().cloned())
        .subcommands(verbs)
}

/// Prints the man page (roff) on stdout, or writes it and one page per verb into DIR.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write lazaret.1 and lazaret-VERB.1 here instead.
    pub dir: Option<std::path::PathBuf>,
}

pub fn man(args: &ManArgs) -> anyhow::Result<i32> {
    if let Some(dir) = &args.dir {
        clap_mangen::generate_to(super::Cli::command(), dir)?;
        return Ok(0);
    }
    let mut out = Vec::new();
    clap_mangen::Man::new(super::Cli::command()).render(&mut out)?;
    use std::io::Write;
    std::io::stdout().write_all(&out)?;
    Ok(0)
}
