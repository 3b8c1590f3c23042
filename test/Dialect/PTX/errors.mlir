// RUN: gpu-opt %s -split-input-file -verify-diagnostics

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    // expected-error@+1 {{uses undeclared register '%r1'}}
    ptx.inst "mov.u32 %r1, 0"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.scope {
      ptx.reg ".reg .pred p"
    }
    // Registers of a scope are not visible after it.
    // expected-error@+1 {{uses undeclared register 'p'}}
    ptx.inst "@p ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    // expected-error@+1 {{refers to undefined label 'nowhere'}}
    ptx.inst "bra nowhere"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.reg ".reg .b32 %r<4>"
    ptx.reg ".reg .b64 %rd<2>"
    // expected-error@+1 {{'.v4' needs a vector operand}}
    ptx.inst "st.global.v4.u32 [%rd1], %r1"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    // expected-error@+1 {{operand #0 is not a PTX operand: "text"}}
    "ptx.inst"() <{modifiers = [], opcode = "mov", ptx_operands = ["text"]}> : () -> ()
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    // expected-error@+1 {{opcode must start with a letter, got '1x'}}
    "ptx.inst"() <{modifiers = [], opcode = "1x", ptx_operands = []}> : () -> ()
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  // expected-error@+1 {{launch bounds apply only to kernels (.entry)}}
  ptx.func ".func f() .reqntid 32" {
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  // expected-error@+1 {{expected an '.entry' header}}
  ptx.entry ".func f()"
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  // expected-error@+1 {{declares 'missing', which is not a function of this module}}
  ptx.declare @missing
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    // expected-error@+1 {{expected ']', found 'end of input'}}
    ptx.inst "ld.global.u32 %r1, [%rd1"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    // expected-error@+1 {{unexpected text after the PTX statement}}
    ptx.inst "ret; ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    // expected-error@+1 {{float immediate width must be 32 or 64, got 16}}
    "ptx.inst"() <{modifiers = [], opcode = "mov", ptx_operands = [#ptx.float<1, 16>]}> : () -> ()
  }
}

// -----

// expected-error@+1 {{'ptx.global' op expects parent op 'ptx.module'}}
ptx.global ".global .b32 x"

// -----

// The quoted text of an op is checked against the opcode table as a .ptx
// file is.
ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    ptx.reg ".reg .f32 %f1"
    ptx.reg ".reg .b64 %rd1"
    // expected-error@+1 {{unknown state space '.glubal' in 'ld'; did you mean '.global'?}}
    ptx.inst "ld.glubal.f32 %f1, [%rd1]"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    // expected-error@+1 {{unknown type '.b33'; did you mean '.b32'?}}
    ptx.reg ".reg .b33 %r<5>"
  }
}
