//! Domain-scoped state on the real stack: Ignored Workspace State (SR-13, FR-4, FR-9), State
//! Anchors (§3.4, DX-2) across launches and base-image changes, a profile's first-launch
//! setup, and host configuration that is never mounted (SR-2).

mod support;

use support::{Dev, TestWorkspace};

const GITIGNORE: &str = "node_modules/\n/target\n*.log\n";

fn with_ignored_content(ws: &TestWorkspace) {
    ws.host_sh(&format!(
        "printf '{GITIGNORE}' > .gitignore && git add .gitignore && \
         git -c user.name=t -c user.email=t@l commit -qm ignore && \
         mkdir -p node_modules target && echo host-secret > node_modules/host.js && \
         echo host-build > target/host-bin"
    ));
}

#[test]
fn ignored_paths_come_from_domain_state_and_persist() {
    let dev = Dev::get();
    let ws = dev.workspace("ignored");
    with_ignored_content(&ws);
    let first = ws.run(&[
        "sh",
        "-c",
        "ls -A node_modules target | tr '\\n' ' '; echo; \
         cat node_modules/host.js 2>/dev/null && echo HOST_VISIBLE; \
         echo dep > node_modules/dep.js; echo out > target/out; echo new > fresh.log; \
         git status --porcelain | wc -l",
    ]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert!(!first.stdout.contains("HOST_VISIBLE"), "{first:?}");
    assert!(
        !first.stdout.contains("host.js"),
        "host content listed: {first:?}"
    );
    assert!(first.stdout.ends_with("0\n"), "git sees changes: {first:?}");
    // The host keeps its own content; the sandbox's writes went to Domain state.
    assert_eq!(
        ws.host_sh("ls -A node_modules target | tr '\\n' ' '"),
        "node_modules: host.js  target: host-bin "
    );
    let stored = ws.host_sh(&format!(
        "ls -A '{}/ignored/node_modules'",
        ws.domain_root().display()
    ));
    assert_eq!(stored, "dep.js\n");
    // An ignored path first created while the sandbox runs lands in the workspace (documented)...
    assert_eq!(ws.host_sh("cat fresh.log"), "new\n");
    let second = ws.run(&[
        "sh",
        "-c",
        "cat node_modules/dep.js target/out; wc -c < fresh.log",
    ]);
    assert_eq!(second.code, Some(0), "{second:?}");
    // ...and from the next launch on it is isolated like the others.
    assert_eq!(second.stdout, "dep\nout\n0\n", "{second:?}");
    ws.assert_nothing_left();
}

#[test]
fn an_absent_ignored_dependency_dir_gets_a_mount_point_so_writes_stay_in_domain_state() {
    let dev = Dev::get();
    let ws = dev.workspace("anticipated");
    ws.host_sh(&format!(
        "printf '{GITIGNORE}' > .gitignore && git add .gitignore && \
         git -c user.name=t -c user.email=t@l commit -qm ignore"
    ));
    let r = ws.run(&["sh", "-c", "mkdir -p node_modules/pkg && echo x > node_modules/pkg/index.js && echo built > target/app"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    // The developer is told about the directories created in the workspace.
    for dir in ["node_modules/", "target/"] {
        assert!(
            r.stderr
                .contains(&format!("created the empty, Git-ignored directory {dir}")),
            "{r:?}"
        );
    }
    assert_eq!(
        ws.host_sh("find node_modules target | sort | tr '\\n' ' '"),
        "node_modules target "
    );
    ws.assert_nothing_left();
}

#[test]
fn isolation_turned_off_by_trusted_configuration_shares_ignored_paths() {
    let dev = Dev::get();
    let ws = dev.workspace("shared").with_profile(
        "sharing",
        "[profiles.sharing]\nimage = \"localhost/lazaret/base:bookworm\"\ncommand = [\"bash\"]\nisolate_ignored = false\n",
    );
    with_ignored_content(&ws);
    let r = ws.run(&[
        "sh",
        "-c",
        "cat node_modules/host.js && echo dep > node_modules/dep.js",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "host-secret\n");
    assert_eq!(ws.host_sh("cat node_modules/dep.js"), "dep\n");
    ws.assert_nothing_left();
}

#[test]
fn a_package_installed_inside_is_there_on_the_next_launch() {
    let dev = Dev::get();
    let ws = dev.workspace("anchor");
    // A real Debian package, built on the host, installed by dpkg inside the sandbox.
    ws.host_sh(
        "mkdir -p pkg/DEBIAN pkg/usr/bin && printf '#!/bin/sh\\necho lazaret-hello works\\n' > pkg/usr/bin/lazaret-hello && \
         chmod 755 pkg/usr/bin/lazaret-hello && \
         printf 'Package: lazaret-hello\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: t <t@l>\\nDescription: test\\n' > pkg/DEBIAN/control && \
         dpkg-deb -b pkg lazaret-hello.deb >/dev/null",
    );
    let install = ws.run(&["sh", "-c", "dpkg -i lazaret-hello.deb >/dev/null && echo pip-like > /usr/local/lib/marker && lazaret-hello"]);
    assert_eq!(install.code, Some(0), "{install:?}");
    let next = ws.run(&[
        "sh",
        "-c",
        "lazaret-hello && dpkg -s lazaret-hello | grep Status && cat /usr/local/lib/marker",
    ]);
    assert_eq!(next.code, Some(0), "{next:?}");
    assert_eq!(
        next.stdout,
        "lazaret-hello works\nStatus: install ok installed\npip-like\n"
    );
    ws.assert_nothing_left();
}

/// Builds `tag` from the base image with /opt/anchored/{unmod,mod,gone}.txt saying `version`.
fn build_test_image(dev: &Dev, tag: &str, version: &str) {
    let out = dev.sh(&format!(
        "set -e; d=$(mktemp -d); mkdir -p $d/anchored; for f in unmod mod gone; do echo {version} > $d/anchored/$f.txt; done; \
         [ {version} = v2 ] && echo v2 > $d/anchored/new.txt; \
         c=$(podman create --runtime runc localhost/lazaret/base:bookworm true); \
         podman cp $d/anchored $c:/opt/anchored >/dev/null; podman commit -q $c {tag} >/dev/null; \
         podman rm $c >/dev/null; rm -rf $d"
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn after_a_base_image_change_unmodified_files_follow_it_and_modified_ones_stay() {
    let dev = Dev::get();
    let tag = format!("localhost/lazaret-test/anchor:{}", std::process::id());
    build_test_image(&dev, &tag, "v1");
    let ws = dev.workspace("rebase").with_profile(
        "anchored",
        &format!("[profiles.anchored]\nimage = \"{tag}\"\ncommand = [\"bash\"]\npersistent = [\"/opt/anchored\"]\n"),
    );
    let first = ws.run(&["sh", "-c", "cat /opt/anchored/mod.txt && echo mine > /opt/anchored/mod.txt && rm /opt/anchored/gone.txt"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(first.stdout, "v1\n");
    build_test_image(&dev, &tag, "v2");
    let second = ws.run(&[
        "sh",
        "-c",
        "cd /opt/anchored && cat unmod.txt mod.txt new.txt; ls",
    ]);
    let _ = dev.sh(&format!(
        "podman rmi -f {tag} >/dev/null 2>&1; podman image prune -f >/dev/null 2>&1"
    ));
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(
        second.stdout, "v2\nmine\nv2\nmod.txt\nnew.txt\nunmod.txt\n",
        "{second:?}"
    );
    ws.assert_nothing_left();
}

#[test]
fn a_profiles_setup_runs_on_the_first_launch_only() {
    let dev = Dev::get();
    let ws = dev.workspace("setup").with_profile(
        "withsetup",
        "[profiles.withsetup]\nimage = \"localhost/lazaret/base:bookworm\"\ncommand = [\"bash\"]\npersistent = [\"/opt\"]\n\
         [profiles.withsetup.setup]\ncommand = [\"sh\", \"-c\", \"echo installing-tool; mkdir -p /opt/tool && echo ok > /opt/tool/ready\"]\ncreates = \"/opt/tool/ready\"\n",
    );
    let first = ws.run(&["cat", "/opt/tool/ready"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(
        first.stdout, "ok\n",
        "setup output stays off stdout: {first:?}"
    );
    // The first launch is announced with its log, where the setup's own output goes (issue
    // #32: the terminal shows its phases and the end, the log keeps every line).
    assert!(
        first.stderr.contains("setup of profile \"withsetup\" done"),
        "progress shown: {first:?}"
    );
    let log = first
        .stderr
        .split("its output: ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("the setup's log named: {first:?}"));
    let logged = std::fs::read_to_string(log).unwrap_or_default();
    assert!(logged.contains("installing-tool"), "{log}: {logged:?}");
    let second = ws.run(&["cat", "/opt/tool/ready"]);
    assert_eq!(second.code, Some(0), "{second:?}");
    assert!(!second.stderr.contains("installing-tool"), "{second:?}");
    ws.assert_nothing_left();
}

#[test]
fn configuration_inside_the_workspace_is_refused_and_errors_name_file_and_line() {
    let dev = Dev::get();
    let ws = dev.workspace("cfg");
    // Reached through a symlink from the real config dir: still refused (SR-2).
    let outside = format!("{}.config", ws.path.display());
    ws.host_sh(&format!(
        "mkdir -p '{outside}/lazaret' && printf 'default_profile = \"shell\"\\n' > lazaret.toml && \
         ln -s '{}/lazaret.toml' '{outside}/lazaret/config.toml'",
        ws.path.display()
    ));
    let env = format!("XDG_CONFIG_HOME={outside}");
    let r = ws.run_with_env(&[&env], &["true"]);
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr.contains("lazaret.toml") && r.stderr.contains("SR-2"),
        "{r:?}"
    );
    assert!(ws.containers().is_empty());
    // Malformed: the error names the file and the line.
    ws.host_sh(&format!(
        "rm '{outside}/lazaret/config.toml' && printf '[profiles.x]\\nimage = \"i\"\\ncommand = [\"sh\"]\\nimagee = 1\\n' > '{outside}/lazaret/config.toml' && chmod 600 '{outside}/lazaret/config.toml'"
    ));
    let r = ws.run_with_env(&[&env], &["true"]);
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(r.stderr.contains("config.toml:4"), "{r:?}");
    assert!(r.stderr.contains("imagee"), "{r:?}");
    let _ = dev.sh(&format!("rm -rf '{outside}'"));
    ws.assert_nothing_left();
}

#[test]
fn configured_volumes_are_mounted_with_their_mode() {
    let dev = Dev::get();
    let data = dev.workspace("voldata");
    data.host_sh("echo shared > data.txt");
    let ws = dev.workspace("vol").with_profile(
        "withvol",
        &format!(
            "[profiles.withvol]\nimage = \"localhost/lazaret/base:bookworm\"\ncommand = [\"bash\"]\n\
             [[profiles.withvol.volumes]]\nhost = \"{}\"\ncontainer = \"/data\"\nread_only = true\n",
            data.path.display()
        ),
    );
    let r = ws.run(&[
        "sh",
        "-c",
        "cat /data/data.txt; if echo x > /data/new.txt 2>/dev/null; then echo WRITABLE; fi",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "shared\n", "{r:?}");
    ws.assert_nothing_left();
}
