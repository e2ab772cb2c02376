//! The Network Sidecar's configuration and image on the real stack (SR-5, SR-6): conflicting
//! rules are refused before anything starts, and the sidecar image holds no shell. The egress
//! policy itself, as an agent inside would attack it, is tested in `tests/adversarial/network.rs`.

mod support;

use support::netns::BASE;
use support::Dev;

#[test]
fn an_equal_prefix_conflict_is_refused_naming_both_rules() {
    let dev = Dev::get();
    let ws = dev.workspace("conflict").with_profile(
        "conflict",
        &format!(
            "[profiles.conflict]\n{BASE}[profiles.conflict.network]\nallow = [\"203.0.113.0/24\"]\ndeny = [\"203.0.113.0/24\"]\n"
        ),
    );
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr.contains("allow 203.0.113.0/24") && r.stderr.contains("deny rule at line 6"),
        "{r:?}"
    );
    assert!(ws.containers().is_empty());
}

#[test]
fn the_sidecar_image_holds_no_shell() {
    let dev = Dev::get();
    let ws = dev.workspace("shellless");
    // A run builds (or finds) the sidecar image of this Lazaret build.
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let out = dev.sh(
        "set -e; img=$(podman images --format '{{.Repository}}:{{.Tag}}' localhost/lazaret/sidecar | head -1); \
         c=$(podman create --runtime runc \"$img\"); podman export \"$c\" | tar -t; podman rm \"$c\" >/dev/null",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = String::from_utf8_lossy(&out.stdout);
    assert!(files.contains("lazaret-sidecar"), "{files}");
    assert!(files.contains("usr/sbin/nft"), "{files}");
    for shell in ["bin/sh", "bin/bash", "bin/dash", "bin/busybox", "bin/ash"] {
        assert!(
            !files
                .lines()
                .any(|f| f.trim_end_matches('/').ends_with(shell)),
            "{shell} in the sidecar image:\n{files}"
        );
    }
    ws.assert_nothing_left();
}
