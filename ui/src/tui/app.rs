//! The TUI's state and what each event does to it. Drawing is in [`super::draw`]; the loop
//! that feeds events and renders is in [`super::run`].

use super::domain_view::DomainView;
use super::escalation_panel::EscalationPanel;
use super::event::AppEvent;
use super::event::AppSender;
use super::input;
use super::keymap::Action;
use super::layout::{Dir, PaneId, Tab, Towards};
use super::pane::Pane;
use super::settings::Settings;
use crate::terminal::line_editor::{self, Key, LineEditor};
use crossterm::event::{Event, KeyEvent};
use lazaret_client::target::{Launcher, Target};
use lazaret_protocol::denial::DenialEntry;
use lazaret_protocol::held::HeldEntry;
use ratatui::layout::Rect;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

/// Status messages kept.
const MESSAGES: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Panes,
    Escalations,
    Denials,
    DomainState,
}

pub struct App {
    pub plan: Arc<Target>,
    pub settings: Settings,
    pub events: AppSender,
    pub panes: BTreeMap<PaneId, Pane>,
    pub tabs: Vec<Tab>,
    pub tab: usize,
    next_pane: PaneId,
    pub focus: Focus,
    /// The prefix key was pressed; the next key is a command.
    pub prefix: bool,
    pub help: bool,
    pub panels: bool,
    pub escalations: EscalationPanel,
    pub denials: Vec<DenialEntry>,
    pub denial_filter: String,
    pub filtering: bool,
    /// What the panes' Domain's sidecar holds under `default = "ask"` (the denials panel's
    /// first rows).
    pub held: Vec<HeldEntry>,
    /// The selected row of the denials panel (held rows, then the denials its filter shows).
    pub denial_selected: usize,
    /// The selected row went away while the panel had the keyboard: the next action key only
    /// says so.
    pub denial_moved: bool,
    /// The row the developer last allowed or refused in the panel (its going away is no
    /// surprise).
    pub denial_acted: Option<super::denials_panel::RowId>,
    /// What the denials panel asks before acting (a private address, lines to save).
    pub net_confirm: Option<super::denials_panel::NetConfirm>,
    pub domain: DomainView,
    pub messages: VecDeque<String>,
    /// The status line's notes of the requests still pending (see [`super::app_requests`]).
    pub request_notes: super::app_requests::RequestNotes,
    pub quit: bool,
    /// The line asking where a new pane should run (`new-pane-elsewhere`).
    pub asking: Option<LineEditor>,
    /// The engine's services: resolving workspaces, opening links, where Domains publish.
    pub launcher: Arc<dyn Launcher>,
    /// Each Domain's state and denials as its coordinator last sent them (by Domain ID).
    pub domain_states: std::collections::HashMap<String, DomainView>,
    /// Domains whose coordinator went away, and how (see [`super::domain_end`]).
    pub domain_ends: std::collections::HashMap<String, super::domain_end::DomainEnd>,
    /// The last session start each Domain's coordinator refused (why), until one starts.
    pub start_failures: std::collections::HashMap<String, String>,
    pub domain_denials: std::collections::HashMap<String, Vec<DenialEntry>>,
    /// What each Domain's sidecar holds, as its coordinator last sent it (by Domain ID).
    pub domain_held: std::collections::HashMap<String, Vec<HeldEntry>>,
    /// Which held connections were alerted for.
    pub held_alerter: super::alerts::HeldAlerter,
    /// The Unix seconds the panels count a held connection's time left from; None: the host's
    /// clock (tests set it).
    pub clock: Option<u64>,
    /// Each session's activity as its coordinator last sent it (by session ID).
    pub activity: std::collections::HashMap<String, lazaret_protocol::activity::SessionActivity>,
    /// Whether the host terminal has focus (focus events; true until one says otherwise).
    pub host_focused: bool,
    /// Whether the last frame showed what changes with time alone: a session `working` (its
    /// marker turns `idle`), a held connection (its seconds left), a coordinator stopping.
    pub drawn_working: bool,
    /// Which panes were last alerted for (`[alerts]`).
    pub alerter: super::alerts::Alerter,
    /// Bytes of the TUI's own for the host terminal, written with the next frame: alerts
    /// (bell, Lazaret's notification) and copies to the clipboard (OSC 52).
    pub host_bytes: Vec<u8>,
    /// A selection being made in a pane (`copy-mode`, or a mouse drag).
    pub copy: Option<super::copy_mode::CopyMode>,
    /// The TUI's connections to the Domains it shows.
    pub links: Arc<super::links::Links>,
    /// Quitting was asked: the status line asks whether to end the sessions or detach.
    pub confirm_quit: bool,
    /// How the TUI ends: detach from its sessions (they keep running) or end them.
    pub detach_on_exit: bool,
    /// The session picker, when open.
    pub picker: Option<super::picker::Picker>,
    /// Something to draw (keys sent to a pane change nothing until its echo arrives).
    pub needs_render: bool,
    /// Where panes were last drawn (for mouse hits and focus moves).
    pub pane_rects: Vec<(PaneId, Rect)>,
    pub main_area: Rect,
    pub side_area: Rect,
    /// Tells this TUI's tabs from another's in the layout hints it leaves with its sessions.
    pub instance: String,
}

impl App {
    pub fn new(
        plan: Arc<Target>,
        settings: Settings,
        events: AppSender,
        launcher: Arc<dyn Launcher>,
        rt: tokio::runtime::Handle,
    ) -> App {
        let panels = settings.panels;
        App {
            links: super::links::Links::new(events.clone(), launcher.clone(), rt),
            confirm_quit: false,
            detach_on_exit: false,
            picker: None,
            plan,
            settings,
            events,
            panes: BTreeMap::new(),
            tabs: Vec::new(),
            tab: 0,
            next_pane: 1,
            focus: Focus::Panes,
            prefix: false,
            help: false,
            panels,
            escalations: EscalationPanel::default(),
            denials: Vec::new(),
            denial_filter: String::new(),
            held: Vec::new(),
            denial_selected: 0,
            denial_moved: false,
            denial_acted: None,
            net_confirm: None,
            filtering: false,
            domain: DomainView::default(),
            messages: VecDeque::new(),
            request_notes: Default::default(),
            quit: false,
            asking: None,
            launcher: launcher.clone(),
            domain_states: Default::default(),
            domain_ends: Default::default(),
            start_failures: Default::default(),
            domain_denials: Default::default(),
            domain_held: Default::default(),
            held_alerter: Default::default(),
            clock: None,
            activity: Default::default(),
            host_focused: true,
            drawn_working: false,
            alerter: Default::default(),
            host_bytes: Vec::new(),
            copy: None,
            needs_render: true,
            pane_rects: Vec::new(),
            main_area: Rect::default(),
            side_area: Rect::default(),
            instance: instance_id(),
        }
    }

    pub fn message(&mut self, text: String) {
        self.messages.push_front(text);
        self.messages.truncate(MESSAGES);
    }

    /// The focused pane of the current tab.
    pub fn focused(&self) -> Option<PaneId> {
        self.tabs.get(self.tab).map(|t| t.focus)
    }

    /// The plan new panes of the current tab use: the focused pane's.
    pub(super) fn current_plan(&self) -> Arc<Target> {
        self.focused()
            .and_then(|id| self.panes.get(&id))
            .and_then(|p| p.plan.clone())
            .unwrap_or_else(|| self.plan.clone())
    }

    fn new_pane(&mut self, size: (u16, u16)) -> PaneId {
        let plan = self.current_plan();
        self.new_pane_of(plan, size)
    }

    /// A fresh pane id.
    pub(super) fn take_pane_id(&mut self) -> PaneId {
        let id = self.next_pane;
        self.next_pane += 1;
        id
    }

    fn new_pane_of(&mut self, plan: Arc<Target>, size: (u16, u16)) -> PaneId {
        let id = self.take_pane_id();
        let pane = Pane::start(
            id,
            plan,
            size,
            self.settings.scrollback,
            self.events.clone(),
            self.links.clone(),
        );
        self.panes.insert(id, pane);
        id
    }

    /// Adds an already created pane (see [`Pane::offline`]) as a new tab, or as a split of the
    /// current tab's focused pane when `split` says so.
    pub fn add_pane(&mut self, pane: Pane, split: Option<Dir>) {
        let id = pane.id;
        self.next_pane = self.next_pane.max(id + 1);
        self.panes.insert(id, pane);
        match (split, self.tabs.get_mut(self.tab)) {
            (Some(dir), Some(tab)) => tab.split(dir, id),
            _ => {
                self.tabs.push(Tab::new(id));
                self.tab = self.tabs.len() - 1;
            }
        }
    }

    /// A new tab with one pane (of the focused pane's Domain).
    pub fn open_tab(&mut self) {
        let plan = self.current_plan();
        self.open_tab_of(plan);
    }

    /// A new tab of this TUI's own Domain running what it was asked to (`lazaret tui -- CMD`,
    /// else the profile's command), whichever pane has the focus.
    pub fn open_own_tab(&mut self) {
        self.open_tab_of(self.plan.clone());
    }

    fn open_tab_of(&mut self, plan: Arc<Target>) {
        let (rows, cols) = (
            self.main_area.height.max(3) - 2,
            self.main_area.width.max(3) - 2,
        );
        let id = self.new_pane_of(plan, (rows, cols));
        self.tabs.push(Tab::new(id));
        self.tab = self.tabs.len() - 1;
        self.focus = Focus::Panes;
    }

    /// `new-pane-elsewhere`: "DIR [PROFILE]" typed in the status line → a new tab there.
    pub(super) fn open_elsewhere(&mut self, text: &str) {
        let words = match line_editor::split(text) {
            Ok(w) if w.len() <= 2 => w,
            Ok(_) => {
                return self.message("new pane: give a directory and at most a profile".into())
            }
            Err(e) => return self.message(format!("new pane: {e}")),
        };
        let home = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .unwrap_or_default();
        let dir = match words[0].strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None if words[0] == "~" => home,
            None => std::path::PathBuf::from(&words[0]),
        };
        let dir = if dir.is_absolute() {
            dir
        } else {
            std::env::current_dir().unwrap_or_default().join(dir)
        };
        match self
            .launcher
            .resolve(&dir, words.get(1).map(String::as_str))
        {
            Ok(target) => self.open_tab_of(Arc::new(target)),
            Err(e) => self.message(format!("new pane in {}: {e:#}", dir.display())),
        }
    }

    /// Points the panels at the focused pane's Domain: its state and denials as its
    /// coordinator last sent them.
    pub fn follow_focus(&mut self) {
        let domain = self.current_plan().domain_id();
        if let Some(state) = self.domain_states.get(&domain) {
            if self.domain != *state {
                self.domain = state.clone();
            }
        } else if self.domain.domain_id != domain {
            self.domain = DomainView {
                domain_id: domain.clone(),
                ..DomainView::default()
            };
        }
        let denials = self
            .domain_denials
            .get(&domain)
            .cloned()
            .unwrap_or_default();
        let held = self.domain_held.get(&domain).cloned().unwrap_or_default();
        if self.denials != denials || self.held != held {
            let before = self.selected_row_id();
            self.denials = denials;
            self.held = held;
            self.reselect(before);
        }
    }

    /// Unix seconds now (see [`App::clock`]).
    pub fn now_unix(&self) -> u64 {
        self.clock
            .unwrap_or_else(|| super::app_activity::now_ms() / 1000)
    }

    /// Connections and names held now over every Domain the TUI shows.
    pub fn held_count(&self) -> usize {
        self.domain_held.values().map(Vec::len).sum()
    }

    fn split(&mut self, dir: Option<Dir>) {
        let Some(focus) = self.focused() else {
            return self.open_tab();
        };
        let rect = self
            .pane_rects
            .iter()
            .find(|(p, _)| *p == focus)
            .map(|(_, r)| *r)
            .unwrap_or(self.main_area);
        // New pane: along the longer side (cells are about twice as tall as wide).
        let dir = dir.unwrap_or(if rect.width >= rect.height * 2 {
            Dir::Right
        } else {
            Dir::Down
        });
        let size = match dir {
            Dir::Right => (
                rect.height.saturating_sub(2),
                (rect.width / 2).saturating_sub(2),
            ),
            Dir::Down => (
                (rect.height / 2).saturating_sub(2),
                rect.width.saturating_sub(2),
            ),
        };
        let id = self.new_pane(size);
        if let Some(tab) = self.tabs.get_mut(self.tab) {
            tab.split(dir, id);
        }
        self.focus = Focus::Panes;
    }

    pub(super) fn act(&mut self, action: Action) {
        let tab_count = self.tabs.len().max(1);
        let main = self.main_area;
        match action {
            Action::NewPane => self.split(None),
            Action::SplitRight => self.split(Some(Dir::Right)),
            Action::SplitDown => self.split(Some(Dir::Down)),
            Action::NewTab => self.open_tab(),
            Action::NewPaneElsewhere => self.asking = Some(LineEditor::new("")),
            Action::NextTab => self.tab = (self.tab + 1) % tab_count,
            Action::PrevTab => self.tab = (self.tab + tab_count - 1) % tab_count,
            Action::FocusLeft | Action::FocusRight | Action::FocusUp | Action::FocusDown => {
                let to = match action {
                    Action::FocusLeft => Towards::Left,
                    Action::FocusRight => Towards::Right,
                    Action::FocusUp => Towards::Up,
                    _ => Towards::Down,
                };
                if let Some(t) = self.tabs.get_mut(self.tab) {
                    t.focus_towards(to, main);
                }
                self.focus = Focus::Panes;
            }
            Action::NextNeed => self.jump_to_need(),
            Action::FocusNext => {
                if let Some(t) = self.tabs.get_mut(self.tab) {
                    t.focus_next();
                }
                self.focus = Focus::Panes;
            }
            Action::Zoom => {
                if let Some(t) = self.tabs.get_mut(self.tab) {
                    t.zoomed = !t.zoomed;
                }
            }
            Action::ClosePane => self.close_focused(),
            Action::Escalations => self.show_panel(Focus::Escalations),
            Action::Denials => self.show_panel(Focus::Denials),
            Action::DomainState => self.show_panel(Focus::DomainState),
            Action::TogglePanels => {
                self.panels = !self.panels;
                if !self.panels {
                    self.focus = Focus::Panes;
                }
            }
            Action::ScrollUp | Action::ScrollDown => {
                if let Some(p) = self.focused().and_then(|id| self.panes.get_mut(&id)) {
                    let page = usize::from(main.height.max(4) / 2);
                    let max = p.history_max(page);
                    p.scroll = if action == Action::ScrollUp {
                        (p.scroll + page).min(max)
                    } else {
                        p.scroll.saturating_sub(page)
                    };
                    p.want_history();
                }
            }
            Action::Help => self.help = true,
            Action::CopyMode => self.enter_copy_mode(),
            Action::Quit => self.ask_quit(),
            Action::Detach => self.detach_all(),
            Action::SessionPicker => self.open_picker(),
            Action::SendPrefix => {
                let prefix = *self.settings.keymap.prefix();
                let ev = KeyEvent::new(prefix.code, prefix.mods);
                self.key_to_pane(&ev);
            }
        }
    }

    fn show_panel(&mut self, which: Focus) {
        self.panels = true;
        if which == Focus::Escalations && self.focus != which {
            self.escalations.shown(Instant::now());
        }
        // The panel comes into view as it is; held connections wait: the first is selected.
        if which == Focus::Denials && self.focus != which {
            self.denial_moved = false;
            if !self.held.is_empty() {
                self.denial_selected = 0;
            }
        }
        self.focus = which;
    }

    /// Applies one event.
    pub fn handle(&mut self, event: AppEvent) {
        self.apply(event);
        self.follow_requests();
    }

    fn apply(&mut self, event: AppEvent) {
        let before = self.needs_render;
        self.needs_render = true;
        if let AppEvent::Input(Event::Key(k)) = &event {
            self.key(k);
            // A key sent to a pane draws nothing by itself.
            self.needs_render |= before;
            return;
        }
        match event {
            AppEvent::Input(Event::Key(_)) => {}
            AppEvent::Input(Event::Mouse(m)) => self.mouse(&m),
            AppEvent::Input(Event::Paste(text)) => {
                if self.focus == Focus::Escalations && self.escalations.editing.is_some() {
                    for c in text.chars().filter(|c| !c.is_control()) {
                        self.escalations.edit_key(&Key::Pasted(c), Instant::now());
                    }
                } else if let Some(p) = self.focused().and_then(|id| self.panes.get(&id)) {
                    let bytes = input::encode_paste(&text, &p.emulator().modes());
                    p.write(&bytes);
                }
            }
            AppEvent::Input(Event::FocusGained) => self.host_focused = true,
            AppEvent::Input(Event::FocusLost) => self.host_focused = false,
            AppEvent::Input(Event::Resize(..)) | AppEvent::Output => {}
            AppEvent::Link { domain, event } => self.link_event(&domain, event),
            AppEvent::Detach => self.detach_all(),
            AppEvent::Unreachable { domain, reason } => {
                self.coordinator_unreachable(&domain, &reason)
            }
            AppEvent::Ended { pane, result } => self.pane_ended(pane, result),
            AppEvent::Prompt {
                pane,
                prompt,
                reply,
            } => self.request_arrived(pane, &format!("pane {pane}"), prompt, reply),
            AppEvent::Withdrawn { request_id, reason } => self.withdrawn(&request_id, &reason),
            AppEvent::Message(m) => self.message(m),
        }
    }
}

/// A short ID of this TUI, different for each TUI of the user (time and process).
fn instance_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
        .unwrap_or(0);
    format!("{:08x}", nanos ^ std::process::id().rotate_left(16))
}
