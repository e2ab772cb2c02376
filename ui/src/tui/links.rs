//! The TUI's connections: one [`DomainLink`] per Domain it shows, opened on first use through
//! the engine's [`Launcher`] (which starts the Domain's coordinator when none runs), each a
//! control centre of its Domain (offered every session's escalation prompts, sent the Domain's
//! state and denials). Their events become [`AppEvent::Link`]s. Each link is a task on the
//! TUI's event loop (`rt`); opening one blocks until connected, so it is done on a helper
//! thread, never on the loop's.

use super::event::{AppEvent, AppSender};
use lazaret_client::link::DomainLink;
use lazaret_client::target::{Launcher, Target};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct Links {
    map: Mutex<HashMap<String, Arc<DomainLink>>>,
    /// Held while a link is being opened: two panes never start one Domain twice.
    opening: Mutex<()>,
    events: Mutex<AppSender>,
    launcher: Arc<dyn Launcher>,
    rt: tokio::runtime::Handle,
}

impl Links {
    pub fn new(
        events: AppSender,
        launcher: Arc<dyn Launcher>,
        rt: tokio::runtime::Handle,
    ) -> Arc<Links> {
        Arc::new(Links {
            map: Mutex::new(HashMap::new()),
            opening: Mutex::new(()),
            events: Mutex::new(events),
            launcher,
            rt,
        })
    }

    /// The open link of a Domain, if any.
    pub fn get(&self, domain: &str) -> Option<Arc<DomainLink>> {
        self.map.lock().ok()?.get(domain).cloned()
    }

    /// The link of `target`'s Domain, opened (and the Domain started) when needed. Blocking:
    /// never call it on the event loop's thread.
    pub fn get_or_open(&self, target: &Target) -> anyhow::Result<Arc<DomainLink>> {
        let domain = target.domain_id();
        let _one = self.opening.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(link) = self.get(&domain) {
            return Ok(link);
        }
        let events = self
            .events
            .lock()
            .map_err(|_| anyhow::anyhow!("the TUI is closing"))?
            .clone();
        let for_events = domain.clone();
        let link = self.launcher.open_link(
            &self.rt,
            target,
            "tui",
            std::sync::Arc::new(move |event| {
                let _ = events.send(AppEvent::Link {
                    domain: for_events.clone(),
                    event,
                });
            }),
        )?;
        link.watch_escalations();
        let link = Arc::new(link);
        if let Ok(mut map) = self.map.lock() {
            map.insert(domain, link.clone());
        }
        Ok(link)
    }

    /// Puts a link in place (tests: an unconnected one that records its requests).
    #[cfg(test)]
    pub fn insert(&self, domain: &str, link: Arc<DomainLink>) {
        if let Ok(mut map) = self.map.lock() {
            map.insert(domain.to_owned(), link);
        }
    }

    /// A Domain's link is gone (its coordinator went away).
    pub fn forget(&self, domain: &str) {
        if let Ok(mut map) = self.map.lock() {
            map.remove(domain);
        }
    }

    /// Closes every link (attached sessions are detached and run on) and waits, on the event
    /// loop, until each has said goodbye (bounded).
    pub async fn close_all(&self) {
        let links: Vec<Arc<DomainLink>> = self
            .map
            .lock()
            .map(|mut m| m.drain().map(|(_, l)| l).collect())
            .unwrap_or_default();
        for l in &links {
            l.close();
        }
        for l in &links {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), l.closed()).await;
        }
    }
}
