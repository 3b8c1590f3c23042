// A kernel that only sm_90a can run: ptxas rejects it for sm_80.
module {
  ptx.module @fence version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry fence()" {
      ptx.inst "wgmma.fence.sync.aligned"
      ptx.inst "ret"
    }
  }
}
