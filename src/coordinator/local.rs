//! An in-process Client Session: the engine runs in this process (as in `lazaret tui`), and the
//! session talks to it by direct calls instead of over the socket.

use super::engine::{Engine, Registered};
use super::session_api::{Attached, DomainSession, OpenPrompts, Prompter, SessionCommand};
use crate::escalation::routing::PromptEvent;
use crate::terminal::cancel::Cancel;
use anyhow::Context;
use lazaret_protocol::escalation::Decision;
use lazaret_protocol::messages::Refusal;
use lazaret_protocol::{ComponentId, SessionId};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

pub struct LocalSession {
    engine: Arc<Engine>,
    registered: Registered,
    rt: tokio::runtime::Runtime,
}

impl LocalSession {
    /// Registers a Client Session with an engine running in this process. The Client CLI is
    /// this process itself, so its identity is a fresh component ID rather than a certificate.
    pub fn register(
        engine: Arc<Engine>,
        fingerprint: &str,
        workspace: &Path,
    ) -> anyhow::Result<Result<LocalSession, Refusal>> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the session's event loop")?;
        let client_cli_id = ComponentId::generate()?;
        Ok(engine
            .register(&client_cli_id, fingerprint, workspace)
            .map(|registered| LocalSession {
                engine,
                registered,
                rt,
            }))
    }
}

impl DomainSession for LocalSession {
    fn session_id(&self) -> &SessionId {
        &self.registered.session_id
    }

    fn session_anchor(&self) -> &lazaret_protocol::SessionAnchor {
        &self.registered.session_anchor
    }

    fn attach(&mut self, argv: &[String], _cwd: &str, tty: bool) -> anyhow::Result<String> {
        Ok(self.engine.attach(&self.registered.session_id, argv, tty))
    }

    fn run_attached(
        &mut self,
        command: SessionCommand,
        prompter: Option<Arc<dyn Prompter>>,
    ) -> anyhow::Result<Attached> {
        let cancel = Cancel::default();
        let for_command = cancel.clone();
        let mut shutdown = self.engine.subscribe_shutdown();
        let prompts = &mut self.registered.prompts;
        self.rt.block_on(async {
            let mut task = tokio::task::spawn_blocking(move || command(for_command));
            let mut open = OpenPrompts::default();
            let mut replies = HashMap::new();
            let (answer, mut answers) =
                tokio::sync::mpsc::unbounded_channel::<(String, Option<Decision>)>();
            loop {
                tokio::select! {
                    done = &mut task => {
                        return Ok(Attached::Exited(done.context("the command's thread")??));
                    }
                    Some(event) = prompts.recv() => match event {
                        PromptEvent::Ask { prompt, reply } => {
                            replies.insert(prompt.request_id.clone(), reply);
                            let answer = answer.clone();
                            open.open(prompter.as_ref(), prompt, move |id, d| {
                                let _ = answer.send((id, d));
                            });
                        }
                        PromptEvent::Withdraw { request_id, .. } => {
                            replies.remove(&request_id);
                            open.withdraw(&request_id);
                        }
                    },
                    Some((request_id, decision)) = answers.recv() => {
                        open.answered(&request_id);
                        if let (Some(reply), Some(decision)) = (replies.remove(&request_id), decision) {
                            let _ = reply.send(crate::escalation::routing::Decided::own(decision));
                        }
                    }
                    changed = shutdown.changed() => {
                        let reason = shutdown.borrow().clone();
                        if changed.is_err() || reason.is_some() {
                            drop(open);
                            cancel.fire();
                            let _ = task.await;
                            let reason = reason.unwrap_or_else(|| "the engine stopped".into());
                            return Ok(Attached::CoordinatorGone(reason));
                        }
                    }
                }
            }
        })
    }

    fn leave(self: Box<Self>) -> anyhow::Result<bool> {
        let session = &self.registered.session_id;
        Ok(self.engine.leave(self.registered.cli, Some(session)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::engine::EngineConfig;
    use crate::coordinator::event::Event;
    use crate::coordinator::registry::Registry;
    use crate::coordinator::status::DomainStatus;
    use lazaret_protocol::messages::RefusalCode;
    use lazaret_protocol::DomainId;
    use std::path::PathBuf;
    use std::time::Duration;

    /// An engine whose Domain went through the model's startup (no containers: the engine
    /// itself never touches the runtime).
    fn ready_engine() -> anyhow::Result<Arc<Engine>> {
        let mut reg = Registry::new(None);
        reg.start_as_leader()?;
        for ev in [
            Event::MountStateAnchor,
            Event::StartSidecar,
            Event::InstallPolicy,
            Event::StartSandbox,
            Event::Publish,
        ] {
            reg.record(ev)?;
        }
        let workspace = PathBuf::from("/w");
        let domain_id = DomainId::derive("default", &workspace);
        let status = DomainStatus {
            domain_id: domain_id.to_string(),
            profile: "default".into(),
            workspace: workspace.clone(),
            coordinator_pid: std::process::id(),
            coordinator_id: "c".into(),
            sandbox: "sandbox-x".into(),
            sessions: Vec::new(),
            failures: Vec::new(),
        };
        let config = EngineConfig {
            profile: "default".into(),
            domain_id,
            workspace,
            fingerprint: "fp".into(),
            sandbox: "sandbox-x".into(),
            status_path: None,
        };
        Ok(Arc::new(Engine::new(config, reg, status)))
    }

    fn session(engine: &Arc<Engine>) -> anyhow::Result<Box<dyn DomainSession>> {
        match LocalSession::register(engine.clone(), "fp", Path::new("/w"))? {
            Ok(s) => Ok(Box::new(s)),
            Err(r) => anyhow::bail!("refused: {}", r.reason),
        }
    }

    #[test]
    fn sessions_share_the_sandbox_and_the_last_leave_stops_the_domain() -> anyhow::Result<()> {
        let engine = ready_engine()?;
        let mut a = session(&engine)?;
        let mut b = session(&engine)?;
        assert_ne!(a.session_id(), b.session_id());
        let argv = vec!["true".to_owned()];
        assert_eq!(a.attach(&argv, "/workspace", false)?, "sandbox-x");
        assert_eq!(b.attach(&argv, "/workspace", false)?, "sandbox-x");
        assert_eq!(
            a.run_attached(Box::new(|_| Ok(3)), None)?,
            Attached::Exited(3)
        );
        assert!(!a.leave()?, "another session remains");
        assert!(b.leave()?, "the last leave begins the teardown");
        assert!(engine.registry().state().phase.is_stopping());
        // A Domain that is stopping takes no new session.
        let late = LocalSession::register(engine.clone(), "fp", Path::new("/w"))?;
        assert_eq!(late.err().map(|r| r.code), Some(RefusalCode::Unavailable));
        Ok(())
    }

    #[test]
    fn another_configuration_fingerprint_is_refused_with_a_reason() -> anyhow::Result<()> {
        let engine = ready_engine()?;
        let refused = LocalSession::register(engine, "other", Path::new("/w"))?.err();
        let refused = refused.ok_or_else(|| anyhow::anyhow!("registered despite a mismatch"))?;
        assert_eq!(refused.code, RefusalCode::ConfigMismatch);
        assert!(
            refused.reason.contains("another configuration"),
            "{}",
            refused.reason
        );
        Ok(())
    }

    #[test]
    fn another_workspace_is_refused() -> anyhow::Result<()> {
        let engine = ready_engine()?;
        let refused = LocalSession::register(engine, "fp", Path::new("/elsewhere"))?.err();
        assert_eq!(refused.map(|r| r.code), Some(RefusalCode::Binding));
        Ok(())
    }

    #[test]
    fn a_shutdown_cancels_the_running_command() -> anyhow::Result<()> {
        let engine = ready_engine()?;
        let mut s = session(&engine)?;
        let stopper = engine.clone();
        let timer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            stopper.shut_down("test shutdown".into());
        });
        let outcome = s.run_attached(
            Box::new(|cancel: Cancel| {
                while !cancel.fired() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(137)
            }),
            None,
        )?;
        let _ = timer.join();
        assert_eq!(outcome, Attached::CoordinatorGone("test shutdown".into()));
        Ok(())
    }
}
