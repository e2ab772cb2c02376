//! Ignored Workspace State's reading of what the sandbox controls: the root `.gitignore`
//! (anticipated mount points) and git's `-z` listings of ignored paths (names the sandbox
//! chose), turned into workspace-relative mount targets.
#![no_main]

use lazaret::runtime::ignored_state::anticipate::candidate;
use lazaret::runtime::ignored_state::git::split_z;
use lazaret::runtime::ignored_state::{outermost, relative};
use lazaret_fuzz::Bytes;
use libfuzzer_sys::fuzz_target;
use std::path::{Component, Path};

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let gitignore = String::from_utf8_lossy(input.piece()).into_owned();
    let listing = input.rest();

    for line in gitignore.lines() {
        if let Some(name) = candidate(line) {
            assert!(!name.is_empty() && line.contains(name));
            assert!(!name.contains(['/', '*', '?', '[', '\\']));
            assert!(!matches!(name, "." | ".." | ".git"));
        }
    }

    let entries = split_z(listing);
    assert!(entries.iter().all(|e| !e.is_empty() && !e.contains(&0)));
    let mut paths = Vec::new();
    for raw in &entries {
        let Ok(rel) = relative(raw) else { continue };
        // A mount target inside the workspace, never beside or above it.
        assert!(
            rel.components().all(|c| matches!(c, Component::Normal(_))),
            "{rel:?}"
        );
        let inside = Path::new("/workspace").join(&rel);
        assert!(inside.starts_with("/workspace") && inside != Path::new("/workspace"));
        let text = rel.to_str().expect("UTF-8");
        assert!(!text.contains([',', '\n']));
        paths.push(rel);
    }
    let kept = outermost(paths.clone());
    // Sorted component-wise, a path's descendants follow it at once: comparing neighbours
    // shows that none holds another, and a path is covered only by the kept one before it.
    assert!(
        kept.windows(2).all(|w| w[0] < w[1]),
        "sorted, no duplicates"
    );
    assert!(
        kept.windows(2).all(|w| !w[1].starts_with(&w[0])),
        "one kept path holds another"
    );
    for p in &paths {
        let before = kept.partition_point(|k| k <= p);
        assert!(before > 0 && p.starts_with(&kept[before - 1]), "{p:?} lost");
    }
});
