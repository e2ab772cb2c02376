use super::*;

fn oid(c: char) -> Oid {
    Oid::parse(&c.to_string().repeat(40)).unwrap_or_else(|| panic!("bad test oid {c}"))
}

fn refs(head: &str, list: &[(&str, char)]) -> Refs {
    Refs {
        refs: list
            .iter()
            .map(|(n, c)| (format!("refs/heads/{n}"), oid(*c)))
            .collect(),
        head: Some(Head::Branch(format!("refs/heads/{head}"))),
        dropped: Vec::new(),
    }
}

/// Linear history a ← b ← c ← d; `x`, `y` are on their own.
fn linear(a: &Oid, b: &Oid) -> bool {
    let rank = |o: &Oid| "abcd".find(o.as_str().chars().next().unwrap_or('?'));
    match (rank(a), rank(b)) {
        (Some(x), Some(y)) => x <= y,
        _ => a == b,
    }
}

fn run(base: &Refs, host: &Refs, sandbox: &Refs) -> Plan {
    plan(base, host, sandbox, &linear, "T")
}

/// Applies a plan to both sides as the IO layer would.
fn apply(p: &Plan, host: &mut Refs, sandbox: &mut Refs) {
    for (side, ups, head) in [
        (&mut *host, &p.host, &p.host_head),
        (&mut *sandbox, &p.sandbox, &p.sandbox_head),
    ] {
        for u in ups {
            assert_eq!(side.refs.get(&u.name), u.old.as_ref(), "CAS of {}", u.name);
            match &u.new {
                Some(n) => side.refs.insert(u.name.clone(), n.clone()),
                None => side.refs.remove(&u.name),
            };
        }
        if let Some(h) = head {
            side.head = Some(h.clone());
        }
    }
}

#[test]
fn an_agent_commit_fast_forwards_the_host_and_its_index() {
    let base = refs("main", &[("main", 'a')]);
    let host = base.clone();
    let sandbox = refs("main", &[("main", 'b')]);
    let p = run(&base, &host, &sandbox);
    assert_eq!(
        p.host,
        [Update {
            name: "refs/heads/main".into(),
            new: Some(oid('b')),
            old: Some(oid('a'))
        }]
    );
    assert!(p.sandbox.is_empty());
    assert_eq!(p.host_index, Some((Some(oid('a')), oid('b'))));
    assert_eq!(p.sandbox_index, None);
    assert_eq!(p.base, sandbox);
    assert!(matches!(&p.reports[..], [Report::AgentMoved { to, .. }] if *to == oid('b')));
}

#[test]
fn a_developer_commit_reaches_the_sandbox() {
    let base = refs("main", &[("main", 'a')]);
    let host = refs("main", &[("main", 'b')]);
    let p = run(&base, &host, &base);
    assert!(p.host.is_empty());
    assert_eq!(p.sandbox.len(), 1);
    assert_eq!(p.sandbox_index, Some((Some(oid('a')), oid('b'))));
    assert!(p.reports.is_empty());
}

#[test]
fn diverged_branches_keep_both_and_the_host_wins() {
    let base = refs("main", &[("main", 'a')]);
    let host = refs("main", &[("main", 'e')]);
    let sandbox = refs("main", &[("main", 'f')]);
    let (mut h, mut s) = (host.clone(), sandbox.clone());
    let p = run(&base, &host, &sandbox);
    apply(&p, &mut h, &mut s);
    assert_eq!(h.refs.get("refs/heads/main"), Some(&oid('e')));
    assert_eq!(s.refs.get("refs/heads/main"), Some(&oid('e')));
    assert_eq!(
        h.refs.get("refs/lazaret/agent/T/heads/main"),
        Some(&oid('f'))
    );
    assert!(matches!(&p.reports[..], [Report::Diverged { .. }]));
    assert_eq!(p.sandbox_index, Some((Some(oid('f')), oid('e'))));
}

#[test]
fn a_descendant_wins_when_both_moved() {
    let base = refs("main", &[("main", 'a')]);
    let p = run(
        &base,
        &refs("main", &[("main", 'b')]),
        &refs("main", &[("main", 'c')]),
    );
    assert_eq!(p.base.refs.get("refs/heads/main"), Some(&oid('c')));
    let q = run(
        &base,
        &refs("main", &[("main", 'c')]),
        &refs("main", &[("main", 'b')]),
    );
    assert_eq!(q.base.refs.get("refs/heads/main"), Some(&oid('c')));
    assert!(q.host.is_empty());
}

#[test]
fn a_branch_switch_inside_moves_the_host_head_and_index() {
    let base = refs("main", &[("main", 'a'), ("feat", 'c')]);
    let sandbox = refs("feat", &[("main", 'a'), ("feat", 'c')]);
    let p = run(&base, &base, &sandbox);
    assert_eq!(p.host_head, Some(Head::Branch("refs/heads/feat".into())));
    assert_eq!(p.host_index, Some((Some(oid('a')), oid('c'))));
    assert_eq!(p.sandbox_head, None);
}

#[test]
fn deleting_the_host_checked_out_branch_is_refused_and_others_are_kept() {
    let base = refs("main", &[("main", 'a'), ("old", 'b')]);
    let sandbox = Refs {
        refs: Default::default(),
        head: base.head.clone(),
        dropped: Vec::new(),
    };
    let (mut h, mut s) = (base.clone(), sandbox.clone());
    let p = run(&base, &base, &sandbox);
    apply(&p, &mut h, &mut s);
    assert_eq!(h.refs.get("refs/heads/main"), Some(&oid('a')));
    assert_eq!(s.refs.get("refs/heads/main"), Some(&oid('a')));
    assert_eq!(h.refs.get("refs/heads/old"), None);
    assert_eq!(
        h.refs.get("refs/lazaret/agent/T/heads/old"),
        Some(&oid('b'))
    );
}

#[test]
fn remote_tracking_references_flow_from_the_host_only() {
    let mut base = refs("main", &[("main", 'a')]);
    base.refs
        .insert("refs/remotes/origin/main".into(), oid('a'));
    let mut sandbox = base.clone();
    sandbox
        .refs
        .insert("refs/remotes/origin/main".into(), oid('e'));
    let p = run(&base, &base, &sandbox);
    assert!(p.host.is_empty());
    assert_eq!(p.sandbox[0].new, Some(oid('a')));
    assert!(wanted(&base, &sandbox).is_empty());
}

#[test]
fn rounds_converge_after_a_kill_between_the_two_transactions() {
    // The host's updates are one transaction, applied first; the sandbox's another. A kill
    // leaves none, the host's, or both applied, and the base unsaved: the next round from the
    // old base ends with the two sides equal, nothing of either side lost, and a round after
    // that has nothing to do.
    let base = refs("main", &[("main", 'a'), ("x", 'a'), ("gone", 'b')]);
    let host = refs(
        "main",
        &[("main", 'e'), ("x", 'a'), ("gone", 'b'), ("dev", 'c')],
    );
    let sandbox = refs("x", &[("main", 'f'), ("x", 'c'), ("new", 'd')]);
    let full = run(&base, &host, &sandbox);
    for applied in 0..3 {
        let (mut h, mut s) = (host.clone(), sandbox.clone());
        let mut partial = full.clone();
        if applied < 2 {
            partial.sandbox.clear();
            partial.sandbox_head = None;
        }
        if applied < 1 {
            partial.host.clear();
            partial.host_head = None;
        }
        apply(&partial, &mut h, &mut s);
        // The host's listing never shows the kept references.
        let listed = |r: &Refs| Refs {
            refs: r
                .refs
                .iter()
                .filter(|(n, _)| !n.starts_with("refs/lazaret/"))
                .map(|(n, o)| (n.clone(), o.clone()))
                .collect(),
            head: r.head.clone(),
            dropped: Vec::new(),
        };
        let again = plan(&base, &listed(&h), &s, &linear, "U");
        apply(&again, &mut h, &mut s);
        let strip = |r: &Refs| -> Vec<(String, Oid)> {
            r.refs
                .iter()
                .filter(|(n, _)| !n.starts_with("refs/lazaret/"))
                .map(|(n, o)| (n.clone(), o.clone()))
                .collect()
        };
        assert_eq!(strip(&h), strip(&s), "applied {applied}");
        assert_eq!(h.head, s.head, "applied {applied}");
        for o in sandbox.refs.values().chain(host.refs.values()) {
            // Kept as a reference or as an ancestor of one.
            assert!(
                h.refs.values().any(|v| linear(o, v)),
                "{o:?} lost (applied {applied})"
            );
        }
        let last = plan(&listed(&again.base), &listed(&h), &s, &linear, "V");
        assert!(last.is_empty(), "applied {applied}: {last:?}");
    }
}
