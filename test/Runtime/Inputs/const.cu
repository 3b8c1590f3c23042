// Kernels that read __constant__ arrays, for gpu-run's --const tests. The
// stand-in driver (unittests/Runtime/FakeCuda.c) emulates fake_const by
// name: dst[i] = src[i] + coeffs[i % 64].
// Regenerate: nvcc -arch=sm_90a -ptx -O3 const.cu -o const.ptx
__constant__ unsigned char coeffs[64];
namespace filt {
__constant__ float taps[4];
}

extern "C" __global__ void fake_const(const unsigned char *src,
                                      unsigned char *dst, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    dst[i] = src[i] + coeffs[i % 64];
}

extern "C" __global__ void taps4(float *x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= filt::taps[i % 4];
}
