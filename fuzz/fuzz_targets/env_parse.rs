//! Fuzzes the parsing of clprism's environment: `Config::from_lookup` over arbitrary
//! `NAME=value` lines (DESIGN.md §3), and the value parsers of CLPRISM_SCHEDULER,
//! CLPRISM_BOYER (src/sched/parse.rs), CLPRISM_DEVICES and CLPRISM_FAULT
//! (src/exec/devices.rs). None may panic; every input gives a value or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use OpenCL::{config::Config, exec::devices, sched::parse};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut vars: HashMap<String, String> = HashMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once('=') {
            vars.insert(k.to_string(), v.to_string());
        }
        let _ = parse::parse_scheduler(line);
        let _ = parse::parse_boyer_params(line);
        let _ = devices::parse_selection(line);
        let _ = devices::parse_fault(line);
    }
    let (_cfg, warnings) = Config::from_lookup(|k| vars.get(k).cloned(), 4242);
    for w in warnings {
        assert!(!w.is_empty());
    }
});
