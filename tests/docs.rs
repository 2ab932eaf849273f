//! The documentation against the code: `docs/controls.md` is what the table of
//! `src/config/controls.rs` generates, every `CLPRISM_*` variable the code names is a row of
//! that table, every `clprism` subcommand answers `--help`, and the relative links of the
//! Markdown documents lead to files and headings that exist. No OpenCL needed.
//!
//! Regenerate `docs/controls.md`: `cargo run --bin clprism -- controls --markdown >
//! docs/controls.md`, or `CLPRISM_BLESS=1 cargo test --test docs`.

use std::path::{Path, PathBuf};
use std::process::Command;
use OpenCL::config::{controls, Reader, CONTROLS};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn controls_md_is_generated_from_the_table() {
    let path = root().join("docs/controls.md");
    let want = controls::markdown();
    if std::env::var_os("CLPRISM_BLESS").is_some_and(|v| !v.is_empty()) {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/controls.md differs from the table in src/config/controls.rs; regenerate it with\n  \
         cargo run --bin clprism -- controls --markdown > docs/controls.md\n\
         or CLPRISM_BLESS=1 cargo test --test docs"
    );
}

fn files_under(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, exts, out);
        } else if p
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| exts.contains(&x))
        {
            out.push(p);
        }
    }
}

/// Every `CLPRISM_...` variable name in a text.
fn clprism_names(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = text[i..].find("CLPRISM_") {
        let start = i + k;
        let mut end = start + "CLPRISM_".len();
        while end < b.len()
            && (b[end].is_ascii_uppercase() || b[end].is_ascii_digit() || b[end] == b'_')
        {
            end += 1;
        }
        let name = text[start..end].trim_end_matches('_');
        let word_start =
            start == 0 || !(b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_');
        if word_start && name.len() > "CLPRISM_".len() {
            out.push(name.to_string());
        }
        i = end;
    }
    out
}

#[test]
fn every_clprism_variable_in_the_code_is_a_row() {
    let mut files = Vec::new();
    for d in ["src", "tests", "examples", "scripts", "bench"] {
        files_under(&root().join(d), &["rs", "c", "h", "sh", "py"], &mut files);
    }
    files.push(root().join("build.rs"));
    let mut missing = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for name in clprism_names(&text) {
            // header guards of the example apps
            if name.ends_with("_H") {
                continue;
            }
            if !CONTROLS.iter().any(|c| c.name == name) {
                missing.push(format!("{name} ({})", f.display()));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "variables missing from src/config/controls.rs: {missing:?}"
    );
}

#[test]
fn every_subcommand_answers_help_with_a_usage_line() {
    let exe = env!("CARGO_BIN_EXE_clprism");
    for sub in [
        "run",
        "report",
        "emulate",
        "simulate",
        "characterize",
        "accuracy",
        "trace-check",
        "controls",
    ] {
        for flag in ["--help", "-h"] {
            let out = Command::new(exe).args([sub, flag]).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(0), "clprism {sub} {flag}: {out:?}");
            assert!(
                text.contains(&format!("usage: clprism {sub}")),
                "clprism {sub} {flag} printed no usage line:\n{text}"
            );
        }
    }
    let out = Command::new(exe).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("usage: clprism <command>"));
}

#[test]
fn run_help_has_a_usage_line_per_variable() {
    let out = Command::new(env!("CARGO_BIN_EXE_clprism"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for c in CONTROLS
        .iter()
        .filter(|c| matches!(c.reader, Reader::Library | Reader::Command))
    {
        let line = format!("  {}={}  [default: {}]", c.name, c.values, c.default);
        assert!(
            text.lines().any(|l| l == line),
            "no line '{line}' in:\n{text}"
        );
        assert!(text.contains(c.usage), "{}: usage missing", c.name);
    }
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(md: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for l in md.lines() {
        if l.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if !in_code && l.starts_with('#') {
            out.push(slug(l.trim_start_matches('#')));
        }
    }
    out
}

/// `a/../b` → `b` (no file system access).
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Link targets allowed to be missing (none).
const PENDING: &[&str] = &[];

#[test]
fn relative_links_in_the_docs_resolve() {
    let mut docs = vec![root().join("README.md"), root().join("results/README.md")];
    files_under(&root().join("docs"), &["md"], &mut docs);
    docs.retain(|d| d.exists());
    let mut bad = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        let dir = doc.parent().unwrap();
        let mut rest = text.as_str();
        while let Some(k) = rest.find("](") {
            rest = &rest[k + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target, None),
            };
            let path = if file.is_empty() {
                doc.clone()
            } else {
                dir.join(file)
            };
            let rel = path.canonicalize().ok().and_then(|p| {
                p.strip_prefix(root().canonicalize().unwrap())
                    .ok()
                    .map(PathBuf::from)
            });
            if rel.is_none() {
                let lexical = dir.join(file);
                let Ok(lexical) = lexical.strip_prefix(root()) else {
                    continue;
                };
                if lexical.starts_with("..") || file.starts_with("../../") {
                    continue; // outside the repository (`../shared/DESIGN.md`)
                }
                if !PENDING.iter().any(|p| normal(lexical) == Path::new(p)) {
                    bad.push(format!("{}: {target} (no such file)", doc.display()));
                }
                continue;
            }
            if let Some(a) = anchor {
                if path.extension().is_some_and(|x| x == "md") {
                    let t = std::fs::read_to_string(&path).unwrap_or_default();
                    if !anchors(&t).iter().any(|h| h == a) {
                        bad.push(format!("{}: {target} (no such heading)", doc.display()));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}
