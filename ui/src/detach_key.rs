//! The detach key of a plain attached terminal: `ctrl-b d`, as in tmux and the TUI. `ctrl-b
//! ctrl-b` sends one `ctrl-b`; `ctrl-b` followed by anything else sends both.

/// The prefix byte (ctrl-b).
pub const PREFIX: u8 = 0x02;

/// Splits keystrokes into what goes to the session and whether the developer detached.
#[derive(Default)]
pub struct DetachKey {
    pending: bool,
}

impl DetachKey {
    /// The bytes for the session, and true when `ctrl-b d` was typed (bytes after it are
    /// dropped).
    pub fn feed(&mut self, input: &[u8]) -> (Vec<u8>, bool) {
        let mut out = Vec::with_capacity(input.len());
        for &b in input {
            if self.pending {
                self.pending = false;
                match b {
                    b'd' => return (out, true),
                    PREFIX => out.push(PREFIX),
                    other => out.extend_from_slice(&[PREFIX, other]),
                }
            } else if b == PREFIX {
                self.pending = true;
            } else {
                out.push(b);
            }
        }
        (out, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl_b_d_detaches_and_other_keys_pass() {
        let mut k = DetachKey::default();
        assert_eq!(k.feed(b"ls\r"), (b"ls\r".to_vec(), false));
        assert_eq!(k.feed(b"x\x02"), (b"x".to_vec(), false), "prefix held");
        assert_eq!(k.feed(b"d rest"), (Vec::new(), true));
        let mut k = DetachKey::default();
        assert_eq!(k.feed(b"\x02\x02a"), (b"\x02a".to_vec(), false));
        assert_eq!(k.feed(b"\x02c"), (b"\x02c".to_vec(), false));
        assert_eq!(k.feed(b"a\x02db"), (b"a".to_vec(), true));
    }
}
