//! A protocol client inside the test process, attached to a coordinator-owned session the way
//! a front end attaches (`attach_session` with `updates: "bytes"` or `"screen"`), recording
//! every byte it receives as session output — to check what the coordinator sends, byte for
//! byte, rather than what a terminal made of it.
//!
//! The coordinator accepts connections from the developer's uid only (SR-10). Tests running as
//! root therefore connect from a thread whose effective uid alone is switched to the
//! developer's (the raw `setresuid` system call changes the calling thread only, unlike the
//! libc wrapper): [`as_developer`] runs a current-thread runtime there.

use crate::support::{is_root, Dev, TestWorkspace};
use lazaret_client::connection::{connect, Connection, DomainAddress};
use lazaret_protocol::framing::{self, Frame};
use lazaret_protocol::messages::{ClientMessage, CoordinatorMessage, Updates};
use lazaret_protocol::SessionId;
use std::future::Future;
use std::time::Duration;

/// Runs `work` to completion on a current-thread runtime in a thread that acts as the
/// developer towards the kernel (effective and filesystem uid).
pub fn as_developer<T: Send, F: Future<Output = T>>(
    dev: &Dev,
    work: impl FnOnce() -> F + Send,
) -> T {
    let uid = dev.uid;
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                if is_root() {
                    // SAFETY: a plain system call; it changes this thread's credentials only.
                    let rc = unsafe { libc::syscall(libc::SYS_setresuid, u32::MAX, uid, u32::MAX) };
                    assert_eq!(rc, 0, "setresuid: {}", std::io::Error::last_os_error());
                }
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime");
                rt.block_on(work())
            })
            .join()
            .expect("the developer's thread")
    })
}

/// Where the coordinator of `ws`'s Domain listens.
pub fn address(ws: &TestWorkspace) -> DomainAddress {
    let root = ws.dev.runtime_dir.join("lazaret");
    lazaret_client::locate::domains(&root)
        .expect("listing the running Domains")
        .into_iter()
        .find(|d| d.address.domain_id == ws.domain)
        .map(|d| d.address)
        .expect("the workspace's Domain runs")
}

/// One client connection attached to one session.
pub struct Attachment {
    conn: Connection,
    pub session: SessionId,
    channel: u32,
    /// Every byte received on the session's channel, in order.
    pub output: Vec<u8>,
    /// The session's exit status once `session_exited` came.
    pub exited: Option<Option<i32>>,
}

impl Attachment {
    /// Connects as `label` and attaches to `session` at `rows`×`cols` with `updates`.
    pub async fn open(
        addr: &DomainAddress,
        label: &str,
        session: &SessionId,
        (rows, cols): (u16, u16),
        updates: Updates,
    ) -> Attachment {
        let mut conn = connect(addr, label)
            .await
            .map_err(lazaret_client::connection::join_err)
            .expect("connecting to the coordinator");
        let attach = ClientMessage::AttachSession {
            session_id: session.clone(),
            rows,
            cols,
            history: 0,
            updates,
        };
        framing::send(&mut conn.conn, &attach)
            .await
            .expect("sending attach_session");
        let channel = loop {
            match framing::recv_frame::<_, CoordinatorMessage>(&mut conn.conn).await {
                Ok(Frame::Message(CoordinatorMessage::Attached { channel, .. })) => break channel,
                Ok(Frame::Message(CoordinatorMessage::Error { message })) => {
                    panic!("attach_session refused: {message}")
                }
                Ok(_) => continue,
                Err(e) => panic!("attaching: {e}"),
            }
        };
        Attachment {
            conn,
            session: session.clone(),
            channel,
            output: Vec::new(),
            exited: None,
        }
    }

    /// Takes the next frame (within `wait`); false when nothing came, the connection closed
    /// or the session exited.
    pub async fn step(&mut self, wait: Duration) -> bool {
        let frame = tokio::time::timeout(
            wait,
            framing::recv_frame::<_, CoordinatorMessage>(&mut self.conn.conn),
        )
        .await;
        match frame {
            Ok(Ok(Frame::Data { channel, bytes })) if channel == self.channel => {
                self.output.extend_from_slice(&bytes);
                true
            }
            Ok(Ok(Frame::Message(CoordinatorMessage::SessionExited {
                session_id,
                status,
                ..
            }))) if session_id == self.session => {
                self.exited = Some(status);
                false
            }
            Ok(Ok(_)) => true,
            Ok(Err(_)) | Err(_) => false,
        }
    }

    /// Reads until `needle` has arrived; false if `timeout` passed or the stream ended first.
    pub async fn read_until(&mut self, timeout: Duration, needle: &[u8]) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut from: usize = 0;
        loop {
            // Only what is new (and the needle's length before it) is searched.
            let start = from.saturating_sub(needle.len());
            if self.output[start..]
                .windows(needle.len())
                .any(|w| w == needle)
            {
                return true;
            }
            from = self.output.len();
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() || !self.step(left).await {
                return false;
            }
        }
    }

    /// Reads until the session exited (within `timeout`), then closes the connection.
    pub async fn finish(mut self, timeout: Duration) -> (Vec<u8>, Option<Option<i32>>) {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.exited.is_none() {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() || !self.step(left).await && self.exited.is_none() {
                break;
            }
        }
        let (output, exited) = (std::mem::take(&mut self.output), self.exited);
        self.conn.close().await;
        (output, exited)
    }
}
