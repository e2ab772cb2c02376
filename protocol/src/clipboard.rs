//! Image paste into the sandbox (issue #16 item 4): what the clipboard shim inside the sandbox
//! (`xclip` / `wl-paste`, the Escalation Client under those names) and the Session
//! Coordinator agree on. The shim asks through the Escalation Mailbox with the reserved
//! command [`PASTE_IMAGE`]; the coordinator answers it itself — never as a Host Escalation —
//! and only within [`PASTE_WINDOW`] after the developer pressed the paste key in that
//! session's terminal, with the host clipboard's image when it is a PNG or JPEG of at most
//! [`MAX_IMAGE_BYTES`].

use std::time::Duration;

/// The reserved argv (one element) of a paste request. Not a program name anyone can have: a
/// colon, and the coordinator takes it before any rule or prompt sees it.
pub const PASTE_IMAGE: &str = "lazaret:paste-image";

/// How long after the paste key the session may read the host clipboard's image.
pub const PASTE_WINDOW: Duration = Duration::from_secs(10);

/// Reads of the image one paste key allows (an agent asks for the types, then the data).
pub const READS_PER_PASTE: u32 = 4;

/// Largest image passed on: the mailbox's cap on a result's output.
pub const MAX_IMAGE_BYTES: usize = crate::escalation::MAX_OUTPUT_BYTES;

/// The paste key as a client sends it: Ctrl-V (`0x16`), or the kitty keyboard protocol's
/// `CSI 118 ; 5 u` (Claude Code and Codex both read images on Ctrl-V).
pub fn has_paste_key(input: &[u8]) -> bool {
    input.contains(&0x16) || input.windows(8).any(|w| w == b"\x1b[118;5u")
}

/// The MIME type of `bytes` by their magic numbers: PNG or JPEG, nothing else.
pub fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paste_key_is_ctrl_v_plain_or_kitty_encoded() {
        assert!(has_paste_key(b"\x16"));
        assert!(has_paste_key(b"ab\x16cd"));
        assert!(has_paste_key(b"\x1b[118;5u"));
        assert!(!has_paste_key(b"v"));
        assert!(!has_paste_key(b"\x1b[118;2u"));
        assert!(!has_paste_key(b"\x1b[200~pasted\x1b[201~"));
    }

    #[test]
    fn only_png_and_jpeg_pass() {
        assert_eq!(
            image_type(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Some("image/png")
        );
        assert_eq!(
            image_type(&[0xff, 0xd8, 0xff, 0xe0, 0, 0x10]),
            Some("image/jpeg")
        );
        assert_eq!(image_type(b"GIF89a"), None);
        assert_eq!(image_type(b"\x89PNG"), None);
        assert_eq!(image_type(b"#!/bin/sh\n"), None);
        assert_eq!(image_type(b""), None);
    }
}
