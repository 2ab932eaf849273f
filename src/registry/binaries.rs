//! Program binaries mapped back to the source that produced them (issue 18, item 3).
//!
//! Balance mode rebuilds a program from its source on its own devices, and project mode
//! compiles the source to SPIR-V; a program the app creates with `clCreateProgramWithBinary`
//! has neither. Apps that cache binaries (hashcat's kernel cache, pyopencl's compiler cache,
//! apps that save `clGetProgramInfo(CL_PROGRAM_BINARIES)`) build from source once, read the
//! binaries back and load them in later runs. clprism sees that first build: when the app
//! reads the binaries of a program whose source and build options it knows, it saves which
//! source and options produced each binary ([`remember`]), and when a program is later
//! created from binaries it finds them again ([`lookup`]), so the program is recorded as the
//! source program it came from (the app's own program object is untouched).
//!
//! Storage: the cache directory of the SPIR-V and footprint caches
//! ([`crate::emu::frontend::cache_dir`]: `CLPRISM_CACHE`, else `$XDG_CACHE_HOME/clprism`,
//! else `~/.cache/clprism`), one JSON file per binary, named `binary-<first 32 hex digits of
//! the binary's SHA-256>.json` and holding the full SHA-256 and length of the binary (checked
//! on lookup), the source text and the build options. Files are written atomically
//! (temporary file + rename, mode 0600, directory 0700) and never through a symlink. Within
//! a process the mapping is also kept in memory, so a run whose cache directory cannot be
//! written still maps the binaries it read back itself.

use once_cell::sync::Lazy;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Version of the entry format (part of every file; other versions are ignored).
const FORMAT: u64 = 1;

/// The source program that produced a binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceOfBinary {
    /// The program source, as the app passed it to `clCreateProgramWithSource`
    /// (concatenated).
    pub source: Arc<str>,
    /// The options of the app's last `clBuildProgram` / `clCompileProgram` of that program.
    pub options: Arc<str>,
}

/// One cache file.
#[derive(serde::Serialize, serde::Deserialize)]
struct Entry {
    format: u64,
    /// 64 hex digits: SHA-256 of the binary.
    binary_sha256: String,
    /// Length of the binary, bytes.
    binary_len: u64,
    source: String,
    options: String,
}

/// Mappings made or read in this process, by the binary's SHA-256.
static SEEN: Lazy<Mutex<FxHashMap<[u8; 32], SourceOfBinary>>> = Lazy::new(Default::default);

fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).into()
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache file name for a binary with SHA-256 `d`.
fn file_name(d: &[u8; 32]) -> String {
    format!("binary-{}.json", &hex(d)[..32])
}

/// Remembers that `binary` was produced by building `source` with `options`: in this
/// process, and in the cache directory unless an identical entry is already there.
/// Returns `Ok(true)` when a file was written, `Ok(false)` when it was already known.
/// Errors: no cache directory (neither `CLPRISM_CACHE`, `XDG_CACHE_HOME` nor `HOME` set), or
/// the directory cannot be created or written (the in-process mapping is kept regardless).
pub fn remember(binary: &[u8], source: &Arc<str>, options: &Arc<str>) -> std::io::Result<bool> {
    let d = sha256(binary);
    let known = SourceOfBinary {
        source: source.clone(),
        options: options.clone(),
    };
    {
        let mut seen = SEEN.lock();
        if seen.get(&d) == Some(&known) {
            return Ok(false);
        }
        seen.insert(d, known.clone());
    }
    let dir = crate::emu::frontend::cache_dir()
        .ok_or_else(|| std::io::Error::other("no cache directory (CLPRISM_CACHE, HOME)"))?;
    let name = file_name(&d);
    if read_entry(&dir.join(&name), &d, binary.len()).as_ref() == Some(&known) {
        return Ok(false);
    }
    let entry = Entry {
        format: FORMAT,
        binary_sha256: hex(&d),
        binary_len: binary.len() as u64,
        source: source.to_string(),
        options: options.to_string(),
    };
    let bytes = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
    crate::emu::frontend::write_atomic(&dir, &name, &bytes)?;
    Ok(true)
}

/// The source program that produced `binary`, as remembered by [`remember`] in this process
/// or in an earlier run (cache directory). `None` when unknown, or when the cache file is
/// unreadable, a symlink, of another format, or for another binary (a file-name collision).
pub fn lookup(binary: &[u8]) -> Option<SourceOfBinary> {
    let d = sha256(binary);
    if let Some(s) = SEEN.lock().get(&d) {
        return Some(s.clone());
    }
    let dir = crate::emu::frontend::cache_dir()?;
    let found = read_entry(&dir.join(file_name(&d)), &d, binary.len())?;
    SEEN.lock().insert(d, found.clone());
    Some(found)
}

/// Reads and checks one cache file for the binary with SHA-256 `d` and length `len`.
fn read_entry(path: &std::path::Path, d: &[u8; 32], len: usize) -> Option<SourceOfBinary> {
    let bytes = crate::emu::frontend::read_nofollow(path)?;
    let e: Entry = serde_json::from_slice(&bytes).ok()?;
    if e.format != FORMAT || e.binary_sha256 != hex(d) || e.binary_len != len as u64 {
        return None;
    }
    Some(SourceOfBinary {
        source: e.source.into(),
        options: e.options.into(),
    })
}

/// The source program that produced every one of `binaries` (the binaries of one
/// `clCreateProgramWithBinary` call, one per device): `Some` only when each is known and all
/// come from the same source and options (pyopencl makes a fresh source per build, so
/// binaries built in different runs have different sources and are not mapped).
pub fn lookup_all<'a>(binaries: impl IntoIterator<Item = &'a [u8]>) -> Option<SourceOfBinary> {
    let mut found: Option<SourceOfBinary> = None;
    for b in binaries {
        let s = lookup(b)?;
        match &found {
            Some(f) if *f != s => return None,
            Some(_) => {}
            None => found = Some(s),
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_checked_against_the_binary() {
        let dir = std::env::temp_dir().join(format!("clprism-binmap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let d = sha256(b"abc");
        let name = file_name(&d);
        let entry = |sha: String, len: u64| Entry {
            format: FORMAT,
            binary_sha256: sha,
            binary_len: len,
            source: "kernel void k() {}".into(),
            options: "-DX=1".into(),
        };
        let write = |e: &Entry| {
            crate::emu::frontend::write_atomic(&dir, &name, &serde_json::to_vec(e).unwrap())
                .unwrap()
        };
        write(&entry(hex(&d), 3));
        let got = read_entry(&dir.join(&name), &d, 3).expect("entry");
        assert_eq!(&*got.options, "-DX=1");
        // another binary's entry under a colliding name, or a wrong length: not used
        write(&entry(hex(&sha256(b"abd")), 3));
        assert!(read_entry(&dir.join(&name), &d, 3).is_none());
        write(&entry(hex(&d), 4));
        assert!(read_entry(&dir.join(&name), &d, 3).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
