"""Type stubs of fibkit.arrow."""

from os import PathLike
from typing import Any, Callable, Optional, Sequence, Union

from . import Table

def non_null(addresses: Any, answer: Callable[[Any], Any]) -> Any:
    """``answer`` of the non-null addresses of a pyarrow array, with a null row where an address is null."""

def enrich(
    data: Any,
    column: str,
    table: Table,
    value: str = "value",
    prefix: Optional[str] = None,
    fields: Union[bool, str, Sequence[str], None] = None,
) -> Any:
    """The pyarrow RecordBatch or Table with each address's route value or fields (and matched prefix) added."""

def enriched_schema(
    schema: Any,
    column: str,
    table: Table,
    value: str = "value",
    prefix: Optional[str] = None,
    fields: Union[bool, str, Sequence[str], None] = None,
) -> Any:
    """The pyarrow schema of ``enrich``'s answer for data of ``schema``."""

def enrich_parquet_file(
    source: Any,
    destination: Any,
    column: str,
    table: Table,
    value: str = "value",
    prefix: Optional[str] = None,
    fields: Union[bool, str, Sequence[str], None] = None,
) -> int:
    """A Parquet file enriched row group by row group into another; the number of rows."""

def enrich_parquet_path(
    source: str,
    destination: str,
    filesystem: Any,
    column: str,
    table: Table,
    value: str = "value",
    prefix: Optional[str] = None,
    fields: Union[bool, str, Sequence[str], None] = None,
) -> int:
    """``enrich_parquet_file`` of two paths on a ``pyarrow.fs.FileSystem``; an error names the source."""

def parquet_files(source: Union[str, PathLike[str], list[str]]) -> tuple[list[str], Any]:
    """The Parquet files of a directory, a file, a list of files or a URI, in name order, and their file system."""

def parquet_pairs(
    source: Union[str, PathLike[str], list[str]],
    destination: Union[str, PathLike[str]],
    column: str,
    table: Table,
    value: str = "value",
    prefix: Optional[str] = None,
    fields: Union[bool, str, Sequence[str], None] = None,
) -> tuple[list[tuple[str, str]], Any]:
    """Each Parquet file of ``source`` with its file in ``destination`` (made), checked before any task runs."""
