"""Stand-in gpu-run for the package's tests (no GPU, no build).

`gpu-run MODULE [--manifest M] [--kernel K] --arg A... --out I:PATH --json R`
writes each output from the argument texts, as the real one makes equal
texts give equal contents: an output's bytes are a function of its own text
and of the inputs of its kernel (for a fused kernel, of its part's arguments
by the manifest's arg_map), so that a fused kernel given its originals'
arguments in the right places writes what they write. `gpu-run --spec S
--json R [--occupancy-sweep]` times every kernel and group.

Its behaviour comes from the JSON file $FAKE_GPU_RUN_CONFIG: "corrupt" /
"fail" / "hang": substrings of the module path that make it write one byte
off / exit 2 / sleep; "times": {label: ms}. Every call appends its argv as a
JSON line to $FAKE_LOG.
"""

import json
import stat
import sys

import pytest

FAKE_GPU_RUN = r'''
import hashlib, json, os, re, sys, time
args = sys.argv[1:]
cfg_path = os.environ.get("FAKE_GPU_RUN_CONFIG")
cfg = json.load(open(cfg_path)) if cfg_path and os.path.exists(cfg_path) else {}
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
device = {"name": "Fake GPU", "multiprocessors": 132, "total_memory": 80 << 30}
SIZE = {"u8": 1, "u16": 2, "f16": 2, "u32": 4, "s32": 4, "f32": 4, "u64": 8, "s64": 8,
        "f64": 8}

def values(name):
    return [args[i + 1] for i, a in enumerate(args) if a == name]

def t(ms):
    return {"median_ms": ms, "min_ms": ms, "max_ms": ms, "spread": 0.0}

if "--spec" in args:
    spec = json.load(open(values("--spec")[0]))
    times = cfg.get("times", {})
    ms = {k["label"]: times.get(k["label"], 1.0) for k in spec["kernels"]}
    for k in spec["kernels"]:
        if any(s in k["module"] for s in cfg.get("fail", [])):
            print(f"gpu-run: error: {k['module']}: cannot load", file=sys.stderr)
            sys.exit(2)
    kernels = []
    for k in spec["kernels"]:
        rec = {"label": k["label"], "time": t(ms[k["label"]])}
        if "--occupancy-sweep" in args:
            rec["occupancy"] = {"blocks_per_sm": 4, "sweep": [
                {"blocks_per_sm": b, "time": t(ms[k["label"]] * 4 / b)} for b in (3, 2, 1)]}
        kernels.append(rec)
    groups = []
    for g in spec.get("groups", []):
        ks = g["kernels"]
        rg = {"name": g["name"], "kernels": ks}
        modes = g.get("modes", ["serial", "concurrent"])
        if "alone" in modes:
            rg["alone"] = {k: t(ms[k]) for k in ks}
        if "serial" in modes:
            rg["serial"] = t(sum(ms[k] for k in ks))
        if "concurrent" in modes:
            rg["concurrent"] = t(max(ms[k] for k in ks) * 1.2)
        if "graph" in modes:
            rg["graph"] = t(max(ms[k] for k in ks) * 1.1)
        rg["also"] = {k: t(ms[k]) for k in g.get("also", [])}
        groups.append(rg)
    json.dump({"device": device, "warmup": spec.get("warmup"), "repeat": spec.get("repeat"),
               "kernels": kernels, "groups": groups}, open(values("--json")[0], "w"))
    sys.exit(0)

module = args[0]
if any(s in module for s in cfg.get("hang", [])):
    time.sleep(60)
if any(s in module for s in cfg.get("fail", [])):
    print(f"gpu-run: error: {module}: cannot load", file=sys.stderr)
    sys.exit(2)
kargs, manifest = values("--arg"), values("--manifest")
parts = None
if manifest:
    for k in json.load(open(manifest[0])).get("kernels", []):
        if k.get("fused_from") and (not values("--kernel") or k["name"] == values("--kernel")[0]):
            parts = [p["arg_map"] for p in k["fused_from"]]
# A fused module may say which parameters a part really reads ("// true_map
# PART: i,j,..."), to play a manifest that does not match its kernel.
for m in re.finditer(r"// true_map (\d+): ([\d,]+)", open(module).read()):
    parts[int(m.group(1))] = [int(x) for x in m.group(2).split(",")]

def inputs(i):
    group = next(p for p in parts if i in p) if parts else range(len(kargs))
    return [kargs[j] for j in group if kargs[j].split(":")[-1] not in ("out", "zero")]

for o in values("--out"):
    idx, path = o.split(":", 1)
    a = kargs[int(idx)]
    n = int(a.split(":")[2]) * SIZE[a.split(":")[1]]
    seed = hashlib.sha256(("|".join(inputs(int(idx))) + "#" + a).encode()).digest()
    data = bytearray((seed * (n // 32 + 1))[:n])
    if any(s in module for s in cfg.get("corrupt", [])):
        data[n // 2] ^= 1
    open(path, "wb").write(data)
if values("--trace"):
    os.makedirs(values("--trace")[0], exist_ok=True)
print("device: Fake GPU (132 SMs)")
if values("--json"):
    json.dump({"device": device, "kernels": [{"label": "k", "grid": [8, 1, 1],
                                              "block": [128, 1, 1], "registers": 32}]},
              open(values("--json")[0], "w"))
'''


def make_tool(path, body):
    path.write_text(f"#!{sys.executable}\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


class FakeGpuRun:
    """The stand-in at .path; configure() sets its behaviour, calls() lists
    the argv of every call so far."""

    def __init__(self, tmp_path, monkeypatch):
        self.path = make_tool(tmp_path / "gpu-run", FAKE_GPU_RUN)
        self.log = tmp_path / "gpu-run.log"
        self.config = tmp_path / "gpu-run.json"
        monkeypatch.setenv("FAKE_LOG", str(self.log))
        monkeypatch.setenv("FAKE_GPU_RUN_CONFIG", str(self.config))
        self.configure()

    def configure(self, **cfg):
        self.config.write_text(json.dumps(cfg))

    def calls(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def gpu_run(tmp_path, monkeypatch):
    monkeypatch.delenv("GPUOPT_BIN_DIR", raising=False)
    return FakeGpuRun(tmp_path, monkeypatch)
