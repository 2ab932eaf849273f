//! Side tables keyed by the real OpenCL handles (never wrapped). Each entry mirrors the
//! application's reference count (create = 1, retain +1, release −1) and is removed when the
//! application's count reaches zero, so the tables stay bounded in long runs.

use opencl_sys::*;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::log::DeviceRef;

/// A handle as a map key.
pub type Key = usize;

/// What clprism knows about a context.
#[derive(Debug, Clone)]
pub struct ContextInfo {
    /// Devices of the context.
    pub devices: Vec<Key>,
}

/// What clprism knows about a command queue.
#[derive(Debug, Clone)]
pub struct QueueInfo {
    /// Context handle.
    pub context: Key,
    /// Device handle.
    pub device: Key,
    /// The device, as logged.
    pub device_ref: Arc<DeviceRef>,
    /// `CL_QUEUE_PROPERTIES` as the application asked for them.
    pub app_properties: cl_command_queue_properties,
    /// The property list the application passed to `clCreateCommandQueueWithProperties`
    /// (zero-terminated, as given), for `CL_QUEUE_PROPERTIES_ARRAY`.
    pub app_property_array: Option<Vec<cl_queue_properties>>,
    /// Whether clprism enabled profiling (true: device times are available).
    pub profiling: bool,
}

/// A buffer (or sub-buffer) as created by the application.
#[derive(Debug, Clone)]
pub struct BufferInfo {
    /// Context handle.
    pub context: Key,
    /// Size, bytes.
    pub size: usize,
    /// `cl_mem_flags` as given.
    pub flags: cl_mem_flags,
    /// Host pointer as given (USE_HOST_PTR / COPY_HOST_PTR), 0 if none.
    pub host_ptr: usize,
    /// For sub-buffers: parent buffer and origin, bytes.
    pub parent: Option<(Key, usize)>,
}

/// Where a program came from.
#[derive(Debug, Clone)]
pub enum ProgramOrigin {
    /// `clCreateProgramWithSource`: the concatenated source text.
    Source(Arc<str>),
    /// `clCreateProgramWithBinary`: (device, binary) pairs.
    Binary(Vec<(Key, Arc<[u8]>)>),
    /// `clCreateProgramWithIL`: SPIR-V (or other IL) bytes.
    Il(Arc<[u8]>),
    /// `clLinkProgram`: the input programs.
    Linked(Vec<Key>),
    /// `clCreateProgramWithBuiltInKernels` or unknown.
    Other,
}

/// What clprism knows about a program.
#[derive(Debug, Clone)]
pub struct ProgramInfo {
    /// Context handle.
    pub context: Key,
    /// Source, binaries or IL.
    pub origin: ProgramOrigin,
    /// Options of the last `clBuildProgram` / `clCompileProgram` / `clLinkProgram`.
    pub options: Arc<str>,
    /// 16 hex digits: hash of the content. The caches that depend on the build options key
    /// on this and `options` together; the log names the program by [`Self::identity`].
    pub hash: Arc<str>,
    /// Created with `clCreateProgramWithBinary` from binaries that clprism mapped back to the
    /// source program that produced them ([`super::binaries`]): `origin`, `hash` and
    /// `options` are that source program's, and the app's build options for the binary
    /// (which the driver does not compile with) leave `options` unchanged.
    pub from_binary: bool,
    /// The app's last `clCompileProgram` of this program was given embedded headers
    /// (`input_headers`): its source alone does not rebuild it, so a program linked from it
    /// keeps the `Linked` origin.
    pub embedded_headers: bool,
}

impl ProgramInfo {
    /// The program's identity in the log, the reports and `clprism accuracy`: its content
    /// and its build options ([`program_identity`]).
    pub fn identity(&self) -> Arc<str> {
        program_identity(&self.hash, &self.options)
    }
}

/// Why a program created from binaries is neither split nor emulated: clprism never saw
/// them read back from a program it knows the source of ([`super::binaries`]).
pub const UNMAPPED_BINARY: &str =
    "program created from a binary that clprism never saw built from source (no entry in its cache directory)";

/// One kernel argument as last set by `clSetKernelArg`.
#[derive(Debug, Clone, PartialEq)]
pub enum KernelArg {
    /// A value (`arg_value` non-null): its bytes. Memory objects are their handle's bytes.
    Value(ArgBytes),
    /// A `__local` argument (`arg_value` null): its size, bytes.
    Local(usize),
}

/// Argument bytes, stored inline up to 16 bytes (handles and scalars) to keep
/// `clSetKernelArg` cheap.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgBytes {
    /// Up to 16 bytes inline: (bytes, length).
    Inline([u8; 16], u8),
    /// Larger values (structs).
    Heap(Box<[u8]>),
}

impl ArgBytes {
    /// Copies `len` bytes from `p`.
    ///
    /// # Safety
    /// `p` points to `len` readable bytes.
    pub unsafe fn copy_from(p: *const u8, len: usize) -> ArgBytes {
        if len <= 16 {
            let mut b = [0u8; 16];
            std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), len);
            ArgBytes::Inline(b, len as u8)
        } else {
            ArgBytes::Heap(std::slice::from_raw_parts(p, len).into())
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            ArgBytes::Inline(b, n) => &b[..*n as usize],
            ArgBytes::Heap(b) => b,
        }
    }
}

/// What clprism knows about a kernel.
#[derive(Debug, Clone)]
pub struct KernelInfo {
    /// Program handle.
    pub program: Key,
    /// Function name.
    pub name: Arc<str>,
    /// Arguments by index, as last set.
    pub args: Vec<Option<KernelArg>>,
    /// What every launch of this kernel object reads (its log identity, launch count and
    /// timing sampler), shared so that a launch reads it without the table's lock
    /// ([`Tables::launch_refs`]). A kernel object of its own: a clone gets a new one.
    pub launch: Arc<KernelLaunch>,
}

/// The part of a kernel's record that every launch reads (log mode's per-launch path).
#[derive(Debug)]
pub struct KernelLaunch {
    /// Function name.
    pub name: Arc<str>,
    /// The program's identity, its content and build options ([`ProgramInfo::identity`]),
    /// copied from the program for the log.
    pub program_hash: Arc<str>,
    /// Launches of this kernel object so far (`CLPRISM_DEVICE_TIMING=sample:N`).
    pub launches: AtomicU64,
    /// The adaptive timing sampler of this kernel (shared by every kernel object of the same
    /// program and function; `CLPRISM_DEVICE_TIMING=adaptive`), looked up at the first launch.
    pub sampler: once_cell::sync::OnceCell<Arc<crate::log::sampling::Sampler>>,
    /// What balance mode derives once per kernel object at its first launch (`exec` fills
    /// it): a kernel's program, and so its origin, source, options and content hash, do not
    /// change while the kernel exists (`clBuildProgram` refuses a program with kernels).
    pub balance: once_cell::sync::OnceCell<KernelBalance>,
}

/// Balance mode's per-kernel-object facts ([`KernelLaunch::balance`]), so that a launch
/// forwarded unsplit formats, hashes and scans nothing (issue 18 item 2).
#[derive(Debug)]
pub struct KernelBalance {
    /// The key of clprism's measurements of the kernel (`exec::kernel_id`:
    /// `hash|options|name`).
    pub id: Arc<str>,
    /// Whether the kernel's program can be split: `Err(reason)` (the record's
    /// `schedule.fallback`) when its origin or its source rules it out.
    pub verdict: Result<(), Arc<str>>,
}

impl KernelLaunch {
    /// A kernel object's launch part, no launch yet.
    pub fn new(name: Arc<str>, program_hash: Arc<str>) -> Arc<KernelLaunch> {
        Arc::new(KernelLaunch {
            name,
            program_hash,
            launches: AtomicU64::new(0),
            sampler: Default::default(),
            balance: Default::default(),
        })
    }

    /// Counts a launch; returns how many came before it (from 0).
    pub fn count(&self) -> u64 {
        self.launches.fetch_add(1, Ordering::Relaxed)
    }
}

/// A reference-counted table of one object kind.
pub struct Table<T> {
    map: Mutex<FxHashMap<Key, (u32, T)>>,
    /// Bumped whenever an entry is added or removed: a per-thread cache of entries
    /// ([`Tables::launch_refs`]) is valid while it is unchanged (a handle value can only name
    /// another object after an insert).
    generation: AtomicU64,
}

impl<T: Clone> Default for Table<T> {
    fn default() -> Self {
        Table {
            map: Mutex::new(FxHashMap::default()),
            generation: AtomicU64::new(0),
        }
    }
}

impl<T: Clone> Table<T> {
    /// Records a new object with application reference count 1 (replacing a stale entry with
    /// the same handle value).
    pub fn insert(&self, k: Key, v: T) {
        let mut m = self.map.lock();
        m.insert(k, (1, v));
        self.changed();
    }
    /// Marks the table changed (under its lock), invalidating the per-thread caches.
    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }
    /// The table's generation (see the field).
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
    /// Application retained the object.
    pub fn retain(&self, k: Key) {
        if let Some(e) = self.map.lock().get_mut(&k) {
            e.0 += 1;
        }
    }
    /// Application released the object; returns the entry if this was the last reference.
    pub fn release(&self, k: Key) -> Option<T> {
        let mut m = self.map.lock();
        let e = m.get_mut(&k)?;
        e.0 = e.0.saturating_sub(1);
        if e.0 == 0 {
            let gone = m.remove(&k).map(|e| e.1);
            self.changed();
            gone
        } else {
            None
        }
    }
    /// A copy of the entry.
    pub fn get(&self, k: Key) -> Option<T> {
        self.map.lock().get(&k).map(|e| e.1.clone())
    }
    /// Runs `f` on the entry in place.
    pub fn with_mut<R>(&self, k: Key, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.map.lock().get_mut(&k).map(|e| f(&mut e.1))
    }
    /// Runs `f` on the entry.
    pub fn with<R>(&self, k: Key, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.map.lock().get(&k).map(|e| f(&e.1))
    }
    /// Number of live entries.
    pub fn len(&self) -> usize {
        self.map.lock().len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// All side tables.
#[derive(Default)]
pub struct Tables {
    /// Contexts.
    pub contexts: Table<ContextInfo>,
    /// Command queues.
    pub queues: Table<QueueInfo>,
    /// Buffers and sub-buffers.
    pub buffers: Table<BufferInfo>,
    /// Programs.
    pub programs: Table<ProgramInfo>,
    /// Kernels.
    pub kernels: Table<KernelInfo>,
}

impl Tables {
    /// Records kernel `k`. Like the driver, the kernel holds a reference to its program, so
    /// the program's record outlives an app's `clReleaseProgram` right after
    /// `clCreateKernel` (legal, and done by e.g. Rodinia's lud, backprop, kmeans and nw).
    pub fn add_kernel(&self, k: Key, info: KernelInfo) {
        self.programs.retain(info.program);
        let stale = {
            let mut m = self.kernels.map.lock();
            let stale = m.insert(k, (1, info));
            self.kernels.changed();
            stale
        };
        if let Some((_, stale)) = stale {
            // a handle value reused after a release clprism did not see
            self.programs.release(stale.program);
        }
    }

    /// The app released kernel `k`; on its last reference the kernel's hold on its program
    /// ends too ([`Self::add_kernel`]).
    pub fn release_kernel(&self, k: Key) {
        if let Some(gone) = self.kernels.release(k) {
            self.programs.release(gone.program);
        }
    }

    /// What a launch on queue `q` of kernel `k` reads: the kernel's launch part and the
    /// queue's device, from a small per-thread cache of recent handles, so that the steady
    /// state of a launch-heavy app takes no table lock (issue 21: log mode's per-launch
    /// cost). A cache is emptied when its table's generation changes (any insert or removal);
    /// a miss reads the table under its lock once. `None`: clprism has no entry.
    pub fn launch_refs(
        &self,
        q: Key,
        k: Key,
    ) -> (Option<Arc<KernelLaunch>>, Option<Arc<DeviceRef>>) {
        let read = |c: &mut LaunchCache| {
            let kernel = c.kernels.get(self.kernels.generation(), k, || {
                self.kernels.with(k, |i| i.launch.clone())
            });
            let device = c.queues.get(self.queues.generation(), q, || {
                self.queues.with(q, |i| i.device_ref.clone())
            });
            (kernel, device)
        };
        LAUNCH_CACHE
            .try_with(|c| match c.try_borrow_mut() {
                Ok(mut c) => read(&mut c),
                Err(_) => read(&mut LaunchCache::default()),
            })
            .unwrap_or_else(|_| read(&mut LaunchCache::default()))
    }
}

/// Handles cached per thread and table ([`Tables::launch_refs`]).
const CACHED: usize = 8;

/// A few (handle, value) pairs of one table, valid for one generation of it.
struct Recent<V> {
    generation: u64,
    entries: Vec<(Key, V)>,
    /// The slot the next miss replaces once full (round robin).
    next: usize,
}

impl<V> Default for Recent<V> {
    fn default() -> Self {
        Recent {
            generation: u64::MAX,
            entries: Vec::new(),
            next: 0,
        }
    }
}

impl<V: Clone> Recent<V> {
    /// The value of `k`, from the cache when `generation` is the cached one, else from `miss`
    /// (kept when found).
    fn get(&mut self, generation: u64, k: Key, miss: impl FnOnce() -> Option<V>) -> Option<V> {
        if self.generation != generation {
            self.entries.clear();
            self.next = 0;
            self.generation = generation;
        }
        if let Some((_, v)) = self.entries.iter().find(|e| e.0 == k) {
            return Some(v.clone());
        }
        let v = miss()?;
        if self.entries.len() < CACHED {
            self.entries.push((k, v.clone()));
        } else {
            self.entries[self.next] = (k, v.clone());
            self.next = (self.next + 1) % CACHED;
        }
        Some(v)
    }
}

/// The per-thread cache of [`Tables::launch_refs`].
#[derive(Default)]
struct LaunchCache {
    kernels: Recent<Arc<KernelLaunch>>,
    queues: Recent<Arc<DeviceRef>>,
}

thread_local! {
    static LAUNCH_CACHE: RefCell<LaunchCache> = RefCell::new(LaunchCache::default());
}

/// 16 hex digits of the SHA-256 of `parts` (length-prefixed).
pub fn content_hash(parts: &[&[u8]]) -> Arc<str> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    crate::emu::hash::hex(&h.finalize()[..8]).into()
}

/// 16 hex digits identifying a program built from the content of hash `content` (source,
/// IL or binaries, [`content_hash`]) with the build `options`: one source built with
/// different options (`-D` values) is different programs. The options are compared as their
/// whitespace-separated words; a program built without options keeps its content hash (the
/// identity logs before build options counted had for every program).
pub fn program_identity(content: &Arc<str>, options: &str) -> Arc<str> {
    let words: Vec<&str> = options.split_whitespace().collect();
    if words.is_empty() {
        return content.clone();
    }
    content_hash(&[b"build", content.as_bytes(), words.join(" ").as_bytes()])
}

/// The buffer kernel argument `a` names: a pointer-sized value that is a buffer clprism
/// recorded. `None` for `__local` sizes, by-value arguments, NULL and unknown handles.
///
/// The one answer to "which buffer does argument i name" for every mode.
pub fn buffer_named_by(a: &KernelArg) -> Option<Key> {
    handle_named_by(a).filter(|&k| super::TABLES.buffers.with(k, |_| ()).is_some())
}

/// The non-null handle-sized value of a by-value argument, whatever object it names (no
/// table is read: [`buffer_named_by`] checks that it is a buffer).
pub fn handle_named_by(a: &KernelArg) -> Option<Key> {
    match a {
        KernelArg::Value(b) if b.as_slice().len() == std::mem::size_of::<usize>() => {
            let k = usize::from_ne_bytes(b.as_slice().try_into().ok()?);
            (k != 0).then_some(k)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refcount_mirrors_app() {
        let t: Table<u32> = Table::default();
        t.insert(7, 1);
        t.retain(7);
        assert!(t.release(7).is_none());
        assert_eq!(t.len(), 1);
        assert_eq!(t.release(7), Some(1));
        assert!(t.is_empty());
        assert!(t.release(7).is_none());
    }

    fn kernel(name: &str) -> KernelInfo {
        KernelInfo {
            program: 0,
            name: name.into(),
            args: Vec::new(),
            launch: KernelLaunch::new(name.into(), "p".into()),
        }
    }

    /// A launch reads the cached entry until the table changes; a handle value reused for
    /// another kernel (or queue) is read afresh.
    #[test]
    fn launch_refs_follow_the_tables() {
        let t = Tables::default();
        let dev = |n: &str| {
            Arc::new(DeviceRef {
                index: n.into(),
                name: n.into(),
                kind: "cpu".into(),
                ..Default::default()
            })
        };
        let queue = |d: Arc<DeviceRef>| QueueInfo {
            context: 0,
            device: 0,
            device_ref: d,
            app_properties: 0,
            app_property_array: None,
            profiling: false,
        };
        assert!(matches!(t.launch_refs(1, 2), (None, None)));
        t.queues.insert(1, queue(dev("a")));
        t.add_kernel(2, kernel("k"));
        let (k, d) = t.launch_refs(1, 2);
        let (k, d) = (k.unwrap(), d.unwrap());
        assert_eq!((&*k.name, &*d.index), ("k", "a"));
        // cached: the same entries
        let (k2, d2) = t.launch_refs(1, 2);
        assert!(Arc::ptr_eq(&k, &k2.unwrap()) && Arc::ptr_eq(&d, &d2.unwrap()));
        assert_eq!(k.count(), 0);
        assert_eq!(k.count(), 1);
        // released, then the handle values name other objects
        t.release_kernel(2);
        assert!(t.queues.release(1).is_some());
        assert!(matches!(t.launch_refs(1, 2), (None, None)));
        t.queues.insert(1, queue(dev("b")));
        t.add_kernel(2, kernel("other"));
        let (k, d) = t.launch_refs(1, 2);
        assert_eq!((&*k.unwrap().name, &*d.unwrap().index), ("other", "b"));
        // more handles than the cache holds
        for h in 10..30 {
            t.add_kernel(h, kernel(&format!("k{h}")));
        }
        for h in (10..30).chain(10..30) {
            assert_eq!(&*t.launch_refs(1, h).0.unwrap().name, format!("k{h}"));
        }
    }

    #[test]
    fn arg_bytes_inline_and_heap() {
        let small = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let big = [9u8; 40];
        let a = unsafe { ArgBytes::copy_from(small.as_ptr(), small.len()) };
        let b = unsafe { ArgBytes::copy_from(big.as_ptr(), big.len()) };
        assert!(matches!(a, ArgBytes::Inline(_, 8)));
        assert_eq!(a.as_slice(), &small);
        assert_eq!(b.as_slice(), &big[..]);
    }

    #[test]
    fn hash_is_stable_and_content_sensitive() {
        let a = content_hash(&[b"kernel void k(){}"]);
        assert_eq!(a.len(), 16);
        assert_eq!(a, content_hash(&[b"kernel void k(){}"]));
        assert_ne!(a, content_hash(&[b"kernel void k(){ }"]));
        assert_ne!(content_hash(&[b"ab", b"c"]), content_hash(&[b"a", b"bc"]));
    }

    #[test]
    fn identity_is_content_and_build_options() {
        let src = content_hash(&[b"source", b"kernel void k(){ X; }"]);
        let other = content_hash(&[b"source", b"kernel void k(){ Y; }"]);
        // no options: the content hash (as logged before options counted)
        assert_eq!(program_identity(&src, ""), src);
        assert_eq!(program_identity(&src, "  \t"), src);
        let a = program_identity(&src, "-DX=1");
        let b = program_identity(&src, "-DX=2");
        assert_eq!(a.len(), 16);
        assert_ne!(a, src);
        assert_ne!(a, b);
        assert_ne!(a, program_identity(&other, "-DX=1"));
        // the same words are the same build
        assert_eq!(a, program_identity(&src, " -DX=1 "));
        assert_eq!(
            program_identity(&src, "-DX=1 -DY=2"),
            program_identity(&src, "-DX=1\t -DY=2")
        );
        assert_ne!(
            program_identity(&src, "-DX=1 -DY=2"),
            program_identity(&src, "-DY=2 -DX=1")
        );
    }
}
