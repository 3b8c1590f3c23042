// Every refusal of --hfuse-apply, with the reason and what to change.
// RUN: gpu-opt %s --hfuse-apply --split-input-file --verify-diagnostics
// %warpid is hardware-dependent.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [32, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'ka': it reads %warpid, a hardware warp slot that changes when the block is reshaped}}
    ptx.entry ".visible .entry ka()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, %warpid"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// Grid-wide synchronisation (cooperative launch) needs its own grid resident.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [32, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'ka': it synchronises the whole grid}}
    ptx.entry ".visible .entry ka()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, %envreg1"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// Cluster barriers.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = interleave, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [32, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'ka': it uses thread-block clusters}}
    ptx.entry ".visible .entry ka()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "barrier.cluster.arrive"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// Register barrier ids cannot be renumbered.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [32, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'ka': a barrier takes its id from a register}}
    ptx.entry ".visible .entry ka()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, 3"
      ptx.inst "bar.sync %r1"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// More than 1024 threads in one block.
// expected-error @+1 {{the fused block would have 1280 threads (more than 1024)}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [768, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [512, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// Each kernel uses barriers 0-8: 18 ids.
// expected-error @+1 {{the kernels need 18 named barriers, more than the 16 a block has}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "bar.sync 8"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "bar.sync 8"
      ptx.inst "ret"
    }
  }
}

// -----

// A block larger than .maxntid allows. (A plan without a block shape is
// refused by the plan attribute's verifier: test/Dialect/GPUOpt/errors.mlir.)
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [16, 16, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{its .maxntid allows at most 128 threads per block, fewer than the 256 of the block 16x16}}
    ptx.entry ".visible .entry ka() .maxntid 128, 1, 1" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// The plan contradicts .reqntid.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{its .reqntid is 128 but the plan gives the block 64}}
    ptx.entry ".visible .entry ka() .reqntid 128, 1, 1" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// Dynamic shared memory of unknown size.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.global ".extern .shared .align 16 .b8 smem[]"
    // expected-error @+1 {{it declares dynamic shared memory (.extern .shared array): give the bytes it is launched with}}
    ptx.entry ".visible .entry ka()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, smem"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// Warps shared between kernels.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [48, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{its block of 48 threads is not a multiple of 32}}
    ptx.entry ".visible .entry ka()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// A plan naming a kernel that is not there.
// expected-error @+1 {{no kernel 'kc'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kc", block = [64, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "ret"
    }
  }
}

// -----

// A plan in the dictionary form of earlier versions.
// expected-error @+1 {{'builtin.module' op 'gpuopt.hfuse' must be a #gpuopt.hfuse_plan}}
module attributes {gpuopt.hfuse = {name = "f", strategy = "thread", parts = []}} {
}
