use super::*;
use crate::trust::bundle::parse;
use crate::trust::test_certs::ca_pem;
use std::path::Path;

#[test]
fn no_extras_change_nothing() -> anyhow::Result<()> {
    let image_text = format!("{}{}", ca_pem("Root 1"), ca_pem("Root 2"));
    let image = parse(image_text.as_bytes(), Path::new("img"))?;
    // The host trusts the same CAs (in another order): nothing to add.
    let host = vec![image[1].clone(), image[0].clone()];
    let e = extras(&image, &host);
    assert!(e.is_empty());
    assert_eq!(compose(&image_text, &e), None);
    Ok(())
}

#[test]
fn extras_are_the_host_certs_the_image_lacks_once_each() -> anyhow::Result<()> {
    let root = ca_pem("Root 1");
    let proxy = ca_pem("Corp Proxy CA");
    let image = parse(root.as_bytes(), Path::new("img"))?;
    let mut host = parse(format!("{root}{proxy}").as_bytes(), Path::new("/h/a.pem"))?;
    // The same proxy CA again from a second host file.
    host.extend(parse(proxy.as_bytes(), Path::new("/h/b.pem"))?);
    let e = extras(&image, &host);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].subject, "CN=Corp Proxy CA, O=Lazaret tests");
    assert_eq!(e[0].source, Path::new("/h/a.pem"));
    let composed = compose(root.trim_end(), &e).unwrap_or_default();
    // The image's bundle first, as it was; then the extra; both parse back.
    assert!(composed.starts_with(root.trim_end()));
    let back = parse(composed.as_bytes(), Path::new("c"))?;
    assert_eq!(back.len(), 2);
    assert_eq!(back[1].der, e[0].der);
    Ok(())
}
