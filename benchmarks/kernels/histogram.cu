// 1-D histogram of 32-bit unsigned keys with per-block privatised bins in
// shared memory, merged into the global histogram with atomicAdd. Part of the
// project's own benchmark kernel suite.
//
// For every i in [0, n): if data[i] < num_bins, bins[data[i]] += 1.
// Keys >= num_bins are ignored. `bins` accumulates: the caller zeroes it
// before the launch (or keeps adding across launches on purpose).
//
// Parameters:
//   data      const unsigned int*  [n] keys
//   n         long long            number of keys
//   num_bins  unsigned int         number of bins
//   bins      unsigned int*        [num_bins] global histogram
//
// Launch shape: 1-D blocks of 256 threads, 1-D grid of 8 * (number of SMs)
// blocks (1056 on an H100; the grid-stride loop covers any n), dynamic
// shared memory num_bins * 4 bytes (num_bins <= 12288 without opting in to
// more than 48 KB).
//
// Problem size that fills an H100: n = 64M keys (256 MB read), num_bins =
// 1024, keys uniform in [0, 1024).

extern "C" __global__ void
histogram_shared(const unsigned int *__restrict__ data, long long n,
                 unsigned int num_bins, unsigned int *__restrict__ bins) {
  extern __shared__ unsigned int s_bins[];

  for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x)
    s_bins[b] = 0;
  __syncthreads();

  // Shared-memory atomics keep the contention inside the SM; only one global
  // atomic per bin and block remains.
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const unsigned int key = data[i];
    if (key < num_bins)
      atomicAdd(&s_bins[key], 1u);
  }
  __syncthreads();

  for (unsigned int b = threadIdx.x; b < num_bins; b += blockDim.x) {
    const unsigned int count = s_bins[b];
    if (count != 0)
      atomicAdd(&bins[b], count);
  }
}
