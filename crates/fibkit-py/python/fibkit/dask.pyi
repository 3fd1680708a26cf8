"""Type stubs of fibkit.dask."""

from os import PathLike
from typing import Any, Optional, Sequence, Union

def enrich(
    frame: Any,
    column: str,
    fib_file: Union[str, PathLike[str]],
    value: str = "value",
    prefix: Optional[str] = None,
    fields: Union[bool, str, Sequence[str], None] = None,
) -> Any:
    """The Dask DataFrame with each address's route value or fields (and matched prefix) added, partition by
    partition."""

def enrich_parquet(
    source: Union[str, PathLike[str], list[str]],
    destination: Union[str, PathLike[str]],
    column: str,
    fib_file: Union[str, PathLike[str]],
    value: str = "value",
    prefix: Optional[str] = None,
    fields: Union[bool, str, Sequence[str], None] = None,
) -> int:
    """Each Parquet file of ``source`` enriched on a worker into a file of the same name in ``destination``;
    the number of rows written."""

def upload(client: Any, fib_file: Union[str, PathLike[str]]) -> None:
    """Sends the compiled FIB file once to every worker of ``client``, into its local directory."""
