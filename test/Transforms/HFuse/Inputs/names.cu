// Regenerate names.ptx (checked in beside this file) with:
//   nvcc -arch=sm_90a -ptx -O3 names.cu -o names.ptx
// (nvcc 13.0).
// Kernels named as nvcc names them, for --hfuse's kernel lookup and the
// .maxntid check: a 2-D tiled kernel with __launch_bounds__(256) (written as
// .maxntid 256, 1, 1 but launched with 16x16 blocks), a kernel in a
// namespace, and two overloads of one name.
__global__ void __launch_bounds__(256)
    tile_kernel(float *out, const float *in, int n) {
  __shared__ float tile[16][17];
  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  if (x < n && y < n)
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  x = blockIdx.y * 16 + threadIdx.x;
  y = blockIdx.x * 16 + threadIdx.y;
  if (x < n && y < n)
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

namespace ops {
__global__ void scale(float *out, float s, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    out[i] *= s;
}
} // namespace ops

__global__ void add(float *out, float v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    out[i] += v;
}

__global__ void add(double *out, double v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    out[i] += v;
}
