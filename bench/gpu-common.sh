# Sourced by the GPU scripts (bench/gpu_*.sh) after G=.gpu is set: finds the OpenCL platform
# index of the NVIDIA driver and of PoCL's CPU device by asking the bundled blackscholes
# example which device it opened on platforms 0..3 (sets nv and cpu, empty when absent), and
# defines run / bal, which need OUT and LIB set and write $OUT/balance.txt and $OUT/logs/.
probe_platform() { # index -> first line the example prints (its device name)
  CLPRISM_EXAMPLE_DEVICE=$1:0 "$G/examples/blackscholes" 1024 2>&1 | head -1
}
nv=""
cpu=""
for p in 0 1 2 3; do
  probe=$(probe_platform $p)
  case "$probe" in
    *NVIDIA*|*nvidia*) [ -n "$nv" ] || nv=$p ;;
    *cpu*|*pthread*|*Xeon*|*EPYC*) [ -n "$cpu" ] || cpu=$p ;;
  esac
done

run() { # name config env... -- app args
  local name=$1 cfg=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local t0=$(date +%s.%N)
  local out
  out=$(env "${envs[@]}" CLPRISM_LOG=$OUT/logs/$name.$cfg.jsonl CLPRISM_SUMMARY=off timeout ${RUN_TIMEOUT:-150} "$@" 2>"$OUT/logs/$name.$cfg.err")
  local rc=$?
  local t1=$(date +%s.%N)
  local ms=$(echo "$out" | sed -n 's/.*time_ms=\([0-9.]*\).*/\1/p' | tail -1)
  local st=$(echo "$out" | grep -oE '^(PASS|FAIL)' | tail -1)
  printf "%-14s %-26s rc=%-3s %-4s time_ms=%-10s wall_s=%.2f\n" "$name" "$cfg" "$rc" "${st:-?}" "${ms:-?}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" | tee -a "$OUT/balance.txt"
}
# Each balanced run starts from a fresh copy of the SPIR-V cache, so it pays the first-launch
# footprint derivation ("cold"); a config ending in "-warm" reuses the footprint models the
# earlier runs saved in $G/emu-cache (what a second run of the same app sees), and the
# registers ptxas reported (saved by the first build, which the driver then caches).
bal() { # name config devices [env...] -- app args
  local name=$1 cfg=$2 devs=$3; shift 3
  local cache=$G/emu-cache
  case "$cfg" in
    *-warm) ;;
    *) cache=$(mktemp -d); cp -r "$G/emu-cache/." "$cache/"; rm -f "$cache"/footprint-* ;;
  esac
  run "$name" "$cfg" CLPRISM_MODE=balance CLPRISM_DEVICES=$devs CLPRISM_CACHE=$cache LD_PRELOAD=$LIB "$@"
  case "$cfg" in *-warm) ;; *) cp -n "$cache"/footprint-* "$cache"/registers-* "$G/emu-cache/" 2>/dev/null; rm -rf "$cache" ;; esac
}

