// The installed GpuOptPlugin.so (utils/run-tests.sh installs gpu-opt into
// the build folder) loads into mlir-opt as the build tree's does.
// REQUIRES: mlir-opt-22, gpuopt-installed
// RUN: mlir-opt-22 %s --load-dialect-plugin=%gpuopt_installed_plugin --load-pass-plugin=%gpuopt_installed_plugin --pass-pipeline="builtin.module(print-kernel-analysis)" | FileCheck %s

// CHECK-LABEL: kernel one (module m)
// CHECK-NEXT:  block: at most 256x1x1 (maxntid; the launch decides)
// CHECK:       ptx.module @m

module {
  ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry one() .maxntid 256, 1, 1" {
      ptx.inst "ret"
    }
  }
}
