use super::*;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |k| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| (*v).to_owned())
    }
}

#[test]
fn the_reader_is_the_configured_command_then_wayland_then_x11() {
    assert_eq!(
        reader(env(&[
            (ENV_COMMAND, "cat '/tmp/a b.png'"),
            ("DISPLAY", ":0")
        ])),
        Ok(vec!["cat".to_owned(), "/tmp/a b.png".to_owned()])
    );
    assert_eq!(
        reader(env(&[("WAYLAND_DISPLAY", "wayland-0"), ("DISPLAY", ":0")])).map(|a| a[0].clone()),
        Ok("wl-paste".to_owned())
    );
    assert_eq!(
        reader(env(&[("DISPLAY", ":0")])).map(|a| a[0].clone()),
        Ok("xclip".to_owned())
    );
    let none = reader(env(&[])).unwrap_err();
    assert!(none.contains(ENV_COMMAND), "{none}");
    assert!(reader(env(&[(ENV_COMMAND, "cat 'unbalanced")])).is_err());
}

#[test]
fn an_image_passes_only_with_the_profile_allowing_it_after_the_paste_key_and_if_png_or_jpeg() {
    let ok = || Ok(PNG.to_vec());
    assert_eq!(answer(true, true, ok), Answer::Image(PNG.to_vec()));
    let Answer::Refused(why) = answer(true, false, || panic!("read without the paste key")) else {
        panic!("no key, no image");
    };
    assert!(why.contains("press ctrl-v"), "{why}");
    let Answer::Refused(why) = answer(false, true, || panic!("read while off")) else {
        panic!("off");
    };
    assert!(why.contains("image_paste = false"), "{why}");
    for bytes in [
        b"GIF89a".to_vec(),
        b"#!/bin/sh\nrm -rf ~\n".to_vec(),
        Vec::new(),
    ] {
        assert!(
            matches!(answer(true, true, || Ok(bytes.clone())), Answer::Refused(_)),
            "{bytes:?}"
        );
    }
    let mut big = PNG.to_vec();
    big.resize(MAX_IMAGE_BYTES + 1, 0);
    assert!(matches!(answer(true, true, || Ok(big)), Answer::Refused(_)));
    assert_eq!(
        answer(true, true, || Err("no image".into())),
        Answer::Refused("no image".into())
    );
}

#[test]
fn only_the_reserved_argv_alone_is_a_paste_request() {
    assert!(is_paste_request(&[PASTE_IMAGE.to_owned()]));
    assert!(!is_paste_request(&[PASTE_IMAGE.to_owned(), "x".to_owned()]));
    assert!(!is_paste_request(&["xclip".to_owned()]));
    assert!(!is_paste_request(&[]));
}
