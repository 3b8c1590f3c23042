"""Python side of gpu-opt: launching and searching fused kernels."""
