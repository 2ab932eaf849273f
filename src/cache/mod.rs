//! clprism's cache directory on disk (`CLPRISM_CACHE`, else `$XDG_CACHE_HOME/clprism`, else
//! `$HOME/.cache/clprism`, [`crate::config::cache_dir`]): the one writer and reader of its
//! entries, and the bound on its size (`CLPRISM_CACHE_MAX`).
//!
//! # Entries
//! Every entry is written by [`write`] (a temporary `.NAME.PID.N.tmp` in the same directory,
//! then a rename, so no reader and no trimmer ever sees half a file) and read by [`read`],
//! which refreshes the entry's modification time when it is older than [`TOUCH_AFTER`], so the
//! time is the entry's last use to within ten minutes, for one `futimens` per hit at most. The
//! entries clprism writes ([`Kind`]): `<key>-<toolchain>[.<path>].spv` (the emulator's SPIR-V),
//! `footprint-<hash>.json`, `registers-<hash>.json`, `binary-<hash>.json` (the sources of the
//! binaries an app read back) at the top, and `binaries/<hash>.bin` (programs balance mode
//! built). Nothing else in the directory is counted or removed (`scripts/pocl_remote.sh`
//! keeps its PoCL build there).
//!
//! # The bound
//! [`trim`] removes the least recently used entries (oldest modification time first) until
//! they fill at most 9/10 of the bound ([`plan`]). In the app's process it runs at most once,
//! on a low-priority background thread started by the first [`read`] or [`write`]
//! ([`start_once`]; a directory that does not exist then has nothing to trim): never
//! on the app's threads, stopped by clprism's exit work ([`stop`], `api::exit`) and otherwise
//! left to end with the process (it makes no driver call and holds nothing the exit needs).
//! Several processes may trim and write the same directory at once: one trims at a time (an
//! `flock` on the directory, not waited for); a file gone before its removal is fine; a file
//! whose modification time moved since the scan (used or rewritten meanwhile) is kept; a
//! temporary file is never removed unless it is over an hour old (left by a killed writer).
//! A scan that reads [`STAMP_MIN_ENTRIES`] directory entries (a scan of 62,000 takes some
//! 150 ms of one idle core) writes a stamp file, `.clprism-trim`, and a later automatic trim
//! claims an existing stamp before it scans: such a directory is scanned at most once per
//! [`MIN_INTERVAL`], whatever the number of processes, and smaller ones leave no file behind.
//! A trim cut short by the exit has removed the oldest entries first, and the next process
//! after [`MIN_INTERVAL`] goes on; an app shorter than the scan (at the lowest priority, on
//! busy cores, seconds) does not finish one: `clprism cache trim` does it at once. A scan
//! stops after [`SCAN_LIMIT`] entries.
//!
//! The layout stays flat (no fan-out into subdirectories): the bound keeps the directory to
//! some hundred thousand entries at most, every lookup is by exact name (hashed directories
//! on ext4 and xfs), and old entries stay where every release looks for them.

pub mod cli;

use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// An entry read longer ago than this gets its modification time refreshed by [`read`].
pub const TOUCH_AFTER: Duration = Duration::from_secs(600);
/// A temporary file older than this was left by a writer that died: [`trim`] removes it.
pub const STALE_TEMP: Duration = Duration::from_secs(3600);
/// A directory scanned (by the automatic trim) less than this ago is not scanned again,
/// when it held [`STAMP_MIN_ENTRIES`] entries or more.
pub const MIN_INTERVAL: Duration = Duration::from_secs(300);
/// Below this many entries a scan costs a few milliseconds: no stamp, every process checks.
pub const STAMP_MIN_ENTRIES: usize = 4096;
/// A scan reads at most this many directory entries (the rest is left for `clprism cache`).
pub const SCAN_LIMIT: usize = 1_000_000;
/// The stamp of the last completed automatic trim (its modification time; its text says
/// what was found).
pub const STAMP: &str = ".clprism-trim";

/// What an entry is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `*.spv`: the emulator's SPIR-V of a program source.
    Spirv,
    /// `footprint-*.json`: balance mode's footprint model of a launch shape.
    Footprint,
    /// `registers-*.json`: registers per work-item a build log reported.
    Registers,
    /// `binary-*.json`: the sealed source of a binary the app read back.
    AppBinary,
    /// `binaries/*.bin`: a program binary balance mode built on one of its devices.
    DeviceBinary,
    /// `.NAME.PID.N.tmp`: a write in progress, or left by a writer that died.
    Temporary,
}

impl Kind {
    /// Every kind, in the order `clprism cache stats` lists them.
    pub const ALL: [Kind; 6] = [
        Kind::Spirv,
        Kind::Footprint,
        Kind::Registers,
        Kind::AppBinary,
        Kind::DeviceBinary,
        Kind::Temporary,
    ];

    /// The kind of the file `name` at the top of the cache directory (`sub`: `None`) or in
    /// its subdirectory `sub`; `None`: not clprism's.
    pub fn of(sub: Option<&str>, name: &str) -> Option<Kind> {
        if name.starts_with('.') {
            return (name.ends_with(".tmp") && name != STAMP).then_some(Kind::Temporary);
        }
        match sub {
            Some("binaries") => name.ends_with(".bin").then_some(Kind::DeviceBinary),
            Some(_) => None,
            None if name.ends_with(".spv") => Some(Kind::Spirv),
            None if name.ends_with(".json") => {
                if name.starts_with("footprint-") {
                    Some(Kind::Footprint)
                } else if name.starts_with("registers-") {
                    Some(Kind::Registers)
                } else if name.starts_with("binary-") {
                    Some(Kind::AppBinary)
                } else {
                    None
                }
            }
            None => None,
        }
    }

    /// Its name in `clprism cache stats`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Spirv => "spir-v",
            Kind::Footprint => "footprint",
            Kind::Registers => "registers",
            Kind::AppBinary => "app-binary",
            Kind::DeviceBinary => "device-binary",
            Kind::Temporary => "temporary",
        }
    }
}

/// The subdirectories of the cache directory that hold entries.
const SUBDIRS: [&str; 1] = ["binaries"];

/// One file of the cache directory, as a scan saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its path.
    pub path: PathBuf,
    /// What it is.
    pub kind: Kind,
    /// Bytes it takes on disk (512-byte blocks, as `du` counts).
    pub bytes: u64,
    /// Its modification time: its last write or use ([`read`]).
    pub mtime: SystemTime,
}

/// Creates `d` (0700, with its parents) unless it is a directory already; refuses a symlink
/// or a file there.
fn ensure_dir(d: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::symlink_metadata(d) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(std::io::Error::other(
            "cache path exists and is not a directory (or is a symlink)",
        )),
        Err(_) => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(d),
    }
}

/// Reads the entry `name` (a file name, or `binaries/NAME`) of the cache directory `root`
/// without following a symlink, and refreshes its modification time when it is older than
/// [`TOUCH_AFTER`] (its use, for the bound's least-recently-used order; a failure to do so
/// is ignored). `None` when absent or unreadable. The first read or write of the process
/// starts the bound's check ([`start_once`]).
pub fn read(root: &Path, name: &str) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    start_once(root);
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(root.join(name))
        .ok()?;
    let mut v = Vec::new();
    f.read_to_end(&mut v).ok()?;
    touch_if_older(&f, TOUCH_AFTER);
    Some(v)
}

/// Sets `f`'s modification time to now when it is older than `age`.
fn touch_if_older(f: &std::fs::File, age: Duration) {
    let Ok(m) = f.metadata().and_then(|m| m.modified()) else {
        return;
    };
    if m.elapsed().is_ok_and(|e| e >= age) {
        let times = [
            libc::timespec {
                tv_sec: 0,
                tv_nsec: libc::UTIME_OMIT,
            },
            libc::timespec {
                tv_sec: 0,
                tv_nsec: libc::UTIME_NOW,
            },
        ];
        // SAFETY: an open descriptor and an array of two timespecs, as futimens takes.
        unsafe {
            libc::futimens(f.as_raw_fd(), times.as_ptr());
        }
    }
}

/// Writes the entry `name` (a file name, or `binaries/NAME`) of the cache directory `root`
/// (0600) through a temporary file in the same directory and a rename, creating the
/// directories (0700) when missing; refuses a directory that is a symlink or not a directory.
/// The first read or write of the process starts the bound's check ([`start_once`]).
pub fn write(root: &Path, name: &str, data: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let (dir, file) = match name.rsplit_once('/') {
        Some((sub, file)) => (root.join(sub), file),
        None => (root.to_path_buf(), name),
    };
    start_once(root);
    ensure_dir(&dir)?;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{file}.{}.{n}.tmp", std::process::id()));
    let res = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, dir.join(file))
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// Every entry of the cache directory `root` (its clprism files, see [`Kind::of`]), at most
/// [`SCAN_LIMIT`] directory entries read; `stop(n)` is called after every 1,024 directory
/// entries read (`n` so far) and the scan ends early (with what it has) when it says so.
/// Errors: `root` cannot be read (a missing directory is no entries).
pub fn scan(root: &Path, stop: &dyn Fn(usize) -> bool) -> std::io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    let mut seen = 0usize;
    for sub in std::iter::once(None).chain(SUBDIRS.map(Some)) {
        let dir = match sub {
            Some(s) => root.join(s),
            None => root.to_path_buf(),
        };
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) if sub.is_some() && e.kind() == std::io::ErrorKind::NotADirectory => continue,
            Err(e) => return Err(e),
        };
        for e in rd {
            seen += 1;
            if seen > SCAN_LIMIT || (seen.is_multiple_of(1024) && stop(seen)) {
                return Ok(out);
            }
            let Ok(e) = e else { continue };
            let name = e.file_name();
            let Some(kind) = Kind::of(sub, &name.to_string_lossy()) else {
                continue;
            };
            // DirEntry::metadata does not follow a symlink: a link is no entry
            let Ok(m) = e.metadata() else { continue };
            if !m.file_type().is_file() {
                continue;
            }
            out.push(Entry {
                path: e.path(),
                kind,
                bytes: m.blocks() * 512,
                mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            });
        }
    }
    Ok(out)
}

/// Which of `entries` to remove to bring them under 9/10 of `max` bytes: indices, least
/// recently used first (oldest modification time; ties by path). Temporary files never count
/// and are never chosen here. Empty when `max` is 0 (no bound) or they fit in `max`.
pub fn plan(entries: &[Entry], max: u64) -> Vec<usize> {
    let total: u64 = entries
        .iter()
        .filter(|e| e.kind != Kind::Temporary)
        .map(|e| e.bytes)
        .sum();
    if max == 0 || total <= max {
        return Vec::new();
    }
    let target = max / 10 * 9;
    let mut order: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].kind != Kind::Temporary)
        .collect();
    order.sort_by(|&a, &b| {
        (entries[a].mtime, &entries[a].path).cmp(&(entries[b].mtime, &entries[b].path))
    });
    let mut left = total;
    let mut out = Vec::new();
    for i in order {
        if left <= target {
            break;
        }
        left -= entries[i].bytes;
        out.push(i);
    }
    out
}

/// What [`trim`] found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trimmed {
    /// Entries found (temporary files included).
    pub entries: usize,
    /// Their bytes (temporary files left out).
    pub bytes_before: u64,
    /// Entries removed (stale temporary files included).
    pub removed: usize,
    /// Their bytes.
    pub removed_bytes: u64,
    /// Entries chosen but kept: used or rewritten since the scan.
    pub kept_in_use: usize,
    /// The entries' bytes afterwards (temporary files left out).
    pub bytes_after: u64,
}

/// Brings the cache directory `root` under 9/10 of `max` bytes when it holds more than
/// `max` ([`plan`]; `max` 0: no bound), and removes temporary files older than
/// [`STALE_TEMP`]. Before each removal the file is looked at again: gone already is fine,
/// a modification time newer than the scan's means it was used or rewritten, and it stays.
/// Stops early when `stop(n)` says so (asked during the scan, as [`scan`] does, and before
/// each removal with `n` the entries found). Errors: `root` cannot be read.
pub fn trim(root: &Path, max: u64, stop: &dyn Fn(usize) -> bool) -> std::io::Result<Trimmed> {
    let entries = scan(root, stop)?;
    let mut t = Trimmed {
        entries: entries.len(),
        ..Default::default()
    };
    t.bytes_before = entries
        .iter()
        .filter(|e| e.kind != Kind::Temporary)
        .map(|e| e.bytes)
        .sum();
    let mut left = t.bytes_before;
    let now = SystemTime::now();
    let stale = entries.iter().filter(|e| {
        e.kind == Kind::Temporary
            && now
                .duration_since(e.mtime)
                .is_ok_and(|age| age >= STALE_TEMP)
    });
    for e in stale {
        if remove_unchanged(e) {
            t.removed += 1;
            t.removed_bytes += e.bytes;
        }
    }
    for i in plan(&entries, max) {
        if stop(t.entries) {
            break;
        }
        let e = &entries[i];
        if remove_unchanged(e) {
            t.removed += 1;
            t.removed_bytes += e.bytes;
            left -= e.bytes;
        } else if std::fs::symlink_metadata(&e.path).is_err() {
            // gone meanwhile (another process trimmed it)
            left -= e.bytes;
        } else {
            t.kept_in_use += 1;
        }
    }
    t.bytes_after = left;
    Ok(t)
}

/// Removes `e` unless its modification time moved since the scan; `true` when this call
/// removed it.
fn remove_unchanged(e: &Entry) -> bool {
    match std::fs::symlink_metadata(&e.path) {
        Ok(m) if m.modified().ok() == Some(e.mtime) && m.file_type().is_file() => {
            std::fs::remove_file(&e.path).is_ok()
        }
        _ => false,
    }
}

/// Removes every entry of `root` (temporary files only when stale, as [`trim`] does):
/// (entries removed, their bytes).
pub fn clear(root: &Path) -> std::io::Result<(usize, u64)> {
    let now = SystemTime::now();
    let mut out = (0, 0);
    for e in scan(root, &|_| false)? {
        let fresh_temp = e.kind == Kind::Temporary
            && now.duration_since(e.mtime).map_or(true, |a| a < STALE_TEMP);
        if !fresh_temp && std::fs::remove_file(&e.path).is_ok() {
            out.0 += 1;
            out.1 += e.bytes;
        }
    }
    Ok(out)
}

/// Set by clprism's exit work: the background trim stops before its next removal.
static STOP: AtomicBool = AtomicBool::new(false);
/// Set by the first [`write`] of the process.
static STARTED: AtomicBool = AtomicBool::new(false);

/// Stops the background trim (clprism's exit work, `api::exit`): no removal starts after.
pub fn stop() {
    STOP.store(true, Ordering::Release);
}

/// Starts the bound's check of the cache directory `root` once per process, on a
/// low-priority thread named `clprism-cache` (see the module doc); nothing when
/// `CLPRISM_CACHE_MAX` is 0.
pub fn start_once(root: &Path) {
    if STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    let max = crate::config::get().cache_max;
    if max == 0 {
        return;
    }
    let root = root.to_path_buf();
    let spawned = std::thread::Builder::new()
        .name("clprism-cache".into())
        .spawn(move || {
            let _ = std::panic::catch_unwind(|| background_trim(&root, max));
        });
    if let Err(e) = spawned {
        crate::config::debug(|| format!("cache: cannot start the trim thread: {e}"));
    }
}

/// The automatic trim of `root` to `max`: at the lowest CPU priority, skipped when another
/// process holds the directory's lock or the stamp is younger than [`MIN_INTERVAL`].
fn background_trim(root: &Path, max: u64) {
    // SAFETY: plain syscalls on this thread (Linux: a thread's nice value is its own).
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19);
    }
    let Some(_lock) = DirLock::try_new(root) else {
        return;
    };
    // A stamp exists once a scan read STAMP_MIN_ENTRIES directory entries: it is claimed
    // (written) then, or before the scan when it exists, so a process that ends mid-scan does
    // not leave the next one to scan again before MIN_INTERVAL.
    let stamp = root.join(STAMP);
    let claimed = std::cell::Cell::new(false);
    match std::fs::symlink_metadata(&stamp) {
        Ok(m) if !m.file_type().is_file() => return,
        Ok(m) => {
            let age = m.modified().ok().and_then(|t| t.elapsed().ok());
            if age.is_some_and(|a| a < MIN_INTERVAL) {
                return;
            }
            if write_stamp(root, "scanning\n").is_err() {
                return;
            }
            claimed.set(true);
        }
        Err(_) => {}
    }
    let stop = |seen: usize| {
        if !claimed.get() && seen >= STAMP_MIN_ENTRIES {
            claimed.set(write_stamp(root, "scanning\n").is_ok());
        }
        STOP.load(Ordering::Acquire)
    };
    let t0 = std::time::Instant::now();
    let Ok(t) = trim(root, max, &stop) else {
        return;
    };
    crate::config::debug(|| {
        format!(
            "cache: {} entries, {} bytes (bound {max}): removed {} ({} bytes) in {:.1} ms",
            t.entries,
            t.bytes_before,
            t.removed,
            t.removed_bytes,
            t0.elapsed().as_secs_f64() * 1e3
        )
    });
    if claimed.get() && !STOP.load(Ordering::Acquire) {
        let text = format!(
            "{} entries, {} bytes, bound {max}: removed {} entries, {} bytes\n",
            t.entries, t.bytes_before, t.removed, t.removed_bytes
        );
        let _ = write_stamp(root, &text);
    }
}

/// Writes the stamp (through a rename, as every entry).
fn write_stamp(root: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = root.join(format!(".clprism-trim.{}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)?;
    f.write_all(text.as_bytes())?;
    std::fs::rename(&tmp, root.join(STAMP)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// An exclusive `flock` on the cache directory itself (no file is created), released when
/// dropped (closing the descriptor) or when the process ends.
struct DirLock(#[allow(dead_code)] std::fs::File);

impl DirLock {
    /// The lock, unless another process holds it (not waited for) or `root` cannot be opened.
    fn try_new(root: &Path) -> Option<DirLock> {
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(root)
            .ok()?;
        // SAFETY: an open descriptor.
        let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        (r == 0).then_some(DirLock(f))
    }
}

/// The last automatic trim's stamp: when, and what it found. `None` when there is none.
pub fn last_trim(root: &Path) -> Option<(SystemTime, String)> {
    let p = root.join(STAMP);
    let t = std::fs::symlink_metadata(&p).ok()?.modified().ok()?;
    let text = std::fs::read_to_string(&p).unwrap_or_default();
    Some((t, text.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, bytes: u64, age_s: u64) -> Entry {
        Entry {
            path: PathBuf::from(name),
            kind: Kind::of(None, name).unwrap_or(Kind::Spirv),
            bytes,
            mtime: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 - age_s),
        }
    }

    #[test]
    fn names_are_classified_and_foreign_files_are_not_entries() {
        let top = |n| Kind::of(None, n);
        assert_eq!(top("0123-abcd.O2.spv"), Some(Kind::Spirv));
        assert_eq!(top("0123-abcd.spv"), Some(Kind::Spirv));
        assert_eq!(top("footprint-12.json"), Some(Kind::Footprint));
        assert_eq!(top("registers-12.json"), Some(Kind::Registers));
        assert_eq!(top("binary-12.json"), Some(Kind::AppBinary));
        assert_eq!(top(".footprint-12.json.77.3.tmp"), Some(Kind::Temporary));
        assert_eq!(
            Kind::of(Some("binaries"), "12.bin"),
            Some(Kind::DeviceBinary)
        );
        for foreign in [
            "pocl-remote-6.0-6-p2",
            "pocl-remote-6.0-6-p2.lock",
            "notes.json",
            "binaries",
            STAMP,
            ".clprism-trim",
        ] {
            assert_eq!(top(foreign), None, "{foreign}");
        }
        assert_eq!(Kind::of(Some("binaries"), "x.spv"), None);
        assert_eq!(Kind::of(Some("pocl-remote-6.0-6-p2"), "a.bin"), None);
    }

    /// The least recently used go first, and just enough of them to get under 9/10 of the
    /// bound; nothing goes while the entries fit; temporary files are never planned.
    #[test]
    fn the_plan_removes_the_oldest_until_under_nine_tenths() {
        // 10 entries of 100 bytes, entry i is i seconds old: 1,000 bytes
        let mut es: Vec<Entry> = (0..10)
            .map(|i| entry(&format!("e{i}.spv"), 100, i))
            .collect();
        assert!(plan(&es, 1000).is_empty(), "at the bound: nothing");
        assert!(plan(&es, 0).is_empty(), "0: no bound");
        // bound 700: down to 630 or less, so 4 go (1,000 - 400 = 600), the oldest four
        let p = plan(&es, 700);
        let names: Vec<_> = p.iter().map(|&i| es[i].path.clone()).collect();
        assert_eq!(
            names,
            ["e9.spv", "e8.spv", "e7.spv", "e6.spv"].map(PathBuf::from)
        );
        // a big old temporary file counts for nothing and is not chosen
        es.push(Entry {
            kind: Kind::Temporary,
            ..entry(".x.1.2.tmp", 10_000, 50)
        });
        assert_eq!(plan(&es, 700), p);
        // one big old entry may be enough alone: 1,900 bytes, bound 1,200, 1,000 left
        es.push(entry("big.spv", 900, 100));
        let p = plan(&es, 1200);
        assert_eq!(p.len(), 1);
        assert_eq!(es[p[0]].path, PathBuf::from("big.spv"));
        // ties in time go by name
        let tie: Vec<Entry> = ["b.spv", "a.spv", "c.spv"]
            .iter()
            .map(|n| entry(n, 100, 5))
            .collect();
        let p = plan(&tie, 200);
        assert_eq!(
            p.iter().map(|&i| tie[i].path.clone()).collect::<Vec<_>>(),
            ["a.spv", "b.spv"].map(PathBuf::from)
        );
    }

    fn set_age(p: &Path, age_s: u64) {
        let t = SystemTime::now() - Duration::from_secs(age_s);
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("clprism-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// On disk: the oldest entries go, the newest stay, the directory ends under 9/10 of
    /// the bound; foreign files, a fresh temporary file and an entry used since the scan
    /// stay; a stale temporary file goes.
    #[test]
    fn trim_on_disk_keeps_the_newest_and_foreign_files() {
        let d = scratch("trim");
        let data = vec![7u8; 8192];
        for i in 0..20 {
            let name = format!("footprint-{i:02}.json");
            std::fs::write(d.join(&name), &data).unwrap();
            set_age(&d.join(&name), 1000 + 100 * i); // footprint-19 is the oldest
        }
        std::fs::create_dir_all(d.join("binaries")).unwrap();
        std::fs::write(d.join("binaries/k.bin"), &data).unwrap();
        set_age(&d.join("binaries/k.bin"), 10); // the newest of all
        std::fs::create_dir_all(d.join("pocl-remote-x/lib")).unwrap();
        std::fs::write(d.join("pocl-remote-x/lib/libpocl.so"), &data).unwrap();
        std::fs::write(d.join("notes.txt"), &data).unwrap();
        set_age(&d.join("notes.txt"), 1_000_000);
        std::fs::write(d.join(".a.json.1.1.tmp"), &data).unwrap(); // being written
        std::fs::write(d.join(".b.json.1.2.tmp"), &data).unwrap();
        set_age(&d.join(".b.json.1.2.tmp"), 2 * 3600); // left by a dead writer
        let all = scan(&d, &|_| false).unwrap();
        assert_eq!(all.len(), 23, "20 footprints, 1 binary, 2 temporary files");
        let per = all[0].bytes;
        assert!(per >= 8192, "{per}");
        let before: u64 = 21 * per;
        let max = before / 2;
        let t = trim(&d, max, &|_| false).unwrap();
        assert_eq!(t.bytes_before, before);
        assert!(t.bytes_after <= max / 10 * 9, "{t:?}");
        let left = scan(&d, &|_| false).unwrap();
        let left_bytes: u64 = left
            .iter()
            .filter(|e| e.kind != Kind::Temporary)
            .map(|e| e.bytes)
            .sum();
        assert_eq!(left_bytes, t.bytes_after);
        // the survivors are exactly the newest
        let kept: Vec<String> = left
            .iter()
            .filter(|e| e.kind == Kind::Footprint)
            .map(|e| e.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        let n = kept.len();
        assert!(n > 0 && n < 20);
        for i in 0..20 {
            let name = format!("footprint-{i:02}.json");
            assert_eq!(kept.contains(&name), i < n, "{name} (kept {kept:?})");
        }
        assert!(d.join("binaries/k.bin").exists(), "the newest stays");
        assert!(d.join("pocl-remote-x/lib/libpocl.so").exists());
        assert!(d.join("notes.txt").exists(), "not clprism's: never removed");
        assert!(
            d.join(".a.json.1.1.tmp").exists(),
            "a write in progress stays"
        );
        assert!(
            !d.join(".b.json.1.2.tmp").exists(),
            "a stale temporary goes"
        );
        // under the bound now: a second trim removes nothing
        let again = trim(&d, max, &|_| false).unwrap();
        assert_eq!(again.removed, 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    /// An entry whose time moved after the scan (read, rewritten) is not removed, nor is a
    /// file already gone counted as removed.
    #[test]
    fn a_used_or_vanished_entry_is_not_removed() {
        let d = scratch("race");
        for n in ["old.spv", "gone.spv"] {
            std::fs::write(d.join(n), [1u8; 100]).unwrap();
            set_age(&d.join(n), 5000);
        }
        let es = scan(&d, &|_| false).unwrap();
        // another process reads one and removes the other between the scan and the removal
        let f = std::fs::File::open(d.join("old.spv")).unwrap();
        touch_if_older(&f, TOUCH_AFTER);
        std::fs::remove_file(d.join("gone.spv")).unwrap();
        for e in &es {
            assert!(!remove_unchanged(e), "{:?}", e.path);
        }
        assert!(d.join("old.spv").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A read refreshes an old entry's time and leaves a recent one's alone; a write leaves
    /// no temporary file, creates `binaries/`, and refuses a symlinked directory.
    #[test]
    fn read_touches_old_entries_and_write_is_atomic() {
        let d = scratch("rw");
        write(&d, "binaries/x.bin", b"abc").unwrap();
        write(&d, "a.spv", b"abcd").unwrap();
        let names = |p: &Path| {
            let mut v: Vec<String> = std::fs::read_dir(p)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != STAMP)
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(&d), ["a.spv", "binaries"]);
        assert_eq!(names(&d.join("binaries")), ["x.bin"]);
        let old = SystemTime::now() - Duration::from_secs(3600);
        let p = d.join("a.spv");
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert_eq!(read(&d, "a.spv").as_deref(), Some(&b"abcd"[..]));
        let t = std::fs::metadata(&p).unwrap().modified().unwrap();
        assert!(t.elapsed().unwrap() < Duration::from_secs(60), "touched");
        let recent = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(recent)
            .unwrap();
        read(&d, "a.spv").unwrap();
        let t = std::fs::metadata(&p).unwrap().modified().unwrap();
        assert_eq!(t, recent, "a recent entry is not touched again");
        std::os::unix::fs::symlink(&d, d.join("link")).unwrap();
        assert!(write(&d.join("link"), "b.spv", b"x").is_err());
        assert!(
            read(&d, "link/a.spv").is_some(),
            "only the final link is refused"
        );
        std::os::unix::fs::symlink(&p, d.join("l.spv")).unwrap();
        assert_eq!(read(&d, "l.spv"), None, "a symlinked entry is not followed");
        let _ = std::fs::remove_dir_all(&d);
    }

    /// The automatic trim of a directory of 4,096 entries or more leaves a stamp saying what
    /// it did, and does not scan again within MIN_INTERVAL; a small one leaves no file.
    #[test]
    fn the_automatic_trim_stamps_big_directories_only() {
        let d = scratch("stamp");
        for i in 0..STAMP_MIN_ENTRIES + 4 {
            let p = d.join(format!("footprint-{i:05}.json"));
            std::fs::write(&p, b"{}").unwrap();
            set_age(&p, 100 + i as u64);
        }
        let total: u64 = scan(&d, &|_| false).unwrap().iter().map(|e| e.bytes).sum();
        background_trim(&d, total / 2);
        let (t, text) = last_trim(&d).expect("a stamp");
        assert!(t.elapsed().unwrap() < MIN_INTERVAL);
        assert!(
            text.starts_with(&format!("{} entries", STAMP_MIN_ENTRIES + 4)),
            "{text}"
        );
        let left = scan(&d, &|_| false).unwrap();
        let bytes: u64 = left.iter().map(|e| e.bytes).sum();
        assert!(bytes <= total / 2 / 10 * 9);
        assert!(d.join("footprint-00000.json").exists(), "the newest stays");
        // within MIN_INTERVAL: not scanned again, whatever the bound
        background_trim(&d, 1);
        assert_eq!(scan(&d, &|_| false).unwrap().len(), left.len());
        // a small directory: trimmed, no stamp
        let small = scratch("nostamp");
        for i in 0..10 {
            std::fs::write(small.join(format!("{i}.spv")), [0u8; 5000]).unwrap();
        }
        background_trim(&small, 1);
        assert!(scan(&small, &|_| false).unwrap().is_empty());
        assert!(last_trim(&small).is_none());
        assert_eq!(std::fs::read_dir(&small).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_dir_all(&small);
    }

    #[test]
    fn clear_removes_entries_only() {
        let d = scratch("clear");
        write(&d, "binaries/x.bin", &[1; 5000]).unwrap();
        write(&d, "footprint-1.json", b"{}").unwrap();
        std::fs::write(d.join("keep.txt"), b"mine").unwrap();
        let (n, bytes) = clear(&d).unwrap();
        assert_eq!(n, 2);
        assert!(bytes >= 5000);
        assert!(d.join("keep.txt").exists());
        assert!(scan(&d, &|_| false).unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&d);
    }
}
