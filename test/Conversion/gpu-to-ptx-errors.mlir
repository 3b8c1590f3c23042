// RUN: rm -rf %t && mkdir -p %t
// RUN: gpu-opt %s --split-input-file --gpu-to-ptx="cuda-path=%t" --verify-diagnostics

gpu.module @kernels {
  // expected-error @below {{kernel 'k': argument 1 is an unranked memref, which gpu-opt cannot map to PTX parameters; give it a ranked memref type}}
  gpu.func @k(%n: index, %x: memref<*xf32>) kernel {
    gpu.return
  }
}

// -----

// A symbol named as the captured kernels' module would be is refused.
module attributes {gpu.container_module} {
  // expected-error @below {{cannot capture gpu.module 'kernels': its PTX would be named 'kernels_ptx', which is already a symbol}}
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @kernels_ptx() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// Math functions need CUDA's libdevice; cuda-path= names a folder without it.
// expected-error-re @below {{gpu.module 'kernels' calls __nv_expf from CUDA's libdevice, which was not found in cuda-path={{.*}}: install the CUDA toolkit, or give its folder (with nvvm/libdevice/libdevice.10.bc) as cuda-path= or $CUDA_HOME}}
gpu.module @kernels {
  gpu.func @k(%x: memref<?xf32>) kernel {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<?xf32>
    %e = math.exp %v : f32
    memref.store %e, %x[%tid] : memref<?xf32>
    gpu.return
  }
}

// -----

// LLVM's NVPTX backend would ignore an unknown chip (and write code for
// another) and abort on a PTX version the chip does not allow: both are
// refused first.
// RUN: not gpu-opt %s --split-input-file --gpu-to-ptx="chip=sm_99z" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not gpu-opt %s --split-input-file --gpu-to-ptx="chip=sm_90a features=+ptx60" 2>&1 | FileCheck %s --check-prefix=PTX60
// RUN: not gpu-opt %s --split-input-file --gpu-to-ptx="features=ptx80" 2>&1 | FileCheck %s --check-prefix=SIGN
// RUN: not gpu-opt %s --split-input-file --gpu-to-ptx="features=+nonsense" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// CHIP: error: unknown chip 'sm_99z' for LLVM's NVPTX backend; known: {{.*}}sm_90a
// PTX60: error: sm_90a needs PTX ISA 8.0 or later, but the features ask for 6.0; give +ptx80 or later, or no ptx feature
// SIGN: error: feature 'ptx80' needs a '+' or '-', e.g. +ptx80
// UNKNOWN: error: unknown feature '+nonsense' for LLVM's NVPTX backend
gpu.module @target {
  gpu.func @k() kernel {
    gpu.return
  }
}
