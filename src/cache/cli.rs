//! `clprism cache stats|trim|clear`: the cache directory's size against its bound, and
//! trimming or emptying it by hand.

use super::{clear, last_trim, scan, trim, Kind};
use std::path::Path;

const USAGE: &str = "\
usage: clprism cache stats
       clprism cache trim [--max BYTES]
       clprism cache clear

The cache directory (CLPRISM_CACHE, else $XDG_CACHE_HOME/clprism, else $HOME/.cache/clprism)
holds clprism's SPIR-V, footprint models, registers, app binaries' sources and binaries/.
  stats   its directory, bound (CLPRISM_CACHE_MAX), entries and bytes on disk per kind, and
          the last automatic trim
  trim    removes the least recently used entries until they fill at most 90 % of the bound
          (--max BYTES: this bound instead, suffixes K, M, G), and temporary files over an
          hour old; what the app's process does once on its own
  clear   removes every entry (files that are not clprism's entries stay)
";

/// A byte count for people: `307.2 MiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

fn bound_text(max: u64) -> String {
    if max == 0 {
        "none (CLPRISM_CACHE_MAX=off)".into()
    } else {
        format!("{} ({max} bytes)", human(max))
    }
}

/// `clprism cache ARGS`; the exit status.
pub fn cache_main(args: &[String]) -> i32 {
    let cfg = crate::config::from_env_quiet();
    let Some(dir) = crate::config::cache_dir_from(cfg.cache.as_deref()) else {
        eprintln!("clprism cache: no cache directory (set CLPRISM_CACHE or HOME)");
        return 1;
    };
    let sub = args.first().map(String::as_str);
    let rest = args.get(1..).unwrap_or(&[]);
    match sub {
        Some("-h") | Some("--help") => {
            print!("{USAGE}");
            0
        }
        Some("stats") if rest.is_empty() => stats(&dir, cfg.cache_max),
        Some("clear") if rest.is_empty() => match clear(&dir) {
            Ok((n, bytes)) => {
                println!(
                    "removed {n} entries, {} from {}",
                    human(bytes),
                    dir.display()
                );
                0
            }
            Err(e) => {
                eprintln!("clprism cache clear: {}: {e}", dir.display());
                1
            }
        },
        Some("trim") => {
            let max = match rest {
                [] => cfg.cache_max,
                [flag, v] if flag == "--max" => match crate::config::parse_bytes(v) {
                    Some(m) => m,
                    None => {
                        eprint!("clprism cache trim: --max '{v}' is not BYTES\n{USAGE}");
                        return 2;
                    }
                },
                _ => {
                    eprint!("clprism cache trim: unexpected arguments\n{USAGE}");
                    return 2;
                }
            };
            let t0 = std::time::Instant::now();
            match trim(&dir, max, &|_| false) {
                Ok(t) => {
                    println!(
                        "{}: {} entries, {} before; bound {}; removed {} entries, {}; {} now \
                         ({:.0} ms)",
                        dir.display(),
                        t.entries,
                        human(t.bytes_before),
                        bound_text(max),
                        t.removed,
                        human(t.removed_bytes),
                        human(t.bytes_after),
                        t0.elapsed().as_secs_f64() * 1e3
                    );
                    0
                }
                Err(e) => {
                    eprintln!("clprism cache trim: {}: {e}", dir.display());
                    1
                }
            }
        }
        _ => {
            eprint!("{USAGE}");
            2
        }
    }
}

fn stats(dir: &Path, max: u64) -> i32 {
    let t0 = std::time::Instant::now();
    let entries = match scan(dir, &|_| false) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("clprism cache stats: {}: {e}", dir.display());
            return 1;
        }
    };
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    let total: u64 = entries
        .iter()
        .filter(|e| e.kind != Kind::Temporary)
        .map(|e| e.bytes)
        .sum();
    let n = entries.iter().filter(|e| e.kind != Kind::Temporary).count();
    println!("directory  {}", dir.display());
    println!("bound      {}", bound_text(max));
    let share = if max > 0 {
        format!(" ({:.0} % of the bound)", 100.0 * total as f64 / max as f64)
    } else {
        String::new()
    };
    println!("entries    {n}, {}{share}", human(total));
    for k in Kind::ALL {
        let (c, b) = entries
            .iter()
            .filter(|e| e.kind == k)
            .fold((0, 0), |(c, b), e| (c + 1, b + e.bytes));
        if c > 0 {
            println!("  {:<14} {c:>8}  {}", k.as_str(), human(b));
        }
    }
    match last_trim(dir) {
        Some((t, text)) => {
            let ago = t.elapsed().map(|d| d.as_secs()).unwrap_or(0);
            println!("last trim  {ago} s ago: {text}");
        }
        None => println!("last trim  none recorded"),
    }
    println!("scanned in {ms:.0} ms");
    0
}
