use super::*;

/// Tab 1: 1 | (2 over 3), 3 focused; tab 2: 4 alone. Tab 2 is shown.
fn tabs() -> Vec<Tab> {
    let mut a = Tab::new(1);
    a.split(Dir::Right, 2);
    a.split(Dir::Down, 3);
    vec![a, Tab::new(4)]
}

/// The hints with each pane renumbered (a new TUI gives re-attached panes new ids).
fn renumbered(hints: &[(PaneId, String)], skip: &[PaneId]) -> Vec<(PaneId, String)> {
    let mut out: Vec<_> = hints
        .iter()
        .filter(|(p, _)| !skip.contains(p))
        .map(|(p, h)| (p * 10, h.clone()))
        .collect();
    // The coordinators list sessions in their own order.
    out.reverse();
    out
}

#[test]
fn hints_name_the_tab_the_split_path_and_the_focus() {
    let hints = encode("ab12", &tabs(), 1);
    assert_eq!(
        hints,
        [
            (1, "tui1:ab12:0:r0:".to_owned()),
            (2, "tui1:ab12:0:r1d0:".to_owned()),
            (3, "tui1:ab12:0:r1d1:f".to_owned()),
            (4, "tui1:ab12:1::fc".to_owned()),
        ]
    );
}

#[test]
fn re_attached_sessions_get_their_tabs_splits_and_focus_back() {
    let hints = encode("ab12", &tabs(), 1);
    let (got, current) = arrange(&renumbered(&hints, &[]));
    assert_eq!(
        got.iter().map(|t| &t.root).collect::<Vec<_>>(),
        [
            &Node::Split(
                Dir::Right,
                vec![
                    Node::Pane(10),
                    Node::Split(Dir::Down, vec![Node::Pane(20), Node::Pane(30)])
                ]
            ),
            &Node::Pane(40)
        ]
    );
    assert_eq!((got[0].focus, got[1].focus), (30, 40));
    assert_eq!(current, Some(1));
}

#[test]
fn an_ended_session_leaves_its_place_to_its_siblings() {
    let hints = encode("ab12", &tabs(), 0);
    let (got, current) = arrange(&renumbered(&hints, &[3, 4]));
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].root,
        Node::Split(Dir::Right, vec![Node::Pane(10), Node::Pane(20)])
    );
    assert_eq!(got[0].focus, 10, "the focused one is gone: the first");
    assert_eq!(current, Some(0));
    let (got, _) = arrange(&renumbered(&hints, &[1]));
    assert_eq!(
        got[0].root,
        Node::Split(Dir::Down, vec![Node::Pane(20), Node::Pane(30)])
    );
}

#[test]
fn two_tuis_tabs_stay_apart() {
    let mut hints = encode("aaaa", &[Tab::new(1)], 0);
    hints.extend(encode("bbbb", &[Tab::new(2)], 0));
    let (got, _) = arrange(&hints);
    assert_eq!(got, [Tab::new(1), Tab::new(2)]);
}

#[test]
fn malformed_or_colliding_hints_give_a_tab_of_its_own() {
    let panes: Vec<(PaneId, String)> = [
        (1, "tui1:x:0:r0:f"),
        (2, "tui1:x:0:r0:"),                        // the same place as 1
        (3, "tui1:x:0:d1:"),                        // the root splits the other way
        (4, "tui1:x:0::"),                          // the root itself, which is a split
        (5, ""),                                    // no hint (a session shown by an older TUI)
        (6, "tui2:x:0:r1:"),                        // another version
        (7, "tui1::0:r1:"),                         // no instance
        (8, "tui1:x:0:q1:"),                        // not a direction
        (9, "tui1:x:0:r:"),                         // no index
        (11, "tui1:x:0:r99999999999999999999999:"), // no such index
        (12, "tui1:x:zero:r1:"),                    // not a tab number
        (13, "tui1:x:0:r1:z"),                      // unknown flag
        (14, "tui1:x:0:r1:f:extra"),                // too many fields
        (15, "tui1:x:0:r1:"),
    ]
    .iter()
    .map(|(p, h)| (*p, (*h).to_owned()))
    .collect();
    let (got, current) = arrange(&panes);
    assert_eq!(
        got[0].root,
        Node::Split(Dir::Right, vec![Node::Pane(1), Node::Pane(15)])
    );
    assert_eq!(got[0].focus, 1);
    let alone: Vec<PaneId> = got[1..].iter().map(|t| t.focus).collect();
    assert_eq!(alone, [2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14]);
    assert!(got[1..].iter().all(|t| t.root == Node::Pane(t.focus)));
    assert_eq!(current, None);
}

#[test]
fn a_hint_too_long_for_the_coordinator_is_left_out() {
    let mut t = Tab::new(1);
    for p in 2..40 {
        t.split(if p % 2 == 0 { Dir::Right } else { Dir::Down }, p);
    }
    let hints = encode("ab12", &[t], 0);
    assert!(hints.iter().any(|(p, _)| *p == 1));
    assert!(hints.len() < 39, "the deepest panes have no hint");
    assert!(hints.iter().all(|(_, h)| layout_hint_ok(h)));
}
