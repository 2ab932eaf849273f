//! Device profiles: every shipped profile loads and validates; bad files give errors that
//! name the file and the field; OpenCL devices map to the intended profiles.

use std::path::{Path, PathBuf};

use OpenCL::model::profile::{
    find_profile, load_dir, load_file, Curve, DeviceIdentity, Profile, ProfileError,
};

fn profiles_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles")
}

fn tmp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("clprism-model-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn h100_text() -> String {
    std::fs::read_to_string(profiles_dir().join("h100-sxm.json")).unwrap()
}

/// Edit the H100 profile's JSON and load the result from a file.
fn load_edited(
    tag: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> Result<Profile, ProfileError> {
    let mut v: serde_json::Value = serde_json::from_str(&h100_text()).unwrap();
    edit(&mut v);
    let d = tmp_dir(tag);
    let f = d.join("edited.json");
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    load_file(&f)
}

#[test]
fn every_shipped_profile_loads_and_validates() {
    let ps = load_dir(&profiles_dir()).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
    for want in [
        "hd5870",
        "hd7970",
        "c1060",
        "c2050",
        "h100-sxm",
        "h200",
        "pocl-pthread",
        "pocl-basic",
    ] {
        assert!(names.contains(&want), "missing profile {want}: {names:?}");
    }
    // Every *.json file of the directory became a profile.
    let files = std::fs::read_dir(profiles_dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    assert_eq!(files, ps.len());
    for p in &ps {
        assert!(p.path.is_some());
        p.validate().unwrap();
        // Round trip through JSON keeps the profile.
        let text = serde_json::to_string(p).unwrap();
        let q = Profile::from_json(&text, p.path.as_ref().unwrap()).unwrap();
        assert_eq!(&q, p);
    }
}

#[test]
fn paper_devices_match_table_one() {
    // Panwar Table I: compute units and shared memory banks.
    let ps = load_dir(&profiles_dir()).unwrap();
    let get = |n: &str| ps.iter().find(|p| p.name == n).unwrap();
    for (n, cus, banks) in [
        ("hd5870", 20, 32),
        ("hd7970", 32, 32),
        ("c1060", 30, 16),
        ("c2050", 14, 32),
    ] {
        assert_eq!(get(n).compute_units, cus, "{n}");
        assert_eq!(get(n).local_banks, banks, "{n}");
    }
    // Peak fp32 (GFLOPS, an FMA = 2 flops) from the profile ≈ Table I, within 5 %:
    // C2050 1030, HD 7970 3790 (scalar SIMD: every lane slot is an fp32 lane).
    for (n, gflops) in [("c2050", 1030.0), ("hd7970", 3790.0)] {
        let got = get(n).instruction_throughput.fp32 * 2.0;
        assert!((got / gflops - 1.0).abs() < 0.05, "{n}: {got} vs {gflops}");
    }
}

#[test]
fn unparsable_json_names_the_file() {
    let d = tmp_dir("badjson");
    std::fs::write(d.join("broken.json"), "{ \"name\": \"x\", ").unwrap();
    let e = load_dir(&d).unwrap_err();
    assert!(matches!(e, ProfileError::Parse { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("broken.json"), "{msg}");
    assert!(msg.contains("invalid profile JSON"), "{msg}");
}

#[test]
fn unknown_and_missing_fields_are_named() {
    let e = load_edited("unknown", |v| {
        v["clock_ghz"] = 1.0.into();
    })
    .unwrap_err();
    assert!(e.to_string().contains("clock_ghz"), "{e}");

    let e = load_edited("missing", |v| {
        v.as_object_mut().unwrap().remove("l2_bytes");
    })
    .unwrap_err();
    assert!(e.to_string().contains("l2_bytes"), "{e}");
    assert!(e.to_string().contains("edited.json"), "{e}");
}

#[test]
fn out_of_domain_values_are_named() {
    let e = load_edited("occ", |v| {
        v["global_read"][1][0] = 1.5.into();
    })
    .unwrap_err();
    match &e {
        ProfileError::Invalid { field, .. } => assert_eq!(field, "global_read[1]"),
        _ => panic!("{e:?}"),
    }
    let e = load_edited("order", |v| {
        v["local"][2][0] = 0.01.into();
    })
    .unwrap_err();
    assert!(e.to_string().contains("local[2]"), "{e}");
    let e = load_edited("zero", |v| {
        v["instruction_throughput"]["fp64"] = 0.0.into();
    })
    .unwrap_err();
    assert!(e.to_string().contains("instruction_throughput.fp64"), "{e}");
    let e = load_edited("cu", |v| {
        v["compute_units"] = 0.into();
    })
    .unwrap_err();
    assert!(e.to_string().contains("compute_units"), "{e}");
    let e = load_edited("nomatch", |v| {
        v["match"] = serde_json::json!({});
    })
    .unwrap_err();
    assert!(e.to_string().contains("`match`"), "{e}");
}

#[test]
fn every_number_needs_a_source() {
    let e = load_edited("nosrc", |v| {
        v["sources"].as_object_mut().unwrap().remove("clock_mhz");
    })
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("sources") && msg.contains("clock_mhz"),
        "{msg}"
    );
    // A parent key covers its children; removing it uncovers them.
    let e = load_edited("nosrc2", |v| {
        // the parent key and any per-class keys (measured profiles source each class)
        v["sources"]
            .as_object_mut()
            .unwrap()
            .retain(|k, _| !k.starts_with("instruction_throughput"));
    })
    .unwrap_err();
    assert!(e.to_string().contains("instruction_throughput.int"), "{e}");
    // A source key that names no field is a typo.
    let e = load_edited("typo", |v| {
        v["sources"]["clock_mzh"] = "x".into();
    })
    .unwrap_err();
    assert!(e.to_string().contains("clock_mzh"), "{e}");
}

#[test]
fn latency_floor_and_cache_fields_are_optional_and_sourced() {
    // Absent (every shipped profile before `characterize --only`): loads, `None`.
    let p = load_edited("noextra", |v| {
        for k in [
            "kernel_floor_ns",
            "global_latency_ns",
            "l2_latency_ns",
            "l2_read_bytes_per_ns",
            "l1_bytes_per_cu",
        ] {
            v.as_object_mut().unwrap().remove(k);
            v["sources"].as_object_mut().unwrap().remove(k);
        }
    })
    .unwrap();
    assert_eq!(p.kernel_floor_ns, None);
    assert_eq!(p.global_latency_ns, None);
    // Present with a source: loaded; written back only when present.
    let p = load_edited("extra", |v| {
        // absent here (the shipped GPU profiles have it since session 28)
        v.as_object_mut().unwrap().remove("l2_latency_ns");
        v["sources"]
            .as_object_mut()
            .unwrap()
            .remove("l2_latency_ns");
        v["kernel_floor_ns"] = 2500.0.into();
        v["global_latency_ns"] = 600.0.into();
        v["l1_bytes_per_cu"] = 262144.into();
        for k in ["kernel_floor_ns", "global_latency_ns", "l1_bytes_per_cu"] {
            v["sources"][k] = "measured: test".into();
        }
    })
    .unwrap();
    assert_eq!(p.kernel_floor_ns, Some(2500.0));
    assert_eq!(p.global_latency_ns, Some(600.0));
    assert_eq!(p.l1_bytes_per_cu, Some(262144));
    let json = serde_json::to_value(&p).unwrap();
    assert!(json.get("l2_latency_ns").is_none());
    assert_eq!(json["kernel_floor_ns"], 2500.0);
    // Present without a source, or not positive: refused, naming the field.
    let e = load_edited("extra-nosrc", |v| {
        v["global_latency_ns"] = 600.0.into();
        v["sources"]
            .as_object_mut()
            .unwrap()
            .remove("global_latency_ns");
    })
    .unwrap_err();
    assert!(e.to_string().contains("global_latency_ns"), "{e}");
    let e = load_edited("extra-neg", |v| {
        v["kernel_floor_ns"] = (-1.0).into();
        v["sources"]["kernel_floor_ns"] = "x".into();
    })
    .unwrap_err();
    match &e {
        ProfileError::Invalid { field, .. } => assert_eq!(field, "kernel_floor_ns"),
        _ => panic!("{e:?}"),
    }
}

#[test]
fn duplicate_names_are_refused() {
    let d = tmp_dir("dup");
    std::fs::write(d.join("a.json"), h100_text()).unwrap();
    std::fs::write(d.join("b.json"), h100_text()).unwrap();
    std::fs::write(d.join("README.md"), "not a profile").unwrap();
    let e = load_dir(&d).unwrap_err();
    assert!(matches!(e, ProfileError::Duplicate { .. }), "{e:?}");
}

#[test]
fn missing_directory_is_an_io_error() {
    let e = load_dir(Path::new("/nonexistent/clprism/profiles")).unwrap_err();
    assert!(matches!(e, ProfileError::Io { .. }));
    assert!(e.to_string().contains("/nonexistent/clprism/profiles"));
}

fn ident(name: &str, vendor: &str, version: &str, cus: u32) -> DeviceIdentity {
    DeviceIdentity {
        name: name.into(),
        vendor: vendor.into(),
        version: version.into(),
        driver_version: String::new(),
        max_compute_units: cus,
    }
}

#[test]
fn opencl_devices_map_to_profiles() {
    let ps = load_dir(&profiles_dir()).unwrap();
    let find = |d: &DeviceIdentity| find_profile(&ps, d).map(|p| p.name.clone());
    // Strings as PoCL 3.1 reports them (clinfo on the CI machine).
    let pthread = ident(
        "pthread-skylake-avx512-Intel(R) Xeon(R) Processor",
        "GenuineIntel",
        "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512",
        2,
    );
    let basic = ident(
        "basic-skylake-avx512-Intel(R) Xeon(R) Processor",
        "GenuineIntel",
        "OpenCL 3.0 PoCL HSTR: basic-x86_64-pc-linux-gnu-skylake-avx512",
        1,
    );
    assert_eq!(find(&pthread).as_deref(), Some("pocl-pthread"));
    assert_eq!(find(&basic).as_deref(), Some("pocl-basic"));
    // Older PoCL: same CL_DEVICE_NAME for both; the version string still tells them apart.
    let mut old = basic.clone();
    old.name = "cpu-skylake-avx512".into();
    assert_eq!(find(&old).as_deref(), Some("pocl-basic"));

    let nv = |n: &str| ident(n, "NVIDIA Corporation", "OpenCL 3.0 CUDA", 132);
    assert_eq!(
        find(&nv("NVIDIA H100 80GB HBM3")).as_deref(),
        Some("h100-sxm")
    );
    assert_eq!(find(&nv("NVIDIA H200")).as_deref(), Some("h200"));
    assert_eq!(find(&nv("NVIDIA H100 PCIe")), None);
    assert_eq!(find(&nv("Tesla C2050")).as_deref(), Some("c2050"));
    let amd = ident(
        "Tahiti",
        "Advanced Micro Devices, Inc.",
        "OpenCL 1.2 AMD-APP",
        32,
    );
    assert_eq!(find(&amd).as_deref(), Some("hd7970"));
}

#[test]
fn pinned_profile_wins_over_generic() {
    let ps = load_dir(&profiles_dir()).unwrap();
    let mut pinned = ps
        .iter()
        .find(|p| p.name == "pocl-pthread")
        .unwrap()
        .clone();
    pinned.name = "pocl-pthread-16".into();
    pinned.device_match.max_compute_units = Some(16);
    let mut all = ps.clone();
    all.push(pinned);
    let d16 = ident("pthread-x", "v", "OpenCL 3.0 PoCL HSTR: pthread-x86_64", 16);
    let d2 = ident("pthread-x", "v", "OpenCL 3.0 PoCL HSTR: pthread-x86_64", 2);
    assert_eq!(find_profile(&all, &d16).unwrap().name, "pocl-pthread-16");
    assert_eq!(find_profile(&all, &d2).unwrap().name, "pocl-pthread");
}

#[test]
fn curve_interpolates_linearly_and_clamps() {
    let c = Curve(vec![[0.25, 100.0], [0.5, 200.0], [1.0, 300.0]]);
    assert_eq!(c.at(0.0), 100.0);
    assert_eq!(c.at(0.25), 100.0);
    assert!((c.at(0.375) - 150.0).abs() < 1e-9);
    assert!((c.at(0.75) - 250.0).abs() < 1e-9);
    assert_eq!(c.at(1.0), 300.0);
    assert_eq!(c.at(2.0), 300.0);
    assert_eq!(Curve::flat(7.0).at(0.1), 7.0);
}
