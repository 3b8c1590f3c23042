; Two-stage cp.async pipeline: each 128-thread block streams `ntiles` tiles
; of 512 floats through a double-buffered shared-memory stage with 16-byte
; cp.async.cg copies (commit/wait groups + CTA barriers), and writes
; out = alpha * in with vectorised 128-bit stores.
; Hand-written LLVM IR using NVPTX intrinsics (sm_80+).

target datalayout = "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@stage = internal addrspace(3) global [2 x [512 x float]] undef, align 16

define ptx_kernel void @cp_async_scale(ptr addrspace(1) noalias readonly align 16 %in,
                                       ptr addrspace(1) noalias writeonly align 16 %out,
                                       float %alpha, i32 %ntiles) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %lane_off = shl i32 %tid, 2                      ; 4 floats per thread
  %first_tile = mul i32 %bid, %ntiles
  %empty = icmp sle i32 %ntiles, 0
  br i1 %empty, label %exit, label %prologue

prologue:
  call void @issue_copy(ptr addrspace(1) %in, i32 %first_tile, i32 0, i32 %lane_off)
  call void @llvm.nvvm.cp.async.commit.group()
  br label %loop

loop:
  %t = phi i32 [ 0, %prologue ], [ %t.next, %loop.end ]
  %t.next = add nuw nsw i32 %t, 1
  %has_next = icmp slt i32 %t.next, %ntiles
  br i1 %has_next, label %prefetch, label %drain

prefetch:
  %next_tile = add i32 %first_tile, %t.next
  %next_buf = and i32 %t.next, 1
  call void @issue_copy(ptr addrspace(1) %in, i32 %next_tile, i32 %next_buf, i32 %lane_off)
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.cp.async.wait.group(i32 1)
  br label %compute

drain:
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  br label %compute

compute:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %buf = and i32 %t, 1
  %sptr = getelementptr inbounds [2 x [512 x float]], ptr addrspace(3) @stage, i32 0, i32 %buf, i32 %lane_off
  %v = load <4 x float>, ptr addrspace(3) %sptr, align 16
  %splat.i = insertelement <4 x float> poison, float %alpha, i64 0
  %splat = shufflevector <4 x float> %splat.i, <4 x float> poison, <4 x i32> zeroinitializer
  %r = fmul <4 x float> %v, %splat
  %tile = add i32 %first_tile, %t
  %gbase = mul i32 %tile, 512
  %gidx = add i32 %gbase, %lane_off
  %gidx64 = zext i32 %gidx to i64
  %gptr = getelementptr inbounds float, ptr addrspace(1) %out, i64 %gidx64
  store <4 x float> %r, ptr addrspace(1) %gptr, align 16
  ; The buffer just read is refilled by the next iteration's prefetch.
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  br label %loop.end

loop.end:
  br i1 %has_next, label %loop, label %exit

exit:
  ret void
}

; Copy this thread's 16 bytes of tile `tile` into stage buffer `buf`.
define internal void @issue_copy(ptr addrspace(1) %in, i32 %tile, i32 %buf, i32 %lane_off) alwaysinline {
  %gbase = mul i32 %tile, 512
  %gidx = add i32 %gbase, %lane_off
  %gidx64 = zext i32 %gidx to i64
  %src = getelementptr inbounds float, ptr addrspace(1) %in, i64 %gidx64
  %dst = getelementptr inbounds [2 x [512 x float]], ptr addrspace(3) @stage, i32 0, i32 %buf, i32 %lane_off
  call void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3) %dst, ptr addrspace(1) %src)
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.commit.group()
declare void @llvm.nvvm.cp.async.wait.group(i32 immarg)
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
