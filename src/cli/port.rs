//! `lazaret port publish|list|unpublish`: ports of the sandbox published on the host while the
//! Domain runs (issue #17; see [`crate::network::port_forward`]).

use crate::domain::layout::Layout;
use anyhow::bail;
use clap::{Args, Subcommand};
use lazaret_client::connection::{self, DomainAddress};
use lazaret_protocol::messages::{ClientMessage, PublishedPort};
use std::io::Write;
use std::net::Ipv4Addr;

/// Exit status of a malformed port argument.
const EXIT_USAGE: i32 = 2;
/// Exit status when the coordinator refused the change (in use, not published, …).
const EXIT_REFUSED: i32 = 4;

/// Publish ports of the sandbox on the host while the Domain runs
///
/// A server inside (`python3 -m http.server 8000`, a dev server on localhost:3000) becomes
/// reachable from the host: connections to the host port reach the port on the sandbox's
/// loopback. Published on the host's loopback (127.0.0.1) unless --address says otherwise;
/// the publication ends with `unpublish` or when the Domain stops. Profile key
/// `publish = [3000]` publishes at every start.
#[derive(Debug, Args)]
pub struct PortArgs {
    #[command(subcommand)]
    pub command: PortCommand,
}

#[derive(Debug, Subcommand)]
pub enum PortCommand {
    Publish(PublishArgs),
    List(ListArgs),
    Unpublish(UnpublishArgs),
}

/// Publish a port of the sandbox on the host
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// PORT (the same port on the host) or HOST_PORT:PORT.
    pub port: String,
    /// The host address to listen on (default 127.0.0.1; 0.0.0.0 makes it reachable from
    /// other machines). Any loopback address 127.0.0.N works: a host name of its own, so the
    /// sandbox's pages do not share the cookies of other tools on 127.0.0.1 (browsers keep
    /// cookies per host, not per port).
    #[arg(long, default_value = "127.0.0.1")]
    pub address: Ipv4Addr,
    #[command(flatten)]
    pub common: Common,
}

/// List the ports published on the host
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub common: Common,
}

/// End a publication
#[derive(Debug, Args)]
pub struct UnpublishArgs {
    /// The host port (as `lazaret port list` shows it).
    pub host_port: u16,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct Common {
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Print {ports: [{address, host_port, port}], error} as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Whether `address` can be listened on: not multicast, broadcast or reserved (`240/4`).
pub fn check_address(address: Ipv4Addr) -> Result<(), String> {
    if address.is_multicast() || address.is_broadcast() || address.octets()[0] >= 240 {
        return Err(format!(
            "{address} is a multicast, broadcast or reserved address: publish on 127.0.0.1 \
             (the default), another loopback address 127.0.0.N (an origin of its own), or \
             an address of this host"
        ));
    }
    Ok(())
}

/// The note `lazaret port publish` prints for what the address shares, if anything.
pub fn address_note(address: Ipv4Addr) -> Option<String> {
    if address == Ipv4Addr::LOCALHOST {
        Some(
            "note: 127.0.0.1 is your browser's localhost origin: the page shares the cookies of \
             every other local tool on it; `--address 127.0.0.2` gives it a host of its own"
                .to_owned(),
        )
    } else if !address.is_loopback() {
        Some(format!(
            "note: {address} is reachable from other machines that reach this host"
        ))
    } else {
        None
    }
}

/// `PORT` or `HOST_PORT:PORT`.
pub fn parse_ports(s: &str) -> Result<(u16, u16), String> {
    let number = |p: &str| match p.parse::<u16>() {
        Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(format!(
            "{p:?} is not a port (1 to 65535); say PORT or HOST_PORT:PORT"
        )),
    };
    match s.split_once(':') {
        Some((host, port)) => Ok((number(host)?, number(port)?)),
        None => number(s).map(|p| (p, p)),
    }
}

pub fn execute(layout: &Layout, args: PortArgs) -> anyhow::Result<i32> {
    let (common, msg) = match &args.command {
        PortCommand::Publish(a) => {
            let checked = check_address(a.address).and_then(|()| parse_ports(&a.port));
            let (host_port, port) = match checked {
                Ok(p) => p,
                Err(e) => {
                    crate::say!("lazaret: {e}");
                    return Ok(EXIT_USAGE);
                }
            };
            let msg = ClientMessage::PublishPort {
                port,
                host_port,
                address: a.address,
            };
            (&a.common, msg)
        }
        PortCommand::List(a) => (&a.common, ClientMessage::ListPorts {}),
        PortCommand::Unpublish(a) => (
            &a.common,
            ClientMessage::UnpublishPort {
                host_port: a.host_port,
            },
        ),
    };
    let address = running(layout, common.profile.as_deref())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (ports, error) = rt.block_on(async {
        let mut conn = connection::connect(&address, "port")
            .await
            .map_err(connection::join_err)?;
        let answer = conn.ports(msg).await.map_err(connection::join_err);
        conn.close().await;
        answer
    })?;
    let mut out = crate::terminal::say::stdout();
    if common.json {
        let v = serde_json::json!({ "ports": ports, "error": error });
        writeln!(out, "{}", crate::cli::safe_json::to_line(&v)?)?;
    } else {
        if let Some(e) = &error {
            crate::say!("lazaret: {e}");
        }
        match &args.command {
            PortCommand::Publish(a) if error.is_none() => {
                if let Some(p) = ports
                    .iter()
                    .find(|p| Some(p.host_port) == parse_ports(&a.port).ok().map(|x| x.0))
                {
                    writeln!(out, "published {}", shown(p))?;
                    if let Some(note) = address_note(p.address) {
                        writeln!(out, "{note}")?;
                    }
                }
            }
            PortCommand::Unpublish(a) if error.is_none() => {
                writeln!(out, "unpublished host port {}", a.host_port)?;
            }
            PortCommand::List(_) if ports.is_empty() => {
                writeln!(out, "no ports published (lazaret port publish PORT)")?;
            }
            PortCommand::List(_) => {
                for p in &ports {
                    writeln!(out, "{}", shown(p))?;
                }
            }
            _ => {}
        }
    }
    Ok(if error.is_some() { EXIT_REFUSED } else { 0 })
}

fn shown(p: &PublishedPort) -> String {
    format!(
        "{}:{} -> sandbox port {} (http://{}:{}/)",
        p.address, p.host_port, p.port, p.address, p.host_port
    )
}

/// The running Domain of this workspace and profile.
fn running(layout: &Layout, profile: Option<&str>) -> anyhow::Result<DomainAddress> {
    let this = crate::cli::this_domain::this_domain(layout, profile)?;
    let (profile, domain) = (this.profile, this.domain);
    if !this.running {
        bail!(
            "no running Domain for {} with profile {}: ports are published while it runs \
             (start one with `lazaret run` or `lazaret tui`)",
            domain.workspace.root.display(),
            profile.name
        );
    }
    Ok(DomainAddress {
        socket: crate::coordinator::paths::socket(&domain),
        profile: profile.name.clone(),
        domain_id: domain.id.clone(),
        workspace: domain.workspace.root.clone(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_loopback_address_of_its_own_is_accepted_and_the_shared_origin_is_said() {
        use std::net::Ipv4Addr;
        for ok in [
            "127.0.0.1",
            "127.0.0.2",
            "127.1.2.3",
            "0.0.0.0",
            "192.0.2.10",
        ] {
            let a: Ipv4Addr = ok.parse().unwrap_or(Ipv4Addr::UNSPECIFIED);
            assert_eq!(super::check_address(a), Ok(()), "{ok}");
        }
        for bad in ["224.0.0.1", "255.255.255.255", "240.0.0.1"] {
            let a: Ipv4Addr = bad.parse().unwrap_or(Ipv4Addr::UNSPECIFIED);
            let e = super::check_address(a).unwrap_err();
            assert!(e.contains("127.0.0.N"), "{e}");
        }
        let shared = super::address_note(Ipv4Addr::LOCALHOST).unwrap_or_default();
        assert!(shared.contains("cookies") && shared.contains("--address 127.0.0.2"));
        assert_eq!(super::address_note(Ipv4Addr::new(127, 0, 0, 2)), None);
        let open = super::address_note(Ipv4Addr::UNSPECIFIED).unwrap_or_default();
        assert!(open.contains("other machines"), "{open}");
    }

    #[test]
    fn ports_parse() {
        assert_eq!(super::parse_ports("8000"), Ok((8000, 8000)));
        assert_eq!(super::parse_ports("18000:8000"), Ok((18000, 8000)));
        for bad in ["0", "x", "70000", ":80", "80:", "+80", "1:2:3"] {
            assert!(super::parse_ports(bad).is_err(), "{bad}");
        }
    }
}
