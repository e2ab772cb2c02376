//! The coordinator's published status, read by `lazaret ps`: one JSON file per running Domain,
//! replaced atomically on every change.

use std::path::Path;

pub use lazaret_protocol::status::{DomainStatus, SessionStatus};

/// Writes the status atomically (a reader never sees half a file).
pub fn write(status: &DomainStatus, path: &Path) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(status).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, path)
}
/// Milliseconds since the Unix epoch, for status timestamps.
pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
