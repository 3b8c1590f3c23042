"""Capturing the kernels that frameworks launch, for gpu-opt."""
