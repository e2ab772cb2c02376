//! Copy mode's glue (issue #16): keys and mouse drags move the selection of
//! [`super::copy_mode`]; a copy reads the pane as it is drawn and queues OSC 52 for the host
//! terminal, written with the next frame.

use super::app::{App, Focus};
use super::copy_mode::{self, CopyMode, CopyStep};
use super::layout::PaneId;
use crossterm::event::{KeyEvent, MouseButton, MouseEventKind};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

impl App {
    /// `copy-mode`: a cursor over the focused pane, where the program's cursor is.
    pub(super) fn enter_copy_mode(&mut self) {
        let Some(id) = self.focused() else {
            return;
        };
        let Some(p) = self.panes.get(&id) else {
            return;
        };
        let cursor = p.emulator().cursor(p.scroll).unwrap_or((0, 0));
        self.copy = Some(CopyMode::new(id, cursor));
        self.focus = Focus::Panes;
    }

    /// A key while copy mode is on (the prefix keys still work).
    pub(super) fn copy_key(&mut self, k: &KeyEvent) {
        let Some(mut copy) = self.copy.take() else {
            return;
        };
        let Some(area) = self.pane_area(copy.pane) else {
            return;
        };
        match copy.key(k.code, (area.height, area.width)) {
            CopyStep::Stay => self.copy = Some(copy),
            CopyStep::Copy => self.copy_out(&copy, area),
            CopyStep::Leave => {}
        }
    }

    /// A mouse event over pane `id` at `cell` that its program did not take: a left drag
    /// selects, its release copies. Returns whether the event was used.
    pub(super) fn copy_mouse(
        &mut self,
        id: PaneId,
        kind: MouseEventKind,
        cell: (u16, u16),
    ) -> bool {
        match kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.copy = Some(CopyMode::pressed(id, cell));
                true
            }
            MouseEventKind::Drag(MouseButton::Left) => match self.copy.as_mut() {
                Some(c) if c.by_mouse && c.pane == id => {
                    c.cursor = cell;
                    true
                }
                _ => false,
            },
            MouseEventKind::Up(MouseButton::Left) => {
                let Some(copy) = self.copy.take_if(|c| c.by_mouse && c.pane == id) else {
                    return false;
                };
                // A click without a drag selects nothing.
                if copy.anchor != Some(copy.cursor) {
                    if let Some(area) = self.pane_area(id) {
                        self.copy_out(&copy, area);
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// Queues the selection for the host clipboard and says so.
    fn copy_out(&mut self, copy: &CopyMode, area: Rect) {
        let Some(p) = self.panes.get(&copy.pane) else {
            return;
        };
        let mut buf = Buffer::empty(area);
        super::draw::pane_content(&mut buf, area, p);
        let text = copy_mode::text(&buf, area, copy.span(area.width));
        self.host_bytes.extend(copy_mode::osc52(&text));
        self.message(format!(
            "copied {} characters to the host clipboard",
            text.chars().count()
        ));
    }

    /// The inner area pane `id` was last drawn in.
    fn pane_area(&self, id: PaneId) -> Option<Rect> {
        self.pane_rects
            .iter()
            .find(|(p, _)| *p == id)
            .map(|(_, r)| super::draw::inner(*r))
    }
}
