//! `lazaret kill`: end a coordinator-owned session.

use crate::domain::layout::Layout;
use clap::Args;
use lazaret_client::{connection, locate};

/// End a session (its command is hung up)
///
/// Ends a session the Session Coordinator owns, attached or not. When it was the Domain's
/// last session, the Domain is torn down, as after the last `lazaret run`.
///
/// Examples:
///   lazaret kill 3fa9c1              by Session ID (a unique prefix is enough)
///   lazaret kill --last
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct KillArgs {
    /// Session ID or a unique prefix of it (see `lazaret ps`).
    #[arg(value_name = "SESSION", conflicts_with = "last")]
    pub session: Option<String>,
    /// The most recently started coordinator-owned session.
    #[arg(long)]
    pub last: bool,
}

pub fn execute(layout: &Layout, args: KillArgs) -> anyhow::Result<i32> {
    crate::session::refuse_root()?;
    if args.session.is_none() && !args.last {
        anyhow::bail!(
            "name the session to end (lazaret kill SESSION, see `lazaret ps`) or use --last"
        );
    }
    let found = locate::find(&layout.runtime_root()?, args.session.as_deref(), args.last)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut conn = connection::connect(&found.domain.address, "kill")
            .await
            .map_err(connection::join_err)?;
        conn.end(&found.session_id).await?;
        conn.close().await;
        anyhow::Ok(())
    })?;
    eprintln!(
        "lazaret: ended session {}",
        &found.session_id.as_str()[..12]
    );
    Ok(0)
}
