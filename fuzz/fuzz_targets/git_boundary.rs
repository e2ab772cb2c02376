//! The git boundary's reading of the sandbox's references (issue #30): the listing a process
//! the agent controls prints is parsed as hostile input, then planned against a base and the
//! host's references made from the same input. Properties: every name kept is one the boundary
//! carries and every dropped one is printable ASCII; applying a plan (the host's transaction,
//! then the sandbox's) leaves the two sides equal, and a round after it has nothing to do.
#![no_main]

use lazaret::runtime::git_boundary::reconcile::{plan, Update};
use lazaret::runtime::git_boundary::refs::{parse_listing, valid_name, Refs};
use lazaret_fuzz::Bytes;
use libfuzzer_sys::fuzz_target;

fn apply(side: &mut Refs, ups: &[Update]) {
    for u in ups {
        assert_eq!(side.refs.get(&u.name), u.old.as_ref(), "compare-and-swap of {}", u.name);
        match &u.new {
            Some(n) => side.refs.insert(u.name.clone(), n.clone()),
            None => side.refs.remove(&u.name),
        };
    }
}

/// What the host's listing would show (kept copies are never listed).
fn listed(r: &Refs) -> Refs {
    let mut r = r.clone();
    r.refs.retain(|n, _| !n.starts_with("refs/lazaret/"));
    r
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let base_text = b.piece();
    let host_text = b.piece();
    let sandbox_text = b.rest();
    let Ok(sandbox) = parse_listing(sandbox_text) else {
        return;
    };
    for n in sandbox.refs.keys() {
        assert!(valid_name(n), "{n:?}");
    }
    for d in &sandbox.dropped {
        assert!(d.bytes().all(|c| c.is_ascii_graphic() || c == b' '), "{d:?}");
    }
    let (Ok(base), Ok(host)) = (parse_listing(base_text), parse_listing(host_text)) else {
        return;
    };
    // One hash width across the three, as one repository has.
    let width = |r: &Refs| r.refs.values().next().map(|o| o.as_str().len());
    let widths: Vec<usize> = [&base, &host, &sandbox].iter().filter_map(|r| width(r)).collect();
    if widths.windows(2).any(|w| w[0] != w[1]) {
        return;
    }
    // Ancestry: a commit is an ancestor of another when its name sorts before (a total order).
    let before = |a: &lazaret::runtime::git_boundary::refs::Oid,
                  c: &lazaret::runtime::git_boundary::refs::Oid| a <= c;
    let p = plan(&base, &host, &sandbox, &before, "1");
    let (mut h, mut s) = (host.clone(), sandbox.clone());
    apply(&mut h, &p.host);
    if let Some(x) = &p.host_head {
        h.head = Some(x.clone());
    }
    apply(&mut s, &p.sandbox);
    if let Some(x) = &p.sandbox_head {
        s.head = Some(x.clone());
    }
    let remote = |n: &String| n.starts_with("refs/remotes/");
    let strip = |r: &Refs| -> Vec<(String, String)> {
        listed(r)
            .refs
            .iter()
            .filter(|(n, _)| !remote(n))
            .map(|(n, o)| (n.clone(), o.as_str().to_owned()))
            .collect()
    };
    assert_eq!(strip(&h), strip(&s), "the two sides differ after a round");
    if host.head.is_some() || sandbox.head.is_some() {
        assert_eq!(h.head, s.head, "HEAD differs after a round");
    }
    let again = plan(&p.base, &listed(&h), &s, &before, "2");
    assert!(again.host.is_empty(), "a second round moves the host: {again:?}");
});
