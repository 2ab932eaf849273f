# Sourced by the GPU scripts (bench/gpu_*.sh) after G=.gpu is set: finds the OpenCL platform
# index of the NVIDIA driver and of PoCL's CPU device by asking the bundled blackscholes
# example which device it opened on platforms 0..3. Sets nv and cpu (empty when absent).
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
