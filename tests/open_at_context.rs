//! `CLPRISM_BALANCE_OPEN=context` (issue 31 item 1, the default): the balance devices start
//! opening when the app creates its context on a device with like siblings, before the app's
//! first launch, and no context creation of clprism's runs during an app's compile (the open
//! gate); results stay byte-identical. With `launch` nothing opens at the context. On PoCL, two `pthread` devices are like siblings once
//! `CLPRISM_BALANCE_SIBLINGS=any` counts CPU devices.
mod common;
use common::*;

/// nbody in balance mode over two PoCL `pthread` devices counted as like siblings, with
/// `CLPRISM_BALANCE_OPEN=open` (`None`: the default); its stderr.
fn balanced(d: &std::path::Path, open: Option<&str>) -> String {
    let dump = d.join(format!("{}.bin", open.unwrap_or("default")));
    let mut env = vec![
        ("POCL_DEVICES", "pthread pthread"),
        ("CLPRISM_SPLIT", "auto"),
        ("CLPRISM_BALANCE_EARLY", "on"),
        ("CLPRISM_BALANCE_SIBLINGS", "any"),
        ("CLPRISM_DEBUG", "1"),
        ("CLPRISM_LOG", "off"),
        ("CLPRISM_SUMMARY", "off"),
    ];
    env.extend(open.map(|o| ("CLPRISM_BALANCE_OPEN", o)));
    let out = run(
        &examples().join("nbody"),
        &["--dump", dump.to_str().unwrap()],
        Via::Preload("balance"),
        &env,
    );
    assert_ok(&out, &format!("nbody, CLPRISM_BALANCE_OPEN={open:?}"));
    assert!(
        std::fs::read(d.join("native.bin")).unwrap() == std::fs::read(&dump).unwrap(),
        "CLPRISM_BALANCE_OPEN={open:?}: differs from native"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_devices_open_at_the_apps_context_before_its_first_launch() {
    let d = scratch("open-at-context");
    let native = d.join("native.bin");
    let out = run(
        &examples().join("nbody"),
        &["--dump", native.to_str().unwrap()],
        Via::Native,
        &[("POCL_DEVICES", "pthread pthread")],
    );
    assert_ok(&out, "nbody native");
    let at = |text: &str, what: &str| text.lines().position(|l| l.contains(what));
    let stderr = balanced(&d, None);
    let opened = at(&stderr, "the app creates a context on a device with")
        .unwrap_or_else(|| panic!("no opening at the context:\n{stderr}"));
    let first_launch = at(&stderr, "try_balance 0").expect("no launch reached balance mode");
    assert!(
        opened < first_launch,
        "the opening began after the first launch:\n{stderr}"
    );
    assert!(
        at(&stderr, "engine ready at").is_some(),
        "the engine never opened:\n{stderr}"
    );
    assert_no_creation_during_a_compile(&stderr);
    let stderr = balanced(&d, Some("launch"));
    assert!(
        at(&stderr, "the app creates a context").is_none(),
        "`launch` opened at the context:\n{stderr}"
    );
}

/// The open gate (`exec::open_gate`): no context creation of clprism's is in flight while the
/// app compiles, from the `CLPRISM_DEBUG` lines that the gate's holders print inside it.
fn assert_no_creation_during_a_compile(stderr: &str) {
    let (mut creations, mut compiling) = (0usize, false);
    for l in stderr.lines() {
        if l.contains("creating context and queue") {
            assert!(
                !compiling,
                "a context creation began during a compile:\n{stderr}"
            );
            creations += 1;
        } else if l.contains("context and queue created") {
            creations -= 1;
        } else if l.contains("the app's compile begins") {
            assert_eq!(
                creations, 0,
                "a compile began during a context creation:\n{stderr}"
            );
            compiling = true;
        } else if l.contains("the app's compile ends") {
            compiling = false;
        }
    }
}

/// An app that makes its context with `clCreateContextFromType` (clpeak, through cl.hpp):
/// the opening starts once the driver has made the context, before the app's first launch,
/// and the output is byte-identical to native.
#[test]
fn a_context_made_from_a_device_type_opens_the_devices_too() {
    let d = scratch("open-at-context-from-type");
    let exe = c_program("context_from_type");
    let (native, bal) = (d.join("native.bin"), d.join("balance.bin"));
    let devices = ("POCL_DEVICES", "pthread pthread");
    assert_ok(
        &run(
            &exe,
            &["20", native.to_str().unwrap()],
            Via::Native,
            &[devices],
        ),
        "context_from_type native",
    );
    let out = run(
        &exe,
        &["20", bal.to_str().unwrap()],
        Via::Preload("balance"),
        &[
            devices,
            ("CLPRISM_SPLIT", "auto"),
            ("CLPRISM_BALANCE_EARLY", "on"),
            ("CLPRISM_BALANCE_SIBLINGS", "any"),
            ("CLPRISM_DEBUG", "1"),
            ("CLPRISM_LOG", "off"),
            ("CLPRISM_SUMMARY", "off"),
        ],
    );
    assert_ok(&out, "context_from_type balance");
    assert!(
        std::fs::read(&native).unwrap() == std::fs::read(&bal).unwrap(),
        "balanced output differs from native"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let at = |what: &str| stderr.lines().position(|l| l.contains(what));
    let opened = at("the app creates a context on a device with")
        .unwrap_or_else(|| panic!("no opening at the context:\n{stderr}"));
    let first_launch = at("try_balance 0").expect("no launch reached balance mode");
    assert!(
        opened < first_launch,
        "the opening began after the first launch:\n{stderr}"
    );
    assert_no_creation_during_a_compile(&stderr);
}
