"""Arrow arrays of records' fields, from the buffers the extension makes
(numbers, offsets and bytes as numpy arrays, wrapped without a copy)."""


def record_batch(columns, length):
    """A ``pyarrow.RecordBatch`` of ``length`` rows from ``(name, type,
    null_count, validity, buffers)`` column tuples."""
    import pyarrow as pa

    arrays, names = [], []
    for name, kind, nulls, validity, buffers in columns:
        valid = pa.py_buffer(validity) if nulls else None
        if kind == "large_list":
            offsets, items = buffers
            values = pa.Array.from_buffers(pa.int64(), len(items), [None, pa.py_buffer(items)])
            array = pa.Array.from_buffers(
                pa.large_list(pa.int64()), length, [valid, pa.py_buffer(offsets)], nulls, children=[values]
            )
        else:
            arrow_type = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
                          "large_string": pa.large_string()}[kind]
            array = pa.Array.from_buffers(arrow_type, length, [valid] + [pa.py_buffer(b) for b in buffers], nulls)
        arrays.append(array)
        names.append(name)
    return pa.RecordBatch.from_arrays(arrays, names=names)
