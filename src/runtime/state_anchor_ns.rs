//! The part of State Anchor handling that runs inside podman's rootless user+mount namespace
//! (`podman unshare lazaret __state-anchor REQUEST`): image mount, overlay (re)mounts, checks
//! against `/proc/self/mountinfo`. Its only input is the request Lazaret itself built.

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// One State Anchor: container path, its dir in the Domain Root (generations inside, see
/// [`crate::state::generations`]) and mount point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnchorMount {
    pub container: PathBuf,
    pub dir: PathBuf,
    pub target: PathBuf,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum NsRequest {
    Mount {
        image: String,
        anchors: Vec<AnchorMount>,
        image_id_file: PathBuf,
        empty_lower: PathBuf,
        /// Also read the image's CA bundle (issue #32, see [`crate::trust::image`]).
        #[serde(default)]
        read_trust: bool,
    },
    /// The image's CA bundle only (for `lazaret doctor`): the image is mounted, read and
    /// unmounted again.
    ImageTrust { image: String },
    Unmount {
        targets: Vec<PathBuf>,
        image_id_file: PathBuf,
        /// The mailbox's request dir, detached first (one `podman unshare` for both, issue #18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mailbox: Option<PathBuf>,
    },
    /// Reset these anchor dirs (a new empty generation each); inside the namespace because
    /// the old generations hold files of subordinate uids.
    Reset { dirs: Vec<PathBuf> },
    /// The overlay changes of these anchors against `image` (None: lower unknown).
    Inspect {
        image: Option<String>,
        anchors: Vec<(PathBuf, PathBuf)>,
        /// An empty dir: the lower of a path the image does not have.
        empty_lower: PathBuf,
        limit: usize,
    },
    /// Sizes for `lazaret state list` (see [`crate::state::listing::trees`]): measured inside
    /// the namespace, where overlay work dirs and subordinate-uid directories are readable.
    Sizes {
        anchors: Vec<PathBuf>,
        ignored: Vec<PathBuf>,
    },
    /// The Escalation Mailbox's request dir: a fresh size-limited tmpfs at `target`; the helper
    /// then prints its pid and waits until its stdin closes (see
    /// [`crate::escalation::mailbox_fs`]).
    MailboxMount { target: PathBuf },
    /// Detach every mount at the request dir `target`.
    MailboxUnmount { target: PathBuf },
    /// Forward `listen` on the host to `port` on the loopback of the network namespace of
    /// `netns_pid` (the sidecar), until stdin closes (see [`crate::network::port_forward`]).
    PortForward {
        listen: std::net::SocketAddrV4,
        netns_pid: u32,
        port: u16,
    },
}

/// One entry of `podman image mount --format json`.
#[derive(Debug, Deserialize)]
struct ImageMount {
    id: String,
    mountpoint: PathBuf,
}

/// What was found or done, anchor by anchor.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct NsReport {
    pub image_id: String,
    pub anchors: Vec<AnchorState>,
    /// The image's CA bundle, when asked for and the image has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_bundle: Option<crate::trust::image::ImageBundle>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct AnchorState {
    pub container: PathBuf,
    pub lower: PathBuf,
    /// True when a correct mount was already in place.
    pub kept: bool,
}

/// Entry point of the hidden verb; prints the report as JSON.
pub fn main(request: &str) -> anyhow::Result<i32> {
    refuse_initial_namespace()?;
    let req: NsRequest =
        serde_json::from_str(request).context("reading the State Anchor request")?;
    let report = match req {
        NsRequest::Mount {
            image,
            anchors,
            image_id_file,
            empty_lower,
            read_trust,
        } => {
            let (id, root) = image_root(&image)?;
            let mut report = mount_all(id, &root, &anchors, &image_id_file, &empty_lower)?;
            if read_trust {
                report.trust_bundle = crate::trust::image::read(&root)?;
            }
            serde_json::to_string(&report)?
        }
        NsRequest::ImageTrust { image } => {
            let (id, root) = image_root(&image)?;
            let read = crate::trust::image::read(&root);
            let _ = podman(&["image", "unmount", &id]);
            serde_json::to_string(&NsReport {
                image_id: id,
                anchors: Vec::new(),
                trust_bundle: read?,
            })?
        }
        NsRequest::Unmount {
            targets,
            image_id_file,
            mailbox,
        } => {
            if let Some(target) = mailbox {
                crate::escalation::mailbox_fs::ns_unmount(&target)?;
            }
            serde_json::to_string(&unmount_all(&targets, &image_id_file)?)?
        }
        NsRequest::Reset { dirs } => serde_json::to_string(&crate::state::ns::reset(&dirs)?)?,
        NsRequest::Inspect {
            image,
            anchors,
            empty_lower,
            limit,
        } => serde_json::to_string(&crate::state::ns::inspect(
            image.as_deref(),
            &anchors,
            &empty_lower,
            limit,
        )?)?,
        NsRequest::Sizes { anchors, ignored } => {
            serde_json::to_string(&crate::state::ns::sizes(&anchors, &ignored))?
        }
        NsRequest::MailboxMount { target } => {
            return crate::escalation::mailbox_fs::ns_mount_and_hold(&target)
        }
        NsRequest::MailboxUnmount { target } => {
            crate::escalation::mailbox_fs::ns_unmount(&target)?;
            serde_json::to_string(&NsReport::default())?
        }
        NsRequest::PortForward {
            listen,
            netns_pid,
            port,
        } => {
            crate::network::port_forward::serve(listen, netns_pid, port)?;
            return Ok(0);
        }
    };
    println!("{report}");
    Ok(0)
}

/// Only meaningful (and only safe) inside a user namespace that maps a subset of ids.
fn refuse_initial_namespace() -> anyhow::Result<()> {
    let map = std::fs::read_to_string("/proc/self/uid_map").unwrap_or_default();
    let initial = map
        .split_whitespace()
        .collect::<Vec<_>>()
        .starts_with(&["0", "0", "4294967295"]);
    if initial {
        bail!("__state-anchor runs only inside `podman unshare` (it is started by lazaret itself)");
    }
    Ok(())
}

pub fn podman(args: &[&str]) -> anyhow::Result<String> {
    let program = std::env::var("LAZARET_PODMAN").unwrap_or_else(|_| "podman".to_owned());
    let out = Command::new(&program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("running {program}"))?;
    if !out.status.success() {
        bail!(
            "podman {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn mount_all(
    id: String,
    root: &Path,
    anchors: &[AnchorMount],
    image_id_file: &Path,
    empty_lower: &Path,
) -> anyhow::Result<NsReport> {
    let previous = std::fs::read_to_string(image_id_file).unwrap_or_default();
    if previous.trim() != id {
        std::fs::write(image_id_file, &id)?;
        if !previous.trim().is_empty() {
            // A mount of an older image left by an interrupted run.
            let _ = podman(&["image", "unmount", previous.trim()]);
        }
    }
    match std::fs::create_dir(empty_lower) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).context("creating the empty lower dir"),
    }
    let mut report = NsReport {
        image_id: id,
        anchors: Vec::new(),
        trust_bundle: None,
    };
    for a in anchors {
        let lower = lower_dir(root, &a.container)?.unwrap_or_else(|| empty_lower.to_path_buf());
        // A valid current generation (an interrupted reset is finished or undone here).
        let dir = crate::state::generations::AnchorDir::open(&a.dir, true)?;
        dir.recover()
            .with_context(|| format!("State Anchor {}", a.container.display()))?;
        let (upper, work) = dir.current_paths()?;
        let kept = is_mounted_as(&a.target, &lower, &upper)?;
        if !kept {
            detach_all(&a.target)?;
            inherit_root_attributes(&lower, &upper)?;
            mount_overlay(&lower, &upper, &work, a)?;
            if !is_mounted_as(&a.target, &lower, &upper)? {
                bail!(
                    "State Anchor {}: the overlay at {} did not verify after mounting",
                    a.container.display(),
                    a.target.display()
                );
            }
        }
        report.anchors.push(AnchorState {
            container: a.container.clone(),
            lower,
            kept,
        });
    }
    Ok(report)
}

/// Mounts `image` (again: podman counts the mounts) and returns its ID and mount point. One
/// call mounts the image and names it (its ID survives a later re-tag, for unmounting).
fn image_root(image: &str) -> anyhow::Result<(String, PathBuf)> {
    let listed = podman(&["image", "mount", "--format", "json", image])
        .with_context(|| format!("mounting image {image}"))?;
    let mounted: Vec<ImageMount> = serde_json::from_str(&listed)
        .with_context(|| format!("mounting image {image}: unexpected answer {listed:?}"))?;
    let Some(ImageMount { id, mountpoint }) = mounted.into_iter().next() else {
        bail!("mounting image {image}: podman named no mount");
    };
    Ok((id, mountpoint))
}

/// The image's directory at `container`, refusing symlinks on the way (they would resolve
/// against the host's file system here); `None` when the image has nothing there.
pub fn lower_dir(root: &Path, container: &Path) -> anyhow::Result<Option<PathBuf>> {
    let mut path = root.to_path_buf();
    for c in container.components() {
        let Component::Normal(name) = c else {
            continue;
        };
        path.push(name);
        match std::fs::symlink_metadata(&path) {
            Err(_) => return Ok(None),
            Ok(m) if m.file_type().is_symlink() => bail!(
                "persistent path {} is a symlink in the image at {}: persist its target instead",
                container.display(),
                path.strip_prefix(root).unwrap_or(&path).display()
            ),
            Ok(m) if !m.is_dir() => bail!(
                "persistent path {} is not a directory in the image",
                container.display()
            ),
            Ok(_) => {}
        }
    }
    Ok(Some(path))
}

/// A fresh upper dir takes the lower dir's owner and mode, so that the merged directory looks
/// like the image's (e.g. `/usr` 0755 root, not the 0700 of a new host dir).
fn inherit_root_attributes(lower: &Path, upper: &Path) -> anyhow::Result<()> {
    let fresh = std::fs::read_dir(upper)
        .with_context(|| format!("reading {}", upper.display()))?
        .next()
        .is_none();
    if !fresh {
        return Ok(());
    }
    let m = std::fs::metadata(lower)?;
    std::os::unix::fs::chown(upper, Some(m.uid()), Some(m.gid()))
        .with_context(|| format!("setting the owner of {}", upper.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(upper, std::fs::Permissions::from_mode(m.mode() & 0o7777))?;
    Ok(())
}

fn mount_overlay(lower: &Path, upper: &Path, work: &Path, a: &AnchorMount) -> anyhow::Result<()> {
    let opts = format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        lower.display(),
        upper.display(),
        work.display()
    );
    nix::mount::mount(
        Some("overlay"),
        &a.target,
        Some("overlay"),
        nix::mount::MsFlags::MS_NODEV | nix::mount::MsFlags::MS_NOSUID,
        Some(opts.as_str()),
    )
    .with_context(|| {
        format!(
            "mounting the State Anchor of {} at {}",
            a.container.display(),
            a.target.display()
        )
    })
}

/// Removes every mount stacked at `target`.
pub(crate) fn detach_all(target: &Path) -> anyhow::Result<()> {
    for _ in 0..16 {
        if mounts_at(target)?.is_empty() {
            return Ok(());
        }
        nix::mount::umount2(target, nix::mount::MntFlags::MNT_DETACH)
            .with_context(|| format!("unmounting {}", target.display()))?;
    }
    bail!("{} stays mounted", target.display())
}

fn unmount_all(targets: &[PathBuf], image_id_file: &Path) -> anyhow::Result<NsReport> {
    for target in targets {
        // A plain unmount first: busy means something still uses the anchor.
        for attempt in 0..50 {
            if mounts_at(target)?.is_empty() {
                break;
            }
            match nix::mount::umount2(target, nix::mount::MntFlags::empty()) {
                Ok(()) => {}
                Err(nix::errno::Errno::EBUSY) if attempt < 49 => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("unmounting {}", target.display()))
                }
            }
        }
    }
    let id = std::fs::read_to_string(image_id_file).unwrap_or_default();
    if !id.trim().is_empty() {
        let _ = podman(&["image", "unmount", id.trim()]);
        let _ = std::fs::remove_file(image_id_file);
    }
    Ok(NsReport {
        image_id: id.trim().to_owned(),
        anchors: Vec::new(),
        trust_bundle: None,
    })
}

/// One line of `/proc/self/mountinfo`, the fields used here.
#[derive(Debug, PartialEq, Eq)]
pub struct MountInfo {
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub super_options: String,
}

/// Parses mountinfo text (octal escapes like `\040` undone in the mount point).
pub fn parse_mountinfo(text: &str) -> Vec<MountInfo> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let mount_point = left.split(' ').nth(4)?;
            let mut r = right.split(' ');
            let fs_type = r.next()?.to_owned();
            let _source = r.next()?;
            let super_options = r.next().unwrap_or("").to_owned();
            Some(MountInfo {
                mount_point: PathBuf::from(unescape(mount_point)),
                fs_type,
                super_options,
            })
        })
        .collect()
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn mounts_at(target: &Path) -> anyhow::Result<Vec<MountInfo>> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")?;
    Ok(parse_mountinfo(&text)
        .into_iter()
        .filter(|m| m.mount_point == target)
        .collect())
}

/// Whether the topmost mount at `target` is the overlay of `lower` and `upper`.
fn is_mounted_as(target: &Path, lower: &Path, upper: &Path) -> anyhow::Result<bool> {
    Ok(mounts_at(target)?
        .last()
        .is_some_and(|m| overlay_matches(m, lower, upper)))
}

pub fn overlay_matches(m: &MountInfo, lower: &Path, upper: &Path) -> bool {
    let opt = |key: &str| {
        m.super_options
            .split(',')
            .find_map(|o| o.strip_prefix(key))
            .map(unescape)
    };
    m.fs_type == "overlay"
        && opt("lowerdir=").as_deref() == lower.to_str()
        && opt("upperdir=").as_deref() == upper.to_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "74 46 0:43 / /run/user/1/lazaret/x/anchors/usr-1 rw,relatime - overlay overlay rw,lowerdir=/s/merged/usr,upperdir=/d/anchors/usr-1/upper,workdir=/d/anchors/usr-1/work,userxattr\n\
        75 46 0:44 / /tmp/a\\040b rw - tmpfs tmpfs rw\n";

    #[test]
    fn mountinfo_is_parsed_and_overlays_matched() {
        let m = parse_mountinfo(SAMPLE);
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].mount_point, Path::new("/tmp/a b"));
        assert!(overlay_matches(
            &m[0],
            Path::new("/s/merged/usr"),
            Path::new("/d/anchors/usr-1/upper")
        ));
        assert!(!overlay_matches(
            &m[0],
            Path::new("/s/other/usr"),
            Path::new("/d/anchors/usr-1/upper")
        ));
        assert!(!overlay_matches(&m[1], Path::new("/"), Path::new("/")));
    }

    #[test]
    fn lower_dir_refuses_symlinks_and_reports_absence() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        std::fs::create_dir_all(t.path().join("usr/local"))?;
        std::os::unix::fs::symlink("/etc", t.path().join("opt"))?;
        assert_eq!(
            lower_dir(t.path(), Path::new("/usr/local"))?,
            Some(t.path().join("usr/local"))
        );
        assert_eq!(lower_dir(t.path(), Path::new("/srv"))?, None);
        assert!(lower_dir(t.path(), Path::new("/opt/x")).is_err());
        Ok(())
    }

    #[test]
    fn requests_round_trip_and_reject_unknown_fields() {
        let bad = r#"{"op":"unmount","targets":[],"image_id_file":"/x","extra":1}"#;
        assert!(serde_json::from_str::<NsRequest>(bad).is_err());
        let good = r#"{"op":"unmount","targets":[],"image_id_file":"/x"}"#;
        assert!(serde_json::from_str::<NsRequest>(good).is_ok());
    }
}
