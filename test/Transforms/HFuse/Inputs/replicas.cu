// A kernel of 256-thread blocks with a static shared tile, and one of
// 128-thread blocks that sums each block's values through a static and a
// dynamic shared array: the pair a thread split replicates (one block of
// tile_mix with several of block_sum) and gives per-part register budgets.
//
// Generated with:
//   nvcc -arch=sm_90a -ptx -O3 replicas.cu -o replicas.ptx

extern "C" __global__ void __launch_bounds__(256)
    tile_mix(float *out, const float *in, int n) {
  __shared__ float tile[256];
  int i = blockIdx.x * 256 + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  if (i < n)
    out[i] = tile[threadIdx.x] * 2.f + tile[(threadIdx.x + 1) & 255];
}

extern "C" __global__ void __launch_bounds__(128)
    block_sum(unsigned *out, const unsigned *in, int n) {
  __shared__ unsigned partial[128];
  extern __shared__ unsigned stage[];
  int i = blockIdx.x * 128 + threadIdx.x;
  stage[threadIdx.x] = i < n ? in[i] : 0u;
  __syncthreads();
  partial[threadIdx.x] = stage[threadIdx.x] * 3u + stage[127 - threadIdx.x];
  __syncthreads();
  for (int s = 64; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = partial[0];
}
