"""The Inductor fusion pass's planning, without a GPU: which recorded
launches pair up (adjacent on the GPU, one stream, independent)."""

from gpuopt.torch_fuse import Recorded, adjacent_on_gpu, independent, plan_pairs


def rec(name, reads=(), writes=(), stream=7):
    return Recorded(name, name + "-hash", stream, reads, writes)


def test_adjacency_follows_the_gpu_order():
    launches = ["k0", "k1", "k2", "k3"]
    ops = ["Memcpy HtoD", "k0", "k1", "void at::fill<float>", "k2", "k3"]
    assert adjacent_on_gpu(launches, ops) == [True, False, True]
    # A launch the GPU list does not show ends adjacency on both sides.
    assert adjacent_on_gpu(["a", "b", "c"], ["a", "c"]) == [False, False]


def test_independence_by_storage_ranges():
    a = rec("a", reads=[(0, 100)], writes=[(1000, 100)])
    assert independent(a, rec("b", reads=[(0, 100)], writes=[(2000, 50)]))
    assert not independent(a, rec("b", reads=[(1050, 10)], writes=[(2000, 50)]))  # reads a's output
    assert not independent(a, rec("b", writes=[(50, 10)]))  # writes a's input
    assert not independent(a, rec("b", writes=[(1099, 1)]))  # writes a's output
    assert independent(a, rec("b", writes=[(1100, 8)]))  # ends touch, no overlap


def test_plan_pairs_greedily_and_says_why_not():
    r = [rec("k0", reads=[(0, 10)], writes=[(100, 10)]),
         rec("k1", reads=[(20, 10)], writes=[(200, 10)]),
         rec("k2", reads=[(200, 10)], writes=[(300, 10)]),   # reads k1's output
         rec("k3", reads=[(0, 10)], writes=[(400, 10)], stream=9),
         rec("k4", reads=[(0, 10)], writes=[(500, 10)], stream=9),
         rec("k5", reads=[(0, 10)], writes=[(600, 10)], stream=9)]
    ops = ["k0", "k1", "k2", "k3", "Memset", "k4", "k5"]
    pairs, why = plan_pairs(r, ops)
    assert pairs == [(0, 1), (4, 5)]
    assert why[2] == "different streams"
    assert why[3] == "other GPU work between them"
    # k1 is taken by (0, 1); k2 is considered with k3 only.
    assert 1 not in why
    pairs, why = plan_pairs(r[1:3], ["k1", "k2"])
    assert pairs == [] and "dependent" in why[0]
