"""Type stubs of fibkit.spark."""

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
    """The Spark DataFrame with each address's route value or fields (and matched prefix) added by
    ``mapInArrow``."""

def upload(spark: Any, fib_file: Union[str, PathLike[str]]) -> None:
    """Gives the compiled FIB file to every executor of the session (``SparkContext.addFile``)."""
