#!/usr/bin/env bash
# Issue 33 benchmark: what a PoCL-Remote device costs per launch and per byte, against the
# local PoCL device, on loopback and over a shaped link. A benchmark, not a test.
# A `pocld` (scripts/pocl_remote.sh's build, started as tests/common/remote.rs starts it:
# POCL_DEVICES=pthread, the client's OCL_ICD_VENDORS unset) serves Debian's PoCL 3.1
# `pthread` device; the client sees two local `pthread` devices and the remote one in one
# platform list (docs/remote.md §3). Per configuration, bench/remote_rt.c measures:
#   launch    a tiny kernel (4096 work-items, 64 per group) enqueued + clFinish, LAUNCHES
#             times, each timed: median, p10, p90 (us); then LAUNCHES launches queued back
#             to back and one clFinish: us per launch
#   write/read  blocking clEnqueueWriteBuffer / clEnqueueReadBuffer of each of SIZES_KIB:
#             median us and MB/s (10^6 bytes)
# for: the local device; the remote device on loopback; with BALANCE=1, the same launch loop
# (no transfers) natively on the local device and through clprism in balance mode
# (CLPRISM_SPLIT=always, CLPRISM_SCHEDULER=static:0.5,0.5, every launch split in two) over the
# two local devices and over the local device and the remote one: the difference of the last
# two is what the remote half costs a split launch. Then, where `ip netns` works (root), the
# server moves into a network namespace behind a veth pair and the remote rows are measured
# again: unshaped, and for each of SHAPES shaped on both ends of the pair with `tc netem`
# (rate, and delay each way); a kernel without sch_netem gets one line saying so, and the
# shaped rows then limit the rate only (`tc tbf`, no delay); no `ip netns`: one line, and
# only the loopback rows.
#   usage (from the repository root):  bench/remote.sh [ROUNDS=3]
#     LAUNCHES=2000          timed launch round trips per run (and as many queued)
#     SIZES_KIB=4,1024,65536 transfer sizes
#     BALANCE=1              the clprism rows (0: none); BAL_LAUNCHES=300 launches each
#     SHAPES="25gbit:50us 1gbit:1ms"   RATE:DELAY per shaped link (delay each way)
#     NETNS=1                the namespace rows (0: loopback only)
#     CLPRISM_LIB=target/release/libOpenCL.so (built when missing)
# Each configuration runs ROUNDS times, interleaved; the table gives the median of the
# rounds' medians. Prints the raw lines (`[config round] ...`), then the table.
# The netem branch is written for kernels that have sch_netem; the machine of
# results/session22-2026-11-28/remote-bench.txt has none, so it has not run there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
LAUNCHES=${LAUNCHES:-2000}
SIZES_KIB=${SIZES_KIB:-4,1024,65536}
BALANCE=${BALANCE:-1}
BAL_LAUNCHES=${BAL_LAUNCHES:-300}
SHAPES=${SHAPES:-25gbit:50us 1gbit:1ms}
NETNS=${NETNS:-1}
LIB=${CLPRISM_LIB:-target/release/libOpenCL.so}

eval "$(scripts/pocl_remote.sh)"
make -s -C bench
RT=$PWD/examples/build/remote_rt
if [ "$BALANCE" = 1 ] && [ ! -f "$LIB" ]; then
  cargo build --release --lib >&2
fi
[ "$BALANCE" = 1 ] && LIB=$(readlink -f "$LIB")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/clprism-remote-bench.XXXXXX")
PIDS=()
NS="" VH=""
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [ -n "$VH" ] && ip link del "$VH" 2>/dev/null || true
  [ -n "$NS" ] && ip netns del "$NS" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

# the client's platform list: Debian's PoCL 3.1 and the remote client
mkdir -p "$TMP/vendors"
cp /etc/OpenCL/vendors/pocl.icd "$POCL_REMOTE_ICD" "$TMP/vendors/"
export OCL_ICD_VENDORS=$TMP/vendors POCL_DEVICES="pthread pthread remote"
unset LD_PRELOAD OCL_ICD_PLATFORM_SORT
for v in $(env | grep -o '^CLPRISM_[A-Z_]*' || true); do unset "$v"; done

# start_pocld ADDR [NETNS]: a pocld on ADDR at a free port (three ports: P, P+1, P+2), in
# NETNS if given; sets PORT and waits until it accepts connections
start_pocld() {
  local addr=$1 ns=${2:-} pid i try
  local pre=(); [ -n "$ns" ] && pre=(ip netns exec "$ns")
  for try in $(seq 40); do
    PORT=$((20000 + (RANDOM % 13000) * 3))
    if "${pre[@]}" ss -Htan 2>/dev/null | awk '{print $4}' |
      grep -qE ":($PORT|$((PORT + 1))|$((PORT + 2)))\$"; then continue; fi
    "${pre[@]}" env -u OCL_ICD_VENDORS -u POCL_DEVICES POCL_DEVICES=pthread \
      "$POCLD" -a "$addr" -p "$PORT" >"$TMP/pocld-$PORT.log" 2>&1 &
    pid=$!
    for i in $(seq 300); do
      kill -0 "$pid" 2>/dev/null || break
      if timeout 1 bash -c "exec 3<>/dev/tcp/$addr/$PORT" 2>/dev/null; then
        PIDS+=("$pid"); return 0
      fi
      sleep 0.1
    done
    kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  done
  echo "remote.sh: could not start pocld on $addr; its last log:" >&2
  cat "$TMP"/pocld-*.log >&2
  exit 1
}

# platform indices of the local PoCL 3.1 and the remote platform (ocl-icd sorts platforms by
# device count: read them, docs/remote.md §3)
platforms() {
  local vs
  vs=$(timeout -s KILL 30 clinfo --raw | awk '/CL_PLATFORM_VERSION/ {$1=""; print}') || true
  L=$(echo "$vs" | grep -n 'PoCL 3\.' | head -1 | cut -d: -f1)
  R=$(echo "$vs" | grep -n 'REMOTE' | head -1 | cut -d: -f1)
  [ -n "$L" ] && [ -n "$R" ] || { echo "remote.sh: expected a PoCL 3 and a REMOTE platform: $vs" >&2; exit 1; }
  L=$((L - 1)) R=$((R - 1))
}

RAW=$TMP/raw.txt
# measure CONFIG ROUND P:D SIZES [balance DEVICES]
measure() {
  local cfg=$1 round=$2 dev=$3 sizes=$4 n=$LAUNCHES pre=() log=""
  if [ "${5:-}" = balance ]; then
    log=$TMP/$cfg-$round.jsonl
    pre=(env LD_PRELOAD="$LIB" CLPRISM_MODE=balance CLPRISM_SPLIT=always CLPRISM_BALANCE_EARLY=off
         CLPRISM_SUMMARY=off CLPRISM_DEVICES="$6" CLPRISM_SCHEDULER=static:0.5,0.5 CLPRISM_LOG="$log")
    n=$BAL_LAUNCHES
  elif [ "${5:-}" = native ]; then
    n=$BAL_LAUNCHES
  fi
  local out rc=0
  out=$(timeout 300 "${pre[@]}" "$RT" "$dev" "$n" "$sizes" 2>"$TMP/err") || rc=$?
  if [ -n "$log" ] && [ -f "$log" ]; then
    # launches whose work went to two devices (the warm-up's included)
    out+=$'\n'$(python3 -c '
import json, sys
n = s = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "kernel" not in r or r.get("record"): continue
    n += 1
    s += sum(1 for x in (r.get("schedule") or {}).get("share") or [] if x > 0) >= 2
print(f"split {s} of {n} launches")' "$log")
  fi
  [ "$rc" = 0 ] || out+=$'\n'"FAILED rc=$rc: $(tail -3 "$TMP/err" | tr '\n' ' ')"
  echo "$out" | sed "s/^/[$cfg $round] /" | tee -a "$RAW"
}

echo "# bench/remote.sh $ROUNDS  (LAUNCHES=$LAUNCHES SIZES_KIB=$SIZES_KIB BALANCE=$BALANCE BAL_LAUNCHES=$BAL_LAUNCHES SHAPES=\"$SHAPES\" NETNS=$NETNS)"
echo "# $(date -u '+%F %T UTC') $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(cat "$(dirname "$POCLD")/../.complete")"
echo "# clprism $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo '+dirty'), library $LIB"

start_pocld 127.0.0.1
export POCL_REMOTE0_PARAMETERS=127.0.0.1:$PORT/0
platforms
echo "# loopback: pocld on 127.0.0.1:$PORT; local device $L:0 (and $L:1), remote device $R:0"
for round in $(seq "$ROUNDS"); do
  measure local "$round" "$L:0" "$SIZES_KIB"
  measure remote-lo "$round" "$R:0" "$SIZES_KIB"
  if [ "$BALANCE" = 1 ]; then
    measure native "$round" "$L:0" 0 native
    measure split-local "$round" "$L:0" 0 balance "$L:0,$L:1"
    measure split-remote-lo "$round" "$L:0" 0 balance "$L:0,$R:0"
  fi
done

# the shaped link: pocld in a network namespace behind a veth pair
shaped_cfgs=()
if [ "$NETNS" = 1 ]; then
  NS=clprism-rb$$
  VH=crb$$h; VN=crb$$n
  NET=10.250.$(($$ % 250))
  if ip netns add "$NS" 2>"$TMP/err" &&
     ip link add "$VH" type veth peer name "$VN" 2>>"$TMP/err" &&
     ip link set "$VN" netns "$NS" 2>>"$TMP/err"; then
    ip addr add "$NET.1/30" dev "$VH"; ip link set "$VH" up
    ip -n "$NS" addr add "$NET.2/30" dev "$VN"; ip -n "$NS" link set "$VN" up
    ip -n "$NS" link set lo up
    start_pocld "$NET.2" "$NS"
    export POCL_REMOTE0_PARAMETERS=$NET.2:$PORT/0
    platforms
    # probe netem on the pair; without it, tbf limits the rate (no delay)
    QDISC=netem
    if ! tc qdisc add dev "$VH" root netem delay 1us 2>"$TMP/err"; then
      QDISC=tbf
      echo "# netem: not available here (tc qdisc add ... netem: $(head -1 "$TMP/err" | sed 's/^Error: //; s/\.$//'): this kernel has no sch_netem), so no delay can be added; the shaped rows below limit the rate only (tc tbf) and keep the veth pair's own latency"
    fi
    tc qdisc del dev "$VH" root 2>/dev/null || true
    echo "# namespace: pocld on $NET.2:$PORT in netns $NS, behind veth $VH/$VN (MTU $(cat /sys/class/net/$VH/mtu)); shaping: $QDISC on both ends"
    tcq() { # NETNS|"" DEV VERB ARGS...: tc qdisc VERB dev DEV ARGS (in NETNS)
      local ns=$1 dev=$2 verb=$3; shift 3
      if [ -n "$ns" ]; then tc -n "$ns" qdisc "$verb" dev "$dev" "$@"; else tc qdisc "$verb" dev "$dev" "$@"; fi
    }
    shape() { # RATE DELAY on both ends of the pair (each way); none: no qdisc
      local rate=$1 delay=$2 end ns dev bytes burst
      for end in ":$VH" "$NS:$VN"; do
        ns=${end%%:*} dev=${end#*:}
        tcq "$ns" "$dev" del root 2>/dev/null || true
        [ "$rate" = none ] && continue
        if [ "$QDISC" = netem ]; then
          tcq "$ns" "$dev" add root netem rate "$rate" delay "$delay" limit 100000
        else
          bytes=$(echo "$rate" | awk '{r=$1; m=1; if (r ~ /gbit$/) m=1e9; else if (r ~ /mbit$/) m=1e6; else if (r ~ /kbit$/) m=1e3; sub(/[a-z]+$/, "", r); printf "%d", r*m/8}')
          burst=$((bytes / 1000)); [ "$burst" -ge 65536 ] || burst=65536   # 1 ms at the rate, at least 64 KiB
          tcq "$ns" "$dev" add root tbf rate "$rate" burst "$burst" latency 100ms
        fi
      done
    }
    shaped_cfgs=(veth)
    for s in $SHAPES; do shaped_cfgs+=("$s"); done
    for round in $(seq "$ROUNDS"); do
      for c in "${shaped_cfgs[@]}"; do
        if [ "$c" = veth ]; then shape none none; else shape "${c%%:*}" "${c#*:}"; fi
        name=remote-$c; [ "$QDISC" = tbf ] && [ "$c" != veth ] && name=remote-${c%%:*}-tbf
        measure "$name" "$round" "$R:0" "$SIZES_KIB"
        [ "$BALANCE" = 1 ] && measure "split-$name" "$round" "$L:0" 0 balance "$L:0,$R:0"
      done
    done
    shape none none
  else
    echo "# network namespaces: not available here ($(head -1 "$TMP/err" | tr -d '\n')): loopback rows only"
  fi
fi

echo
echo "# table: medians over $ROUNDS rounds of each run's medians (us; MB/s = 10^6 bytes/s)"
python3 - "$RAW" <<'PY'
import re, sys, statistics as st
rows, order = {}, []
for line in open(sys.argv[1]):
    m = re.match(r"\[(\S+) (\d+)\] (\w+) (.*)", line.strip())
    if not m:
        continue
    cfg, kind, rest = m.group(1), m.group(3), m.group(4)
    if cfg not in rows:
        rows[cfg] = {}
        order.append(cfg)
    kv = dict(re.findall(r"(\w+)=(\S+)", rest))
    r = rows[cfg]
    if kind == "launch":
        for k in ("rt_median_us", "rt_p10_us", "rt_p90_us", "queued_us_per_launch"):
            r.setdefault(k, []).append(float(kv[k]))
        r.setdefault("check", set()).add(kv["check"])
    elif kind in ("write", "read"):
        r.setdefault(f"{kind}{int(kv['bytes']) >> 10}", []).append(float(kv["MBps"]))
    elif kind == "split":
        r.setdefault("split", []).append(rest)
    elif kind == "FAILED":
        r.setdefault("failed", []).append(rest)
sizes = sorted({int(k[5:]) for r in rows.values() for k in r if k.startswith("write")})
def kib(s):
    return f"{s >> 10}M" if s >= 1024 else f"{s}K"
hdr = ["config", "launch rt", "p10", "p90", "queued"] + [f"{d} {kib(s)}" for s in sizes for d in ("wr", "rd")]
out = [hdr]
med = lambda v: st.median(v) if v else None
for cfg in order:
    r = rows[cfg]
    line = [cfg]
    for k in ("rt_median_us", "rt_p10_us", "rt_p90_us", "queued_us_per_launch"):
        v = med(r.get(k, []))
        line.append("-" if v is None else f"{v:.0f}")
    for s in sizes:
        for d in ("write", "read"):
            v = med(r.get(f"{d}{s}", []))
            line.append("-" if v is None else f"{v:.0f}")
    out.append(line)
w = [max(len(l[i]) for l in out) for i in range(len(hdr))]
for l in out:
    print("  ".join(x.rjust(w[i]) if i else x.ljust(w[i]) for i, x in enumerate(l)))
# what the remote device adds per launch: its round trip over the local device's, and a
# split launch's over the split over two local devices
base = {"remote": "local", "split-remote": "split-local"}
for cfg in order:
    for pre, b in base.items():
        if cfg.startswith(pre + "-") and b in rows and rows[cfg].get("rt_median_us"):
            d = med(rows[cfg]["rt_median_us"]) - med(rows[b]["rt_median_us"])
            print(f"  {cfg}: {d:+.0f} us per launch round trip over {b}")
for cfg in order:
    r = rows[cfg]
    notes = []
    if r.get("check", {"ok"}) != {"ok"}:
        notes.append(f"check {sorted(r['check'])}")
    if r.get("split"):
        notes.append("; ".join(r["split"]))
    if r.get("failed"):
        notes.append("FAILED: " + "; ".join(r["failed"]))
    if notes:
        print(f"  {cfg}: {' | '.join(notes)}")
PY
