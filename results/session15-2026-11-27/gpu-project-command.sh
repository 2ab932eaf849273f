#!/bin/bash
# Issue 19 on one H200 (device tool, kind nvidia-h200, carry .gpu; bundle as in
# results/session14-2026-11-27/gpu-project-command.sh, which this runs as .gpu/cmd.sh):
#   call 1: BUILD=f6727b1 PART=corpus DEADLINE_S=400 bash .gpu/cmd.sh   (PolyBench-ACC LARGE)
#   call 2: BUILD=f6727b1 PART=apps DEADLINE_S=200 bash .gpu/cmd.sh     (clpeak, clFFT, CLBlast)
# natively, in log mode (every launch timed) and in project mode (every launch timed).
PART=${PART:-corpus} DEADLINE_S=${DEADLINE_S:-400} bash results/session14-2026-11-27/gpu-project-command.sh
