"""Type stubs of fibkit.dask."""

from os import PathLike
from typing import Any, Optional, Union

def enrich(
    frame: Any, column: str, fib_file: Union[str, PathLike[str]], value: str = "value", prefix: Optional[str] = None
) -> Any:
    """The Dask DataFrame with each address's route value (and matched prefix) added, partition by partition."""

def upload(client: Any, fib_file: Union[str, PathLike[str]]) -> None:
    """Sends the compiled FIB file once to every worker of ``client``, into its local directory."""
