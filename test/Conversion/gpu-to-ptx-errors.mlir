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
