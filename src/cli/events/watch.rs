//! One running Domain's coordinator, watched: a connection that is a control centre and does
//! nothing else (it starts and attaches nothing, so it keeps no Domain up, FR-6), carried by a
//! task that forwards what the coordinator says.

use lazaret_client::connection::{self, DomainAddress};
use lazaret_protocol::messages::CoordinatorMessage;
use tokio::sync::mpsc::UnboundedSender;

/// How the coordinator knows this client (its log, the trace).
pub const LABEL: &str = "events";

/// What a watching task reports, with the key of its Domain.
#[derive(Debug)]
pub enum Heard {
    Message(Box<CoordinatorMessage>),
    /// The connection ended (or could not be made): why.
    Gone(String),
}

/// Watches the coordinator at `address` until the connection ends.
pub fn spawn(
    address: DomainAddress,
    key: String,
    tx: UnboundedSender<(String, Heard)>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let why = follow(&address, &key, &tx).await;
        let _ = tx.send((key, Heard::Gone(why)));
    })
}

async fn follow(
    address: &DomainAddress,
    key: &str,
    tx: &UnboundedSender<(String, Heard)>,
) -> String {
    let mut conn = match connection::connect(address, LABEL).await {
        Ok(c) => c,
        Err(e) => return format!("{:#}", connection::join_err(e)),
    };
    if let Err(e) = conn.watch().await {
        return format!("{:#}", connection::join_err(e));
    }
    loop {
        match conn.next().await {
            Ok(CoordinatorMessage::Shutdown { reason }) => return reason,
            Ok(m) => {
                if tx
                    .send((key.to_owned(), Heard::Message(Box::new(m))))
                    .is_err()
                {
                    conn.close().await;
                    return "no longer watched".into();
                }
            }
            Err(e) => return format!("{:#}", connection::join_err(e)),
        }
    }
}
