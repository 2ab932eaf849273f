//! Diff-merge (DESIGN.md §7): every device ran its chunks on a replica that started as the
//! pre-launch contents, so the bytes a device changed are exactly the bytes its work-groups
//! wrote. The merged buffer takes each changed byte from the device that changed it.

/// Merges device copies of one buffer against its pre-launch contents `base`.
///
/// Returns the merged bytes, or `Err(offset)` of the first byte two devices changed to
/// different values (the work-groups overlap: the split is not safe). See
/// [`diff_merge_into`].
pub fn diff_merge(base: &[u8], copies: &[&[u8]], threads: usize) -> Result<Vec<u8>, usize> {
    let mut result = vec![0u8; base.len()];
    diff_merge_into(&mut result, base, copies, threads)?;
    Ok(result)
}

/// Merges device copies of one buffer against its pre-launch contents `base` into `out`
/// (same length; any prior contents are overwritten, so a reused page-locked staging area
/// serves). Runs on up to `threads` threads over slices of 256 KiB to 4 MiB, each copying
/// its slice of `base` and then applying every copy's changes, comparing 8-byte words first.
///
/// Errors: `Err(offset)` of the first byte two devices changed to different values (the
/// work-groups overlap: the split is not safe); `out` is then partly merged.
pub fn diff_merge_into(
    out: &mut [u8],
    base: &[u8],
    copies: &[&[u8]],
    threads: usize,
) -> Result<(), usize> {
    assert!(out.len() == base.len() && copies.iter().all(|c| c.len() == base.len()));
    let threads = threads.clamp(1, 64);
    // slices small enough that every thread gets work even for a buffer of a few MiB,
    // multiples of 8 bytes (words are compared first)
    let slice = base
        .len()
        .div_ceil(threads)
        .clamp(256 << 10, 4 << 20)
        .next_multiple_of(8);
    let slices: Vec<(usize, &mut [u8])> = out
        .chunks_mut(slice)
        .enumerate()
        .map(|(i, s)| (i * slice, s))
        .collect();
    let per = slices.len().div_ceil(threads).max(1);
    let mut groups: Vec<Vec<(usize, &mut [u8])>> = Vec::new();
    let mut it = slices.into_iter().peekable();
    while it.peek().is_some() {
        groups.push(it.by_ref().take(per).collect());
    }
    let conflicts: Vec<Option<usize>> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|g| {
                s.spawn(move || {
                    for (off, out) in g {
                        let b = &base[off..off + out.len()];
                        out.copy_from_slice(b);
                        for c in copies {
                            if let Some(j) = merge_slice(out, b, &c[off..off + out.len()]) {
                                return Some(off + j);
                            }
                        }
                    }
                    None
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Some(0)))
            .collect()
    });
    match conflicts.into_iter().flatten().min() {
        Some(j) => Err(j),
        None => Ok(()),
    }
}

/// Applies one copy's changes (relative to `base`) to `out`; returns a conflicting offset.
fn merge_slice(out: &mut [u8], base: &[u8], copy: &[u8]) -> Option<usize> {
    let word = |s: &[u8]| u64::from_ne_bytes(s.try_into().unwrap_or([0; 8]));
    let words = base.len() / 8;
    for (w, (b, c)) in base.chunks_exact(8).zip(copy.chunks_exact(8)).enumerate() {
        if word(b) == word(c) {
            continue;
        }
        for j in w * 8..w * 8 + 8 {
            if let Some(c) = apply(out, base, copy, j) {
                return Some(c);
            }
        }
    }
    for j in words * 8..base.len() {
        if let Some(c) = apply(out, base, copy, j) {
            return Some(c);
        }
    }
    None
}

#[inline]
fn apply(out: &mut [u8], base: &[u8], copy: &[u8], j: usize) -> Option<usize> {
    if copy[j] != base[j] {
        if out[j] != base[j] && out[j] != copy[j] {
            return Some(j);
        }
        out[j] = copy[j];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_each_devices_changes() {
        let base = vec![0u8; 37];
        let mut a = base.clone();
        let mut b = base.clone();
        a[..10].fill(1);
        b[20..37].fill(2);
        let m = diff_merge(&base, &[&a, &b], 3).unwrap();
        assert!(m[..10].iter().all(|x| *x == 1));
        assert!(m[10..20].iter().all(|x| *x == 0));
        assert!(m[20..].iter().all(|x| *x == 2));
    }

    #[test]
    fn same_value_from_two_devices_is_fine_different_is_a_conflict() {
        let base = vec![5u8; 16];
        let mut a = base.clone();
        let mut b = base.clone();
        a[3] = 9;
        b[3] = 9;
        assert_eq!(diff_merge(&base, &[&a, &b], 1).unwrap()[3], 9);
        b[3] = 7;
        assert_eq!(diff_merge(&base, &[&a, &b], 1), Err(3));
    }

    #[test]
    fn merging_into_a_reused_area_overwrites_its_old_contents() {
        let base: Vec<u8> = (0..4099u32).map(|i| (i % 13) as u8).collect();
        let mut a = base.clone();
        a[4098] = 200;
        let mut out = vec![0xEEu8; base.len()];
        diff_merge_into(&mut out, &base, &[&a, &base], 2).unwrap();
        assert_eq!(out[..4098], base[..4098]);
        assert_eq!(out[4098], 200);
    }

    #[test]
    fn large_buffers_across_slices_and_threads() {
        let n = (9 << 20) + 13;
        let base: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        let mut a = base.clone();
        let mut b = base.clone();
        for i in (0..n).step_by(3) {
            a[i] = a[i].wrapping_add(1);
        }
        for i in (1..n).step_by(3) {
            b[i] = b[i].wrapping_add(2);
        }
        let m = diff_merge(&base, &[&a, &b], 4).unwrap();
        for i in 0..n {
            let want = match i % 3 {
                0 => a[i],
                1 => b[i],
                _ => base[i],
            };
            assert_eq!(m[i], want, "byte {i}");
        }
    }
}
