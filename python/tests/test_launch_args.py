"""gpuopt.launch_args: gpu-run argument specs and the mapping of the
originals' arguments onto a fused kernel's parameters (fused_from)."""

import pytest

from gpuopt import launch_args as la
from gpuopt.verify import output_args


# Argument mapping -----------------------------------------------------------------

def manifest(parts, params=None):
    n = params if params is not None else 1 + max(i for p in parts for i in p["arg_map"])
    return {"manifest_version": 2,
            "kernels": [{"name": "fused", "params": [{"name": f"p{i}", "type": "u64",
                                                      "kind": "scalar"} for i in range(n)],
                         "launch": {"block": [512, 1, 1], "grid": [100, 1, 1],
                                    "dynamic_smem": 0},
                         "fused_from": parts}]}


A_ARGS = ["buf:f32:16:random:1", "scalar:s32:16", "buf:f32:16:out"]
B_ARGS = ["buf:u32:8:random:2", "scalar:u32:8", "buf:u32:8:zero"]


def test_map_args_permuted():
    m = manifest([{"kernel": "ka", "arg_map": [3, 4, 5]},
                  {"kernel": "kb", "arg_map": [0, 1, 2]}])
    args, notes, where = la.map_args(m, ["ka", "kb"], [A_ARGS, B_ARGS])
    assert args == B_ARGS + A_ARGS
    assert notes == []
    assert where == [[3, 4, 5], [0, 1, 2]]


def test_map_args_parts_matched_by_entry_name():
    # fused_from lists B first; the names put A's arguments where A's part says.
    m = manifest([{"kernel": "kb", "arg_map": [0, 1, 2]},
                  {"kernel": "ka", "arg_map": [5, 4, 3]}])
    args, _, where = la.map_args(m, ["ka", "kb"], [A_ARGS, B_ARGS])
    assert args[5] == A_ARGS[0] and args[3] == A_ARGS[2]
    assert where[0] == [5, 4, 3]


def test_map_args_extra_parameter_and_shared_scalar():
    m = manifest([{"kernel": "ka", "arg_map": [0, 1, 2]},
                  {"kernel": "kb", "arg_map": [3, 1, 4]}], params=6)
    args, notes, _ = la.map_args(m, ["ka", "kb"], [A_ARGS, ["buf:u8:4:zero", "scalar:s32:16",
                                                             "null"]])
    assert args[1] == "scalar:s32:16"  # one scalar shared by both parts: allowed
    assert args[5] == "buf:u32:1024:zero" and len(notes) == 1 and "parameter 5" in notes[0]


def test_map_args_leaves_out_shape_params():
    # A launch-agnostic fused kernel: gpu-run sets parameters 2 and 6 itself,
    # so they take no --arg, and the arguments after 2 move one place down.
    m = manifest([{"kernel": "ka", "arg_map": [0, 1, 3]},
                  {"kernel": "kb", "arg_map": [4, 5, 7]}], params=8)
    m["kernels"][0]["shape_params"] = [{"param": 2, "part": 0, "value": "grid_x"},
                                       {"param": 6, "part": 1, "value": "grid_x"}]
    args, notes, where = la.map_args(m, ["ka", "kb"], [A_ARGS, B_ARGS])
    assert args == A_ARGS + B_ARGS and notes == []
    assert where == [[0, 1, 2], [3, 4, 5]]
    m["kernels"][0]["fused_from"][1]["arg_map"] = [4, 5, 6]
    with pytest.raises(la.MappingError, match="shape parameter"):
        la.map_args(m, ["ka", "kb"], [A_ARGS, B_ARGS])


def test_map_args_errors():
    shared_buf = manifest([{"kernel": "ka", "arg_map": [0, 1, 2]},
                           {"kernel": "kb", "arg_map": [3, 4, 2]}])
    with pytest.raises(la.MappingError, match="receives both"):
        la.map_args(shared_buf, ["ka", "kb"], [A_ARGS, B_ARGS])
    short = manifest([{"kernel": "ka", "arg_map": [0, 1]},
                      {"kernel": "kb", "arg_map": [2, 3, 4]}])
    with pytest.raises(la.MappingError, match="arg_map has 2 entries"):
        la.map_args(short, ["ka", "kb"], [A_ARGS, B_ARGS])
    out_of_range = manifest([{"kernel": "ka", "arg_map": [0, 1, 9]},
                             {"kernel": "kb", "arg_map": [2, 3, 4]}], params=5)
    with pytest.raises(la.MappingError, match="not a parameter"):
        la.map_args(out_of_range, ["ka", "kb"], [A_ARGS, B_ARGS])


def test_parse_and_outputs():
    assert la.parse_arg("buf:f32:16*64*56*56:random:1")["count"] == 16 * 64 * 56 * 56
    assert la.parse_arg("buf:u32:10:file:/a:b")["init"] == "file"
    assert la.parse_arg("scalar:f32:1e-5") == {"kind": "scalar", "type": "f32", "value": "1e-5"}
    assert output_args(A_ARGS) == [2] and output_args(B_ARGS) == [2]
    assert la.args_bytes(A_ARGS + B_ARGS) == 16 * 4 * 2 + 8 * 4 * 2


def test_pack_by_bytes():
    sizes = {"a": 4, "b": 4, "c": 8, "d": 1}
    assert la.pack_by_bytes("abcd", sizes.get, 8) == [["a", "b"], ["c"], ["d"]]
    assert la.pack_by_bytes("abcd", sizes.get, 9, base=2) == [["a"], ["b"], ["c"], ["d"]]
    assert la.pack_by_bytes([], sizes.get, 8) == [[]]
