"""Arrow columns as numpy arrays, nulls filled, and numpy arrays and Python values as Arrow ones,
all without pyarrow's pandas shim: ``pa.array`` and ``pa.scalar`` (so every compute call given a
Python value) import pandas, a third of a second, to ask whether they were handed a pandas object."""

from __future__ import annotations

import math

import numpy as np


def ints(column, fill, dtype) -> np.ndarray:
    """An Arrow integer column as numpy, nulls as ``fill`` (without pyarrow's pandas shim)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evaltool.io import columnar

    filled = pc.fill_null(column, typed(fill, column.type)) if column.null_count else column
    return columnar.numpy_column(pc.cast(filled, pa.from_numpy_dtype(np.dtype(dtype))), dtype)


def bools(column) -> np.ndarray:
    """An Arrow boolean column as numpy, nulls as False."""
    import pyarrow.compute as pc

    from evaltool.io import columnar

    return columnar.bool_column(pc.fill_null(column, typed(False)))


def floats(column) -> np.ndarray:
    """An Arrow numeric column as float64 numpy, nulls as nan (integers beyond 2**53 rounded)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evaltool.io import columnar

    rounded = pa.types.is_integer(column.type)
    as_float = pc.cast(column, pa.float64(), safe=not rounded)
    return columnar.numpy_column(
        pc.fill_null(as_float, typed(math.nan)) if as_float.null_count else as_float, np.float64
    )


def arrow_array(values: np.ndarray):
    """A null-free numpy bool, integer or float array as an Arrow array.

    >>> arrow_array(np.array([True, False])).to_pylist(), arrow_array(np.arange(3)).to_pylist()
    ([True, False], [0, 1, 2])
    """
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    if values.dtype == bool:
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, data])
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def typed(value, type=None):
    """A Python bool, int, float or str (or None, given ``type``) as an Arrow scalar of ``type``
    (default: its own type).

    >>> typed("click").as_py(), typed(0, None).type, typed(None, __import__("pyarrow").string()).is_valid
    ('click', DataType(int64), False)
    """
    import pyarrow as pa

    from evaltool.io.columnar import string_array

    if value is None:
        return pa.nulls(1, type)[0]
    if isinstance(value, str):
        scalar = string_array([value])[0]
    else:
        scalar = arrow_array(np.array([value]))[0]
    return scalar if type is None or scalar.type == type else scalar.cast(type)


def nullable_array(values: list, type):
    """Python values (None for null) as an Arrow array of ``type``: string, float64 or int64.

    >>> import pyarrow as pa
    >>> nullable_array(["a", None], pa.string()).to_pylist(), nullable_array([None, 2], pa.int64()).to_pylist()
    (['a', None], [None, 2])
    """
    import pyarrow as pa

    from evaltool.io.columnar import string_array

    valid = np.fromiter((value is not None for value in values), bool, len(values))
    if pa.types.is_string(type):
        array = string_array([value if value is not None else "" for value in values])
    else:
        dtype = np.float64 if pa.types.is_floating(type) else np.int64
        array = arrow_array(np.array([0 if value is None else value for value in values], dtype))
    if valid.all():
        return array
    validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(array.type, len(values), [validity, *array.buffers()[1:]])
