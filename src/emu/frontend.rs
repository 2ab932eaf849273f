//! Front end of the mini-emulator (DESIGN.md §5, Panwar et al. §IV-C): OpenCL C source →
//! SPIR-V through an LLVM toolchain found at run time, with an on-disk cache.
//!
//! Where the toolchain and the cache are comes from the caller ([`FrontendOptions`]; the
//! interposer and the tools pass `crate::config`'s values): the emulator never reads the
//! environment.
//!
//! Toolchain: the directory `CLPRISM_TOOLCHAIN` (holding `clang[-N]` and `llvm-spirv[-N]`,
//! optionally `opt[-N]`), else `clang-N` + `llvm-spirv-N` of one major version on `PATH`
//! (newest first), else unversioned `clang` + `llvm-spirv`. Processes are run without a
//! shell; the source goes in on stdin and the bitcode/SPIR-V come out on stdout.
//!
//! Every optimised compile also gets the loop-unrolling preferences of a GPU's compiler
//! ([`UNROLL`]: small loops of known trip count unrolled, as the emulated statistics should
//! count what the GPU executes).
//!
//! llvm-spirv 15 rejects some of clang's `-O2` output (a `switch` narrowed to `i2`,
//! intrinsics such as `llvm.uadd.sat` or `llvm.vector.reduce.add`, `freeze`); then the
//! source is compiled along the fallbacks of [`CompilePath`]: at `-O0 -Xclang
//! -disable-O0-optnone` cleaned up with `opt` when there is one, else at `-O2` with what
//! llvm-spirv rejects lowered ([`super::lower`]), else at plain `-O0`. The log's
//! `emulation.compile_path` says which.
//!
//! Cache: `CLPRISM_CACHE`, else `$XDG_CACHE_HOME/clprism`, else `~/.cache/clprism`. A file
//! is named `<H(source, options)>-<H(toolchain version)>.<path>.spv` (`<path>`:
//! [`CompilePath::as_str`]; entries of older versions lack it); without a toolchain any
//! entry for `H(source, options)` is used, so a cache filled on one machine serves another
//! that has no toolchain. Entries are written and read through [`crate::cache`] (temporary
//! file + rename, mode 0600, directory 0700, symbolic links never followed; a read refreshes
//! an old entry's time for the least-recently-used bound `CLPRISM_CACHE_MAX`).

use super::EmuError;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where the front end looks for its toolchain and keeps its cache (see the module docs).
/// Built by the caller, from `crate::config` ([`FrontendOptions::from_config`]) or
/// explicitly (tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontendOptions {
    /// Directory holding `clang[-N]` and `llvm-spirv[-N]` (or a `bin/` that does):
    /// `CLPRISM_TOOLCHAIN`. When set, nothing else is searched.
    pub toolchain: Option<PathBuf>,
    /// Directories searched for the toolchain when `toolchain` is `None`: `PATH`'s.
    pub search_path: Vec<PathBuf>,
    /// The SPIR-V cache directory (not created until written): `CLPRISM_CACHE`, else
    /// `$XDG_CACHE_HOME/clprism`, else `~/.cache/clprism`. `None`: no cache.
    pub cache: Option<PathBuf>,
}

impl FrontendOptions {
    /// The options from the values of `CLPRISM_TOOLCHAIN` and `CLPRISM_CACHE` (`None` or
    /// empty: unset) and a lookup `var` of `PATH`, `XDG_CACHE_HOME` and `HOME` (the
    /// fallbacks of the module docs; the caller passes the environment's).
    pub fn resolve(
        toolchain: Option<PathBuf>,
        cache: Option<PathBuf>,
        var: impl Fn(&str) -> Option<OsString>,
    ) -> FrontendOptions {
        let nonempty = |d: &OsString| !d.is_empty();
        let cache = cache
            .filter(|d| !d.as_os_str().is_empty())
            .or_else(|| {
                var("XDG_CACHE_HOME")
                    .filter(nonempty)
                    .map(|d| PathBuf::from(d).join("clprism"))
            })
            .or_else(|| {
                var("HOME")
                    .filter(nonempty)
                    .map(|h| PathBuf::from(h).join(".cache").join("clprism"))
            });
        FrontendOptions {
            toolchain: toolchain.filter(|d| !d.as_os_str().is_empty()),
            search_path: var("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
            cache,
        }
    }

    /// [`Self::resolve`] with the configuration's `CLPRISM_TOOLCHAIN` and `CLPRISM_CACHE`.
    pub fn from_config(
        cfg: &crate::config::Config,
        var: impl Fn(&str) -> Option<OsString>,
    ) -> FrontendOptions {
        Self::resolve(cfg.toolchain.clone(), cfg.cache.clone(), var)
    }
}

/// A located LLVM toolchain.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// Path of the `clang` executable.
    pub clang: PathBuf,
    /// Path of the `llvm-spirv` executable.
    pub llvm_spirv: PathBuf,
    /// Path of the `opt` executable, when found (needed only for the -O0 fallback).
    pub opt: Option<PathBuf>,
    /// Which clang and llvm-spirv files these are (resolved path, size, modification time),
    /// part of the cache key: another toolchain gets its own cache entries.
    pub identity: String,
}

fn is_exec(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Which file tool `p` is: its resolved path, size and modification time, or `None` when
/// it cannot be read. Part of the SPIR-V cache key in place of the tools' `--version`
/// text, which cost two process starts (about 50 ms, clang's being most of it) every time
/// a program was compiled or found in the cache: balance mode's floating-point check paid
/// it on the app's thread (session 15).
fn identity_of(p: &Path) -> Option<String> {
    let real = std::fs::canonicalize(p).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Some(format!("{} {} {mtime}", real.display(), meta.len()))
}

fn find_in_dirs(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| is_exec(p))
}

fn make(clang: PathBuf, spirv: PathBuf, opt: Option<PathBuf>) -> Option<Toolchain> {
    let v1 = identity_of(&clang)?;
    let v2 = identity_of(&spirv).unwrap_or_default();
    Some(Toolchain {
        clang,
        llvm_spirv: spirv,
        // The passes of the -O0 fallback are part of what the tools make of a source: a
        // cache filled with other passes is not reused.
        // So are the unrolling preferences of the optimised paths.
        identity: match opt {
            Some(_) => format!("{v1} | {v2} | {OPT_PASSES} | {}", UNROLL.join(" ")),
            None => format!("{v1} | {v2} | {}", UNROLL.join(" ")),
        },
        opt,
    })
}

/// Locates the toolchain where `fe` says (cheap: no tool is run, [`identity_of`]). Returns `None` when
/// none is found.
pub fn find_toolchain(fe: &FrontendOptions) -> Option<Toolchain> {
    let search = |dirs: &[PathBuf]| -> Option<Toolchain> {
        for n in (10..=30).rev() {
            if let (Some(c), Some(s)) = (
                find_in_dirs(dirs, &format!("clang-{n}")),
                find_in_dirs(dirs, &format!("llvm-spirv-{n}")),
            ) {
                let o = find_in_dirs(dirs, &format!("opt-{n}"));
                return make(c, s, o);
            }
        }
        if let (Some(c), Some(s)) = (
            find_in_dirs(dirs, "clang"),
            find_in_dirs(dirs, "llvm-spirv"),
        ) {
            let o = find_in_dirs(dirs, "opt");
            return make(c, s, o);
        }
        None
    };
    if let Some(d) = &fe.toolchain {
        return search(&[d.clone(), d.join("bin")]);
    }
    search(&fe.search_path)
}

/// Splits a build-option string into words (whitespace separated; single and double quotes
/// group).
fn split_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for ch in s.chars() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => cur.push(ch),
            None if ch == '"' || ch == '\'' => {
                quote = Some(ch);
                any = true
            }
            None if ch.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            None => cur.push(ch),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Clang options for the macros an OpenCL C compiler predefines from its device and that
/// clang, compiling for SPIR, gets wrong: `__OPENCL_VERSION__` (OpenCL C: the OpenCL
/// version the *device* supports, parsed from its `CL_DEVICE_VERSION`, "OpenCL 3.0 ..." →
/// 300) is not defined by clang at all, and `__IMAGE_SUPPORT__` is defined by clang whether
/// or not the device has images. The emulated program must see the same preprocessed
/// source as the device's build: a kernel that stores only `#ifdef __OPENCL_VERSION__`
/// otherwise emulates with no store there, and balance mode, trusting that footprint,
/// never copies the bytes the devices wrote back into the app's buffer (piglit's
/// `__OPENCL_VERSION__ must be consistent with host`). Empty where the version cannot be
/// parsed and the device has images.
pub fn device_defines(device_version: &str, image_support: bool) -> String {
    let mut out = Vec::new();
    let version = device_version
        .strip_prefix("OpenCL ")
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.split_once('.'))
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)));
    if let Some((major, minor)) = version {
        out.push(format!("-D__OPENCL_VERSION__={}", major * 100 + minor * 10));
    }
    if !image_support {
        out.push("-U__IMAGE_SUPPORT__".to_string());
    }
    out.join(" ")
}

/// Keeps the build options that change the meaning of the source: `-D`, `-I`, `-cl-std=`
/// (and `-U`), and `-cl-fast-relaxed-math` as the macro it defines (`__FAST_RELAXED_MATH__`,
/// which a kernel may test like `__OPENCL_VERSION__`, see [`device_defines`]; the flag
/// itself would only change clang's code generation). Everything else (`-cl-mad-enable`,
/// `-w`, ...) is dropped. Returns clang arguments.
pub fn filter_options(options: &str) -> Vec<String> {
    let w = split_words(options);
    let mut out = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let a = &w[i];
        if a == "-D" || a == "-I" || a == "-U" {
            if let Some(v) = w.get(i + 1) {
                out.push(format!("{a}{v}"));
            }
            i += 2;
            continue;
        }
        if (a.starts_with("-D") || a.starts_with("-I") || a.starts_with("-U")) && a.len() > 2 {
            out.push(a.clone());
        } else if a == "-cl-fast-relaxed-math" {
            out.push("-D__FAST_RELAXED_MATH__=1".into());
        } else if let Some(v) = a.strip_prefix("-cl-std=") {
            // clang 15 knows CL1.0 .. CL3.0; keep only sane values.
            if v.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '+')
            {
                out.push(a.clone());
            }
        }
        i += 1;
    }
    if !out.iter().any(|a| a.starts_with("-cl-std=")) {
        out.push("-cl-std=CL1.2".into());
    }
    out
}

fn run_pipe(prog: &Path, args: &[String], input: &[u8]) -> Result<Vec<u8>, String> {
    // The toolchain must not load clprism itself (when the app runs under LD_PRELOAD or
    // an OpenCL layer), so those variables are removed from its environment.
    let mut child = Command::new(prog)
        .args(args)
        .env_remove("LD_PRELOAD")
        .env_remove("OPENCL_LAYERS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", prog.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let data = input.to_vec();
    // Feed stdin from a thread so that large outputs cannot deadlock us.
    // A tool that exits without reading its input (crash, bad option) would make this write
    // raise SIGPIPE, which kills the whole application: clprism lives in a C program where
    // SIGPIPE keeps its default action (Rust only ignores it in Rust executables). The signal
    // is blocked in this thread only; the write then fails with EPIPE, and a SIGPIPE left
    // pending on the thread is discarded when it exits.
    let feeder = std::thread::spawn(move || {
        // SAFETY: plain libc calls on a local signal set; only this thread's mask changes.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        let _ = stdin.write_all(&data);
    });
    let mut out = Vec::new();
    let mut err = Vec::new();
    if let Some(mut so) = child.stdout.take() {
        let mut se = child.stderr.take();
        let errt = std::thread::spawn(move || {
            let mut e = Vec::new();
            if let Some(se) = se.as_mut() {
                let _ = se.read_to_end(&mut e);
            }
            e
        });
        let _ = so.read_to_end(&mut out);
        err = errt.join().unwrap_or_default();
    }
    let _ = feeder.join();
    let st = child.wait().map_err(|e| e.to_string())?;
    if !st.success() {
        let e = String::from_utf8_lossy(&err);
        let e: String = e.lines().take(8).collect::<Vec<_>>().join("\n");
        return Err(format!("{} failed ({st}): {e}", prog.display()));
    }
    Ok(out)
}

fn bytes_to_words(b: &[u8]) -> Result<Vec<u32>, EmuError> {
    if !b.len().is_multiple_of(4) || b.len() < 20 {
        return Err(EmuError::Frontend("SPIR-V output has a bad size".into()));
    }
    let w: Vec<u32> = b
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if w[0] != 0x0723_0203 {
        return Err(EmuError::Frontend(
            "SPIR-V output has a bad magic number".into(),
        ));
    }
    Ok(w)
}

/// How the front end turned OpenCL C into SPIR-V (`emulation.compile_path` in the log,
/// `log::schema::CompilePath`): clang's `-O2` unless llvm-spirv rejects its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompilePath {
    /// `clang -O2`, translated as it is (the emulator's statistics assume this code).
    O2,
    /// llvm-spirv rejected the `-O2` output: `clang -O0 -Xclang -disable-O0-optnone`
    /// cleaned up by LLVM's `opt` with -O2's scalar passes ([`OPT_PASSES`]).
    O0Opt,
    /// llvm-spirv rejected the `-O2` output and there is no `opt` (or llvm-spirv rejected
    /// its output too, as for clang builtins that make the intrinsics at any level):
    /// `clang -O2` without the
    /// vectorizers (`-fno-slp-vectorize -fno-vectorize`, which make `freeze` and
    /// `llvm.vector.reduce.*`) and without closed forms of loop exit values (`-mllvm
    /// -replexitval=never`: `i33` arithmetic) as text, with what llvm-spirv still rejects
    /// lowered by [`super::lower`] (`llvm.uadd.sat`, ..., switches narrowed to `i2`),
    /// assembled again by clang.
    O2Lowered,
    /// Neither of the above accepted (no `opt`, and the lowered `-O2` output still rejected):
    /// `clang -O0` as it is. Private
    /// variables then stay in memory: the statistics count their loads and stores.
    O0,
}

impl CompilePath {
    /// Every path, in the order the front end tries them.
    pub const ALL: [CompilePath; 4] = [
        CompilePath::O2,
        CompilePath::O0Opt,
        CompilePath::O2Lowered,
        CompilePath::O0,
    ];

    /// The name the log and the SPIR-V cache use.
    pub fn as_str(self) -> &'static str {
        match self {
            CompilePath::O2 => "O2",
            CompilePath::O0Opt => "O0+opt",
            CompilePath::O2Lowered => "O2-lowered",
            CompilePath::O0 => "O0",
        }
    }

    /// The path named `s` ([`Self::as_str`]).
    pub fn parse(s: &str) -> Option<CompilePath> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// The `opt` passes of [`CompilePath::O0Opt`]: -O2's scalar clean-up, then the full
/// unrolling of loops with a small constant trip count and the promotion to registers of the
/// private arrays it leaves indexed by constants, as -O2 (and a GPU vendor's compiler) does.
/// Without them Rodinia kmeans_update's `for (d = 0; d < DIMS; d++) sum[d] += points[...]`
/// stays a loop over a private array, one basic block per load, and its warps wait once per
/// load instead of once for the four (`WorkGroupStats::load_waits`; session 27b). No
/// `indvars`: its closed forms of loop exit values are `i33` arithmetic, which llvm-spirv
/// rejects.
pub const OPT_PASSES: &str =
    "sroa,early-cse,simplifycfg,instsimplify,loop-mssa(licm),gvn,simplifycfg,\
     loop(loop-rotate,loop-unroll-full),sroa,early-cse,instsimplify,simplifycfg";

/// LLVM's loop-unrolling preferences of a GPU vendor's compiler, given to every optimised
/// compile (clang's `-O2`, the lowered `-O2`, and `opt` after `-O0`), so that the emulated
/// code's loop overhead (induction variable, compare, branch, address arithmetic per
/// iteration) is what the GPU executes:
///
/// * `-unroll-threshold=300`: full unrolling of loops with a known trip count up to the
///   size -O3 allows (LLVM's default at `-O3`; clang's `-O2` allows 150). CUDA device code
///   is compiled at `-O3` by default, and "by default, the compiler unrolls small loops
///   with a known trip count" (CUDA C++ Programming Guide, `#pragma unroll`). Without it a
///   16-step tile loop (`examples/kernels/matmul_local.cl`: 12 LLVM instructions per
///   step) stays a loop: 13 instructions per multiply-add emulated where the GPU issues 3.
/// * partial unrolling of loops of known trip count too large to unroll fully, at a
///   quarter of that threshold: LLVM's NVPTX target enables it
///   (`NVPTXTTIImpl::getUnrollingPreferences`, llvm/lib/Target/NVPTX/NVPTXTargetTransformInfo.cpp:
///   "This partially unrolls small loops which are often unrolled by the PTX to SASS
///   compiler"); the SPIR target does not.
///
/// NVPTX's run-time unrolling (loops whose trip count is a kernel argument) is left out:
/// the remainder loop it adds hides the loop from the write-free loop skip
/// (`emu::dataflow`'s `loop_skips`, which balance mode's footprints need;
/// tests/emu_loop_skip.rs fails with it), so such loops keep their per-iteration overhead.
pub const UNROLL: [&str; 6] = [
    "-mllvm",
    "-unroll-threshold=300",
    "-mllvm",
    "-unroll-allow-partial",
    "-mllvm",
    "-unroll-partial-threshold=75",
];

/// clang's arguments for OpenCL C on stdin at `olevel` with the app's filtered `opts`,
/// bitcode (or LLVM IR text when `text`) on stdout.
fn clang_args(opts: &[String], olevel: &[&str], text: bool) -> Vec<String> {
    let mut a: Vec<String> = [
        "-x",
        "cl",
        if text { "-S" } else { "-c" },
        "-target",
        "spir64",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(
        [
            "-emit-llvm",
            "-Xclang",
            "-finclude-default-header",
            // `inline` with GNU89 semantics: a definition is emitted. Under C99's (clang's
            // default for OpenCL C) a non-static `inline` function that is not inlined is
            // only declared, and the emulator met a call to an undefined function: CLBlast's
            // XgemmBody, LoadMatrixA and 5 more (`INLINE_FUNC`), 5,800 of 9,784 launches of
            // its xgemm and xgemv tests on an H100 not emulated. Vendors' compilers build them.
            "-fgnu89-inline",
            "-w",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a.extend(olevel.iter().map(|s| s.to_string()));
    a.extend(opts.iter().cloned());
    a.extend(["-o".into(), "-".into(), "-".into()]);
    a
}

/// llvm-spirv on bitcode `bc`: SPIR-V words, or the translator's complaint.
fn translate(tc: &Toolchain, bc: &[u8]) -> Result<Vec<u32>, String> {
    let spv = run_pipe(&tc.llvm_spirv, &["-".into(), "-o".into(), "-".into()], bc)?;
    bytes_to_words(&spv).map_err(|e| e.to_string())
}

/// [`CompilePath::O0Opt`].
fn compile_o0_opt(
    tc: &Toolchain,
    opt: &Path,
    opts: &[String],
    source: &str,
) -> Result<Vec<u32>, String> {
    let o0 = ["-O0", "-Xclang", "-disable-O0-optnone"];
    let bc0 = run_pipe(&tc.clang, &clang_args(opts, &o0, false), source.as_bytes())?;
    let passes = format!("-passes={OPT_PASSES}");
    // `opt` takes the unrolling options without clang's `-mllvm`.
    let mut args: Vec<String> = vec![passes];
    args.extend(
        UNROLL
            .iter()
            .filter(|a| **a != "-mllvm")
            .map(|a| a.to_string()),
    );
    args.extend(["-o".into(), "-".into(), "-".into()]);
    let bc1 = run_pipe(opt, &args, &bc0)?;
    translate(tc, &bc1)
}

/// [`CompilePath::O2Lowered`].
fn compile_lowered(tc: &Toolchain, opts: &[String], source: &str) -> Result<Vec<u32>, String> {
    // no vectorizers (`freeze`, `llvm.vector.reduce.*`), no closed forms of loop exit
    // values (a sum over the induction variable becomes `i33` arithmetic: InvalidBitWidth)
    let o2: Vec<&str> = [
        "-O2",
        "-fno-slp-vectorize",
        "-fno-vectorize",
        "-mllvm",
        "-replexitval=never",
    ]
    .into_iter()
    .chain(UNROLL)
    .collect();
    let ll = run_pipe(&tc.clang, &clang_args(opts, &o2, true), source.as_bytes())?;
    let (widened, _) = super::lower::widen_switches(&String::from_utf8_lossy(&ll));
    let lowered = super::lower::lower(&widened);
    let assemble: Vec<String> = [
        "-x",
        "ir",
        "-c",
        "-emit-llvm",
        "-target",
        "spir64",
        "-O0",
        "-o",
        "-",
        "-",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let bc = run_pipe(&tc.clang, &assemble, lowered.text.as_bytes())?;
    translate(tc, &bc)
}

/// Compiles with a given toolchain, no cache: `-O2`, else the first of the fallbacks of
/// [`CompilePath`] that llvm-spirv accepts (`-O0` + `opt` when there is an `opt`, the
/// lowered `-O2`, plain `-O0`). Returns the words and the path taken.
pub fn compile_path_with(
    tc: &Toolchain,
    source: &str,
    options: &str,
) -> Result<(Vec<u32>, CompilePath), EmuError> {
    let opts = filter_options(options);
    let o2: Vec<&str> = ["-O2"].into_iter().chain(UNROLL).collect();
    let bc = run_pipe(&tc.clang, &clang_args(&opts, &o2, false), source.as_bytes())
        .map_err(EmuError::Frontend)?;
    let first = match translate(tc, &bc) {
        Ok(w) => return Ok((w, CompilePath::O2)),
        Err(e) => e,
    };
    let mut why = format!("llvm-spirv rejected -O2 output: {first}");
    match &tc.opt {
        Some(opt) => match compile_o0_opt(tc, opt, &opts, source) {
            Ok(w) => return Ok((w, CompilePath::O0Opt)),
            Err(e) => why.push_str(&format!("; -O0 + opt: {e}")),
        },
        None => why.push_str("; no opt found"),
    }
    match compile_lowered(tc, &opts, source) {
        Ok(w) => return Ok((w, CompilePath::O2Lowered)),
        Err(e) => why.push_str(&format!("; lowered -O2: {e}")),
    }
    // the intrinsics a builtin makes even at -O0 (`__builtin_smul_overflow`) fail here too
    let o0 = run_pipe(
        &tc.clang,
        &clang_args(&opts, &["-O0"], false),
        source.as_bytes(),
    )
    .and_then(|bc| translate(tc, &bc));
    o0.map(|w| (w, CompilePath::O0))
        .map_err(|e| EmuError::Frontend(format!("{why}; -O0: {e}")))
}

/// [`compile_path_with`] without the path.
pub fn compile_with(tc: &Toolchain, source: &str, options: &str) -> Result<Vec<u32>, EmuError> {
    compile_path_with(tc, source, options).map(|x| x.0)
}

/// Runs the toolchain's preprocessor on OpenCL C `source` with the `-D`/`-I`/`-U` build
/// `options` (as [`filter_options`] keeps them), without OpenCL's default headers and without
/// line markers: the text the compiler would see, `#include`s expanded. Relative include
/// paths resolve from the current directory (the source goes in on stdin).
/// Errors: [`EmuError::NoToolchain`] without a toolchain, [`EmuError::Frontend`] when the
/// preprocessor fails (a missing header).
pub fn preprocess(source: &str, options: &str, fe: &FrontendOptions) -> Result<String, EmuError> {
    let tc = find_toolchain(fe)
        .ok_or_else(|| EmuError::NoToolchain("no clang found (set CLPRISM_TOOLCHAIN)".into()))?;
    // -cl-no-stdinc: not even opencl-c-base.h (it declares printf and the atomics)
    let mut args: Vec<String> = ["-E", "-P", "-x", "cl", "-cl-no-stdinc", "-w"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(filter_options(options));
    args.extend(["-o".into(), "-".into(), "-".into()]);
    let out = run_pipe(&tc.clang, &args, source.as_bytes()).map_err(EmuError::Frontend)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The cache directory of `fe` (not created).
pub fn cache_dir(fe: &FrontendOptions) -> Option<PathBuf> {
    fe.cache.clone()
}

/// Where the SPIR-V came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]

pub enum Origin {
    /// Compiled now by the toolchain.
    Compiled,
    /// Read from the on-disk cache.
    Cache,
}

/// SPIR-V from the front end ([`compile_cached_path`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// The SPIR-V words.
    pub words: Vec<u32>,
    /// Compiled now or read from the cache.
    pub origin: Origin,
    /// How it was compiled; `None` for a cache entry written before the path was recorded.
    pub path: Option<CompilePath>,
}

/// The cache file of key `key` and toolchain `tv` compiled along `path` (`None`: the name
/// entries had before the path was recorded).
fn cache_name(key: &str, tv: &str, path: Option<CompilePath>) -> String {
    match path {
        Some(p) => format!("{key}-{tv}.{}.spv", p.as_str()),
        None => format!("{key}-{tv}.spv"),
    }
}

/// The compile path a cache file's name records.
fn path_of_name(name: &str) -> Option<CompilePath> {
    let stem = name.strip_suffix(".spv")?;
    CompilePath::parse(stem.rsplit_once('.')?.1)
}

/// Compiles OpenCL C `source` with the app's build `options` to SPIR-V words, through the
/// on-disk cache. Errors: [`EmuError::NoToolchain`] when no toolchain and no cache entry,
/// [`EmuError::Frontend`] when compilation fails.
pub fn compile_cached(
    source: &str,
    options: &str,
    fe: &FrontendOptions,
) -> Result<(Vec<u32>, Origin), EmuError> {
    compile_cached_path(source, options, fe).map(|c| (c.words, c.origin))
}

/// [`compile_cached`], with the [`CompilePath`] the words were made by. A cache file's name
/// records its path (`<key>-<toolchain>.<path>.spv`).
pub fn compile_cached_path(
    source: &str,
    options: &str,
    fe: &FrontendOptions,
) -> Result<Compiled, EmuError> {
    let opts = filter_options(options).join("\u{1f}");
    let mut key_in = Vec::with_capacity(source.len() + opts.len() + 16);
    key_in.extend_from_slice(b"clprism-spirv-v2\0");
    key_in.extend_from_slice(source.as_bytes());
    key_in.push(0);
    key_in.extend_from_slice(opts.as_bytes());
    let key = &super::hash::sha256_hex(&key_in)[..32];
    let dir = cache_dir(fe);
    let Some(tc) = find_toolchain(fe) else {
        return cached_without_toolchain(key, dir);
    };
    let tv = &super::hash::sha256_hex(tc.identity.as_bytes())[..16];
    if let Some(d) = &dir {
        let names = CompilePath::ALL.map(Some).into_iter().chain([None]);
        for path in names {
            let b = crate::cache::read(d, &cache_name(key, tv, path));
            if let Some(words) = b.and_then(|b| bytes_to_words(&b).ok()) {
                let origin = Origin::Cache;
                return Ok(Compiled {
                    words,
                    origin,
                    path,
                });
            }
        }
    }
    let (words, path) = compile_path_with(&tc, source, options)?;
    if let Some(d) = &dir {
        let bytes: Vec<u8> = words.iter().flat_map(|x| x.to_le_bytes()).collect();
        if let Err(e) = crate::cache::write(d, &cache_name(key, tv, Some(path)), &bytes) {
            log::debug!("clprism: cannot write SPIR-V cache {}: {e}", d.display());
        }
    }
    let origin = Origin::Compiled;
    Ok(Compiled {
        words,
        origin,
        path: Some(path),
    })
}

/// Without a toolchain: the newest cache entry of `key` (the last written or read), whatever
/// toolchain made it.
fn cached_without_toolchain(key: &str, dir: Option<PathBuf>) -> Result<Compiled, EmuError> {
    let d = dir.ok_or_else(|| {
        EmuError::NoToolchain("no clang/llvm-spirv found and no cache directory".into())
    })?;
    let prefix = format!("{key}-");
    let mut best: Option<(std::time::SystemTime, String)> = None;
    if let Ok(rd) = std::fs::read_dir(&d) {
        for e in rd.flatten() {
            let n = e.file_name();
            let n = n.to_string_lossy();
            if n.starts_with(&prefix) && n.ends_with(".spv") {
                let t = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH);
                if best.as_ref().is_none_or(|b| t > b.0) {
                    best = Some((t, n.into_owned()));
                }
            }
        }
    }
    if let Some((_, name)) = best {
        if let Some(words) = crate::cache::read(&d, &name).and_then(|b| bytes_to_words(&b).ok()) {
            let path = path_of_name(&name);
            let origin = Origin::Cache;
            return Ok(Compiled {
                words,
                origin,
                path,
            });
        }
    }
    Err(EmuError::NoToolchain(format!(
        "no clang-N/llvm-spirv-N toolchain (set CLPRISM_TOOLCHAIN) and no cache entry in {}",
        d.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn options_are_filtered() {
        let o = filter_options("-cl-fast-relaxed-math -D N=4 -DM=5 -I /x -Iinc -cl-std=CL2.0 -w");
        assert_eq!(
            o,
            vec![
                "-D__FAST_RELAXED_MATH__=1",
                "-DN=4",
                "-DM=5",
                "-I/x",
                "-Iinc",
                "-cl-std=CL2.0"
            ]
        );
        let o = filter_options("-D 'A=1 2'");
        assert_eq!(o, vec!["-DA=1 2", "-cl-std=CL1.2"]);
    }

    #[test]
    fn options_resolve_like_the_environment_did() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let o = FrontendOptions::resolve(
            Some("/tc".into()),
            Some("/c".into()),
            env(&[("PATH", "/a:/b"), ("HOME", "/h")]),
        );
        assert_eq!(o.toolchain, Some(PathBuf::from("/tc")));
        assert_eq!(
            o.search_path,
            vec![PathBuf::from("/a"), PathBuf::from("/b")]
        );
        assert_eq!(o.cache, Some(PathBuf::from("/c")));
        // empty values are unset; XDG_CACHE_HOME, then HOME
        let o = FrontendOptions::resolve(
            Some("".into()),
            Some("".into()),
            env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]),
        );
        assert_eq!(o.toolchain, None);
        assert!(o.search_path.is_empty());
        assert_eq!(o.cache, Some(PathBuf::from("/x/clprism")));
        let o =
            FrontendOptions::resolve(None, None, env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")]));
        assert_eq!(o.cache, Some(PathBuf::from("/h/.cache/clprism")));
        assert_eq!(FrontendOptions::resolve(None, None, env(&[])).cache, None);
        // nothing to search: no toolchain
        assert!(find_toolchain(&FrontendOptions::default()).is_none());
    }

    #[test]
    fn cache_names_record_the_compile_path() {
        for p in CompilePath::ALL {
            let name = cache_name("ab12", "cd34", Some(p));
            assert_eq!(path_of_name(&name), Some(p), "{name}");
            assert_eq!(CompilePath::parse(p.as_str()), Some(p));
            // the log's type takes the same names
            let logged = crate::log::schema::CompilePath::from(p);
            assert!(
                !matches!(logged, crate::log::schema::CompilePath::Other(_)),
                "{p:?}"
            );
        }
        // an entry of an older version: no path
        assert_eq!(path_of_name(&cache_name("ab12", "cd34", None)), None);
        assert_eq!(
            cache_name("ab12", "cd34", Some(CompilePath::O0Opt)),
            "ab12-cd34.O0+opt.spv"
        );
    }

    #[test]
    fn device_defines_follow_the_device() {
        assert_eq!(
            device_defines("OpenCL 3.0 PoCL HSTR: pthread-x86_64", true),
            "-D__OPENCL_VERSION__=300"
        );
        assert_eq!(
            device_defines("OpenCL 1.2 CUDA", false),
            "-D__OPENCL_VERSION__=120 -U__IMAGE_SUPPORT__"
        );
        assert_eq!(device_defines("garbage", true), "");
    }
}
