#!/bin/bash
# Rodinia srad (small) in balance auto on three PoCL devices on the 16-core GPU host, 30 runs:
# the abort (rc 134) seen in 2 of 5 runs of h100host-pocl3-apps-log-818e546.txt; keeps the
# first error line of every failed run. EXTRA: more variables for the balance runs. Device tool, carry .gpu (bundle as gpu-pocl3-command.sh).
G=$PWD/.gpu
source $G/gpu-env.sh > /dev/null 2>&1
export PATH=/opt/clprism-tc/usr/bin:$PATH
mkdir -p /tmp/pocl-only && cp /etc/OpenCL/vendors/pocl.icd /tmp/pocl-only/
export OCL_ICD_VENDORS=/tmp/pocl-only OCL_ICD_FILENAMES=$(cat /etc/OpenCL/vendors/pocl.icd)
export POCL_DEVICES="pthread pthread basic" RUST_BACKTRACE=1
bash bench/rodinia_data.sh $G/rodinia/data small > /dev/null 2>&1
cd $G/rodinia/opencl/srad && mkdir -p output
fails=0
for i in $(seq 1 ${RUNS:-30}); do
  env $EXTRA CLPRISM_MODE=balance CLPRISM_SPLIT=${SPLIT:-auto} CLPRISM_LOG=/tmp/srad.$i.jsonl CLPRISM_SUMMARY=off \
    LD_PRELOAD=$G/libOpenCL.so timeout 60 ./srad.out -n 100 -l 0.5 -s 502 458 -p 0 > /tmp/srad.$i.out 2>&1
  rc=$?
  if [ $rc != 0 ]; then fails=$((fails+1)); echo "run $i rc $rc: $(grep -a -m1 -i 'assert\|panick\|abort' /tmp/srad.$i.out)"; fi
done
echo "SPLIT=${SPLIT:-auto} EXTRA=$EXTRA: $fails of ${RUNS:-30} runs failed"
