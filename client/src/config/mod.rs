//! Reading the developer's trusted configuration files (the host configuration, `tui.toml`,
//! themes): who may own them and where they may live (`trust`), path rules (`paths`), and
//! errors at `file:line:column` (`location`). Shared by the engine and the front ends.

pub mod location;
pub mod paths;
pub mod trust;
