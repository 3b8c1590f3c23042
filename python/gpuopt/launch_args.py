"""gpu-run argument specs and the fused kernel's arguments.

A fused kernel takes its parts' parameters, concatenated and deduplicated as
its launch manifest's `fused_from[p].arg_map` says; map_args() turns the
originals' gpu-run argument specs (buf:TYPE:COUNT:INIT, scalar:TYPE:VALUE,
...) into the fused kernel's, in parameter order.
"""

import math

TYPE_SIZE = {"u8": 1, "s8": 1, "i8": 1, "u16": 2, "s16": 2, "i16": 2, "f16": 2,
             "bf16": 2, "u32": 4, "s32": 4, "i32": 4, "f32": 4, "u64": 8,
             "s64": 8, "i64": 8, "f64": 8}


def parse_arg(spec):
    """A gpu-run argument spec as a dict: kind buf (type, count, init),
    scalar (type, value), null or bytes."""
    parts = spec.split(":")
    if parts[0] == "buf":
        count = math.prod(int(x) for x in parts[2].split("*"))
        return {"kind": "buf", "type": parts[1], "count": count, "init": parts[3],
                "bytes": count * TYPE_SIZE.get(parts[1], 1)}
    if parts[0] == "scalar":
        return {"kind": "scalar", "type": parts[1], "value": ":".join(parts[2:])}
    return {"kind": parts[0]}


class MappingError(Exception):
    pass


def fused_kernel(manifest):
    kernels = manifest.get("kernels") or []
    if len(kernels) != 1:
        raise MappingError(f"the manifest has {len(kernels)} kernels, expected 1")
    return kernels[0]


def part_order(kernel, entries):
    """fused_from index of each original (A, B): by entry name when the
    names tell them apart, else in order."""
    parts = kernel.get("fused_from") or []
    if len(parts) != len(entries):
        raise MappingError(f"fused_from has {len(parts)} parts, expected {len(entries)}")
    names = [p.get("kernel") for p in parts]
    if len(set(entries)) == len(entries) and sorted(names) == sorted(entries):
        return [names.index(e) for e in entries]
    return list(range(len(entries)))


def extra_arg(param):
    """An argument for a fused parameter that no original argument feeds (a
    scheduler counter, say): a zeroed 4 KiB buffer for 8-byte integers and
    pointers, else a zero scalar."""
    ty = param.get("type", "u64")
    if param.get("kind") == "pointer" or ty in ("u64", "b64", "s64"):
        return "buf:u32:1024:zero"
    if param.get("kind") == "bytes":
        return "bytes:" + "00" * int(param.get("size", 0))
    ty = {"b8": "u8", "b16": "u16", "b32": "u32"}.get(ty, ty)
    return f"scalar:{ty}:0"


def shape_param_indices(kernel):
    """Parameters of a launch-agnostic fused kernel (gpu-opt --hfuse
    runtime-shapes=true) that gpu-run sets itself from the parts' grids and
    shared memory: its manifest's "shape_params"."""
    return {int(s["param"]) for s in kernel.get("shape_params") or []
            if isinstance(s, dict) and "param" in s}


def map_args(manifest, entries, original_args):
    """The fused kernel's argument specs (gpu-run --arg) in parameter order,
    placing argument i of original p at fused_from[p].arg_map[i]. Returns
    (args, notes, where) with where[p][i] = the index of that argument among
    the --arg specs (the fused parameter's index, less the shape parameters
    before it, which gpu-run sets and takes no --arg for). Buffers must not
    share a parameter."""
    kernel = fused_kernel(manifest)
    params = kernel.get("params") or []
    shape = shape_param_indices(kernel)
    order = part_order(kernel, entries)
    fused = [None] * len(params)
    where = []
    for p, args in enumerate(original_args):
        part = kernel["fused_from"][order[p]]
        amap = part.get("arg_map") or []
        if len(amap) != len(args):
            raise MappingError(f"part {order[p]} ({part.get('kernel')}): arg_map has "
                               f"{len(amap)} entries, the original takes {len(args)}")
        for i, (fi, a) in enumerate(zip(amap, args)):
            if not 0 <= fi < len(params):
                raise MappingError(f"part {order[p]}: arg_map[{i}] = {fi} is not a "
                                   f"parameter (the kernel has {len(params)})")
            if fi in shape:
                raise MappingError(f"part {order[p]}: arg_map[{i}] = {fi} is a shape "
                                   "parameter, which gpu-run sets")
            if fused[fi] is not None and (fused[fi] != a or parse_arg(a)["kind"] == "buf"):
                raise MappingError(f"fused parameter {fi} receives both {fused[fi]!r} "
                                   f"and {a!r}")
            fused[fi] = a
        where.append([fi - sum(1 for s in shape if s < fi) for fi in amap])
    notes = []
    for fi, a in enumerate(fused):
        if a is None and fi not in shape:
            fused[fi] = extra_arg(params[fi])
            notes.append(f"fused parameter {fi} ({params[fi].get('name')}) receives no "
                         f"original argument: passing {fused[fi]}")
    return [a for fi, a in enumerate(fused) if fi not in shape], notes, where


def args_bytes(args):
    """Bytes of the buffers a kernel's gpu-run arguments allocate."""
    return sum(parse_arg(a).get("bytes", 0) for a in args)


def pack_by_bytes(items, size, budget, base=0):
    """Splits `items`, in order, into runs whose `size(item)` add up to at
    most `budget` beside `base` bytes every run holds (a run takes at least
    one item, even one that does not fit)."""
    runs, current, used = [], [], base
    for item in items:
        n = size(item)
        if current and used + n > budget:
            runs.append(current)
            current, used = [], base
        current.append(item)
        used += n
    if current or not runs:
        runs.append(current)
    return runs

