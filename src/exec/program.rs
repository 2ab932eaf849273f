//! Programs and kernels rebuilt on clprism's per-device contexts from the application's
//! source, with the NDRange queries rewritten so that a chunk (a sub-range launched with a
//! global offset) sees the ids and sizes of the full NDRange.
//!
//! A chunk launched with `global_work_offset` keeps `get_global_id` and `get_local_id` right,
//! but OpenCL defines `get_group_id`, `get_num_groups` and `get_global_size` relative to the
//! launch. When the source uses any of them, clprism prepends a prelude that redefines them
//! (and `get_global_offset`) from the full launch's global size and offset, baked in as
//! program-scope `__constant` values; such variants are cached per launch shape.

use super::cl;
use opencl_sys::*;

/// The NDRange query functions the prelude redefines.
pub const RANGE_QUERIES: [&str; 4] = [
    "get_group_id",
    "get_num_groups",
    "get_global_size",
    "get_global_offset",
];

/// True when `source` calls one of [`RANGE_QUERIES`] (a token match; comments count, which
/// only costs a needless variant).
pub fn uses_range_queries(source: &str) -> bool {
    RangeQueries::of(source).any()
}

/// True when the token `q` occurs in `source` (not as part of a longer identifier).
fn has_token(source: &str, q: &str) -> bool {
    source.match_indices(q).any(|(i, _)| {
        let before = source[..i].chars().next_back();
        let after = source[i + q.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Which figures of the full launch a program's NDRange queries read, so that a variant is
/// built per value of only those figures. Rodinia's lud calls only `get_group_id`: keyed by
/// the global size too, every one of its shrinking launches needed its own build on every
/// balance device (1.7–2 s each on three PoCL devices; `CLPRISM_SPLIT=always` ran past 120 s
/// against 1 s natively); keyed by the offset alone (null for nearly every app), one build
/// serves them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RangeQueries {
    /// `get_global_size` or `get_num_groups`: the variant bakes in the full global size.
    pub size: bool,
    /// `get_group_id` or `get_global_offset`: the variant bakes in the app's global offset.
    pub offset: bool,
}

impl RangeQueries {
    /// The queries `source` makes (token matches, as [`uses_range_queries`]).
    pub fn of(source: &str) -> Self {
        Self {
            size: has_token(source, "get_global_size") || has_token(source, "get_num_groups"),
            offset: has_token(source, "get_group_id") || has_token(source, "get_global_offset"),
        }
    }

    /// Whether any query needs a variant.
    pub fn any(self) -> bool {
        self.size || self.offset
    }

    /// The variant for a launch of `global` work-items at `offset` (3 entries each): the
    /// suffix of its build key (after program hash and options) and its source. A figure no
    /// query reads is neither in the key nor baked in (its constants are 0 and never read).
    pub fn variant(self, source: &str, global: [u64; 3], offset: [u64; 3]) -> (String, String) {
        let g = if self.size { global } else { [0; 3] };
        let o = if self.offset { offset } else { [0; 3] };
        (
            format!(
                "{}|{}",
                if self.size {
                    format!("{g:?}")
                } else {
                    "-".into()
                },
                if self.offset {
                    format!("{o:?}")
                } else {
                    "-".into()
                }
            ),
            variant_source(source, g, o),
        )
    }
}

/// The source of the variant for a full NDRange of `global` work-items at `offset`
/// (3 entries each; unused dimensions 1 and 0).
pub fn variant_source(source: &str, global: [u64; 3], offset: [u64; 3]) -> String {
    format!(
        "/* clprism balance prelude: NDRange queries of the full launch (DESIGN.md \u{a7}7) */\n\
__constant ulong __clprism_gsz[3] = {{{g0}UL, {g1}UL, {g2}UL}};\n\
__constant ulong __clprism_goff[3] = {{{o0}UL, {o1}UL, {o2}UL}};\n\
size_t __clprism_global_size(uint d) {{ return d < 3u ? (size_t)__clprism_gsz[d] : (size_t)1; }}\n\
size_t __clprism_global_offset(uint d) {{ return d < 3u ? (size_t)__clprism_goff[d] : (size_t)0; }}\n\
size_t __clprism_group_id(uint d) {{ return d < 3u ? get_group_id(d) + (get_global_offset(d) - (size_t)__clprism_goff[d]) / get_local_size(d) : (size_t)0; }}\n\
size_t __clprism_num_groups(uint d) {{ return d < 3u ? (size_t)__clprism_gsz[d] / get_local_size(d) : (size_t)1; }}\n\
#define get_global_size(d) __clprism_global_size(d)\n\
#define get_global_offset(d) __clprism_global_offset(d)\n\
#define get_group_id(d) __clprism_group_id(d)\n\
#define get_num_groups(d) __clprism_num_groups(d)\n\
#line 1\n{source}",
        g0 = global[0],
        g1 = global[1],
        g2 = global[2],
        o0 = offset[0],
        o1 = offset[1],
        o2 = offset[2],
    )
}

/// How a kernel argument is used, from `clGetKernelArgInfo` on clprism's build (built with
/// `-cl-kernel-arg-info`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// `__global` pointer; `writable` unless `const`-qualified.
    Global {
        /// Not `const`.
        writable: bool,
    },
    /// `__constant` pointer (read-only).
    Constant,
    /// `__local` pointer.
    Local,
    /// A by-value argument.
    Value,
    /// Image, sampler, pipe or queue: not splittable.
    Opaque,
}

/// Reads the argument kinds of `k`.
///
/// # Safety
/// `k` is a valid kernel built with `-cl-kernel-arg-info`.
pub unsafe fn arg_kinds(k: cl_kernel) -> Result<Vec<ArgKind>, String> {
    let t = cl::rt().map_err(|e| e.to_string())?;
    let ki = t.clGetKernelInfo.ok_or("no clGetKernelInfo")?;
    let ai = t.clGetKernelArgInfo.ok_or("no clGetKernelArgInfo")?;
    let n: cl_uint =
        cl::info(|sz, p, s| ki(k, CL_KERNEL_NUM_ARGS, sz, p, s)).ok_or("CL_KERNEL_NUM_ARGS")?;
    let mut out = Vec::new();
    for i in 0..n {
        let aq: cl_kernel_arg_address_qualifier =
            cl::info(|sz, p, s| ai(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sz, p, s))
                .ok_or("CL_KERNEL_ARG_ADDRESS_QUALIFIER")?;
        let tq: cl_kernel_arg_type_qualifier =
            cl::info(|sz, p, s| ai(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sz, p, s)).unwrap_or(0);
        let ty = crate::registry::device::info_string(|sz, p, s| {
            ai(k, i, CL_KERNEL_ARG_TYPE_NAME, sz, p, s)
        })
        .unwrap_or_default();
        let opaque = [
            "image",
            "sampler_t",
            "pipe",
            "queue_t",
            "clk_event_t",
            "reserve_id_t",
        ]
        .iter()
        .any(|o| ty.contains(o));
        out.push(if opaque {
            ArgKind::Opaque
        } else {
            match aq {
                CL_KERNEL_ARG_ADDRESS_GLOBAL => ArgKind::Global {
                    writable: tq & CL_KERNEL_ARG_TYPE_CONST == 0,
                },
                CL_KERNEL_ARG_ADDRESS_CONSTANT => ArgKind::Constant,
                CL_KERNEL_ARG_ADDRESS_LOCAL => ArgKind::Local,
                _ => ArgKind::Value,
            }
        });
    }
    Ok(out)
}

/// True when `source` has an `#include` directive: the text checks ([`mentions_atomics`],
/// [`unsplittable_reason`], [`uses_range_queries`]) must then read the included files too
/// ([`inspected_text`]).
pub fn includes_files(source: &str) -> bool {
    source.lines().any(|l| {
        l.trim_start()
            .strip_prefix('#')
            .is_some_and(|r| r.trim_start().starts_with("include"))
    })
}

/// The text the source checks read for program `hash` built with `options`: `source` itself
/// when it includes no file, else the source with its `#include`s expanded by the
/// toolchain's preprocessor with the build's `-I`/`-D` options (hashcat's kernels keep their
/// atomics and NDRange queries in included files; checking only the main file split a kernel
/// that updates a global counter atomically, and hashcat missed its crack). Cached per
/// program and options for the process. Errors: why the included files cannot be read (no
/// toolchain, preprocessing failed): such a program is not split.
pub fn inspected_text(
    hash: &str,
    source: &std::sync::Arc<str>,
    options: &str,
) -> Result<std::sync::Arc<str>, String> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    type Texts = Mutex<HashMap<String, Result<Arc<str>, String>>>;
    static TEXTS: once_cell::sync::Lazy<Texts> = once_cell::sync::Lazy::new(Default::default);
    if !includes_files(source) {
        return Ok(source.clone());
    }
    let key = format!("{hash}|{options}");
    if let Some(r) = TEXTS.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return r.clone();
    }
    let r = crate::emu::frontend::preprocess(source, options, &crate::exec::frontend_options())
        .map(Arc::<str>::from)
        .map_err(|e| format!("kernel source includes files that clprism cannot read ({e})"));
    TEXTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, r.clone());
    r
}

/// True when the program's source mentions an atomic function (a textual check over the
/// whole program; the emulator's SPIR-V loader then decides per kernel whether it really
/// uses atomics on global memory, `emu::KernelInfo::global_atomics`).
pub fn mentions_atomics(source: &str) -> bool {
    source.contains("atomic_") || source.contains("atom_")
}

/// True when the program's text may do floating-point arithmetic: it names a floating-point
/// type (`float`, `double`, `half` and their vectors) or writes a floating-point literal
/// (`0.5`, `1e-3`, `2.f`). A textual check over the whole program (comments included), for
/// when the emulator cannot read the kernel's SPIR-V (no toolchain on the machine): a
/// program without any of them cannot compute floating point, whatever the kernel
/// (OpenCL C has no implicit floating-point operand without a literal or a typed value).
pub fn mentions_floating_point(source: &str) -> bool {
    let b = source.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &source[start..i];
            if ["float", "double", "half"]
                .iter()
                .any(|t| word.starts_with(t))
            {
                return true;
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                // an exponent's sign belongs to the literal
                if (b[i] == b'e' || b[i] == b'E') && matches!(b.get(i + 1), Some(b'+' | b'-')) {
                    i += 1;
                }
                i += 1;
            }
            let lit = source[start..i].to_ascii_lowercase();
            let hex = lit.starts_with("0x");
            if lit.contains('.') || (!hex && (lit.contains('e') || lit.ends_with('f'))) {
                return true;
            }
        } else {
            i += 1;
        }
    }
    false
}

/// Why the program cannot be split whatever the kernel, if so (printf: the output order
/// would change).
pub fn unsplittable_reason(source: &str) -> Option<&'static str> {
    if source.contains("printf") {
        return Some("kernel source uses printf (output order would change)");
    }
    if has_token(source, "get_global_linear_id") {
        // OpenCL 3.0 §6.15.1: counted from the launch's global offset over its global size,
        // which a chunk has of its own; the prelude does not rewrite it
        return Some("kernel source uses get_global_linear_id (a chunk would see its own)");
    }
    None
}

/// The build option that makes NVIDIA's compiler report each kernel's registers in the
/// build log (`cl_nv_compiler_options`: `-cl-nv-verbose` passes `--verbose` to ptxas).
pub const NV_VERBOSE_OPTION: &str = "-cl-nv-verbose";

/// The extension that provides [`NV_VERBOSE_OPTION`].
pub const NV_COMPILER_OPTIONS_EXTENSION: &str = "cl_nv_compiler_options";

/// 32-bit registers per work-item of each kernel, read from a build log that ptxas wrote in
/// verbose mode ([`NV_VERBOSE_OPTION`]): the line `Used N registers` that follows
/// `Compiling entry function 'K'` (or `Function properties for K`) belongs to kernel `K`.
/// Registers bound occupancy (Quintanilla §2.3 eq. 2.2), and NVIDIA's OpenCL has no query
/// for them. Kernels the log does not report are absent; a log of another compiler gives an
/// empty map.
pub fn ptxas_registers(log: &str) -> std::collections::HashMap<String, u32> {
    let mut out = std::collections::HashMap::new();
    let mut current: Option<String> = None;
    for line in log.lines() {
        let l = line.trim();
        let quoted = |prefix: &str| {
            l.find(prefix).map(|i| {
                l[i + prefix.len()..]
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_matches(|c| c == '\'' || c == '`')
                    .to_string()
            })
        };
        if let Some(k) = quoted("Compiling entry function") {
            current = Some(k);
        } else if let Some(k) = quoted("Function properties for") {
            current = Some(k);
        } else if let Some(i) = l.find("Used ") {
            let mut words = l[i + 5..].split_whitespace();
            let n = words.next().and_then(|w| w.parse::<u32>().ok());
            let is_registers = words.next().is_some_and(|w| w.starts_with("register"));
            if let (Some(n), true, Some(k)) = (n, is_registers, current.as_ref()) {
                out.insert(k.clone(), n);
            }
        }
    }
    out
}

/// Registers per work-item of `kernel` for the program build that `key` names (program
/// hash, build options, device name and driver version): from the build log when ptxas
/// reported them, and then saved in `cache_dir`; else what an earlier run saved there.
/// NVIDIA's driver keeps compiled programs in its own cache and skips ptxas on a hit, so only
/// the first build after a change of source, options or driver has the report. `None` when
/// neither the log nor the cache has the kernel.
pub fn kernel_registers(
    log: &str,
    cache_dir: Option<&std::path::Path>,
    key: &str,
    kernel: &str,
) -> Option<u32> {
    let name = format!(
        "registers-{}.json",
        crate::registry::tables::content_hash(&[key.as_bytes()])
    );
    let reported = ptxas_registers(log);
    if !reported.is_empty() {
        if let Some(dir) = cache_dir {
            let entry = serde_json::json!({ "key": key, "registers": reported });
            if let Ok(bytes) = serde_json::to_vec(&entry) {
                if let Err(e) = crate::cache::write(dir, &name, &bytes) {
                    crate::config::warn(&format!(
                        "balance: saving registers in {}: {e}",
                        dir.display()
                    ));
                }
            }
        }
        return reported.get(kernel).copied();
    }
    let bytes = crate::cache::read(cache_dir?, &name)?;
    let entry: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    if entry["key"] != key {
        return None;
    }
    entry["registers"][kernel].as_u64().map(|r| r as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floating_point_is_found_in_types_and_literals_only() {
        for yes in [
            "kernel void k(global float* x) {}",
            "kernel void k(global int* x) { x[0] = x[1] * 0.5; }",
            "kernel void k(global int* x) { x[0] = 2.f; }",
            "kernel void k(global int* x) { x[0] = 1e3; }",
            "kernel void k(global int* x) { x[0] = .5; }",
            "kernel void k(global half8* x) {}",
            "#define SCALE 1.5e-3\nkernel void k() {}",
        ] {
            assert!(mentions_floating_point(yes), "{yes}");
        }
        for no in [
            "kernel void k(global int* x) { x[get_global_id(0)] = 0x1f + 10; }",
            "kernel void memset_kernel(global char* m, short v, int n) { m[get_global_id(0)] = v; }",
            "kernel void k(global uint4* x) { x[0] = (uint4)(1u, 2u, 3UL, 0xEF); }",
        ] {
            assert!(!mentions_floating_point(no), "{no}");
        }
    }

    #[test]
    fn finds_include_directives() {
        assert!(includes_files(
            "#include \"inc_vendor.h\"\nkernel void k() {}"
        ));
        assert!(includes_files("  #  include <x.cl>\n"));
        assert!(!includes_files("kernel void k() { /* include */ }"));
        assert!(!includes_files("#define include 1\n"));
    }

    #[test]
    fn detects_range_queries_as_tokens() {
        assert!(uses_range_queries("x = get_group_id(0);"));
        assert!(uses_range_queries("n = get_global_size (1)"));
        assert!(!uses_range_queries(
            "x = get_global_id(0); my_get_group_id_x(1);"
        ));
    }

    #[test]
    fn variant_key_holds_only_the_figures_the_queries_read() {
        // Rodinia lud: get_group_id only, so every global size shares one variant
        let lud = RangeQueries::of("int bx = get_group_id(0); int tx = get_local_id(0);");
        assert_eq!(
            lud,
            RangeQueries {
                size: false,
                offset: true
            }
        );
        let (k1, t1) = lud.variant("k", [848, 848, 1], [0; 3]);
        let (k2, t2) = lud.variant("k", [832, 832, 1], [0; 3]);
        assert_eq!((k1.as_str(), &t1), ("-|[0, 0, 0]", &t2));
        assert_eq!(k1, k2);
        assert_ne!(lud.variant("k", [848, 848, 1], [16, 0, 0]).0, k1);
        // the global size is keyed and baked in only when read
        let sized = RangeQueries::of("n = get_num_groups(0);");
        assert_eq!(
            sized,
            RangeQueries {
                size: true,
                offset: false
            }
        );
        let (k3, t3) = sized.variant("k", [848, 848, 1], [16, 0, 0]);
        assert_eq!(k3, "[848, 848, 1]|-");
        assert!(t3.contains("{848UL, 848UL, 1UL}") && t3.contains("{0UL, 0UL, 0UL}"));
        assert!(!RangeQueries::of("x = get_global_id(0);").any());
    }

    #[test]
    fn prelude_bakes_shape_and_keeps_source() {
        let s = variant_source("kernel void k(){}", [1024, 8, 1], [0, 16, 0]);
        assert!(s.contains("{1024UL, 8UL, 1UL}"));
        assert!(s.contains("{0UL, 16UL, 0UL}"));
        assert!(s.ends_with("#line 1\nkernel void k(){}"));
    }

    /// A ptxas verbose report as NVIDIA's OpenCL driver (H200) wrote it into the build log.
    #[test]
    fn reads_registers_per_kernel_from_a_ptxas_report() {
        // excerpt of results/gpu-2026-11-22r/nv-build-log.txt (two programs' reports joined)
        let log =
            "(): Warning: Function nbody_step is a kernel, so overriding noinline attribute.\n\
ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'nbody_step' for 'sm_90a'\n\
ptxas info    : Function properties for nbody_step\n\
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 32 registers, used 1 barriers\n\
ptxas info    : Compile time = 15.917 ms\n\
ptxas info    : Compiling entry function 'blackscholes' for 'sm_90a'\n\
ptxas info    : Function properties for blackscholes\n\
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 24 registers, used 0 barriers\n";
        let r = ptxas_registers(log);
        assert_eq!(r.get("nbody_step"), Some(&32));
        assert_eq!(r.get("blackscholes"), Some(&24));
        assert_eq!(r.len(), 2);
        assert!(ptxas_registers("warning: unused variable 'x'\nUsed 3 times").is_empty());
    }

    #[test]
    fn registers_come_from_the_cache_when_the_driver_skipped_ptxas() {
        let dir = std::env::temp_dir().join(format!("clprism-regs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n\
ptxas info    : Used 72 registers, used 1 barriers\n";
        let key = "hash|-O2|NVIDIA H200|570.1";
        // nothing yet: no report, no cache entry
        assert_eq!(kernel_registers("", Some(&dir), key, "k"), None);
        // the first build reports and saves
        assert_eq!(kernel_registers(log, Some(&dir), key, "k"), Some(72));
        // a later build hit the driver's cache: empty log, the saved figure
        assert_eq!(kernel_registers("", Some(&dir), key, "k"), Some(72));
        assert_eq!(kernel_registers("", Some(&dir), key, "other"), None);
        // another device or driver does not see it
        assert_eq!(
            kernel_registers("", Some(&dir), "hash|-O2|NVIDIA H100|570.1", "k"),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
