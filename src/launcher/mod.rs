//! `clprism run`: runs an unmodified OpenCL application with the interposer in place, so the
//! user never types `LD_PRELOAD` (issue 7, item 1; DESIGN.md §3 for the variables it sets).
//!
//! ```text
//! clprism run [--mode M] [--log FILE] [--trace FILE] [--summary stderr|off|FILE] [--lib PATH]
//!             [--] APP ARGS...
//! ```
//!
//! What it does, in order:
//! 1. finds `libOpenCL.so` of this build: `--lib`, else `CLPRISM_LIB`, else next to the
//!    `clprism` executable (`target/<profile>/libOpenCL.so`, or `../lib/libOpenCL.so` and
//!    `../lib/clprism/libOpenCL.so` for an installed layout);
//! 2. creates a private (mode 0700) temporary directory holding `libOpenCL.so.1` and
//!    `libOpenCL.so` symlinks to that library, so an application that `dlopen`s
//!    `libOpenCL.so.1` by name (pyopencl, ctypes, plugin loaders) gets clprism too;
//! 3. runs APP as a child process (no shell) with `LD_PRELOAD` = the library prepended to any
//!    existing value, `LD_LIBRARY_PATH` = the temporary directory prepended to any existing
//!    value, and `CLPRISM_MODE` / `CLPRISM_LOG` / `CLPRISM_TRACE` / `CLPRISM_SUMMARY` set from
//!    the options given (variables not given are inherited unchanged). Apps' own binary
//!    caches (pyopencl's, hashcat's) stay on: clprism maps binaries it saw read back to their
//!    source ([`crate::registry::binaries`]), so their programs are still split and emulated;
//! 4. forwards SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 to the child, and SIGINT / SIGQUIT only
//!    when another process sent them with `kill` (a terminal's Ctrl-C already reaches the
//!    child, which shares the foreground process group); a signal that was ignored when
//!    clprism started stays ignored;
//! 5. removes the temporary directory and returns APP's exit status, or 128 + the signal
//!    number when APP was killed by a signal.
//!
//! Exit statuses of clprism itself: 2 for a usage error, 125 when the library cannot be found
//! or the temporary directory cannot be made, 126 when APP cannot be executed, 127 when APP
//! does not exist.

use std::ffi::{CString, OsString};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};

/// Exit status for a command-line usage error.
pub const EXIT_USAGE: i32 = 2;
/// Exit status when clprism cannot set up the run (library missing, temporary directory).
pub const EXIT_SETUP: i32 = 125;
/// Exit status when APP exists but cannot be executed.
pub const EXIT_CANNOT_EXEC: i32 = 126;
/// Exit status when APP does not exist.
pub const EXIT_NOT_FOUND: i32 = 127;

/// Usage text of `clprism run`.
pub const USAGE: &str = "\
usage: clprism run [OPTIONS] [--] APP [ARGS...]

Runs APP with the clprism interposer (LD_PRELOAD, and libOpenCL.so.1 on LD_LIBRARY_PATH for
apps that dlopen OpenCL) and returns APP's exit status (128+N if killed by signal N).

options:
  --mode M        off | log | project | balance        (sets CLPRISM_MODE; default log)
  --log FILE      per-kernel JSONL log, %p = pid, '-' = stderr, 'off'   (CLPRISM_LOG)
  --trace FILE    Chrome trace event JSON                                (CLPRISM_TRACE)
  --summary S     end-of-run summary: stderr | off | FILE                (CLPRISM_SUMMARY)
  --lib PATH      the clprism libOpenCL.so to use (default: CLPRISM_LIB, else the one
                  next to this clprism executable)
  -h, --help      this text
";

/// The full `clprism run --help` text: [`USAGE`], then one man-page style entry per
/// `CLPRISM_*` variable, generated from the table in [`crate::config::controls`].
pub fn help() -> String {
    use crate::config::{controls::usage_lines, Reader};
    format!(
        "{USAGE}\nenvironment read by the interposer in APP's process (inherited unless set by an\n\
         option above; empty = unset; docs/controls.md has the details):\n{}\n\
         environment read by clprism run itself:\n{}",
        usage_lines(Reader::Library),
        usage_lines(Reader::Command)
    )
}

/// Options of `clprism run`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOptions {
    /// `--mode`: value for `CLPRISM_MODE`.
    pub mode: Option<String>,
    /// `--log`: value for `CLPRISM_LOG`.
    pub log: Option<String>,
    /// `--trace`: value for `CLPRISM_TRACE`.
    pub trace: Option<String>,
    /// `--summary`: value for `CLPRISM_SUMMARY`.
    pub summary: Option<String>,
    /// `--lib`: explicit interposer library.
    pub lib: Option<PathBuf>,
    /// APP and its arguments (non-empty after a successful parse).
    pub command: Vec<OsString>,
    /// `--help` was given.
    pub help: bool,
}

/// Parses the arguments that follow `run`. Options may be written `--opt VALUE` or
/// `--opt=VALUE`; the first argument that is not an option (or everything after `--`) is APP.
///
/// Errors: an unknown option, a missing value, an invalid `--mode`, or no APP.
pub fn parse_args(args: &[String]) -> Result<RunOptions, String> {
    let mut o = RunOptions::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if a == "-h" || a == "--help" {
            o.help = true;
            return Ok(o);
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a.as_str(), None),
        };
        if !matches!(name, "--mode" | "--log" | "--trace" | "--summary" | "--lib") {
            return Err(format!("unknown option '{a}'"));
        }
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("option {name} needs a value"))?
            }
        };
        match name {
            "--mode" => {
                let m = value.to_ascii_lowercase();
                if !matches!(m.as_str(), "off" | "log" | "project" | "balance") {
                    return Err(format!(
                        "--mode '{value}' is not one of off, log, project, balance"
                    ));
                }
                o.mode = Some(m);
            }
            "--log" => o.log = Some(value),
            "--trace" => o.trace = Some(value),
            "--summary" => o.summary = Some(value),
            _ => o.lib = Some(PathBuf::from(value)),
        }
        i += 1;
    }
    o.command = args[i.min(args.len())..]
        .iter()
        .map(OsString::from)
        .collect();
    if o.command.is_empty() {
        return Err("no APP given (clprism run [OPTIONS] -- APP ARGS...)".into());
    }
    Ok(o)
}

/// True when `p` is a regular file that starts with the ELF magic number.
fn is_elf(p: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(p)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .map(|_| magic == *b"\x7fELF")
        .unwrap_or(false)
}

/// Finds the interposer library: `explicit` (from `--lib`), else `env_lib` (`CLPRISM_LIB`),
/// else `libOpenCL.so` next to `exe` (the running `clprism`), then `../lib/libOpenCL.so` and
/// `../lib/clprism/libOpenCL.so` relative to the executable's directory. Returns the
/// canonical absolute path.
///
/// Errors: the explicit or `CLPRISM_LIB` path is not an ELF file, or no candidate exists; the
/// message lists what was tried.
pub fn find_library(
    explicit: Option<&Path>,
    env_lib: Option<&Path>,
    exe: Option<&Path>,
) -> Result<PathBuf, String> {
    let check = |p: &Path, what: &str| -> Result<PathBuf, String> {
        if !p.exists() {
            return Err(format!("{what} {} does not exist", p.display()));
        }
        if !is_elf(p) {
            return Err(format!("{what} {} is not a shared library", p.display()));
        }
        std::fs::canonicalize(p).map_err(|e| format!("{what} {}: {e}", p.display()))
    };
    if let Some(p) = explicit {
        return check(p, "--lib");
    }
    if let Some(p) = env_lib {
        return check(p, "CLPRISM_LIB");
    }
    let mut tried = Vec::new();
    if let Some(dir) = exe
        .and_then(|e| std::fs::canonicalize(e).ok())
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        for c in [
            dir.join("libOpenCL.so"),
            dir.join("../lib/libOpenCL.so"),
            dir.join("../lib/clprism/libOpenCL.so"),
        ] {
            if c.is_file() && is_elf(&c) {
                return std::fs::canonicalize(&c).map_err(|e| format!("{}: {e}", c.display()));
            }
            tried.push(c.display().to_string());
        }
    }
    Err(format!(
        "cannot find clprism's libOpenCL.so (tried {}); build it with `cargo build` or give \
         --lib PATH / CLPRISM_LIB",
        if tried.is_empty() {
            "nothing: the clprism executable's path is unknown".to_string()
        } else {
            tried.join(", ")
        }
    ))
}

/// `new` prepended to a colon-separated list `old` (just `new` when `old` is empty or unset).
pub fn prepend_path_list(new: &str, old: Option<&str>) -> String {
    match old {
        Some(o) if !o.is_empty() => format!("{new}:{o}"),
        _ => new.to_string(),
    }
}

/// True when `path` can be one entry of `LD_PRELOAD` (which splits on spaces and colons).
pub fn preload_safe(path: &str) -> bool {
    !path.is_empty() && !path.contains([' ', ':', '\t', '\n'])
}

/// A private temporary directory holding `libOpenCL.so.1` and `libOpenCL.so` symlinks to the
/// interposer; removed on drop.
#[derive(Debug)]
pub struct ShimDir {
    path: PathBuf,
}

impl ShimDir {
    /// Creates the directory (mode 0700, via `mkdtemp` under `$TMPDIR` or `/tmp`) and the
    /// symlinks to `lib`.
    ///
    /// Errors: the directory or a symlink cannot be created.
    pub fn create(lib: &Path) -> std::io::Result<ShimDir> {
        let template = std::env::temp_dir().join("clprism-run.XXXXXX");
        let c = CString::new(template.as_os_str().as_encoded_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let mut buf = c.into_bytes_with_nul();
        // SAFETY: buf is a writable NUL-terminated template ending in XXXXXX.
        let r = unsafe { libc::mkdtemp(buf.as_mut_ptr().cast()) };
        if r.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        buf.pop();
        let path = PathBuf::from(String::from_utf8_lossy(&buf).into_owned());
        let dir = ShimDir { path };
        for name in ["libOpenCL.so.1", "libOpenCL.so"] {
            std::os::unix::fs::symlink(lib, dir.path.join(name))?;
        }
        Ok(dir)
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ShimDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Pid of the running child (0 before it starts); read by the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// A forwarded signal that arrived before the child started (0 if none).
static PENDING: AtomicI32 = AtomicI32::new(0);

/// Signals forwarded whatever their origin.
const ALWAYS_FORWARD: &[i32] = &[libc::SIGTERM, libc::SIGHUP, libc::SIGUSR1, libc::SIGUSR2];
/// Signals forwarded only when sent by a process (`si_code <= 0`: `kill`, `sigqueue`,
/// `tgkill`); a terminal-generated one already reached the child's process group.
const USER_ONLY_FORWARD: &[i32] = &[libc::SIGINT, libc::SIGQUIT];

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t for SA_SIGINFO handlers.
    let code = if info.is_null() {
        0
    } else {
        unsafe { (*info).si_code }
    };
    if USER_ONLY_FORWARD.contains(&sig) && code > 0 {
        return;
    }
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    } else {
        PENDING.store(sig, Ordering::SeqCst);
    }
}

/// Installs [`forward`] for the forwarded signals that are not ignored.
fn install_forwarding() {
    for &sig in ALWAYS_FORWARD.iter().chain(USER_ONLY_FORWARD) {
        // SAFETY: querying and setting dispositions with zero-initialised sigaction structs.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The exit status clprism returns for a child's status: its exit code, or 128 + the signal.
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    }
}

fn error(msg: &str) {
    let _ = writeln!(std::io::stderr(), "clprism run: error: {msg}");
}

/// Entry point of `clprism run`; `args` are the arguments after `run`. Returns the process
/// exit status (see the module documentation).
pub fn run_main(args: &[String]) -> i32 {
    let opts = match parse_args(args) {
        Ok(o) if o.help => {
            print!("{}", help());
            return 0;
        }
        Ok(o) => o,
        Err(e) => {
            error(&e);
            let _ = write!(std::io::stderr(), "{USAGE}");
            return EXIT_USAGE;
        }
    };
    let env_lib = crate::config::from_env_quiet().lib;
    let exe = std::env::current_exe().ok();
    let lib = match find_library(opts.lib.as_deref(), env_lib.as_deref(), exe.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            error(&e);
            return EXIT_SETUP;
        }
    };
    let shim = match ShimDir::create(&lib) {
        Ok(d) => d,
        Err(e) => {
            error(&format!(
                "cannot create the temporary library directory: {e}"
            ));
            return EXIT_SETUP;
        }
    };
    // LD_PRELOAD splits on spaces and colons: use the shim's symlink for a path with them
    let preload = [lib.clone(), shim.path().join("libOpenCL.so")]
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .find(|p| preload_safe(p));
    let Some(preload) = preload else {
        error(&format!(
            "neither {} nor the temporary directory {} can go in LD_PRELOAD (they contain \
             spaces or colons); set TMPDIR or use --lib with a plain path",
            lib.display(),
            shim.path().display()
        ));
        return EXIT_SETUP;
    };
    let mut cmd = Command::new(&opts.command[0]);
    cmd.args(&opts.command[1..]);
    let old_preload = std::env::var("LD_PRELOAD").ok();
    cmd.env(
        "LD_PRELOAD",
        prepend_path_list(&preload, old_preload.as_deref()),
    );
    let old_llp = std::env::var("LD_LIBRARY_PATH").ok();
    cmd.env(
        "LD_LIBRARY_PATH",
        prepend_path_list(&shim.path().to_string_lossy(), old_llp.as_deref()),
    );
    for (var, val) in [
        ("CLPRISM_MODE", &opts.mode),
        ("CLPRISM_LOG", &opts.log),
        ("CLPRISM_TRACE", &opts.trace),
        ("CLPRISM_SUMMARY", &opts.summary),
    ] {
        if let Some(v) = val {
            cmd.env(var, v);
        }
    }
    install_forwarding();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let app = Path::new(&opts.command[0]).display().to_string();
            return match e.kind() {
                std::io::ErrorKind::NotFound => {
                    error(&format!("{app}: command not found"));
                    EXIT_NOT_FOUND
                }
                _ => {
                    error(&format!("cannot execute {app}: {e}"));
                    EXIT_CANNOT_EXEC
                }
            };
        }
    };
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let pending = PENDING.swap(0, Ordering::SeqCst);
    if pending != 0 {
        // SAFETY: sending a signal to our own child.
        unsafe { libc::kill(child.id() as i32, pending) };
    }
    let status = child.wait();
    CHILD.store(0, Ordering::SeqCst);
    drop(shim);
    match status {
        Ok(s) => exit_code(s),
        Err(e) => {
            error(&format!("waiting for the application failed: {e}"));
            EXIT_SETUP
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_options_and_command() {
        let o = parse_args(&s(&[
            "--mode",
            "LOG",
            "--log=x.jsonl",
            "--summary",
            "off",
            "--",
            "app",
            "--mode",
            "z",
        ]))
        .unwrap();
        assert_eq!(o.mode.as_deref(), Some("log"));
        assert_eq!(o.log.as_deref(), Some("x.jsonl"));
        assert_eq!(o.summary.as_deref(), Some("off"));
        assert_eq!(o.trace, None);
        assert_eq!(o.command, vec!["app", "--mode", "z"]);
        // APP starts at the first non-option even without "--"
        let o = parse_args(&s(&["--trace", "t.json", "app", "-v"])).unwrap();
        assert_eq!(o.trace.as_deref(), Some("t.json"));
        assert_eq!(o.command, vec!["app", "-v"]);
    }

    #[test]
    fn rejects_bad_usage() {
        assert!(parse_args(&s(&["--mode", "fast", "app"]))
            .unwrap_err()
            .contains("fast"));
        assert!(parse_args(&s(&["--log"])).unwrap_err().contains("--log"));
        assert!(parse_args(&s(&["--bogus", "app"]))
            .unwrap_err()
            .contains("--bogus"));
        assert!(parse_args(&s(&["--mode", "off", "--"]))
            .unwrap_err()
            .contains("no APP"));
        assert!(parse_args(&s(&["-h"])).unwrap().help);
    }

    #[test]
    fn preload_entries_without_separators() {
        assert!(preload_safe("/a/b/libOpenCL.so"));
        assert!(!preload_safe("/my dir/libOpenCL.so"));
        assert!(!preload_safe("/a:b/libOpenCL.so"));
        assert!(!preload_safe(""));
    }

    #[test]
    fn path_lists_are_prepended() {
        assert_eq!(prepend_path_list("/a", None), "/a");
        assert_eq!(prepend_path_list("/a", Some("")), "/a");
        assert_eq!(prepend_path_list("/a", Some("/b:/c")), "/a:/b:/c");
    }

    #[test]
    fn library_search_order_and_errors() {
        let d = std::env::temp_dir().join(format!("clprism-launcher-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("bin")).unwrap();
        let exe = d.join("bin/clprism");
        std::fs::write(&exe, b"#!/bin/sh\n").unwrap();
        // nothing next to the executable
        let e = find_library(None, None, Some(&exe)).unwrap_err();
        assert!(e.contains("libOpenCL.so"), "{e}");
        // a non-ELF file is refused
        let fake = d.join("bin/libOpenCL.so");
        std::fs::write(&fake, b"not a library").unwrap();
        assert!(find_library(Some(&fake), None, None)
            .unwrap_err()
            .contains("not a shared library"));
        assert!(find_library(None, None, Some(&exe)).is_err());
        // an ELF file next to the executable is found; --lib wins over CLPRISM_LIB
        std::fs::write(&fake, b"\x7fELF....").unwrap();
        let found = find_library(None, None, Some(&exe)).unwrap();
        assert_eq!(found, std::fs::canonicalize(&fake).unwrap());
        let other = d.join("other.so");
        std::fs::write(&other, b"\x7fELF....").unwrap();
        let missing = d.join("missing.so");
        assert_eq!(
            find_library(Some(&other), Some(&missing), Some(&exe)).unwrap(),
            std::fs::canonicalize(&other).unwrap()
        );
        assert!(find_library(None, Some(&missing), Some(&exe))
            .unwrap_err()
            .contains("CLPRISM_LIB"));
        // installed layout: bin/clprism + lib/libOpenCL.so
        std::fs::remove_file(&fake).unwrap();
        std::fs::create_dir_all(d.join("lib")).unwrap();
        std::fs::write(d.join("lib/libOpenCL.so"), b"\x7fELF....").unwrap();
        assert_eq!(
            find_library(None, None, Some(&exe)).unwrap(),
            std::fs::canonicalize(d.join("lib/libOpenCL.so")).unwrap()
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn shim_dir_links_and_cleans_up() {
        let lib = std::env::temp_dir().join(format!("clprism-shim-unit-{}.so", std::process::id()));
        std::fs::write(&lib, b"\x7fELF").unwrap();
        let dir = ShimDir::create(&lib).unwrap();
        let p = dir.path().to_path_buf();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(p.metadata().unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::read_link(p.join("libOpenCL.so.1")).unwrap(), lib);
        assert_eq!(std::fs::read_link(p.join("libOpenCL.so")).unwrap(), lib);
        drop(dir);
        assert!(!p.exists());
        let _ = std::fs::remove_file(&lib);
    }
}
