//! Rendering of report sections as aligned text tables, CSV or JSON.
//!
//! A section is a [`Table`] of typed columns. In text, times are shown in µs (`us`) or ms and
//! fractions as percentages; in CSV every time is in ns and every fraction in 0..1, so that
//! the numbers can be summed exactly. Missing values are `-` in text and empty in CSV.

use std::fmt::Write as _;

/// How a column's values are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text, left-aligned.
    Text,
    /// An integer count.
    Int,
    /// A time in ns, shown in µs with 1 decimal in text.
    Us,
    /// A time in ns, shown in ms with 3 decimals in text.
    Ms,
    /// A fraction 0..1, shown as a percentage with 1 decimal in text.
    Pct,
    /// A dimensionless number, 3 decimals in text.
    Ratio,
}

/// One column: its heading in text and in CSV, and its kind.
#[derive(Debug, Clone)]
pub struct Col {
    /// Heading in the text table (with the display unit).
    pub text: String,
    /// Heading in CSV (with the stored unit).
    pub csv: String,
    /// Kind of the values.
    pub kind: Kind,
}

/// Shorthand for a [`Col`].
pub fn col(text: impl Into<String>, csv: impl Into<String>, kind: Kind) -> Col {
    Col {
        text: text.into(),
        csv: csv.into(),
        kind,
    }
}

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text.
    Text(String),
    /// A number in the column's stored unit (ns, count, fraction).
    Num(f64),
    /// No value.
    None,
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.to_string())
    }
}
impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}
impl From<u64> for Cell {
    fn from(v: u64) -> Cell {
        Cell::Num(v as f64)
    }
}
impl From<f64> for Cell {
    fn from(v: f64) -> Cell {
        Cell::Num(v)
    }
}
impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Cell {
        v.map_or(Cell::None, Into::into)
    }
}

/// A titled table.
#[derive(Debug, Clone)]
pub struct Table {
    /// Section name (`kernels`, `projection`, ...).
    pub title: String,
    /// Columns.
    pub cols: Vec<Col>,
    /// Rows, each with one cell per column.
    pub rows: Vec<Vec<Cell>>,
    /// A final totals row, separated by a rule in text.
    pub footer: Option<Vec<Cell>>,
}

impl Table {
    /// An empty table.
    pub fn new(title: &str, cols: Vec<Col>) -> Table {
        Table {
            title: title.to_string(),
            cols,
            rows: Vec::new(),
            footer: None,
        }
    }

    fn text_cell(&self, i: usize, c: &Cell) -> String {
        match c {
            Cell::None => "-".into(),
            Cell::Text(s) => s.clone(),
            Cell::Num(v) => match self.cols[i].kind {
                Kind::Text | Kind::Int => format!("{}", v.round() as i64),
                Kind::Us => format!("{:.1}", v / 1e3),
                Kind::Ms => format!("{:.3}", v / 1e6),
                Kind::Pct => format!("{:.1}%", v * 100.0),
                Kind::Ratio => format!("{v:.3}"),
            },
        }
    }

    /// Renders the table as aligned text: a title line, the headings, the rows, and the
    /// footer after a rule. Text columns are left-aligned, numbers right-aligned; columns are
    /// separated by two spaces.
    pub fn to_text(&self) -> String {
        let mut lines: Vec<Vec<String>> = vec![self.cols.iter().map(|c| c.text.clone()).collect()];
        for r in &self.rows {
            lines.push(
                r.iter()
                    .enumerate()
                    .map(|(i, c)| self.text_cell(i, c))
                    .collect(),
            );
        }
        let footer: Option<Vec<String>> = self.footer.as_ref().map(|r| {
            r.iter()
                .enumerate()
                .map(|(i, c)| self.text_cell(i, c))
                .collect()
        });
        let mut w = vec![0usize; self.cols.len()];
        for l in lines.iter().chain(footer.iter()) {
            for (i, s) in l.iter().enumerate() {
                w[i] = w[i].max(s.chars().count());
            }
        }
        let fmt = |l: &[String]| {
            let mut s = String::new();
            for (i, cell) in l.iter().enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = w[i] - cell.chars().count();
                if self.cols[i].kind == Kind::Text {
                    s.push_str(cell);
                    if i + 1 < l.len() {
                        s.push_str(&" ".repeat(pad));
                    }
                } else {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(cell);
                }
            }
            s.trim_end().to_string()
        };
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.title);
        for l in &lines {
            let _ = writeln!(out, "{}", fmt(l));
        }
        if let Some(f) = &footer {
            let total: usize = w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
            let _ = writeln!(out, "{}", "-".repeat(total));
            let _ = writeln!(out, "{}", fmt(f));
        }
        out
    }

    /// Renders the table as CSV (RFC 4180 quoting) with the CSV headings; the footer is a
    /// last row.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let head: Vec<String> = self.cols.iter().map(|c| csv_field(&c.csv)).collect();
        let _ = writeln!(out, "{}", head.join(","));
        for r in self.rows.iter().chain(self.footer.iter()) {
            let cells: Vec<String> = r
                .iter()
                .map(|c| match c {
                    Cell::None => String::new(),
                    Cell::Text(s) => csv_field(s),
                    Cell::Num(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => {
                        format!("{}", *v as i64)
                    }
                    Cell::Num(v) => format!("{v}"),
                })
                .collect();
            let _ = writeln!(out, "{}", cells.join(","));
        }
        out
    }
}

/// Quotes a CSV field when it holds a comma, a quote or a line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders several tables: text tables separated by a blank line; CSV tables each introduced
/// by a `# title` line and separated by a blank line (a single table has no `#` line).
pub fn render_all(tables: &[Table], csv: bool) -> String {
    let mut out = String::new();
    for (i, t) in tables.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if csv {
            if tables.len() > 1 {
                let _ = writeln!(out, "# {}", t.title);
            }
            out.push_str(&t.to_csv());
        } else {
            out.push_str(&t.to_text());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(
            "kernels",
            vec![
                col("kernel", "kernel", Kind::Text),
                col("launches", "launches", Kind::Int),
                col("total ms", "total_ns", Kind::Ms),
                col("mean us", "mean_ns", Kind::Us),
                col("share", "share", Kind::Pct),
            ],
        );
        t.rows.push(vec![
            "a,b".into(),
            3u64.into(),
            3_000_000u64.into(),
            1_000_000.0.into(),
            0.75.into(),
        ]);
        t.rows.push(vec![
            "c".into(),
            1u64.into(),
            1_000_000u64.into(),
            Cell::None,
            0.25.into(),
        ]);
        t.footer = Some(vec![
            "total".into(),
            4u64.into(),
            4_000_000u64.into(),
            Cell::None,
            Cell::None,
        ]);
        t
    }

    #[test]
    fn text_is_aligned_with_units() {
        let s = sample().to_text();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "kernels");
        assert_eq!(lines[1], "kernel  launches  total ms  mean us  share");
        assert_eq!(lines[2], "a,b            3     3.000   1000.0  75.0%");
        assert_eq!(lines[3], "c              1     1.000        -  25.0%");
        assert!(lines[4].chars().all(|c| c == '-'));
        assert_eq!(lines[4].len(), lines[1].len());
        assert!(lines[5].starts_with("total") && lines[5].contains("4.000"));
    }

    #[test]
    fn csv_keeps_stored_units_and_quotes() {
        let s = sample().to_csv();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "kernel,launches,total_ns,mean_ns,share");
        assert_eq!(lines[1], "\"a,b\",3,3000000,1000000,0.75");
        assert_eq!(lines[2], "c,1,1000000,,0.25");
        assert_eq!(lines[3], "total,4,4000000,,");
        assert_eq!(csv_field("x\"y"), "\"x\"\"y\"");
    }

    #[test]
    fn several_csv_tables_are_titled() {
        let s = render_all(&[sample(), sample()], true);
        assert!(s.starts_with("# kernels\nkernel,"));
        assert_eq!(s.matches("# kernels").count(), 2);
        assert!(!render_all(&[sample()], true).contains('#'));
    }
}
