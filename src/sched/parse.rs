//! Parsing of `CLPRISM_SCHEDULER` and `CLPRISM_BOYER` (DESIGN.md §3). Pure functions: they
//! return `Err` with a message naming the bad part; the config layer turns that into its
//! one-line warning and uses the default.

use std::fmt;

/// Which chunk scheduler balances a launch (`CLPRISM_SCHEDULER`).
#[derive(Debug, Clone, PartialEq)]
pub enum SchedulerKind {
    /// Boyer's dynamic scheduler (dissertation §4.3.2), parameters in [`BoyerParams`].
    Boyer,
    /// Static partition: device `i` gets fraction `f[i]` of the work-groups as one chunk.
    /// Fractions are non-negative; they are normalised by their sum, so `static:3,1` means
    /// 75% / 25%. Needs one fraction per participating device.
    Static(Vec<f64>),
    /// Chunk self-scheduling (Kruskal & Weiss, Boyer §4.2): every idle device claims a chunk
    /// of the given fixed fraction of all work-groups (0 < frac ≤ 1).
    Css(f64),
    /// Guided self-scheduling (Polychronopoulos & Kuck, Boyer §4.2): chunk = ⌈R/P⌉ for R
    /// remaining work-groups and P live devices, never below `min_frac` of all work-groups
    /// (0 = one work-group; Boyer §4.5.1 sweeps this minimum).
    Gss {
        /// Minimum chunk, fraction of all work-groups.
        min_frac: f64,
    },
    /// Trapezoid self-scheduling (Tzen & Ni, Boyer §4.2): chunk sizes fall linearly from
    /// ⌈W/(2P)⌉ to a last chunk of `last_frac` of all work-groups (0 = one work-group).
    Tss {
        /// Last (minimum) chunk, fraction of all work-groups.
        last_frac: f64,
    },
    /// Everything on one device: index into the participating devices (`single` = 0).
    Single(usize),
    /// The caller picks the projected-best single device (handled outside `sched`;
    /// [`crate::sched::ChunkScheduler::new`] refuses it).
    Best,
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedulerKind::Boyer => write!(f, "boyer"),
            SchedulerKind::Static(v) => {
                write!(f, "static:")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ",")?;
                    }
                    write!(f, "{x}")?;
                }
                Ok(())
            }
            SchedulerKind::Css(x) => write!(f, "css:{x}"),
            SchedulerKind::Gss { min_frac } if *min_frac == 0.0 => write!(f, "gss"),
            SchedulerKind::Gss { min_frac } => write!(f, "gss:{min_frac}"),
            SchedulerKind::Tss { last_frac } if *last_frac == 0.0 => write!(f, "tss"),
            SchedulerKind::Tss { last_frac } => write!(f, "tss:{last_frac}"),
            SchedulerKind::Single(i) => write!(f, "single:{i}"),
            SchedulerKind::Best => write!(f, "best"),
        }
    }
}

/// Parameters of Boyer's scheduler (Table 4.2) plus one extension (`overdue_factor`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoyerParams {
    /// β: initial chunk size as a fraction of all work-groups (paper: 0.07). For N > 2
    /// devices the scheduler uses β·2/N per device, so that the initial phase claims the same
    /// share of the work as Boyer's two-device setup (see [`crate::sched::boyer`]).
    pub beta: f64,
    /// δ: growth factor of successive chunks on one device (paper: 1.5).
    pub delta: f64,
    /// γ: chunks every device must have completed before the final split (paper: 2).
    pub gamma: u32,
    /// Extension (not in the paper): when the pool is empty and some device that has made
    /// progress sits idle, a device whose outstanding chunks have run longer than
    /// `overdue_factor` × their expected time (Ω·U) is abandoned like a straggler, so a device
    /// that stalls after its first chunk cannot hang the launch. `None` disables it.
    pub overdue_factor: Option<f64>,
    /// Extension (not in the paper): in step 2, when a device's δ-grown chunk would reach its
    /// eq. 4.3 share of the remaining work-groups, do the final split (step 3) at once (see
    /// [`crate::sched::boyer`]). `early=off` gives the paper's pure step 2.
    pub early_split: bool,
    /// Extension after Boyer §4.6 (future work: a hybrid that "can leverage past performance
    /// information for improved partitioning"): when the caller seeds the scheduler with the
    /// Ω every participating device measured in an earlier launch of the same kernel
    /// ([`crate::sched::ChunkScheduler::seed_history`]), each device's first chunk is this
    /// fraction (0 < x ≤ 1) of its eq. 4.3 share of all work-groups instead of β, and the
    /// rest is split with eq. 4.3 as soon as any device finishes its first chunk. `None`
    /// (`warm=off`) keeps the paper's cold start for every launch.
    pub warm: Option<f64>,
}

/// Default `warm` fraction of [`BoyerParams`].
pub const WARM_DEFAULT: f64 = 0.75;

impl Default for BoyerParams {
    /// The paper's values (Table 4.2), an overdue factor of 4, early split on, warm start
    /// with 3/4 of each share (leaving ≥ 25% of the work to the final split, as §4.5.4 asks
    /// of the initial phase).
    fn default() -> Self {
        BoyerParams {
            beta: 0.07,
            delta: 1.5,
            gamma: 2,
            overdue_factor: Some(4.0),
            early_split: true,
            warm: Some(WARM_DEFAULT),
        }
    }
}

fn parse_frac(name: &str, s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{name}: '{s}' is not a number"))?;
    if !v.is_finite() {
        return Err(format!("{name}: '{s}' is not finite"));
    }
    Ok(v)
}

/// Parses `CLPRISM_SCHEDULER`: `boyer` | `static:<f1>,<f2>,...` | `css:<frac>` |
/// `gss[:<min_frac>]` | `tss[:<last_frac>]` | `single[:<device index>]` | `best`
/// (case-insensitive, surrounding blanks ignored).
///
/// Errors: unknown name, missing or malformed argument, a fraction out of range
/// (css: 0 < frac ≤ 1; static: each ≥ 0 and sum > 0; gss/tss: 0 ≤ frac ≤ 1).
pub fn parse_scheduler(s: &str) -> Result<SchedulerKind, String> {
    let t = s.trim().to_ascii_lowercase();
    let (name, arg) = match t.split_once(':') {
        Some((n, a)) => (n.trim(), Some(a.trim())),
        None => (t.as_str(), None),
    };
    let no_arg = |k: SchedulerKind| match arg {
        None => Ok(k),
        Some(a) => Err(format!("scheduler '{name}' takes no argument (got '{a}')")),
    };
    match name {
        "boyer" | "dynamic" => no_arg(SchedulerKind::Boyer),
        "best" => no_arg(SchedulerKind::Best),
        "static" => {
            let a = arg.ok_or("static needs fractions, e.g. static:0.6,0.4")?;
            let mut v = Vec::new();
            for part in a.split(',') {
                let x = parse_frac("static fraction", part)?;
                if x < 0.0 {
                    return Err(format!("static fraction '{part}' is negative"));
                }
                v.push(x);
            }
            if v.iter().sum::<f64>() <= 0.0 {
                return Err("static fractions sum to 0".into());
            }
            Ok(SchedulerKind::Static(v))
        }
        "css" => {
            let a = arg.ok_or("css needs a chunk fraction, e.g. css:0.1")?;
            let x = parse_frac("css fraction", a)?;
            if !(x > 0.0 && x <= 1.0) {
                return Err(format!("css fraction {x} not in (0, 1]"));
            }
            Ok(SchedulerKind::Css(x))
        }
        "gss" | "tss" => {
            let x = match arg {
                None => 0.0,
                Some(a) => parse_frac(&format!("{name} minimum chunk fraction"), a)?,
            };
            if !(0.0..=1.0).contains(&x) {
                return Err(format!("{name} minimum chunk fraction {x} not in [0, 1]"));
            }
            Ok(if name == "gss" {
                SchedulerKind::Gss { min_frac: x }
            } else {
                SchedulerKind::Tss { last_frac: x }
            })
        }
        "single" => match arg {
            None => Ok(SchedulerKind::Single(0)),
            Some(a) => a
                .parse::<usize>()
                .map(SchedulerKind::Single)
                .map_err(|_| format!("single: '{a}' is not a device index")),
        },
        "" => Err("empty scheduler name".into()),
        other => Err(format!(
            "unknown scheduler '{other}' (expected boyer, static:<f,..>, css:<frac>, gss, tss, single, best)"
        )),
    }
}

/// Parses `CLPRISM_BOYER`: comma-separated `key=value` pairs, any subset of
/// `beta=<0<x≤1>`, `delta=<≥1>`, `gamma=<integer ≥1>`, `overdue=<factor >1 | off>`,
/// `early=<on|off>`, `warm=<0<x≤1 | off>`;
/// unspecified keys keep the paper's values ([`BoyerParams::default`]). An empty string gives
/// the defaults. Errors name the offending pair.
pub fn parse_boyer_params(s: &str) -> Result<BoyerParams, String> {
    let mut p = BoyerParams::default();
    for pair in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("'{pair}' is not key=value"))?;
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
        match k.as_str() {
            "beta" => {
                let x = parse_frac("beta", v)?;
                if !(x > 0.0 && x <= 1.0) {
                    return Err(format!("beta={v} not in (0, 1]"));
                }
                p.beta = x;
            }
            "delta" => {
                let x = parse_frac("delta", v)?;
                if !(1.0..=100.0).contains(&x) {
                    return Err(format!("delta={v} not in [1, 100]"));
                }
                p.delta = x;
            }
            "gamma" => {
                let x: u32 = v
                    .parse()
                    .map_err(|_| format!("gamma={v} is not a whole number"))?;
                if x == 0 {
                    return Err("gamma must be at least 1".into());
                }
                p.gamma = x;
            }
            "overdue" => {
                if v.eq_ignore_ascii_case("off") || v == "0" {
                    p.overdue_factor = None;
                } else {
                    let x = parse_frac("overdue", v)?;
                    if x <= 1.0 {
                        return Err(format!("overdue={v} must be > 1 (or off)"));
                    }
                    p.overdue_factor = Some(x);
                }
            }
            "early" => {
                p.early_split = match v.to_ascii_lowercase().as_str() {
                    "on" | "1" | "true" => true,
                    "off" | "0" | "false" => false,
                    _ => return Err(format!("early={v}: expected on or off")),
                }
            }
            "warm" => {
                if v.eq_ignore_ascii_case("off") || v == "0" {
                    p.warm = None;
                } else {
                    let x = parse_frac("warm", v)?;
                    if !(x > 0.0 && x <= 1.0) {
                        return Err(format!("warm={v} not in (0, 1] (or off)"));
                    }
                    p.warm = Some(x);
                }
            }
            _ => {
                return Err(format!(
                    "unknown key '{k}' (expected beta, delta, gamma, overdue, early, warm)"
                ))
            }
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_names() {
        assert_eq!(parse_scheduler(" Boyer ").unwrap(), SchedulerKind::Boyer);
        assert_eq!(
            parse_scheduler("static:0.6,0.4").unwrap(),
            SchedulerKind::Static(vec![0.6, 0.4])
        );
        assert_eq!(
            parse_scheduler("css:0.21").unwrap(),
            SchedulerKind::Css(0.21)
        );
        assert_eq!(
            parse_scheduler("gss").unwrap(),
            SchedulerKind::Gss { min_frac: 0.0 }
        );
        assert_eq!(
            parse_scheduler("gss:0.22").unwrap(),
            SchedulerKind::Gss { min_frac: 0.22 }
        );
        assert_eq!(
            parse_scheduler("tss").unwrap(),
            SchedulerKind::Tss { last_frac: 0.0 }
        );
        assert_eq!(parse_scheduler("single").unwrap(), SchedulerKind::Single(0));
        assert_eq!(
            parse_scheduler("single:2").unwrap(),
            SchedulerKind::Single(2)
        );
        assert_eq!(parse_scheduler("best").unwrap(), SchedulerKind::Best);
        for k in [
            "boyer",
            "static:3,1",
            "css:0.5",
            "gss:0.1",
            "tss",
            "single:1",
            "best",
        ] {
            let p = parse_scheduler(k).unwrap();
            assert_eq!(parse_scheduler(&p.to_string()).unwrap(), p, "{k}");
        }
    }

    #[test]
    fn scheduler_errors() {
        for bad in [
            "",
            "foo",
            "static",
            "static:",
            "static:0,0",
            "static:-1,2",
            "static:a,1",
            "css",
            "css:0",
            "css:1.5",
            "gss:2",
            "single:x",
            "boyer:1",
            "css:nan",
        ] {
            let e = parse_scheduler(bad);
            assert!(e.is_err(), "{bad:?} accepted as {e:?}");
            assert!(!e.unwrap_err().is_empty());
        }
    }

    #[test]
    fn boyer_params() {
        assert_eq!(parse_boyer_params("").unwrap(), BoyerParams::default());
        let p = parse_boyer_params("beta=0.1, gamma=3").unwrap();
        assert_eq!((p.beta, p.delta, p.gamma), (0.1, 1.5, 3));
        let p = parse_boyer_params("delta=2,overdue=off").unwrap();
        assert_eq!((p.delta, p.overdue_factor), (2.0, None));
        assert!(!parse_boyer_params("early=off").unwrap().early_split);
        assert!(parse_boyer_params("early=maybe").is_err());
        assert_eq!(parse_boyer_params("").unwrap().warm, Some(WARM_DEFAULT));
        assert_eq!(parse_boyer_params("warm=1").unwrap().warm, Some(1.0));
        assert_eq!(parse_boyer_params("warm=off").unwrap().warm, None);
        assert!(parse_boyer_params("warm=1.5").unwrap_err().contains("warm"));
        assert!(parse_boyer_params("warm=-0.1").is_err());
        assert_eq!(
            parse_boyer_params("overdue=8").unwrap().overdue_factor,
            Some(8.0)
        );
        for bad in [
            "beta",
            "beta=0",
            "beta=2",
            "delta=0.5",
            "gamma=0",
            "gamma=1.5",
            "x=1",
            "overdue=1",
        ] {
            assert!(parse_boyer_params(bad).is_err(), "{bad:?}");
        }
    }
}
