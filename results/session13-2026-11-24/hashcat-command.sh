#!/usr/bin/env bash
# hashcat's brute-force MD5 crack (hashcat -m 0 -a 3 md5("abc") ?l?l?l -d 1) natively and in
# balance mode with CLPRISM_SPLIT=always and auto, two PoCL devices (`pthread pthread`), each
# mode from an empty hashcat kernel cache (run 1 compiles and links each kernel file: the
# linked-alone programs of ca1f872/d1419d6; run 2 loads hashcat's cached binaries). The open
# bug of 39755ec: with linked programs split, balance mode missed the crack.
# Output: hashcat.txt. LIB and CLPRISM (clprism run: hashcat dlopens "libOpenCL.so"): release
# build of main at 6891596 (= branch checks' src).
cd "$(dirname "$0")/../.."
LIB=${LIB:-/work/checks-lib/libOpenCL-6891596.so} CLPRISM=${CLPRISM:-/work/checks-lib/clprism-6891596} REPS=2 MODES="native always auto" \
  POCL_DEVICES="pthread pthread" bench/hashcat_check.sh /tmp/hashcat_check
