// Kernels whose threads may leave before their block's barriers: legal
// alone, since a thread that has exited counts as arrived at a full-block
// barrier (`__syncthreads()`, `bar.sync 0`). Fused into part of a block,
// such a barrier waits for a thread count; gpu-opt keeps the leaving threads
// arriving until the part is done (hfuse-early-exit.test).
//
// Generated with:
//   nvcc -arch=sm_90 -ptx -O3 early_exit.cu -o early_exit.ptx

// Threads past `active` leave at once; the others reverse their values
// through shared memory.
extern "C" __global__ void __launch_bounds__(256)
    early_exit_reverse(float *out, const float *in, int active) {
  __shared__ float tile[256];
  int t = threadIdx.x;
  if (t >= active)
    return;
  tile[t] = in[blockIdx.x * 256 + t] * 2.0f;
  __syncthreads();
  out[blockIdx.x * 256 + t] = tile[active - 1 - t];
}

// An inclusive scan of each block's 128 values; the threads past `n` (in
// the last block) leave before the first barrier, and the scan's loop
// synchronises 14 more times.
extern "C" __global__ void __launch_bounds__(128)
    early_exit_scan(unsigned *out, const unsigned *in, int n) {
  __shared__ unsigned s[128];
  int i = blockIdx.x * 128 + threadIdx.x;
  if (i >= n)
    return;
  s[threadIdx.x] = in[i];
  __syncthreads();
  for (int d = 1; d < 128; d *= 2) {
    unsigned v = threadIdx.x >= d ? s[threadIdx.x - d] : 0u;
    __syncthreads();
    s[threadIdx.x] += v;
    __syncthreads();
  }
  out[i] = s[threadIdx.x];
}

// No early exit: every thread reaches the barrier.
extern "C" __global__ void __launch_bounds__(256)
    scale_rows(float *out, const float *in, float k) {
  __shared__ float row[256];
  int t = threadIdx.x;
  row[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  out[blockIdx.x * 256 + t] = k * row[255 - t];
}
