//! `lazaret git-sentry accept`: trust the current layout of this workspace's repository.

use crate::domain::layout::Layout;
use crate::domain::workspace::Workspace;
use crate::runtime::git_sentry::{guard, record};
use anyhow::Context;
use clap::{Args, Subcommand};

/// Git Sentry: the record of this repository's git control files
///
/// Lazaret records which git control files that redirect git or add configuration
/// (`.git` pointer files, `commondir`, `config.worktree` without extensions.worktreeConfig,
/// `objects/info/alternates` to other places) belong to the developer, and refuses to start
/// when one appears that it has not recorded (see docs/git-sentry.md).
#[derive(Debug, Args)]
pub struct GitSentryArgs {
    #[command(subcommand)]
    pub command: GitSentryCommand,
}

#[derive(Debug, Subcommand)]
pub enum GitSentryCommand {
    Accept(AcceptArgs),
}

/// Accept the current layout of this workspace's repository as yours
///
/// Records the git control files of the workspace around the current directory as set up by
/// you, for every Agent Profile. Only do this for files you made yourself (e.g.
/// `git init --separate-git-dir`, `git clone --shared`, a hand-made `commondir`): a file the
/// sandbox planted would redirect your own host git. Layouts that are not valid (a `commondir`
/// that is not the repository's common dir, a pointer to something that is not a Git
/// directory) cannot be accepted.
///
/// Example:
///   lazaret git-sentry accept
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct AcceptArgs {}

pub fn execute(layout: &Layout, args: GitSentryArgs) -> anyhow::Result<i32> {
    match args.command {
        GitSentryCommand::Accept(AcceptArgs {}) => {
            let cwd = std::env::current_dir().context("reading the current directory")?;
            let ws = Workspace::resolve(&cwd)?;
            let store = record::store_dir(&layout.storage_root());
            crate::domain::layout::ensure_private_dir(&layout.storage_root())?;
            let accepted = guard::accept(&ws.root, &store)?;
            if accepted.is_empty() {
                crate::say_out!(
                    "{}: nothing new to accept; the record is up to date",
                    ws.root.display()
                );
            }
            for a in accepted {
                crate::say_out!("accepted {a}");
            }
            Ok(0)
        }
    }
}
