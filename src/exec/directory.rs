//! The buffer directory of balance mode (DESIGN.md §7, "Coherence"): per application
//! buffer, per byte range, which copies hold valid bytes. The copies are the application's
//! own buffer ([`APP`]) and clprism's replicas on the balance devices (one holder bit per
//! replica slot, [`holder_of_slot`]). A split launch leaves what each device wrote on that
//! device only; a later chunk fetches the ranges it reads that are stale on its device
//! (halos included); the application's buffer is brought up to date only when something of
//! the application needs it (a read, map, copy or fill, a launch kept whole, its release).
//!
//! Pure bookkeeping (no OpenCL): the transfers are `exec::launch::resident`'s. A buffer
//! without an entry has no device-only bytes: its replicas are then tracked by epochs
//! (`exec::invalidate`), as before the directory.

use crate::registry::tables::Key;
use rustc_hash::FxHashMap;

/// A set of holders, one bit each ([`APP`], [`holder_of_slot`]).
pub type Holders = u64;

/// The application's own buffer.
pub const APP: Holders = 1 << 63;

/// Replica slots of the balance devices have bits 0..=30; those of the app's own device in
/// the app's context (slot `usize::MAX - d`) bits 32..=62.
const DEVICE_BITS: usize = 31;

/// The holder bit of replica slot `slot` (`exec::launch::plan::Plan::slot`): device `d`'s
/// replica in clprism's context is slot `d`, the app device's replica in the app's context
/// `usize::MAX - d`. `None` for a device index past 30 (such a buffer is never kept
/// resident).
pub fn holder_of_slot(slot: usize) -> Option<Holders> {
    if slot < DEVICE_BITS {
        Some(1 << slot)
    } else if usize::MAX - slot < DEVICE_BITS {
        Some(1 << (32 + (usize::MAX - slot)))
    } else {
        None
    }
}

/// The replica slot of a single holder bit other than [`APP`] (inverse of
/// [`holder_of_slot`]).
pub fn slot_of_holder(bit: Holders) -> Option<usize> {
    if bit == 0 || bit & (bit - 1) != 0 || bit == APP {
        return None;
    }
    let i = bit.trailing_zeros() as usize;
    if i < DEVICE_BITS {
        Some(i)
    } else if (32..32 + DEVICE_BITS).contains(&i) {
        Some(usize::MAX - (i - 32))
    } else {
        None
    }
}

/// A byte range `[start, end)` and the holders valid there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// Copies holding valid bytes of the range.
    pub holders: Holders,
}

/// One buffer's entry: sorted, disjoint segments tiling `[0, size)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Residency {
    /// The buffer's size, bytes.
    pub size: u64,
    /// The app's context and device (handles as integers): where [`APP`] lives and the
    /// queue a gather uses.
    pub app_context: usize,
    /// See `app_context`.
    pub app_device: usize,
    segments: Vec<Segment>,
}

impl Residency {
    /// A buffer of `size` bytes whose every byte is valid in `holders`.
    pub fn new(size: u64, holders: Holders, app_context: usize, app_device: usize) -> Self {
        Residency {
            size,
            app_context,
            app_device,
            segments: vec![Segment {
                start: 0,
                end: size,
                holders,
            }],
        }
    }

    /// The segments, in order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Splits segments so that `at` is a boundary (no-op at 0, `size` or an existing one).
    fn cut(&mut self, at: u64) {
        if at == 0 || at >= self.size {
            return;
        }
        let i = self.segments.partition_point(|s| s.end <= at);
        if let Some(s) = self.segments.get(i).copied() {
            if s.start < at && at < s.end {
                self.segments[i].end = at;
                self.segments.insert(
                    i + 1,
                    Segment {
                        start: at,
                        end: s.end,
                        holders: s.holders,
                    },
                );
            }
        }
    }

    /// Applies `f` to the holders of every byte of `[r0, r1)` (clipped to the buffer), then
    /// merges neighbours with equal holders.
    fn update(&mut self, [r0, r1]: [u64; 2], f: impl Fn(Holders) -> Holders) {
        let (r0, r1) = (r0.min(self.size), r1.min(self.size));
        if r0 >= r1 {
            return;
        }
        self.cut(r0);
        self.cut(r1);
        for s in &mut self.segments {
            if s.start >= r0 && s.end <= r1 {
                s.holders = f(s.holders);
            }
        }
        self.segments.dedup_by(|b, a| {
            if a.holders == b.holders && a.end == b.start {
                a.end = b.end;
                true
            } else {
                false
            }
        });
    }

    /// After a write by `writer` to `range`: only `writer` holds it.
    pub fn set_only(&mut self, range: [u64; 2], writer: Holders) {
        self.update(range, |_| writer);
    }

    /// After a copy of `range` to `holder`: it holds it too.
    pub fn add(&mut self, range: [u64; 2], holder: Holders) {
        self.update(range, |h| h | holder);
    }

    /// The parts of `range` that `holder` lacks, each with the holders that have it
    /// (clipped to the buffer; in order).
    pub fn missing(&self, holder: Holders, [r0, r1]: [u64; 2]) -> Vec<([u64; 2], Holders)> {
        let mut out: Vec<([u64; 2], Holders)> = Vec::new();
        for s in &self.segments {
            let (a, b) = (s.start.max(r0), s.end.min(r1));
            if a >= b || s.holders & holder != 0 {
                continue;
            }
            match out.last_mut() {
                Some((r, h)) if r[1] == a && *h == s.holders => r[1] = b,
                _ => out.push(([a, b], s.holders)),
            }
        }
        out
    }

    /// `holder` holds nothing any more (its device died). Ranges it alone held get the
    /// app's buffer as their holder (the best copy left: its bytes from before the writes
    /// that only `holder` kept); returns those ranges' bytes, which are lost.
    pub fn drop_holder(&mut self, holder: Holders) -> u64 {
        let mut lost = 0;
        for s in &mut self.segments {
            if s.holders & holder == 0 {
                continue;
            }
            s.holders &= !holder;
            if s.holders == 0 {
                lost += s.end - s.start;
                s.holders = APP;
            }
        }
        self.update([0, self.size], |h| h);
        lost
    }

    /// Whether `holder` holds every byte.
    pub fn holds_all(&self, holder: Holders) -> bool {
        self.segments.iter().all(|s| s.holders & holder != 0)
    }

    /// Bytes that only devices hold (the app's buffer is stale there).
    pub fn device_only_bytes(&self) -> u64 {
        self.segments
            .iter()
            .filter(|s| s.holders & APP == 0)
            .map(|s| s.end - s.start)
            .sum()
    }
}

/// Every buffer's entry; owned by the balance worker's state (one owner, no statics).
#[derive(Debug, Default)]
pub struct Directory {
    entries: FxHashMap<Key, Residency>,
}

impl Directory {
    /// Buffer `m`'s entry.
    pub fn get(&self, m: Key) -> Option<&Residency> {
        self.entries.get(&m)
    }

    /// Buffer `m`'s entry, mutable.
    pub fn get_mut(&mut self, m: Key) -> Option<&mut Residency> {
        self.entries.get_mut(&m)
    }

    /// Buffer `m`'s entry, created by `make` when missing.
    pub fn entry(&mut self, m: Key, make: impl FnOnce() -> Residency) -> &mut Residency {
        self.entries.entry(m).or_insert_with(make)
    }

    /// Removes buffer `m`'s entry (after a gather, or at its release).
    pub fn remove(&mut self, m: Key) -> Option<Residency> {
        self.entries.remove(&m)
    }

    /// Whether buffer `m` has bytes that only devices hold.
    pub fn has_device_only(&self, m: Key) -> bool {
        self.entries
            .get(&m)
            .is_some_and(|r| r.device_only_bytes() > 0)
    }

    /// [`Residency::drop_holder`] on every entry: the buffers with bytes that only
    /// `holder` held, and how many (lost).
    pub fn drop_holder(&mut self, holder: Holders) -> Vec<(Key, u64)> {
        self.entries
            .iter_mut()
            .map(|(m, r)| (*m, r.drop_holder(holder)))
            .filter(|x| x.1 > 0)
            .collect()
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no buffer has an entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// What the directory moved in one process (counted by the balance worker, read at exit).
#[derive(Debug, Default)]
pub struct Traffic {
    /// Split launches whose results stayed on the devices.
    pub resident_launches: std::sync::atomic::AtomicU64,
    /// Bytes copied onto devices before their chunks ran.
    pub fetched_bytes: std::sync::atomic::AtomicU64,
    /// Gathers that copied bytes into an app buffer.
    pub gathers: std::sync::atomic::AtomicU64,
    /// Bytes those gathers copied.
    pub gathered_bytes: std::sync::atomic::AtomicU64,
    /// Bytes of the fetches and gathers that went through page-locked staging (the upload
    /// ring's slots) rather than heap memory.
    pub relayed_bytes: std::sync::atomic::AtomicU64,
    /// Bytes that only remote devices held after a launch, copied into the app's buffer
    /// before the launch returned (a server may die between launches).
    pub secured_bytes: std::sync::atomic::AtomicU64,
    /// Set once [`Self::summary`] gave its line (the exit path may run more than once).
    reported: std::sync::atomic::AtomicBool,
}

impl Traffic {
    /// Adds one launch's figures (`resident`: its results stayed on the devices).
    pub fn launch(&self, resident: bool, fetched: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        self.resident_launches.fetch_add(resident as u64, Relaxed);
        self.fetched_bytes.fetch_add(fetched, Relaxed);
    }

    /// Adds one gather of `bytes` (none counted for 0).
    pub fn gather(&self, bytes: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        if bytes > 0 {
            self.gathers.fetch_add(1, Relaxed);
            self.gathered_bytes.fetch_add(bytes, Relaxed);
        }
    }

    /// Adds `bytes` moved through page-locked staging.
    pub fn relayed(&self, bytes: u64) {
        self.relayed_bytes
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// Adds `bytes` that only remote devices held, copied into the app's buffer.
    pub fn secured(&self, bytes: u64) {
        self.secured_bytes
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// `buffer directory: L split launches left their results on the devices; F bytes
    /// fetched between devices; G gathers copied B bytes into the app's buffers; R bytes of
    /// them through page-locked staging`, or `None` when nothing was counted or the line was
    /// given before.
    pub fn summary(&self) -> Option<String> {
        use std::sync::atomic::Ordering::Relaxed;
        if self.reported.swap(true, Relaxed) {
            return None;
        }
        let (l, f) = (
            self.resident_launches.load(Relaxed),
            self.fetched_bytes.load(Relaxed),
        );
        let (g, b) = (
            self.gathers.load(Relaxed),
            self.gathered_bytes.load(Relaxed),
        );
        let r = self.relayed_bytes.load(Relaxed);
        let secured = match self.secured_bytes.load(Relaxed) {
            0 => String::new(),
            s => format!(
                "; {s} bytes that only remote devices held were copied into the app's buffers \
                 as they were written"
            ),
        };
        (l + f + g > 0).then(|| {
            format!(
                "buffer directory: {l} split launches left their results on the devices; \
                 {f} bytes fetched between devices; {g} gathers copied {b} bytes into the app's \
                 buffers; {r} bytes of them through page-locked staging{secured}"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D0: Holders = 1;
    const D1: Holders = 2;

    #[test]
    fn slots_map_to_bits_and_back() {
        for slot in [0usize, 5, 30, usize::MAX, usize::MAX - 3, usize::MAX - 30] {
            let b = holder_of_slot(slot).unwrap();
            assert_eq!(slot_of_holder(b), Some(slot));
            assert_ne!(b, APP);
        }
        assert_eq!(holder_of_slot(31), None);
        assert_eq!(slot_of_holder(APP), None);
        assert_eq!(slot_of_holder(D0 | D1), None);
    }

    #[test]
    fn a_dead_holder_is_dropped_and_what_it_alone_held_is_counted_lost() {
        let mut r = Residency::new(1000, APP | D0 | D1, 0, 0);
        r.set_only([0, 400], D0);
        r.set_only([400, 1000], D1);
        r.add([300, 400], D1);
        assert_eq!(r.drop_holder(D0), 300);
        assert!(r.segments().iter().all(|s| s.holders & D0 == 0));
        assert_eq!(r.missing(APP, [0, 1000]), vec![([300, 1000], D1)]);
        assert_eq!(r.drop_holder(D0), 0);
    }

    #[test]
    fn writes_leave_bytes_on_their_device_and_reads_find_them() {
        let mut r = Residency::new(1000, APP | D0 | D1, 0, 0);
        r.set_only([0, 400], D0);
        r.set_only([400, 1000], D1);
        assert_eq!(r.device_only_bytes(), 1000);
        // device 0 reads a halo of 10 bytes past its range
        assert_eq!(r.missing(D0, [0, 410]), vec![([400, 410], D1)]);
        r.add([400, 410], D0);
        assert_eq!(r.missing(D0, [0, 410]), vec![]);
        // the app needs everything
        assert_eq!(
            r.missing(APP, [0, 1000]),
            vec![([0, 400], D0), ([400, 410], D0 | D1), ([410, 1000], D1)]
        );
        r.add([0, 1000], APP);
        assert_eq!(r.device_only_bytes(), 0);
        assert!(r.holds_all(APP));
        assert!(!r.holds_all(D0));
    }

    #[test]
    fn segments_stay_sorted_disjoint_and_merged() {
        let mut r = Residency::new(100, APP, 0, 0);
        r.set_only([10, 20], D0);
        r.set_only([20, 30], D0);
        r.set_only([200, 300], D1); // past the end: ignored
        assert_eq!(
            r.segments(),
            &[
                Segment {
                    start: 0,
                    end: 10,
                    holders: APP
                },
                Segment {
                    start: 10,
                    end: 30,
                    holders: D0
                },
                Segment {
                    start: 30,
                    end: 100,
                    holders: APP
                },
            ]
        );
        r.add([0, 100], APP);
        assert_eq!(r.segments().len(), 3);
        assert_eq!(r.segments()[1].holders, APP | D0);
        assert!(r.holds_all(APP));
        r.set_only([0, 100], APP);
        assert_eq!(
            r.segments(),
            &[Segment {
                start: 0,
                end: 100,
                holders: APP
            }]
        );
    }
}
