//! The network denials panel's actions (issue #17): a refused destination is selected and
//! allowed for the Domain's run (`a`) or added to the profile (`s`), through the Domain's
//! coordinator — the same rules as `lazaret net allow [--save]`. What needs the developer's
//! word is asked first, in the panel: a private address (`y` allows it), and the exact lines a
//! save would change in the configuration file (`y` writes them). Any other key cancels.

use super::app::App;
use lazaret_protocol::denial::DenialEntry;
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

impl App {
    /// The selected denial (clamped to what is shown).
    pub fn selected_denial(&self) -> Option<&DenialEntry> {
        let shown = shown(&self.denials, &self.denial_filter);
        let i = self.denial_selected.min(shown.len().saturating_sub(1));
        shown.get(i).copied()
    }

    pub(super) fn denial_up(&mut self) {
        self.denial_selected = self.denial_selected.saturating_sub(1);
    }

    pub(super) fn denial_down(&mut self) {
        let n = shown(&self.denials, &self.denial_filter).len();
        if self.denial_selected + 1 < n {
            self.denial_selected += 1;
        }
    }

    /// `a` (for this run) or `s` (into the profile: first a preview of the lines).
    pub(super) fn allow_selected(&mut self, save: bool) {
        let Some(e) = self.selected_denial() else {
            return self.message("no denied destination selected".into());
        };
        let target = target_of(e);
        let domain = self.current_plan().domain_id();
        let step = if save {
            SaveStep::Preview
        } else {
            SaveStep::No
        };
        self.send_allow(&domain, target, false, step);
    }

    fn send_allow(&mut self, domain: &str, target: String, private: bool, save: SaveStep) {
        match self.links.get(domain) {
            Some(link) => {
                let what = match save {
                    SaveStep::Preview => "looking up what saving",
                    _ => "allowing",
                };
                self.message(format!(
                    "{what} {} …",
                    crate::terminal::escape::visible(&target)
                ));
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
            return self.message(format!(
                "{}: nothing changed",
                crate::terminal::escape::visible(&c.target)
            ));
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
