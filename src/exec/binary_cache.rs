//! Program binaries that balance mode built on its own devices, kept across runs in
//! clprism's cache directory (`CLPRISM_CACHE`, else `$XDG_CACHE_HOME/clprism`, else
//! `~/.cache/clprism`), so a second run of an application builds nothing from source on the
//! balance devices (issue 18, item 1). One file per (source, options, device name, driver
//! version): `binaries/<16 hex digits>.bin`, written to a temporary name and renamed, so a
//! concurrent run never reads half a file. A binary the driver rejects is rebuilt from source.

use std::path::PathBuf;

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

fn path(key: &str) -> Option<PathBuf> {
    Some(
        crate::exec::cache_dir()?
            .join("binaries")
            .join(format!("{key}.bin")),
    )
}

/// The cached binary of `key`, if any.
pub(super) fn load(key: &str) -> Option<Vec<u8>> {
    std::fs::read(path(key)?).ok().filter(|b| !b.is_empty())
}

/// Saves `binary` under `key`.
///
/// Errors: no cache directory, or the file system's.
pub(super) fn save(key: &str, binary: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let p = path(key).ok_or_else(|| std::io::Error::other("no cache directory"))?;
    let dir = p.parent().expect("a file in a directory");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let tmp = dir.join(format!(".{key}.{}.tmp", std::process::id()));
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        // private to the user, like every file clprism writes (tests/hostile.rs)
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(binary)?;
    }
    std::fs::rename(&tmp, &p)
}
