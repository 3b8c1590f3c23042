"""gpuopt.triton.probes on Triton kernels compiled without a GPU: the PTX
Triton assembles is gpu-opt's probed PTX, the buffer is the profile-scratch
slot, caches stay apart, refusals are clear. GPU launches are tested in
test_triton_gpu.py."""

import os
import re
import warnings

import numpy as np
import pytest

triton = pytest.importorskip("triton")

from gpuopt import probe_buffer  # noqa: E402
from gpuopt.triton import ProbeError, probes  # noqa: E402

import triton_kernels as tk  # noqa: E402


@pytest.fixture(autouse=True)
def user_cache(tmp_path, monkeypatch):
    """The user's own Triton cache, which a session must leave alone."""
    d = tmp_path / "user-cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(d))
    return d


def entry_params(ptx):
    start = ptx.index(".entry")
    header = ptx[start:ptx.index(")", start)]
    return re.findall(r"\.param\s+\.\w+(?:\s+\.ptr\s+\.global\s+\.align\s+\d+)?\s+(\w+)",
                      header)


def test_probe_rewrites_ptx_in_the_profile_slot():
    with probes("block_sched") as session:
        k = tk.compile_add()
    plain = tk.compile_add()
    assert "%globaltimer" in k.asm["ptx"] and "%globaltimer" not in plain.asm["ptx"]
    # No parameter added: Triton's launcher passes exactly N + 2.
    assert entry_params(k.asm["ptx"]) == entry_params(plain.asm["ptx"])
    c = session.compiled["add_kernel"]
    assert c.skipped is None and c.probed_ptx == k.asm["ptx"]
    assert c.original_ptx == plain.asm["ptx"]
    scratch = c.kernel_manifest["probe_scratch"]
    assert scratch["param"] == len(entry_params(plain.asm["ptx"])) - 1
    assert k.metadata.profile_scratch_size == scratch["bytes_per_block"] > 0
    assert k.metadata.profile_scratch_align >= scratch["align"]
    assert plain.metadata.profile_scratch_size == 0
    assert k.metadata.gpuopt_probe["mode"] == session.mode
    assert k.asm["cubin"][:4] == b"\x7fELF"  # Triton's ptxas took it


def test_session_restores_triton_and_keeps_the_user_cache_clean(user_cache):
    from triton import knobs
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime import _allocation
    before = (knobs.runtime.add_stages_inspection_hook, knobs.cache.dir,
              knobs.compilation.instrumentation_mode, CompiledKernel.__dict__["run"],
              _allocation._profile_allocator.get())
    with probes("block_sched") as session:
        assert knobs.cache.dir == session.cache_dir != str(user_cache)
        tk.compile_add()
    after = (knobs.runtime.add_stages_inspection_hook, knobs.cache.dir,
             knobs.compilation.instrumentation_mode, CompiledKernel.__dict__["run"],
             _allocation._profile_allocator.get())
    assert before == after
    assert not os.path.exists(session.cache_dir)  # private, removed
    tk.compile_add()  # the user's compile fills the user's cache
    ptx = [os.path.join(r, f) for r, _, fs in os.walk(user_cache) for f in fs
           if f.endswith(".ptx")]
    assert ptx and all("%globaltimer" not in open(p).read() for p in ptx)


def test_kernels_filter_leaves_others_alone():
    with probes("block_sched", kernels=["row_sum_kernel"]) as session:
        add = tk.compile_add()
        rs = tk.compile_row_sum()
    assert "%globaltimer" not in add.asm["ptx"] and "%globaltimer" in rs.asm["ptx"]
    assert list(session.compiled) == ["row_sum_kernel"]


def test_two_probes_share_the_slot():
    with probes(["block_sched", "gmem_bytes"]) as session:
        k = tk.compile_add()
    kernel = session.compiled["add_kernel"].kernel_manifest
    maps = kernel["probes"]
    assert {m["name"] for m in maps} >= {"block_sched"} and len(maps) >= 2
    # The maps lie one after another in every block's share.
    offsets = sorted(m["block_offset"] for m in maps)
    assert offsets[0] == 0 and len(set(offsets)) == len(offsets)
    for blocks in (1, 7, 1000):
        end = max(blocks * m["block_offset"] +
                  probe_buffer.map_layout(m, blocks, (128, 1, 1))[4] for m in maps)
        assert end <= blocks * kernel["probe_scratch"]["bytes_per_block"]
    assert k.metadata.profile_scratch_size == kernel["probe_scratch"]["bytes_per_block"]


def test_proton_active_is_refused(monkeypatch):
    from triton import knobs
    monkeypatch.setattr(knobs.compilation, "instrumentation_mode", "default")
    with pytest.raises(ProbeError, match="Proton"):
        with probes("block_sched"):
            pass


def test_nested_sessions_are_refused():
    with probes("block_sched"):
        with pytest.raises(ProbeError, match="already active"):
            with probes("warp_sched"):
                pass


def test_bad_spec_fails_the_compile_with_gpuopts_message():
    with pytest.raises(ProbeError, match="add_kernel.*no_such_probe"):
        with probes("no_such_probe"):
            tk.compile_add()


def test_on_error_skip_compiles_unprobed():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with probes("no_such_probe", on_error="skip") as session:
            k = tk.compile_add()
    assert "%globaltimer" not in k.asm["ptx"] and k.metadata.profile_scratch_size == 0
    assert "no_such_probe" in session.compiled["add_kernel"].skipped
    assert any("left unprobed" in str(x.message) for x in w)


def test_decode_reads_each_warps_record_at_its_slot():
    with probes("block_sched") as session:
        tk.compile_add(num_warps=4)
    kernel = session.compiled["add_kernel"].kernel_manifest
    (m,) = kernel["probes"]
    grid, block = (5, 1, 1), (128, 1, 1)
    raw = np.zeros(probe_buffer.scratch_bytes(kernel, grid), np.uint8)
    dt = probe_buffer.record_dtype(m)
    base = 5 * m["block_offset"]
    for b in range(5):
        for w in range(4):
            rec = np.zeros(1, dt)
            rec["sm"], rec["start"], rec["gend"] = b, w, 1000 * b + w
            slot = b * 4 + w
            off = base + slot * m["record_bytes"]
            raw[off:off + m["record_bytes"]] = rec.view(np.uint8)
    records, counts, overflow = probe_buffer.decode(kernel, raw.tobytes(), grid, block)["block_sched"]
    assert records.shape == (5, 4, 1) and counts is None
    assert (records["sm"][:, :, 0] == np.arange(5)[:, None]).all()
    assert (records["start"][:, :, 0] == np.arange(4)[None, :]).all()
    assert records["gend"][3, 2, 0] == 3002
    with pytest.raises(probe_buffer.ProbeBufferError, match="expected"):
        probe_buffer.decode(kernel, raw[:-8].tobytes(), grid, block)


def test_binaries_of_one_name_keep_their_own_layout():
    """Autotuning compiles one kernel name once per configuration; each
    launch must be decoded by its own binary's manifest."""
    with probes("block_sched") as session:
        k4 = tk.compile_add(num_warps=4)
        k8 = tk.compile_add(num_warps=8)
    assert [b.name for b in session.binaries] == ["add_kernel", "add_kernel"]
    for k in (k4, k8):
        probe = session._probe_of(k)
        assert probe.probed_ptx == k.asm["ptx"]
        assert (probe.kernel_manifest["probe_scratch"]["bytes_per_block"]
                == k.metadata.profile_scratch_size)
    assert k4.metadata.profile_scratch_size < k8.metadata.profile_scratch_size
    assert session.compiled["add_kernel"] is session._probe_of(k8)
