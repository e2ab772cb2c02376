//! Host Escalation (spec §3.6): the coordinator's side of the Escalation Mailbox — reading and
//! verifying signed requests, deciding (auto-approval rules, or the developer asked on the session's terminal),
//! running approved commands on the host, and delivering a result for every accepted request.

pub mod admission;
pub mod approval;
pub mod arrivals;
pub mod assess;
pub mod executable;
pub mod git_env;
pub mod host_exec;
pub mod image_paste;
pub mod mailbox;
pub mod mailbox_fs;
pub mod remote;
pub mod removed_files;
pub mod replay;
pub mod repository;
pub mod request_ids;
pub mod routing;
pub mod rules;
pub mod service;
mod service_exec;
pub mod workdir;
