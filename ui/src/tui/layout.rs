//! Tabs and splits (sans-IO): each tab is a tree of splits whose leaves are panes; rectangles,
//! focus moves by direction, zoom and close are computed here and unit-tested.

use ratatui::layout::Rect;

pub type PaneId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Side by side.
    Right,
    /// One above the other.
    Down,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    Pane(PaneId),
    Split(Dir, Vec<Node>),
}

/// A tab: its split tree, the focused pane, whether it is zoomed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tab {
    pub root: Node,
    pub focus: PaneId,
    pub zoomed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Towards {
    Left,
    Right,
    Up,
    Down,
}

impl Tab {
    pub fn new(pane: PaneId) -> Tab {
        Tab {
            root: Node::Pane(pane),
            focus: pane,
            zoomed: false,
        }
    }

    /// Splits the focused pane, putting `pane` after it in `dir`, and focuses it.
    pub fn split(&mut self, dir: Dir, pane: PaneId) {
        split_at(&mut self.root, self.focus, dir, pane);
        self.focus = pane;
        self.zoomed = false;
    }

    /// Removes `pane`; returns false when it was the tab's last (the tab is then empty).
    pub fn remove(&mut self, pane: PaneId) -> bool {
        if self.root == Node::Pane(pane) {
            return false;
        }
        let order = self.panes();
        remove_from(&mut self.root, pane);
        collapse(&mut self.root);
        if self.focus == pane {
            let at = order.iter().position(|p| *p == pane).unwrap_or(0);
            let left = self.panes();
            self.focus = left
                .get(at.saturating_sub(1).min(left.len().saturating_sub(1)))
                .copied()
                .unwrap_or(self.focus);
        }
        self.zoomed = false;
        true
    }

    /// Panes in reading order.
    pub fn panes(&self) -> Vec<PaneId> {
        let mut out = Vec::new();
        collect(&self.root, &mut out);
        out
    }

    /// Where each pane goes in `area` (only the focused one when zoomed).
    pub fn rects(&self, area: Rect) -> Vec<(PaneId, Rect)> {
        if self.zoomed {
            return vec![(self.focus, area)];
        }
        let mut out = Vec::new();
        place(&self.root, area, &mut out);
        out
    }

    /// Focuses the next pane in reading order.
    pub fn focus_next(&mut self) {
        let panes = self.panes();
        if let Some(i) = panes.iter().position(|p| *p == self.focus) {
            self.focus = panes[(i + 1) % panes.len()];
        }
    }

    /// Focuses the nearest pane in direction `to` of the focused one, if any.
    pub fn focus_towards(&mut self, to: Towards, area: Rect) {
        let rects = {
            let mut out = Vec::new();
            place(&self.root, area, &mut out);
            out
        };
        let Some(&(_, from)) = rects.iter().find(|(p, _)| *p == self.focus) else {
            return;
        };
        let centre = |r: Rect| {
            (
                i32::from(r.x) * 2 + i32::from(r.width),
                i32::from(r.y) * 2 + i32::from(r.height),
            )
        };
        let (fx, fy) = centre(from);
        let best = rects
            .iter()
            .filter(|(p, _)| *p != self.focus)
            .filter(|(_, r)| match to {
                Towards::Left => r.right() <= from.x,
                Towards::Right => r.x >= from.right(),
                Towards::Up => r.bottom() <= from.y,
                Towards::Down => r.y >= from.bottom(),
            })
            .min_by_key(|(_, r)| {
                let (x, y) = centre(*r);
                (fx - x).abs() + (fy - y).abs()
            });
        if let Some(&(p, _)) = best {
            self.focus = p;
            self.zoomed = false;
        }
    }
}

fn split_at(node: &mut Node, target: PaneId, dir: Dir, pane: PaneId) -> bool {
    match node {
        Node::Pane(p) if *p == target => {
            *node = Node::Split(dir, vec![Node::Pane(target), Node::Pane(pane)]);
            true
        }
        Node::Pane(_) => false,
        Node::Split(d, children) => {
            let Some(i) = children.iter().position(|c| contains(c, target)) else {
                return false;
            };
            if *d == dir && children[i] == Node::Pane(target) {
                children.insert(i + 1, Node::Pane(pane));
                true
            } else {
                split_at(&mut children[i], target, dir, pane)
            }
        }
    }
}

fn contains(node: &Node, pane: PaneId) -> bool {
    match node {
        Node::Pane(p) => *p == pane,
        Node::Split(_, children) => children.iter().any(|c| contains(c, pane)),
    }
}

fn remove_from(node: &mut Node, pane: PaneId) {
    if let Node::Split(_, children) = node {
        children.retain(|c| *c != Node::Pane(pane));
        for c in children.iter_mut() {
            remove_from(c, pane);
        }
    }
}

/// Splits with one child become that child; empty splits disappear.
fn collapse(node: &mut Node) {
    if let Node::Split(_, children) = node {
        for c in children.iter_mut() {
            collapse(c);
        }
        children.retain(|c| !matches!(c, Node::Split(_, cs) if cs.is_empty()));
        if children.len() == 1 {
            let only = children.remove(0);
            *node = only;
        }
    }
}

fn collect(node: &Node, out: &mut Vec<PaneId>) {
    match node {
        Node::Pane(p) => out.push(*p),
        Node::Split(_, children) => children.iter().for_each(|c| collect(c, out)),
    }
}

fn place(node: &Node, area: Rect, out: &mut Vec<(PaneId, Rect)>) {
    match node {
        Node::Pane(p) => out.push((*p, area)),
        Node::Split(dir, children) => {
            let n = children.len().max(1) as u32;
            let (total, start) = match dir {
                Dir::Right => (u32::from(area.width), area.x),
                Dir::Down => (u32::from(area.height), area.y),
            };
            let mut at = u32::from(start);
            for (i, c) in children.iter().enumerate() {
                let i = i as u32;
                // Equal shares; the last child takes the remainder.
                let size = if i + 1 == n {
                    u32::from(start) + total - at
                } else {
                    total / n
                };
                let size = u16::try_from(size).unwrap_or(u16::MAX);
                let pos = u16::try_from(at).unwrap_or(u16::MAX);
                let r = match dir {
                    Dir::Right => Rect::new(pos, area.y, size, area.height),
                    Dir::Down => Rect::new(area.x, pos, area.width, size),
                };
                place(c, r, out);
                at += u32::from(size);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AREA: Rect = Rect {
        x: 0,
        y: 0,
        width: 100,
        height: 40,
    };

    #[test]
    fn splits_share_the_area_and_focus_the_new_pane() {
        let mut t = Tab::new(1);
        t.split(Dir::Right, 2);
        assert_eq!(t.focus, 2);
        assert_eq!(
            t.rects(AREA),
            vec![(1, Rect::new(0, 0, 50, 40)), (2, Rect::new(50, 0, 50, 40))]
        );
        t.split(Dir::Down, 3);
        assert_eq!(
            t.rects(AREA),
            vec![
                (1, Rect::new(0, 0, 50, 40)),
                (2, Rect::new(50, 0, 50, 20)),
                (3, Rect::new(50, 20, 50, 20))
            ]
        );
        // Same direction as the parent: a sibling, not a nested split.
        t.focus = 1;
        t.split(Dir::Right, 4);
        assert_eq!(t.panes(), vec![1, 4, 2, 3]);
        assert_eq!(t.rects(AREA)[0].1.width, 33);
        assert_eq!(t.rects(AREA)[2].1.width, 34);
    }

    #[test]
    fn focus_moves_to_the_nearest_pane_in_a_direction() {
        let mut t = Tab::new(1);
        t.split(Dir::Right, 2);
        t.split(Dir::Down, 3);
        t.focus_towards(Towards::Left, AREA);
        assert_eq!(t.focus, 1);
        t.focus_towards(Towards::Left, AREA);
        assert_eq!(t.focus, 1, "nothing further left");
        t.focus_towards(Towards::Right, AREA);
        assert_eq!(t.focus, 2, "the nearer of 2 and 3 by centre");
        t.focus_towards(Towards::Down, AREA);
        assert_eq!(t.focus, 3);
        t.focus_next();
        assert_eq!(t.focus, 1);
    }

    #[test]
    fn closing_collapses_splits_and_moves_focus() {
        let mut t = Tab::new(1);
        t.split(Dir::Right, 2);
        t.split(Dir::Down, 3);
        assert!(t.remove(3));
        assert_eq!(
            t.root,
            Node::Split(Dir::Right, vec![Node::Pane(1), Node::Pane(2)])
        );
        assert_eq!(t.focus, 2);
        assert!(t.remove(1));
        assert_eq!(t.root, Node::Pane(2));
        assert!(!t.remove(2), "the last pane empties the tab");
    }

    #[test]
    fn zoom_shows_only_the_focused_pane() {
        let mut t = Tab::new(1);
        t.split(Dir::Down, 2);
        t.zoomed = true;
        assert_eq!(t.rects(AREA), vec![(2, AREA)]);
    }
}
