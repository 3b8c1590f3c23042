// ptx.probe: the verifier proves that the kernel cannot observe probe code.
// RUN: gpu-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Probe code shares the function's scope: registers declared by the entry
// probe are the probe's in every later probe op; it may read the kernel's
// registers and predicates, branch within itself, store through its own
// registers and use its own .local variables.
// CHECK-LABEL: ptx.entry ".visible .entry ok(
// CHECK:         ptx.probe "kernel.entry" buffers ["__probe_t"] {
// CHECK:           ptx.reg ".reg .b64 %__pr_addr"
// CHECK:         ptx.probe "before ld.global.u32" {
// CHECK-NEXT:      ptx.inst "add.s64 %__pr_a, %rd1, 4"
// CHECK:         ptx.probe "kernel.exit" {
// CHECK-NEXT:      ptx.inst "@!%p1 bra $__pr_skip_0"
ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry ok(.param .u64 in, .param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.probe "kernel.entry" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.reg ".reg .b64 %__pr_a"
      ptx.reg ".reg .b32 %__pr_c<2>"
      ptx.var ".local .u64 __pr_local_addr"
      ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
      ptx.inst "st.local.u64 [__pr_local_addr], %__pr_addr"
    }
    ptx.reg ".reg .pred %p<2>"
    ptx.reg ".reg .b32 %r<2>"
    ptx.reg ".reg .b64 %rd<2>"
    ptx.inst "ld.param.u64 %rd1, [in]"
    ptx.probe "before ld.global.u32" {
      ptx.inst "add.s64 %__pr_a, %rd1, 4"
    }
    ptx.inst "ld.global.u32 %r1, [%rd1+4]"
    ptx.inst "setp.eq.u32 %p1, %r1, 0"
    ptx.probe "kernel.exit" {
      ptx.inst "@!%p1 bra $__pr_skip_0"
      ptx.inst "ld.local.u64 %__pr_addr, [__pr_local_addr]"
      ptx.inst "mov.u32 %__pr_c1, %clock"
      ptx.inst "st.global.b32 [%__pr_addr+8], %__pr_c1"
      ptx.inst "st.global.b64 [%__pr_addr+16], %__pr_a"
      ptx.inst "red.global.add.u64 [%__pr_addr+24], 1"
      ptx.label "$__pr_skip_0:"
    }
    ptx.inst "@%p1 ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.reg ".reg .b32 %r<2>"
    ptx.probe "kernel.entry" {
      // expected-error@+1 {{in a probe writes '%r1', which is not a probe register}}
      ptx.inst "mov.u32 %r1, %clock"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.reg ".reg .pred %p<2>"
    ptx.probe "kernel.entry" {
      ptx.reg ".reg .b32 %__pr_c"
      // Predicates are registers too.
      // expected-error@+1 {{in a probe writes '%p1'}}
      ptx.inst "setp.eq.u32 %p1, %__pr_c, 0"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.entry" {
      ptx.reg ".reg .b32 %__pr_c<3>"
      ptx.inst "mov.u32 %__pr_c2, %clock"
    }
    ptx.reg ".reg .b32 %r<2>"
    // expected-error@+1 {{names the probe's register '%__pr_c2' outside probe code}}
    ptx.inst "add.u32 %r1, %__pr_c2, 1"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.entry" {
      ptx.inst "bra $__pr_in_probe"
      ptx.label "$__pr_in_probe:"
    }
    // expected-error@+1 {{names the probe's label '$__pr_in_probe' outside probe code}}
    ptx.inst "bra $__pr_in_probe"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.exit" {
      // expected-error@+1 {{in a probe branches outside it}}
      ptx.inst "bra $L_kernel"
    }
    ptx.label "$L_kernel:"
    ptx.inst "ret"
  }
}

// -----

// A label inside a `{ }` of the probe is not visible outside it: the branch
// would reach the kernel's label of that name.
ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.exit" {
      // expected-error@+1 {{in a probe branches outside it}}
      ptx.inst "bra $L_same"
      ptx.scope {
        ptx.label "$L_same:"
      }
    }
    ptx.label "$L_same:"
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.exit" {
      // expected-error@+1 {{'bar.sync' is not allowed in a probe}}
      ptx.inst "bar.sync 0"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.entry" {
      // Warpgroup register budgets are the kernel's.
      // expected-error@+1 {{'setmaxnreg.inc.sync.aligned.u32' is not allowed in a probe}}
      ptx.inst "setmaxnreg.inc.sync.aligned.u32 240"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.exit" {
      // expected-error@+1 {{'ret' is not allowed in a probe}}
      ptx.inst "ret"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k(.param .u64 out)" {
    ptx.reg ".reg .b64 %rd<2>"
    ptx.inst "ld.param.u64 %rd1, [out]"
    ptx.probe "kernel.exit" {
      ptx.reg ".reg .b32 %__pr_c"
      // A store through the kernel's pointer could hit the kernel's data.
      // expected-error@+1 {{in a probe stores to global memory through an address not derived from the probe's buffers}}
      ptx.inst "st.global.b32 [%rd1], %__pr_c"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.exit" {
      ptx.reg ".reg .b64 %__pr_a"
      ptx.reg ".reg .b32 %__pr_c"
      // expected-error@+1 {{'ld.global.u32' is not allowed in a probe}}
      ptx.inst "ld.global.u32 %__pr_c, [%__pr_a]"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.exit" {
      ptx.reg ".reg .b64 %__pr_a"
      ptx.reg ".reg .b32 %__pr_c"
      // expected-error@+1 {{'st.shared.u32' is not allowed in a probe}}
      ptx.inst "st.shared.u32 [%__pr_a], %__pr_c"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.var ".local .u32 depot"
    ptx.probe "kernel.exit" {
      ptx.reg ".reg .b32 %__pr_c"
      // The kernel's local memory is the kernel's.
      // expected-error@+1 {{in a probe accesses memory that is not the probe's}}
      ptx.inst "st.local.u32 [depot], %__pr_c"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.entry" {
      // expected-error@+1 {{in a probe declares .shared memory}}
      ptx.var ".shared .u32 __pr_tile"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.entry" {
      ptx.var ".local .u32 __pr_saved"
    }
    ptx.reg ".reg .b32 %r<2>"
    // expected-error@+1 {{names the probe's variable '__pr_saved' outside probe code}}
    ptx.inst "ld.local.u32 %r1, [__pr_saved]"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.entry" {
      // expected-error@+1 {{is not allowed in a probe: probe code holds only}}
      ptx.pragma ".pragma \"nounroll\""
    }
  }
}

// -----

// The exit code in a function of its own: the probe calls it with the
// buffer and the registers it reads, in a call scope.
// CHECK-LABEL: ptx.func ".func __pr_exit_k(
// CHECK:         ptx.probe "kernel.exit" buffers ["__probe_t"] {
// CHECK:         ptx.inst "ret"
// CHECK:       ptx.entry ".entry k(
// CHECK:         ptx.probe "kernel.exit" {
// CHECK-NEXT:      ptx.scope {
// CHECK:             ptx.inst "@%p1 call __pr_exit_k, (__pr_buf_t, __pr_arg_c)"
ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.func ".func __pr_exit_k(.param .b64 __probe_t, .param .b32 __pr_in_c)" {
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.reg ".reg .b32 %__pr_c"
      ptx.inst "ld.param.b32 %__pr_c, [__pr_in_c]"
      ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
      ptx.inst "cvta.to.global.u64 %__pr_addr, %__pr_addr"
      ptx.inst "st.global.b32 [%__pr_addr], %__pr_c"
    }
    ptx.inst "ret"
  }
  ptx.entry ".entry k(.param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.probe "kernel.entry" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.reg ".reg .b32 %__pr_c"
      ptx.inst "mov.u32 %__pr_c, %clock"
    }
    ptx.reg ".reg .pred %p<2>"
    ptx.inst "setp.eq.u32 %p1, 1, 1"
    ptx.probe "kernel.exit" {
      ptx.scope {
        ptx.var ".param .b64 __pr_buf_t"
        ptx.var ".param .b32 __pr_arg_c"
        ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
        ptx.inst "st.param.b64 [__pr_buf_t], %__pr_addr"
        ptx.inst "st.param.b32 [__pr_arg_c], %__pr_c"
        ptx.inst "@%p1 call __pr_exit_k, (__pr_buf_t, __pr_arg_c)"
      }
    }
    ptx.inst "@%p1 ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.func ".func helper()" {
    ptx.inst "ret"
  }
  ptx.entry ".entry k()" {
    ptx.probe "kernel.exit" {
      // A function that is not probe code could do anything.
      // expected-error@+1 {{in a probe calls something other than probe code}}
      ptx.inst "call helper, ()"
    }
  }
}

// -----

// Kernel code never calls a probe function: it could hand it any pointer.
ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.func ".func __pr_exit_k(.param .b64 __probe_t)" {
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
      ptx.inst "cvta.to.global.u64 %__pr_addr, %__pr_addr"
      ptx.inst "st.global.b32 [%__pr_addr], 0"
    }
    ptx.inst "ret"
  }
  ptx.entry ".entry k(.param .u64 out)" {
    ptx.reg ".reg .b64 %rd<2>"
    ptx.inst "ld.param.u64 %rd1, [out]"
    ptx.scope {
      ptx.var ".param .b64 arg"
      ptx.inst "st.param.b64 [arg], %rd1"
      // expected-error@+1 {{names the probe function '__pr_exit_k' outside probe code}}
      ptx.inst "call __pr_exit_k, (arg)"
    }
    ptx.inst "ret"
  }
}

// -----

// A buffer argument is set in the call's own `{ }`, before the call: the
// variable of that name in another scope is another variable.
ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.func ".func __pr_exit_k(.param .b64 __probe_t)" {
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
      ptx.inst "cvta.to.global.u64 %__pr_addr, %__pr_addr"
      ptx.inst "st.global.b32 [%__pr_addr], 0"
    }
    ptx.inst "ret"
  }
  ptx.entry ".entry k(.param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.scope {
        ptx.var ".param .b64 __pr_buf_t"
        ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
        ptx.inst "st.param.b64 [__pr_buf_t], %__pr_addr"
      }
      ptx.scope {
        ptx.var ".param .b64 __pr_buf_t"
        // expected-error@+1 {{passes @__pr_exit_k a value not derived from the probe's buffers}}
        ptx.inst "call __pr_exit_k, (__pr_buf_t)"
      }
    }
    ptx.inst "ret"
  }
}

// -----

// A register argument holding a buffer address is a buffer argument.
ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.func ".func __pr_exit_k(.param .b64 __probe_t)" {
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
      ptx.inst "cvta.to.global.u64 %__pr_addr, %__pr_addr"
      ptx.inst "st.global.b32 [%__pr_addr], 0"
    }
    ptx.inst "ret"
  }
  ptx.entry ".entry k(.param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
      ptx.inst "call __pr_exit_k, (%__pr_addr)"
    }
    ptx.inst "ret"
  }
}

// -----

// The exit function stores through its buffer parameter: the kernel must
// pass it an address derived from its own buffer, not one of its outputs.
ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.func ".func __pr_exit_k(.param .b64 __probe_t)" {
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
      ptx.inst "cvta.to.global.u64 %__pr_addr, %__pr_addr"
      ptx.inst "st.global.b32 [%__pr_addr], 0"
    }
    ptx.inst "ret"
  }
  ptx.entry ".entry k(.param .u64 out, .param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.scope {
        ptx.var ".param .b64 __pr_buf_t"
        ptx.inst "ld.param.u64 %__pr_addr, [out]"
        ptx.inst "st.param.b64 [__pr_buf_t], %__pr_addr"
        // expected-error@+1 {{in a probe passes @__pr_exit_k a value not derived from the probe's buffers for its buffer parameter '__probe_t'}}
        ptx.inst "call __pr_exit_k, (__pr_buf_t)"
      }
    }
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k(.param .u64 out)" {
    ptx.probe "kernel.exit" {
      ptx.reg ".reg .b64 %__pr_a"
      // Call arguments are the probe's own .param variables.
      // expected-error@+1 {{in a probe accesses memory that is not the probe's}}
      ptx.inst "st.param.b64 [out], %__pr_a"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k(.param .u64 out, .param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.reg ".reg .b64 %rd<2>"
    ptx.inst "ld.param.u64 %rd1, [out]"
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_a"
      ptx.reg ".reg .b32 %__pr_c"
      // A probe register that holds the kernel's pointer is not a buffer
      // address: the store could hit the kernel's data.
      ptx.inst "add.s64 %__pr_a, %rd1, 4"
      // expected-error@+1 {{in a probe stores to global memory through an address not derived from the probe's buffers}}
      ptx.inst "st.global.b32 [%__pr_a], %__pr_c"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k(.param .u64 out, .param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.probe "kernel.exit" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_a"
      ptx.reg ".reg .b32 %__pr_c"
      // Loading the kernel's parameter gives the kernel's buffer.
      ptx.inst "ld.param.u64 %__pr_a, [out]"
      // expected-error@+1 {{through an address not derived from the probe's buffers}}
      ptx.inst "st.global.b32 [%__pr_a+8], %__pr_c"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k(.param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.probe "kernel.entry" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_a<3>"
      ptx.reg ".reg .b32 %__pr_c"
      ptx.inst "ld.param.u64 %__pr_a1, [__probe_t]"
      ptx.inst "ld.param.u64 %__pr_a2, [__probe_t]"
      // The difference of two addresses is an offset, not an address.
      ptx.inst "sub.s64 %__pr_a1, %__pr_a1, %__pr_a2"
      // expected-error@+1 {{through an address not derived from the probe's buffers}}
      ptx.inst "st.global.b32 [%__pr_a1], %__pr_c"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k(.param .u64 out)" {
    // expected-error@+1 {{names buffer '__probe_t', which is not a parameter of ptx.entry}}
    ptx.probe "kernel.entry" buffers ["__probe_t"] {
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k(.param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.probe "kernel.entry" buffers ["__probe_t"] {
    }
    ptx.reg ".reg .b64 %rd<2>"
    // expected-error@+1 {{names the probe's buffer '__probe_t' outside probe code}}
    ptx.inst "ld.param.u64 %rd1, [__probe_t]"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.probe "kernel.entry" {
      ptx.reg ".reg .b32 %__pr_c"
      // The kernel's addc could read this carry.
      // expected-error@+1 {{'add.cc.u32' is not allowed in a probe: it writes the carry flag}}
      ptx.inst "add.cc.u32 %__pr_c, %__pr_c, 1"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k(.param .u64 .ptr .global .align 8 __probe_t, .param .u64 p)" {
    ptx.probe "kernel.entry" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_a"
      ptx.reg ".reg .b32 %__pr_c"
      // Past the buffer parameter lies the kernel's.
      ptx.inst "ld.param.u64 %__pr_a, [__probe_t+8]"
      // expected-error@+1 {{through an address not derived from the probe's buffers}}
      ptx.inst "st.global.b32 [%__pr_a], %__pr_c"
    }
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.var ".local .align 4 .b8 depot[64]"
    ptx.probe "kernel.entry" {
      ptx.var ".local .u32 __pr_v"
      ptx.reg ".reg .b32 %__pr_c"
      // Past a probe variable may lie the kernel's local memory.
      // expected-error@+1 {{in a probe accesses memory that is not the probe's}}
      ptx.inst "st.local.u32 [__pr_v+64], %__pr_c"
    }
  }
}
