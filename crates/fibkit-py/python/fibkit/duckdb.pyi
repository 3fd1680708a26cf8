"""Type stubs of fibkit.duckdb."""

from os import PathLike
from typing import Any, Optional, Sequence, Union

from . import Table

def register(
    connection: Any, table: Union[Table, str, PathLike[str]], name: str = "fibkit_lookup", fields: Optional[Sequence[str]] = None
) -> Any:
    """Registers ``name(ip VARCHAR)`` on the DuckDB ``connection``: a STRUCT of the table's fields (or its value)."""
