//! `clprism report --plot FILE`: the devices view ([`super::devices`]) as a self-contained
//! SVG (no script, no external reference). One panel per kernel: horizontal bars on a log
//! scale for the measured native time, the measured balance-mode time and the projected time
//! on every profiled device (ranked, the app's own profile marked), and a 100 % bar of the
//! work-group shares of the balance devices.

use super::devices::{DevicesView, KernelDevices, RankRow};
use std::fmt::Write as _;

const WIDTH: f64 = 960.0;
const LABEL_W: f64 = 260.0;
const BAR_X: f64 = LABEL_W + 10.0;
const BAR_W: f64 = WIDTH - BAR_X - 110.0;
const ROW_H: f64 = 18.0;
const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];

/// Escapes text for XML character data and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // characters XML 1.0 does not allow
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// A time in ns as text with a unit (ns, µs, ms, s).
pub fn fmt_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// A power of ten of ns as a short tick label: `1 ns`, `10 µs`, `100 ms`, `10 s`.
pub fn fmt_decade(exp: i32) -> String {
    let (unit, base) = match exp {
        i32::MIN..=2 => ("ns", 0),
        3..=5 => ("µs", 3),
        6..=8 => ("ms", 6),
        _ => ("s", 9),
    };
    let exp = exp.max(0);
    format!("{} {unit}", 10u64.saturating_pow((exp - base) as u32))
}

struct Bar {
    label: String,
    ns: f64,
    fill: &'static str,
    note: String,
}

fn bars(k: &KernelDevices, ranking: &[&RankRow], n_dev: usize) -> Vec<Bar> {
    let mut v = Vec::new();
    if let Some(ns) = k.native_mean_ns {
        v.push(Bar {
            label: format!(
                "native, measured ({})",
                k.native_device.as_deref().unwrap_or("app's device")
            ),
            ns,
            fill: "#555555",
            note: format!("{} launches", k.native_launches),
        });
    }
    if let Some(ns) = k.balance_mean_ns {
        v.push(Bar {
            label: if k.split_launches == 0 {
                "balance, measured (kept whole)".to_string()
            } else {
                format!("balance, measured ({n_dev} devices)")
            },
            ns,
            fill: "#4e79a7",
            note: k
                .speedup
                .map_or_else(String::new, |s| format!("speedup {s:.2}×")),
        });
    }
    for r in ranking {
        if let Some(ns) = r.projected_ns {
            v.push(Bar {
                label: format!(
                    "projected #{} {}{}",
                    r.rank,
                    r.device,
                    if r.own { " (app's device)" } else { "" }
                ),
                ns,
                fill: if r.own { "#e15759" } else { "#f28e2b" },
                note: if r.best > 0 {
                    "best".into()
                } else {
                    String::new()
                },
            });
        }
    }
    v.retain(|b| b.ns.is_finite() && b.ns > 0.0);
    v
}

/// Renders the view as an SVG document.
pub fn plot(v: &DevicesView) -> String {
    let devices: Vec<&String> = v.devices.keys().collect();
    let mut body = String::new();
    let mut y = 74.0;
    for k in &v.kernels {
        let ranking: Vec<&RankRow> = v.ranking.iter().filter(|r| r.kernel == k.kernel).collect();
        let bs = bars(k, &ranking, devices.len());
        let has_shares = k.split_launches > 0 && !k.shares.is_empty();
        if bs.is_empty() && !has_shares {
            continue;
        }
        let _ = writeln!(
            body,
            r#"<text x="10" y="{:.1}" font-weight="bold">{}</text>"#,
            y + 12.0,
            esc(&k.kernel)
        );
        y += 22.0;
        if !bs.is_empty() {
            // log scale over whole decades covering the panel's values
            let lo = bs.iter().map(|b| b.ns).fold(f64::MAX, f64::min);
            let hi = bs.iter().map(|b| b.ns).fold(0.0, f64::max);
            let d0 = lo.log10().floor();
            let mut d1 = hi.log10().ceil();
            if d1 <= d0 {
                d1 = d0 + 1.0;
            }
            let x_of = |ns: f64| BAR_X + (ns.log10() - d0) / (d1 - d0) * BAR_W;
            let top = y;
            for b in &bs {
                let w = (x_of(b.ns) - BAR_X).max(1.0);
                let _ = writeln!(
                    body,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                    LABEL_W,
                    y + 13.0,
                    esc(&b.label)
                );
                let _ = writeln!(
                    body,
                    r#"<rect x="{BAR_X:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                    y + 2.0,
                    ROW_H - 4.0,
                    b.fill,
                    esc(&b.label),
                    esc(&fmt_ns(b.ns))
                );
                let note = if b.note.is_empty() {
                    String::new()
                } else {
                    format!("  {}", b.note)
                };
                let _ = writeln!(
                    body,
                    r#"<text x="{:.1}" y="{:.1}">{}{}</text>"#,
                    BAR_X + w + 4.0,
                    y + 13.0,
                    esc(&fmt_ns(b.ns)),
                    esc(&note)
                );
                y += ROW_H;
            }
            // decade ticks
            let mut d = d0;
            while d <= d1 + 1e-9 {
                let x = x_of(10f64.powf(d));
                let _ = writeln!(
                    body,
                    r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{:.1}" stroke="#bbbbbb" stroke-dasharray="2,2"/>"##,
                    y + 2.0
                );
                let _ = writeln!(
                    body,
                    r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#777777" font-size="10">{}</text>"##,
                    y + 13.0,
                    esc(&fmt_decade(d as i32))
                );
                d += 1.0;
            }
            y += 18.0;
        }
        if has_shares {
            let _ = writeln!(
                body,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">work-group share ({} split)</text>"#,
                LABEL_W,
                y + 13.0,
                k.split_launches
            );
            let mut x = BAR_X;
            for (i, d) in devices.iter().enumerate() {
                let share = k.shares.get(*d).copied().unwrap_or(0.0).clamp(0.0, 1.0);
                let w = share * BAR_W;
                if w > 0.0 {
                    let _ = writeln!(
                        body,
                        r#"<rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{}"><title>{} {}: {:.1} %</title></rect>"#,
                        y + 2.0,
                        ROW_H - 4.0,
                        PALETTE[i % PALETTE.len()],
                        esc(d),
                        esc(v.devices.get(*d).map_or("", String::as_str)),
                        share * 100.0
                    );
                    if w > 60.0 {
                        let _ = writeln!(
                            body,
                            r##"<text x="{:.1}" y="{:.1}" fill="#ffffff">{} {:.0} %</text>"##,
                            x + 4.0,
                            y + 13.0,
                            esc(d),
                            share * 100.0
                        );
                    }
                }
                x += w;
            }
            y += ROW_H + 4.0;
        }
        y += 12.0;
    }
    // legend of the balance devices
    let mut legend = String::new();
    if !devices.is_empty() {
        let _ = writeln!(
            legend,
            r#"<text x="10" y="{:.1}">balance devices:</text>"#,
            y + 13.0
        );
        let mut x = 130.0;
        for (i, d) in devices.iter().enumerate() {
            let name = format!("{} {}", d, v.devices.get(*d).map_or("", String::as_str));
            let _ = writeln!(
                legend,
                r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                y + 3.0,
                PALETTE[i % PALETTE.len()],
                x + 16.0,
                y + 13.0,
                esc(name.trim())
            );
            x += 16.0 + 7.0 * name.chars().count().min(60) as f64 + 14.0;
        }
        y += 24.0;
    }
    if let Some(c) = &v.output_check {
        let _ = writeln!(
            legend,
            r#"<text x="10" y="{:.1}">output check (cmp, byte for byte): {} vs {}: {}</text>"#,
            y + 13.0,
            esc(&c.a),
            esc(&c.b),
            esc(&c.verdict())
        );
        y += 24.0;
    }
    let height = y + 10.0;
    let mut s = String::new();
    let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH:.0}" height="{height:.0}" viewBox="0 0 {WIDTH:.0} {height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r##"<rect x="0" y="0" width="{WIDTH:.0}" height="{height:.0}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="15" font-weight="bold">clprism: time per kernel and device</text>"#
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="38" fill="#555555">{}</text>"##,
        "mean time per launch, log scale: measured native and balance-mode times, projected \
         times of the model per device profile"
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="56" fill="#555555" font-size="10">{}</text>"##,
        esc(&format!("logs: {}", v.files.join(" ")))
    );
    s.push_str(&body);
    s.push_str(&legend);
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::devices::build;
    use crate::report::load::parse_log;

    #[test]
    fn plots_bars_shares_and_escapes_names() {
        let log = r#"{"kernel":"a<b&c","mode":"log","global":[64],"device":{"index":"0:0","name":"x"},"device_ns":300}
{"kernel":"a<b&c","mode":"project","global":[64],"device_ns":100,"projection":{"devices":[{"device":"gpu","t_compute_ns":1.0,"t_global_ns":10.0,"t_local_ns":0.0,"bound":"global","projected_ns":10.0,"rank":1}]}}
{"kernel":"a<b&c","mode":"balance","global":[64],"schedule":{"scheduler":"boyer","devices":[{"index":"0:0","name":"x"},{"index":"0:1","name":"y\"z"}],"chunks":[{"device":0,"first_wg":0,"count":1},{"device":1,"first_wg":1,"count":3}],"work_groups":4,"wall_ns":100}}
"#;
        let s = plot(&build(&[parse_log("t", log)]));
        assert!(s.starts_with("<?xml") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("a&lt;b&amp;c") && !s.contains("a<b"));
        assert!(s.contains("y&quot;z"));
        assert_eq!(s.matches("<rect").count(), 1 + 3 + 2 + 2, "{s}");
        assert_eq!(fmt_ns(1500.0), "1.5 µs");
        assert_eq!(
            [0, 2, 3, 7, 10].map(fmt_decade),
            ["1 ns", "100 ns", "1 µs", "10 ms", "10 s"]
        );
    }
}
