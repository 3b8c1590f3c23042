// Debug build (-G) of block-wide CUB collectives, as public CUDA code uses
// them: cub::BlockReduce, cub::BlockScan, cub::BlockLoad/BlockStore and
// cub::BlockRadixSort, plus cuda::std::optional::value().
//
// Exercises: `.target sm_90a, debug`, hundreds of `.weak .func` template
// instantiations with DWARF in byte-encoded .debug_* sections, and the
// forward-declared `.weak .func f () .noreturn ;` prototypes that CCCL's
// cuda::std::terminate / __cccl_terminate produce (reached through
// optional::value() -> __throw_bad_optional_access), followed later by their
// definitions `.weak .func f() .noreturn { ... }`.
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cuda/std/optional>

constexpr int kThreads = 128;
constexpr int kItems = 4;

// Per-block sum and maximum, then an exclusive prefix sum of the inputs.
__global__ void block_reduce_scan(const int *in, int *sums, int *maxima, int *prefix, int n) {
  using Reduce = cub::BlockReduce<int, kThreads>;
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ typename Reduce::TempStorage reduce_tmp;
  __shared__ typename Scan::TempStorage scan_tmp;

  int i = blockIdx.x * kThreads + threadIdx.x;
  int x = i < n ? in[i] : 0;
  int sum = Reduce(reduce_tmp).Sum(x);
  __syncthreads();
  int mx = Reduce(reduce_tmp).Reduce(x, cuda::maximum<>{});
  if (threadIdx.x == 0) {
    sums[blockIdx.x] = sum;
    maxima[blockIdx.x] = mx;
  }
  int excl;
  Scan(scan_tmp).ExclusiveSum(x, excl);
  if (i < n)
    prefix[i] = excl;
}

// A block of kThreads * kItems keys sorted with their values; the tile is
// loaded and stored transposed to the blocked arrangement.
__global__ void block_radix_sort(const unsigned *keys_in, const float *vals_in, unsigned *keys_out,
                                 float *vals_out) {
  using Load = cub::BlockLoad<unsigned, kThreads, kItems, cub::BLOCK_LOAD_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<unsigned, kThreads, kItems, float>;
  using Store = cub::BlockStore<unsigned, kThreads, kItems, cub::BLOCK_STORE_TRANSPOSE>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
    typename Store::TempStorage store;
  } tmp;

  int base = blockIdx.x * kThreads * kItems;
  unsigned keys[kItems];
  float vals[kItems];
  Load(tmp.load).Load(keys_in + base, keys);
  for (int k = 0; k < kItems; ++k)
    vals[k] = vals_in[base + threadIdx.x * kItems + k];
  __syncthreads();
  Sort(tmp.sort).Sort(keys, vals);
  __syncthreads();
  Store(tmp.store).Store(keys_out + base, keys);
  for (int k = 0; k < kItems; ++k)
    vals_out[base + threadIdx.x * kItems + k] = vals[k];
}

// Negative inputs leave the optional empty; value() then calls
// cuda::std::terminate() on the device (a trap).
__device__ cuda::std::optional<int> checked_sqrt(int x) {
  if (x < 0)
    return cuda::std::nullopt;
  int r = 0;
  while ((r + 1) * (r + 1) <= x)
    ++r;
  return r;
}

__global__ void optional_value(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = checked_sqrt(in[i]).value();
}
