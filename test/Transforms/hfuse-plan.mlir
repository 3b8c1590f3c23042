// --hfuse-plan alone: it reads the kernels and launch shapes, decides, and
// leaves the decision on the top-level module as a #gpuopt.hfuse_plan for
// --hfuse-apply; the kernels' modules are not touched. A named strategy is
// built on a copy and assembled (here by the stand-in ptxas).
// DEFINE: %{ptxas} = ptxas=%S/HFuse/Inputs/fake-ptxas.py
// RUN: gpu-opt %s --hfuse-plan="strategy=thread kernels=ka,kb grids=1024,512 name=ka_kb %{ptxas}" 2>&1 | FileCheck %s --check-prefix=THREAD
// RUN: gpu-opt %s --hfuse-plan="strategy=interleave kernels=ka,kb ratio=3,1 grids=1024,512 maxnreg=64 name=il %{ptxas}" 2>/dev/null | FileCheck %s --check-prefix=INTERLEAVE
// RUN: gpu-opt %s --hfuse-plan="strategy=dynamic kernels=kb,ka grids=512,1024 smem=0,4096 %{ptxas}" 2>/dev/null | FileCheck %s --check-prefix=DYNAMIC
// RUN: not gpu-opt %s --hfuse-plan="strategy=thread kernels=ka grids=1024 %{ptxas}" 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not gpu-opt %s --hfuse-plan="strategy=thread kernels=ka,kb grids=1024,512 threads=96,64 %{ptxas}" 2>&1 | FileCheck %s --check-prefix=RESIZE

// Blocks come from `.reqntid`; a thread split's parts get the kernels' own
// blocks and grids (the ratio of a part records the grids' proportion).
// THREAD: remark: hfuse: thread strategy as requested
// THREAD-LABEL: module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "ka_kb", strategy = thread, parts = [<kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1], ratio = 2>, <kernel = "kb", module = "b", block = [64, 1, 1], grid = [512, 1, 1]>]>} {
// THREAD-NEXT: ptx.module @a
// THREAD-NEXT: ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 128, 1, 1" {
// THREAD: ptx.module @b
// THREAD-NEXT: ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 64, 1, 1" {
// THREAD-NOT: gpuopt.fusion

// INTERLEAVE: #gpuopt.hfuse_plan<name = "il", strategy = interleave, maxnreg = 64, parts = [<kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1], ratio = 3>, <kernel = "kb", module = "b", block = [64, 1, 1], grid = [512, 1, 1]>]>

// Parts in the order of kernels=, each with its dynamic shared memory; the
// default name joins the kernels'.
// DYNAMIC: #gpuopt.hfuse_plan<name = "kb_ka_fused", strategy = dynamic, parts = [<kernel = "kb", module = "b", block = [64, 1, 1], grid = [512, 1, 1], dynamic_smem = 0>, <kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1], ratio = 2, dynamic_smem = 4096>]>

// ONE: --hfuse-plan option 'kernels':1:1: error: horizontal fusion needs at least two kernels; found 1
// ONE-NOT: gpuopt.hfuse_plan

// RESIZE: --hfuse-plan option 'threads':1:1: error: kernel 'ka' cannot be given 96 threads instead of its block 128x1x1: its .reqntid fixes the block at 128x1x1
// RESIZE: note: why 'ka' may not be resizable

module {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 128, 1, 1" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, %tid.x"
      ptx.inst "bar.sync 0"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 64, 1, 1" {
      ptx.reg ".reg .pred %p<2>"
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, %ctaid.x"
      ptx.inst "setp.eq.u32 %p1, %r1, 0"
      ptx.inst "@%p1 ret"
      ptx.inst "ret"
    }
  }
}
