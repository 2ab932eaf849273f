//! Differential tests of the mini-emulator against PoCL (DESIGN.md §5 "Oracle").
//!
//! Every kernel of `tests/kernels/*.cl` carries its launch in header comments:
//! `// @kernel NAME`, `// @global X[,Y[,Z]]`, `// @local ...`, `// @group ...`,
//! `// @offset ...`, `// @arg SPEC` (one per argument, the `clprism emulate --arg` syntax),
//! `// @options -D...`, and optionally `// @ulp N` (compare written bytes as f32 values with
//! at most N units in the last place of difference, for math built-ins whose last bit
//! legitimately differs between libraries; OpenCL 1.2 §7.4 allows several ulp).
//!
//! The whole NDRange runs natively on PoCL through the real ICD loader
//! (`/usr/lib/x86_64-linux-gnu/libOpenCL.so.1`, loaded with `libloading`); the chosen
//! work-group runs in the emulator on the same initial contents. The bytes the emulated
//! work-group wrote (its write footprint) must equal PoCL's, and every byte outside the
//! footprint must be unchanged in the emulated buffers (the footprint is complete).
mod common;
use common::fe;

use opencl_sys::cl_function_types::*;
use opencl_sys::*;
use std::ffi::c_void;
use OpenCL::emu::{self, cli::parse_arg, ArgValue, EmuConfig, LaunchShape};

struct Cl {
    _lib: libloading::Library,
    ctx: cl_context,
    q: cl_command_queue,
    dev: cl_device_id,
    create_program: clCreateProgramWithSource_t,
    build: clBuildProgram_t,
    build_info: clGetProgramBuildInfo_t,
    create_kernel: clCreateKernel_t,
    set_arg: clSetKernelArg_t,
    create_buffer: clCreateBuffer_t,
    enqueue: clEnqueueNDRangeKernel_t,
    read: clEnqueueReadBuffer_t,
    finish: clFinish_t,
    rel_mem: clReleaseMemObject_t,
    rel_kernel: clReleaseKernel_t,
    rel_prog: clReleaseProgram_t,
}

macro_rules! sym {
    ($lib:expr, $t:ty, $n:literal) => {{
        let s: libloading::Symbol<$t> = $lib.get($n).ok()?;
        *s
    }};
}

impl Cl {
    fn open() -> Option<Cl> {
        if std::env::var_os("POCL_DEVICES").is_none() {
            std::env::set_var("POCL_DEVICES", "pthread");
        }
        unsafe {
            let lib = libloading::Library::new("/usr/lib/x86_64-linux-gnu/libOpenCL.so.1").ok()?;
            let get_platforms = sym!(lib, clGetPlatformIDs_t, b"clGetPlatformIDs")?;
            let get_devices = sym!(lib, clGetDeviceIDs_t, b"clGetDeviceIDs")?;
            let create_context = sym!(lib, clCreateContext_t, b"clCreateContext")?;
            let create_queue = sym!(lib, clCreateCommandQueue_t, b"clCreateCommandQueue")?;
            let mut plats = [std::ptr::null_mut(); 8];
            let mut np = 0u32;
            if get_platforms(8, plats.as_mut_ptr(), &mut np) != 0 || np == 0 {
                return None;
            }
            let mut dev = std::ptr::null_mut();
            let mut nd = 0u32;
            let mut found = false;
            for p in plats.iter().take(np as usize) {
                if get_devices(*p, CL_DEVICE_TYPE_ALL, 1, &mut dev, &mut nd) == 0 && nd > 0 {
                    found = true;
                    break;
                }
            }
            if !found {
                return None;
            }
            let mut err = 0;
            let ctx = create_context(
                std::ptr::null(),
                1,
                &dev,
                None,
                std::ptr::null_mut(),
                &mut err,
            );
            if err != 0 {
                return None;
            }
            let q = create_queue(ctx, dev, 0, &mut err);
            if err != 0 {
                return None;
            }
            Some(Cl {
                ctx,
                q,
                dev,
                create_program: Some(sym!(
                    lib,
                    clCreateProgramWithSource_t,
                    b"clCreateProgramWithSource"
                )?),
                build: Some(sym!(lib, clBuildProgram_t, b"clBuildProgram")?),
                build_info: Some(sym!(
                    lib,
                    clGetProgramBuildInfo_t,
                    b"clGetProgramBuildInfo"
                )?),
                create_kernel: Some(sym!(lib, clCreateKernel_t, b"clCreateKernel")?),
                set_arg: Some(sym!(lib, clSetKernelArg_t, b"clSetKernelArg")?),
                create_buffer: Some(sym!(lib, clCreateBuffer_t, b"clCreateBuffer")?),
                enqueue: Some(sym!(
                    lib,
                    clEnqueueNDRangeKernel_t,
                    b"clEnqueueNDRangeKernel"
                )?),
                read: Some(sym!(lib, clEnqueueReadBuffer_t, b"clEnqueueReadBuffer")?),
                finish: Some(sym!(lib, clFinish_t, b"clFinish")?),
                rel_mem: Some(sym!(lib, clReleaseMemObject_t, b"clReleaseMemObject")?),
                rel_kernel: Some(sym!(lib, clReleaseKernel_t, b"clReleaseKernel")?),
                rel_prog: Some(sym!(lib, clReleaseProgram_t, b"clReleaseProgram")?),
                _lib: lib,
            })
        }
    }

    /// Runs the whole NDRange natively; returns the final buffer contents.
    fn run(
        &self,
        src: &str,
        opts: &str,
        kernel: &str,
        shape: &LaunchShape,
        args: &[ArgValue],
    ) -> Result<Vec<Option<Vec<u8>>>, String> {
        unsafe {
            let mut err = 0;
            let mut sp = src.as_ptr() as *const std::ffi::c_char;
            let len = src.len();
            let prog = (self.create_program.unwrap())(self.ctx, 1, &mut sp, &len, &mut err);
            if err != 0 {
                return Err(format!("clCreateProgramWithSource {err}"));
            }
            let copts = std::ffi::CString::new(opts).unwrap();
            let e = (self.build.unwrap())(
                prog,
                1,
                &self.dev,
                copts.as_ptr(),
                None,
                std::ptr::null_mut(),
            );
            if e != 0 {
                let mut log = vec![0u8; 65536];
                let mut n = 0;
                (self.build_info.unwrap())(
                    prog,
                    self.dev,
                    CL_PROGRAM_BUILD_LOG,
                    log.len(),
                    log.as_mut_ptr() as *mut c_void,
                    &mut n,
                );
                return Err(format!(
                    "build failed {e}: {}",
                    String::from_utf8_lossy(&log[..n.min(log.len())])
                ));
            }
            let kn = std::ffi::CString::new(kernel).unwrap();
            let k = (self.create_kernel.unwrap())(prog, kn.as_ptr(), &mut err);
            if err != 0 {
                return Err(format!("clCreateKernel {err}"));
            }
            let mut mems: Vec<Option<cl_mem>> = Vec::new();
            for (i, a) in args.iter().enumerate() {
                match a {
                    ArgValue::Paged(_) => return Err("paged buffers are not compared".into()),
                    ArgValue::Buffer(b) => {
                        let mut data = b.clone();
                        if data.is_empty() {
                            data.push(0);
                        }
                        let m = (self.create_buffer.unwrap())(
                            self.ctx,
                            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            data.len(),
                            data.as_mut_ptr() as *mut c_void,
                            &mut err,
                        );
                        if err != 0 {
                            return Err(format!("clCreateBuffer {err}"));
                        }
                        let e = (self.set_arg.unwrap())(
                            k,
                            i as u32,
                            std::mem::size_of::<cl_mem>(),
                            &m as *const cl_mem as *const c_void,
                        );
                        if e != 0 {
                            return Err(format!("clSetKernelArg({i}) {e}"));
                        }
                        mems.push(Some(m));
                    }
                    ArgValue::Scalar(s) => {
                        let e = (self.set_arg.unwrap())(
                            k,
                            i as u32,
                            s.len(),
                            s.as_ptr() as *const c_void,
                        );
                        if e != 0 {
                            return Err(format!("clSetKernelArg({i}) {e}"));
                        }
                        mems.push(None);
                    }
                    ArgValue::Local(n) => {
                        let e = (self.set_arg.unwrap())(k, i as u32, *n, std::ptr::null());
                        if e != 0 {
                            return Err(format!("clSetKernelArg({i}) {e}"));
                        }
                        mems.push(None);
                    }
                }
            }
            let wd = shape.work_dim as usize;
            let g: Vec<usize> = shape.global[..wd].iter().map(|x| *x as usize).collect();
            let l: Vec<usize> = shape.local[..wd].iter().map(|x| *x as usize).collect();
            let o: Vec<usize> = shape.offset[..wd].iter().map(|x| *x as usize).collect();
            let e = (self.enqueue.unwrap())(
                self.q,
                k,
                wd as u32,
                o.as_ptr(),
                g.as_ptr(),
                l.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null_mut(),
            );
            if e != 0 {
                return Err(format!("clEnqueueNDRangeKernel {e}"));
            }
            (self.finish.unwrap())(self.q);
            let mut out = Vec::new();
            for (i, m) in mems.iter().enumerate() {
                match (m, &args[i]) {
                    (Some(m), ArgValue::Buffer(b)) => {
                        let mut v = vec![0u8; b.len().max(1)];
                        (self.read.unwrap())(
                            self.q,
                            *m,
                            CL_TRUE,
                            0,
                            v.len(),
                            v.as_mut_ptr() as *mut c_void,
                            0,
                            std::ptr::null(),
                            std::ptr::null_mut(),
                        );
                        v.truncate(b.len());
                        out.push(Some(v));
                        (self.rel_mem.unwrap())(*m);
                    }
                    _ => out.push(None),
                }
            }
            (self.rel_kernel.unwrap())(k);
            (self.rel_prog.unwrap())(prog);
            Ok(out)
        }
    }
}

#[derive(Debug, Default)]
struct Spec {
    kernel: String,
    global: Vec<u64>,
    local: Vec<u64>,
    group: Vec<u64>,
    offset: Option<Vec<u64>>,
    args: Vec<String>,
    options: String,
    ulp: u32,
}

fn dims(s: &str) -> Vec<u64> {
    s.split(',')
        .map(|x| x.trim().parse().expect("bad dims"))
        .collect()
}

fn parse_spec(src: &str) -> Spec {
    let mut s = Spec::default();
    for line in src.lines() {
        let Some(rest) = line.trim().strip_prefix("// @") else {
            continue;
        };
        let (k, v) = rest.split_once(' ').unwrap_or((rest, ""));
        let v = v.trim();
        match k {
            "kernel" => s.kernel = v.into(),
            "global" => s.global = dims(v),
            "local" => s.local = dims(v),
            "group" => s.group = dims(v),
            "offset" => s.offset = Some(dims(v)),
            "arg" => s.args.push(v.into()),
            "options" => s.options = v.into(),
            "ulp" => s.ulp = v.parse().unwrap(),
            _ => {}
        }
    }
    s
}

fn f32_ulp_diff(a: &[u8], b: &[u8]) -> u32 {
    let mut worst = 0u32;
    for (x, y) in a.chunks(4).zip(b.chunks(4)) {
        if x.len() < 4 {
            if x != y {
                return u32::MAX;
            }
            continue;
        }
        let fx = f32::from_le_bytes([x[0], x[1], x[2], x[3]]);
        let fy = f32::from_le_bytes([y[0], y[1], y[2], y[3]]);
        if fx.to_bits() == fy.to_bits() || (fx.is_nan() && fy.is_nan()) {
            continue;
        }
        let ix = fx.to_bits() as i32;
        let iy = fy.to_bits() as i32;
        let ox = if ix < 0 { i32::MIN - ix } else { ix } as i64;
        let oy = if iy < 0 { i32::MIN - iy } else { iy } as i64;
        worst = worst.max((ox - oy).unsigned_abs().min(u32::MAX as u64) as u32);
    }
    worst
}

/// Runs one corpus kernel; returns the number of bytes compared.
fn check_one(cl: &Cl, path: &std::path::Path) -> Result<usize, String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let spec = parse_spec(&src);
    let args: Vec<ArgValue> = spec
        .args
        .iter()
        .enumerate()
        .map(|(j, a)| parse_arg(a, 0x1234_5678 ^ (j as u64 * 7919)))
        .collect::<Result<_, _>>()?;
    let shape = LaunchShape::new(&spec.global, &spec.local, spec.offset.as_deref());
    let spv = emu::compile_source(&src, &spec.options, &fe()).map_err(|e| e.to_string())?;
    let m = emu::load_module(&spv).map_err(|e| e.to_string())?;
    // Guard the native run against a wrong launch spec (an out-of-bounds kernel would
    // corrupt this process's heap inside PoCL): the last work-group must not fault.
    let ng = shape.num_groups();
    let last = [ng[0] - 1, ng[1] - 1, ng[2] - 1];
    if let Err(e) = emu::emulate(
        &m,
        &spec.kernel,
        &shape,
        last,
        &mut args.clone(),
        &EmuConfig::default(),
    ) {
        return Err(format!("last work-group {last:?}: {e}"));
    }
    let native = cl.run(&src, &spec.options, &spec.kernel, &shape, &args)?;
    let mut eargs = args.clone();
    let mut g = [0u64; 3];
    for (i, x) in spec.group.iter().enumerate() {
        g[i] = *x;
    }
    let st = emu::emulate(
        &m,
        &spec.kernel,
        &shape,
        g,
        &mut eargs,
        &EmuConfig::default(),
    )
    .map_err(|e| e.to_string())?;
    if st.budget_exhausted {
        return Err("budget exhausted".into());
    }
    let mut compared = 0usize;
    for fp in &st.footprints {
        let i = fp.arg as usize;
        let (ArgValue::Buffer(orig), ArgValue::Buffer(emu_b)) = (&args[i], &eargs[i]) else {
            return Err(format!("footprint for non-buffer argument {i}"));
        };
        let nat = native[i].as_ref().ok_or("no native buffer")?;
        let mut inside = vec![false; orig.len()];
        for r in &fp.written {
            let (s, e) = (r[0] as usize, r[1] as usize);
            if e > orig.len() {
                return Err(format!("arg {i}: written range {s}..{e} beyond buffer"));
            }
            inside[s..e].iter_mut().for_each(|x| *x = true);
            let (a, b) = (&emu_b[s..e], &nat[s..e]);
            if a != b {
                let ulps = f32_ulp_diff(a, b);
                if spec.ulp == 0 || ulps > spec.ulp {
                    let pos = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0);
                    return Err(format!(
                        "arg {i}: bytes differ at offset {} (emu {:02x?} vs PoCL {:02x?}); max ulp diff {ulps}",
                        s + pos,
                        &a[pos - pos % 4..(pos - pos % 4 + 8).min(a.len())],
                        &b[pos - pos % 4..(pos - pos % 4 + 8).min(b.len())]
                    ));
                }
            }
            compared += e - s;
        }
        for (j, ins) in inside.iter().enumerate() {
            if !ins && emu_b[j] != orig[j] {
                return Err(format!(
                    "arg {i}: byte {j} changed outside the write footprint"
                ));
            }
        }
    }
    Ok(compared)
}

#[test]
fn corpus_matches_pocl() {
    let Some(cl) = Cl::open() else {
        eprintln!("SKIP: no OpenCL platform (PoCL) available");
        return;
    };
    if emu::find_toolchain(&fe()).is_none() {
        eprintln!("SKIP: no clang/llvm-spirv toolchain");
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/kernels")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().map(|x| x == "cl").unwrap_or(false))
        .collect();
    files.sort();
    let only = std::env::var("EMU_ONLY").ok();
    let mut failures = Vec::new();
    let mut ok = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if let Some(o) = &only {
            if !name.contains(o.as_str()) {
                continue;
            }
        }
        match check_one(&cl, f) {
            Ok(n) if n > 0 => {
                ok += 1;
                eprintln!("ok   {name}: {n} bytes compared");
            }
            Ok(_) => failures.push(format!("{name}: the work-group wrote nothing")),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    eprintln!("{ok} kernels match PoCL, {} fail", failures.len());
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} kernels differ from PoCL",
        failures.len(),
        files.len()
    );
    if only.is_none() {
        assert!(ok >= 50, "corpus too small: {ok}");
    }
}
