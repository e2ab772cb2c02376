//! The network denials panel's actions (issue #17): a refused destination is selected and
//! allowed for the Domain's run (`a`) or added to the profile (`s`), through the Domain's
//! coordinator — the same rules as `lazaret net allow [--save]`. What needs the developer's
//! word is asked first, in the panel: a private address (`y` allows it), and the exact lines a
//! save would change in the configuration file (`y` writes them). Any other key cancels.
//!
//! Under `default = "ask"` the connections and names the Domain's sidecar holds come first
//! (`?` rows, whatever the filter): `a` lets one through (for this run), `d` refuses it (for
//! this run, as `lazaret net deny`). `d` on a denial row refuses it for the run too — over
//! any allow, so it takes back one given for this run. The selection keeps to its row as the
//! lists change; when that row goes away (decided elsewhere, its time ran out) the next
//! action key only says so: nothing acts on a row the developer did not pick.

use super::app::App;
use crate::terminal::escape;
use lazaret_protocol::denial::DenialEntry;
use lazaret_protocol::held::HeldEntry;
use lazaret_protocol::messages::{AllowAnswer, SaveStep};

/// What the panel asks before acting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetConfirm {
    /// The Domain whose denial it is.
    pub domain: String,
    pub target: String,
    /// The developer confirmed a private address already.
    pub private: bool,
    pub step: ConfirmStep,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfirmStep {
    /// A private address: allow it (and then save, when that was asked)?
    Private { then_save: bool },
    /// Write these lines into the configuration file?
    Save { message: String, lines: Vec<String> },
}

/// The denials the panel shows (its filter applied), newest first.
pub fn shown<'a>(entries: &'a [DenialEntry], filter: &str) -> Vec<&'a DenialEntry> {
    let filter = filter.to_lowercase();
    entries
        .iter()
        .filter(|e| {
            filter.is_empty()
                || target_of(e).to_lowercase().contains(&filter)
                || e.rule.to_lowercase().contains(&filter)
                || e.protocol.contains(&filter)
        })
        .collect()
}

/// The destination as `lazaret net allow` takes it: the refused name, or `ADDR:PORT`.
pub fn target_of(e: &DenialEntry) -> String {
    match &e.name {
        Some(n) => n.clone(),
        None => format!("{}:{}", e.address, e.port),
    }
}

/// Whether the developer allowed `e`'s destination for this run since it was refused
/// (`run`: the run's rules as the coordinator reports them).
pub fn allowed_now(run: &[String], e: &DenialEntry) -> bool {
    let target = target_of(e);
    run.iter().any(|r| match (&e.name, r.strip_prefix("*.")) {
        (Some(name), Some(suffix)) => name
            .to_ascii_lowercase()
            .ends_with(&format!(".{}", suffix.to_ascii_lowercase())),
        (Some(name), None) => name.eq_ignore_ascii_case(r),
        (None, _) => *r == target || *r == e.address.to_string(),
    })
}

/// A row of the panel: a held connection or name (first), or a denial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row<'a> {
    Held(&'a HeldEntry),
    Denial(&'a DenialEntry),
}

/// Which row the developer selected, kept across list changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowId {
    held: bool,
    protocol: String,
    target: String,
}

impl Row<'_> {
    /// The destination as `lazaret net allow` / `deny` take it.
    pub fn target(&self) -> String {
        match self {
            Row::Held(h) => h.target.clone(),
            Row::Denial(e) => target_of(e),
        }
    }

    fn id(&self) -> RowId {
        RowId {
            held: matches!(self, Row::Held(_)),
            protocol: match self {
                Row::Held(h) => h.protocol.clone(),
                Row::Denial(e) => e.protocol.clone(),
            },
            target: self.target(),
        }
    }
}

/// The panel's rows: every held entry (oldest first), then the denials its filter shows.
pub fn rows<'a>(held: &'a [HeldEntry], denials: &'a [DenialEntry], filter: &str) -> Vec<Row<'a>> {
    held.iter()
        .map(Row::Held)
        .chain(shown(denials, filter).into_iter().map(Row::Denial))
        .collect()
}

/// What `a` (narrow) and `w` (`wide`) allow of a row (issue #31): a name's addresses on
/// tcp/443 only (a DNS query says no port; another port is held and asked again) or on every
/// port; an address's port, or every port of it.
pub fn allow_form(target: &str, protocol: &str, wide: bool) -> String {
    match (protocol, wide) {
        ("dns", false) => format!("{target}:443"),
        ("dns", true) => target.to_owned(),
        (_, true) => target
            .rsplit_once(':')
            .map_or(target, |(addr, _)| addr)
            .to_owned(),
        (_, false) => target.to_owned(),
    }
}

/// A held entry's row as the panel shows it (target escaped: the sandbox chose it):
/// `? 203.0.113.7:443 tcp  held 12s left`.
pub fn held_row(h: &HeldEntry, now_unix: u64) -> String {
    format!(
        "? {} {}  held {}s left",
        escape::visible(&h.target),
        escape::visible(&h.protocol),
        h.deadline.saturating_sub(now_unix)
    )
}

impl App {
    /// How the keyboard reaches the panel (`ctrl-b w` by default), for hints.
    pub fn denials_key(&self) -> String {
        let keymap = &self.settings.keymap;
        match keymap.keys(super::keymap::Action::Denials).first() {
            Some(k) => format!("{} {k}", keymap.prefix()),
            None => "the denials panel".into(),
        }
    }

    /// The panel's rows for the panes' Domain.
    pub fn denial_rows(&self) -> Vec<Row<'_>> {
        rows(&self.held, &self.denials, &self.denial_filter)
    }

    /// The selected row (clamped to what is shown).
    pub fn selected_row(&self) -> Option<Row<'_>> {
        let rows = self.denial_rows();
        let i = self.denial_selected.min(rows.len().saturating_sub(1));
        rows.get(i).copied()
    }

    /// The selected denial (clamped to what is shown); None on a held row.
    pub fn selected_denial(&self) -> Option<&DenialEntry> {
        match self.selected_row()? {
            Row::Denial(e) => Some(e),
            Row::Held(_) => None,
        }
    }

    pub(super) fn denial_up(&mut self) {
        self.denial_selected = self.denial_selected.saturating_sub(1);
        self.denial_moved = false;
    }

    pub(super) fn denial_down(&mut self) {
        let n = self.denial_rows().len();
        if self.denial_selected + 1 < n {
            self.denial_selected += 1;
        }
        self.denial_moved = false;
    }

    /// The selected row's identity, before the lists change ([`App::reselect`]).
    pub(super) fn selected_row_id(&self) -> Option<RowId> {
        self.selected_row().map(|r| r.id())
    }

    /// The lists changed: the selection follows its row. When that row is gone while the
    /// panel has the keyboard (and the developer did not decide it here), the next action
    /// key only says so.
    pub(super) fn reselect(&mut self, before: Option<RowId>) {
        let Some(before) = before else { return };
        let found = self.denial_rows().iter().position(|r| r.id() == before);
        match found {
            Some(i) => self.denial_selected = i,
            None => {
                let decided_here = self.denial_acted.as_ref() == Some(&before);
                if self.focus == super::app::Focus::Denials && !decided_here {
                    self.denial_moved = true;
                }
            }
        }
    }

    /// The selected row's target for an action key; None (and the panel says why) when
    /// nothing is selected or the selected row went away since the developer looked.
    fn target_to_act_on(&mut self) -> Option<String> {
        self.row_to_act_on().map(|(target, _)| target)
    }

    /// As [`Self::target_to_act_on`], with the row's protocol (`dns` for a name).
    fn row_to_act_on(&mut self) -> Option<(String, String)> {
        if std::mem::take(&mut self.denial_moved) {
            self.message(
                "⚠ the row you had selected went away (decided elsewhere, or its time ran out) \
                 and the selection moved: look, then press the key again"
                    .into(),
            );
            return None;
        }
        let Some(row) = self.selected_row() else {
            self.message("no destination selected".into());
            return None;
        };
        let (id, target) = (row.id(), row.target());
        let protocol = id.protocol.clone();
        self.denial_acted = Some(id);
        Some((target, protocol))
    }

    /// `a` (for this run, the narrow form), `w` (for this run, every port) or `s` (into the
    /// profile: first a preview of the lines), on a held row or a denial.
    pub(super) fn allow_selected(&mut self, save: bool, wide: bool) {
        let Some((target, protocol)) = self.row_to_act_on() else {
            return;
        };
        let target = if save {
            target
        } else {
            allow_form(&target, &protocol, wide)
        };
        let domain = self.current_plan().domain_id();
        let step = if save {
            SaveStep::Preview
        } else {
            SaveStep::No
        };
        self.send_allow(&domain, target, false, step);
    }

    /// `d`: refuses the selected destination for this run (a held one at once).
    pub(super) fn deny_selected(&mut self) {
        let Some(target) = self.target_to_act_on() else {
            return;
        };
        let domain = self.current_plan().domain_id();
        match self.links.get(&domain) {
            Some(link) => {
                self.message(format!("refusing {} …", escape::visible(&target)));
                link.deny_destination(target);
            }
            None => self.message("this Domain's coordinator is not connected".into()),
        }
    }

    /// The coordinator's answer to `d`.
    pub(super) fn destination_denied(&mut self, answer: AllowAnswer) {
        self.message(answer.message);
    }

    fn send_allow(&mut self, domain: &str, target: String, private: bool, save: SaveStep) {
        match self.links.get(domain) {
            Some(link) => {
                let what = match save {
                    SaveStep::Preview => "looking up what saving",
                    _ => "allowing",
                };
                self.message(format!("{what} {} …", escape::visible(&target)));
                link.allow_destination(target, private, save);
            }
            None => self.message("this Domain's coordinator is not connected".into()),
        }
    }

    /// A key while the panel asks: `y` goes on, anything else cancels.
    pub(super) fn confirm_key(&mut self, yes: bool) {
        let Some(c) = self.net_confirm.take() else {
            return;
        };
        if !yes {
            return self.message(format!("{}: nothing changed", escape::visible(&c.target)));
        }
        match c.step {
            ConfirmStep::Private { then_save } => {
                let save = if then_save {
                    SaveStep::Preview
                } else {
                    SaveStep::No
                };
                self.send_allow(&c.domain, c.target, true, save);
            }
            ConfirmStep::Save { .. } => {
                self.send_allow(&c.domain, c.target, c.private, SaveStep::Write)
            }
        }
    }

    /// The coordinator's answer.
    pub(super) fn destination_allowed(
        &mut self,
        domain: &str,
        target: String,
        save: SaveStep,
        answer: AllowAnswer,
        private: bool,
    ) {
        if !answer.ok && answer.needs_private {
            self.message(format!(
                "{} — y allows it, any other key cancels",
                answer.message
            ));
            self.net_confirm = Some(NetConfirm {
                domain: domain.to_owned(),
                target,
                private: false,
                step: ConfirmStep::Private {
                    then_save: save != SaveStep::No,
                },
            });
            return;
        }
        if answer.ok && save == SaveStep::Preview && !answer.lines.is_empty() {
            self.message(format!(
                "{}: y writes the lines shown in the denials panel, any other key cancels",
                answer.message
            ));
            self.net_confirm = Some(NetConfirm {
                domain: domain.to_owned(),
                target,
                private,
                step: ConfirmStep::Save {
                    message: answer.message,
                    lines: answer.lines,
                },
            });
            return;
        }
        self.message(answer.message);
    }
}

#[cfg(test)]
#[path = "denials_panel_tests.rs"]
mod tests;
