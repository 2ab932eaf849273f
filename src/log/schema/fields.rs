//! The table of every record field (path, type, unit, meaning) behind `docs/log-schema.md`,
//! and `clprism schema`.

use super::*;

/// One row of the schema table: a key path, its JSON type, unit and meaning.
#[derive(Debug, Clone, Copy)]
pub struct FieldDoc {
    /// Key path (`schedule.chunks[].device`).
    pub path: &'static str,
    /// JSON type (`u64`, `string`, `[u64]`, `u64|null`, ...; `?` = may be absent).
    pub ty: &'static str,
    /// Unit (ns, ms, bytes, work-items, work-groups, ...), empty when none.
    pub unit: &'static str,
    /// Meaning.
    pub meaning: &'static str,
}

macro_rules! fields {
    ($(($p:literal, $t:literal, $u:literal, $m:literal)),* $(,)?) => {
        &[$(FieldDoc { path: $p, ty: $t, unit: $u, meaning: $m }),*]
    };
}

/// The schema table (`docs/log-schema.md`); a unit test checks it against the types.
#[rustfmt::skip]
pub const FIELDS: &[FieldDoc] = fields![
    ("schema", "string", "", "schema version, `clprism.launch/2` (readers also take `clprism.launch/1`)"),
    ("record", "string?", "", "`emulation`: an emulation definition line, not a launch (only `schema`, `record`, `key`, `pid`, `kernel`, `program`, `emulation`, `projection`); `device`: a device definition line (only `schema`, `record`, `pid`, `device`, `vendor`, `version`, `driver_version`, `max_compute_units`)"),
    ("vendor", "string?", "", "device line: `CL_DEVICE_VENDOR`"),
    ("version", "string?", "", "device line: `CL_DEVICE_VERSION` (PoCL: `HSTR: pthread-...`)"),
    ("driver_version", "string?", "", "device line: `CL_DRIVER_VERSION`"),
    ("max_compute_units", "u32?", "", "device line: `CL_DEVICE_MAX_COMPUTE_UNITS`"),
    ("key", "u64?", "", "definition line: id of the emulation key, unique per `pid`"),
    ("seq", "u64", "", "launch sequence number in the process, from 0, in enqueue order"),
    ("time_ns", "u64", "ns", "wall-clock time of the enqueue, since the Unix epoch"),
    ("pid", "u32", "", "process id"),
    ("thread", "u64", "", "OS thread id of the enqueuing thread"),
    ("mode", "string", "", "`CLPRISM_MODE`: `log`, `project`, `balance`"),
    ("kernel", "string", "", "kernel function name"),
    ("program", "string", "", "16 hex digits identifying the program: its content (source, IL or binaries) and its build options, so one source built with other `-D` values is another program (without options: the content alone; older logs hold the content alone for every program)"),
    ("work_dim", "u32", "", "NDRange dimensions (1..3)"),
    ("global", "[u64]", "work-items", "global size per dimension"),
    ("local", "[u64]|null", "work-items", "local size per dimension; null: the driver chose"),
    ("offset", "[u64]|null", "work-items", "global offset per dimension; null: none"),
    ("device.index", "string", "", "`platform:device` of the app's queue (`?`: sub-device)"),
    ("device.name", "string", "", "`CL_DEVICE_NAME`"),
    ("device.type", "string", "", "`gpu`, `cpu`, `accelerator` or `other`"),
    ("status", "string", "", "`complete`, `failed`, `enqueue_failed`, `incomplete`, `no_profiling`, `untimed`"),
    ("error_code", "i32?", "", "driver error code of `failed` / `enqueue_failed`"),
    ("device_ns", "u64|null", "ns", "device time (`END − START`; balanced: the chunks' makespan)"),
    ("queued_ns", "u64|null", "ns", "submission to start (`START − SUBMIT`)"),
    ("timing_p", "f64?", "", "probability this timed launch had of being timed, when below 1 (`CLPRISM_DEVICE_TIMING`); absent: 1"),
    ("emulation.key", "u64?", "", "reference: the definition line (`record`, same `pid`) holding `stats`, `reason`, `local_assumed`"),
    ("emulation.status", "string", "", "`ok`, `reused`, `unavailable`, `error`"),
    ("emulation.reason", "string?", "", "why not emulated (absent when ok / reused)"),
    ("emulation.reused", "bool", "", "the result is an earlier launch's of the same key"),
    ("emulation.stats", "object?", "", "`emu::stats::WorkGroupStats` of the emulated work-group (`emulation_ns`: wall time, ns)"),
    ("emulation.local_assumed", "[u64]?", "work-items", "local size assumed when the app gave none"),
    ("emulation.compile_path", "string?", "", "how the program was compiled to SPIR-V: `O2` (clang -O2), `O0+opt` (llvm-spirv rejected -O2: -O0 cleaned up by LLVM's `opt`), `O2-lowered` (rejected, and no `opt` or its output rejected too: -O2 without vectorizers, the intrinsics llvm-spirv 15 rejects lowered), `O0` (none of these accepted: plain -O0, private variables counted as memory); absent: from IL or an older cache entry"),
    ("emulation.footprint_sector", "u32?", "bytes", "definition line: `stats.footprints` widened to whole sectors of this size and merged (when over 256 ranges)"),
    ("emulation.snapshot_bytes", "u64?", "bytes", "device-side snapshot copies taken at the launch: the buffer arguments the kernel may write (bounded by `CLPRISM_EMU_SNAPSHOT_MAX`)"),
    ("emulation.snapshot_deferred_bytes", "u64?", "bytes", "buffer arguments the kernel only reads, not copied at the launch: read from the app's buffers (copy on write; absent when none)"),
    ("emulation.snapshot_later_bytes", "u64?", "bytes", "deferred buffers copied later, before the app wrote them during the emulation (absent when none)"),
    ("emulation.snapshot_lost_bytes", "u64?", "bytes", "deferred buffers written by the app during the emulation whose copy did not fit under the cap (absent when none)"),
    ("emulation.snapshot_wait_ns", "u64?", "ns", "time the app's thread waited for room under `CLPRISM_EMU_SNAPSHOT_MAX` for this launch's copies (bounded: 2 s a copy, 1 s + 10 % of the run in all; absent when none)"),
    ("emulation.snapshot_held_ns", "u64?", "ns", "time app commands writing this launch's deferred buffers were held back on the device, when their copy did not fit, until the emulation had read its pages (bounded: 10 s a command, 10 s + 10 % of the run in all; absent when none)"),
    ("emulation.reused_from", "u64?", "", "definition line: the key whose statistics this key took when its own snapshot could not be taken (same kernel and work-group size, another NDRange)"),
    ("emulation.snapshot_bytes_read", "u64?", "bytes", "snapshot bytes read back to the host: buffers up to 1 MiB whole, larger ones only the 64 KiB pages the work-group touched"),
    ("emulation.start_unix_ns", "u64?", "ns", "emulation start since the Unix epoch (read by the trace; not written yet)"),
    ("emulation.launch_shape", "object?", "", "read only (older logs): now `projection.launch_shape`"),
    ("emulation.emulation_ns", "u64?", "ns", "read only (older logs): emulation wall time"),
    ("emulation.budget_exhausted", "bool?", "", "read only (older logs): counts extrapolated"),
    ("emulation.error", "string?", "", "read only (older logs): why the emulation failed"),
    ("projection.key", "u64?", "", "reference: the definition line holding `options`, `devices`, `skipped`, `launch_shape`, `error`"),
    ("projection.options", "object?", "", "`model::ModelOptions` (refinements switched on); absent in a reference"),
    ("projection.devices[].device", "string", "", "profile name"),
    ("projection.devices[].t_compute_ns", "f64", "ns", "instruction time"),
    ("projection.devices[].t_global_ns", "f64", "ns", "global memory time"),
    ("projection.devices[].t_local_ns", "f64", "ns", "local memory time"),
    ("projection.devices[].t_latency_ns", "f64?", "ns", "the serialised-latency chain of `latency_bound` (in `t_global_ns`, which is at least this; equal: a latency-bound launch); absent when 0 and in older logs"),
    ("projection.devices[].bound", "string", "", "`compute`, `global`, `local` or `launch`"),
    ("projection.devices[].projected_ns", "f64", "ns", "projected kernel time, pure model (the anchored time is derived by readers: `device_ns` × this / the launch device's)"),
    ("projection.devices[].rank", "u32", "", "1 = fastest; ties share a rank"),
    ("projection.devices[].occupancy", "f64", "fraction", "occupancy used for the throughput curves"),
    ("projection.devices[].limiter", "string", "", "resource limiting occupancy: `work_group_slots`, `warps`, `registers`, `local_memory`"),
    ("projection.devices[].active_work_groups_per_cu", "u64", "work-groups", "resident work-groups per compute unit"),
    ("projection.devices[].waves", "u64", "waves", "`ceil(W / (active WGs per CU × CUs))`"),
    ("projection.skipped[].device", "string", "", "profile that could not run the launch"),
    ("projection.skipped[].reason", "string", "", "why"),
    ("projection.launch_shape", "object?", "", "`model::LaunchShape` projected with"),
    ("projection.launch_device_profile", "string|null", "", "profile of the launch's own device"),
    ("projection.error", "string?", "", "why no device could be projected"),
    ("projection.best", "string?", "", "reference: fastest profile (hand-written logs too; else rank 1)"),
    ("projection.launch_device_ns", "f64?", "ns", "reference: projected time on the launch's own device"),
    ("projection.launch_device_rank", "u32?", "", "reference: rank of the launch's own device"),
    ("schedule.scheduler", "string?", "", "`CLPRISM_SCHEDULER` in effect"),
    ("schedule.warm_start", "bool?", "", "started from the previous launch's measured speeds"),
    ("schedule.split_decision", "object|null?", "", "`CLPRISM_SPLIT=auto` decision; null: not consulted"),
    ("schedule.split_decision.split", "bool", "", "split across devices (else whole on the app's device)"),
    ("schedule.split_decision.reason", "string", "", "why, in words"),
    ("schedule.split_decision.est_home_ns", "f64|null", "ns", "estimated time whole on the app's device"),
    ("schedule.split_decision.est_split_ns", "f64|null", "ns", "estimated time split, transfers included"),
    ("schedule.split_decision.est_transfer_ns", "f64|null", "ns", "estimated transfer time"),
    ("schedule.split_decision.upload_bytes", "u64?", "bytes", "bytes the other devices need uploaded"),
    ("schedule.split_decision.host_rate_measured", "bool?", "", "host transfer rate measured (else assumed)"),
    ("schedule.devices_excluded[].index", "string", "", "`platform:device` of a device that sat out"),
    ("schedule.devices_excluded[].reason", "string", "", "why it sat out"),
    ("schedule.devices[].index", "string", "", "`platform:device` of a device taking part"),
    ("schedule.devices[].name", "string", "", "`CL_DEVICE_NAME`"),
    ("schedule.split_dim", "u32?", "", "NDRange dimension split (0-based)"),
    ("schedule.work_groups", "u64?", "units", "units along the split dimension"),
    ("schedule.wgs_per_unit", "u64?", "work-groups", "work-groups per unit"),
    ("schedule.wave_work_groups", "[u64]?", "work-groups", "one wave per device (occupancy)"),
    ("schedule.registers_per_work_item", "[u32|null]?", "registers", "per device build; null: unknown"),
    ("schedule.chunks[].device", "usize", "", "position in `schedule.devices`"),
    ("schedule.chunks[].first_wg", "u64", "units", "first unit of the chunk"),
    ("schedule.chunks[].count", "u64", "units", "units in the chunk"),
    ("schedule.chunks[].work_groups", "u64", "work-groups", "`count × wgs_per_unit`"),
    ("schedule.chunks[].enqueue_ns", "u64", "ns", "enqueue, since the launch's start (host)"),
    ("schedule.chunks[].failed", "i32?", "", "driver error of a failed enqueue (work reassigned)"),
    ("schedule.chunks[].abandoned", "bool?", "", "abandoned as a straggler (only written when true)"),
    ("schedule.chunks[].end_ns", "u64?", "ns", "completion seen, since the launch's start (host)"),
    ("schedule.chunks[].device_ns", "u64?", "ns", "device time of the chunk (`END − START`)"),
    ("schedule.chunks[].start_ns", "u64?", "ns", "`end_ns − device_ns`"),
    ("schedule.share", "[f64]?", "fraction", "work-groups each device ran"),
    ("schedule.idle_tail_ns", "u64?", "ns", "first to last device finishing"),
    ("schedule.makespan_ns", "u64?", "ns", "first enqueue to last completion"),
    ("schedule.merge", "string?", "", "`footprint`, `diff`, `resident` (left on the devices) or `none` (forwarded)"),
    ("schedule.merged_bytes", "u64?", "bytes", "copied into the app's buffers by the merge"),
    ("schedule.fetched_bytes", "u64?", "bytes", "copied onto the devices by the buffer directory before their chunks"),
    ("schedule.resident_bytes", "u64?", "bytes", "of the launch's buffers held only by devices after it"),
    ("schedule.launch_thread", "bool?", "", "run by clprism's launch thread, the app's enqueue returned at once (only written when true)"),
    ("schedule.issued_ns", "u64?", "ns", "for a launch issued ahead: when the launch thread took it up, after time_ns; its chunks' and phases' times count from then"),
    ("schedule.pushed_bytes", "u64?", "bytes", "halo bytes copied behind this launch's chunks for the launch that followed it last time (CLPRISM_BALANCE_PUSH), which then finds them in place (only written when some were)"),
    ("schedule.issued_ahead", "bool?", "", "planned and its chunks enqueued while the app's previous launch ran, behind it on each device (CLPRISM_BALANCE_PIPELINE): chunk and phase times count from that issue, wall_ns from the previous launch's end (only written when true)"),
    ("schedule.early_read_chunks", "u64?", "chunks", "read back while others still ran"),
    ("schedule.pinned_staging_bytes", "u64?", "bytes", "pinned host staging memory held"),
    ("schedule.footprint", "object|null?", "", "how the footprint model was obtained; null: not needed"),
    ("schedule.footprint.derived_ms", "f64?", "ms", "time to derive it by emulation"),
    ("schedule.footprint.sampled_groups", "u64?", "work-groups", "work-groups emulated"),
    ("schedule.footprint.skipped_loops", "u64?", "loops", "write-free loops jumped over"),
    ("schedule.footprint.from_cache", "bool?", "", "read from the on-disk cache"),
    ("schedule.footprint.reason", "string?", "", "why there is no usable model (merge by diff)"),
    ("schedule.app_device_direct", "bool?", "", "the app's device ran on the app's buffers"),
    ("schedule.phases[].name", "string", "", "host phase (`build`, `footprint`, ...)"),
    ("schedule.phases[].start_ns", "u64", "ns", "since the launch's start"),
    ("schedule.phases[].end_ns", "u64", "ns", "since the launch's start"),
    ("schedule.local_chosen", "bool?", "", "clprism chose the local size"),
    ("schedule.fallback", "string|null", "", "why forwarded unsplit; null: balanced path"),
    ("schedule.best", "object|null?", "", "`best` scheduler's choice; null: another scheduler"),
    ("schedule.best.by", "string", "", "`projection`, `measured`, `first-try`"),
    ("schedule.best.device", "usize", "", "chosen position among the balance devices"),
    ("schedule.best.projected_ns", "[f64|null]|null", "ns", "projected time per device"),
    ("schedule.best.profiles", "[string|null]", "", "device profile per device"),
    ("schedule.best.measured_ns_per_wg", "[f64|null]", "ns/work-group", "measured speed per device"),
    ("schedule.best.cached", "bool", "", "projection from the per-shape cache"),
    ("schedule.best.choose_ms", "f64", "ms", "time to choose"),
    ("schedule.best.inputs", "string?", "", "`zero-filled`: emulated on zero-filled buffers"),
    ("schedule.best.reason", "string?", "", "why the projection was not used"),
    ("schedule.verify.differing_bytes", "u64?", "bytes", "`CLPRISM_VERIFY`: bytes differing from a native run"),
    ("schedule.verify.error", "string?", "", "`CLPRISM_VERIFY`: why no comparison"),
    ("schedule.wall_ns", "u64?", "ns", "wall time of the balanced launch on the thread that ran it"),
    ("schedule.started_ns", "u64?", "ns", "when the launch thread began the launch, after the app's enqueue (`time_ns`)"),
    ("schedule.one_device_reason", "string?", "", "why a balanced-path launch ran on one device"),
    ("schedule.devices_ready_ms", "f64?", "ms", "when the balance devices became ready, since the first OpenCL call (on every record once they are open)"),
    ("schedule.decision_ns", "u64?", "ns", "time spent on the app's thread before forwarding"),
    ("schedule.probe.work_groups", "u64", "work-groups", "a kernel's first launch: work-groups its probe chunk ran on the app's device before the balanced rest"),
    ("schedule.probe.of_work_groups", "u64", "work-groups", "work-groups of the whole launch"),
    ("schedule.probe.device_ns", "u64", "ns", "the probe's device time on the app's device"),
    ("schedule.t0_unix_ns", "u64?", "ns", "launch start since the Unix epoch (read by the trace; not written yet)"),
    ("schedule.transfers[].device", "usize?", "", "read by the trace; not written yet"),
    ("schedule.transfers[].kind", "string?", "", "read by the trace; not written yet"),
    ("schedule.transfers[].bytes", "u64?", "bytes", "read by the trace; not written yet"),
    ("schedule.transfers[].start_ns", "u64?", "ns", "read by the trace; not written yet"),
    ("schedule.transfers[].end_ns", "u64?", "ns", "read by the trace; not written yet"),
];

/// `docs/log-schema.md`: the table of [`FIELDS`].
pub fn markdown() -> String {
    let mut s = String::from(
        "# Per-kernel log schema (`clprism.launch/2`)\n\n\
         Generated from `src/log/schema.rs` (`FIELDS`); do not edit. Regenerate with\n\
         `clprism schema --markdown > docs/log-schema.md` or\n\
         `CLPRISM_BLESS=1 cargo test --lib log::schema`.\n\n\
         One JSON object per kernel launch, one per line. Type `?`: the key may be absent;\n\
         `|null`: present but null. `emulation` and `projection` are written in project mode,\n\
         `schedule` in balance mode. Times in `schedule` are host times since the start of\n\
         the balanced launch unless said otherwise.\n\n\
         Project mode writes the emulation of each key (program, kernel, NDRange, `__local`\n\
         sizes) once, in a definition line (`\"record\": \"emulation\"`, its `key`, the full\n\
         `emulation` and the device-independent `projection`), just before the first launch\n\
         record that refers to it; launch records carry references: `emulation` with `key`,\n\
         `status`, `reused`, and `projection` with `key`, `launch_device_profile`,\n\
         `launch_device_ns`, `launch_device_rank`, `best`. Readers resolve them (per `pid`)\n\
         into the self-contained records of version 1 (`clprism.launch/1`, still read);\n\
         `clprism schema --expand LOG` writes that expanded form.\n\n\
         Every mode writes, once per device and process, a device definition line\n\
         (`\"record\": \"device\"`: `pid`, `device` as the launches name it, `vendor`,\n\
         `version`, `driver_version`, `max_compute_units`) before the first launch record\n\
         naming the device, so that readers match the device to a profile as project mode\n\
         does (`clprism accuracy --measured`).\n\n\
         Anchored projection (project mode): `projection.devices[].projected_ns` is the\n\
         model's figure. Readers (`clprism report`, `clprism accuracy`) also show, for a\n\
         timed launch whose own device has a profile, the anchored time on every other\n\
         profile, `device_ns × projected_ns(other) / projected_ns(launch device)` (Habitat,\n\
         Yu et al. ATC'21); it is not written, since `device_ns` and the model figures hold\n\
         it, and it ranks the devices as the model does.\n\n\
         | path | type | unit | meaning |\n|---|---|---|---|\n",
    );
    for f in FIELDS {
        s.push_str(&format!(
            "| `{}` | `{}` | {} | {} |\n",
            f.path,
            f.ty.replace('|', "\\|"),
            f.unit,
            f.meaning.replace('|', "\\|")
        ));
    }
    s
}

/// `clprism schema --markdown`: prints `docs/log-schema.md`; `clprism schema --check
/// LOG.jsonl...`: checks that every record of the logs is exactly what the schema describes
/// ([`round_trip`]). Returns the exit code.
pub fn schema_main(args: &[String]) -> i32 {
    match args.first().map(String::as_str) {
        Some("--markdown") if args.len() == 1 => {
            print!("{}", markdown());
            0
        }
        Some("--expand") if args.len() == 2 => match std::fs::read_to_string(&args[1]) {
            Ok(t) => {
                print!("{}", expand(&t));
                0
            }
            Err(e) => {
                eprintln!("clprism schema: {}: {e}", args[1]);
                1
            }
        },
        Some("--check") if args.len() > 1 => {
            let mut bad = 0usize;
            for f in &args[1..] {
                let text = match std::fs::read_to_string(f) {
                    Ok(t) => t,
                    Err(e) => {
                        eprintln!("clprism schema: {f}: {e}");
                        return 1;
                    }
                };
                for (i, l) in text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                {
                    if let Err(e) = round_trip(l) {
                        bad += 1;
                        eprintln!("{f}:{}: {e}", i + 1);
                    }
                }
            }
            i32::from(bad > 0)
        }
        _ => {
            eprintln!(
                "usage: clprism schema --markdown          print the log schema table (docs/log-schema.md)\n       \
                 clprism schema --check LOG.jsonl...  check every record against the schema\n       \
                 clprism schema --expand LOG.jsonl    print the log with references resolved (version 1 form)"
            );
            2
        }
    }
}
