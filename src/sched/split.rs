//! Whether splitting a launch across devices pays for its transfers (`CLPRISM_SPLIT=auto`).
//!
//! Boyer's scheduler (ch. 4) balances compute; it assumes the data a chunk needs is on its
//! device. In clprism the other devices' copies of an input must come through the host
//! whenever the application rewrote it, and what they write must go back into the app's
//! buffer. For a transfer-bound kernel (Boyer §4.5.3 names them; our Black-Scholes app
//! rewrites its inputs before every launch) that costs far more than the kernel, and Boyer's
//! requirement is that such kernels are never slower than native. This module decides, per
//! launch, from measured figures only:
//!
//! * `T_home = t_whole · W`: the whole NDRange on the app's device, where `t_whole` is its
//!   measured ns per work-group when the kernel last ran whole there and `W` the launch's
//!   work-groups;
//! * `T_split = W / Σ_i (1/t_i) + T_up + T_merge`: the ideal makespan over every device,
//!   where `t_i` is device `i`'s ns per work-group measured in the kernel's split launches
//!   (devices not yet measured count as `t_whole`). Measured in chunks, `t_i` carries what the
//!   ideal makespan leaves out: a chunk smaller than one wave of the device (N-body at
//!   2048 work-groups on four GPUs) costs a whole wave, and its per-work-group time rises
//!   accordingly. Then the host transfers:
//!   - `T_up = 2·U / R`: `U` bytes of inputs that must be uploaded at this launch (read from
//!     the app's device, written to the others, in parallel) at the measured host rate `R`
//!     (bytes/ns);
//!   - `T_merge`: the read-back and write-back time measured at the kernel's last split launch
//!     when there is one; else estimated: `2·B·(1 − s_home) / R` for a footprint merge (`B`
//!     bytes of written buffers, of which the other devices produce the share `1 − s_home`),
//!     `4·B / R` for a diff-merge (the pre-launch copy out and up, every device's whole copy
//!     back, the merged bytes into the app's buffer);
//! * split when `T_split ≤ (1 − g) · T_home` (gain `g`, default 5 %).
//!
//! A kernel's first launch, with no `t_whole` yet, runs whole on the app's device to measure
//! it. Inputs whose copies are merely missing (uploaded once, then reused while the app does
//! not rewrite them) are not counted in `U`: that cost is paid once and amortised over the
//! launches that follow.

/// Inputs of [`decide`] for one launch.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitInputs {
    /// Work-groups of the launch.
    pub work_groups: u64,
    /// Measured ns per work-group of the app's device when the kernel ran whole there
    /// (`None`: not measured yet).
    pub home_whole_ns_per_work_group: Option<f64>,
    /// Measured ns per work-group of each participating device in the kernel's split
    /// launches (`None`: not measured yet).
    pub ns_per_work_group: Vec<Option<f64>>,
    /// Index of the application's device in `ns_per_work_group`.
    pub home: usize,
    /// Whether the launch merges by diff (no footprint): every device's copy of the written
    /// buffers comes back through the host.
    pub merge_by_diff: bool,
    /// Read-back and write-back time of the kernel's last split launch, ns.
    pub measured_merge_ns: Option<f64>,
    /// Bytes of inputs that must be uploaded to the other devices at this launch.
    pub upload_bytes: u64,
    /// Bytes of the buffers the kernel writes.
    pub written_bytes: u64,
    /// Measured host transfer rate, bytes per ns (1 byte/ns = 1 GB/s): the slowest of the
    /// host's and the participating remote devices' links.
    pub host_bytes_per_ns: f64,
    /// Round trip of the slowest link among the participating devices (a PoCL-Remote
    /// server's, `exec::devices::Link`), ns; 0 when all are local. A split launch pays it at
    /// least twice: its chunk's enqueue and its completion.
    pub link_latency_ns: f64,
    /// Least relative gain that justifies splitting (0.05 = 5 %).
    pub min_gain: f64,
    /// The shortest wall time of any split launch measured so far in this process, ns (the
    /// start barrier, an enqueue and a completion per device, the merge: what even the
    /// smallest split costs; 0 before one is measured). No split is estimated below it
    /// (PoCL, 3 CPU devices: 390 µs for 4,096 work-items of CLBlast's axpy).
    pub split_floor_ns: f64,
    /// Whether `split_floor_ns` is the prior assumed before any split was measured
    /// (`CLPRISM_BALANCE_SPLIT_FLOOR` on a GPU) rather than a measured split: the reason
    /// says which.
    pub split_floor_assumed: bool,
}

/// The verdict, with the estimates behind it (for the `schedule` record).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SplitDecision {
    /// True: split across the devices; false: run whole on the app's device.
    pub split: bool,
    /// Why, in words.
    pub reason: String,
    /// `T_home`, ns (absent before the first measurement).
    pub est_home_ns: Option<f64>,
    /// `T_split`, ns, transfers included.
    pub est_split_ns: Option<f64>,
    /// `T_xfer`, ns.
    pub est_transfer_ns: Option<f64>,
}

/// Decides whether to split one launch (see the module doc for the model).
pub fn decide(i: &SplitInputs) -> SplitDecision {
    let Some(t_home) = i.home_whole_ns_per_work_group else {
        return SplitDecision {
            split: false,
            reason: "first launch of this kernel: run whole on the app's device to measure it"
                .into(),
            est_home_ns: None,
            est_split_ns: None,
            est_transfer_ns: None,
        };
    };
    let w = i.work_groups as f64;
    let t_home = t_home.max(f64::MIN_POSITIVE);
    let rate = |t: Option<f64>| 1.0 / t.unwrap_or(t_home).max(f64::MIN_POSITIVE);
    let rate_sum: f64 = i.ns_per_work_group.iter().map(|t| rate(*t)).sum();
    let share_home = rate(i.ns_per_work_group.get(i.home).copied().flatten()) / rate_sum;
    let r = i.host_bytes_per_ns.max(1e-6);
    let b = i.written_bytes as f64;
    let merge = i.measured_merge_ns.unwrap_or(if i.merge_by_diff {
        4.0 * b / r
    } else {
        2.0 * b * (1.0 - share_home) / r
    });
    let xfer = 2.0 * i.upload_bytes as f64 / r + merge + 2.0 * i.link_latency_ns;
    let home = t_home * w;
    let split = (w / rate_sum + xfer).max(i.split_floor_ns);
    let ok = split <= (1.0 - i.min_gain) * home;
    let ms = |ns: f64| ns / 1e6;
    let floor_binds = i.split_floor_ns > w / rate_sum + xfer;
    SplitDecision {
        split: ok,
        reason: format!(
            "{:.2} ms on the app's device against {:.2} ms split ({:.2} ms of it moving {} MiB of inputs at {:.1} GB/s and merging{}{}){}",
            ms(home),
            ms(split),
            ms(xfer),
            (2 * i.upload_bytes) >> 20,
            r,
            if i.measured_merge_ns.is_some() { ", as measured" } else if i.merge_by_diff { " by diff" } else { "" },
            if i.link_latency_ns > 0.0 {
                format!(", two round trips of {:.0} us to a remote device", i.link_latency_ns / 1e3)
            } else {
                String::new()
            },
            if floor_binds {
                format!(
                    "; no split launch takes less than {:.2} ms ({})",
                    ms(i.split_floor_ns),
                    if i.split_floor_assumed {
                        "assumed before a split is measured, CLPRISM_BALANCE_SPLIT_FLOOR"
                    } else {
                        "the shortest split so far"
                    }
                )
            } else {
                String::new()
            },
        ),
        est_home_ns: Some(home),
        est_split_ns: Some(split),
        est_transfer_ns: Some(xfer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(upload: u64, written: u64, t: Vec<Option<f64>>) -> SplitInputs {
        SplitInputs {
            link_latency_ns: 0.0,
            work_groups: 1000,
            home_whole_ns_per_work_group: t[0],
            ns_per_work_group: t,
            home: 0,
            merge_by_diff: false,
            measured_merge_ns: None,
            upload_bytes: upload,
            written_bytes: written,
            host_bytes_per_ns: 10.0,
            min_gain: 0.05,
            split_floor_ns: 0.0,
            split_floor_assumed: false,
        }
    }

    /// A remote device's link: a launch that two local devices split with a gain stays whole
    /// once two round trips of 100 µs (PoCL-Remote on loopback) come on top, and the reason
    /// says so; a launch long enough still splits.
    #[test]
    fn a_remote_link_adds_two_round_trips() {
        // 1000 work-groups of 300 ns on two equal devices: 300 µs whole, 150 µs split
        let mut i = inputs(0, 0, vec![Some(300.0), Some(300.0)]);
        assert!(decide(&i).split);
        i.link_latency_ns = 100_000.0;
        let d = decide(&i);
        assert!(!d.split, "{}", d.reason);
        assert_eq!(d.est_transfer_ns, Some(200_000.0));
        assert!(
            d.reason
                .contains("two round trips of 100 us to a remote device"),
            "{}",
            d.reason
        );
        i.work_groups = 10_000; // 3 ms whole, 1.5 + 0.2 ms split
        assert!(decide(&i).split);
    }

    #[test]
    fn no_split_is_estimated_below_the_measured_floor() {
        // 1000 work-groups of 10 ns on two equal devices: 10 µs whole, 5 µs split by the rates
        // alone, but no split launch has taken under 300 µs, so it stays whole.
        let mut i = inputs(0, 0, vec![Some(10.0), Some(10.0)]);
        assert!(decide(&i).split);
        i.split_floor_ns = 300_000.0;
        let d = decide(&i);
        assert!(!d.split, "{d:?}");
        assert_eq!(d.est_split_ns, Some(300_000.0));
    }

    #[test]
    fn first_launch_runs_whole_to_measure() {
        let d = decide(&inputs(0, 0, vec![None, Some(1.0)]));
        assert!(!d.split);
        assert!(d.est_home_ns.is_none());
    }

    #[test]
    fn compute_bound_splits_and_transfer_bound_does_not() {
        // 1000 work-groups of 1 ms on two equal devices: 1 s whole, 0.5 s split + transfers.
        // 100 MB written, half from the other device: 2 * 100e6 * 0.5 / 10 = 10 ms.
        let d = decide(&inputs(0, 100_000_000, vec![Some(1e6), None]));
        assert!(d.split, "{d:?}");
        assert_eq!(d.est_home_ns, Some(1e9));
        assert!((d.est_transfer_ns.unwrap() - 1e7).abs() < 1.0);
        assert!((d.est_split_ns.unwrap() - (5e8 + 1e7)).abs() < 1.0);
        // 1000 work-groups of 10 µs (10 ms whole) with 400 MB of inputs rewritten per launch:
        // 80 ms of uploads alone, so it stays whole.
        let d = decide(&inputs(400_000_000, 0, vec![Some(1e4), Some(1e4)]));
        assert!(!d.split, "{d:?}");
        assert!(
            d.reason.contains("80.00 ms of it moving 762 MiB"),
            "{}",
            d.reason
        );
    }

    #[test]
    fn the_gain_threshold_is_applied() {
        // two equal devices, no transfers: the split takes half the time
        let mut i = inputs(0, 0, vec![Some(100.0), Some(100.0)]);
        assert!(decide(&i).split);
        // a second device 18x slower gains 5.3 %: split; 20x slower gains 4.8 %: whole
        i.ns_per_work_group = vec![Some(100.0), Some(1800.0)];
        assert!(decide(&i).split);
        i.ns_per_work_group = vec![Some(100.0), Some(2000.0)];
        assert!(!decide(&i).split);
    }

    #[test]
    fn the_app_device_share_needs_no_read_back() {
        // the other device is 3x slower: it produces 1/4 of the output
        let i = inputs(0, 400, vec![Some(1.0), Some(3.0)]);
        let d = decide(&i);
        assert!((d.est_transfer_ns.unwrap() - 2.0 * 400.0 * 0.25 / 10.0).abs() < 1e-9);
    }

    #[test]
    fn chunks_measured_slower_than_the_whole_run_keep_it_whole() {
        // N-body, 2048 work-groups on 4 GPUs: 6.4 µs per work-group whole, but a chunk below
        // one wave costs a wave, so the split launch measured 32 µs per work-group everywhere
        let mut i = inputs(0, 0, vec![Some(6400.0), None, None, None]);
        i.work_groups = 2048;
        assert!(
            decide(&i).split,
            "before any split measurement the estimate splits"
        );
        i.ns_per_work_group = vec![Some(32_000.0); 4];
        let d = decide(&i);
        assert!(!d.split, "{d:?}");
        assert!((d.est_split_ns.unwrap() - 2048.0 * 8000.0).abs() < 1e-3);
    }

    #[test]
    fn diff_merge_and_measured_merge_costs() {
        let mut i = inputs(0, 1000, vec![Some(1.0), Some(1.0)]);
        i.merge_by_diff = true;
        assert!((decide(&i).est_transfer_ns.unwrap() - 4.0 * 1000.0 / 10.0).abs() < 1e-9);
        i.measured_merge_ns = Some(123.0);
        let d = decide(&i);
        assert!((d.est_transfer_ns.unwrap() - 123.0).abs() < 1e-9);
        assert!(d.reason.contains("as measured"), "{}", d.reason);
    }
}
