#!/usr/bin/env python3
"""Generate the spec-sheet profiles in profiles/ (Panwar Table I GPUs, H100 SXM, H200).

Every derived number is computed here from published per-clock figures, so that the
derivation can be checked and redone.  Run from the repository root:

    python3 profiles/tools/gen_spec_profiles.py

Method (also written into each profile's `sources`):

* instruction throughput, lane instructions / ns, whole device
      = lanes per clock per compute unit (vendor manual table) x compute units x clock (GHz)
* global read/write throughput vs occupancy (ESTIMATED, Little's law):
      tp(occ) = min(eff x peak_bw,
                    occ x max_warps_per_cu x CUs x inflight_bytes_per_warp / latency_ns)
  with inflight_bytes_per_warp = warp_width x 4 B x 4 independent loads (a SHOC-like
  unrolled coalesced read kernel), latency_ns = unloaded DRAM latency (estimate), and
  eff = achievable fraction of the theoretical peak (estimate).
* local throughput vs occupancy (ESTIMATED, Little's law):
      tp(occ) = min(peak_local, occ x max_warps_per_cu x CUs x 2 x warp_width x 4 B / lat_local_ns)
  with peak_local = bytes per clock per CU from the bank width and rate x CUs x clock.
"""
import json, os, re

OCC_POINTS = [1/16, 1/8, 1/4, 3/8, 1/2, 5/8, 3/4, 7/8, 1.0]
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)

CUDA_GUIDE = ("NVIDIA CUDA C Programming Guide (v4.2 for CC 1.x/2.x, v12.x for CC 9.0), "
              "'Arithmetic Instructions' throughput table (results per clock per multiprocessor) "
              "and 'Compute Capabilities' appendix, https://docs.nvidia.com/cuda/cuda-c-programming-guide/")
AMD_GUIDE = ("AMD Accelerated Parallel Processing OpenCL Programming Guide rev. 2.7 (AMD APP SDK 2.7, "
             "Panwar ref. [3]), chapters on Evergreen and Southern Islands devices and Appendix D "
             "device parameters, http://developer.amd.com/tools-and-sdks/heterogeneous-computing/")


def r(x, nd=1):
    return round(x, nd)


def curve(peak_eff, max_warps, cus, inflight_bytes, latency_ns):
    pts = []
    for o in OCC_POINTS:
        pts.append([r(o, 4), r(min(peak_eff, o * max_warps * cus * inflight_bytes / latency_ns))])
    return pts


def dumps(obj):
    """JSON with 2-space indent, innermost arrays of scalars on one line."""
    text = json.dumps(obj, indent=2)
    inner = re.compile(r"\[\s*((?:[-0-9.eE+]+|\"[^\"\[\]]*\")(?:,\s*(?:[-0-9.eE+]+|\"[^\"\[\]]*\"))*)\s*\]")
    text = inner.sub(lambda m: "[" + re.sub(r",\s*", ", ", m.group(1)) + "]", text)
    return text + "\n"


def build(d):
    ghz = d["clock_mhz"] / 1000.0
    scale = d["compute_units"] * ghz
    it = {k: r(v * scale, 2) for k, v in d["per_cu_clock"].items()}
    ww = d["warp_width"]
    inflight = ww * 4 * 4
    gr = curve(d["peak_bw"] * d["eff_read"], d["limits"]["max_warps_per_cu"], d["compute_units"],
               inflight, d["dram_latency_ns"])
    gw = curve(d["peak_bw"] * d["eff_write"], d["limits"]["max_warps_per_cu"], d["compute_units"],
               inflight, d["dram_latency_ns"])
    peak_local = d["local_bytes_per_clock_cu"] * scale
    lat_local = d["local_latency_cycles"] / ghz
    lc = curve(peak_local, d["limits"]["max_warps_per_cu"], d["compute_units"],
               2 * ww * 4, lat_local)
    per = ", ".join(f"{k} {v}" for k, v in d["per_cu_clock"].items())
    src = dict(d["sources"])
    src["instruction_throughput"] = (
        f"derived: lanes/clock/CU ({per}) x {d['compute_units']} CUs x {ghz} GHz; "
        f"per-clock figures: {d['per_clock_source']}")
    src["global_read"] = (
        f"ESTIMATED (not measured): Little's law, tp(occ) = min({d['eff_read']} x {d['peak_bw']} B/ns peak, "
        f"occ x {d['limits']['max_warps_per_cu']} warps x {d['compute_units']} CUs x {inflight} B in flight "
        f"per warp / {d['dram_latency_ns']} ns DRAM latency); peak: {d['sources']['_peak_bw']}; "
        f"efficiency and latency are estimates; see profiles/tools/gen_spec_profiles.py")
    src["global_write"] = src["global_read"].replace(f"min({d['eff_read']} x", f"min({d['eff_write']} x")
    src["local"] = (
        f"ESTIMATED (not measured): peak {d['local_bytes_per_clock_cu']} B/clock/CU x {d['compute_units']} CUs "
        f"x {ghz} GHz = {r(peak_local)} B/ns ({d['sources']['_local']}); vs occupancy by Little's law with "
        f"2 requests of {ww * 4} B in flight per warp and {d['local_latency_cycles']} cycles latency (estimate)")
    del src["_peak_bw"], src["_local"]
    prof = {
        "name": d["name"],
        "vendor": d["vendor"],
        "kind": "gpu",
        "match": d["match"],
        "compute_units": d["compute_units"],
        "warp_width": ww,
        "clock_mhz": d["clock_mhz"],
        "instruction_throughput": it,
        "global_read": gr,
        "global_write": gw,
        "local": lc,
        "sector_bytes": 32,
        "line_bytes": 128,
    }
    for k in ("global_load_granularity", "global_store_granularity"):
        if k in d:
            prof[k] = d[k]
    prof.update({
        "local_banks": d["local_banks"],
        "bank_bytes": 4,
        "l2_bytes": d["l2_bytes"],
        "limits": d["limits"],
        "launch_overhead_ns": d["launch_overhead_ns"],
        "host_to_device_bytes_per_ns": d["h2d"],
        "device_to_host_bytes_per_ns": d["d2h"],
        "sources": dict(sorted(src.items())),
        "notes": d["notes"],
    })
    return prof


PCIE = ("ESTIMATED: 80% of the theoretical PCIe {gen} x16 rate of {raw} GB/s per direction "
        "(PCI-SIG base specification); pinned-memory copies typically reach 75-85%")
LAUNCH_OLD = ("ESTIMATED: typical OpenCL/CUDA launch overhead of that driver generation, 5-10 us "
              "(Boyer ch. 3 reports kernel launch ~3 orders of magnitude above a CPU call; Wang § V "
              "finds it dominant for few-us kernels); not measured")

DEVICES = [
    dict(
        name="hd5870", vendor="AMD (ATI)",
        match={"name_contains": ["Cypress"], "vendor_contains": "Advanced Micro Devices"},
        compute_units=20, warp_width=64, clock_mhz=850.0,
        # VLIW5: 16 stream cores x 5 slots per CU; lane instructions assume an average
        # packing of 3.5 of 5 slots for ALU ops; DP/transcendental/conversion on T unit or 4 slots.
        per_cu_clock={"int": 56, "fp32": 56, "fp64": 16, "special": 16, "conversion": 16,
                      "branch": 16, "barrier": 16, "atomic": 1, "memory": 16, "other": 56},
        per_clock_source=(AMD_GUIDE + " (Evergreen: 16 VLIW5 stream cores per CU, 1600 PEs, "
                          "2720 GFLOPS = Panwar Table I); ESTIMATED: fp32/int/other assume 3.5 of 5 VLIW "
                          "slots filled; fp64 = 1/5 peak rate (4 slots per DP op), special/conversion on the "
                          "T unit (16/clock); branch, barrier, memory issue 16 lanes/clock and atomic 1 "
                          "lane/clock are estimates"),
        peak_bw=153.6, eff_read=0.75, eff_write=0.70, dram_latency_ns=500.0,
        local_bytes_per_clock_cu=128, local_latency_cycles=64, local_banks=32,
        l2_bytes=524288,
        limits={"max_work_groups_per_cu": 8, "max_warps_per_cu": 24, "registers_per_cu": 65536,
                "local_mem_per_cu_bytes": 32768, "max_work_group_size": 256},
        launch_overhead_ns=10000.0, h2d=6.4, d2h=6.4,
        sources={
            "_peak_bw": "AMD HD 5870 spec: 256-bit GDDR5 at 4.8 Gbps = 153.6 GB/s (Panwar Table I lists 264 GB/s, "
                        "which is the HD 7970's figure; the two entries appear swapped)",
            "_local": "AMD APP guide: LDS 32 banks x 4 B per clock per CU (2176 GB/s device LDS bandwidth)",
            "compute_units": "spec: 20 SIMD engines (Panwar Table I; AMD HD 5870 product page)",
            "warp_width": "spec: wavefront of 64 work-items (" + AMD_GUIDE + ")",
            "clock_mhz": "spec: 850 MHz engine clock (AMD HD 5870 product specification)",
            "sector_bytes": "emulator sector size (DESIGN.md 5); Panwar Table I gives 64 B transactions for "
                            "AMD, i.e. between the 32-B sector and 128-B line counts",
            "line_bytes": "emulator line size (DESIGN.md 5)",
            "local_banks": "spec: 32 LDS banks (Panwar Table I)",
            "bank_bytes": "spec: 4-byte banks (" + AMD_GUIDE + ")",
            "l2_bytes": "spec: 4 x 128 KB L2 (one per memory channel pair) = 512 KB (AMD Evergreen "
                        "architecture overview); recalled value, verify",
            "limits": "AMD APP guide (Evergreen): max work-group size 256, 32 KB LDS per CU, 256 KB register "
                      "file per CU (65536 x 32-bit), 8 work-groups per CU; 24 wavefronts per CU = 496 "
                      "wavefronts per device / 20 CUs (recalled values, verify)",
            "launch_overhead_ns": LAUNCH_OLD,
            "host_to_device_bytes_per_ns": PCIE.format(gen="2.0", raw=8),
            "device_to_host_bytes_per_ns": PCIE.format(gen="2.0", raw=8),
        },
        notes="Panwar Table I device (Evergreen, VLIW5). Spec-derived; memory curves estimated.",
    ),
    dict(
        name="hd7970", vendor="AMD",
        match={"name_contains": ["Tahiti"], "vendor_contains": "Advanced Micro Devices"},
        compute_units=32, warp_width=64, clock_mhz=925.0,
        per_cu_clock={"int": 64, "fp32": 64, "fp64": 16, "special": 16, "conversion": 16,
                      "branch": 64, "barrier": 64, "atomic": 4, "memory": 16, "other": 64},
        per_clock_source=(AMD_GUIDE + " (Southern Islands/GCN: 4 SIMD16 per CU = 64 lanes/clock, "
                          "2048 PEs x 2 x 0.925 GHz = 3790 GFLOPS = Panwar Table I; fp64 1/4 rate, "
                          "transcendentals 1/4 rate); ESTIMATED: conversion 1/4 rate, branch/barrier on the "
                          "scalar unit at 64 lanes/clock, vector memory issue 16 lanes/clock, atomics 4 "
                          "lanes/clock"),
        peak_bw=264.0, eff_read=0.75, eff_write=0.70, dram_latency_ns=500.0,
        local_bytes_per_clock_cu=128, local_latency_cycles=64, local_banks=32,
        l2_bytes=786432,
        limits={"max_work_groups_per_cu": 16, "max_warps_per_cu": 40, "registers_per_cu": 65536,
                "register_allocation_unit": 256, "local_mem_per_cu_bytes": 65536,
                "local_mem_allocation_unit": 256, "max_work_group_size": 256},
        launch_overhead_ns=10000.0, h2d=12.6, d2h=12.6,
        sources={
            "_peak_bw": "AMD HD 7970 spec: 384-bit GDDR5 at 5.5 Gbps = 264 GB/s (Panwar Table I lists 154 GB/s; "
                        "entries for HD 5870/7970 appear swapped)",
            "_local": "AMD APP guide (GCN): LDS 32 banks x 4 B per clock per CU",
            "compute_units": "spec: 32 CUs (Panwar Table I)",
            "warp_width": "spec: wavefront of 64 (" + AMD_GUIDE + ")",
            "clock_mhz": "spec: 925 MHz engine clock (AMD HD 7970 product specification)",
            "sector_bytes": "emulator sector size (DESIGN.md 5); Panwar Table I: 64-B transactions",
            "line_bytes": "emulator line size (DESIGN.md 5)",
            "local_banks": "spec: 32 LDS banks (Panwar Table I)",
            "bank_bytes": "spec: 4-byte banks (AMD GCN architecture whitepaper)",
            "l2_bytes": "spec: 768 KB L2 (AMD Graphics Core Next whitepaper, 2012)",
            "limits": "AMD APP guide (Southern Islands): max work-group size 256, 64 KB LDS per CU "
                      "(256-B allocation granularity), 4 x 64 KB VGPR file per CU = 65536 x 32-bit, VGPRs "
                      "allocated in groups of 4 per lane (256 per wavefront), 10 wavefronts per SIMD = 40 per "
                      "CU, 16 work-groups per CU (recalled values, verify)",
            "launch_overhead_ns": LAUNCH_OLD,
            "host_to_device_bytes_per_ns": PCIE.format(gen="3.0", raw=15.75),
            "device_to_host_bytes_per_ns": PCIE.format(gen="3.0", raw=15.75),
        },
        notes="Panwar Table I device (GCN). Spec-derived; memory curves estimated.",
    ),
    dict(
        name="c1060", vendor="NVIDIA",
        match={"name_contains": ["C1060"], "vendor_contains": "NVIDIA"},
        compute_units=30, warp_width=32, clock_mhz=1296.0,
        per_cu_clock={"int": 8, "fp32": 8, "fp64": 1, "special": 2, "conversion": 8,
                      "branch": 8, "barrier": 8, "atomic": 1, "memory": 8, "other": 8},
        per_clock_source=(CUDA_GUIDE + " (CC 1.3: fp32 add/mul/mad 8, fp64 1, special functions 2, "
                          "32-bit int add/logic/shift/compare 8, conversions 8, __syncthreads 8 per clock "
                          "per SM); ESTIMATED: branch/memory issue/other 8 (one SP-wide issue per clock), "
                          "atomics 1 lane/clock"),
        peak_bw=102.4, eff_read=0.75, eff_write=0.70, dram_latency_ns=400.0,
        local_bytes_per_clock_cu=32, local_latency_cycles=38, local_banks=16,
        l2_bytes=0,
        limits={"max_work_groups_per_cu": 8, "max_warps_per_cu": 32, "registers_per_cu": 16384,
                "local_mem_per_cu_bytes": 16384, "local_mem_allocation_unit": 512,
                "max_work_group_size": 512},
        launch_overhead_ns=7000.0, h2d=6.4, d2h=6.4,
        sources={
            "_peak_bw": "NVIDIA Tesla C1060 board spec: 512-bit GDDR3 at 800 MHz = 102.4 GB/s (Panwar Table I: 102)",
            "_local": "CUDA guide CC 1.x: 16 banks, each 32 bits per two clock cycles = 32 B/clock/SM",
            "compute_units": "spec: 30 SMs (Panwar Table I; NVIDIA Tesla C1060 board specification)",
            "warp_width": "spec: warp of 32 threads (" + CUDA_GUIDE + ")",
            "clock_mhz": "spec: 1.296 GHz processor clock (Tesla C1060 board specification; 240 cores x 3 "
                         "flops x 1.296 GHz = 933 GFLOPS = Panwar Table I)",
            "sector_bytes": "emulator sector size; CC 1.2/1.3 coalesce into 32/64/128-B segments (Panwar "
                            "Table I), the 32-B count is the closest lower bound",
            "line_bytes": "emulator line size (DESIGN.md 5)",
            "local_banks": "spec: 16 shared memory banks (Panwar Table I; CUDA guide CC 1.x)",
            "bank_bytes": "spec: 32-bit banks (CUDA guide CC 1.x)",
            "l2_bytes": "spec: no L2 data cache on GT200 (CUDA guide CC 1.x; Panwar § V-A)",
            "limits": "CUDA guide CC 1.3: 8 blocks/SM, 32 warps/SM, 16384 registers/SM, 16 KB shared/SM "
                      "(512-B allocation unit per CUDA occupancy calculator), 512 threads/block; register "
                      "allocation at block granularity is not modelled",
            "launch_overhead_ns": LAUNCH_OLD,
            "host_to_device_bytes_per_ns": PCIE.format(gen="2.0", raw=8),
            "device_to_host_bytes_per_ns": PCIE.format(gen="2.0", raw=8),
        },
        notes="Panwar Table I device (Tesla GT200). Spec-derived; memory curves estimated.",
    ),
    dict(
        name="c2050", vendor="NVIDIA",
        match={"name_contains": ["C2050"], "vendor_contains": "NVIDIA"},
        compute_units=14, warp_width=32, clock_mhz=1150.0,
        per_cu_clock={"int": 32, "fp32": 32, "fp64": 16, "special": 4, "conversion": 16,
                      "branch": 16, "barrier": 16, "atomic": 4, "memory": 16, "other": 32},
        per_clock_source=(CUDA_GUIDE + " (CC 2.0: fp32 32, fp64 16 on Tesla, special functions 4, "
                          "32-bit int add/logic/compare 32, conversions 16, __syncthreads 16, 16 LD/ST units "
                          "per SM); ESTIMATED: branch 16, atomics 4 lanes/clock"),
        peak_bw=144.0, eff_read=0.75, eff_write=0.70, dram_latency_ns=500.0,
        local_bytes_per_clock_cu=64, local_latency_cycles=50, local_banks=32,
        l2_bytes=786432,
        global_load_granularity="line",
        limits={"max_work_groups_per_cu": 8, "max_warps_per_cu": 48, "registers_per_cu": 32768,
                "register_allocation_unit": 64, "local_mem_per_cu_bytes": 49152,
                "local_mem_allocation_unit": 128, "max_work_group_size": 1024},
        launch_overhead_ns=7000.0, h2d=6.4, d2h=6.4,
        sources={
            "_peak_bw": "NVIDIA Tesla C2050 board spec: 384-bit GDDR5 at 3.0 Gbps = 144 GB/s, ECC off "
                        "(Panwar Table I: 144)",
            "_local": "CUDA guide CC 2.x: 32 banks, each 32 bits per two clock cycles = 64 B/clock/SM",
            "compute_units": "spec: 14 SMs (Panwar Table I)",
            "warp_width": "spec: warp of 32 threads",
            "clock_mhz": "spec: 1.15 GHz processor clock (448 cores x 2 x 1.15 GHz = 1030 GFLOPS = Panwar "
                         "Table I)",
            "sector_bytes": "emulator sector size; Fermi L2 works in 32-B segments (stores)",
            "line_bytes": "spec: 128-B L1 line (NVIDIA Fermi whitepaper; Panwar Table I: 128-B transactions)",
            "global_load_granularity": "Fermi caches global loads in L1 by default and fetches whole 128-B "
                                       "lines (CUDA guide CC 2.x global memory; Panwar § IV-D)",
            "local_banks": "spec: 32 banks (Panwar Table I)",
            "bank_bytes": "spec: 32-bit banks (CUDA guide CC 2.x)",
            "l2_bytes": "spec: 768 KB unified L2 (NVIDIA Fermi compute architecture whitepaper)",
            "limits": "CUDA guide CC 2.0: 8 blocks/SM, 48 warps/SM, 32768 registers/SM (64 per warp "
                      "allocation unit), 48 KB shared/SM in the 48/16 split (128-B allocation unit), 1024 "
                      "threads/block (CUDA occupancy calculator)",
            "launch_overhead_ns": LAUNCH_OLD,
            "host_to_device_bytes_per_ns": PCIE.format(gen="2.0", raw=8),
            "device_to_host_bytes_per_ns": PCIE.format(gen="2.0", raw=8),
        },
        notes="Panwar Table I device (Fermi). Spec-derived; memory curves estimated.",
    ),
]

HOPPER_PER_CLOCK = {"int": 64, "fp32": 128, "fp64": 64, "special": 16, "conversion": 16,
                    "branch": 64, "barrier": 16, "atomic": 16, "memory": 32, "other": 64}
HOPPER_SRC = (CUDA_GUIDE + " (CC 9.0: fp32 128, fp64 64, special functions 16, 32-bit int add/compare/mul "
              "64, conversions 16; 32 LD/ST units per SM, NVIDIA H100 Tensor Core GPU Architecture "
              "whitepaper); ESTIMATED: branch 64, __syncthreads 16 (as CC 8.x), atomics 16 lanes/clock")
SPEC_NOTE = "spec; to be replaced by `clprism characterize` measurement"
for name, match, bw, bw_src, notes in [
    ("h100-sxm", {"name_contains": ["H100", "HBM3"], "vendor_contains": "NVIDIA"}, 3350.0,
     "NVIDIA H100 SXM5 datasheet: 80 GB HBM3, 3.35 TB/s", "NVIDIA H100 SXM5 80GB (GH100). " + SPEC_NOTE + "."),
    ("h200", {"name_contains": ["H200"], "vendor_contains": "NVIDIA"}, 4800.0,
     "NVIDIA H200 datasheet: 141 GB HBM3e, 4.8 TB/s", "NVIDIA H200 SXM 141GB (GH100). " + SPEC_NOTE + "."),
]:
    DEVICES.append(dict(
        name=name, vendor="NVIDIA", match=match,
        compute_units=132, warp_width=32, clock_mhz=1980.0,
        per_cu_clock=HOPPER_PER_CLOCK, per_clock_source=HOPPER_SRC,
        peak_bw=bw, eff_read=0.90, eff_write=0.88, dram_latency_ns=500.0,
        local_bytes_per_clock_cu=128, local_latency_cycles=30, local_banks=32,
        l2_bytes=52428800,
        limits={"max_work_groups_per_cu": 32, "max_warps_per_cu": 64, "registers_per_cu": 65536,
                "register_allocation_unit": 256, "local_mem_per_cu_bytes": 233472,
                "local_mem_allocation_unit": 128, "max_work_group_size": 1024},
        launch_overhead_ns=5000.0, h2d=50.4, d2h=50.4,
        sources={
            "_peak_bw": bw_src + " (" + SPEC_NOTE + ")",
            "_local": "CUDA guide CC 5.x+: 32 banks, each 32 bits per clock = 128 B/clock/SM",
            "compute_units": "spec: 132 SMs (NVIDIA H100 whitepaper, SXM5) (" + SPEC_NOTE + ")",
            "warp_width": "spec: warp of 32 threads",
            "clock_mhz": "spec: 1980 MHz max boost (67 TFLOPS FP32 = 132 x 128 x 2 x 1.98 GHz, datasheet) (" + SPEC_NOTE + ")",
            "sector_bytes": "spec: 32-B sectors (CUDA guide, global memory accesses CC 5.x+)",
            "line_bytes": "spec: 128-B cache lines (CUDA guide)",
            "local_banks": "spec: 32 banks (CUDA guide CC 9.0)",
            "bank_bytes": "spec: 4-byte banks (CUDA guide CC 9.0)",
            "l2_bytes": "spec: 50 MB L2 (NVIDIA H100 whitepaper) (" + SPEC_NOTE + ")",
            "limits": "CUDA guide CC 9.0: 32 blocks/SM, 64 warps/SM, 65536 registers/SM (256 per warp "
                      "allocation unit), 228 KB shared memory/SM, 1024 threads/block (" + SPEC_NOTE + ")",
            "launch_overhead_ns": "ESTIMATED: ~5 us OpenCL launch-to-start on current NVIDIA drivers; " + SPEC_NOTE,
            "host_to_device_bytes_per_ns": PCIE.format(gen="5.0", raw=63) + "; " + SPEC_NOTE,
            "device_to_host_bytes_per_ns": PCIE.format(gen="5.0", raw=63) + "; " + SPEC_NOTE,
        },
        notes=notes,
    ))

if __name__ == "__main__":
    for d in DEVICES:
        p = build(d)
        path = os.path.join(OUT, d["name"] + ".json")
        with open(path, "w") as f:
            f.write(dumps(p))
        print("wrote", path)
