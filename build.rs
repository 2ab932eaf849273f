//! Generates the exported OpenCL entry points from `cl-headers/entry_points.tsv`.
//!
//! For every row (name, ocl-icd symbol version, return type, C parameters, intercept|forward)
//! it emits into `$OUT_DIR`:
//! * `real_table.rs` (included by `loader`): the `RealTable` of the real library's function
//!   pointers (resolved once by `loader`, or taken from a loader-layer dispatch table);
//! * `entry_points.rs` (included by `api`): one `#[no_mangle] extern "C"` function per entry
//!   point that either forwards to the real table or calls `crate::intercept::hooks::<name>`
//!   under a panic guard, and `fill_dispatch`, which points a dispatch table at them;
//! * `clprism.map`: a GNU ld version script that gives every symbol the same version node as in
//!   ocl-icd (OPENCL_1.0 … OPENCL_3.0), so that apps linked against the real loader find their
//!   versioned symbols when clprism is put in place as `libOpenCL.so.1`.

use std::fmt::Write as _;
use std::{env, fs, path::PathBuf};

struct Entry {
    name: String,
    version: String,
    ret: String,
    params: Vec<String>,
    intercept: bool,
    /// Index of an argument naming a buffer the command writes (`writes:N`), or of a count
    /// and an array of buffers it may write (`writes:N*M`).
    writes: Option<(usize, Option<usize>)>,
    /// Index of an argument naming a buffer the command reads (`reads:N`; with a write:
    /// `reads:N,writes:M`).
    reads: Option<usize>,
}

/// Splits a C parameter list at top-level commas.
fn split_params(s: &str) -> Vec<String> {
    let (mut depth, mut cur, mut out) = (0i32, String::new(), Vec::new());
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() && cur.trim() != "void" {
        out.push(cur.trim().to_string());
    }
    out
}

/// Maps a C type (without a parameter name) to a Rust FFI type.
fn rust_type(c: &str) -> String {
    let c = c.trim();
    if c.contains('(') {
        // function pointer: pointer-sized, passed through untouched
        return "*mut c_void".into();
    }
    let stars = c.matches('*').count() + c.matches("[]").count();
    let base_const = c.starts_with("const ");
    let base: String = c
        .replace("const", " ")
        .replace(['*', '[', ']'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let base = match base.as_str() {
        "void" => "c_void".to_string(),
        "char" => "c_char".to_string(),
        "unsigned char" => "u8".to_string(),
        "size_t" => "usize".to_string(),
        other => other.to_string(),
    };
    let mut t = base;
    for i in 0..stars {
        // the innermost pointer carries the base const; outer pointers are mutable in C here
        let k = if i == 0 && base_const {
            "*const "
        } else {
            "*mut "
        };
        t = format!("{k}{t}");
    }
    t
}

/// Strips the parameter name from a C parameter declaration.
fn param_type(p: &str) -> String {
    if p.contains('(') {
        return p.to_string();
    }
    let p = p.trim_end_matches("[]").trim();
    let had_array = p.len() != p.trim_end_matches("[]").len();
    let idx = p
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(|i| i + 1)
        .unwrap_or(0);
    let mut t = p[..idx].trim().to_string();
    if had_array || p.ends_with(']') {
        t.push('*');
    }
    if t.is_empty() {
        p.to_string()
    } else {
        t
    }
}

fn main() {
    println!("cargo:rerun-if-changed=cl-headers/entry_points.tsv");
    println!("cargo:rerun-if-changed=build.rs");
    let text = fs::read_to_string("cl-headers/entry_points.tsv").expect("entry point table");
    let mut entries = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert!(f.len() == 5, "bad table row: {line}");
        let params = split_params(f[3])
            .iter()
            .map(|p| {
                // `void * svm_pointers[]` style arrays
                let p = if p.ends_with("[]") {
                    format!(
                        "{}*",
                        p.trim_end_matches("[]")
                            .rsplit_once(' ')
                            .map(|x| x.0)
                            .unwrap_or(p)
                    )
                } else {
                    param_type(p)
                };
                rust_type(&p)
            })
            .collect();
        entries.push(Entry {
            name: f[0].into(),
            version: f[1].into(),
            ret: f[2].into(),
            params,
            intercept: f[4] == "intercept",
            reads: f[4]
                .split(',')
                .find_map(|a| a.strip_prefix("reads:"))
                .map(|n| n.parse().expect("reads:N")),
            writes: f[4]
                .split(',')
                .find_map(|a| a.strip_prefix("writes:"))
                .map(|n| match n.split_once('*') {
                    Some((c, a)) => (
                        c.parse().expect("writes:N*M"),
                        Some(a.parse().expect("writes:N*M")),
                    ),
                    None => (n.parse().expect("writes:N"), None),
                }),
        });
    }

    const HEADER: &str =
        "// @generated by build.rs from cl-headers/entry_points.tsv. Do not edit.\n";
    // `real_table.rs` (included by `loader`): the table of the real library's entry points.
    let mut tb = String::from(HEADER);
    // `entry_points.rs` (included by `api`): the exported stubs, which forward through it.
    let mut rs = String::from(HEADER);
    tb.push_str("/// The real library's entry points, resolved once by `loader` (None where the real\n/// library lacks the symbol).\n#[allow(missing_docs)]\npub struct RealTable {\n");
    for e in &entries {
        let ret = rust_type(&e.ret);
        let arrow = if ret == "c_void" {
            String::new()
        } else {
            format!(" -> {ret}")
        };
        writeln!(
            tb,
            "    pub {}: Option<unsafe extern \"C\" fn({}){}>,",
            e.name,
            e.params.join(", "),
            arrow
        )
        .unwrap();
    }
    tb.push_str("}\n\nimpl RealTable {\n    /// Resolves every entry point in `lib`.\n    ///\n    /// # Safety\n    /// `lib` must be an OpenCL library whose symbols have the prototypes of the table.\n    pub unsafe fn resolve(lib: &libloading::Library) -> Self {\n        RealTable {\n");
    for e in &entries {
        writeln!(
            tb,
            "            {0}: lib.get(b\"{0}\\0\").ok().map(|s: libloading::Symbol<_>| *s),",
            e.name
        )
        .unwrap();
    }
    tb.push_str("        }\n    }\n\n    /// Number of entry points the real library provides.\n    pub fn resolved_count(&self) -> usize {\n        let mut n = 0;\n");
    for e in &entries {
        writeln!(tb, "        n += self.{}.is_some() as usize;", e.name).unwrap();
    }
    tb.push_str("        n\n    }\n\n");
    // Loader-layer mode: the next layer's dispatch table is the "real" table, and clprism's
    // own dispatch table points at its exported stubs. Every table entry is a field of the
    // Khronos `cl_icd_dispatch` with the same name.
    tb.push_str("    /// The entry points of a loader-layer target dispatch table.\n    ///\n    /// # Safety\n    /// `d` is a valid dispatch table whose entries have the Khronos prototypes.\n    pub unsafe fn from_dispatch(d: &opencl_sys::cl_icd::cl_icd_dispatch) -> Self {\n        RealTable {\n");
    for e in &entries {
        writeln!(
            tb,
            "            {0}: d.{0}.map(|f| std::mem::transmute(f)),",
            e.name
        )
        .unwrap();
    }
    tb.push_str("        }\n    }\n}\n\n");
    rs.push_str("/// Points every entry of `d` that clprism exports at clprism's stub.\n///\n/// # Safety\n/// `d` is a writable dispatch table.\npub unsafe fn fill_dispatch(d: &mut opencl_sys::cl_icd::cl_icd_dispatch) {\n");
    for e in &entries {
        let ret = rust_type(&e.ret);
        let arrow = if ret == "c_void" {
            String::new()
        } else {
            format!(" -> {ret}")
        };
        writeln!(
            rs,
            "    d.{0} = Some(std::mem::transmute::<unsafe extern \"C\" fn({1}){2}, _>(impl_{0}));",
            e.name,
            e.params.join(", "),
            arrow
        )
        .unwrap();
    }
    rs.push_str("}\n\n");
    writeln!(rs, "/// Names of all exported entry points, in table order.\npub const ENTRY_POINT_NAMES: [&str; {}] = [", entries.len()).unwrap();
    for e in &entries {
        writeln!(rs, "    \"{}\",", e.name).unwrap();
    }
    rs.push_str("];\n\n");

    for e in &entries {
        let ret = rust_type(&e.ret);
        let args: Vec<String> = (0..e.params.len()).map(|i| format!("a{i}")).collect();
        let decl: Vec<String> = e
            .params
            .iter()
            .enumerate()
            .map(|(i, t)| format!("a{i}: {t}"))
            .collect();
        let arrow = if ret == "c_void" {
            String::new()
        } else {
            format!(" -> {ret}")
        };
        // value returned when the real library (or this symbol) is unavailable
        let errcode_last = e.params.last().map(|t| t == "*mut cl_int").unwrap_or(false);
        let fail = if ret == "cl_int" {
            if e.name == "clGetPlatformIDs" {
                "crate::api::CL_PLATFORM_NOT_FOUND_KHR".to_string()
            } else {
                "crate::api::UNAVAILABLE".to_string()
            }
        } else if ret == "c_void" {
            "()".to_string()
        } else if errcode_last {
            format!("crate::api::fail_handle(a{})", e.params.len() - 1)
        } else {
            "std::ptr::null_mut()".to_string()
        };
        // The body lives in a crate-internal function: its address cannot be interposed by a
        // same-named global symbol (in loader-layer mode the loader's own `clX` would win
        // over our exported one), so the layer dispatch table points at these.
        // With `CLPRISM_TRACE` the call is recorded as a span of its thread: one relaxed
        // atomic load decides, so forwarding pays a predicted branch when tracing is off.
        writeln!(
            rs,
            "#[inline]\n#[doc(hidden)]\npub(crate) unsafe extern \"C\" fn impl_{0}({1}){2} {{\n    if crate::log::trace::api_on() {{\n        return traced_{0}({3});\n    }}\n    body_{0}({3})\n}}\n\n#[cold]\n#[inline(never)]\nunsafe fn traced_{0}({1}){2} {{\n    let _span = crate::log::trace::ApiSpan::begin(\"{0}\");\n    body_{0}({3})\n}}\n\n#[inline(always)]\nunsafe fn body_{0}({1}){2} {{",
            e.name,
            decl.join(", "),
            arrow,
            args.join(", ")
        )
        .unwrap();
        if e.intercept {
            writeln!(
                rs,
                "    crate::api::guard(\"{}\", || crate::intercept::hooks::{}({}), || {})",
                e.name,
                e.name,
                args.join(", "),
                fail
            )
            .unwrap();
        } else {
            // the command's queue is its first argument; a barrier or marker orders only (on
            // its wait list, when it has one: the second argument)
            match e.name.as_str() {
                "clEnqueueBarrier" | "clEnqueueMarker" => {}
                "clEnqueueBarrierWithWaitList" | "clEnqueueMarkerWithWaitList" => {
                    writeln!(
                        rs,
                        "    crate::intercept::ordering_command(a0 as usize, a1);"
                    )
                    .unwrap();
                }
                n if n.starts_with("clEnqueue") => {
                    writeln!(rs, "    crate::intercept::queue_command(a0 as usize);").unwrap();
                }
                _ => {}
            }
            if let Some(n) = e.reads {
                writeln!(
                    rs,
                    "    crate::intercept::read_buffer(a0 as usize, a{n} as usize);"
                )
                .unwrap();
            }
            match e.writes {
                Some((n, None)) => {
                    writeln!(
                        rs,
                        "    crate::intercept::wrote_buffer(a0 as usize, a{n} as usize);"
                    )
                    .unwrap();
                }
                Some((n, Some(m))) => {
                    writeln!(
                        rs,
                        "    crate::intercept::wrote_buffers(a0 as usize, a{n} as usize, a{m} as *const usize);"
                    )
                    .unwrap();
                }
                None => {}
            }
            writeln!(rs, "    match crate::loader::table().and_then(|t| t.{}) {{\n        Some(f) => f({}),\n        None => {{ crate::api::unavailable(\"{}\"); {} }}\n    }}", e.name, args.join(", "), e.name, fail).unwrap();
        }
        rs.push_str("}\n\n");
        writeln!(rs, "#[no_mangle]\n/// Exported OpenCL entry point (ocl-icd symbol version {}).\n///\n/// # Safety\n/// Same contract as the OpenCL function of the same name.", e.version).unwrap();
        writeln!(
            rs,
            "pub unsafe extern \"C\" fn {}({}){} {{\n    impl_{}({})",
            e.name,
            decl.join(", "),
            arrow,
            e.name,
            args.join(", ")
        )
        .unwrap();
        rs.push_str("}\n\n");
    }

    // Version script: one version node per ocl-icd version, chained in order. rustc already
    // passes an anonymous version script that makes the entry points global; a second script
    // cannot re-assign them (lld warns and keeps them global), so the nodes are defined empty.
    // That is enough: an app linked against ocl-icd needs the version *definitions* to exist
    // (else ld.so prints "no version information available"), and glibc binds its versioned
    // references to our global (unversioned) definitions.
    let mut versions: Vec<String> = entries.iter().map(|e| e.version.clone()).collect();
    versions.sort();
    versions.dedup();
    let mut map = String::new();
    let mut prev: Option<String> = None;
    for v in &versions {
        match &prev {
            Some(p) => writeln!(map, "{v} {{ }} {p};").unwrap(),
            None => writeln!(map, "{v} {{ }};").unwrap(),
        }
        prev = Some(v.clone());
    }

    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out.join("real_table.rs"), tb).unwrap();
    fs::write(out.join("entry_points.rs"), rs).unwrap();
    let map_path = out.join("clprism.map");
    fs::write(&map_path, map).unwrap();
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map_path.display()
    );
}
