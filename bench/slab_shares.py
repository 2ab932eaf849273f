"""The owner-computes slabs (schedule.share) a balance-mode log's resident split launches
used, and how many launches used each, most used first.
usage: python3 bench/slab_shares.py LOG.jsonl [N=3]"""
import collections
import json
import sys

counts = collections.Counter()
for line in open(sys.argv[1]):
    rec = json.loads(line)
    sched = rec.get("schedule") or {}
    if sched.get("merge") == "resident":
        counts[str(sched.get("share"))] += 1
print("    slabs:", dict(counts.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 3)))
