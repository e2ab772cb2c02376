//! Wake-ups from the sidecar's policy (issue #18: an idle Domain costs nothing): every rule
//! that refuses or holds a packet also logs it to nfnetlink_log group [`GROUP`]; the sidecar
//! subscribes to that group and lists its sets (`nft -j list table`, a process) only after
//! something was refused or held, instead of every half second.
//!
//! The log messages are only a wake-up: what was refused is read from the policy's own sets,
//! never from the messages (they carry packet headers the sandbox chose). Copy mode is
//! "meta" (no packet payload) and each packet is sent at once (queue threshold 1).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The nfnetlink_log group the policy logs to.
pub const GROUP: u16 = 7;

const NETLINK_NETFILTER: libc::c_int = 12;
const NFNL_SUBSYS_ULOG: u16 = 4;
const NFULNL_MSG_CONFIG: u16 = 1;
const NFULA_CFG_CMD: u16 = 1;
const NFULA_CFG_MODE: u16 = 2;
const NFULA_CFG_QTHRESH: u16 = 5;
const NFULNL_CFG_CMD_BIND: u8 = 1;
const NFULNL_COPY_META: u8 = 1;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_ERROR: u16 = 2;

fn attr(out: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    let len = 4 + payload.len();
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(payload);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// The netlink message that binds this socket to `group` in copy mode "meta", one packet per
/// message.
pub fn bind_message(group: u16, seq: u32) -> Vec<u8> {
    let mut body = vec![libc::AF_UNSPEC as u8, 0];
    body.extend_from_slice(&group.to_be_bytes());
    attr(&mut body, NFULA_CFG_CMD, &[NFULNL_CFG_CMD_BIND]);
    let mut mode = 0xffffu32.to_be_bytes().to_vec();
    mode.extend_from_slice(&[NFULNL_COPY_META, 0]);
    attr(&mut body, NFULA_CFG_MODE, &mode);
    attr(&mut body, NFULA_CFG_QTHRESH, &1u32.to_be_bytes());
    let mut msg = Vec::with_capacity(16 + body.len());
    msg.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
    msg.extend_from_slice(&((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG).to_ne_bytes());
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    msg.extend_from_slice(&seq.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend_from_slice(&body);
    msg
}

/// The error code of a netlink acknowledgement (0: done), if `msg` is one.
pub fn ack_error(msg: &[u8]) -> Option<i32> {
    let kind = u16::from_ne_bytes(msg.get(4..6)?.try_into().ok()?);
    if kind != NLMSG_ERROR {
        return None;
    }
    Some(i32::from_ne_bytes(msg.get(16..20)?.try_into().ok()?))
}

/// A socket subscribed to the policy's log group.
pub struct LogSocket {
    fd: OwnedFd,
}

impl LogSocket {
    /// Subscribes to [`GROUP`] (needs CAP_NET_ADMIN in the network namespace's owner).
    pub fn subscribe() -> io::Result<LogSocket> {
        // SAFETY: plain socket(2); the descriptor is owned right away.
        let raw = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                NETLINK_NETFILTER,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let msg = bind_message(GROUP, 1);
        // SAFETY: the buffer is valid for its length.
        let sent = unsafe { libc::send(fd.as_raw_fd(), msg.as_ptr().cast(), msg.len(), 0) };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        let sock = LogSocket { fd };
        let mut buf = vec![0u8; 8192];
        loop {
            let n = sock.recv(&mut buf)?;
            if let Some(code) = buf.get(..n).and_then(ack_error) {
                return if code == 0 {
                    Ok(sock)
                } else {
                    Err(io::Error::from_raw_os_error(-code))
                };
            }
        }
    }

    /// Blocks until a message (or an overflow: the kernel dropped some) arrives.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // SAFETY: the buffer is valid for its length.
            let n =
                unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                // Messages were dropped: something happened all the same.
                Some(libc::ENOBUFS) => return Ok(0),
                _ => return Err(e),
            }
        }
    }

    /// Reads whatever else is queued now, without blocking.
    pub fn drain(&self, buf: &mut [u8]) {
        // SAFETY: the buffer is valid for its length.
        while unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        } > 0
        {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bind_message_is_a_config_request_with_cmd_mode_and_threshold() {
        let m = bind_message(7, 9);
        assert_eq!(m.len(), 16 + 4 + 8 + 12 + 8);
        assert_eq!(
            u32::from_ne_bytes([m[0], m[1], m[2], m[3]]) as usize,
            m.len()
        );
        assert_eq!(u16::from_ne_bytes([m[4], m[5]]), 0x0401);
        assert_eq!(u16::from_ne_bytes([m[6], m[7]]), NLM_F_REQUEST | NLM_F_ACK);
        assert_eq!(&m[16..20], &[0, 0, 0, 7], "AF_UNSPEC, v0, group big-endian");
        assert_eq!(&m[20..25], &[5, 0, 1, 0, NFULNL_CFG_CMD_BIND]);
        assert_eq!(&m[28..32], &[10, 0, 2, 0]);
        assert_eq!(&m[36..38], &[NFULNL_COPY_META, 0]);
        assert_eq!(&m[40..48], &[8, 0, 5, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn an_ack_is_told_from_other_messages() {
        let mut ack = vec![0u8; 36];
        ack[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        assert_eq!(ack_error(&ack), Some(0));
        ack[16..20].copy_from_slice(&(-1i32).to_ne_bytes());
        assert_eq!(ack_error(&ack), Some(-1));
        assert_eq!(ack_error(&[0u8; 8]), None);
        assert_eq!(ack_error(&[0u8; 3]), None);
    }
}
