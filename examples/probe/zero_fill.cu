// Zero-fill as PyTorch's torch.zeros((4096, 4096)) launches it: a vectorised
// elementwise kernel, one float4 per thread, 128-thread blocks, so 32768
// short blocks for 16M floats. Neutrino (OSDI'25) found about 20% of such a
// kernel's time going to block scheduling; examples/probe/run.sh measures
// it with --probe=block_sched.
//
// Parameters: out float4* [n4], n4 long long (number of float4).
// Launch: 1-D blocks of 128 threads, grid ceil(n4 / 128).
//
// PTX: nvcc -ptx -arch=sm_90a -O3 -lineinfo zero_fill.cu -o zero_fill.ptx

extern "C" __global__ void zero_fill(float4 *__restrict__ out, long long n4) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4)
    out[i] = make_float4(0.f, 0.f, 0.f, 0.f);
}
