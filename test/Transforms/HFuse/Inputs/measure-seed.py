"""Rewrites the one decision cached in a folder (hfuse-measure.test).

  measure-seed.py DIR fuse     a measured "fuse" decision with a dynamic plan
  measure-seed.py DIR corrupt  text that is not JSON
  measure-seed.py DIR count    prints the number of entries
"""
import json
import os
import sys

folder, what = sys.argv[1], sys.argv[2]
entries = sorted(f for f in os.listdir(folder) if f.endswith(".json"))
if what == "count":
    print(f"{len(entries)} entries")
    sys.exit(0)
assert len(entries) == 1, entries
path = os.path.join(folder, entries[0])
if what == "corrupt":
    with open(path, "w") as f:
        f.write('{"format": ')
    sys.exit(0)
with open(path) as f:
    entry = json.load(f)
entry.update(
    decision="fuse", fused_ms=0.4, created="2026-11-24T12:00:00Z",
    baselines_ms={"serial": 0.5, "graph": 0.45},
    plan='#gpuopt.hfuse_plan<name = "scale_tile_fused", strategy = dynamic, '
         'parts = [<kernel = "scale", module = "scale", block = [128, 1, 1], '
         'grid = [8192, 1, 1], ratio = 2, dynamic_smem = 0>, <kernel = "tile", '
         'module = "tile", block = [16, 4, 1], grid = [64, 64, 1], '
         'dynamic_smem = 64>]>')
with open(path, "w") as f:
    json.dump(entry, f)
