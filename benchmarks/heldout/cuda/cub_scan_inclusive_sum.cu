// cub::DeviceScan::InclusiveSum over int (decoupled look-back scan).
#include <cub/device/device_scan.cuh>

cudaError_t inclusiveSum(void *temp, size_t &tempBytes, const int *in,
                         int *out, int n, cudaStream_t stream) {
  return cub::DeviceScan::InclusiveSum(temp, tempBytes, in, out, n, stream);
}
