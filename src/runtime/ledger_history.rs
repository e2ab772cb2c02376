//! The denial ledger's history (issue #17): each run of a Domain has an ID, and the ledgers of
//! its earlier runs stay readable (`lazaret net denials --run previous|all|ID`).
//!
//! The running sidecar appends to `denials.jsonl` in its host-private runtime dir (see
//! [`super::denial_ledger`]); `run-id` next to it names the run. When the sidecar stops — and
//! again when the next one is created, for a run whose teardown never came (a crash, a reboot
//! before it) — the ledger is copied to `<Domain Root>/denials/<RUN>.jsonl` (persistent,
//! host-only). Copying is idempotent: the same run's file is rewritten. The history keeps the
//! newest [`MAX_RUNS`] runs within [`MAX_HISTORY_BYTES`]; older ones are deleted.

use super::denial_ledger::LEDGER;
use std::path::{Path, PathBuf};

/// The current run's ID, next to the ledger.
pub const RUN_ID_FILE: &str = "run-id";
/// Runs kept in the history (the current one not counted).
pub const MAX_RUNS: usize = 20;
/// Bytes the history may take; the oldest runs go first.
pub const MAX_HISTORY_BYTES: u64 = 64 << 20;

/// Where a Domain's earlier ledgers are kept.
pub fn history_dir(domain_root: &Path) -> PathBuf {
    domain_root.join("denials")
}

/// A run ID: its start in UTC and a random suffix, so IDs sort by start
/// (`20261205T105300Z-3fa9`).
pub fn run_id(unix_secs: u64, random: u16) -> String {
    let t = crate::utc::utc(unix_secs);
    let compact: String = t
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == ' ')
        .map(|c| if c == ' ' { 'T' } else { c })
        .collect();
    format!("{compact}Z-{random:04x}")
}

/// Whether `s` is a run ID (what the history dir may hold; anything else there is ignored).
pub fn is_run_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 21
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'T'
        && b[9..15].iter().all(u8::is_ascii_digit)
        && &b[15..17] == b"Z-"
        && b[17..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// The run of the ledger in `status_dir`, if it has one.
pub fn current_run(status_dir: &Path) -> Option<String> {
    let id = std::fs::read_to_string(status_dir.join(RUN_ID_FILE)).ok()?;
    let id = id.trim();
    is_run_id(id).then(|| id.to_owned())
}

/// Starts a new run in `status_dir`: writes its ID.
pub fn new_run(status_dir: &Path) -> std::io::Result<String> {
    let mut random = [0u8; 2];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = std::io::Read::read_exact(&mut f, &mut random);
    }
    let id = run_id(super::denial_ledger::unix_now(), u16::from_be_bytes(random));
    std::fs::write(status_dir.join(RUN_ID_FILE), format!("{id}\n"))?;
    Ok(id)
}

/// Copies the ledger of `status_dir`'s run into the history (nothing when there is no ledger
/// or no run ID), then trims the history.
pub fn archive(status_dir: &Path, history: &Path) -> std::io::Result<()> {
    let ledger = status_dir.join(LEDGER);
    let Some(run) = current_run(status_dir) else {
        return Ok(());
    };
    if !ledger.exists() {
        return Ok(());
    }
    crate::domain::layout::ensure_private_dir(history).map_err(std::io::Error::other)?;
    let to = history.join(format!("{run}.jsonl"));
    let tmp = history.join(format!(".{run}.jsonl.tmp"));
    std::fs::copy(&ledger, &tmp)?;
    std::fs::rename(&tmp, &to)?;
    trim(history, MAX_RUNS, MAX_HISTORY_BYTES)
}

/// Deletes the oldest runs beyond `runs` or `bytes`.
pub fn trim(history: &Path, runs: usize, bytes: u64) -> std::io::Result<()> {
    let mut kept = stored_runs(history);
    kept.reverse(); // newest first
    let mut total = 0u64;
    for (i, (_, path)) in kept.iter().enumerate() {
        total += std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if i >= runs || (i > 0 && total > bytes) {
            std::fs::remove_file(path)?;
        }
    }
    Ok(())
}

/// The runs in the history, oldest first.
pub fn stored_runs(history: &Path) -> Vec<(String, PathBuf)> {
    let mut runs: Vec<(String, PathBuf)> = std::fs::read_dir(history)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_suffix(".jsonl")?;
            is_run_id(id).then(|| (id.to_owned(), e.path()))
        })
        .collect();
    runs.sort();
    runs
}

/// Every run with a readable ledger, oldest first: the history's, and the current one from
/// the runtime dir (which wins over a copy of itself in the history).
pub fn runs(status_dir: &Path, history: &Path) -> Vec<(String, PathBuf)> {
    let mut runs = stored_runs(history);
    if let Some(current) = current_run(status_dir) {
        let ledger = status_dir.join(LEDGER);
        runs.retain(|(id, _)| *id != current);
        if ledger.exists() {
            runs.push((current, ledger));
        }
        runs.sort();
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_sort_by_start_and_are_recognised() {
        let a = run_id(1_795_000_000, 0x3fa9);
        assert_eq!(a, "20261118T110640Z-3fa9");
        assert!(is_run_id(&a));
        assert!(run_id(1_795_000_001, 0) > a);
        for bad in [
            "",
            "x",
            "20261118T110640Z-3FA9",
            "../../etc/passwd",
            "20261118T110640Z-3fa9.jsonl",
        ] {
            assert!(!is_run_id(bad), "{bad}");
        }
    }

    #[test]
    fn runs_are_archived_listed_and_trimmed() -> std::io::Result<()> {
        let t = tempfile::tempdir()?;
        let (status, history) = (t.path().join("status"), t.path().join("history"));
        std::fs::create_dir_all(&status)?;
        // No run yet: nothing to archive.
        archive(&status, &history)?;
        assert!(runs(&status, &history).is_empty());
        let mut ids = Vec::new();
        for n in 0..4u64 {
            let id = run_id(1_795_000_000 + n, 1);
            std::fs::write(status.join(RUN_ID_FILE), format!("{id}\n"))?;
            std::fs::write(status.join(LEDGER), format!("run {n}\n"))?;
            archive(&status, &history)?;
            archive(&status, &history)?; // idempotent
            ids.push(id);
        }
        let all = runs(&status, &history);
        assert_eq!(
            all.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
            ids
        );
        // The current run is read from the runtime dir, not its copy.
        assert_eq!(all[3].1, status.join(LEDGER));
        std::fs::write(history.join("not-a-run.jsonl"), "x")?;
        trim(&history, 2, u64::MAX)?;
        let kept = stored_runs(&history);
        assert_eq!(
            kept.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
            ids[2..]
        );
        trim(&history, 10, 1)?;
        assert_eq!(
            stored_runs(&history).len(),
            1,
            "the newest run stays whatever its size"
        );
        Ok(())
    }
}
