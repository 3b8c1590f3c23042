"""Python side of gpu-opt: the workflows around gpu-opt and gpu-run.

- gpuopt.verify: run the original kernels and a fused or probed kernel on
  the same inputs through gpu-run and compare the outputs bit for bit;
- gpuopt.profile: the kernels' times alone and at fewer blocks per SM, the
  profile that `--hfuse` strategy=auto reads;
- gpuopt.bench: alone / serial / two streams / graph / fused timings and
  overlap efficiency;
- gpuopt.capture.inductor: the Triton kernels PyTorch Inductor launches;
- gpuopt.hfuse_search: measure the fusion planner's candidates;
- gpuopt.trace and the analyses of probe traces (block_sched, warp_sched,
  dmat, progress, totals).

Each has a command line: `python -m gpuopt.<name> --help`.
"""
