//! How the readers (`clprism report`, `clprism accuracy`) name a kernel in their rows: by
//! its name, and by its program too when the logs read together hold a kernel of that name
//! in more than one program (one source built with different `-D` values, or two sources
//! with a kernel of the same name), so that their launches are never merged into one row.

use std::collections::{BTreeMap, BTreeSet};

/// The row names of the kernels of some logs ([`KernelLabels::label`]).
#[derive(Debug, Clone, Default)]
pub struct KernelLabels {
    /// Per kernel name in more than one program: the hex digits of the program shown.
    digits: BTreeMap<String, usize>,
}

/// Hex digits of the program shown when they tell a name's programs apart.
const SHORT: usize = 8;

impl KernelLabels {
    /// The names of the kernels of these (kernel name, program) pairs.
    pub fn new<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> KernelLabels {
        let mut programs: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (k, p) in pairs {
            programs.entry(k).or_default().insert(p);
        }
        let digits = programs
            .into_iter()
            .filter(|(_, ps)| ps.len() > 1)
            .map(|(k, ps)| {
                let short: BTreeSet<&str> = ps.iter().map(|p| prefix(p, SHORT)).collect();
                let n = if short.len() == ps.len() {
                    SHORT
                } else {
                    usize::MAX
                };
                (k.to_string(), n)
            })
            .collect();
        KernelLabels { digits }
    }

    /// `kernel` when one program holds a kernel of that name, else `kernel#` and the first
    /// 8 hex digits of `program` (all of them when 8 do not tell the programs apart).
    pub fn label(&self, kernel: &str, program: &str) -> String {
        match self.digits.get(kernel) {
            Some(&n) => format!("{kernel}#{}", prefix(program, n)),
            None => kernel.to_string(),
        }
    }
}

fn prefix(p: &str, n: usize) -> &str {
    p.char_indices().nth(n).map_or(p, |(i, _)| &p[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_in_several_programs_is_told_apart_by_program() {
        let l = KernelLabels::new([
            ("k", "0123456789abcdef"),
            ("k", "fedcba9876543210"),
            ("k", "0123456789abcdef"),
            ("only", "0123456789abcdef"),
            ("twin", "aaaaaaaa00000001"),
            ("twin", "aaaaaaaa00000002"),
        ]);
        assert_eq!(l.label("only", "0123456789abcdef"), "only");
        assert_eq!(l.label("k", "0123456789abcdef"), "k#01234567");
        assert_eq!(l.label("k", "fedcba9876543210"), "k#fedcba98");
        // eight digits alike: all of them
        assert_eq!(l.label("twin", "aaaaaaaa00000002"), "twin#aaaaaaaa00000002");
        // no program (hand-written logs) is one program
        let l = KernelLabels::new([("k", ""), ("k", "")]);
        assert_eq!(l.label("k", ""), "k");
    }
}
