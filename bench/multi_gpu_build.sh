#!/usr/bin/env bash
# Builds the corpus of bench/multi_gpu.sh (issue 31, item 5): applications nobody here wrote,
# built here (Debian 12, x86-64) and carried to the GPU host in the ignored folder .gpu/.
#   PolyBench-ACC's OpenCL gemm, 2mm, 3mm, fdtd-2d, jacobi-2d-imper (cavazos-lab/PolyBench-ACC)
#     GPU only (RUN_ON_CPU=0), device "first device of the first platform"
#     (CL_DEVICE_TYPE_ALL); where the app would print its output array (POLYBENCH_DUMP_ARRAYS)
#     it prints "digest: HEX" of the array's bytes instead (bench/mgpu/digest.h); it prints its
#     own kernel time ("GPU Time in seconds:", -DPOLYBENCH_TIME, which the apps define);
#   BabelStream's OpenCL model (UoB-HPC/BabelStream), built with g++ directly; it checks its
#     arrays itself and exits 1 when they are wrong;
#   clpeak: Debian's /usr/bin/clpeak, copied (apt-get install clpeak).
# Each app gets its own folder (PolyBench's apps open their .cl by relative path); OUT/apps.txt
# lists "name|folder|kind|description|command" for bench/multi_gpu.sh.
#   usage: bench/multi_gpu_build.sh [OUT]     (default .gpu/mgpu)
#   SIZE=large (default: the sizes of issue 31's table, for GPUs) | small (seconds on PoCL)
#   POLYBENCH_MIRROR, BABELSTREAM_MIRROR: the fetched git dirs (the search tool's `fetch` of
#     github:cavazos-lab/PolyBench-ACC and github:UoB-HPC/BabelStream); defaults below
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu/mgpu}
size=${SIZE:-large}
pb=${POLYBENCH_MIRROR:-/work/.mirror/cavazos-lab+PolyBench-ACC/repo}
bs=${BABELSTREAM_MIRROR:-/work/.mirror/UoB-HPC+BabelStream/repo}
for m in "$pb" "$bs"; do
  git -C "$m" rev-parse -q --verify HEAD >/dev/null ||
    { echo "no git mirror at $m: fetch it (github:cavazos-lab/PolyBench-ACC, github:UoB-HPC/BabelStream)" >&2; exit 1; }
done
grep -qx '/.gpu/' .gitignore 2>/dev/null || { mkdir -p .git/info; grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude; }

case $size in
  large) # issue 31: gemm one launch of 16384^3, 2mm/3mm at 8192, fdtd-2d (500 steps) and
         # jacobi-2d-imper (200 steps) at 16384^2; STREAM: three 1 GiB float arrays, 100 times
    gemm="-DNI=16384 -DNJ=16384 -DNK=16384"
    mm2="-DNI=8192 -DNJ=8192 -DNK=8192 -DNL=8192"
    mm3="-DNI=8192 -DNJ=8192 -DNK=8192 -DNL=8192 -DNM=8192"
    fdtd="-DTMAX=${FDTD_STEPS:-500} -DNX=16384 -DNY=16384"
    jac="-DTSTEPS=200 -DN=16384"
    stream="--float --arraysize 268435456 --numtimes 100"
    # ten times the iterations: a run long enough for the devices to open and take part
    fdtdl="-DTMAX=5000 -DNX=16384 -DNY=16384"
    jacl="-DTSTEPS=2000 -DN=16384"
    streaml="--float --arraysize 268435456 --numtimes 1000" ;;
  small) # PoCL's CPU devices: a second or so per run, and still several work-groups per device
    gemm="-DNI=512 -DNJ=512 -DNK=512"
    mm2="-DNI=256 -DNJ=256 -DNK=256 -DNL=256"
    mm3="-DNI=256 -DNJ=256 -DNK=256 -DNL=256 -DNM=256"
    fdtd="-DTMAX=20 -DNX=512 -DNY=512"
    jac="-DTSTEPS=20 -DN=512"
    stream="--float --arraysize 1048576 --numtimes 10"
    fdtdl="-DTMAX=200 -DNX=512 -DNY=512"
    jacl="-DTSTEPS=200 -DN=512"
    streaml="--float --arraysize 1048576 --numtimes 100" ;;
  *) echo "SIZE must be large or small" >&2; exit 1 ;;
esac

src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git -C "$pb" archive HEAD OpenCL | tar x -C "$src"
rm -rf "$out"; mkdir -p "$out"
out=$(cd "$out" && pwd)
: > "$out/apps.txt"
pbrev=$(git -C "$pb" rev-parse --short HEAD)
# name  source dir (under OpenCL/)  main .c  size flags
while read -r app dir c flags; do
  mkdir -p "$out/$app"
  cp "$src/OpenCL/$dir"/*.cl "$out/$app/"
  # print a digest of the output array where POLYBENCH_DUMP_ARRAYS would print it as text
  sed 's/polybench_prevent_dce(print_array(.*POLYBENCH_ARRAY(\([A-Za-z_0-9]*\))));/mgpu_digest(POLYBENCH_ARRAY(\1), sizeof(POLYBENCH_ARRAY(\1)));/' \
    "$src/OpenCL/$dir/$c" > "$src/OpenCL/$dir/mgpu_$c"
  grep -q 'mgpu_digest(POLYBENCH_ARRAY' "$src/OpenCL/$dir/mgpu_$c" || { echo "no output array found in $app" >&2; exit 1; }
  # shellcheck disable=SC2086
  gcc -O2 -w -DOPENCL_DEVICE_SELECTION=CL_DEVICE_TYPE_ALL -DRUN_ON_CPU=0 -DCL_TARGET_OPENCL_VERSION=120 \
    $flags -include "$PWD/bench/mgpu/digest.h" -I"$src/OpenCL/utilities" -I"$src/OpenCL/$dir" \
    "$src/OpenCL/$dir/mgpu_$c" -o "$out/$app/$app.exe" -lOpenCL -lm
  echo "$app|$app|polybench|PolyBench-ACC@$pbrev $app ${flags//-D/}|./$app.exe" >> "$out/apps.txt"
done <<EOF
gemm linear-algebra/kernels/gemm gemm.c $gemm
2mm linear-algebra/kernels/2mm 2mm.c $mm2
3mm linear-algebra/kernels/3mm 3mm.c $mm3
fdtd-2d stencils/fdtd-2d fdtd2d.c $fdtd
jacobi-2d-imper stencils/jacobi-2d-imper jacobi2D.c $jac
fdtd-long stencils/fdtd-2d fdtd2d.c $fdtdl
jacobi-long stencils/jacobi-2d-imper jacobi2D.c $jacl
EOF

# BabelStream: main.cpp + the OpenCL model; the C++ runtime linked in statically, so the binary
# needs only libOpenCL.so.1, libm and libc on the GPU host
mkdir -p "$out/babelstream"
git -C "$bs" archive HEAD src | tar x -C "$src"
g++ -O3 -std=c++17 -DOCL -I"$src/src" -I"$src/src/ocl" "$src/src/main.cpp" "$src/src/ocl/OCLStream.cpp" \
  -o "$out/babelstream/babelstream" -static-libstdc++ -static-libgcc -lOpenCL
bsrev=$(git -C "$bs" rev-parse --short HEAD)
echo "stream|babelstream|babelstream|BabelStream@$bsrev OpenCL $stream|./babelstream --device 0 $stream" >> "$out/apps.txt"
echo "stream-long|babelstream|babelstream|BabelStream@$bsrev OpenCL $streaml|./babelstream --device 0 $streaml" >> "$out/apps.txt"

# clpeak: Debian's package (links libOpenCL.so.1, libstdc++, libm, libc only)
if [ -x /usr/bin/clpeak ]; then
  mkdir -p "$out/clpeak"
  cp /usr/bin/clpeak "$out/clpeak/clpeak"
  v=$(dpkg-query -W -f='${Version}' clpeak 2>/dev/null || echo '?')
  echo "clpeak_sp|clpeak|clpeak|clpeak $v --compute-sp|./clpeak -p 0 -d 0 --compute-sp" >> "$out/apps.txt"
  echo "clpeak_bw|clpeak|clpeak|clpeak $v --global-bandwidth|./clpeak -p 0 -d 0 --global-bandwidth" >> "$out/apps.txt"
else
  echo "clpeak not built: /usr/bin/clpeak is missing (apt-get install clpeak)" >&2
fi
echo "size=$size built $(wc -l < "$out/apps.txt") apps in $out ($(du -sh "$out" | cut -f1)):"
cut -d'|' -f1 "$out/apps.txt" | tr '\n' ' '; echo
