//! Instruction counts of the mini-emulator compared with Oclgrind's
//! (`OCLGRIND_QUICK=1 oclgrind-kernel --inst-counts`), one work-group in both tools.
//!
//! Tolerances and why the counts differ:
//! * Global memory **bytes** loaded and stored must be equal: both tools execute the same
//!   accesses whatever the instruction selection (a vector access is one instruction here
//!   and may be one or several in Oclgrind's LLVM IR, but the bytes are the same).
//! * **Floating-point** operations (fadd/fsub/fmul/fdiv/fmuladd/fma/... vs our fp32+fp64+
//!   special lane counts) within 10 %: the same arithmetic survives both compilations. A
//!   vector operation counts once per component here and once in Oclgrind: the case gives
//!   its kernel's vector width.
//! * **Integer/address** instructions within a factor of 2.5: Oclgrind interprets LLVM IR
//!   (getelementptr + sext for each address, separate icmp/br loop shapes, no loop
//!   rotation at its optimisation level), while we execute llvm-spirv's SPIR-V at -O2
//!   (one PtrAccessChain, rotated loops). Phis, branches, returns and work-item function
//!   calls are not compared: phis do not exist as executed instructions here (they are
//!   copies on control-flow edges) and loop shapes differ; nor are composite/vector
//!   shuffles (our "other" class), which LLVM IR spells as insert/extract/shufflevector.
mod common;
use common::fe;

use std::process::Command;
use OpenCL::emu::*;

struct Case {
    file: &'static str,
    kernel: &'static str,
    local: [u64; 2],
    /// Components per floating-point operation of the kernel: Oclgrind counts a vector
    /// LLVM instruction once, the emulator once per component (the instructions a GPU
    /// issues; `Inst::issues`).
    fp_width: u64,
    /// (oclgrind sim argument, our argument)
    args: Vec<(String, ArgValue)>,
}

fn buf(n: usize) -> (String, ArgValue) {
    (format!("<size={n} fill=0>"), ArgValue::Buffer(vec![0; n]))
}
fn int(v: i32) -> (String, ArgValue) {
    (
        format!("<size=4>\n{v}"),
        ArgValue::Scalar(v.to_le_bytes().to_vec()),
    )
}
fn local(n: usize) -> (String, ArgValue) {
    (format!("<size={n}>"), ArgValue::Local(n))
}

fn oclgrind_counts(dir: &std::path::Path, c: &Case) -> Option<Vec<(u64, String)>> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels")
        .join(c.file);
    std::fs::copy(&src, dir.join(c.file)).ok()?;
    let mut sim = format!(
        "{}\n{}\n{} {} 1\n{} {} 1\n\n",
        c.file, c.kernel, c.local[0], c.local[1], c.local[0], c.local[1]
    );
    for (s, _) in &c.args {
        sim.push_str(s);
        sim.push('\n');
    }
    let simf = dir.join(format!("{}.sim", c.kernel));
    std::fs::write(&simf, sim).ok()?;
    let out = Command::new("oclgrind-kernel")
        .arg("--inst-counts")
        .arg(&simf)
        .current_dir(dir)
        .env("OCLGRIND_QUICK", "1")
        .output()
        .ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let v: Vec<(u64, String)> = text
        .lines()
        .filter_map(|l| {
            let (n, name) = l.split_once(" - ")?;
            Some((n.trim().parse().ok()?, name.trim().to_string()))
        })
        .collect();
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}

fn bytes_of(name: &str) -> u64 {
    // "load global (16384 bytes)"
    name.split('(')
        .nth(1)
        .and_then(|x| x.split_whitespace().next())
        .and_then(|x| x.parse().ok())
        .unwrap_or(0)
}

#[test]
fn counts_agree_with_oclgrind_within_documented_tolerance() {
    if Command::new("oclgrind-kernel")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIP: oclgrind-kernel not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("clprism-oclgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = vec![
        Case {
            file: "vadd.cl",
            kernel: "vadd",
            local: [128, 1],
            fp_width: 1,
            args: vec![buf(4096), buf(4096), buf(4096), int(1000)],
        },
        Case {
            file: "matmul_naive.cl",
            kernel: "matmul",
            local: [8, 8],
            fp_width: 1,
            args: vec![buf(4096), buf(4096), buf(4096), int(32)],
        },
        Case {
            file: "local_reduce_arg.cl",
            kernel: "local_reduce_arg",
            local: [256, 1],
            fp_width: 1,
            args: vec![buf(8192), local(1024), buf(32)],
        },
        Case {
            file: "int_ops.cl",
            kernel: "int_ops",
            local: [64, 1],
            fp_width: 1,
            args: vec![buf(1024), buf(1024), buf(8192)],
        },
        Case {
            file: "stencil_1d.cl",
            kernel: "stencil",
            local: [64, 1],
            fp_width: 1,
            args: vec![buf(2048), buf(2048)],
        },
        Case {
            file: "float4_ops.cl",
            kernel: "float4_ops",
            local: [64, 1],
            fp_width: 4,
            args: vec![buf(4096), buf(4096), buf(8192)],
        },
    ];
    let mut checked = 0;
    for c in &cases {
        let Some(og) = oclgrind_counts(&dir, c) else {
            panic!("oclgrind-kernel failed on {}", c.file);
        };
        let src = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/kernels")
                .join(c.file),
        )
        .unwrap();
        let m = load_module(&compile_source(&src, "", &fe()).unwrap()).unwrap();
        let mut args: Vec<ArgValue> = c.args.iter().map(|a| a.1.clone()).collect();
        let dims = if c.local[1] > 1 { 2 } else { 1 };
        let shape = LaunchShape::new(&c.local[..dims], &c.local[..dims], None);
        let st = emulate(
            &m,
            c.kernel,
            &shape,
            [0; 3],
            &mut args,
            &EmuConfig::default(),
        )
        .unwrap();
        let sum = |f: &dyn Fn(&str) -> bool| {
            og.iter()
                .filter(|(_, n)| f(n))
                .map(|(k, _)| *k)
                .sum::<u64>()
        };
        let g_ld: u64 = og
            .iter()
            .filter(|(_, n)| n.starts_with("load global") || n.starts_with("load constant"))
            .map(|(_, n)| bytes_of(n))
            .sum();
        let g_st: u64 = og
            .iter()
            .filter(|(_, n)| n.starts_with("store global"))
            .map(|(_, n)| bytes_of(n))
            .sum();
        assert_eq!(st.global_loads.bytes, g_ld, "{}: global load bytes", c.file);
        assert_eq!(
            st.global_stores.bytes, g_st,
            "{}: global store bytes",
            c.file
        );
        let og_fp = sum(&|n| {
            ["fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fcmp"].contains(&n)
                || n.starts_with("call llvm.fmuladd")
                || n.starts_with("call llvm.fma")
                || n.starts_with("call llvm.fabs")
                || n.starts_with("call llvm.sqrt")
                || n.starts_with("call llvm.maxnum")
                || n.starts_with("call llvm.minnum")
                || n.starts_with("call _Z4fmax")
                || n.starts_with("call _Z4fmin")
        });
        let i = &st.instructions;
        let our_fp = i.fp32.lane + i.fp64.lane + i.special.lane;
        let og_fp = og_fp * c.fp_width;
        let tol = (og_fp as f64 * 0.10).max(1.0);
        assert!(
            (our_fp as f64 - og_fp as f64).abs() <= tol,
            "{}: fp ops ours {our_fp} vs Oclgrind {og_fp}",
            c.file
        );
        let og_int = sum(&|n| {
            [
                "add",
                "sub",
                "mul",
                "sdiv",
                "udiv",
                "srem",
                "urem",
                "and",
                "or",
                "xor",
                "shl",
                "lshr",
                "ashr",
                "icmp",
                "getelementptr",
                "select",
            ]
            .contains(&n)
        });
        let our_int = i.int.lane;
        let ratio = our_int.max(1) as f64 / og_int.max(1) as f64;
        assert!(
            (1.0 / 2.5..=2.5).contains(&ratio),
            "{}: integer/address ops ours {our_int} vs Oclgrind {og_int}",
            c.file
        );
        eprintln!(
            "{:<22} load bytes {:>6} store bytes {:>6} fp {:>6}/{:<6} int {:>6}/{:<6}",
            c.file, g_ld, g_st, our_fp, og_fp, our_int, og_int
        );
        checked += 1;
    }
    assert_eq!(checked, cases.len());
    let _ = std::fs::remove_dir_all(&dir);
}
