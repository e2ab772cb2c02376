//! Showing sessions again (issue #14): on start, the detached sessions a TUI started in this
//! workspace's Domains ([`super::reattach::select`]), put back into the tabs and splits they
//! were in ([`super::layout_hint`]); any running session from the session picker.

use super::app::App;
use super::keymap::Action;
use super::layout::PaneId;
use super::layout::Tab;
use super::pane::Pane;
use lazaret_client::target::Target;
use lazaret_protocol::SessionId;
use std::collections::HashMap;
use std::sync::Arc;

impl App {
    /// Shows again the detached sessions TUIs started in the Domains of this TUI's workspace,
    /// in their earlier tabs and splits, and says in the status line how many detached sessions
    /// run in other workspaces (the session picker shows them). Returns how many were shown.
    pub fn reattach(&mut self) -> usize {
        let Ok(root) = self.launcher.runtime_root() else {
            return 0;
        };
        let Ok(domains) = lazaret_client::locate::domains(&root) else {
            return 0;
        };
        let found = super::reattach::select(
            domains.iter().map(|d| &d.status),
            &self.plan.address.workspace,
        );
        // The tabs first: each pane is attached at its size in them (a session narrowed after
        // its redraw would lose the top of a wrapped line).
        let places: Vec<(PaneId, String)> = found
            .here
            .iter()
            .map(|d| (self.take_pane_id(), d.layout_hint.clone()))
            .collect();
        let (mut tabs, current) = super::layout_hint::arrange(&places);
        let sizes: HashMap<PaneId, (u16, u16)> = tabs
            .iter()
            .flat_map(|t| t.rects(self.main_area))
            .map(|(id, r)| {
                let i = super::draw::inner(r);
                (id, (i.height, i.width))
            })
            .collect();
        let mut shown = 0;
        for ((pane, _), d) in places.iter().zip(found.here) {
            let size = sizes.get(pane).copied().unwrap_or((1, 1));
            let attached = SessionId::parse(&d.session_id)
                .map_err(anyhow::Error::from)
                .and_then(|id| {
                    let plan = self.plan_of_session(&d.workspace, &d.profile, &d.command)?;
                    self.attach_pane(*pane, size, plan, id, true)
                });
            match attached {
                Ok(()) => shown += 1,
                Err(e) => {
                    self.message(format!("showing session {}: {e:#}", d.session_id));
                    tabs.retain_mut(|t| !t.panes().contains(pane) || t.remove(*pane));
                }
            }
        }
        let first = self.tabs.len();
        self.tabs.extend(tabs);
        if shown > 0 {
            self.tab = (first + current.unwrap_or(0)).min(self.tabs.len() - 1);
        }
        let keys = match self.settings.keymap.keys(Action::SessionPicker).first() {
            Some(k) => format!("{} {k}", self.settings.keymap.prefix()),
            None => "the session picker".to_owned(),
        };
        if let Some(note) = super::reattach::elsewhere_note(found.elsewhere, &keys) {
            self.message(note);
        }
        shown
    }

    /// Opens a running session (whose command is `command`) in a new tab (or focuses the pane
    /// that shows it).
    pub fn open_session(
        &mut self,
        workspace: &std::path::Path,
        profile: &str,
        command: &[String],
        session: SessionId,
        owned: bool,
    ) -> anyhow::Result<()> {
        if let Some(pane) = self.pane_of(session.as_str()) {
            if let Some(t) = self.tabs.iter().position(|t| t.panes().contains(&pane)) {
                self.tab = t;
                self.tabs[t].focus = pane;
            }
            return Ok(());
        }
        let id = self.take_pane_id();
        let size = (
            self.main_area.height.max(3) - 2,
            self.main_area.width.max(3) - 2,
        );
        let plan = self.plan_of_session(workspace, profile, command)?;
        self.attach_pane(id, size, plan, session, owned)?;
        self.tabs.push(Tab::new(id));
        self.tab = self.tabs.len() - 1;
        Ok(())
    }

    /// What new panes split off (or opened next to) a pane showing a session of `workspace`'s
    /// `profile` Domain that runs `command` start (issue #32, D3). In this TUI's own Domain:
    /// what this TUI was asked to run (`lazaret tui -- CMD`, else the profile's command), as
    /// for every other pane of it — the developer asked this TUI for CMD, whoever started the
    /// session shown. In another Domain (another profile's sessions shown again, a session
    /// opened from the picker), which this TUI was asked nothing about: what that session
    /// runs, so a split there is one more of the same.
    fn plan_of_session(
        &self,
        workspace: &std::path::Path,
        profile: &str,
        command: &[String],
    ) -> anyhow::Result<Arc<Target>> {
        let mut plan = self.launcher.resolve(workspace, Some(profile))?;
        if plan.domain_id() == self.plan.domain_id() {
            return Ok(self.plan.clone());
        }
        if !command.is_empty() {
            plan.command = command.to_vec();
        }
        Ok(Arc::new(plan))
    }

    /// Pane `id` of `size`, attached to a running session, in no tab yet; new panes split off
    /// it start `plan`.
    fn attach_pane(
        &mut self,
        id: PaneId,
        size: (u16, u16),
        plan: Arc<Target>,
        session: SessionId,
        owned: bool,
    ) -> anyhow::Result<()> {
        let mut pane = Pane::attach(
            id,
            plan,
            self.links.clone(),
            session,
            size,
            self.settings.scrollback,
            self.events.clone(),
        );
        pane.owned = owned;
        self.panes.insert(id, pane);
        Ok(())
    }
}

#[cfg(test)]
#[path = "app_reattach_tests.rs"]
mod tests;
