// CCCL device code instantiated over many element types and block shapes,
// for the PTX import/export speed benchmark: make-large-ptx.sh compiles it
// with -G (debug) into PTX of several MB. Nothing runs it.
//
// CUB block and warp collectives (BlockLoad/BlockStore, BlockRadixSort,
// BlockScan, BlockReduce, BlockDiscontinuity, WarpReduce, WarpScan) and
// thrust algorithms on per-thread arrays with thrust::seq (sort, merge,
// unique, lower_bound, transform_reduce), plus cuda::std::optional::value
// (its cuda::std::terminate path gives the forward-declared
// `.weak .func ... .noreturn` prototypes). -G keeps every template function
// as its own `.weak .func` with debug information, so the PTX is large.
//
// CCCL_DEBUG_SET selects one of two disjoint instantiation sets, so that
// two -G files of similar size can be made from this source: 1 (default)
// for int, float and unsigned, 2 for double, long long and unsigned short;
// 0 gives a small subset for a quick check.
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/merge.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>
#include <thrust/unique.h>
#include <cuda/std/optional>

#ifndef CCCL_DEBUG_SET
#define CCCL_DEBUG_SET 1
#endif

// A kernel that is not a template: with only template kernels, nvcc names
// internal-linkage functions with a module id that changes from run to run.
__global__ void clear_heads(int *heads, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    heads[i] = 0;
}

template <typename T, int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads)
    block_pipeline(const T *in, T *sorted, T *scanned, T *aggregates, int *heads, int n) {
  using Load = cub::BlockLoad<T, kThreads, kItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<T, kThreads, kItems>;
  using Scan = cub::BlockScan<T, kThreads>;
  using Reduce = cub::BlockReduce<T, kThreads>;
  using Disc = cub::BlockDiscontinuity<T, kThreads>;
  using Store = cub::BlockStore<T, kThreads, kItems, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce;
    typename Disc::TempStorage disc;
    typename Store::TempStorage store;
  } tmp;

  const int base = blockIdx.x * kThreads * kItems;
  const int valid = min(kThreads * kItems, n - base);
  T items[kItems];
  Load(tmp.load).Load(in + base, items, valid, T(0));
  __syncthreads();
  Sort(tmp.sort).Sort(items);
  __syncthreads();
  Store(tmp.store).Store(sorted + base, items, valid);
  __syncthreads();
  int flags[kItems];
  Disc(tmp.disc).FlagHeads(flags, items, thrust::not_equal_to<T>());
  __syncthreads();
  T aggregate;
  Scan(tmp.scan).InclusiveSum(items, items, aggregate);
  __syncthreads();
  T mx = Reduce(tmp.reduce).Reduce(items, cuda::maximum<>{});
  __syncthreads();
  Store(tmp.store).Store(scanned + base, items, valid);
  int nheads = 0;
  for (int k = 0; k < kItems; ++k)
    nheads += flags[k];
  if (threadIdx.x == 0) {
    aggregates[2 * blockIdx.x] = aggregate;
    aggregates[2 * blockIdx.x + 1] = mx;
  }
  heads[blockIdx.x * kThreads + threadIdx.x] = nheads;
}

template <typename T>
__global__ void warp_collectives(const T *in, T *out, int n) {
  using WarpReduce = cub::WarpReduce<T>;
  using WarpScan = cub::WarpScan<T>;
  __shared__ typename WarpReduce::TempStorage red[4];
  __shared__ typename WarpScan::TempStorage scan[4];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int warp = threadIdx.x / 32;
  T x = i < n ? in[i] : T(0);
  T s = WarpReduce(red[warp]).Sum(x);
  T excl;
  WarpScan(scan[warp]).ExclusiveSum(x, excl);
  if (i < n)
    out[i] = excl + s;
}

template <typename T> struct square {
  __host__ __device__ T operator()(T x) const { return x * x; }
};

template <typename T, int kPer>
__global__ void thrust_per_thread(const T *a, const T *b, T *merged, int *found, T *sums,
                                  int *uniques) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  T xs[kPer], ys[kPer], m[2 * kPer];
  for (int k = 0; k < kPer; ++k) {
    xs[k] = a[t * kPer + k];
    ys[k] = b[t * kPer + k];
  }
  thrust::sort(thrust::seq, xs, xs + kPer);
  thrust::stable_sort(thrust::seq, ys, ys + kPer, thrust::greater<T>());
  thrust::reverse(thrust::seq, ys, ys + kPer);
  thrust::merge(thrust::seq, xs, xs + kPer, ys, ys + kPer, m);
  T *end = thrust::unique(thrust::seq, m, m + 2 * kPer);
  uniques[t] = static_cast<int>(end - m);
  found[t] = static_cast<int>(thrust::lower_bound(thrust::seq, m, end, xs[kPer / 2]) - m);
  sums[t] = thrust::transform_reduce(thrust::seq, m, end, square<T>(), T(0), thrust::plus<T>());
  for (int k = 0; k < 2 * kPer; ++k)
    merged[t * 2 * kPer + k] = m[k];
}

template <typename T> __device__ cuda::std::optional<T> checked_div(T a, T b) {
  if (b == T(0))
    return cuda::std::nullopt;
  return a / b;
}
template <typename T> __global__ void optional_div(const T *a, const T *b, T *out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = checked_div(a[i], b[i]).value();
}

#define BLOCK_SHAPES(T)                                                                            \
  template __global__ void block_pipeline<T, 128, 4>(const T *, T *, T *, T *, int *, int);      \
  template __global__ void block_pipeline<T, 256, 2>(const T *, T *, T *, T *, int *, int);      \
  template __global__ void warp_collectives<T>(const T *, T *, int);                              \
  template __global__ void thrust_per_thread<T, 8>(const T *, const T *, T *, int *, T *, int *); \
  template __global__ void optional_div<T>(const T *, const T *, T *, int);
#define BLOCK_SHAPES_MORE(T)                                                                       \
  template __global__ void block_pipeline<T, 64, 8>(const T *, T *, T *, T *, int *, int);       \
  template __global__ void thrust_per_thread<T, 16>(const T *, const T *, T *, int *, T *, int *);

#if CCCL_DEBUG_SET == 0
BLOCK_SHAPES(int)
#elif CCCL_DEBUG_SET == 1
BLOCK_SHAPES(int)
BLOCK_SHAPES(float)
BLOCK_SHAPES(unsigned)
BLOCK_SHAPES_MORE(int)
BLOCK_SHAPES_MORE(float)
#else
BLOCK_SHAPES(double)
BLOCK_SHAPES(long long)
BLOCK_SHAPES(unsigned short)
BLOCK_SHAPES_MORE(double)
BLOCK_SHAPES_MORE(long long)
#endif
