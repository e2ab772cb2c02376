//! The detach key of a plain attached terminal: `ctrl-b d`, as in tmux and the TUI. `ctrl-b
//! ctrl-b` sends one `ctrl-b`; `ctrl-b` followed by anything else sends both.
//!
//! The key is looked for before anything else reads the keystrokes — also while an escalation
//! prompt owns the terminal ([`DetachKey::route`]): detaching there closes the prompt on this
//! terminal only, and the request stays pending for the session's other clients (the first
//! decision of any of them wins).

use crate::terminal::gate::TerminalGate;

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

    /// Routes a chunk of keystrokes: the detach key first, the rest to the escalation prompt
    /// when one owns the terminal, else to the session (returned).
    pub fn route(&mut self, gate: &TerminalGate, input: &[u8]) -> Routed {
        let (bytes, detach) = self.feed(input);
        let for_session = if bytes.is_empty() || gate.route_input(&bytes) {
            Vec::new()
        } else {
            bytes
        };
        Routed {
            for_session,
            detach,
        }
    }
}

/// Where a chunk of keystrokes went.
#[derive(Debug, PartialEq, Eq)]
pub struct Routed {
    /// For the session (empty when a prompt took the keys, or there were none).
    pub for_session: Vec<u8>,
    /// The developer typed the detach key.
    pub detach: bool,
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

    fn routed(for_session: &[u8], detach: bool) -> Routed {
        Routed {
            for_session: for_session.to_vec(),
            detach,
        }
    }

    #[test]
    fn ctrl_b_d_detaches_while_a_prompt_owns_the_terminal_and_the_prompt_never_sees_it() {
        let gate = TerminalGate::default();
        let mut k = DetachKey::default();
        let prompt = gate.take();
        // Other keys go to the prompt, not the session; ctrl-b ctrl-b is one ctrl-b for it.
        assert_eq!(k.route(&gate, b"e"), routed(b"", false));
        assert_eq!(k.route(&gate, b"\x02\x02"), routed(b"", false));
        let got: Vec<Vec<u8>> = prompt.keys.try_iter().collect();
        assert_eq!(got, [b"e".to_vec(), b"\x02".to_vec()]);
        // ctrl-b d, in one chunk or two: a detach, and nothing reaches the prompt (whose menu
        // takes a lone `d` as "deny").
        assert_eq!(k.route(&gate, b"\x02d"), routed(b"", true));
        let mut k = DetachKey::default();
        assert_eq!(k.route(&gate, b"\x02"), routed(b"", false));
        assert_eq!(k.route(&gate, b"d"), routed(b"", true));
        assert_eq!(
            prompt.keys.try_iter().count(),
            0,
            "the prompt saw the detach key"
        );
        drop(prompt);
        // Without a prompt, keys go to the session as before.
        assert_eq!(k.route(&gate, b"ls\x02"), routed(b"ls", false));
        assert_eq!(k.route(&gate, b"d"), routed(b"", true));
    }
}
