// Ethash-shaped, memory-bound proof-of-work hash: Keccak-512 seed, 64 FNV
// mixing rounds that each read a pseudo-randomly chosen 128-byte page of a
// large DAG (every address depends on the previous page's data), FNV
// compression of the 128-byte mix to 32 bytes and a final Keccak-256. Part of
// the project's own benchmark kernel suite.
//
// Differences from real Ethash: the DAG is any caller-supplied buffer (no
// cache/DAG generation), the DAG size is a whole number of 128-byte pages
// (no prime-based sizing), and each thread hashes one nonce on its own
// (no 8-lane cooperative mix). Everything else follows Hashimoto.
//
// Definitions (all multi-byte values little-endian; Keccak uses the original
// 0x01 ... 0x80 padding, not SHA-3's 0x06):
//   fnv(a, b) = (a * 0x01000193) ^ b   (32-bit)
//   nonce     = start_nonce + global thread id (64-bit)
//   seed[0..63]  = Keccak-512(header[0..31] || nonce as 8 bytes)
//   s[0..15]     = seed as 32-bit words
//   mix[i]       = s[i % 16], i < 32
//   for i in 0..63:
//     p       = fnv(i ^ s[0], mix[i % 32]) % num_pages
//     page    = the 32 words of dag bytes [128 * p, 128 * p + 128)
//     mix[j]  = fnv(mix[j], page[j]) for j < 32
//   cmix[k]   = fnv(fnv(fnv(mix[4k], mix[4k+1]), mix[4k+2]), mix[4k+3]), k < 8
//   result    = Keccak-256(seed[0..63] || cmix as 32 bytes)
//
// Parameters:
//   dag          const uint4*              num_pages * 128 bytes
//   num_pages    unsigned int              DAG size in 128-byte pages
//   header       const unsigned long long* [4], the 32-byte header hash
//   start_nonce  unsigned long long
//   num_nonces   unsigned int
//   out          unsigned long long*       [num_nonces][4], the 32-byte result
//                                          of nonce start_nonce + i at out[4i]
//
// Launch shape: 1-D blocks of 128 threads, 1-D grid of
// ceil(num_nonces / 128) blocks, no dynamic shared memory.
//
// Problem size that fills an H100: a 4 GiB DAG (num_pages = 2^25, far larger
// than L2) and num_nonces = 2^20 (8192 blocks), i.e. 8 GiB of random 128-byte
// page reads per launch.

// Keccak-f[1600] round constants.
__constant__ unsigned long long kKeccakRC[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808AULL,
    0x8000000080008000ULL, 0x000000000000808BULL, 0x0000000080000001ULL,
    0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008AULL,
    0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000AULL,
    0x000000008000808BULL, 0x800000000000008BULL, 0x8000000000008089ULL,
    0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL,
    0x000000000000800AULL, 0x800000008000000AULL, 0x8000000080008081ULL,
    0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

__device__ __forceinline__ unsigned long long rotl64(unsigned long long x,
                                                     int n) {
  return (x << n) | (x >> (64 - n));
}

// Keccak-f[1600] permutation on 25 64-bit lanes (lane (x, y) at st[x + 5y]).
__device__ __forceinline__ void keccakF1600(unsigned long long st[25]) {
  // Rho rotation amounts and Pi lane order, walked along the Pi cycle
  // starting from lane 1.
  constexpr int kRotc[24] = {1,  3,  6,  10, 15, 21, 28, 36, 45, 55, 2,  14,
                             27, 41, 56, 8,  25, 43, 62, 18, 39, 61, 20, 44};
  constexpr int kPiln[24] = {10, 7,  11, 17, 18, 3, 5,  16, 8,  21, 24, 4,
                             15, 23, 19, 13, 12, 2, 20, 14, 22, 9,  6,  1};

  for (int round = 0; round < 24; ++round) {
    unsigned long long bc[5];
    // Theta.
#pragma unroll
    for (int i = 0; i < 5; ++i)
      bc[i] = st[i] ^ st[i + 5] ^ st[i + 10] ^ st[i + 15] ^ st[i + 20];
#pragma unroll
    for (int i = 0; i < 5; ++i) {
      const unsigned long long t = bc[(i + 4) % 5] ^ rotl64(bc[(i + 1) % 5], 1);
#pragma unroll
      for (int j = 0; j < 25; j += 5)
        st[j + i] ^= t;
    }
    // Rho and Pi.
    unsigned long long t = st[1];
#pragma unroll
    for (int i = 0; i < 24; ++i) {
      const int j = kPiln[i];
      const unsigned long long tmp = st[j];
      st[j] = rotl64(t, kRotc[i]);
      t = tmp;
    }
    // Chi.
#pragma unroll
    for (int j = 0; j < 25; j += 5) {
#pragma unroll
      for (int i = 0; i < 5; ++i)
        bc[i] = st[j + i];
#pragma unroll
      for (int i = 0; i < 5; ++i)
        st[j + i] ^= (~bc[(i + 1) % 5]) & bc[(i + 2) % 5];
    }
    // Iota.
    st[0] ^= kKeccakRC[round];
  }
}

__device__ __forceinline__ unsigned int fnv(unsigned int a, unsigned int b) {
  return (a * 0x01000193u) ^ b;
}

extern "C" __global__ void __launch_bounds__(128)
    ethash_like_search(const uint4 *__restrict__ dag, unsigned int num_pages,
                       const unsigned long long *__restrict__ header,
                       unsigned long long start_nonce, unsigned int num_nonces,
                       unsigned long long *__restrict__ out) {
  const unsigned int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid >= num_nonces)
    return;
  const unsigned long long nonce = start_nonce + gid;

  // Keccak-512 of the 40-byte header || nonce: one block of the 72-byte rate.
  unsigned long long st[25];
#pragma unroll
  for (int i = 0; i < 25; ++i)
    st[i] = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    st[i] = header[i];
  st[4] = nonce;
  st[5] ^= 0x01ULL;               // Padding start at byte 40.
  st[8] ^= 0x8000000000000000ULL; // Padding end at byte 71 (rate - 1).
  keccakF1600(st);

  unsigned long long seed[8];
  unsigned int s[16];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    seed[i] = st[i];
    s[2 * i] = (unsigned int)st[i];
    s[2 * i + 1] = (unsigned int)(st[i] >> 32);
  }

  unsigned int mix[32];
#pragma unroll
  for (int i = 0; i < 32; ++i)
    mix[i] = s[i % 16];

  // 64 dependent page reads. The inner loop is unrolled so that mix[] is
  // indexed with constants and stays in registers.
  for (int base = 0; base < 64; base += 32) {
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const unsigned int i = base + j;
      const unsigned int p = fnv(i ^ s[0], mix[j]) % num_pages;
      const uint4 *page = dag + (unsigned long long)p * 8;
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        const uint4 d = page[q];
        mix[4 * q + 0] = fnv(mix[4 * q + 0], d.x);
        mix[4 * q + 1] = fnv(mix[4 * q + 1], d.y);
        mix[4 * q + 2] = fnv(mix[4 * q + 2], d.z);
        mix[4 * q + 3] = fnv(mix[4 * q + 3], d.w);
      }
    }
  }

  unsigned int cmix[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    cmix[k] = fnv(fnv(fnv(mix[4 * k], mix[4 * k + 1]), mix[4 * k + 2]),
                  mix[4 * k + 3]);
  }

  // Keccak-256 of the 96-byte seed || cmix: one block of the 136-byte rate.
#pragma unroll
  for (int i = 0; i < 25; ++i)
    st[i] = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    st[i] = seed[i];
#pragma unroll
  for (int k = 0; k < 4; ++k)
    st[8 + k] = (unsigned long long)cmix[2 * k] |
                ((unsigned long long)cmix[2 * k + 1] << 32);
  st[12] ^= 0x01ULL;               // Padding start at byte 96.
  st[16] ^= 0x8000000000000000ULL; // Padding end at byte 135 (rate - 1).
  keccakF1600(st);

#pragma unroll
  for (int k = 0; k < 4; ++k)
    out[(unsigned long long)gid * 4 + k] = st[k];
}
