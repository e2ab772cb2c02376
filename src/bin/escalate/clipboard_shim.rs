//! The clipboard shim (issue #16 item 4): the Escalation Client run as `xclip` or `wl-paste`
//! (`/run/lazaret/bin/xclip`, `/run/lazaret/bin/wl-paste`), for agents that read a pasted
//! image that way (Claude Code on Linux). It asks the Session Coordinator for the host
//! clipboard's image with the reserved request `lazaret:paste-image`; the coordinator answers
//! only right after the developer pressed the paste key (Ctrl-V) in this session's terminal,
//! and only with a PNG or JPEG. It never sets the host clipboard and never passes text (text
//! is pasted through the terminal, as bracketed paste).

use lazaret_protocol::clipboard::{image_type, PASTE_IMAGE};
use lazaret_protocol::escalation::Outcome;
use std::io::Write;

/// Which tool the shim stands in for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Xclip,
    WlPaste,
}

impl Tool {
    /// The tool the program name `argv0` is, if any.
    pub fn named(argv0: &str) -> Option<Tool> {
        match argv0.rsplit('/').next() {
            Some("xclip") => Some(Tool::Xclip),
            Some("wl-paste") => Some(Tool::WlPaste),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Tool::Xclip => "xclip",
            Tool::WlPaste => "wl-paste",
        }
    }
}

/// What the caller asked for.
#[derive(Debug, PartialEq, Eq)]
pub enum Want {
    /// The clipboard's types (`xclip -t TARGETS -o`, `wl-paste -l`).
    Types,
    /// The image itself.
    Image,
    /// Something the shim does not do, and why.
    Refuse(String),
}

const TEXT: &str = "Lazaret's clipboard shim passes pasted images only (PNG, JPEG); paste text \
                    with your terminal";

fn wanted(target: Option<&str>) -> Want {
    match target {
        None => Want::Refuse(TEXT.into()),
        Some("TARGETS") => Want::Types,
        Some("image/png" | "image/jpeg" | "image/jpg") => Want::Image,
        Some(other) if other.starts_with("image/") => {
            Want::Refuse(format!("{other}: only PNG and JPEG images are passed"))
        }
        Some(_) => Want::Refuse(TEXT.into()),
    }
}

/// `xclip` options: `-o[ut]` reads; anything else would set the clipboard. Options may be
/// abbreviated, as xclip allows.
pub fn parse_xclip(args: &[String]) -> Want {
    let (mut out, mut selection, mut target) = (false, "clipboard".to_owned(), None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let name = a.trim_start_matches('-');
        if !a.starts_with('-') || name.is_empty() {
            continue;
        }
        if "out".starts_with(name) {
            out = true;
        } else if "selection".starts_with(name) && name.len() >= 2 {
            selection = it.next().cloned().unwrap_or_default();
        } else if "target".starts_with(name) {
            target = it.next().cloned();
        } else if ["display", "loops"].iter().any(|o| o.starts_with(name)) {
            it.next();
        }
    }
    if !out {
        return Want::Refuse(
            "the sandbox cannot set the host clipboard (copy from a pane: drag with the mouse, \
             or ctrl-b y)"
                .into(),
        );
    }
    if !selection.starts_with('c') {
        return Want::Refuse(format!(
            "the {selection} selection is not passed; only pasted images (CLIPBOARD)"
        ));
    }
    wanted(target.as_deref())
}

/// `wl-paste` options.
pub fn parse_wl_paste(args: &[String]) -> Want {
    let mut target = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-l" | "--list-types" => return Want::Types,
            "-t" | "--type" => target = it.next().cloned(),
            "-p" | "--primary" => {
                return Want::Refuse("the primary selection is not passed".into())
            }
            "-w" | "--watch" => return Want::Refuse("--watch is not supported".into()),
            "-s" | "--seat" => {
                it.next();
            }
            _ => {
                if let Some(t) = a.strip_prefix("--type=") {
                    target = Some(t.to_owned());
                } else if let Some(t) = a.strip_prefix("-t").filter(|t| !t.is_empty()) {
                    target = Some(t.to_owned());
                }
            }
        }
    }
    wanted(target.as_deref())
}

/// Runs the shim; returns the exit status.
pub fn main(tool: Tool, args: &[String]) -> u8 {
    let want = match tool {
        Tool::Xclip => parse_xclip(args),
        Tool::WlPaste => parse_wl_paste(args),
    };
    let fail = |why: &str| {
        eprintln!("{}: Lazaret: {why}", tool.name());
        1
    };
    if let Want::Refuse(why) = &want {
        return fail(why);
    }
    let result = match super::ask(vec![PASTE_IMAGE.to_owned()], String::new(), 30) {
        Ok(r) => r,
        Err(f) => return fail(&f.message),
    };
    if result.outcome != Outcome::Completed || result.exit_code != Some(0) {
        return fail(&result.message);
    }
    let image = result.stdout_bytes().unwrap_or_default();
    let Some(kind) = image_type(&image) else {
        return fail("the answer was not a PNG or JPEG image");
    };
    let bytes = match (want, tool) {
        (Want::Types, Tool::Xclip) => format!("TARGETS\n{kind}\n").into_bytes(),
        (Want::Types, _) => format!("{kind}\n").into_bytes(),
        _ => image,
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(&bytes).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) => fail(&format!("writing the image: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_tools_are_known_by_name_or_path() {
        assert_eq!(Tool::named("xclip"), Some(Tool::Xclip));
        assert_eq!(
            Tool::named("/run/lazaret/bin/wl-paste"),
            Some(Tool::WlPaste)
        );
        assert_eq!(Tool::named("lazaret-escalate"), None);
    }

    #[test]
    fn xclip_reads_images_and_types_of_the_clipboard_only() {
        let png = parse_xclip(&args("-selection clipboard -t image/png -o"));
        assert_eq!(png, Want::Image);
        assert_eq!(
            parse_xclip(&args("-sel c -target TARGETS -out")),
            Want::Types
        );
        assert_eq!(
            parse_xclip(&args("-se clip -t image/jpeg -o -display :0")),
            Want::Image
        );
        for refused in [
            "-selection clipboard -t image/png",
            "-i -selection clipboard",
            "-selection clipboard",
            "-selection primary -t image/png -o",
            "-selection clipboard -o",
            "-selection clipboard -t text/plain -o",
            "-selection clipboard -t image/gif -o",
        ] {
            assert!(
                matches!(parse_xclip(&args(refused)), Want::Refuse(_)),
                "{refused}"
            );
        }
    }

    #[test]
    fn wl_paste_reads_images_and_types_only() {
        assert_eq!(parse_wl_paste(&args("--type image/png")), Want::Image);
        assert_eq!(
            parse_wl_paste(&args("--no-newline --type=image/jpeg")),
            Want::Image
        );
        assert_eq!(parse_wl_paste(&args("-timage/png")), Want::Image);
        assert_eq!(parse_wl_paste(&args("-l")), Want::Types);
        assert_eq!(parse_wl_paste(&args("--list-types")), Want::Types);
        for refused in [
            "",
            "-n",
            "--primary --type image/png",
            "--watch cat",
            "-t text",
        ] {
            assert!(
                matches!(parse_wl_paste(&args(refused)), Want::Refuse(_)),
                "{refused:?}"
            );
        }
    }
}
