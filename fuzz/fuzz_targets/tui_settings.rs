//! `tui.toml`: the control centre's settings (theme, scrollback, panels, key map, alerts).
#![no_main]

use lazaret_ui::tui::settings::{Settings, MAX_SCROLLBACK};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let themes = Path::new("/nonexistent/lazaret-fuzz/themes");
    match Settings::parse(text, "tui.toml", themes) {
        Ok(s) => {
            assert!(s.scrollback <= MAX_SCROLLBACK);
            let again = Settings::parse(text, "tui.toml", themes).expect("same text, same result");
            assert_eq!(again.scrollback, s.scrollback);
        }
        Err(e) => assert!(e.contains("tui.toml"), "no file named: {e}"),
    }
});
