// A row convolution shaped like cuda-samples' convolutionRowsKernel: the
// block is fixed at 16x4 by #define, a shared tile is indexed by
// threadIdx.x/y, and the kernel never reads blockDim, so it cannot run in a
// block of another shape.
//
// Generated with:
//   nvcc -arch=sm_90a -ptx -O3 conv_rows.cu -o conv_rows.ptx
#define ROWS_BLOCKDIM_X 16
#define ROWS_BLOCKDIM_Y 4
#define ROWS_RESULT_STEPS 2
#define ROWS_HALO_STEPS 1
#define KERNEL_RADIUS 4

__constant__ float c_Kernel[2 * KERNEL_RADIUS + 1];

extern "C" __global__ void conv_rows(float *d_Dst, const float *d_Src,
                                     int imageW, int pitch) {
  __shared__ float s_Data[ROWS_BLOCKDIM_Y][(ROWS_RESULT_STEPS +
                                            2 * ROWS_HALO_STEPS) *
                                           ROWS_BLOCKDIM_X];
  const int baseX =
      (blockIdx.x * ROWS_RESULT_STEPS - ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X +
      threadIdx.x;
  const int baseY = blockIdx.y * ROWS_BLOCKDIM_Y + threadIdx.y;
  d_Src += baseY * pitch + baseX;
  d_Dst += baseY * pitch + baseX;
#pragma unroll
  for (int i = 0; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS + ROWS_HALO_STEPS;
       i++)
    s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] =
        (baseX + i * ROWS_BLOCKDIM_X >= 0 &&
         imageW > baseX + i * ROWS_BLOCKDIM_X)
            ? d_Src[i * ROWS_BLOCKDIM_X]
            : 0;
  __syncthreads();
#pragma unroll
  for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++) {
    float sum = 0;
#pragma unroll
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)
      sum += c_Kernel[KERNEL_RADIUS - j] *
             s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X + j];
    d_Dst[i * ROWS_BLOCKDIM_X] = sum;
  }
}
