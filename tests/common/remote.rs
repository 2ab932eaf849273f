//! A PoCL-Remote cluster on this machine (issue 33, docs/remote.md): `pocld` servers on
//! loopback ports, each serving its own PoCL 3.1 `pthread` device through Debian's ICD
//! loader, and the environment under which one platform list shows the local PoCL 3.1
//! device and the remote ones. Servers are killed when the [`Cluster`] drops (a failing test
//! unwinds through it), and with the test process (`PR_SET_PDEATHSIG`).
#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The PoCL-Remote build of `scripts/pocl_remote.sh` (built once, then cached).
pub struct Build {
    /// The client's ICD file (names `libpocl-remote.so.2`).
    pub icd: PathBuf,
    /// The server.
    pub pocld: PathBuf,
}

/// Runs `scripts/pocl_remote.sh` once per test process (a first run builds PoCL 6.0,
/// about a minute on 2 cores; later runs print the cached paths).
pub fn build() -> &'static Build {
    static B: OnceLock<Build> = OnceLock::new();
    B.get_or_init(|| {
        let out = Command::new(super::root().join("scripts/pocl_remote.sh"))
            .output()
            .expect("scripts/pocl_remote.sh");
        assert!(
            out.status.success(),
            "scripts/pocl_remote.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let get = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .map(PathBuf::from)
                .unwrap_or_else(|| panic!("no {k}= in scripts/pocl_remote.sh output:\n{text}"))
        };
        Build {
            icd: get("POCL_REMOTE_ICD"),
            pocld: get("POCLD"),
        }
    })
}

/// One running `pocld`.
pub struct Server {
    /// Its first port (it listens on PORT and PORT+1 on 127.0.0.1, PORT+2 on all addresses).
    pub port: u16,
    child: Option<Child>,
}

impl Server {
    /// `POCL_REMOTEi_PARAMETERS` for this server's device 0.
    pub fn parameters(&self) -> String {
        format!("127.0.0.1:{}/0", self.port)
    }

    /// Kills the server (SIGKILL) and reaps it; nothing happens the second time.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether ports `p..p+3` are free now (`pocld` binds three).
fn free(p: u16) -> bool {
    (0..3).all(|i| {
        TcpListener::bind(("127.0.0.1", p + i)).is_ok()
            && TcpListener::bind(("0.0.0.0", p + i)).is_ok()
    })
}

/// A port nothing listens on (for a server that cannot be reached).
pub fn dead_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Starts one `pocld` on a free loopback port with `POCL_DEVICES=pthread` (PoCL 3.1 through
/// the system's ICD loader), logging to `log`, and waits until it accepts connections.
///
/// One start at a time in this process: two tests of a file running side by side
/// (`--test-threads=2`) could otherwise both find a port free before either server had bound
/// it; the loser's `pocld` exits, but its test had already connected to the winner's and
/// went on with the other test's server, which vanished when that test ended or killed it
/// (`servers_started_at_once_get_ports_of_their_own`: 3 of 6 runs with 4 at once). The seed
/// mixes in the wall clock and a count of starts, so that tests of one process (and starts
/// in the same nanosecond tick) do not walk the same port sequence.
pub fn start_server(log: &Path) -> Server {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static STARTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let b = build();
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // spread over 20000..59000 by pid, time, start and attempt, three ports per server
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut seed = (std::process::id() as u64 * 7919)
        ^ clock
        ^ STARTS
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for _attempt in 0..40 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let port = 20000 + ((seed >> 33) % 13000) as u16 * 3;
        if !free(port) {
            continue;
        }
        let out = std::fs::File::create(log).unwrap();
        let err = out.try_clone().unwrap();
        let mut cmd = Command::new(&b.pocld);
        cmd.args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .env_remove("OCL_ICD_VENDORS")
            .env_remove("LD_PRELOAD")
            .env_remove("OCL_ICD_PLATFORM_SORT")
            .env("POCL_DEVICES", "pthread")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: prctl only, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut s = Server {
            port,
            child: Some(cmd.spawn().expect("spawn pocld")),
        };
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) {
            if !s.running() {
                break; // lost the port to someone else: try another
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return s;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        s.kill();
    }
    panic!(
        "could not start pocld; its last log:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

/// `n` servers and the client environment.
pub struct Cluster {
    pub servers: Vec<Server>,
    /// The `OCL_ICD_VENDORS` directory: Debian's `pocl.icd` and `pocl-remote.icd`.
    pub vendors: PathBuf,
    /// Extra `POCL_REMOTEi_PARAMETERS` (a server that cannot be reached) after the servers.
    pub unreachable: Vec<u16>,
}

impl Cluster {
    /// Starts `n` servers, logging into `dir`.
    pub fn start(n: usize, dir: &Path) -> Cluster {
        let vendors = dir.join("vendors");
        std::fs::create_dir_all(&vendors).unwrap();
        std::fs::copy("/etc/OpenCL/vendors/pocl.icd", vendors.join("pocl.icd"))
            .expect("Debian's /etc/OpenCL/vendors/pocl.icd (pocl-opencl-icd)");
        std::fs::copy(&build().icd, vendors.join("pocl-remote.icd")).unwrap();
        let servers = (0..n)
            .map(|i| start_server(&dir.join(format!("pocld{i}.log"))))
            .collect();
        Cluster {
            servers,
            vendors,
            unreachable: Vec::new(),
        }
    }

    /// The client's environment: both ICDs, one local `pthread` device (PoCL 3.1 ignores
    /// `remote`, the remote-only PoCL 6 build ignores `pthread`), one remote device per
    /// server. ocl-icd's default platform order (`OCL_ICD_PLATFORM_SORT=devices`) puts the
    /// platform with more devices first: see [`Cluster::platforms`].
    pub fn env(&self) -> Vec<(String, String)> {
        let mut params: Vec<String> = self.servers.iter().map(Server::parameters).collect();
        params.extend(self.unreachable.iter().map(|p| format!("127.0.0.1:{p}/0")));
        let mut devices = String::from("pthread");
        let mut v = vec![(
            "OCL_ICD_VENDORS".to_string(),
            self.vendors.to_string_lossy().into_owned(),
        )];
        for (i, p) in params.into_iter().enumerate() {
            devices.push_str(" remote");
            v.push((format!("POCL_REMOTE{i}_PARAMETERS"), p));
        }
        v.push(("POCL_DEVICES".into(), devices));
        v
    }

    /// `CL_PLATFORM_VERSION` of each platform in the order the application sees them
    /// (through `clinfo --raw` under [`Cluster::env`]).
    /// `clinfo` runs under `timeout 30`, up to three times: PoCL 6.0's remote client can
    /// deadlock a client (docs/remote.md, its stack writes); an earlier version without the
    /// bound hung a test run for 10 minutes.
    pub fn platforms(&self) -> Vec<String> {
        for _ in 0..3 {
            let out = Command::new("timeout")
                .args(["-s", "KILL", "30", "clinfo", "--raw"])
                .envs(self.env())
                .env_remove("LD_PRELOAD")
                .stdin(Stdio::null())
                .output()
                .expect("clinfo");
            // clinfo exits 1 when a platform gives no devices (a server unreachable): its
            // platform lines still count; a run killed by `timeout` has no exit code
            let versions: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| l.trim().strip_prefix("CL_PLATFORM_VERSION"))
                .map(|v| v.trim().to_string())
                .collect();
            if out.status.code().is_some() && !versions.is_empty() {
                return versions;
            }
            eprintln!(
                "clinfo under the cluster's environment: {:?}; again",
                out.status
            );
        }
        panic!("clinfo failed three times under the cluster's environment");
    }

    /// `(local platform index, remote platform index)`.
    pub fn platform_indices(&self) -> (usize, usize) {
        let p = self.platforms();
        let remote = p.iter().position(|v| v.contains("REMOTE"));
        let local = p.iter().position(|v| v.contains("PoCL 3."));
        match (local, remote) {
            (Some(l), Some(r)) => (l, r),
            _ => panic!("expected a PoCL 3 and a PoCL-Remote platform, clinfo shows {p:?}"),
        }
    }
}
