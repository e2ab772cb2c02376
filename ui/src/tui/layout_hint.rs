//! Where a TUI had each session — its tab, its place in the tab's splits, focus — kept with the
//! session in its coordinator as an opaque layout hint (`set_layout_hint`, issue #14) when the
//! TUI detaches, so that the next TUI puts re-attached sessions back into the same tabs and
//! splits. Sans-IO.
//!
//! Format: `tui1:<instance>:<tab>:<path>:<flags>`. `instance` tells one TUI's tabs from
//! another's (two TUIs' first tabs are not one tab); `path` is the child index at each split
//! from the tab's root (`r1d0`: the second child of a side-by-side split, then the first of an
//! above-below split); flags `f` (the tab's focused pane) and `c` (the TUI's current tab).
//! Sessions whose splits are gone (ended) leave their siblings to fill the space. A hint that
//! is malformed, or that collides with another, puts its session in a tab of its own.

use super::layout::{Dir, Node, PaneId, Tab};
use lazaret_protocol::messages::layout_hint_ok;
use std::collections::BTreeMap;

const VERSION: &str = "tui1";

/// The hint of every pane in `tabs` (`current`: the index of the shown tab). A hint that would
/// be too long (a very deep split) is left out: its session comes back in a tab of its own.
pub fn encode(instance: &str, tabs: &[Tab], current: usize) -> Vec<(PaneId, String)> {
    let mut out = Vec::new();
    for (t, tab) in tabs.iter().enumerate() {
        walk(&tab.root, &mut String::new(), &mut |pane, path| {
            let focus = if pane == tab.focus { "f" } else { "" };
            let shown = if t == current { "c" } else { "" };
            out.push((
                pane,
                format!("{VERSION}:{instance}:{t}:{path}:{focus}{shown}"),
            ));
        });
    }
    out.retain(|(_, hint)| layout_hint_ok(hint));
    out
}

/// Tabs for re-attached panes from their hints (in the order of `panes` where nothing else
/// decides), and which of them to show (None: no hint said).
pub fn arrange(panes: &[(PaneId, String)]) -> (Vec<Tab>, Option<usize>) {
    let mut groups: BTreeMap<(String, u32), Group> = BTreeMap::new();
    let mut alone = Vec::new();
    for (pane, hint) in panes {
        let Some(place) = parse(hint) else {
            alone.push(*pane);
            continue;
        };
        let g = groups.entry(place.group).or_insert_with(|| Group {
            tree: Build::Empty,
            focus: None,
            current: false,
        });
        if insert(&mut g.tree, &place.path, *pane) {
            if place.focused {
                g.focus = Some(*pane);
            }
            g.current |= place.current;
        } else {
            alone.push(*pane);
        }
    }
    let mut tabs = Vec::new();
    let mut current = None;
    for g in groups.into_values() {
        let Some(root) = finish(g.tree) else { continue };
        let mut tab = Tab::new(0);
        tab.root = root;
        let order = tab.panes();
        tab.focus = g
            .focus
            .filter(|f| order.contains(f))
            .or(order.first().copied())
            .unwrap_or(0);
        if g.current && current.is_none() {
            current = Some(tabs.len());
        }
        tabs.push(tab);
    }
    tabs.extend(alone.into_iter().map(Tab::new));
    (tabs, current)
}

struct Group {
    tree: Build,
    focus: Option<PaneId>,
    current: bool,
}

/// A tab's split tree while it is rebuilt: children by their old index (some may be gone).
enum Build {
    Empty,
    Leaf(PaneId),
    Split(Dir, BTreeMap<usize, Build>),
}

struct Place {
    group: (String, u32),
    path: Vec<(Dir, usize)>,
    focused: bool,
    current: bool,
}

fn walk(node: &Node, path: &mut String, f: &mut impl FnMut(PaneId, &str)) {
    match node {
        Node::Pane(p) => f(*p, path),
        Node::Split(dir, children) => {
            for (i, c) in children.iter().enumerate() {
                let len = path.len();
                path.push(letter(*dir));
                path.push_str(&i.to_string());
                walk(c, path, f);
                path.truncate(len);
            }
        }
    }
}

fn letter(dir: Dir) -> char {
    match dir {
        Dir::Right => 'r',
        Dir::Down => 'd',
    }
}

fn parse(hint: &str) -> Option<Place> {
    let parts: Vec<&str> = hint.split(':').collect();
    let [VERSION, instance, tab, path, flags] = parts.as_slice() else {
        return None;
    };
    if instance.is_empty() || !flags.chars().all(|c| c == 'f' || c == 'c') {
        return None;
    }
    let mut steps = Vec::new();
    let mut rest = *path;
    while let Some(c) = rest.chars().next() {
        let dir = match c {
            'r' => Dir::Right,
            'd' => Dir::Down,
            _ => return None,
        };
        rest = &rest[1..];
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        steps.push((dir, rest[..digits].parse().ok()?));
        rest = &rest[digits..];
    }
    Some(Place {
        group: ((*instance).to_owned(), tab.parse().ok()?),
        path: steps,
        focused: flags.contains('f'),
        current: flags.contains('c'),
    })
}

/// Puts `pane` at `path`; false when the place is taken or the tree there has another shape.
fn insert(node: &mut Build, path: &[(Dir, usize)], pane: PaneId) -> bool {
    let Some(((dir, i), rest)) = path.split_first() else {
        if let Build::Empty = node {
            *node = Build::Leaf(pane);
            return true;
        }
        return false;
    };
    if let Build::Empty = node {
        *node = Build::Split(*dir, BTreeMap::new());
    }
    match node {
        Build::Split(d, children) if d == dir => {
            insert(children.entry(*i).or_insert(Build::Empty), rest, pane)
        }
        _ => false,
    }
}

/// The tree without the places of sessions that are gone; a split left with one child is that
/// child.
fn finish(node: Build) -> Option<Node> {
    match node {
        Build::Empty => None,
        Build::Leaf(p) => Some(Node::Pane(p)),
        Build::Split(dir, children) => {
            let mut kept: Vec<Node> = children.into_values().filter_map(finish).collect();
            match kept.len() {
                0 => None,
                1 => kept.pop(),
                _ => Some(Node::Split(dir, kept)),
            }
        }
    }
}

#[cfg(test)]
#[path = "layout_hint_tests.rs"]
mod tests;
