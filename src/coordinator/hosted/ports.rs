//! Ports of the sandbox published on the host (issue #17: `lazaret port publish|list|unpublish`,
//! profile `publish = [PORT]`): the coordinator owns one forwarder per published port (see
//! [`crate::network::port_forward`]), started in rootless podman's user namespace and ended on
//! `unpublish` or with the Domain — its stdin is a pipe from here, so the coordinator's end
//! ends it too.

use super::{lock, SessionHost};
use lazaret_protocol::messages::PublishedPort;
use std::io::BufRead;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::process::{Child, Stdio};

/// The most ports one Domain publishes.
pub const MAX_PORTS: usize = 64;

/// One running forwarder.
pub struct Forwarder {
    pub port: PublishedPort,
    child: Child,
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        // Closing its stdin ends it; the kill makes sure, the wait reaps it.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl SessionHost {
    /// The published ports, by host port.
    pub fn ports(&self) -> Vec<PublishedPort> {
        let mut v: Vec<PublishedPort> = lock(&self.ports).iter().map(|f| f.port.clone()).collect();
        v.sort_by_key(|p| p.host_port);
        v
    }

    /// Publishes `port` of the sandbox on `address:host_port` of the host. Blocking (a podman
    /// process starts): run it off the event loop.
    pub fn publish_port(&self, port: u16, host_port: u16, address: Ipv4Addr) -> Result<(), String> {
        if port == 0 || host_port == 0 {
            return Err("ports go from 1 to 65535".into());
        }
        {
            let ports = lock(&self.ports);
            if let Some(f) = ports.iter().find(|f| f.port.host_port == host_port) {
                return Err(format!(
                    "host port {host_port} already publishes port {} (unpublish it first)",
                    f.port.port
                ));
            }
            if ports.len() >= MAX_PORTS {
                return Err(format!("this Domain already publishes {MAX_PORTS} ports"));
            }
        }
        let Some(netns_pid) = self.spawn.containers.sidecar else {
            return Err("the Network Sidecar's process is not known: restart the Domain".into());
        };
        let listen = SocketAddrV4::new(address, host_port);
        let child = start(&self.spawn.program, listen, netns_pid, port)?;
        tracing::info!(%listen, port, "sandbox port published");
        lock(&self.ports).push(Forwarder {
            port: PublishedPort {
                address,
                host_port,
                port,
            },
            child,
        });
        Ok(())
    }

    /// Ends the publication on `host_port`.
    pub fn unpublish_port(&self, host_port: u16) -> Result<(), String> {
        let mut ports = lock(&self.ports);
        let Some(i) = ports.iter().position(|f| f.port.host_port == host_port) else {
            return Err(format!(
                "host port {host_port} publishes nothing of this Domain (`lazaret port list`)"
            ));
        };
        let gone = ports.remove(i);
        tracing::info!(host_port, port = gone.port.port, "sandbox port unpublished");
        Ok(())
    }

    /// Ends every publication (the Domain stops).
    pub fn stop_ports(&self) {
        lock(&self.ports).clear();
    }
}

/// Starts a forwarder and waits for its `ready`.
fn start(program: &str, listen: SocketAddrV4, netns_pid: u32, port: u16) -> Result<Child, String> {
    let exe = crate::runtime::state_anchor::lazaret_binary().map_err(|e| format!("{e:#}"))?;
    let request = crate::runtime::state_anchor_ns::NsRequest::PortForward {
        listen,
        netns_pid,
        port,
    };
    let json = serde_json::to_string(&request).map_err(|e| e.to_string())?;
    let mut child = std::process::Command::new(program)
        .arg("unshare")
        .arg(exe)
        .arg("__state-anchor")
        .arg(json)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let mut line = String::new();
    if let Some(out) = child.stdout.as_mut() {
        let _ = std::io::BufReader::new(out).read_line(&mut line);
    }
    match line.trim() {
        "ready" => Ok(child),
        other => {
            let _ = child.kill();
            let _ = child.wait();
            Err(match other.strip_prefix("error: ") {
                Some(why) => why.to_owned(),
                None => format!("the port forwarder did not start ({other:?})"),
            })
        }
    }
}
