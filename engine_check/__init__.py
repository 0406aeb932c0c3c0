"""engine_check: measure prefill vs decode on the local accelerator.

Importing this package is cheap; torch is imported only by its submodules.
"""
