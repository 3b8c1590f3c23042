"""The profile that `gpu-opt --hfuse` strategy=auto reads: each kernel's time
alone, and again with fewer of its blocks per SM.

Runs the kernels of a gpu-run run spec through `gpu-run --spec --json
--occupancy-sweep` (docs/fusion.md, "Profiles"): each kernel is timed at its
own occupancy and with 16, 12, 8, 6, 4, 3, 2 and 1 blocks per SM where that
is fewer. Kernels whose buffers do not fit in --max-gib together are timed
in several gpu-run processes; the reports are merged into one, whose path is
the planner's `profile=`.

  python -m gpuopt.profile --spec kernels.json --out profile.json
  gpu-opt a.ptx b.ptx --hfuse="... profile=profile.json" -o fused.ptx
"""

import json
import os
import sys
import tempfile

from gpuopt.launch_args import args_bytes, pack_by_bytes
from gpuopt.tools import (add_tool_option, command_parser, ToolNotFound, find_tool,
                           run_watchdog)


class ProfileError(Exception):
    pass


def profile(gpu_run, kernels, warmup=5, repeat=15, max_gib=40.0, timeout=900, log=None):
    """The merged gpu-run report of `kernels` (run spec entries, each with a
    label) with their occupancy sweeps; raises ProfileError when a gpu-run
    process fails."""
    log = log or (lambda msg: None)
    labels = [k["label"] for k in kernels]
    if len(set(labels)) != len(labels):
        raise ProfileError("kernel labels are not unique: " + ", ".join(labels))
    by_label = {k["label"]: k for k in kernels}
    batches = pack_by_bytes(labels, lambda label: args_bytes(by_label[label]["args"]),
                            int(max_gib * (1 << 30)))
    merged = None
    with tempfile.TemporaryDirectory(prefix="gpuopt-profile-") as tmp:
        for n, batch in enumerate(batches, 1):
            spec_path = os.path.join(tmp, f"spec{n}.json")
            report_path = os.path.join(tmp, f"report{n}.json")
            with open(spec_path, "w") as f:
                json.dump({"warmup": warmup, "repeat": repeat,
                           "kernels": [by_label[label] for label in batch]}, f, indent=1)
            log(f"profile: [{n}/{len(batches)}] {', '.join(batch)}")
            r = run_watchdog([gpu_run, "--spec", spec_path, "--json", report_path,
                              "--occupancy-sweep"], timeout)
            if r.hung or r.rc != 0 or not os.path.exists(report_path):
                raise ProfileError(f"gpu-run failed on {batch}: " +
                                   (f"killed after {timeout} s" if r.hung else
                                    f"exit {r.rc}: {r.message()}"))
            with open(report_path) as f:
                rep = json.load(f)
            if merged is None:
                merged = rep
            else:
                merged["kernels"].extend(rep.get("kernels", []))
    return merged


def describe(report):
    """One line per kernel: its time at its own occupancy and the sweep."""
    lines = []
    for k in report.get("kernels", []):
        occ = k.get("occupancy") or {}
        points = ", ".join(f"{x['blocks_per_sm']}: {x['time']['median_ms']:.4g}"
                           for x in occ.get("sweep", []))
        lines.append(f"{k['label']}: {k['time']['median_ms']:.4g} ms at "
                     f"{occ.get('blocks_per_sm')} blocks/SM; {points or 'no sweep'}")
    return lines


def main(argv=None):
    ap = command_parser("python -m gpuopt.profile", __doc__)
    ap.add_argument("--spec", required=True, help="gpu-run run spec of the kernels")
    ap.add_argument("--out", required=True, help="the profile (gpu-run's JSON report)")
    add_tool_option(ap, "gpu-run")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--max-gib", type=float, default=40.0,
                    help="buffer memory per gpu-run process")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per gpu-run process")
    args = ap.parse_args(argv)
    try:
        gpu_run = find_tool("gpu-run", args.gpu_run)
        with open(args.spec) as f:
            kernels = json.load(f).get("kernels") or []
        if not kernels:
            raise ProfileError(f"{args.spec}: no \"kernels\"")
        kernels = [{**k, "label": k.get("label") or k.get("kernel") or f"k{i}"}
                   for i, k in enumerate(kernels)]
        report = profile(gpu_run, kernels, args.warmup, args.repeat, args.max_gib,
                         args.timeout, log=lambda m: print(m, flush=True))
    except (ToolNotFound, ProfileError, OSError, ValueError, AttributeError) as e:
        print(f"profile: error: {e}", file=sys.stderr)
        return 2
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    for line in describe(report):
        print(f"profile: {line}")
    print(f"profile: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
