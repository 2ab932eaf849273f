"""Medians of the per-call host times in CLPRISM_DEBUG lines of split launches: per halo
read and write (a batch's enqueue time over its reads), per chunk enqueue (enqueue, callback
and flush), and the time from a launch's start until its chunks were set up (halo batch
done), over launches that fetched halos.
usage: python3 debug_calls.py FILE..."""
import re
import statistics as st
import sys

for path in sys.argv[1:]:
    reads, writes, enq, setup = [], [], [], []
    for line in open(path):
        m = re.search(r"halo batch: (\d+) reads of (\d+) bytes enqueued in ([\d.]+) us, "
                      r"waited for ([\d.]+) us, writes enqueued in ([\d.]+) us", line)
        if m and int(m.group(1)) > 0:
            n = int(m.group(1))
            reads.append(float(m.group(3)) / n)
            writes.append(float(m.group(5)) / n)
        m = re.search(r"clEnqueueNDRangeKernel ([\d.]+) us, callback ([\d.]+) us, clFlush ([\d.]+) us", line)
        if m:
            enq.append(sum(float(m.group(i)) for i in (1, 2, 3)))
        m = re.search(r"chunks set up \((\d+) bytes prefetched\) at ([\d.]+) us", line)
        if m and int(m.group(1)) > 0:
            setup.append(float(m.group(2)))
    print(f"{path}: per read {st.median(reads):.1f} us, per write {st.median(writes):.1f} us, "
          f"per chunk enqueue {st.median(enq):.1f} us, chunks set up at {st.median(setup):.1f} us "
          f"(medians over {len(reads)} batches, {len(enq)} chunks)")
