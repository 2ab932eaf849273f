//! The accuracy report as text: the per-kernel table, the summary and CSV
//! (`clprism accuracy --format table|csv`).

use super::*;

fn us(ns: f64) -> String {
    if ns >= 1e7 {
        format!("{:.0}", ns / 1e3)
    } else if ns >= 1e4 {
        format!("{:.1}", ns / 1e3)
    } else {
        format!("{:.3}", ns / 1e3)
    }
}

fn pct(f: f64) -> String {
    format!("{:.1}", f * 100.0)
}

fn opt(v: Option<String>) -> String {
    v.unwrap_or_else(|| "-".into())
}

/// The table (`--format table`): one line per kernel and device, the launch device first
/// (marked `*`); times in µs, errors in %.
pub fn render_table(rep: &Report) -> String {
    let mut out = String::new();
    for m in &rep.device_map {
        out += &format!("device '{}' -> {} (by {})\n", m.name, m.column, m.by);
    }
    out += "ratio: time on the device / time on the launch device (*); the anchored figure is \
            the launch device's measured time x the model's ratio, so its ratio and the \
            projected-best device are the model's\n";
    out += "COLD: the measured figure likely rests on a cold start (one or two launches, one \
            far slower or the process's first; the reason follows the row); marked rows stay \
            in the summary, which is given without them too\n";
    let w = rep
        .rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, 60);
    out +=
        &format!(
        "{:<w$} {:<18} {:>5} {:>10} {:>10} {:>10} {:>7} {:>7} {:>7} {:>7} {:>7}  best meas/proj\n",
        "kernel", "device", "n", "meas_us", "model_us", "anch_us", "r_meas", "r_proj", "APE_m%",
        "APE_a%", "relerr%"
    );
    for r in &rep.rows {
        for (i, c) in r.cells.iter().enumerate() {
            let label: String = if i == 0 {
                r.label.chars().take(w).collect()
            } else {
                String::new()
            };
            let dev = if i == 0 {
                format!("{}*", c.device)
            } else {
                c.device.clone()
            };
            let tail = if i == 0 {
                format!(
                    " {:>7}  {}/{} {}",
                    pct(r.relative_error),
                    r.best_measured,
                    r.best_projected,
                    if r.hit { "hit" } else { "miss" }
                )
            } else {
                String::new()
            };
            let tail = if c.cold.is_some() {
                format!("{tail}  COLD")
            } else {
                tail
            };
            out += &format!(
                "{:<w$} {:<18} {:>5} {:>10} {:>10} {:>10} {:>7.3} {:>7.3} {:>7} {:>7}{tail}\n",
                label,
                dev,
                c.launches,
                us(c.measured_ns),
                us(c.model_ns),
                opt(c.anchored_ns.map(us)),
                c.ratio_measured,
                c.ratio_projected,
                pct(c.ape_model),
                opt(c.ape_anchored.map(pct)),
            );
        }
        for why in &r.cold {
            out += &format!("    ^ COLD {why}\n");
        }
    }
    out += &render_summary(rep);
    out
}

/// The summary lines of the table.
pub fn render_summary(rep: &Report) -> String {
    let mut out = String::new();
    match &rep.summary {
        None => out += "summary: no kernel compared\n",
        Some(s) => {
            out += &format!(
                "summary: {} kernel(s) on {} device(s) ({})\n",
                s.kernels,
                rep.devices.len(),
                rep.devices.join(", ")
            );
            out += &summary_lines(s);
            match &rep.summary_without_cold {
                _ if rep.cold_rows == 0 => {
                    out += "without the rows marked cold: none is marked (the figures above)\n"
                }
                Some(w) => {
                    out += &format!(
                        "without the {} row(s) marked cold: {} kernel(s)\n",
                        rep.cold_rows, w.kernels
                    );
                    out += &summary_lines(w);
                }
                None => {
                    out += &format!(
                        "without the {} row(s) marked cold: no row left\n",
                        rep.cold_rows
                    )
                }
            }
        }
    }
    if !rep.unmatched.is_empty() {
        out += &format!("not compared ({}):\n", rep.unmatched.len());
        for (k, why) in &rep.unmatched {
            out += &format!("  {k}: {why}\n");
        }
    }
    out
}

/// The model, anchored and relative-error lines of one summary.
fn summary_lines(s: &Summary) -> String {
    let per = |m: &BTreeMap<String, f64>| {
        m.iter()
            .map(|(d, v)| format!("{d} {}%", pct(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = format!(
        "  model:    MAPE {}% (median APE {}%, {} pairs; {})\n",
        pct(s.model_mape),
        pct(s.model_median_ape),
        s.model_pairs,
        per(&s.model_mape_per_device)
    );
    match (
        s.anchored_mape,
        s.anchored_median_ape,
        s.model_mape_same_pairs,
    ) {
        (Some(a), Some(m), Some(ms)) => {
            out += &format!(
                "  anchored: MAPE {}% (median APE {}%, {} pairs off the launch device, \
                 where the model has MAPE {}%; {})\n",
                pct(a),
                pct(m),
                s.anchored_pairs,
                pct(ms),
                per(&s.anchored_mape_per_device)
            )
        }
        _ => out += "  anchored: no pair (no anchor or no device besides the launch one)\n",
    }
    out += &format!(
        "  relative-performance error (Panwar): mean {}%, median {}%; projected best = \
         measured best: {} of {}\n",
        pct(s.mean_relative_error),
        pct(s.median_relative_error),
        s.hits,
        s.kernels
    );
    out
}

/// Header of [`render_csv`].
pub const CSV_HEADER: &str = "kernel,program,global,local,launch_device,device,launches,\
measured_ns,model_ns,anchored_ns,ratio_measured,ratio_projected,ape_model,ape_anchored,\
relative_error,best_measured,best_projected,hit,cold";

/// The rows as CSV (`--format csv`): one line per kernel and device, errors as fractions.
pub fn render_csv(rep: &Report) -> String {
    let dims = |v: &[u64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("x")
    };
    let q = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in &rep.rows {
        for c in &r.cells {
            let f = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
            out += &format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                q(&r.id.kernel),
                r.id.program,
                dims(&r.id.global),
                r.id.local.as_deref().map(dims).unwrap_or_default(),
                q(&r.launch_device),
                q(&c.device),
                c.launches,
                c.measured_ns,
                c.model_ns,
                f(c.anchored_ns),
                c.ratio_measured,
                c.ratio_projected,
                c.ape_model,
                f(c.ape_anchored),
                r.relative_error,
                q(&r.best_measured),
                q(&r.best_projected),
                r.hit,
                q(c.cold.as_deref().unwrap_or(""))
            );
        }
    }
    out
}
