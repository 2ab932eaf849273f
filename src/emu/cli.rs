//! `clprism emulate`: command-line front end of the mini-emulator. Prints the statistics
//! of one work-group as JSON on stdout (see [`super::WorkGroupStats`]).
//!
//! ```text
//! clprism emulate FILE.cl --kernel NAME --global X[,Y[,Z]] --local X[,Y[,Z]]
//!     [--offset X[,Y[,Z]]] [--group GX[,GY[,GZ]]] [--warp 32] [--budget LANE_INSTRS]
//!     [--arg buf:BYTES[:fill=random|zero|iota|iotaf|randf] | int:V | uint:V | long:V
//!            | ulong:V | float:V | double:V | local:BYTES ...] [-DNAME[=V] ...] [-IDIR]
//!     [-cl-std=CLx.y]
//! ```
//! With `--project [--profiles DIR]` the output object gains a top-level `"projection"`
//! key: the [`crate::model::ProjectionSet`] of this launch on every profile of `DIR` (else
//! `CLPRISM_PROFILES`, else the built-in `profiles/`), as in project mode's log records;
//! the statistics keys stay where they are, so tools reading them are unaffected.
//!
//! `FILE` may also be a `.spv` SPIR-V binary. Fills: `iota` = 32-bit integers 0,1,2,...;
//! `iotaf` = 32-bit floats 0,1,2,...; `random` = pseudo-random bytes; `randf` = 32-bit
//! floats in [0,1) (fixed seed, so runs are reproducible).

use super::*;

fn parse_dims(s: &str) -> Result<Vec<u64>, String> {
    let v: Result<Vec<u64>, _> = s.split(',').map(|x| x.trim().parse::<u64>()).collect();
    let v = v.map_err(|e| format!("bad size list '{s}': {e}"))?;
    if v.is_empty() || v.len() > 3 {
        return Err(format!("bad size list '{s}': 1 to 3 values"));
    }
    Ok(v)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Parses one `--arg` specification into an argument value.
pub fn parse_arg(spec: &str, rng_seed: u64) -> Result<ArgValue, String> {
    let (kind, rest) = spec
        .split_once(':')
        .ok_or_else(|| format!("bad --arg '{spec}': expected KIND:VALUE"))?;
    let num = |s: &str| -> Result<i128, String> {
        let s = s.trim();
        let r = if let Some(h) = s.strip_prefix("0x") {
            i128::from_str_radix(h, 16)
        } else {
            s.parse::<i128>()
        };
        r.map_err(|e| format!("bad integer '{s}': {e}"))
    };
    Ok(match kind {
        "buf" => {
            let mut parts = rest.split(':');
            let bytes: usize = parts
                .next()
                .unwrap_or("")
                .parse()
                .map_err(|e| format!("bad buffer size in '{spec}': {e}"))?;
            if bytes > 1 << 32 {
                return Err("buffer larger than 4 GiB".into());
            }
            let fill = parts
                .next()
                .map(|f| f.trim_start_matches("fill=").to_string())
                .unwrap_or_else(|| "zero".into());
            let mut v = vec![0u8; bytes];
            let mut rng = Rng(rng_seed | 1);
            match fill.as_str() {
                "zero" => {}
                "iota" => {
                    for (i, c) in v.chunks_mut(4).enumerate() {
                        let b = (i as u32).to_le_bytes();
                        c.copy_from_slice(&b[..c.len()]);
                    }
                }
                "iotaf" => {
                    for (i, c) in v.chunks_mut(4).enumerate() {
                        let b = (i as f32).to_le_bytes();
                        c.copy_from_slice(&b[..c.len()]);
                    }
                }
                "random" => {
                    for b in v.iter_mut() {
                        *b = rng.next() as u8;
                    }
                }
                "randf" => {
                    for c in v.chunks_mut(4) {
                        let f = (rng.next() >> 40) as f32 / (1u64 << 24) as f32;
                        let b = f.to_le_bytes();
                        c.copy_from_slice(&b[..c.len()]);
                    }
                }
                other => return Err(format!("unknown fill '{other}'")),
            }
            ArgValue::Buffer(v)
        }
        "local" => ArgValue::Local(
            rest.parse()
                .map_err(|e| format!("bad local size '{rest}': {e}"))?,
        ),
        "char" | "uchar" => ArgValue::Scalar(vec![num(rest)? as u8]),
        "short" | "ushort" => ArgValue::Scalar((num(rest)? as u16).to_le_bytes().to_vec()),
        "int" | "uint" => ArgValue::Scalar((num(rest)? as u32).to_le_bytes().to_vec()),
        "long" | "ulong" | "size_t" => ArgValue::Scalar((num(rest)? as u64).to_le_bytes().to_vec()),
        "float" => ArgValue::Scalar(
            rest.parse::<f32>()
                .map_err(|e| format!("bad float '{rest}': {e}"))?
                .to_le_bytes()
                .to_vec(),
        ),
        "double" => ArgValue::Scalar(
            rest.parse::<f64>()
                .map_err(|e| format!("bad double '{rest}': {e}"))?
                .to_le_bytes()
                .to_vec(),
        ),
        "bytes" => {
            // hex string
            let h = rest.trim();
            if h.len() % 2 != 0 {
                return Err("odd hex length".into());
            }
            let v: Result<Vec<u8>, _> = (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16))
                .collect();
            ArgValue::Scalar(v.map_err(|e| e.to_string())?)
        }
        other => return Err(format!("unknown argument kind '{other}'")),
    })
}

fn usage() -> &'static str {
    "usage: clprism emulate FILE.cl --kernel NAME --global X[,Y[,Z]] --local X[,Y[,Z]] \
     [--offset X,..] [--group GX[,GY[,GZ]]] [--warp 32] [--budget N] \
     [--arg buf:BYTES[:fill=random|zero|iota|iotaf|randf] | int:V | uint:V | long:V | float:V | double:V | local:BYTES ...] [-D...] [-I...] \
     [--project [--profiles DIR]]"
}

/// Entry point of `clprism emulate ARGS...` (ARGS without the subcommand). `fe`: where
/// the front end finds its toolchain and cache; `profiles`: the profile directory when
/// `--profiles` is not given (`CLPRISM_PROFILES`; the caller reads the configuration, the
/// emulator never reads the environment). Returns the process exit status: 0 on success,
/// 1 on an emulation error, 2 on a usage error.
pub fn emulate_main(
    args: &[String],
    fe: &FrontendOptions,
    profiles: Option<std::path::PathBuf>,
) -> i32 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{}", usage());
        return 0;
    }
    match run(args, fe, profiles) {
        Ok(json) => {
            println!("{json}");
            0
        }
        Err((code, msg)) => {
            eprintln!("clprism emulate: {msg}");
            if code == 2 {
                eprintln!("{}", usage());
            }
            code
        }
    }
}

fn run(
    args: &[String],
    fe: &FrontendOptions,
    default_profiles: Option<std::path::PathBuf>,
) -> Result<String, (i32, String)> {
    let u = |s: String| (2, s);
    let mut file = None;
    let mut kernel = None;
    let mut global = None;
    let mut local = None;
    let mut offset = None;
    let mut group = vec![0u64; 3];
    let mut cfg = EmuConfig::default();
    let mut specs = Vec::new();
    let mut opts = Vec::new();
    let mut project = false;
    let mut profiles: Option<std::path::PathBuf> = None;
    let mut i = 0;
    let val = |i: &mut usize| -> Result<String, (i32, String)> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| (2, format!("{} needs a value", args[*i - 1])))
    };
    while i < args.len() {
        let a = &args[i];
        match a.as_str() {
            "--kernel" | "-k" => kernel = Some(val(&mut i)?),
            "--global" | "-g" => global = Some(parse_dims(&val(&mut i)?).map_err(u)?),
            "--local" | "-l" => local = Some(parse_dims(&val(&mut i)?).map_err(u)?),
            "--offset" => offset = Some(parse_dims(&val(&mut i)?).map_err(u)?),
            "--group" => {
                let g = parse_dims(&val(&mut i)?).map_err(u)?;
                group = vec![0; 3];
                group[..g.len()].copy_from_slice(&g);
            }
            "--warp" => {
                cfg.warp_width = val(&mut i)?
                    .parse()
                    .map_err(|e| (2, format!("bad --warp: {e}")))?
            }
            "--budget" => {
                cfg.instr_budget = val(&mut i)?
                    .parse()
                    .map_err(|e| (2, format!("bad --budget: {e}")))?
            }
            "--arg" | "-a" => specs.push(val(&mut i)?),
            "--project" => project = true,
            "--profiles" => profiles = Some(val(&mut i)?.into()),
            "-h" | "--help" => return Err((2, "help".into())),
            s if s.starts_with("-D") || s.starts_with("-I") || s.starts_with("-cl-") => {
                if s == "-D" || s == "-I" {
                    let v = val(&mut i)?;
                    opts.push(format!("{s}{v}"));
                } else {
                    opts.push(s.to_string());
                }
            }
            s if !s.starts_with('-') && file.is_none() => file = Some(s.to_string()),
            s => return Err((2, format!("unknown option '{s}'"))),
        }
        i += 1;
    }
    let file = file.ok_or_else(|| (2, "no input file".to_string()))?;
    let global = global.ok_or_else(|| (2, "--global is required".to_string()))?;
    let local = match local {
        Some(l) => l,
        None => vec![1; global.len()],
    };
    if local.len() != global.len() {
        return Err((2, "--global and --local have different dimensions".into()));
    }
    let bytes = std::fs::read(&file).map_err(|e| (1, format!("cannot read {file}: {e}")))?;
    let words: Vec<u32> = if let Ok(w) = spirv_words(&bytes) {
        w
    } else {
        let src = String::from_utf8_lossy(&bytes);
        compile_source(&src, &opts.join(" "), fe).map_err(|e| (1, e.to_string()))?
    };
    let m = load_module(&words).map_err(|e| (1, e.to_string()))?;
    let kernel = match kernel {
        Some(k) => k,
        None => {
            let n = m.kernel_names();
            if n.len() == 1 {
                n[0].clone()
            } else {
                return Err((2, format!("--kernel needed; kernels: {}", n.join(", "))));
            }
        }
    };
    let kinfo = m.kernel(&kernel).ok_or_else(|| {
        (
            1,
            format!(
                "no kernel '{kernel}'; kernels: {}",
                m.kernel_names().join(", ")
            ),
        )
    })?;
    if specs.len() != kinfo.args.len() {
        return Err((
            2,
            format!(
                "kernel {kernel} takes {} arguments ({}), {} --arg given",
                kinfo.args.len(),
                kinfo
                    .args
                    .iter()
                    .map(|a| format!("{:?}", a.kind))
                    .collect::<Vec<_>>()
                    .join(", "),
                specs.len()
            ),
        ));
    }
    let mut av = Vec::new();
    for (j, s) in specs.iter().enumerate() {
        av.push(parse_arg(s, 0x9e37_79b9_7f4a_7c15 ^ j as u64).map_err(u)?);
    }
    let shape = LaunchShape::new(&global, &local, offset.as_deref());
    let st = emulate(
        &m,
        &kernel,
        &shape,
        [group[0], group[1], group[2]],
        &mut av,
        &cfg,
    )
    .map_err(|e| (1, e.to_string()))?;
    let mut out = serde_json::to_value(&st).map_err(|e| (1, e.to_string()))?;
    if project {
        let sizes: Vec<(usize, u64)> = specs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.starts_with("buf:"))
            .filter_map(|(j, s)| Some((j, s[4..].split(':').next()?.parse().ok()?)))
            .collect();
        let p = projection(
            &m,
            &global,
            &local,
            &av,
            &st,
            &sizes,
            profiles.or(default_profiles),
        )
        .map_err(|e| (1, e))?;
        if let Some(o) = out.as_object_mut() {
            o.insert("projection".into(), p);
        }
    }
    serde_json::to_string_pretty(&out).map_err(|e| (1, e.to_string()))
}

/// The projection of one emulated launch on every profile of `dir` (Panwar et al. §IV-D).
#[allow(clippy::too_many_arguments)]
fn projection(
    m: &Module,
    global: &[u64],
    local: &[u64],
    args: &[ArgValue],
    st: &WorkGroupStats,
    buffer_sizes: &[(usize, u64)],
    dir: Option<std::path::PathBuf>,
) -> Result<serde_json::Value, String> {
    use crate::model;
    let dir = dir.unwrap_or_else(model::profile::builtin_dir);
    let profiles = model::load_dir(&dir).map_err(|e| format!("profiles: {e}"))?;
    if profiles.is_empty() {
        return Err(format!("no profile in {}", dir.display()));
    }
    let dynamic: u64 = args
        .iter()
        .map(|a| match a {
            ArgValue::Local(n) => *n as u64,
            _ => 0,
        })
        .sum();
    let mut shape = model::LaunchShape::from_ndrange(global, local, m.local_static + dynamic)
        .map_err(|e| e.to_string())?;
    let read: u64 = st
        .footprints
        .iter()
        .filter(|f| !f.read.is_empty())
        .filter_map(|f| {
            buffer_sizes
                .iter()
                .find(|b| b.0 == f.arg as usize)
                .map(|b| b.1)
        })
        .sum();
    shape.kernel_read_bytes = (read > 0).then_some(read);
    let set = model::project_all(
        std::slice::from_ref(st),
        &shape,
        &profiles,
        &model::ModelOptions::recommended(),
    )
    .map_err(|e| e.to_string())?;
    serde_json::to_value(set).map_err(|e| e.to_string())
}
