// What ptx.probe_save and #ptx.placeholder refuse.
// RUN: gpu-opt %s -split-input-file -verify-diagnostics

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k()" {
    ptx.reg ".reg .u32 %r1"
    // expected-error @+1 {{'ptx.probe_save' op expects parent op 'ptx.probe'}}
    ptx.probe_save @hits [#ptx.reg<"%r1">]
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k()" {
    ptx.probe "kernel.exit" {
      // expected-error @+1 {{'ptx.probe_save' op saves no value: a record has at least one field}}
      ptx.probe_save @hits []
    }
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k()" {
    ptx.probe "kernel.exit" {
      ptx.reg ".reg .u32 %__pr_n"
      // expected-error @+1 {{'ptx.probe_save' op attribute 'values' failed to satisfy constraint: probe registers}}
      ptx.probe_save @hits [#ptx.reg<"%__pr_n">, #ptx.int<1>]
    }
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k()" {
    ptx.probe "kernel.exit" {
      ptx.reg ".reg .u32 %__pr_n"
      // expected-error @+1 {{'ptx.probe_save' op guard must be a predicate register or its negation, not #ptx.not<#ptx.int<1>>}}
      ptx.probe_save @hits [#ptx.reg<"%__pr_n">] if #ptx.not<#ptx.int<1>>
    }
    ptx.inst "ret"
  }
}

// -----

// A probe saves its own registers only, never the kernel's.
ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k()" {
    ptx.reg ".reg .u32 %r1"
    ptx.probe "kernel.exit" {
      // expected-error @+1 {{'ptx.probe_save' op names '%r1', which is not a probe register: a probe saves only its own registers}}
      ptx.probe_save @hits [#ptx.reg<"%r1">]
    }
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k()" attributes {
      // expected-error @+1 {{unknown placeholder 'size': probe snippets name {bytes}, {addr} and {site}}}
      p = #ptx.placeholder<size>} {
    ptx.inst "ret"
  }
}
