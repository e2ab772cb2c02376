use super::*;

const ID: &str = "598b4a79f786c79357d980aa9335c13988b3869bf83783a30c4c1311314a48aa";

fn direct() -> RunscExec {
    RunscExec::checked(
        "/usr/bin/nsenter".into(),
        "/usr/bin/runsc".into(),
        "/run/user/1001/runsc".into(),
        ID,
        4242,
    )
    .expect("a valid target")
}

#[test]
fn a_terminal_request_becomes_runsc_exec_in_podmans_namespaces() {
    let req = ExecRequest {
        command: vec!["bash".into(), "-l".into()],
        workdir: "/workspace/src".into(),
        tty: true,
        term: Some("xterm-256color".into()),
        env: vec![("LAZARET_SESSION".into(), "s1".into())],
    };
    let args = direct().args(&req);
    let prelude = crate::runtime::gvisor::exec_prelude();
    let mut want: Vec<String> = [
        "--target=4242",
        "--user",
        "--mount",
        "--preserve-credentials",
        "--",
        "/usr/bin/runsc",
        "--ignore-cgroups",
        "--network=host",
        "--platform=ptrace",
        "--root=/run/user/1001/runsc",
        "exec",
        "--cwd=/workspace/src",
        "--env=TERM=xterm-256color",
        "--env=LAZARET_SESSION=s1",
        ID,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    want.extend(prelude);
    want.extend(["bash".to_string(), "-l".to_string()]);
    assert_eq!(args, want);
}

#[test]
fn only_a_podman_container_id_and_a_real_pid_are_taken() {
    let mk = |id: &str, pid| {
        RunscExec::checked("n".into(), "r".into(), "/r".into(), id, pid).map(|_| ())
    };
    assert!(mk(ID, 1).is_ok());
    assert!(mk(ID, 0).is_err());
    assert!(mk(ID, -1).is_err());
    assert!(mk(&ID[..63], 1).is_err());
    assert!(mk(&ID.to_uppercase(), 1).is_err());
    assert!(mk(&format!("-{}", &ID[1..]), 1).is_err());
    assert!(mk(&format!("../{}", &ID[3..]), 1).is_err());
}

#[test]
fn only_the_sandboxs_own_conmon_counts() {
    let line = |args: &[&str]| args.join("\0").into_bytes();
    assert!(conmon_runs(
        &line(&["/usr/bin/conmon", "--api-version", "1", "-c", ID, "-u", ID]),
        ID
    ));
    let other = ID.replace('5', "6");
    assert!(!conmon_runs(
        &line(&["/usr/bin/conmon", "-c", &other, "-u", ID]),
        ID
    ));
    assert!(!conmon_runs(&line(&["/usr/bin/sleep", "-c", ID]), ID));
    assert!(!conmon_runs(&line(&["/usr/bin/conmon", "-u", ID]), ID));
    assert!(!conmon_runs(b"", ID));
}

#[test]
fn a_pid_that_is_not_conmon_is_not_usable() {
    let mut d = direct();
    d.conmon_pid = std::process::id() as i32;
    assert!(!d.usable());
}
