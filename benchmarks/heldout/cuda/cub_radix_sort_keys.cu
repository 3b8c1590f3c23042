// cub::DeviceRadixSort::SortKeys over unsigned int keys (onesweep).
#include <cub/device/device_radix_sort.cuh>

cudaError_t sortKeys(void *temp, size_t &tempBytes, const unsigned *in,
                     unsigned *out, int n, cudaStream_t stream) {
  return cub::DeviceRadixSort::SortKeys(temp, tempBytes, in, out, n, 0, 32,
                                        stream);
}
