"""gpuopt.triton.probes on a GPU: probed launches give the unprobed results
bit for bit, each launch's records are where the decoder reads them, and a
second session reuses the probed binary from Triton's memory cache.
Skipped without CUDA."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

import triton  # noqa: E402

import gpuopt.triton  # noqa: E402
from triton_kernels import add_kernel, row_sum_kernel  # noqa: E402


def launch_add(x, y, block=1024, num_warps=4):
    out = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), block),)
    add_kernel[grid](x, y, out, x.numel(), BLOCK=block, num_warps=num_warps)
    return out


def test_probed_add_is_bit_identical_and_traced():
    x = torch.randn(1_000_003, device="cuda")
    y = torch.randn_like(x)
    plain = launch_add(x, y)
    with gpuopt.triton.probes("block_sched") as session:
        probed = launch_add(x, y)
    torch.cuda.synchronize()
    assert torch.equal(plain, probed)
    (launch,) = session.launches
    assert launch.name == "add_kernel"
    assert launch.grid == (triton.cdiv(x.numel(), 1024), 1, 1) and launch.block == (128, 1, 1)
    rec = launch.maps["block_sched"]
    assert rec.shape == (launch.grid[0], 4, 1)
    assert (rec["gend"] != 0).all()  # every warp of every block wrote its record
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert (rec["sm"] < sms).all()
    assert launch.overflow["block_sched"] == 0


def test_second_session_reuses_the_probed_binary_and_records():
    x = torch.randn(4096, 300, device="cuda")
    out = torch.empty(4096, device="cuda")
    for _ in range(2):
        with gpuopt.triton.probes(["block_sched"], kernels=["row_sum_kernel"]) as session:
            row_sum_kernel[(4096,)](x, out, x.stride(0), 300, BLOCK=512)
        assert len(session.launches) == 1
        assert (session.launches[0].maps["block_sched"]["gend"] != 0).all()
    assert torch.allclose(out, x.sum(1), rtol=1e-4, atol=1e-4)
    # And outside, the plain binary again: no probe buffer is asked for.
    plain = torch.empty_like(out)
    row_sum_kernel[(4096,)](x, plain, x.stride(0), 300, BLOCK=512)
    assert torch.equal(plain, out)


def test_instrument_a_kernel():
    x = torch.randn(50_000, device="cuda")
    pk = gpuopt.triton.instrument(add_kernel, probe="block_sched")
    out = torch.empty_like(x)
    pk[(triton.cdiv(x.numel(), 1024),)](x, x, out, x.numel(), BLOCK=1024)
    torch.cuda.synchronize()
    assert torch.equal(out, x + x)
    assert len(pk.launches) == 1
    t = pk.launches[0].trace()
    assert np.array_equal(t.grid, [49, 1, 1])


def test_probes_write_only_inside_their_buffer():
    """Every probe store lands in the grid x bytes_per_block bytes Triton
    asks for: guard bytes after them stay as they were."""
    x = torch.randn(4096, 300, device="cuda")
    out = torch.empty(4096, device="cuda")
    guards = []
    session = gpuopt.triton.probes(["block_sched", "gmem_bytes"], kernels=["row_sum_kernel"])
    allocate = session._allocate

    def guarded(size, align, stream):
        buf = torch.full((size + 4096,), 0xAB, dtype=torch.uint8, device="cuda")
        buf[:size] = 0
        allocate(size, align, stream)  # what the session records
        session._pending.buffer = buf[:size]
        guards.append(buf[size:])
        return buf

    session._allocate = guarded
    with session:
        row_sum_kernel[(4096,)](x, out, x.stride(0), 300, BLOCK=512)
    torch.cuda.synchronize()
    assert guards and all(bool((g == 0xAB).all()) for g in guards)
    (launch,) = session.launches
    assert (launch.maps["block_sched"]["gend"] != 0).all()
    assert set(launch.maps) >= {"block_sched"} and len(launch.maps) >= 2
