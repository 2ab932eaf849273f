//! Program binaries that balance mode built on its own devices, kept across runs in
//! clprism's cache directory (`CLPRISM_CACHE`, else `$XDG_CACHE_HOME/clprism`, else
//! `~/.cache/clprism`), so a second run of an application builds nothing from source on the
//! balance devices (issue 18, item 1). One file per (source, options, device name, driver
//! version): `binaries/<16 hex digits>.bin`, written to a temporary name and renamed, so a
//! concurrent run never reads half a file. A binary the driver rejects is rebuilt from source.

/// The cache key of `source` built with `options` for a device (its `CL_DEVICE_NAME` and
/// `CL_DRIVER_VERSION`).
pub(super) fn key(source: &str, options: &str, device: &str, driver_version: &str) -> String {
    crate::registry::tables::content_hash(&[
        b"clprism program binary 1",
        source.as_bytes(),
        options.as_bytes(),
        device.as_bytes(),
        driver_version.as_bytes(),
    ])
    .to_string()
}

/// The cached binary of `key`, if any.
pub(super) fn load(key: &str) -> Option<Vec<u8>> {
    crate::cache::read(&crate::exec::cache_dir()?, &format!("binaries/{key}.bin"))
        .filter(|b| !b.is_empty())
}

/// Saves `binary` under `key`, through the cache's atomic write ([`crate::cache::write`]: a
/// temporary name unique per process and call, then a rename): two threads building one program on two like
/// devices at once each write their own temporary file and the last rename wins, with no
/// error (before, both used `.KEY.PID.tmp` and the second failed with "File exists", printed
/// into the app's stderr, issue 31 item 6).
///
/// Errors: no cache directory, or the file system's.
pub(super) fn save(key: &str, binary: &[u8]) -> std::io::Result<()> {
    let dir =
        crate::exec::cache_dir().ok_or_else(|| std::io::Error::other("no cache directory"))?;
    save_in(&dir, key, binary)
}

/// [`save`] under the cache directory `cache`.
fn save_in(cache: &std::path::Path, key: &str, binary: &[u8]) -> std::io::Result<()> {
    crate::cache::write(cache, &format!("binaries/{key}.bin"), binary)
}

#[cfg(test)]
mod tests {
    /// Eight threads saving one key at once (eight like devices building one program): every
    /// save succeeds and the file holds one whole binary.
    #[test]
    fn concurrent_saves_of_one_key_all_succeed() {
        let dir = std::env::temp_dir().join(format!("clprism-bincache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let binary: Vec<u8> = (0..1 << 16).map(|i| (i % 251) as u8).collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| super::save_in(&dir, "k", &binary)))
                .collect();
            for h in handles {
                h.join().expect("no panic").expect("the save succeeds");
            }
        });
        assert_eq!(std::fs::read(dir.join("binaries/k.bin")).unwrap(), binary);
        let leftovers = std::fs::read_dir(dir.join("binaries")).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
