//! The held-connection card's summary of several entries (issue #31: one card, never a queue
//! of them) and what `a` / `w` open, in words.

use super::{shown_protocol, shown_target, Card, Choice, Decider, Last, Outcome};
use super::{DROPPED, MAX_LISTED_TARGET, NAME_PORT};
use lazaret_protocol::held::HeldEntry;

impl Card {
    /// The summary card: the entries listed (escaped, each cut), how many more, and keys
    /// that decide all shown.
    pub(super) fn summary_text(&self, now_unix: u64) -> String {
        let mut rows = String::new();
        for e in &self.entries {
            // Escaped first, then cut: the line stays within 80 columns whatever it holds.
            let full = shown_target(&e.target);
            let mut shown: String = full.chars().take(MAX_LISTED_TARGET).collect();
            if full.chars().count() > MAX_LISTED_TARGET {
                shown.push('…');
            }
            rows.push_str(&format!(
                "│   {shown} ({})\r\n",
                shown_protocol(&e.protocol)
            ));
        }
        let n = self.entries.len();
        let more = if self.more > 0 {
            format!(
                "│ {} more held — not decided here: `lazaret net held` lists them\r\n",
                self.more
            )
        } else {
            String::new()
        };
        let first = self
            .entries
            .iter()
            .map(|e| e.deadline)
            .min()
            .unwrap_or(now_unix);
        let waiting = matches!(self.last, Last::Menu | Last::Working(_));
        let countdown = if waiting {
            format!(
                "│ the first is refused in {} s if nobody decides\r\n",
                first.saturating_sub(now_unix)
            )
        } else {
            String::new()
        };
        let last = match &self.last {
            Last::Menu => SUMMARY_MENU.to_owned(),
            Last::Working(Choice::Allow) => format!("allowing the {n} shown …"),
            Last::Working(Choice::AllowAnyPort) => {
                format!("allowing the {n} shown on every port …")
            }
            Last::Working(Choice::Deny) => format!("refusing the {n} shown …"),
            Last::Done(_) | Last::Gone(_) => super::settled(&self.last, "them"),
            Last::Left => "→ left waiting: `lazaret net held`, `lazaret net allow|deny` or \
                 lazaret tui decide them"
                .to_owned(),
        };
        let hint = if self.hinted && self.last == Last::Menu {
            DROPPED
        } else {
            ""
        };
        format!(
            "\r\n\x1b[0m\x1b[1;33m┌─ lazaret: the sandbox is waiting on {} held \
             destinations\x1b[0m\r\n\
             │ no network rule decides them (default = \"ask\"); {n} shown:\r\n\
             {rows}{more}\
             │ [a] allows each on its port (a name: on {NAME_PORT}); [w] every port\r\n\
             {countdown}└─ {last}\r\n{hint}",
            n + self.more
        )
    }
}

/// The summary card's keys.
const SUMMARY_MENU: &str = "\x1b[1m[a]\x1b[0m allow all shown  \x1b[1m[w]\x1b[0m every port  \
     \x1b[1m[d]\x1b[0m deny all shown  \x1b[1m[i]\x1b[0m leave them";

/// What `a` and `w` open for `e`, in words (the target escaped: the sandbox chose it).
pub fn opens(e: &HeldEntry) -> (String, String) {
    let target = shown_target(&e.target);
    if e.protocol == "dns" {
        return (
            format!(
                "{target}'s current addresses on {NAME_PORT} only — other names on them too \
                 (a CDN's other tenants)"
            ),
            "them on every port, TCP and UDP (the wide form)".to_owned(),
        );
    }
    match e.target.rsplit_once(':') {
        Some((addr, port)) => (
            format!(
                "port {} of {}, TCP and UDP",
                shown_target(port),
                shown_target(addr)
            ),
            format!("every port of {} (the wide form)", shown_target(addr)),
        ),
        None => (target.clone(), format!("every port of {target}")),
    }
}

/// Carries out `choice` for each of `entries`: one entry's outcome as it is, several summed up
/// (how many were done, the first failure).
pub(super) fn decide_all(decide: &Decider, entries: &[HeldEntry], choice: Choice) -> Outcome {
    if let [one] = entries {
        return decide(one, choice);
    }
    let (mut done, mut failed) = (0usize, Vec::new());
    for e in entries {
        match decide(e, choice) {
            Ok(_) => done += 1,
            Err(why) => failed.push(why),
        }
    }
    let verb = match choice {
        Choice::Allow => "allowed",
        Choice::AllowAnyPort => "allowed on every port",
        Choice::Deny => "refused",
    };
    match failed.first() {
        None => Ok(format!("{verb} {done} for this run")),
        Some(first) => Err(format!("{verb} {done}; {} failed: {first}", failed.len())),
    }
}
