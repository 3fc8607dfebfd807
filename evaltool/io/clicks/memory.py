"""Memory freed while a big log is read, given back to the operating system."""

from __future__ import annotations

import os

ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
MMAP_THRESHOLD = 1280 * 1024  # bytes: larger blocks are mapped, and unmapped when freed


def release_freed_memory() -> None:
    """Make freed memory go back to the operating system while a big log is read.

    Reading a 10M-event table allocates and frees buffers of growing size batch after
    batch. Arrow's default allocator (mimalloc) keeps freed memory for reuse, and glibc's
    malloc raises its mmap threshold after each large free, so both hold on to hundreds
    of megabytes that are no longer used. For the command line (one log per process) the
    system allocator for Arrow and a fixed mmap threshold keep the peak near what is
    live. The threshold sits just above a batch's temporaries (128K rows of 8 bytes): those are
    reused from the heap, not mapped and faulted in afresh each time (at 128 KB the kernel's
    page faults were a third of the CPU time of a 10M-event log; 25 MB more at the peak).
    Arrow's C++ code (the Parquet and JSON readers, compute kernels) takes its
    allocator from ``ARROW_DEFAULT_MEMORY_POOL``, read once when pyarrow is first loaded,
    so the variable is set for that moment (and restored) when pyarrow is not loaded yet;
    ``pyarrow.set_memory_pool`` alone reaches only what Python allocates. Process-wide: a
    library caller decides for itself whether to call this.
    """
    import ctypes
    import ctypes.util
    import sys

    if "pyarrow" not in sys.modules:
        before = os.environ.get(ARROW_POOL_VARIABLE)
        os.environ[ARROW_POOL_VARIABLE] = "system"
        try:
            import pyarrow as pa

            pa.default_memory_pool()
        finally:
            if before is None:
                del os.environ[ARROW_POOL_VARIABLE]
            else:
                os.environ[ARROW_POOL_VARIABLE] = before
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    name = ctypes.util.find_library("c")
    if name:
        try:
            libc = ctypes.CDLL(name)
            libc.mallopt(-3, MMAP_THRESHOLD)  # M_MMAP_THRESHOLD: fixed, no longer raised by each large free
        except (OSError, AttributeError):  # not glibc: nothing to tune
            pass
