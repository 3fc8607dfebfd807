"""Arrow columns as numpy arrays, nulls filled (without pyarrow's pandas shim)."""

from __future__ import annotations

import math

import numpy as np


def ints(column, fill, dtype) -> np.ndarray:
    """An Arrow integer column as numpy, nulls as ``fill`` (without pyarrow's pandas shim)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evaltool.io import columnar

    return columnar.numpy_column(pc.cast(pc.fill_null(column, fill), pa.from_numpy_dtype(np.dtype(dtype))), dtype)


def bools(column) -> np.ndarray:
    """An Arrow boolean column as numpy, nulls as False."""
    import pyarrow.compute as pc

    from evaltool.io import columnar

    return columnar.bool_column(pc.fill_null(column, False))


def floats(column) -> np.ndarray:
    """An Arrow numeric column as float64 numpy, nulls as nan (integers beyond 2**53 rounded)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evaltool.io import columnar

    rounded = pa.types.is_integer(column.type)
    return columnar.numpy_column(pc.fill_null(pc.cast(column, pa.float64(), safe=not rounded), math.nan), np.float64)
