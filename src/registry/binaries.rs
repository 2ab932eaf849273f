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
//! else `~/.cache/clprism`), one JSON file per binary, named `binary-<32 hex digits>.json`
//! after a hash of the binary's bytes. Files are written atomically (temporary file + rename,
//! mode 0600, directory 0700) and never through a symlink.
//!
//! Kernel sources never appear in clprism's files in readable form (tests/hostile.rs): the
//! source and options are sealed with a key derived from the binary itself (SHA-256 with
//! another domain tag than the file name, so the name does not give the key), as a SHA-256
//! counter-mode keystream with a SHA-256 tag. Whoever reads the cache directory without the
//! binary learns only the entry's length; the app's own cache, which holds the binary, is the
//! secret. The tag also rejects an entry of another binary (a file-name collision) and a
//! damaged file.
//!
//! Within a process the mapping is also kept in memory, so a run whose cache directory cannot
//! be written still maps the binaries it read back itself.

use once_cell::sync::Lazy;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};
use std::sync::Arc;

use crate::emu::hash::hex;

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
    /// Length of the binary, bytes.
    binary_len: u64,
    /// Hex: the sealed [`Plain`] JSON.
    sealed: String,
    /// Hex, 32 digits: the tag over the sealed bytes.
    tag: String,
}

/// What is sealed in an [`Entry`].
#[derive(serde::Serialize, serde::Deserialize)]
struct Plain {
    source: String,
    options: String,
}

/// The keys derived from one binary: `name` names its file and indexes the in-process map,
/// `seal` seals its entry.
struct Keys {
    name: [u8; 32],
    seal: [u8; 32],
}

impl Keys {
    fn of(binary: &[u8]) -> Keys {
        let derive = |tag: &[u8]| -> [u8; 32] {
            let mut h = Sha256::new();
            h.update(tag);
            h.update(binary);
            h.finalize().into()
        };
        Keys {
            name: derive(b"clprism-binary-name-v1\0"),
            seal: derive(b"clprism-binary-seal-v1\0"),
        }
    }

    /// The cache file name.
    fn file_name(&self) -> String {
        format!("binary-{}.json", &hex(&self.name)[..32])
    }

    /// XORs `data` with the keystream (block `i` = SHA-256(seal key ‖ i)).
    fn apply_keystream(&self, data: &mut [u8]) {
        for (i, chunk) in data.chunks_mut(32).enumerate() {
            let mut h = Sha256::new();
            h.update(self.seal);
            h.update((i as u64).to_le_bytes());
            let block: [u8; 32] = h.finalize().into();
            for (b, k) in chunk.iter_mut().zip(block) {
                *b ^= k;
            }
        }
    }

    /// 16 bytes of SHA-256(tag label ‖ seal key ‖ sealed bytes).
    fn tag(&self, sealed: &[u8]) -> String {
        let mut h = Sha256::new();
        h.update(b"clprism-binary-tag-v1\0");
        h.update(self.seal);
        h.update(sealed);
        hex(&h.finalize()[..16])
    }

    /// The cache file's bytes for `known`.
    fn seal(&self, binary_len: usize, known: &SourceOfBinary) -> serde_json::Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec(&Plain {
            source: known.source.to_string(),
            options: known.options.to_string(),
        })?;
        self.apply_keystream(&mut bytes);
        serde_json::to_vec(&Entry {
            format: FORMAT,
            binary_len: binary_len as u64,
            tag: self.tag(&bytes),
            sealed: hex(&bytes),
        })
    }

    /// What a cache file's bytes hold for the binary of these keys and length `binary_len`;
    /// `None` when of another format, length or binary, or damaged.
    fn open(&self, binary_len: usize, file: &[u8]) -> Option<SourceOfBinary> {
        let e: Entry = serde_json::from_slice(file).ok()?;
        if e.format != FORMAT || e.binary_len != binary_len as u64 {
            return None;
        }
        let mut bytes = unhex(&e.sealed)?;
        if self.tag(&bytes) != e.tag {
            return None;
        }
        self.apply_keystream(&mut bytes);
        let p: Plain = serde_json::from_slice(&bytes).ok()?;
        Some(SourceOfBinary {
            source: p.source.into(),
            options: p.options.into(),
        })
    }
}

/// Mappings made or read in this process, by the binary's name key.
static SEEN: Lazy<Mutex<FxHashMap<[u8; 32], SourceOfBinary>>> = Lazy::new(Default::default);

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Remembers that `binary` was produced by building `source` with `options`: in this
/// process, and in the cache directory unless the same entry is already there.
/// Returns `Ok(true)` when a file was written, `Ok(false)` when it was already known.
/// Errors: no cache directory (neither `CLPRISM_CACHE`, `XDG_CACHE_HOME` nor `HOME` set), or
/// the directory cannot be created or written (the in-process mapping is kept regardless).
pub fn remember(binary: &[u8], source: &Arc<str>, options: &Arc<str>) -> std::io::Result<bool> {
    let keys = Keys::of(binary);
    let known = SourceOfBinary {
        source: source.clone(),
        options: options.clone(),
    };
    {
        let mut seen = SEEN.lock();
        if seen.get(&keys.name) == Some(&known) {
            return Ok(false);
        }
        seen.insert(keys.name, known.clone());
    }
    let dir = crate::emu::frontend::cache_dir(&crate::emu::FrontendOptions::from_config(
        crate::config::get(),
        |k| std::env::var_os(k),
    ))
    .ok_or_else(|| std::io::Error::other("no cache directory (CLPRISM_CACHE, HOME)"))?;
    let name = keys.file_name();
    let bytes = keys
        .seal(binary.len(), &known)
        .map_err(std::io::Error::other)?;
    // sealing is deterministic: an identical file means the same entry
    if crate::cache::read(&dir, &name).as_deref() == Some(&bytes[..]) {
        return Ok(false);
    }
    crate::cache::write(&dir, &name, &bytes)?;
    Ok(true)
}

/// The source program that produced `binary`, as remembered by [`remember`] in this process
/// or in an earlier run (cache directory). `None` when unknown, or when the cache file is
/// unreadable, a symlink, of another format, damaged, or for another binary.
pub fn lookup(binary: &[u8]) -> Option<SourceOfBinary> {
    let keys = Keys::of(binary);
    if let Some(s) = SEEN.lock().get(&keys.name) {
        return Some(s.clone());
    }
    let dir = crate::emu::frontend::cache_dir(&crate::emu::FrontendOptions::from_config(
        crate::config::get(),
        |k| std::env::var_os(k),
    ))?;
    let file = crate::cache::read(&dir, &keys.file_name())?;
    let found = keys.open(binary.len(), &file)?;
    SEEN.lock().insert(keys.name, found.clone());
    Some(found)
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

    fn known() -> SourceOfBinary {
        SourceOfBinary {
            source: "kernel void k(global int *o) { o[0] = SECRET; }".into(),
            options: "-DSECRET=1".into(),
        }
    }

    #[test]
    fn entries_open_only_with_their_binary() {
        let keys = Keys::of(b"binary one");
        let file = keys.seal(10, &known()).unwrap();
        let text = String::from_utf8_lossy(&file);
        assert!(
            !text.contains("SECRET") && !text.contains("kernel"),
            "{text}"
        );
        assert_eq!(keys.open(10, &file), Some(known()));
        // another binary (a colliding file name), another length, a damaged file: nothing
        assert_eq!(Keys::of(b"binary two").open(10, &file), None);
        assert_eq!(keys.open(11, &file), None);
        let mut e: serde_json::Value = serde_json::from_slice(&file).unwrap();
        let s = e["sealed"].as_str().unwrap().to_string();
        let flipped = if s.starts_with('0') { "1" } else { "0" };
        e["sealed"] = format!("{flipped}{}", &s[1..]).into();
        assert_eq!(keys.open(10, &serde_json::to_vec(&e).unwrap()), None);
    }

    #[test]
    fn the_file_name_does_not_give_the_key() {
        let keys = Keys::of(b"binary one");
        assert_ne!(keys.name, keys.seal);
        assert!(keys.file_name().starts_with("binary-") && keys.file_name().len() == 44);
    }
}
