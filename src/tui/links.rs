//! The TUI's connections: one [`DomainLink`] per Domain it shows, opened on first use (starting
//! the Domain's coordinator when none runs), each a control centre of its Domain (offered the
//! escalation prompts of every session). Their events become [`AppEvent::Link`]s.

use super::event::{AppEvent, AppSender};
use crate::client::connection::{self, DomainAddress};
use crate::client::link::DomainLink;
use crate::coordinator::client::Registration;
use crate::coordinator::{launch, paths};
use crate::session::SessionPlan;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct Links {
    map: Mutex<HashMap<String, Arc<DomainLink>>>,
    /// Held while a link is being opened: two panes never start one Domain twice.
    opening: Mutex<()>,
    events: Mutex<AppSender>,
}

/// Where the coordinator of `plan`'s Domain listens.
pub fn address_of(plan: &SessionPlan) -> DomainAddress {
    DomainAddress {
        socket: paths::socket(&plan.domain),
        profile: plan.profile.name.clone(),
        domain_id: plan.domain.id.clone(),
        workspace: plan.domain.workspace.root.clone(),
    }
}

impl Links {
    pub fn new(events: AppSender) -> Arc<Links> {
        Arc::new(Links {
            map: Mutex::new(HashMap::new()),
            opening: Mutex::new(()),
            events: Mutex::new(events),
        })
    }

    /// The open link of a Domain, if any.
    pub fn get(&self, domain: &str) -> Option<Arc<DomainLink>> {
        self.map.lock().ok()?.get(domain).cloned()
    }

    /// The link of `plan`'s Domain, opened (and the Domain started) when needed. Blocking.
    pub fn get_or_open(&self, plan: &SessionPlan) -> anyhow::Result<Arc<DomainLink>> {
        let domain = plan.domain.id.to_string();
        let _one = self.opening.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(link) = self.get(&domain) {
            return Ok(link);
        }
        let reg = Registration {
            domain: &plan.domain,
            profile: &plan.profile.name,
            fingerprint: &plan.fingerprint,
        };
        let address = address_of(plan);
        let events = self
            .events
            .lock()
            .map_err(|_| anyhow::anyhow!("the TUI is closing"))?
            .clone();
        let link = launch::join_or_start_with(&reg, |_| {
            let events = events.clone();
            let domain = domain.clone();
            DomainLink::open(address.clone(), "tui", move |event| {
                let _ = events.send(AppEvent::Link {
                    domain: domain.clone(),
                    event,
                });
            })
        })?;
        link.watch_escalations();
        let link = Arc::new(link);
        if let Ok(mut map) = self.map.lock() {
            map.insert(domain, link.clone());
        }
        Ok(link)
    }

    /// A Domain's link is gone (its coordinator went away).
    pub fn forget(&self, domain: &str) {
        if let Ok(mut map) = self.map.lock() {
            map.remove(domain);
        }
    }

    /// Closes every link: attached sessions are detached and run on.
    pub fn close_all(&self) {
        let links: Vec<Arc<DomainLink>> = self
            .map
            .lock()
            .map(|mut m| m.drain().map(|(_, l)| l).collect())
            .unwrap_or_default();
        for l in links {
            l.close();
        }
    }
}

/// A [`connection::join_err`] for messages.
pub fn describe(e: crate::coordinator::client::JoinError) -> String {
    format!("{:#}", connection::join_err(e))
}
