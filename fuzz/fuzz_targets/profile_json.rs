//! Fuzzes the device-profile loader (src/model/profile.rs): `Profile::from_json` then
//! `validate` on arbitrary text, and the derived quantities of a profile that validates.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use OpenCL::model::profile::Profile;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = Profile::from_json(text, Path::new("fuzz.json")) {
        if p.validate().is_ok() {
            let _ = p.register_allocation_unit();
            let _ = p.local_mem_allocation_unit();
        }
    }
});
