#!/usr/bin/env python3
"""One-time generator of cl-headers/entry_points.tsv.

Reads the symbol list of Debian's ocl-icd 2.3 libOpenCL.so.1 (`nm -D --defined-only`, with
symbol versions) and the prototypes from the Khronos headers (/usr/include/CL), and writes one
row per exported entry point: name, ocl-icd symbol version, return type, parameters.
The TSV is the source of truth that build.rs reads; this script only bootstraps/refreshes it.

Usage: nm -D --defined-only /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 | \
         python3 cl-headers/tools/gen_table.py /usr/include/CL > cl-headers/entry_points.tsv
"""
import re, sys, glob

hdr_dir = sys.argv[1]
syms = {}
for line in sys.stdin:
    parts = line.split()
    if len(parts) == 3 and '@@' in parts[2]:
        name, ver = parts[2].split('@@')
        syms[name] = ver

protos = {}
for path in sorted(glob.glob(hdr_dir + '/*.h')):
    text = open(path).read()
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    for m in re.finditer(r'extern\s+CL_API_ENTRY\s+(.*?)\s*CL_API_CALL\s+(\w+)\s*\((.*?)\)\s*CL_API_SUFFIX\w*\s*;', text, re.S):
        ret, name, params = m.group(1), m.group(2), m.group(3)
        ret = re.sub(r'\bCL_API_PREFIX\w*\b', '', ret).strip()
        params = ' '.join(params.split())
        if name not in protos:
            protos[name] = (' '.join(ret.split()), params)

missing = sorted(set(syms) - set(protos))
if missing:
    sys.exit('no prototype for: ' + ', '.join(missing))
print('# clprism entry-point table: every symbol Debian ocl-icd 2.3 libOpenCL.so.1 exports.')
print('# columns: name <TAB> symbol-version <TAB> return-type <TAB> parameters (C, comma-separated)')
print('# Generated once by cl-headers/tools/gen_table.py from the Khronos headers; edited by hand since.')
for name in sorted(syms, key=lambda n: (syms[n], n)):
    ret, params = protos[name]
    print(f'{name}\t{syms[name]}\t{ret}\t{params}')
