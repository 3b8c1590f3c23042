"""CPU tests of hfuse_search.py: prepare, measure and run with stand-in gpu-opt
and gpu-run scripts (no GPU, no build).

usage: python3 -m pytest python/tests/test_hfuse_search.py

The stand-ins read their behaviour from JSON files named in the environment:
FAKE_GPU_OPT_CONFIG (the planner's candidates, a decline, refusals) and
FAKE_GPU_RUN_CONFIG (the times gpu-run reports, or a failure). Both append one
JSON line per call to FAKE_LOG.
"""

import json
import os
import stat
import subprocess
import sys

import pytest

from gpuopt import hfuse_search as hs


# gpu-opt MODULE... --hfuse=OPTIONS -o OUT.ptx --manifest OUT.json
FAKE_GPU_OPT = r'''#!/usr/bin/env python3
import json, os, re, sys
args = sys.argv[1:]
hfuse_at = next(i for i, a in enumerate(args) if a.startswith("--hfuse="))
hfuse = args[hfuse_at].split("=", 1)[1]
modules = args[:hfuse_at]
out = args[args.index("-o") + 1]
manifest = args[args.index("--manifest") + 1]
tokens = hfuse.split()
opts = dict(t.split("=", 1) for t in tokens)
cfg = json.load(open(os.environ["FAKE_GPU_OPT_CONFIG"]))
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps({"tool": "gpu-opt", "argv": args, "cwd": os.getcwd()}) + "\n")

def marked(marker):
    return set(marker.split()) <= set(tokens)

params = {}
for m in modules:
    if not os.path.exists(m):
        print(f"error: cannot open {m}", file=sys.stderr)
        sys.exit(1)
    for name, plist in re.findall(r"\.entry\s+(\w+)\s*\(([^)]*)\)", open(m).read()):
        params[name] = plist.count(".param")
names = opts["kernels"].split(",")
if "candidates-out" in opts:
    if not cfg.get("no_candidates"):
        with open(opts["candidates-out"], "w") as f:
            json.dump(cfg["candidates"], f, indent=2)
    if cfg.get("decline"):
        print("error: " + cfg["decline"], file=sys.stderr)
        sys.exit(1)
for marker in cfg.get("refuse", []):
    if marked(marker):
        print(f"error: hfuse: refused {marker}: too much shared memory", file=sys.stderr)
        sys.exit(1)
# A fused kernel: B's parameters first, then A's, then (dynamic) a counter.
na, nb = params[names[0]], params[names[1]]
fused_params = [{"name": f"p{i}", "type": "u64", "kind": "scalar"} for i in range(na + nb)]
if opts["strategy"] == "dynamic":
    fused_params.append({"name": "counter", "type": "u64", "kind": "pointer"})
name = opts.get("name", "fused")
with open(out, "w") as f:
    f.write(f"// fake fused kernel\n// hfuse: {hfuse}\n.visible .entry {name}(\n)\n")
with open(manifest, "w") as f:
    json.dump({"manifest_version": 2, "module": {"path": os.path.basename(out), "format": "ptx"},
               "kernels": [{"name": name, "params": fused_params,
                            "launch": {"grid": [264, 1, 1], "block": [512, 1, 1],
                                       "dynamic_smem": 0},
                            "fusion_strategy": opts["strategy"],
                            "fused_from": [
                                {"kernel": names[0], "arg_map": [nb + i for i in range(na)]},
                                {"kernel": names[1], "arg_map": list(range(nb))}]}]},
              f, indent=1)
print(f"remark: hfuse: {opts['strategy']} strategy as requested", file=sys.stderr)
'''

# gpu-run --spec SPEC --json REPORT. Checks the spec as gpu-run does (known keys,
# unique labels, group labels, files relative to the current directory).
# gpu-run MODULE [--manifest M] --arg A... --out I:PATH: each output's bytes are
# a function of the argument text and of the inputs of its kernel (for a fused
# kernel: of its part, by the manifest's arg_map), so that a fused kernel given
# its originals' arguments in the right places writes what they write; a
# module whose "// hfuse:" options hold one of the config's "corrupt" markers
# writes one byte off.
FAKE_GPU_RUN = r'''#!/usr/bin/env python3
import hashlib, json, os, re, sys
args = sys.argv[1:]
cfg = json.load(open(os.environ["FAKE_GPU_RUN_CONFIG"]))
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps({"tool": "gpu-run", "argv": args, "cwd": os.getcwd()}) + "\n")
if "--spec" not in args:
    def values(name):
        return [args[i + 1] for i, a in enumerate(args) if a == name]
    kargs, manifest = values("--arg"), values("--manifest")
    parts = None
    if manifest:
        kernel = json.load(open(manifest[0]))["kernels"][0]
        parts = [p["arg_map"] for p in kernel.get("fused_from", [])] or None
    text = open(args[0]).read()
    m = re.search(r"// hfuse: (.*)", text)
    tokens = set(m.group(1).split()) if m else set()
    corrupt = any(set(c.split()) <= tokens for c in cfg.get("corrupt", []))
    def inputs(i):
        group = next(p for p in parts if i in p) if parts else range(len(kargs))
        return [kargs[j] for j in group if kargs[j].split(":")[-1] not in ("out", "zero")]
    for o in values("--out"):
        idx, path = o.split(":", 1)
        a = kargs[int(idx)]
        n = int(a.split(":")[2]) * {"f32": 4, "u32": 4, "u64": 8}[a.split(":")[1]]
        seed = hashlib.sha256(("|".join(inputs(int(idx))) + "#" + a).encode()).digest()
        data = bytearray((seed * (n // 32 + 1))[:n])
        if corrupt:
            data[n // 2] ^= 1
        open(path, "wb").write(data)
    report = values("--json")
    if report:
        json.dump({"device": {"name": "Fake GPU"}, "kernels": [{"label": "k"}]},
                  open(report[0], "w"))
    sys.exit(0)
spec_path = args[args.index("--spec") + 1]
report = args[args.index("--json") + 1]

def fail(msg):
    print(f"gpu-run: error: {msg}", file=sys.stderr)
    sys.exit(2)

if cfg.get("fail"):
    fail("no CUDA device")
spec = json.load(open(spec_path))
n = int(re.search(r"(\d+)\.json$", spec_path).group(1))  # spec<N>.json: process N
if set(spec) - {"warmup", "repeat", "kernels", "groups"}:
    fail("unknown top-level key")
by_label = {}
for k in spec["kernels"]:
    if set(k) - {"label", "module", "kernel", "manifest", "grid", "block", "smem", "args",
                 "out", "time_alone"}:
        fail(f"unknown key in {k}")
    label = k.get("label", k.get("kernel"))
    if label in by_label:
        fail(f"duplicate label '{label}'")
    by_label[label] = k
    for key in ("module", "manifest"):
        if key in k and not os.path.exists(k[key]):
            fail(f"{k[key]}: cannot open")

def time(ms):
    return {"median_ms": ms, "min_ms": ms, "max_ms": ms, "mean_ms": ms, "spread": 0.0}

def pick(value):
    return value[n] if isinstance(value, list) else value

def candidate_ms(label):
    k = by_label[label]
    text = open(k["module"]).read()
    tokens = set(re.search(r"// hfuse: (.*)", text).group(1).split())
    for key, ms in cfg.get("candidates", {}).items():
        if key == label or set(key.split()) <= tokens:
            return ms
    return cfg.get("default", 100.0)

groups = []
for g in spec.get("groups", []):
    if set(g) - {"name", "kernels", "modes", "also"}:
        fail("unknown group key")
    for label in g["kernels"] + g.get("also", []):
        if label not in by_label:
            fail(f"no kernel labelled '{label}'")
    rg = {"name": g["name"], "kernels": g["kernels"]}
    for mode in g.get("modes", ["serial", "concurrent"]):
        if mode in cfg:
            rg[mode] = time(pick(cfg[mode]))
    rg["also"] = {label: time(candidate_ms(label)) for label in g.get("also", [])}
    groups.append(rg)
with open(report, "w") as f:
    json.dump({"device": {"name": cfg.get("device", "Fake GPU")},
               "warmup": spec.get("warmup"), "repeat": spec.get("repeat"),
               "groups": groups}, f)
'''

PTX_A = """.version 8.0
.target sm_90
.visible .entry ka(
\t.param .u64 ka_param_0,
\t.param .u64 ka_param_1,
\t.param .u32 ka_param_2
)
{
\tret;
}
"""
PTX_B = ".visible .entry kb(\n\t.param .u64 kb_param_0,\n\t.param .u32 kb_param_1\n)\n{\n}\n"

A_ARGS = ["buf:f32:1024:random:1", "buf:f32:1024:out", "scalar:u32:1024"]
B_ARGS = ["buf:f32:1024:random:2", "scalar:u32:1024"]
# The stand-in's fused kernel takes B's arguments, then A's (then a counter).
FUSED_ARGS = B_ARGS + A_ARGS
COUNTER = "buf:u32:1024:zero"


def cand(strategy, description, feasible=True, threads=(256, 256), ratio=(1, 1), maxnreg=0,
         predicted=None, reason=None):
    c = {"description": description, "strategy": strategy, "threads": list(threads),
         "ratio": list(ratio), "maxnreg": maxnreg, "feasible": feasible,
         "options": f"strategy={strategy} " + (
             "threads=" + ",".join(map(str, threads)) if strategy == "thread" else
             "ratio=" + ",".join(map(str, ratio))) + f" maxnreg={maxnreg}"}
    if feasible:
        c["predicted"] = predicted
    else:
        c["reason"] = reason
    return c


# The planner's ranking (an infeasible one among them, which the tool skips).
INTER_1_8 = cand("interleave", "interleave 1:8", ratio=(1, 8), predicted=1.0)
INFEASIBLE = cand("thread", "thread split 768+512", feasible=False, threads=(768, 512),
                  reason="768 + 512 threads > 1024")
THREAD = cand("thread", "thread split 256+512", threads=(256, 512), predicted=1.1)
DYN_1_1 = cand("dynamic", "dynamic 1:1", predicted=1.2)
THREAD_64 = cand("thread", "thread split 256+512, maxnreg 64", threads=(256, 512),
                 maxnreg=64, predicted=1.3)
PLANNER = [INTER_1_8, INFEASIBLE, THREAD, DYN_1_1, THREAD_64]
FEASIBLE = [INTER_1_8, THREAD, DYN_1_1, THREAD_64]


class Env:
    """A folder with two PTX modules, a run spec and the stand-in tools; the
    current directory while a test runs."""

    def __init__(self, tmp_path):
        self.dir = tmp_path
        tools = tmp_path / "tools"
        tools.mkdir()
        self.gpu_opt = self._tool(tools / "gpu-opt", FAKE_GPU_OPT)
        self.gpu_run = self._tool(tools / "gpu-run", FAKE_GPU_RUN)
        self.log = tmp_path / "calls.jsonl"
        (tmp_path / "a.ptx").write_text(PTX_A)
        (tmp_path / "b.ptx").write_text(PTX_B)
        self.write_spec("pair.json", [
            {"label": "a", "module": "a.ptx", "kernel": "ka", "grid": [1024], "block": [256],
             "smem": 0, "args": A_ARGS, "out": {"1": "a1.bin"}},
            # no "kernel": the module's only .entry; no "smem": 0
            {"label": "b", "module": "b.ptx", "grid": [64, 2], "block": [128],
             "args": B_ARGS}])
        self.planner()
        self.times()

    @staticmethod
    def _tool(path, body):
        path.write_text(body)
        path.chmod(path.stat().st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
        return str(path)

    def write_spec(self, name, kernels):
        path = self.dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"kernels": kernels}))
        return str(path)

    def planner(self, candidates=PLANNER, decline=None, refuse=(), no_candidates=False):
        (self.dir / "gpu-opt.json").write_text(json.dumps(
            {"candidates": candidates, "decline": decline, "refuse": list(refuse),
             "no_candidates": no_candidates}))

    def times(self, candidates=None, serial=2.0, concurrent=1.6, graph=1.7, fail=False,
              default=100.0, corrupt=()):
        (self.dir / "gpu-run.json").write_text(json.dumps(
            {"candidates": candidates or {}, "serial": serial, "concurrent": concurrent,
             "graph": graph, "fail": fail, "default": default, "corrupt": list(corrupt)}))

    def calls(self, tool):
        if not self.log.exists():
            return []
        calls = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [c["argv"] for c in calls if c["tool"] == tool]

    def spec_runs(self):
        """gpu-run's timing runs (--spec), not the verification's single runs."""
        return [c for c in self.calls("gpu-run") if "--spec" in c]

    def single_runs(self):
        return [c for c in self.calls("gpu-run") if "--spec" not in c]

    def prepare(self, *extra, spec="pair.json", out="out"):
        return hs.main(["prepare", "--spec", spec, "--out-dir", out, "--gpu-opt", self.gpu_opt,
                        "--warmup", "2", "--repeat", "5", *extra])

    def measure(self, out="out"):
        return hs.main(["measure", "--out-dir", out, "--gpu-run", self.gpu_run])

    def json(self, path):
        return json.loads((self.dir / path).read_text())


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    e = Env(tmp_path)
    monkeypatch.setenv("FAKE_LOG", str(e.log))
    monkeypatch.setenv("FAKE_GPU_OPT_CONFIG", str(tmp_path / "gpu-opt.json"))
    monkeypatch.setenv("FAKE_GPU_RUN_CONFIG", str(tmp_path / "gpu-run.json"))
    return e


def hfuse_options(argv):
    return next(a for a in argv if a.startswith("--hfuse=")).split("=", 1)[1].split()


ORIGINALS = [{"label": "a", "module": "a.ptx", "kernel": "ka", "grid": [1024], "block": [256],
              "smem": 0, "args": A_ARGS},  # "out" left out
             {"label": "b", "module": "b.ptx", "kernel": "kb", "grid": [64, 2],
              "block": [128], "args": B_ARGS}]
BASE = ["kernels=ka,kb", "blocks=256x1x1,128x1x1", "grids=1024x1x1,64x2x1", "smem=0,0"]


# Helpers ------------------------------------------------------------------------------

def test_ratio_ladder_and_plan_key():
    ladder = hs.ratio_ladder(2)
    ratios = [c["ratio"] for c in ladder if c["strategy"] == "interleave"]
    assert ratios == [[1, 1], [64, 1], [32, 1], [16, 1], [8, 1], [4, 1], [2, 1],
                      [1, 2], [1, 4], [1, 8], [1, 16], [1, 32], [1, 64]]
    assert [c["ratio"] for c in ladder if c["strategy"] == "dynamic"] == ratios
    assert len(ladder) == 26
    c = next(c for c in ladder if c["strategy"] == "dynamic" and c["ratio"] == [1, 64])
    assert c["options"] == "strategy=dynamic ratio=1,64 maxnreg=0"
    assert c["description"] == "dynamic 1:64" and c["source"] == "ladder"
    assert [c["ratio"] for c in hs.ratio_ladder(3)] == [[1, 1, 1], [1, 1, 1]]
    # a thread split is told apart by its threads, the others by their ratio
    assert hs.plan_key("thread", [256, 512], [1, 1], None) == ("thread", (256, 512), 0)
    assert hs.plan_key("interleave", [256, 256], [1, 8], 0) == \
        hs.plan_key("interleave", [], [1, 8], None)
    assert hs.plan_key("interleave", [], [1, 8], 0) != hs.plan_key("dynamic", [], [1, 8], 0)
    assert hs.plan_key("sm_aware", [], [1, 8], 0, 2) != hs.plan_key("sm_aware", [], [1, 8], 0)
    assert hs.plan_key("sm_aware", [], [1, 8], 0, None) == hs.plan_key("sm_aware", [], [1, 8], 0)
    assert hs.base_options([
        {"kernel": "ka", "block": [256], "grid": [4, 2], "smem": 16},
        {"kernel": "kb", "block": [16, 16], "grid": [8]}], None, "sm_90a") == [
        "kernels=ka,kb", "blocks=256x1x1,16x16x1", "grids=4x2x1,8x1x1", "smem=16,0",
        "chip=sm_90a"]


# prepare ------------------------------------------------------------------------------

def test_prepare_top(env):
    assert env.prepare("--top", "2") == 0
    search = env.json("out/search.json")
    assert search["kernels"] == ["a", "b"]
    assert search["specs"] == ["spec0.json"]
    assert search["exhaustive"] is False and search["planner_declined"] is False
    assert search["ranked"] == 4  # feasible ones only
    cands = search["candidates"]
    assert [c["description"] for c in cands] == ["interleave 1:8", "thread split 256+512"]
    assert [c["rank"] for c in cands] == [0, 1]
    assert [c["label"] for c in cands] == ["cand0", "cand1"]
    assert all(c["status"] == "built" and c["source"] == "planner" and c["message"] is None
               for c in cands)
    assert [c["ptx"] for c in cands] == [os.path.join("out", "cand0.ptx"),
                                         os.path.join("out", "cand1.ptx")]
    assert not (env.dir / "out" / "cand2.ptx").exists()
    assert not (env.dir / "out" / "spec1.json").exists()

    spec = env.json("out/spec0.json")
    assert spec["warmup"] == 2 and spec["repeat"] == 5
    assert spec["kernels"][:2] == ORIGINALS
    fused = spec["kernels"][2:]
    assert fused == [
        {"label": "cand0", "time_alone": False, "module": os.path.join("out", "cand0.ptx"),
         "manifest": os.path.join("out", "cand0.json"), "kernel": "hfuse_cand0",
         "args": FUSED_ARGS},
        {"label": "cand1", "time_alone": False, "module": os.path.join("out", "cand1.ptx"),
         "manifest": os.path.join("out", "cand1.json"), "kernel": "hfuse_cand1",
         "args": FUSED_ARGS}]
    for k in spec["kernels"]:  # relative to the current folder, and there
        assert not os.path.isabs(k["module"]) and os.path.exists(k["module"])
    assert spec["groups"] == [{"name": "search", "kernels": ["a", "b"],
                               "modes": ["serial", "concurrent", "graph"],
                               "also": ["cand0", "cand1"]}]

    # the planner once, then one build per candidate, each with its options
    calls = env.calls("gpu-opt")
    assert len(calls) == 3
    plan = hfuse_options(calls[0])
    assert plan[:4] == BASE and "strategy=auto" in plan
    assert f"candidates-out={env.dir / 'out' / 'candidates.json'}" in plan
    assert hfuse_options(calls[1]) == BASE + ["strategy=interleave", "ratio=1,8", "maxnreg=0",
                                              "name=hfuse_cand0"]
    assert hfuse_options(calls[2]) == BASE + ["strategy=thread", "threads=256,512",
                                              "maxnreg=0", "name=hfuse_cand1"]
    assert calls[1][-4:] == ["-o", str(env.dir / "out" / "cand0.ptx"), "--manifest",
                             str(env.dir / "out" / "cand0.json")]
    # the fake gpu-run accepts the spec (keys, labels, paths; it exits 2 if not):
    # with its default 100 ms per candidate, none wins
    env.times()
    assert env.measure() == 3


def test_prepare_exhaustive(env):
    env.planner(refuse=["strategy=interleave ratio=64,1"])
    assert env.prepare("--exhaustive") == 0
    search = env.json("out/search.json")
    assert search["exhaustive"] is True
    cands = search["candidates"]
    # the planner's 4 feasible candidates, then 26 ladder rungs less the two
    # that the planner lists already (interleave 1:8, dynamic 1:1)
    assert [c["description"] for c in cands[:4]] == [c["description"] for c in FEASIBLE]
    assert all(c["source"] == "planner" for c in cands[:4])
    ladder = cands[4:]
    assert all(c["source"] == "ladder" for c in ladder)
    assert len(cands) == 4 + 26 - 2
    keys = [hs.plan_key(c["strategy"], c.get("threads", []), c["ratio"], c.get("maxnreg"))
            for c in cands]
    assert len(set(keys)) == len(keys)
    got = {(c["strategy"], tuple(c["ratio"])) for c in ladder}
    want = {(s, r) for s in ("interleave", "dynamic")
            for r in [(1, 1)] + [(x, 1) for x in (64, 32, 16, 8, 4, 2)] +
            [(1, x) for x in (2, 4, 8, 16, 32, 64)]}
    assert got == want - {("interleave", (1, 8)), ("dynamic", (1, 1))}
    assert "thread split 768+512" not in [c["description"] for c in cands]
    # the refused rung is recorded with gpu-opt's message and left out of the spec
    refused = [c for c in cands if c["status"] == "refused"]
    assert [c["description"] for c in refused] == ["interleave 64:1"]
    r = refused[0]
    assert r["ptx"] is None
    assert r["message"] == ("error: hfuse: refused strategy=interleave ratio=64,1: too much "
                            "shared memory")
    assert [c["index"] for c in cands] == list(range(len(cands)))
    spec = env.json("out/spec0.json")
    assert spec["kernels"][:2] == ORIGINALS
    built = [c["label"] for c in cands if c["status"] == "built"]
    assert len(built) == len(cands) - 1
    assert spec["groups"][0]["also"] == built
    assert [k["label"] for k in spec["kernels"][2:]] == built
    assert r["label"] not in [k["label"] for k in spec["kernels"]]
    # dynamic kernels take a counter the originals do not feed
    dyn = next(k for c, k in zip([c for c in cands if c["status"] == "built"],
                                 spec["kernels"][2:]) if c["strategy"] == "dynamic")
    assert dyn["args"] == FUSED_ARGS + [COUNTER]
    assert len(env.calls("gpu-opt")) == 1 + len(cands)


@pytest.mark.parametrize("max_gib,batches", [
    # originals 12 KiB; candidates 12, 12 and 16 KiB (dynamic's counter): 30000
    # bytes hold the first two, not the third
    ((12288 + 30000) / 2 ** 30, [["cand0", "cand1"], ["cand2"]]),
    # less than the originals: one candidate per process
    (1e-9, [["cand0"], ["cand1"], ["cand2"]]),
])
def test_prepare_max_gib(env, max_gib, batches):
    assert env.prepare("--top", "3", "--max-gib", repr(max_gib)) == 0
    search = env.json("out/search.json")
    names = [f"spec{n}.json" for n in range(len(batches))]
    assert search["specs"] == names
    assert not (env.dir / "out" / f"spec{len(batches)}.json").exists()
    for name, labels in zip(names, batches):
        spec = env.json(f"out/{name}")
        assert spec["kernels"][:2] == ORIGINALS
        assert [k["label"] for k in spec["kernels"][2:]] == labels
        assert spec["groups"][0]["also"] == labels
        assert spec["groups"][0]["kernels"] == ["a", "b"]


def test_prepare_spec_paths_relative_to_cwd(env):
    """A run spec's relative paths are relative to the current folder (as gpu-run
    reads them), not to the spec's folder."""
    (env.dir / "in").mkdir()
    (env.dir / "in" / "a.ptx").write_text(PTX_A)
    (env.dir / "in" / "b.ptx").write_text(PTX_B)
    env.write_spec(os.path.join("in", "pair.json"),
                   [{**ORIGINALS[0], "module": os.path.join("in", "a.ptx")},
                    {**ORIGINALS[1], "module": os.path.join("in", "b.ptx")}])
    assert env.prepare("--top", "1", spec=os.path.join("in", "pair.json")) == 0
    spec = env.json("out/spec0.json")
    assert [k["module"] for k in spec["kernels"][:2]] == [os.path.join("in", "a.ptx"),
                                                          os.path.join("in", "b.ptx")]
    modules = env.calls("gpu-opt")[0][:2]
    assert [os.path.realpath(m) for m in modules] == [
        os.path.realpath(env.dir / "in" / "a.ptx"), os.path.realpath(env.dir / "in" / "b.ptx")]


# measure ------------------------------------------------------------------------------

def test_measure_fused_wins(env, capsys):
    # one candidate per process: three gpu-run processes
    assert env.prepare("--top", "3", "--max-gib", "1e-9") == 0
    assert len(env.json("out/search.json")["specs"]) == 3
    # the kernels apart per process; their medians 2.0, 1.6, 1.7 (the minimum
    # over processes, 1.0, is not the baseline)
    env.times(serial=[2.0, 1.0, 3.0], concurrent=[1.8, 1.6, 1.5], graph=[1.7, 1.9, 1.7],
              candidates={"strategy=interleave ratio=1,8": 1.7,
                          "strategy=thread threads=256,512 maxnreg=0": 1.5,
                          "strategy=dynamic ratio=1,1": 1.9})
    capsys.readouterr()
    assert env.measure() == 0
    out = env.dir / "out"
    result = env.json("out/result.json")
    assert result["device"] == "Fake GPU"
    assert result["baselines_ms"] == {"serial": 2.0, "concurrent": 1.6, "graph": 1.7}
    assert result["best_baseline_ms"] == 1.6
    assert result["measured"] == 3
    assert result["fastest"] == {"description": "thread split 256+512",
                                 "options": "strategy=thread threads=256,512 maxnreg=0",
                                 "ms": 1.5, "speedup": pytest.approx(1.6 / 1.5)}
    assert result["fused_wins"] is True
    assert result["planner_rank_within_3pct"] == 2  # interleave 1:8 (1.7) is 13% slower
    assert result["planner_declined"] is False and result["exhaustive"] is False
    assert {c["label"]: c["ms"] for c in result["candidates"]} == {
        "cand0": 1.7, "cand1": 1.5, "cand2": 1.9}
    assert (out / "best.ptx").read_bytes() == (out / "cand1.ptx").read_bytes()
    assert (out / "best.json").read_bytes() == (out / "cand1.json").read_bytes()
    assert (out / "best.ptx").read_bytes() != (out / "cand0.ptx").read_bytes()
    assert json.loads((out / "best.json").read_text())["kernels"][0]["name"] == "hfuse_cand1"
    runs = env.spec_runs()
    assert [r[:2] for r in runs] == [["--spec", os.path.join("out", f"spec{n}.json")]
                                     for n in range(3)]
    assert [r[3] for r in runs] == [str(out / f"report{n}.json") for n in range(3)]
    text = capsys.readouterr().out
    assert "Fake GPU: kernels apart serial 2.0000 ms, concurrent 1.6000 ms, graph 1.7000 ms" \
        in text
    assert "fastest: thread split 256+512, 1.5000 ms" in text


def test_measure_rank_counts_refused_candidates(env):
    # the planner's first choice does not build: the fastest is its 2nd
    env.planner(refuse=["strategy=interleave ratio=1,8"])
    assert env.prepare("--top", "3") == 0
    env.times(candidates={"strategy=thread threads=256,512": 1.0,
                          "strategy=dynamic ratio=1,1": 1.2})
    assert env.measure() == 0
    result = env.json("out/result.json")
    assert result["measured"] == 2
    assert result["fastest"]["description"] == "thread split 256+512"
    assert result["planner_rank_within_3pct"] == 2


def test_measure_exhaustive_ladder_fastest(env):
    assert env.prepare("--exhaustive") == 0
    # a ladder rung is fastest; the planner's 3rd (dynamic 1:1) is within 3%
    env.times(candidates={"strategy=dynamic ratio=1,64": 1.0,
                          "strategy=interleave ratio=1,8": 1.5,
                          "strategy=thread threads=256,512 maxnreg=0": 1.2,
                          "strategy=dynamic ratio=1,1": 1.025}, default=3.0)
    assert env.measure() == 0
    result = env.json("out/result.json")
    assert result["exhaustive"] is True
    assert result["fastest"]["description"] == "dynamic 1:64"
    assert result["planner_rank_within_3pct"] == 3
    assert result["measured"] == 4 + 26 - 2
    best = json.loads((env.dir / "out" / "best.json").read_text())
    assert best["kernels"][0]["fusion_strategy"] == "dynamic"
    # and when nothing the planner ranked comes within 3%
    env.times(candidates={"strategy=dynamic ratio=1,64": 1.0}, default=3.0)
    assert env.measure() == 0
    assert env.json("out/result.json")["planner_rank_within_3pct"] is None


def test_measure_no_win(env):
    assert env.prepare("--top", "3") == 0
    # the fastest is faster than the best baseline (1.6), but not by 1%
    env.times(candidates={"strategy=thread": 1.59}, default=1.8)
    assert env.measure() == 3
    out = env.dir / "out"
    assert not (out / "best.ptx").exists() and not (out / "best.json").exists()
    result = env.json("out/result.json")
    assert result["fused_wins"] is False
    assert result["fastest"]["description"] == "thread split 256+512"
    assert result["fastest"]["ms"] == 1.59
    assert result["best_baseline_ms"] == 1.6


# errors --------------------------------------------------------------------------------

def test_one_kernel_spec(env):
    env.write_spec("one.json", [ORIGINALS[0]])
    r = subprocess.run([sys.executable, "-m", "gpuopt.hfuse_search", "prepare", "--spec",
                        "one.json", "--out-dir", "out", "--gpu-opt", env.gpu_opt],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "needs at least two kernels" in r.stderr
    assert env.calls("gpu-opt") == []


def test_gpu_run_fails(env, capsys):
    assert env.prepare() == 0
    env.times(fail=True)
    capsys.readouterr()
    assert env.measure() == 2
    assert "hfuse-search: error: gpu-run failed (exit 2)" in capsys.readouterr().err
    assert not (env.dir / "out" / "result.json").exists()
    assert len(env.calls("gpu-run")) == 1


def test_kernel_without_block(env, capsys):
    env.write_spec("noblock.json", [ORIGINALS[0], {k: v for k, v in ORIGINALS[1].items()
                                                   if k != "block"}])
    assert env.prepare(spec="noblock.json") == 2
    assert "kernel 'b' has no 'block'" in capsys.readouterr().err


def test_planner_writes_no_candidates(env, capsys):
    env.planner(no_candidates=True, decline="unknown option candidates-out")
    assert env.prepare() == 2
    err = capsys.readouterr().err
    assert "the planner wrote no candidates: error: unknown option candidates-out" in err
    assert len(env.calls("gpu-opt")) == 1


def test_no_feasible_candidate(env):
    # exit 3 (nothing to fuse), as for a measured loss; run does not measure
    env.planner(candidates=[INFEASIBLE], decline="hfuse: no way to fuse these kernels")
    assert env.prepare() == 3
    assert hs.main(["run", "--spec", "pair.json", "--out-dir", "out2", "--gpu-opt",
                    env.gpu_opt, "--gpu-run", env.gpu_run]) == 3
    assert env.calls("gpu-run") == []
    assert len(env.calls("gpu-opt")) == 2  # the planner only, twice


def test_every_candidate_refused(env, capsys):
    env.planner(refuse=["strategy=interleave", "strategy=thread"])
    assert env.prepare("--top", "2") == 2
    assert "gpu-opt built none of the 2 candidates" in capsys.readouterr().err
    assert not (env.dir / "out" / "search.json").exists()


# run ----------------------------------------------------------------------------------

def test_run(env):
    # the planner declines (predicts no gain) but the measurement says fuse
    env.planner(decline="hfuse: not fusing: no candidate is predicted to be 3% faster")
    env.times(candidates={"strategy=interleave ratio=1,8": 1.2,
                          "strategy=thread": 1.4})
    assert hs.main(["run", "--spec", "pair.json", "--out-dir", "out", "--top", "2",
                    "--gpu-opt", env.gpu_opt, "--gpu-run", env.gpu_run, "--repeat", "7"]) == 0
    out = env.dir / "out"
    search = env.json("out/search.json")
    assert search["planner_declined"] is True
    assert [c["status"] for c in search["candidates"]] == ["built", "built"]
    assert env.json("out/spec0.json")["repeat"] == 7
    result = env.json("out/result.json")
    assert result["planner_declined"] is True and result["fused_wins"] is True
    assert result["fastest"]["description"] == "interleave 1:8"
    assert result["fastest"]["speedup"] == pytest.approx(1.6 / 1.2)
    assert result["planner_rank_within_3pct"] == 1
    assert (out / "best.ptx").read_bytes() == (out / "cand0.ptx").read_bytes()
    assert len(env.calls("gpu-opt")) == 3
    # The planner's call requires fusion, so that a decline fails (gpu-opt
    # otherwise writes the kernels apart and exits 0); the candidates' don't.
    planner, *builds = [next(a for a in c if a.startswith("--hfuse="))
                        for c in env.calls("gpu-opt")]
    assert "strategy=auto" in planner.split() and "require=true" in planner.split()
    assert all("require=true" not in b.split() for b in builds)
    assert len(env.spec_runs()) == 1
    # the winner verified: a, b, then the candidate, once each
    assert [r[0] for r in env.single_runs()] == ["a.ptx", "b.ptx",
                                                 os.path.join("out", "cand0.ptx")]


def test_stale_outputs_removed(env):
    """A new prepare or a losing measure does not leave an earlier search's
    files to be taken for its own."""
    assert env.prepare("--top", "2") == 0
    out = env.dir / "out"
    stale = [out / n for n in ("best.ptx", "best.json", "cand7.ptx", "spec3.json",
                               "report3.json")]
    for path in stale:
        path.write_text("old")
    assert env.prepare("--top", "2") == 0
    assert not any(p.exists() for p in stale)
    assert (out / "cand1.ptx").exists()
    (out / "best.ptx").write_text("old")
    env.times(default=1.8)  # nothing wins
    assert env.measure() == 3
    assert not (out / "best.ptx").exists()


def test_candidate_label_collides(env, capsys):
    env.write_spec("bad.json", [
        {"label": "cand0", "module": "a.ptx", "kernel": "ka", "grid": [8], "block": [256],
         "args": A_ARGS},
        {"label": "b", "module": "b.ptx", "grid": [8], "block": [128], "args": B_ARGS}])
    assert env.prepare(spec="bad.json") == 2
    assert "label 'cand0' is the name of a candidate" in capsys.readouterr().err


def test_report_without_search_group(env, capsys):
    assert env.prepare("--top", "1") == 0
    tool = env.dir / "tools" / "gpu-run"
    tool.write_text("#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --json ] && echo "
                    "'{\"groups\": []}' > \"$2\"; shift; done\n")
    assert env.measure() == 2
    assert 'not a gpu-run report with a "search" group' in capsys.readouterr().err


def test_report(env, capsys):
    """report: the planner's top against the fastest of all, and how far down
    its ranking one must measure."""
    assert env.prepare("--exhaustive") == 0
    env.times(candidates={"strategy=dynamic ratio=1,64": 1.0, "strategy=thread": 1.02},
              default=1.5)
    assert env.measure() == 0
    assert hs.main(["report", "out", "--out", "r.md", "--command", "CMD"]) == 0
    md = (env.dir / "r.md").read_text()
    rows = env.json("r.json")["pairs"]
    assert len(rows) == 1
    r = rows[0]
    assert r["fastest"] == "dynamic 1:64" and r["fastest_ms"] == 1.0
    assert r["top"] == "interleave 1:8" and r["top_ms"] == 1.5
    assert r["reach"] == 2  # the thread split, second, is within 3%
    assert "- Command: `CMD`" in md
    assert "within 3% of the exhaustive best in 0 of 1 pairs; measuring its top 2" in md
    assert "| a+b | " in md and "| dynamic 1:64 | 1.0000 |" in md
    assert hs.main(["report", "missing"]) == 2


# verification of the winner ---------------------------------------------------------

def test_measure_fastest_fails_verification(env, capsys):
    """The fastest candidate writes other outputs than the kernels apart: it is
    reported and left out, and the next fastest (verified) wins."""
    assert env.prepare("--top", "3") == 0
    env.times(candidates={"strategy=interleave ratio=1,8": 1.2,
                          "strategy=thread threads=256,512 maxnreg=0": 1.4,
                          "strategy=dynamic ratio=1,1": 1.5},
              corrupt=["strategy=interleave ratio=1,8"])
    capsys.readouterr()
    assert env.measure() == 0
    out = env.dir / "out"
    result = env.json("out/result.json")
    assert result["fastest"]["description"] == "thread split 256+512"
    assert result["fastest"]["ms"] == 1.4
    assert [c["description"] for c in result["excluded"]] == ["interleave 1:8"]
    bad = result["excluded"][0]
    assert bad["verify"]["result"] == "FAIL"
    assert "a arg 1 (fused 3): 1 of 1024 elements differ; first at 512" in bad["verify"]["detail"]
    assert result["measured"] == 2 and "cand0" not in [c["label"] for c in result["candidates"]]
    good = next(c for c in result["candidates"] if c["label"] == "cand1")
    assert good["verify"] == {"result": "PASS", "detail": "1 buffers bit-exact"}
    assert (out / "best.ptx").read_bytes() == (out / "cand1.ptx").read_bytes()
    # the originals ran once, then both candidates; the third was not needed
    assert [r[0] for r in env.single_runs()] == [
        "a.ptx", "b.ptx", os.path.join("out", "cand0.ptx"), os.path.join("out", "cand1.ptx")]
    text = capsys.readouterr().out
    assert "excluded: interleave 1:8 (1.2000 ms): its outputs differ" in text


def test_measure_every_winner_fails_verification(env):
    assert env.prepare("--top", "2") == 0
    env.times(candidates={"strategy=interleave ratio=1,8": 1.2, "strategy=thread": 1.3},
              corrupt=["strategy=interleave", "strategy=thread"])
    assert env.measure() == 3
    assert not (env.dir / "out" / "best.ptx").exists()
    result = env.json("out/result.json")
    assert result["fused_wins"] is False and result["fastest"] is None
    assert sorted(c["label"] for c in result["excluded"]) == ["cand0", "cand1"]
    assert hs.main(["report", "out", "--out", "r.md"]) == 0
    assert "| a+b | 0 | fuses | 1.6000 | none verified | - | - |" in (env.dir / "r.md").read_text()


def test_measure_no_verification_when_nothing_wins(env):
    assert env.prepare("--top", "2") == 0
    env.times(default=1.8, corrupt=["strategy=interleave"])
    assert env.measure() == 3
    assert env.single_runs() == []


def test_tools_found_through_the_environment(env, monkeypatch, capsys):
    monkeypatch.setenv("GPUOPT_BIN_DIR", str(env.dir / "tools"))
    assert hs.main(["prepare", "--spec", "pair.json", "--out-dir", "out", "--top", "1"]) == 0
    assert len(env.calls("gpu-opt")) == 2
    monkeypatch.setenv("GPUOPT_BIN_DIR", str(env.dir / "nowhere"))
    assert hs.main(["measure", "--out-dir", "out"]) == 2
    assert "gpu-run: not in $GPUOPT_BIN_DIR" in capsys.readouterr().err
