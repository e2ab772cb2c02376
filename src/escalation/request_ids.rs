//! Escalation Request IDs as the developer sees them (SR-8, DX-4): minted by the Session
//! Coordinator when it accepts a request, never chosen by the sandbox.
//!
//! The sandbox names its request file (`req/<id>.json`) and gets its result under the same
//! name; that name only routes the mailbox. Everything a decision names — the prompt, `lazaret
//! escalations`, `lazaret approve`, the TUI, the events — carries the ID minted here: 128
//! random bits as [`REQUEST_ID_HEX_LEN`] hex digits, whose first [`UNIQUE_PREFIX`] digits (what
//! people and scripts type) are never used twice in the coordinator's life. So a prefix the
//! developer read can never come to name another request of that coordinator, and the sandbox
//! cannot make a request whose ID resembles one the developer saw.

use lazaret_protocol::escalation::REQUEST_ID_HEX_LEN;
use std::collections::HashSet;
use std::sync::Mutex;

/// Hex digits of a minted ID that are unique in a coordinator's life.
pub const UNIQUE_PREFIX: usize = 8;

/// Mints the IDs of one coordinator.
#[derive(Default)]
pub struct RequestIds {
    used: Mutex<HashSet<String>>,
}

impl RequestIds {
    /// A fresh ID whose [`UNIQUE_PREFIX`] was never minted here before.
    pub fn mint(&self) -> std::io::Result<String> {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let id = random_hex()?;
            if used.insert(id[..UNIQUE_PREFIX].to_owned()) {
                return Ok(id);
            }
        }
    }
}

fn random_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; REQUEST_ID_HEX_LEN / 2];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_fresh_hex_with_prefixes_never_reused() {
        let ids = RequestIds::default();
        let mut prefixes = HashSet::new();
        for _ in 0..5000 {
            let id = ids.mint().unwrap_or_default();
            assert_eq!(id.len(), REQUEST_ID_HEX_LEN);
            assert!(
                lazaret_protocol::escalation::request_id_is_valid(&id),
                "{id}"
            );
            assert!(prefixes.insert(id[..UNIQUE_PREFIX].to_owned()), "{id}");
        }
    }
}
