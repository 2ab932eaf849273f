//! Reading the dynamic linker's cache (`/etc/ld.so.cache`, glibc's "glibc-ld.so.cache1.1"
//! format) so that clprism picks the real OpenCL library the dynamic linker would have bound
//! the application to: `LD_LIBRARY_PATH` first, then this cache, then the default
//! directories (ld.so(8), "Rpath token expansion" and search order).
//!
//! Two ICD loaders on one host (e.g. Debian's ocl-icd and the Khronos loader of a CUDA
//! install) may order the platforms differently, so forwarding to the wrong one changes
//! what `clGetPlatformIDs` returns to the application.
//!
//! Layout (glibc `sysdeps/generic/dl-cache.h`, little-endian on the hosts we support): a
//! 48-byte header (`magic[17] version[3] nlibs:u32 len_strings:u32 flags:u8 pad[3]
//! extension_offset:u32 unused[3]:u32`) followed by `nlibs` 24-byte entries
//! (`flags:i32 key:u32 value:u32 osversion:u32 hwcap:u64`); `key` (soname) and `value`
//! (path) are byte offsets of NUL-terminated strings from the start of the file. Entries are
//! in the linker's order of preference.

use std::path::{Path, PathBuf};

/// The linker cache's path.
pub const LD_SO_CACHE: &str = "/etc/ld.so.cache";

const MAGIC: &[u8] = b"glibc-ld.so.cache1.1";
const HEADER_BYTES: usize = 48;
const ENTRY_BYTES: usize = 24;
/// `FLAG_ELF_LIBC6`: a glibc ELF library.
const FLAG_ELF_LIBC6: i32 = 0x0003;
/// Architecture bits of the entries this build can load (`FLAG_X8664_LIB64`,
/// `FLAG_AARCH64_LIB64`); 0 where unknown (then any libc6 entry is taken).
#[cfg(target_arch = "x86_64")]
const ARCH_FLAG: i32 = 0x0300;
#[cfg(target_arch = "aarch64")]
const ARCH_FLAG: i32 = 0x0a00;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH_FLAG: i32 = 0;

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

fn c_str_at(b: &[u8], off: usize) -> Option<&[u8]> {
    let rest = b.get(off..)?;
    let end = rest.iter().position(|&c| c == 0)?;
    Some(&rest[..end])
}

/// Paths the cache `bytes` lists for `soname`, in the linker's order of preference, limited
/// to entries this build's architecture can load. Empty when the format is not the new
/// glibc one or the data is truncated (never panics on malformed input).
pub fn lookup_in(bytes: &[u8], soname: &str) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    if !bytes.starts_with(MAGIC) {
        return out;
    }
    let Some(nlibs) = u32_at(bytes, 20) else {
        return out;
    };
    for i in 0..nlibs as usize {
        let e = HEADER_BYTES + i * ENTRY_BYTES;
        let (Some(flags), Some(key), Some(value)) =
            (u32_at(bytes, e), u32_at(bytes, e + 4), u32_at(bytes, e + 8))
        else {
            break;
        };
        let flags = flags as i32;
        if flags & 0xff != FLAG_ELF_LIBC6 || (ARCH_FLAG != 0 && flags & 0xff00 != ARCH_FLAG) {
            continue;
        }
        if c_str_at(bytes, key as usize) != Some(soname.as_bytes()) {
            continue;
        }
        if let Some(p) = c_str_at(bytes, value as usize) {
            out.push(PathBuf::from(std::ffi::OsStr::from_bytes(p)));
        }
    }
    out
}

/// Paths `/etc/ld.so.cache` lists for `soname` (empty when it is missing or unreadable).
pub fn lookup(soname: &str) -> Vec<PathBuf> {
    lookup_file(Path::new(LD_SO_CACHE), soname)
}

/// Paths the cache file `path` lists for `soname`.
pub fn lookup_file(path: &Path, soname: &str) -> Vec<PathBuf> {
    std::fs::read(path)
        .map(|b| lookup_in(&b, soname))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a cache image with the given (flags, soname, path) entries.
    fn image(entries: &[(i32, &str, &str)]) -> Vec<u8> {
        let mut strings = Vec::new();
        let base = HEADER_BYTES + entries.len() * ENTRY_BYTES;
        let mut offs = Vec::new();
        for (_, k, v) in entries {
            let ko = base + strings.len();
            strings.extend_from_slice(k.as_bytes());
            strings.push(0);
            let vo = base + strings.len();
            strings.extend_from_slice(v.as_bytes());
            strings.push(0);
            offs.push((ko as u32, vo as u32));
        }
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        b.extend_from_slice(&(strings.len() as u32).to_le_bytes());
        b.extend_from_slice(&[2, 0, 0, 0]);
        b.extend_from_slice(&[0u8; 16]);
        assert_eq!(b.len(), HEADER_BYTES);
        for ((f, _, _), (k, v)) in entries.iter().zip(offs) {
            b.extend_from_slice(&f.to_le_bytes());
            b.extend_from_slice(&k.to_le_bytes());
            b.extend_from_slice(&v.to_le_bytes());
            b.extend_from_slice(&[0u8; 12]);
        }
        b.extend_from_slice(&strings);
        b
    }

    #[test]
    fn finds_entries_in_cache_order_for_this_arch() {
        let native = FLAG_ELF_LIBC6 | ARCH_FLAG;
        let other_arch = FLAG_ELF_LIBC6 | 0x0800;
        let img = image(&[
            (native, "libm.so.6", "/lib/libm.so.6"),
            (
                native,
                "libOpenCL.so.1",
                "/usr/local/cuda/lib64/libOpenCL.so.1",
            ),
            (other_arch, "libOpenCL.so.1", "/usr/lib32/libOpenCL.so.1"),
            (
                native,
                "libOpenCL.so.1",
                "/lib/x86_64-linux-gnu/libOpenCL.so.1",
            ),
        ]);
        let got = lookup_in(&img, "libOpenCL.so.1");
        let mut want = vec![PathBuf::from("/usr/local/cuda/lib64/libOpenCL.so.1")];
        if ARCH_FLAG == 0 {
            want.push(PathBuf::from("/usr/lib32/libOpenCL.so.1"));
        }
        want.push(PathBuf::from("/lib/x86_64-linux-gnu/libOpenCL.so.1"));
        assert_eq!(got, want);
        assert!(lookup_in(&img, "libOpenCL.so").is_empty());
    }

    #[test]
    fn malformed_caches_give_nothing() {
        let img = image(&[(
            FLAG_ELF_LIBC6 | ARCH_FLAG,
            "libOpenCL.so.1",
            "/x/libOpenCL.so.1",
        )]);
        for cut in [0, 10, 30, HEADER_BYTES + 5, img.len() - 3] {
            // truncated: no panic, and never a path that was cut
            let got = lookup_in(&img[..cut], "libOpenCL.so.1");
            assert!(got.is_empty(), "cut {cut}: {got:?}");
        }
        assert!(lookup_in(b"ld.so-1.7.0\0\0\0", "libOpenCL.so.1").is_empty());
        let mut huge = img.clone();
        huge[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(lookup_in(&huge, "libOpenCL.so.1").len(), 1);
    }

    /// Agrees with `ldconfig -p` on this machine, where both exist.
    #[test]
    fn agrees_with_ldconfig() {
        let Ok(out) = std::process::Command::new("ldconfig").arg("-p").output() else {
            return;
        };
        if !Path::new(LD_SO_CACHE).exists() {
            return;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let arch = if cfg!(target_arch = "x86_64") {
            "x86-64"
        } else {
            "aarch64"
        };
        let from_ldconfig: Vec<PathBuf> = text
            .lines()
            .filter_map(|l| {
                let l = l.trim();
                let (lhs, path) = l.split_once(" => ")?;
                (lhs.starts_with("libOpenCL.so.1 ") && lhs.contains(arch))
                    .then(|| PathBuf::from(path))
            })
            .collect();
        assert_eq!(lookup("libOpenCL.so.1"), from_ldconfig);
    }
}
