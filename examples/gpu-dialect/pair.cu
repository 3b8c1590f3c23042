// The two kernels of pair.mlir as a CUDA programmer writes them, for
// comparing what gpu-opt makes of nvcc's PTX with what it makes of the MLIR
// gpu dialect. The arithmetic is the same, operation for operation, so both
// builds write bit-identical outputs: LLVM's NVPTX backend emits pair.mlir's
// subf and mulf as sub.rn.f32 and mul.rn.f32, which __fsub_rn and __fmul_rn
// ask of nvcc (which would otherwise be free to rewrite 1 - v and the
// products, e.g. into an fma.rn.f32), and blocksum's addf as add.rn.f32
// (__fadd_rn).
//
// pair.nvcc.ptx is nvcc's build of this file, by
//   nvcc -arch=sm_90a -ptx -O3 examples/gpu-dialect/pair.cu -o examples/gpu-dialect/pair.nvcc.ptx
// (CUDA 13.0; run from the repository root).

// x[i] = 64 steps of the logistic map v <- (r * v) * (1 - v) for i < n, in
// the order of pair.mlir: 1 - v, r * v, then their product. Unrolled fully,
// as LLVM unrolls pair.mlir's loop of 4 over a loop of 16.
extern "C" __global__ void __launch_bounds__(256)
    logistic(float r, float *x, long n) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x[i];
#pragma unroll
  for (int k = 0; k < 64; ++k) {
    float rest = __fsub_rn(1.0f, v);
    v = __fmul_rn(__fmul_rn(r, v), rest);
  }
  x[i] = v;
}

// sums[b] = the sum of in[256 b .. 256 b + 255], by a tree in shared memory
// in the order of pair.mlir: tile[t] += tile[t + s] for s = 128, 64, ..., 1.
extern "C" __global__ void __launch_bounds__(256)
    blocksum(const float *in, float *sums) {
  __shared__ float tile[256];
  unsigned tid = threadIdx.x;
  tile[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (tid < s)
      tile[tid] = __fadd_rn(tile[tid], tile[tid + s]);
    __syncthreads();
  }
  if (tid == 0)
    sums[blockIdx.x] = tile[0];
}
