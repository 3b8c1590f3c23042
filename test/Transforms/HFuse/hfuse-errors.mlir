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

// -----

// Several units per ticket need a counter to take them from.
// expected-error @+1 {{'units' = 2 needs strategy dynamic or sm_aware, not interleave}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = interleave, units = 2, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1]>]>} {
}

// -----

// Between units every thread waits at the barrier after the parts' ids:
// none is left after 15.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = dynamic, units = 2, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'ka' with units=2: it uses barrier 15, which the fused kernel needs between units; use units=1}}
    ptx.entry ".visible .entry ka()" {
      ptx.inst "bar.sync 15, 64"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.inst "ret"
    }
  }
}

// -----

// Replicas put several blocks of a kernel in one fused block: a thread
// split only.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = interleave, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1], replicas = 2>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'kb': replicas apply to the thread split, where a fused block holds every kernel's threads, not to strategy interleave; use strategy=thread or drop them}}
    ptx.entry ".visible .entry kb()" {
      ptx.inst "ret"
    }
  }
}

// -----

// setmaxnreg exists on sm_90a and later architecture-specific targets only.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [128, 1, 1], grid = [64, 1, 1], setmaxnreg = 160>, <kernel = "kb", block = [128, 1, 1], grid = [64, 1, 1], setmaxnreg = 40>]>} {
  ptx.module @a version "8.7" target ["sm_90"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'ka': setmaxnreg=160 needs a target with setmaxnreg (sm_90a, sm_100a and later architecture-specific targets), but it targets sm_90; compile it for sm_90a, or drop setmaxnreg}}
    ptx.entry ".visible .entry ka()" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.inst "ret"
    }
  }
}

// -----

// A kernel that sets its own budget cannot be given another.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [128, 1, 1], grid = [64, 1, 1], setmaxnreg = 160>, <kernel = "kb", block = [128, 1, 1], grid = [64, 1, 1], setmaxnreg = 40>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'ka': it changes its register budget with setmaxnreg, which the budgets given to the other kernels (setmaxnreg=) would break; drop them}}
    ptx.entry ".visible .entry ka()" {
      ptx.inst "setmaxnreg.inc.sync.aligned.u32 232"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.inst "ret"
    }
  }
}

// -----

// setmaxnreg is a warpgroup instruction: a budgeted part is whole
// warpgroups.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [128, 1, 1], grid = [64, 1, 1], setmaxnreg = 160>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1], setmaxnreg = 40>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'kb': setmaxnreg is executed by whole warpgroups (128 threads), but its 64 threads are not a multiple of 128; change its replicas or threads, or drop setmaxnreg}}
    ptx.entry ".visible .entry kb()" {
      ptx.inst "ret"
    }
  }
}

// -----

// The budgets must fit the pool the fused block is launched with, or
// setmaxnreg.inc would wait forever.
// expected-error @+1 {{cannot fuse into 'f': the parts' setmaxnreg budgets need 40960 registers, more than the 32768 the fused block is launched with (128 per thread x 256 threads), so setmaxnreg.inc would wait forever; raise maxnreg to 160 or leave it 0, or lower the budgets}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, maxnreg = 128, parts = [<kernel = "ka", block = [128, 1, 1], grid = [64, 1, 1], setmaxnreg = 200>, <kernel = "kb", block = [128, 1, 1], grid = [64, 1, 1], setmaxnreg = 120>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.inst "ret"
    }
  }
}

// -----

// A launch count whose pool is not whole per-thread steps of 8.
// expected-error @+1 {{cannot fuse into 'f': with setmaxnreg the fused kernel is launched with 100 registers per thread, which must be a multiple of 8 and at most 248 (ptxas's .maxnreg is at most 255); give maxnreg a multiple of 8, or 0}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, maxnreg = 100, parts = [<kernel = "ka", block = [128, 1, 1], grid = [64, 1, 1], setmaxnreg = 152>, <kernel = "kb", block = [128, 1, 1], grid = [64, 1, 1], setmaxnreg = 40>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.inst "ret"
    }
  }
}

// -----

// One fused block must fit an SM's 64K registers at the launch count.
// expected-error @+1 {{cannot fuse into 'f': its block of 768 threads at the launch count of 104 registers needs 79872 registers, more than the 65536 of an SM; lower the budgets or the replicas}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [256, 1, 1], grid = [64, 1, 1], setmaxnreg = 160>, <kernel = "kb", block = [128, 1, 1], grid = [256, 1, 1], replicas = 4, setmaxnreg = 72>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.inst "ret"
    }
  }
}

// -----

// Each copy of a warpgroup kernel must start a warpgroup.
// expected-note @+1 {{while fusing into 'f'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [128, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [128, 1, 1], replicas = 2>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    // expected-error @+1 {{cannot fuse kernel 'kb': it uses warpgroup instructions, so each of its 2 copies must start a warpgroup, but its block of 64 threads is not a multiple of 128}}
    ptx.entry ".visible .entry kb()" {
      ptx.inst "wgmma.fence.sync.aligned"
      ptx.inst "ret"
    }
  }
}

// -----

// Each copy takes its own barrier ids.
// expected-error @+1 {{cannot fuse into 'f' by thread split: the kernels need 17 named barriers (each copy of a replicated kernel its own), more than the 16 a block has; use strategy=interleave or dynamic, or fewer replicas}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [128, 1, 1], replicas = 4>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.inst "bar.sync 0"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.inst "bar.sync 3"
      ptx.inst "ret"
    }
  }
}

// -----

// A replicated kernel's shared variable reached through a generic address
// cannot be pointed at each copy's own.
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [128, 1, 1], replicas = 2>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.global ".shared .align 4 .b8 buf[256]"
    ptx.entry ".visible .entry kb()" {
      ptx.reg ".reg .b32 %r<4>"
      // expected-error @+1 {{cannot replicate kernel 'kb': its shared variable 'buf' is used by 'ld.u32', which gpu-opt cannot point at each copy's own (only shared-space addresses, mov and cvta); use replicas=1}}
      ptx.inst "ld.u32 %r1, [buf]"
      ptx.inst "ret"
    }
  }
}

// -----

// Launch-agnostic kernels do not know their grids when they are built.
// expected-error @+1 {{cannot fuse into 'f' with runtime shapes: replicas=2 for kernel 'kb'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, runtime_shapes = true, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", block = [64, 1, 1], grid = [128, 1, 1], replicas = 2>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka()" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb()" {
      ptx.inst "ret"
    }
  }
}

// -----

// A budget is what setmaxnreg takes: a multiple of 8 in 24..256.
// expected-error @+2 {{'setmaxnreg' must be 0 (none) or a multiple of 8 within 24..256, got 100}}
// expected-error @+1 {{failed to parse GPUOpt_HFusePlanAttr parameter 'parts'}}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "ka", block = [64, 1, 1], grid = [64, 1, 1], setmaxnreg = 100>, <kernel = "kb", block = [64, 1, 1], grid = [64, 1, 1]>]>} {
}
