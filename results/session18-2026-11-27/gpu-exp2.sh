#!/usr/bin/env bash
# Session 18, second 4-GPU call: (1) clpeak --global-bandwidth and --compute-sp in each
# clprism configuration, to find what slows an app once the balance devices are open;
# (2) gemm, 2mm, 3mm again (the app's device goes on in chunks while the devices open).
set -u
source .gpu/gpu-env.sh > /dev/null 2>&1
nvidia-smi -L
mkdir -p /tmp/nv && cp /etc/OpenCL/vendors/nvidia.icd /tmp/nv/
export OCL_ICD_VENDORS=/tmp/nv OCL_ICD_FILENAMES=libnvidia-opencl.so.1
L=$PWD/.gpu/libOpenCL.so; C=.gpu/mgpu/clpeak
for t in global-bandwidth compute-sp; do
  $C/clpeak -p 0 -d 0 --$t > /dev/null 2>&1   # warm the driver's cache
  for cfg in native log off sib_off sib_gpu devs_other app_only sib_gpu_debug; do
    env=(CLPRISM_MODE=balance CLPRISM_DEVICES=gpu:4 CLPRISM_SUMMARY=off CLPRISM_LOG=/tmp/$t.$cfg.jsonl)
    case $cfg in
      native) env=(X=1) ;;
      log) env=(CLPRISM_MODE=log CLPRISM_SUMMARY=off CLPRISM_LOG=/tmp/$t.$cfg.jsonl) ;;
      off) env=(CLPRISM_MODE=off) ;;
      sib_off) env+=(CLPRISM_BALANCE_SIBLINGS=off) ;;
      devs_other) env+=(CLPRISM_DEVICES=0:1,0:2,0:3) ;;
      app_only) env+=(CLPRISM_DEVICES=0:0) ;;
      sib_gpu_debug) env+=(CLPRISM_DEBUG=1) ;;
    esac
    pre=(); [ $cfg = native ] || pre=(LD_PRELOAD=$L)
    t0=$(date +%s%N)
    env "${env[@]}" "${pre[@]}" $C/clpeak -p 0 -d 0 --$t > /tmp/$t.$cfg.out 2>&1
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "$t $cfg ${ms}ms $(grep -E '^ +float' /tmp/$t.$cfg.out | awk '{printf "%s=%s ", $1, $3}')"
  done
done | tee $OUT/clpeak-configs.txt
CLPRISM_DEBUG=1 GPUSETS="2 4" SPLITS="auto" DEADLINE_S=250 RUN_TIMEOUT=90 \
  bash bench/multi_gpu.sh /tmp/r4 gemm 2mm 3mm > /dev/null 2>&1
cp /tmp/r4/table.txt "$OUT/t4.txt"
tar czf "$OUT/exp2.tgz" -C /tmp r4 $(cd /tmp && ls *.jsonl *.out)
