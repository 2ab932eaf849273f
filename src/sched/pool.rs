//! The set of work-groups not yet given to any live chunk: sorted, disjoint, half-open ranges
//! of linear work-group indices along the split dimension.

/// Unassigned work-groups, as sorted disjoint `(first, count)` ranges. Work comes back into
/// the pool when a chunk's enqueue fails or a chunk is abandoned (straggler), so the pool can
/// become fragmented; [`Pool::take`] always serves the lowest indices first, which keeps chunks
/// contiguous slabs whenever the pool is contiguous.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pool {
    ranges: Vec<(u64, u64)>,
    len: u64,
}

impl Pool {
    /// A pool holding work-groups `0..total` (work-groups).
    pub fn new(total: u64) -> Self {
        let ranges = if total > 0 {
            vec![(0, total)]
        } else {
            Vec::new()
        };
        Pool { ranges, len: total }
    }

    /// Number of work-groups in the pool.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when no work-group is left.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ranges `(first, count)`, sorted by `first`.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// Removes up to `n` work-groups, lowest indices first, and returns them as contiguous
    /// `(first, count)` pieces (more than one only when the pool is fragmented).
    pub fn take(&mut self, n: u64) -> Vec<(u64, u64)> {
        let mut want = n.min(self.len);
        let mut out = Vec::new();
        while want > 0 {
            let Some(&(first, count)) = self.ranges.first() else {
                break;
            };
            let k = count.min(want);
            out.push((first, k));
            if k == count {
                self.ranges.remove(0);
            } else {
                self.ranges[0] = (first + k, count - k);
            }
            want -= k;
            self.len -= k;
        }
        out
    }

    /// Returns `count` work-groups starting at `first` to the pool, merging with neighbours.
    /// Returns `Err` (and changes nothing) if the range overlaps work already in the pool,
    /// which would mean a work-group was assigned twice.
    pub fn give_back(&mut self, first: u64, count: u64) -> Result<(), String> {
        if count == 0 {
            return Ok(());
        }
        let end = first
            .checked_add(count)
            .ok_or_else(|| "work-group range overflows u64".to_string())?;
        let pos = self.ranges.partition_point(|&(f, _)| f < first);
        if pos > 0 {
            let (pf, pc) = self.ranges[pos - 1];
            if pf + pc > first {
                return Err(format!("range {first}+{count} overlaps pooled {pf}+{pc}"));
            }
        }
        if let Some(&(nf, nc)) = self.ranges.get(pos) {
            if nf < end {
                return Err(format!("range {first}+{count} overlaps pooled {nf}+{nc}"));
            }
        }
        self.ranges.insert(pos, (first, count));
        // merge with the next, then with the previous
        if pos + 1 < self.ranges.len()
            && self.ranges[pos].0 + self.ranges[pos].1 == self.ranges[pos + 1].0
        {
            self.ranges[pos].1 += self.ranges[pos + 1].1;
            self.ranges.remove(pos + 1);
        }
        if pos > 0 && self.ranges[pos - 1].0 + self.ranges[pos - 1].1 == self.ranges[pos].0 {
            self.ranges[pos - 1].1 += self.ranges[pos].1;
            self.ranges.remove(pos);
        }
        self.len += count;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_and_give_back_merge() {
        let mut p = Pool::new(10);
        assert_eq!(p.take(3), vec![(0, 3)]);
        assert_eq!(p.take(4), vec![(3, 4)]);
        assert_eq!(p.len(), 3);
        p.give_back(0, 3).unwrap();
        assert_eq!(p.ranges(), &[(0, 3), (7, 3)]);
        assert_eq!(p.take(5), vec![(0, 3), (7, 2)]);
        p.give_back(3, 4).unwrap();
        assert_eq!(p.ranges(), &[(3, 4), (9, 1)]);
        p.give_back(7, 2).unwrap();
        assert_eq!(p.ranges(), &[(3, 7)]);
        assert_eq!(p.len(), 7);
        assert!(p.give_back(5, 1).is_err());
        assert!(p.give_back(0, 4).is_err());
        assert_eq!(p.len(), 7);
    }
}
