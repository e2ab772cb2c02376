//! The host configuration file (`~/.config/lazaret/config.toml`): TOML, profiles, inheritance,
//! paths, network and escalation rules, validated with `file:line:column` diagnostics.
#![no_main]

use lazaret::config::host_paths::HostPaths;
use lazaret::config::HostConfig;
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let host = HostPaths {
        home: PathBuf::from("/home/dev"),
        config_dir: PathBuf::from("/home/dev/.config/lazaret"),
        storage_root: PathBuf::from("/home/dev/.local/share/lazaret"),
        state_dir: PathBuf::from("/home/dev/.local/state/lazaret"),
        runtime_root: Some(PathBuf::from("/run/user/1000/lazaret")),
    };
    let path = Path::new("/home/dev/.config/lazaret/config.toml");
    match HostConfig::from_text(text, path, &host) {
        Ok(cfg) => {
            // The default profile exists and every profile can be looked up by its name.
            cfg.profile(None).expect("the default profile resolves");
            for name in cfg.names() {
                let p = cfg.profile(Some(name)).expect("a listed profile resolves");
                assert_eq!(p.name, name);
            }
            let again = HostConfig::from_text(text, path, &host).expect("same text, same result");
            assert_eq!(again.names(), cfg.names());
        }
        Err(e) => {
            let shown = format!("{e:#}");
            assert!(shown.contains("config.toml"), "no file named: {shown}");
        }
    }
});
