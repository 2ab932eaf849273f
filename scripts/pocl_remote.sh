#!/usr/bin/env bash
# Builds PoCL-Remote (the remote client library and the `pocld` server) from Debian trixie's
# `pocl-source` package, pinned, into a cache directory outside the repository; a second run
# builds nothing. Debian bookworm's PoCL 3.1 has no remote driver (docs/remote.md).
#
#   scripts/pocl_remote.sh        prints three lines, eval-able by a shell:
#     POCL_REMOTE_ICD=<dir>/etc/OpenCL/vendors/pocl-remote.icd   (the client's ICD file)
#     POCL_REMOTE_LIB=<dir>/lib/libpocl-remote.so.2              (the client library)
#     POCLD=<dir>/bin/pocld                                      (the server)
#
# The system's apt sources stay untouched: trixie's package index is read into a private
# directory. The build has no LLVM and no CPU driver of its own: the client compiles nothing,
# and `pocld` serves the machine's OpenCL (Debian's PoCL 3.1) through the ICD loader.
# Options: the remote client and server; position-independent code (libpocl.so fails to link
# without it); drivers linked into the library (ENABLE_LOADABLE_DRIVERS=OFF: a dlopen()ed
# libpocl-devices-remote.so would bind to Debian's libpocl.so.2, loaded by the same ICD
# loader); tests, examples and poclcc off (time). The library's soname becomes
# libpocl-remote.so.2 so that Debian's PoCL drivers never bind to it either.
set -euo pipefail
VERSION=6.0-6
PATCH=p2   # bump when the patches below change: a new cache directory
CACHE=${POCL_REMOTE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clprism/pocl-remote-$VERSION-$PATCH}
LOG() { echo "pocl_remote: $*" >&2; }

print_paths() {
  echo "POCL_REMOTE_ICD=$CACHE/etc/OpenCL/vendors/pocl-remote.icd"
  echo "POCL_REMOTE_LIB=$CACHE/lib/libpocl-remote.so.2"
  echo "POCLD=$CACHE/bin/pocld"
}

if [ -f "$CACHE/.complete" ]; then
  print_paths
  exit 0
fi

# one build at a time (parallel test processes)
mkdir -p "$(dirname "$CACHE")"
exec 9>"$CACHE.lock"
flock 9
if [ -f "$CACHE/.complete" ]; then
  print_paths
  exit 0
fi

SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
need=()
for p in cmake g++ make patchelf python3 xz-utils pkg-config ocl-icd-opencl-dev pocl-opencl-icd; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  LOG "installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

start=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pocl-remote.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/apt/lists/partial" "$WORK/apt/cache/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  >"$WORK/apt/sources.list"
APT=(-o "Dir::Etc::sourcelist=$WORK/apt/sources.list" -o Dir::Etc::sourceparts=-
     -o "Dir::State::Lists=$WORK/apt/lists" -o "Dir::Cache=$WORK/apt/cache"
     -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
     -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
     -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false
     -o APT::Sandbox::User=root)
LOG "fetching pocl-source=$VERSION from trixie (private apt lists in $WORK/apt)"
apt-get -qq "${APT[@]}" update
(cd "$WORK" && apt-get -qq "${APT[@]}" download "pocl-source=$VERSION")
dpkg-deb -x "$WORK"/pocl-source_*_all.deb "$WORK/deb"
mkdir -p "$WORK/src"
tar -xJf "$WORK/deb/usr/src/pocl.tar.xz" -C "$WORK/src"
SRC=$(dirname "$(find "$WORK/src" -maxdepth 2 -name CMakeLists.txt | head -1)")

# Patch p1: PoCL 6.0's remote client marks a synchronous network command finished before it
# takes the command's mutex, so the waiting thread can return and end the stack frame that
# holds the command while the reader thread still locks and signals the mutex and condition
# in it: stack smashing (CLBlast's tests died in 3 of 5 runs on a remote device) and
# deadlocks (docs/remote.md). Set the status under the mutex.
python3 - "$SRC/lib/CL/devices/remote/communication.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = """  running_cmd->status = NETCMD_FINISHED;

  if (running_cmd->synchronous)
    {
      POCL_LOCK (running_cmd->data.sync.mutex);
"""
new = """  if (!running_cmd->synchronous)
    running_cmd->status = NETCMD_FINISHED;

  if (running_cmd->synchronous)
    {
      POCL_LOCK (running_cmd->data.sync.mutex);
      running_cmd->status = NETCMD_FINISHED;
"""
if s.count(old) != 1:
    sys.exit("pocl_remote: the status patch does not apply to communication.c")
s = s.replace(old, new)
# Patch p2: the writer thread queues a command for its reply before sending it, and after
# sending stores the send's end time into it; by then the reply may have come and a
# synchronous command's frame be gone: a CLOCK_MONOTONIC time in ns landed on clprism's
# launch-thread stack (its `engine` reference read 0x15dfdb333535, the uptime in ns) and
# crashed it. Only asynchronous commands (on the heap) read that time (event profiling).
old2 = """          POCL_ATOMIC_STORE (cmd->client_write_end_timestamp_ns,
                             pocl_gettimemono_ns ());

          TP_MSG_SENT (cmd->request.msg_id, cmd->event_id,
                       cmd->request.client_did, cmd->request.did,
                       cmd->request.message_type, 1);
"""
new2 = """          if (!synchronous)
            POCL_ATOMIC_STORE (cmd->client_write_end_timestamp_ns,
                               pocl_gettimemono_ns ());
"""
if s.count(old2) != 1:
    sys.exit("pocl_remote: the write-end patch does not apply to communication.c")
s = s.replace(old2, new2)
# read `synchronous` while the command is surely alive: before it is queued for its reply
old3 = """          cmd->request.waitlist_size = cmd->req_waitlist_size;
          if (cmd->synchronous)
"""
new3 = """          cmd->request.waitlist_size = cmd->req_waitlist_size;
          int synchronous = cmd->synchronous;
          if (cmd->synchronous)
"""
if s.count(old3) != 1:
    sys.exit("pocl_remote: the write-end patch (2) does not apply to communication.c")
s = s.replace(old3, new3)
open(p, "w").write(s)
PY

LOG "building PoCL $VERSION (remote client + pocld, no LLVM) into $CACHE"
rm -rf "$CACHE"
mkdir -p "$WORK/build"
(cd "$WORK/build" &&
  cmake "$SRC" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$CACHE" \
    -DENABLE_LLVM=OFF -DENABLE_HOST_CPU_DEVICES=OFF \
    -DENABLE_REMOTE_CLIENT=ON -DENABLE_REMOTE_SERVER=ON \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DENABLE_LOADABLE_DRIVERS=OFF \
    -DENABLE_TESTS=OFF -DENABLE_EXAMPLES=OFF -DENABLE_POCLCC=OFF >cmake.log 2>&1 ||
    { tail -30 cmake.log >&2; exit 1; }
  make -j"$(nproc)" >make.log 2>&1 || { grep -E -B2 -A8 "error|Error" make.log | head -60 >&2; exit 1; }
  make install >install.log 2>&1 || { tail -20 install.log >&2; exit 1; })

real=$(readlink -f "$CACHE/lib/libpocl.so.2")
patchelf --set-soname libpocl-remote.so.2 "$real"
mv "$real" "$CACHE/lib/libpocl-remote.so.2"
rm -f "$CACHE"/lib/libpocl.so*
mkdir -p "$CACHE/etc/OpenCL/vendors"
rm -f "$CACHE/etc/OpenCL/vendors/pocl.icd"
echo "$CACHE/lib/libpocl-remote.so.2" >"$CACHE/etc/OpenCL/vendors/pocl-remote.icd"
echo "PoCL $VERSION ($PATCH) remote client + pocld, built in $(($(date +%s) - start)) s on $(nproc) cores" \
  >"$CACHE/.complete"
LOG "$(cat "$CACHE/.complete")"
print_paths
