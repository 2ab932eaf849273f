//! A buffer argument whose contents are fetched page by page, when the emulated work-group
//! first touches them ([`ArgValue::Paged`](super::ArgValue::Paged); issue 19 item 1).
//!
//! Project mode snapshots a launch's buffers on the device; the work-group it emulates reads
//! a few pages of them. A paged buffer is a zero-filled allocation of the buffer's size
//! (`alloc_zeroed`: the system maps its pages only when written, so untouched pages cost no
//! memory) whose [`PAGE`]-sized pages are filled through a callback (a `clEnqueueReadBuffer`
//! of that range of the snapshot) before the first load or store that touches them. Host
//! memory is then the pages touched, not the buffer.

use super::EmuError;
use std::sync::Arc;

/// Bytes fetched at a time.
pub const PAGE: u64 = 64 << 10;

/// Fills `dst` with the buffer's bytes from offset `at` (`dst.len()` bytes, within the
/// buffer); `Err` with why not.
pub type Fetch = Arc<dyn Fn(u64, &mut [u8]) -> Result<(), String> + Send + Sync>;

/// The page-filling state of a [`PagedBuffer`].
#[derive(Clone)]
pub struct PageFill {
    /// One bit per page: filled already.
    present: Vec<u64>,
    fetch: Fetch,
    /// Bytes fetched so far.
    pub fetched: u64,
}

impl std::fmt::Debug for PageFill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageFill")
            .field("fetched", &self.fetched)
            .finish_non_exhaustive()
    }
}

impl PageFill {
    /// Makes sure the pages covering bytes `[off, off + len)` of `buf` are filled
    /// (the range is clamped to the buffer; out-of-bounds accesses are reported by the
    /// caller).
    #[inline]
    pub(crate) fn ensure(&mut self, buf: &mut [u8], off: u64, len: u64) -> Result<(), EmuError> {
        let size = buf.len() as u64;
        let end = off.saturating_add(len.max(1)).min(size);
        if off >= end {
            return Ok(());
        }
        let (first, last) = (off / PAGE, (end - 1) / PAGE);
        for p in first..=last {
            let (w, bit) = ((p / 64) as usize, 1u64 << (p % 64));
            if self.present[w] & bit != 0 {
                continue;
            }
            let s = p * PAGE;
            let e = (s + PAGE).min(size);
            (self.fetch)(s, &mut buf[s as usize..e as usize])
                .map_err(|why| EmuError::Internal(format!("snapshot bytes [{s}, {e}): {why}")))?;
            self.present[w] |= bit;
            self.fetched += e - s;
        }
        Ok(())
    }
}

/// A buffer argument filled on demand (see the module docs).
#[derive(Clone, Debug)]
pub struct PagedBuffer {
    /// The contents: zero where not fetched yet; updated in place by the work-group's
    /// stores, like [`super::ArgValue::Buffer`]'s.
    pub data: Vec<u8>,
    /// Taken by the interpreter while it runs.
    pub fill: Option<PageFill>,
}

impl PartialEq for PagedBuffer {
    fn eq(&self, o: &PagedBuffer) -> bool {
        self.data == o.data
            && self.fill.as_ref().map(|f| &f.present) == o.fill.as_ref().map(|f| &f.present)
    }
}

impl PagedBuffer {
    /// A buffer of `size` bytes whose pages `fetch` fills on first touch.
    pub fn new(size: usize, fetch: Fetch) -> PagedBuffer {
        let pages = (size as u64).div_ceil(PAGE);
        PagedBuffer {
            data: vec![0u8; size],
            fill: Some(PageFill {
                present: vec![0; pages.div_ceil(64) as usize],
                fetch,
                fetched: 0,
            }),
        }
    }

    /// Bytes fetched so far.
    pub fn fetched(&self) -> u64 {
        self.fill.as_ref().map_or(0, |f| f.fetched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn pages_are_fetched_once_on_first_touch() {
        let calls = Arc::new(AtomicU64::new(0));
        let c = calls.clone();
        let mut b = PagedBuffer::new(
            (3 * PAGE + 10) as usize,
            Arc::new(move |at, dst: &mut [u8]| {
                c.fetch_add(1, Ordering::Relaxed);
                for (i, x) in dst.iter_mut().enumerate() {
                    *x = ((at + i as u64) % 251) as u8;
                }
                Ok(())
            }),
        );
        let mut f = b.fill.take().unwrap();
        f.ensure(&mut b.data, 5, 4).unwrap();
        f.ensure(&mut b.data, PAGE - 2, 4).unwrap(); // straddles pages 0 and 1
        f.ensure(&mut b.data, 3 * PAGE + 8, 8).unwrap(); // the short last page, clamped
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        assert_eq!(f.fetched, 2 * PAGE + 10);
        assert_eq!(b.data[(PAGE + 1) as usize], ((PAGE + 1) % 251) as u8);
        assert_eq!(b.data[(2 * PAGE) as usize], 0, "page 2 never touched");
        let bad = PageFill {
            fetch: Arc::new(|_, _: &mut [u8]| Err("gone".into())),
            ..f.clone()
        };
        let mut bad = bad;
        let e = bad.ensure(&mut b.data, 2 * PAGE, 1).unwrap_err();
        assert!(e.to_string().contains("gone"), "{e}");
    }
}
