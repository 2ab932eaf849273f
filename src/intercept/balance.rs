//! Balance-mode side of `clEnqueueNDRangeKernel`: checks that a launch can be split, enqueues
//! the start/end markers on the application's queue and hands the launch to `exec`
//! (DESIGN.md §7, "Ordering"). Also marks replicas stale when the app writes a buffer.

use super::launch::Launch;
use crate::exec::{self, cl, Forward, Job};
use crate::log::LaunchRecord;
use crate::registry::tables::{
    buffer_named_by, handle_named_by, KernelArg, KernelBalance, Key, ProgramOrigin, UNMAPPED_BINARY,
};
use crate::registry::TABLES;
use once_cell::sync::OnceCell;
use opencl_sys::*;

/// Work-items per work-group that [`choose_local`] aims at on a GPU or an accelerator: 256.
/// With 64, BabelStream's copy (268,435,456 work-items, the app passes no local size) split
/// over 2 H200s ran each half in 1.27 ms against 0.78 ms for the whole array natively: two
/// million work-groups per chunk (results/session26-2026-11-28 `d/`).
const GPU_LOCAL_ITEMS: usize = 256;

/// Picks a local size when the application passed none, so that every device runs the same
/// work-groups: per dimension the largest divisor of the global size not above a target of
/// 64 / (8,8) / (4,4,4) work-items, or on a GPU (`gpu_cap`: the kernel's largest work-group
/// there, `CL_KERNEL_WORK_GROUP_SIZE`) [`GPU_LOCAL_ITEMS`] or that largest work-group if
/// smaller, as 256 / (16,16) / (8,8,4).
pub fn choose_local(dim: usize, global: &[usize; 3], gpu_cap: Option<usize>) -> [usize; 3] {
    let target: [usize; 3] = match (dim, gpu_cap) {
        (1, None) => [64, 1, 1],
        (2, None) => [8, 8, 1],
        (_, None) => [4, 4, 4],
        (_, Some(cap)) => {
            let t = cap.clamp(1, GPU_LOCAL_ITEMS);
            match dim {
                1 => [t, 1, 1],
                2 => [16.min(t), (t / 16).max(1), 1],
                _ => {
                    let (x, y) = (8.min(t), 8.min((t / 8).max(1)));
                    [x, y, (t / (x * y)).max(1)]
                }
            }
        }
    };
    let mut l = [1usize; 3];
    for d in 0..dim {
        l[d] = (1..=target[d])
            .rev()
            .find(|c| global[d].is_multiple_of(*c))
            .unwrap_or(1);
    }
    l
}

/// The largest work-group kernel `k` runs on the device of queue `q`, when that device is a
/// GPU or an accelerator ([`choose_local`]); `None` otherwise or when a query fails.
fn gpu_work_group_cap(q: cl_command_queue, k: cl_kernel) -> Option<usize> {
    // SAFETY: the app's queue and kernel of the launch being intercepted.
    let dev = unsafe { cl::queue_device(q) }.ok()?;
    if !crate::registry::device::is_gpu_like(dev) {
        return None;
    }
    // SAFETY: as above; the device is the queue's.
    unsafe { cl::kernel_work_group_size(k, dev) }
}

/// Every buffer argument of kernel `k` may have been written by a native launch, except
/// `unwritten`: the buffers exec found the kernel only reads when it handed the launch back
/// ([`exec::Forward::unwritten`]).
///
/// Called for every forwarded launch: the argument handles are copied out of the kernel's
/// entry onto the stack (no per-launch allocation, no nested table locks) and checked
/// against the buffer table afterwards.
pub fn invalidate_args(k: cl_kernel, unwritten: &[Key]) {
    const INLINE: usize = 32;
    let mut handles = [0 as Key; INLINE];
    let n = TABLES
        .kernels
        .with(k as Key, |i| {
            let mut n = 0;
            for h in i.args.iter().flatten().filter_map(handle_named_by) {
                if n < INLINE {
                    handles[n] = h;
                }
                n += 1;
            }
            n
        })
        .unwrap_or(0);
    let invalidate = |m: Key| {
        if !unwritten.contains(&m) && TABLES.buffers.with(m, |_| ()).is_some() {
            exec::invalidate(m);
        }
    };
    if n <= INLINE {
        handles[..n].iter().copied().for_each(invalidate);
        return;
    }
    // more handle-sized arguments than fit: read them again, copied
    let args = TABLES
        .kernels
        .with(k as Key, |i| i.args.clone())
        .unwrap_or_default();
    known_buffers(&args).for_each(invalidate);
}

/// A launch of kernel `k` runs on the app's device as the app made it (forwarded, or a
/// probe chunk on the app's queue): every buffer argument is brought up to date from the
/// balance devices first (`exec::gather_for_app`; one atomic load while no buffer is
/// tracked).
pub fn gather_args(k: cl_kernel) {
    // a launch still on clprism's launch thread may leave bytes on the devices
    exec::settle_launches();
    if !exec::directory_in_use() {
        return;
    }
    let args = TABLES
        .kernels
        .with(k as Key, |i| i.args.clone())
        .unwrap_or_default();
    known_buffers(&args).for_each(exec::gather_for_app);
}

/// The buffers clprism knows among kernel arguments `args`.
fn known_buffers(args: &[Option<KernelArg>]) -> impl Iterator<Item = Key> + '_ {
    args.iter()
        .flatten()
        .filter_map(handle_named_by)
        .filter(|m| TABLES.buffers.with(*m, |_| ()).is_some())
}

/// The tables' entries of kernel `k` and of its program.
fn kernel_and_program(
    k: cl_kernel,
) -> Result<
    (
        crate::registry::tables::KernelInfo,
        crate::registry::tables::ProgramInfo,
    ),
    Forward,
> {
    let kinfo = TABLES
        .kernels
        .get(k as Key)
        .ok_or("kernel unknown to clprism")?;
    let prog = TABLES
        .programs
        .get(kinfo.program)
        .ok_or("program unknown to clprism")?;
    Ok((kinfo, prog))
}

/// What balance mode derives once per kernel object ([`KernelBalance`]): its measurement
/// key and whether its program's origin and source allow a split. `Err`: the kernel or its
/// program is not (or no longer) in the tables; nothing is cached then.
fn kernel_facts(k: cl_kernel) -> Result<KernelBalance, Forward> {
    let (kinfo, prog) = kernel_and_program(k)?;
    static READING: OnceCell<exec::Reason> = OnceCell::new();
    let verdict = match &prog.origin {
        ProgramOrigin::Source(src) => match exec::source_verdict_ready(&prog, src) {
            Some(v) => v,
            // nothing is cached: a later launch asks again
            None => {
                return Err(exec::reason(
                    &READING,
                    "kept whole on the app's device: the program's #includes are being read \
                     in the background",
                )
                .into())
            }
        },
        ProgramOrigin::Binary(_) => Err(format!(
            "{UNMAPPED_BINARY}: NDRange queries cannot be rewritten"
        )),
        ProgramOrigin::Il(_) => {
            Err("program created from IL: NDRange queries cannot be rewritten".to_string())
        }
        _ => Err("program origin unknown to clprism (linked or built-in)".to_string()),
    };
    Ok(KernelBalance {
        id: exec::kernel_id(&prog, &kinfo.name).into(),
        verdict: verdict.map_err(std::sync::Arc::from),
    })
}

/// Tries to run `launch` balanced. `Ok(code)`: handled (code from the driver's marker
/// enqueue); `Err(forward)`: the caller runs it natively, logs the reason and applies the
/// rest of the hand-back (unwritten buffers, a measurement to take).
///
/// # Safety
/// `event` is null or writable, as received by the hook.
pub unsafe fn try_balance(
    launch: &mut Launch,
    event: *mut cl_event,
    rec: &LaunchRecord,
) -> Result<cl_int, Forward> {
    static ONE_GROUP: OnceCell<exec::Reason> = OnceCell::new();
    static UNSET_ARGS: OnceCell<exec::Reason> = OnceCell::new();
    if launch.work_groups().is_some_and(|g| g < 2) {
        // checked first: the cheapest verdict, and launch-latency loops are full of these
        return Err(exec::reason(
            &ONE_GROUP,
            "kept whole on the app's device: one work-group cannot be split",
        )
        .into());
    }
    let (q, k) = (launch.queue, launch.kernel);
    let kl = TABLES
        .launch_refs(q as Key, k as Key)
        .0
        .ok_or("kernel unknown to clprism")?;
    let facts = match kl.balance.get() {
        Some(f) => f,
        None => {
            let f = kernel_facts(k)?;
            kl.balance.get_or_init(|| f)
        }
    };
    facts.verdict.clone().map_err(Forward::from)?;
    // the arguments may still be set or changed: read under the table's lock, not copied
    match TABLES
        .kernels
        .with(k as Key, |i| i.args.iter().all(Option::is_some))
    {
        None => return Err("kernel unknown to clprism".into()),
        Some(false) => {
            return Err(exec::reason(&UNSET_ARGS, "not every kernel argument is set").into())
        }
        Some(true) => {}
    }
    let dim = launch.work_dim as usize;
    let g = launch.global;
    let l = match launch.local {
        None => choose_local(dim, &g, gpu_work_group_cap(q, k)),
        Some(l) => {
            if (0..dim).any(|d| l[d] == 0 || !g[d].is_multiple_of(l[d])) {
                return Err("global size is not a multiple of the local size".into());
            }
            l
        }
    };
    crate::config::debug(|| format!("try_balance {}", rec.seq));
    let probe = if exec::early::probe_wanted(&facts.id)
        && super::hooks::profiled(q)
        && launch.offset.is_none_or(|o| o == [0; 3])
        && without_range_queries(k)
    {
        probe_first_chunk(launch, l, &facts.id)
    } else {
        None
    };
    let Some(probe) = probe else {
        return balance_rest(launch, l, facts, event, rec, None);
    };
    balance_rest(launch, l, facts, event, rec, Some(&probe)).map_err(|mut f| {
        // the probe gave the kernel its figure: the rest needs no measurement
        f.measure = None;
        f.reason = probe.explain(&f.reason.text()).into();
        f
    })
}

/// A probe chunk that ran before the rest of a kernel's first launch (`exec::early`).
struct Probe {
    /// Work-groups the probe ran.
    work_groups: u64,
    /// Work-groups of the whole launch.
    of: u64,
    /// Its time on the app's device (profiled), ns; 0 when the event gave none.
    ns: u64,
}

impl Probe {
    /// The record's reason for the rest, forwarded after the probe for `why`.
    fn explain(&self, why: &str) -> String {
        format!(
            "first launch: its first {} of {} work-groups ran on the app's device as a probe ({:.3} ms), the rest was forwarded: {why}",
            self.work_groups,
            self.of,
            self.ns as f64 / 1e6
        )
    }
}

/// Whether kernel `k`'s program is source with no NDRange queries (`get_group_id`,
/// `get_global_size`, ...) and no `#include`: a sub-range of its launch then computes what the
/// same work-items compute in the whole launch ([`Launch::sub_range`]).
fn without_range_queries(k: cl_kernel) -> bool {
    let Ok((_, prog)) = kernel_and_program(k) else {
        return false;
    };
    match &prog.origin {
        ProgramOrigin::Source(src) => {
            !exec::program::includes_files(src) && !exec::program::RangeQueries::of(src).any()
        }
        _ => false,
    }
}

/// Runs the first β of the work-groups along the split dimension (the slowest-varying one
/// with more than one work-group, as `exec` splits) of `launch` on the app's queue as a probe,
/// waits for it and notes its profiled time as the kernel's figure on the app's device
/// (`exec::early`). Its first eighth runs alone as a scout: a rest that the scout puts at
/// `CLPRISM_BALANCE_OPEN_COST` or more there starts the opening of the balance devices
/// (`exec::early::open_for_long_launch`) before the probe's other seven eighths run (in
/// chunks of `exec::early::CONTINUATION_CHUNK_NS` while they open, the probe ending when
/// they are ready). While they are still opening, or the program is still being built on
/// them, and the rest would take long, the app's device goes on with further chunks of
/// `exec::early::CONTINUATION_CHUNK_NS` each (at most half the probe), up to seven eighths
/// of the launch, so the other devices join what is left as soon as they are ready instead
/// of the rest being forwarded whole (PolyBench gemm launches 11 ms after its build; four
/// H200 contexts take 0.5 s to open). When the probe was
/// enqueued, `*launch` becomes the rest of the launch. `None` (nothing enqueued): too few
/// work-groups for a probe, or the driver refused the probe's enqueue (the whole launch then
/// goes on as before, so the app gets the driver's own verdict on it).
///
/// # Safety
/// `launch` holds the app's valid handles and wait list.
unsafe fn probe_first_chunk(launch: &mut Launch, local: [usize; 3], kernel: &str) -> Option<Probe> {
    let dim = launch.work_dim as usize;
    let d = (0..dim).rev().find(|&d| launch.global[d] / local[d] > 1)?;
    let along = launch.global[d] / local[d];
    // a probe of one or two work-groups measures the launch overhead, not the kernel
    if along < 8 {
        return None;
    }
    let dev = cl::queue_device(launch.queue).ok()?;
    let first =
        ((along as f64 * exec::early::probe_fraction(dev)).ceil() as usize).clamp(1, along - 1);
    let across: u64 = (0..dim)
        .filter(|&x| x != d)
        .map(|x| (launch.global[x] / local[x]) as u64)
        .product();
    let whole = *launch;
    let t = std::time::Instant::now();
    gather_args(whole.kernel);
    // A scout of an eighth of the probe estimates the rest and starts the opening; the rest of
    // the probe then runs while the devices open. PolyBench gemm's probe (72 of 2,048
    // work-group rows on 4 H200s) took 219 ms before the opening began (session 22, call b).
    let scout = if first >= 16 { first / 8 } else { first };
    let mut ns = run_on_app_queue(&whole.sub_range(d, 0, scout, local))?;
    let rest_ns = ns as f64 / scout as f64 * (along - scout) as f64;
    let program = kernel_and_program(whole.kernel).ok().map(|(_, p)| p);
    if let Some(prog) = &program {
        exec::early::open_for_long_launch(prog, dev, rest_ns);
    }
    let preparing = || match &program {
        Some(prog) => exec::early::devices_preparing(prog),
        None => exec::early::devices_opening(),
    };
    // The rest of the probe: in one chunk, or, while the devices open, in short ones, so that
    // it ends soon after they are ready (gemm on 2 H200s: a 400 ms rest of the probe kept
    // them waiting 120 ms; session 25), the probe then being the work-groups run so far; or
    // not at all when the scout alone settles the decision (`exec::early::scout_suffices`).
    let ready = program.as_ref().is_some_and(exec::early::devices_ready);
    let mut first = if exec::early::scout_suffices(ready, rest_ns) {
        scout
    } else {
        first
    };
    let mut done = scout;
    while done < first {
        let opening = preparing();
        let chunk = if opening {
            exec::early::continuation_units(ns as f64 / done as f64, first).min(first - done)
        } else {
            first - done
        };
        match run_on_app_queue(&whole.sub_range(d, done, chunk, local)) {
            Some(t) => ns += t,
            // nothing enqueued: the probe is what ran
            None => break,
        }
        done += chunk;
        if opening && !preparing() {
            break;
        }
    }
    first = done;
    exec::early::note_probe(kernel, ns, first as u64 * across);
    // then up to seven eighths of the launch: until the devices are open and the program is
    // built on them (the launch thread would wait for both with the app's device idle);
    // before session 25 up to half, and only while the devices opened (PolyBench 2mm on 2
    // H200s: its first kernel's other half was forwarded whole 41 ms before they were open)
    let bound = along - along / 8;
    while done < bound && preparing() {
        let per_unit = ns as f64 / done as f64;
        if per_unit * ((along - done) as f64) < exec::OPEN_MIN_LAUNCH_NS * 4.0 {
            break;
        }
        // short chunks (growing them by Boyer's 1.5 overshot the opening of four H200s by up
        // to 480 ms; half the probe kept the devices waiting 104 ms for gemm on 2 H200s)
        let chunk = exec::early::continuation_units(per_unit, first).min(bound - done);
        match run_on_app_queue(&whole.sub_range(d, done, chunk, local)) {
            Some(t) => ns += t,
            // nothing enqueued: the rest goes on from here
            None => break,
        }
        done += chunk;
    }
    crate::config::debug(|| {
        format!(
            "probe of {kernel}: {first} of {along} work-groups along dimension {d}, then {} more \
             while the devices opened: {:.3} ms on the device, {:.3} ms waited",
            done - first,
            ns as f64 / 1e6,
            t.elapsed().as_secs_f64() * 1e3
        )
    });
    *launch = whole.sub_range(d, done, along - done, local);
    Some(Probe {
        work_groups: done as u64 * across,
        of: along as u64 * across,
        ns,
    })
}

/// Enqueues `part` on the app's queue and waits for it: its profiled device time in ns (0
/// when the wait or the profiling query failed), or `None` when the driver refused the
/// enqueue (nothing ran).
///
/// # Safety
/// `part` holds the app's valid handles and wait list.
unsafe fn run_on_app_queue(part: &Launch) -> Option<u64> {
    exec::note_app_command(part.queue as usize);
    let mut ev: cl_event = std::ptr::null_mut();
    if part.forward(None, &mut ev) != CL_SUCCESS || ev.is_null() {
        return None;
    }
    let ns = match cl::wait(&[ev]) {
        Ok(()) => exec::event_device_ns(ev).unwrap_or(0),
        Err(_) => 0,
    };
    cl::release_event(ev);
    Some(ns)
}

/// The part of [`try_balance`] after the cheap refusals and the probe: the opening, the early
/// decision and the balanced run of `launch` with local size `l`.
///
/// # Safety
/// As [`try_balance`].
unsafe fn balance_rest(
    launch: &Launch,
    l: [usize; 3],
    facts: &KernelBalance,
    event: *mut cl_event,
    rec: &LaunchRecord,
    probe: Option<&Probe>,
) -> Result<cl_int, Forward> {
    let (q, k) = (launch.queue, launch.kernel);
    let g = launch.global;
    let o = launch.offset.unwrap_or([0; 3]);
    let groups: usize = (0..3).map(|d| g[d] / l[d]).product();
    let kinfo_program = || TABLES.kernels.with(k as Key, |i| i.program);
    if let Some(d) = exec::opening_deferred(&facts.id, groups as u64, kinfo_program) {
        return Err(Forward {
            reason: d.reason,
            measure: d.measure.then(|| (facts.id.clone(), groups as u64)),
            ..Default::default()
        });
    }
    // the balanced path (or the early decision, with the devices open) reads the rest
    let (kinfo, prog) = kernel_and_program(k)?;
    let args: Vec<KernelArg> = kinfo
        .args
        .iter()
        .cloned()
        .collect::<Option<Vec<_>>>()
        .ok_or("not every kernel argument is set")?;
    let ready = exec::engine_for_launch();
    // Forwarded before the start barrier, so the app's queue keeps running asynchronously:
    // a launch while the devices still open, and one the early decision keeps whole.
    let engine = match ready {
        Some(e) => e.map_err(|e| format!("balance engine unavailable: {e}"))?,
        None => {
            // measured meanwhile: the split decision of a later launch needs this figure
            // (under the key the later launches look it up by, not the bare name)
            static OPENING: OnceCell<exec::Reason> = OnceCell::new();
            return Err(Forward {
                reason: exec::reason(
                    &OPENING,
                    "the balance devices are still being opened in the background (CLPRISM_BALANCE_EARLY)",
                ),
                measure: Some((facts.id.clone(), groups as u64)),
                ..Default::default()
            });
        }
    };
    if engine.devices.iter().all(|d| !d.available()) {
        return Err("every balance device is busy with abandoned work".into());
    }
    let dev = cl::queue_device(q).map_err(|e| e.to_string())?;
    let early = exec::EarlyLaunch {
        id: &facts.id,
        program: &prog,
        app_device: dev,
        args: &args,
        work_dim: launch.work_dim,
        global: g,
        local: l,
    };
    // while clprism's launch thread runs earlier launches, it takes this decision itself
    let decided = if crate::config::get().balance_async {
        match exec::try_pre_decide(engine, &early) {
            Some(d) => {
                d?;
                true
            }
            None => false,
        }
    } else {
        exec::pre_decide(engine, &early)?;
        true
    };
    // the launch may split: what the balanced path needs
    let ctx = cl::queue_context(q).map_err(|e| e.to_string())?;
    let mut epochs = rustc_hash::FxHashMap::default();
    for a in &args {
        if let Some(m) = buffer_named_by(a) {
            epochs.insert(m, exec::epoch(m));
        }
    }
    let job = Job {
        rec: rec.clone(),
        app_queue: q,
        app_context: ctx,
        app_device: dev,
        app_program: kinfo.program as cl_program,
        program: prog,
        kernel: kinfo.name.to_string(),
        id: facts.id.clone(),
        args,
        work_dim: launch.work_dim,
        global: g,
        offset: o,
        local: l,
        local_given: launch.local.is_some(),
        epochs,
    };
    let probe_log = probe.map(|p| crate::log::schema::ProbeLog {
        work_groups: p.work_groups,
        of_work_groups: p.of,
        device_ns: p.ns,
    });
    // Asynchronous where the driver allows it (`exec::pipeline`): the launch thread runs it
    let job = match exec::submit_async(
        engine,
        job,
        q,
        launch.wait_list(),
        decided,
        probe_log.clone(),
    ) {
        Ok(end) => {
            if event.is_null() {
                cl::release_event(end);
            } else {
                *event = end;
                exec::note_event_handed(q as usize);
            }
            crate::config::debug(|| format!("launch {}: handed to the launch thread", rec.seq));
            return Ok(CL_SUCCESS);
        }
        Err(exec::pipeline::Refused::Driver(code)) => return Ok(code),
        Err(exec::pipeline::Refused::Synchronous(job)) => *job,
    };
    // the launch runs on the app's thread: the next launch on the queue waits for it
    exec::note_app_command(q as usize);
    if !decided {
        exec::pre_decide(engine, &job.early())?;
    }
    // Start barrier: the launch's wait list and every earlier command of the queue. The
    // balanced launch then runs synchronously (see `exec` for why).
    let start = match cl::barrier(q, launch.wait_list()) {
        Ok(e) => e,
        Err(e) => return Ok(e.code), // the driver's verdict on the wait list or queue
    };
    let _ = cl::flush(q);
    let t_wait = std::time::Instant::now();
    let waited = cl::wait(&[start]);
    crate::config::debug(|| {
        format!(
            "launch {}: start barrier waited {:.3} ms",
            rec.seq,
            t_wait.elapsed().as_secs_f64() * 1e3
        )
    });
    if let Err(e) = waited {
        cl::release_event(start);
        return Err(format!("a command the launch waits for failed ({e})").into());
    }
    let done = match exec::run(&job) {
        Ok(d) => d,
        Err(f) => {
            cl::release_event(start);
            return Err(f);
        }
    };
    // the event the app gets: a marker after the (completed) launch, whose profiled start is
    // the start barrier's
    let marked = cl::marker(q, &[]);
    if let Ok(end) = marked {
        engine.pipeline.note_span(end, start);
    }
    cl::release_event(start);
    match marked {
        Ok(end) => {
            if event.is_null() {
                cl::release_event(end);
            } else {
                *event = end;
            }
        }
        Err(e) => {
            return Err(
                format!("the launch completed but its event could not be created ({e})").into(),
            )
        }
    }
    exec::record_balanced(rec, done, probe_log, false);
    Ok(CL_SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chosen_local_divides_global() {
        assert_eq!(choose_local(1, &[1000, 1, 1], None), [50, 1, 1]);
        assert_eq!(choose_local(2, &[1024, 30, 1], None), [8, 6, 1]);
        assert_eq!(choose_local(1, &[97, 1, 1], None), [1, 1, 1]);
        for cap in [None, Some(1024), Some(256), Some(96), Some(1)] {
            for g in [1usize, 7, 64, 100, 4096] {
                let l = choose_local(3, &[g, g, g], cap);
                assert!((0..3).all(|d| g % l[d] == 0));
                let items: usize = l.iter().product();
                assert!(items <= cap.unwrap_or(64).min(256), "{l:?} over {cap:?}");
            }
        }
    }

    /// On a GPU the target is 256 work-items, or the kernel's largest work-group when smaller.
    #[test]
    fn a_gpu_gets_larger_work_groups_within_the_kernels_limit() {
        let g = [1 << 28, 1, 1];
        assert_eq!(choose_local(1, &g, Some(1024)), [256, 1, 1]);
        assert_eq!(choose_local(1, &g, Some(128)), [128, 1, 1]);
        assert_eq!(choose_local(2, &[4096, 4096, 1], Some(1024)), [16, 16, 1]);
        assert_eq!(choose_local(3, &[64, 64, 64], Some(1024)), [8, 8, 4]);
    }
}
