"""Helpers of the kernels in ops/."""
