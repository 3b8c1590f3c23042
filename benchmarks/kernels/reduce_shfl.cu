// Float sum reduction: grid-stride per-thread sums, warp reductions with
// __shfl_down_sync, one shared-memory slot per warp, and one atomicAdd of the
// block's partial sum into the result. Part of the project's own benchmark
// kernel suite.
//
// Computes *out += sum_{i < n} in[i]. The caller zeroes *out before the
// launch. The summation order (and hence the rounding) depends on the launch
// shape and on the order of the block atomics, so results match a CPU
// reference only to a relative tolerance (about 1e-5 for n = 2^26 inputs in
// [0, 1), compared against a double-precision sum).
//
// Parameters:
//   in   const float*  [n]
//   n    long long
//   out  float*        single float accumulator
//
// Launch shape: 1-D blocks of 256 threads (any multiple of 32 up to 1024
// works), 1-D grid of 8 * (number of SMs) blocks (1056 on an H100), no
// dynamic shared memory (128 B static).
//
// Problem size that fills an H100: n = 64M floats (256 MB read).

__device__ __forceinline__ float warpReduceSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void reduce_sum_shfl(const float *__restrict__ in,
                                           long long n, float *out) {
  __shared__ float s_warp[32];

  float sum = 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    sum += in[i];

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  sum = warpReduceSum(sum);
  if (lane == 0)
    s_warp[warp] = sum;
  __syncthreads();

  // The first warp folds the per-warp partials; absent warps contribute 0.
  if (warp == 0) {
    const int num_warps = (blockDim.x + 31) >> 5;
    sum = lane < num_warps ? s_warp[lane] : 0.0f;
    sum = warpReduceSum(sum);
    if (lane == 0)
      atomicAdd(out, sum);
  }
}
