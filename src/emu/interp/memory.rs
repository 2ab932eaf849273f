//! Memory of the interpreter: the address spaces ([`Mem`]), footprints (merged byte
//! ranges), and the statistics of one warp-level access (sectors, lines, bank conflicts).

use super::*;

pub(super) fn merge_ranges(v: &mut Vec<[u64; 2]>) {
    v.sort_unstable();
    let mut out: Vec<[u64; 2]> = Vec::with_capacity(v.len());
    for r in v.iter() {
        if let Some(l) = out.last_mut() {
            if r[0] <= l[1] {
                l[1] = l[1].max(r[1]);
                continue;
            }
        }
        out.push(*r);
    }
    *v = out;
}

#[inline]
pub(super) fn add_range(v: &mut Vec<[u64; 2]>, s: u64, e: u64) {
    if let Some(l) = v.last_mut() {
        if s >= l[0] && s <= l[1] {
            if e > l[1] {
                l[1] = e;
            }
            return;
        }
        if e >= l[0] && e <= l[1] && s < l[0] {
            l[0] = s;
            return;
        }
    }
    v.push([s, e]);
    if v.len() > 1 << 16 {
        merge_ranges(v);
    }
}

impl Mem {
    /// Resolves `len` bytes at tagged pointer `ptr` for lane `lane`.
    #[inline(always)]
    pub(super) fn slice<'a>(
        &'a mut self,
        prv: &'a mut [u8],
        lane: usize,
        ptr: u64,
        len: u64,
    ) -> Result<&'a mut [u8], EmuError> {
        let tag = ptr >> TAG_SHIFT;
        let off = ptr & OFF_MASK;
        let (region, base): (&mut [u8], u64) = match tag {
            TAG_GLOBAL => {
                let b = ((ptr >> BUF_SHIFT) & 0xfffff) as usize;
                match self.bufs.get_mut(b) {
                    Some(v) => {
                        // a paged buffer: fill the pages touched first (loads and stores)
                        if let Some(Some(f)) = self.fills.get_mut(b) {
                            f.ensure(v, off, len)?;
                        }
                        (v.as_mut_slice(), 0)
                    }
                    None => return Err(EmuError::Fault(format!("pointer to unknown buffer {b}"))),
                }
            }
            TAG_LOCAL => (self.local.as_mut_slice(), 0),
            TAG_CONST => (self.cdata.as_mut_slice(), 0),
            TAG_PRIVATE => {
                if off.saturating_add(len) > self.psize {
                    return Err(EmuError::Fault(format!(
                        "private access out of bounds (offset {off}, {len} bytes)"
                    )));
                }
                (prv, lane as u64 * self.psize)
            }
            _ => {
                return Err(EmuError::Fault(format!(
                    "access through an invalid pointer 0x{ptr:x}"
                )))
            }
        };
        let s = base + off;
        let e = s.saturating_add(len);
        if e > region.len() as u64 {
            let what = match tag {
                TAG_GLOBAL => format!("buffer argument {}", (ptr >> BUF_SHIFT) & 0xfffff),
                TAG_LOCAL => "local memory".into(),
                TAG_CONST => "program-scope data".into(),
                _ => "private memory".into(),
            };
            return Err(EmuError::Fault(format!(
                "out-of-bounds access to {what}: bytes [{off}, {}) of {}",
                off + len,
                region.len()
            )));
        }
        Ok(&mut region[s as usize..e as usize])
    }
}

#[inline(always)]
pub(super) fn rd(b: &[u8], k: Sc) -> u64 {
    match k.bytes() {
        1 => b[0] as u64 & if k == Sc::B1 { 1 } else { 0xff },
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
        _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
    }
}

#[inline(always)]
pub(super) fn wr(b: &mut [u8], k: Sc, v: u64) {
    let n = k.bytes() as usize;
    b[..n].copy_from_slice(&v.to_le_bytes()[..n]);
}

impl<'m> Machine<'m> {
    /// Memory statistics of one warp-level access: `lane_ptr` holds each active lane's
    /// start pointer, each touching `size` bytes.
    pub(super) fn mem_stats(&mut self, mask: u64, size: u64, store: bool) {
        self.mem_traffic(mask, size, store, Traffic::Own);
    }

    /// [`Self::mem_stats`] of a load or store whose global traffic is `traffic`: its own
    /// request, the whole request of a scalarised vector access (from `back` bytes before
    /// each lane's pointer, `bytes` per lane), or none (another component of one). The
    /// footprints and the local memory statistics are those of the access itself.
    pub(super) fn mem_traffic(&mut self, mask: u64, size: u64, store: bool, traffic: Traffic) {
        let (back, tsize) = match traffic {
            Traffic::Own => (0, size),
            Traffic::VecFirst { back, bytes } => (back as u64, bytes as u64),
            Traffic::VecRest => (0, 0),
        };
        let counted = traffic != Traffic::VecRest;
        let w = self.w;
        let _ = w;
        // Split by address space (all lanes normally agree).
        let mut any_g = false;
        let mut any_l = false;
        lanes!(mask, l, {
            let t = self.lane_ptr[l] >> TAG_SHIFT;
            if t == TAG_GLOBAL || t == TAG_CONST {
                any_g = true;
            } else if t == TAG_LOCAL {
                any_l = true;
            }
        });
        if any_g {
            self.scratch.clear();
            self.scratch2.clear();
            let mut bytes = 0u64;
            lanes!(mask, l, {
                let p = self.lane_ptr[l];
                let t = p >> TAG_SHIFT;
                if t == TAG_GLOBAL || t == TAG_CONST {
                    if counted {
                        let start = p - back.min(p & OFF_MASK);
                        let e = start + tsize - 1;
                        for s in (start >> 5)..=(e >> 5) {
                            self.scratch.push(s);
                        }
                        for s in (start >> 7)..=(e >> 7) {
                            self.scratch2.push(s);
                        }
                        bytes += tsize;
                    }
                    if t == TAG_GLOBAL {
                        let b = ((p >> BUF_SHIFT) & 0xfffff) as usize;
                        let off = p & OFF_MASK;
                        if let Some(fp) = self.acc.fp.get_mut(b) {
                            if store {
                                add_range(&mut fp.1, off, off + size);
                            } else {
                                add_range(&mut fp.0, off, off + size);
                            }
                        }
                    }
                }
            });
            self.global_load |= !store;
            self.global_store |= store;
            let sectors = count_distinct(&mut self.scratch);
            let lines = count_distinct(&mut self.scratch2);
            let g = if store {
                &mut self.acc.gs
            } else {
                &mut self.acc.gl
            };
            g.requests += u64::from(counted);
            g.sectors += sectors;
            g.lines += lines;
            g.bytes += bytes;
        }
        if any_l {
            self.scratch.clear();
            lanes!(mask, l, {
                let p = self.lane_ptr[l];
                if p >> TAG_SHIFT == TAG_LOCAL {
                    let off = p & OFF_MASK;
                    for wd in (off >> 2)..=((off + size - 1) >> 2) {
                        self.scratch.push(wd);
                    }
                }
            });
            count_distinct(&mut self.scratch);
            let mut per_bank = [0u32; 32];
            for wd in &self.scratch {
                per_bank[(*wd % 32) as usize] += 1;
            }
            let mx = per_bank.iter().copied().max().unwrap_or(0) as u64;
            let t = if store {
                &mut self.acc.ls
            } else {
                &mut self.acc.ll
            };
            t.requests += 1;
            t.bank_conflict_replays += mx.saturating_sub(1);
        }
    }

    /// The padding half after the 3 halves of a `vstorea_half3` (bytes `[at, at + len)` from
    /// each active lane's `lane_ptr`), recorded in the write footprint as read and written
    /// (its emulated contents stay as they were). The specification has only x, y, z
    /// written, and Oclgrind writes 3 halves, but PoCL 3.1 stores the whole 8-byte slot
    /// (the 4th half as 0): the byte may or may not change, depending on the device. As a
    /// read-modify-write it makes balance mode give every device the buffer's contents
    /// before the launch and merge that half back, which reproduces either behaviour.
    pub(super) fn padding_footprint(&mut self, mask: u64, at: u64, len: u64) {
        lanes!(mask, l, {
            let p = self.lane_ptr[l];
            if p >> TAG_SHIFT == TAG_GLOBAL {
                let b = ((p >> BUF_SHIFT) & 0xfffff) as usize;
                let off = (p & OFF_MASK) + at;
                if let Some(fp) = self.acc.fp.get_mut(b) {
                    add_range(&mut fp.0, off, off + len);
                    add_range(&mut fp.1, off, off + len);
                }
            }
        });
    }
}

pub(super) fn count_distinct(v: &mut Vec<u64>) -> u64 {
    if v.is_empty() {
        return 0;
    }
    if !v.windows(2).all(|x| x[0] <= x[1]) {
        v.sort_unstable();
    }
    v.dedup();
    v.len() as u64
}
