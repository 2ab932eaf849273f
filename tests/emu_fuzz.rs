//! Robustness: mutated SPIR-V modules give errors or statistics, never a crash or a hang
//! (issue 3 "Safety": a malformed or unsupported kernel gets a reason).
mod common;
use common::fe;

use OpenCL::emu::*;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn mutated_modules_never_crash() {
    if find_toolchain(&fe()).is_none() {
        eprintln!("SKIP: no toolchain");
        return;
    }
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/kernels/local_reduce_arg.cl"
    ))
    .unwrap();
    let base = compile_source(&src, "", &fe()).unwrap();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let cfg = EmuConfig {
        instr_budget: 2_000_000,
        time_budget_ns: 200_000_000,
        ..Default::default()
    };
    let (mut loaded, mut ran) = (0, 0);
    for _ in 0..300 {
        let mut w = base.clone();
        for _ in 0..1 + rng.next() % 3 {
            let i = 5 + (rng.next() as usize) % (w.len() - 5);
            w[i] = match rng.next() % 4 {
                0 => rng.next() as u32,
                1 => w[i] ^ (1 << (rng.next() % 32)),
                2 => (rng.next() % 64) as u32,
                _ => w[i].wrapping_add(1),
            };
        }
        let Ok(m) = load_module(&w) else { continue };
        loaded += 1;
        for k in m.kernel_names() {
            let info = m.kernel(&k).unwrap();
            let mut args: Vec<ArgValue> = info
                .args
                .iter()
                .map(|a| match a.kind {
                    ArgKind::Global | ArgKind::Constant => ArgValue::Buffer(vec![0; 8192]),
                    ArgKind::Local => ArgValue::Local(1024),
                    _ => ArgValue::Scalar(vec![0; a.size as usize]),
                })
                .collect();
            let shape = LaunchShape::new(&[512], &[256], None);
            if emulate(&m, &k, &shape, [1, 0, 0], &mut args, &cfg).is_ok() {
                ran += 1;
            }
        }
    }
    eprintln!("{loaded} of 300 mutants loaded, {ran} emulations completed");
    assert!(loaded > 0);
}
