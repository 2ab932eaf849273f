//! A small progress bar on stderr: redrawn in place on a terminal, one line per step
//! otherwise (so that logs of batch runs show where a run is).

use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Progress of a run of `total` steps.
pub struct Progress {
    total: usize,
    done: usize,
    tty: bool,
    quiet: bool,
    start: Instant,
}

impl Progress {
    /// A bar for `total` steps; `quiet` prints nothing.
    pub fn new(total: usize, quiet: bool) -> Progress {
        Progress {
            total: total.max(1),
            done: 0,
            tty: std::io::stderr().is_terminal(),
            quiet,
            start: Instant::now(),
        }
    }

    /// The text of the bar after `done` of `total` steps (40 cells wide).
    pub fn render(done: usize, total: usize, label: &str, secs: f64) -> String {
        let total = total.max(1);
        let done = done.min(total);
        let cells = 40 * done / total;
        format!(
            "[{}{}] {done}/{total} {secs:5.1}s {label}",
            "#".repeat(cells),
            "-".repeat(40 - cells)
        )
    }

    /// Marks the start of the next step, described by `label`.
    pub fn step(&mut self, label: &str) {
        if self.quiet {
            return;
        }
        let line = Self::render(
            self.done,
            self.total,
            label,
            self.start.elapsed().as_secs_f64(),
        );
        let mut e = std::io::stderr().lock();
        if self.tty {
            let _ = write!(e, "\r\x1b[2K{line}");
        } else {
            let _ = writeln!(e, "{line}");
        }
        let _ = e.flush();
        self.done += 1;
    }

    /// Ends the bar.
    pub fn finish(&mut self) {
        if self.quiet {
            return;
        }
        let line = Self::render(
            self.total,
            self.total,
            "done",
            self.start.elapsed().as_secs_f64(),
        );
        let mut e = std::io::stderr().lock();
        if self.tty {
            let _ = writeln!(e, "\r\x1b[2K{line}");
        } else {
            let _ = writeln!(e, "{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_fills_in_proportion() {
        let r = Progress::render(10, 40, "x", 1.0);
        assert!(r.starts_with(&format!("[{}{}]", "#".repeat(10), "-".repeat(30))));
        assert!(r.contains("10/40"));
        let full = Progress::render(50, 40, "y", 0.0);
        assert!(full.contains(&"#".repeat(40)));
    }
}
