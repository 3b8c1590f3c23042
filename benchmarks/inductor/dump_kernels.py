#!/usr/bin/env python3
"""The Inductor benchmark's capture step: `python -m gpuopt.capture.inductor`
(pip install ./python) under this script's name, so that the recorded
commands and the GPU session scripts stay as they were."""

import sys

from gpuopt.capture.inductor import main

if __name__ == "__main__":
    sys.exit(main(prog="python3 benchmarks/inductor/dump_kernels.py"))
