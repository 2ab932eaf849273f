//! Fuzzes the SPIR-V entry of the emulator (src/emu): `spirv_words` on the bytes an app
//! gives to clCreateProgramWithIL, then `Module::load` (called directly, so a panic is
//! seen by the fuzzer and not turned into `EmuError::Internal` by `load_module`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use OpenCL::emu::{module::Module, spirv_words};

fuzz_target!(|data: &[u8]| {
    // Give the fuzzer a valid header for free half of the time, so it reaches the parser.
    let mut bytes = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 1) && bytes.len() >= 20 {
        bytes[..4].copy_from_slice(&0x0723_0203u32.to_le_bytes());
    }
    if let Ok(words) = spirv_words(&bytes) {
        let _ = Module::load(&words);
    }
});
