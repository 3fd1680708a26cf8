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

def enrich_parquet(
    spark: Any,
    source: Union[str, PathLike[str], list[str]],
    destination: Union[str, PathLike[str]],
    column: str,
    fib_file: Union[str, PathLike[str]],
    value: str = "value",
    prefix: Optional[str] = None,
    fields: Union[bool, str, Sequence[str], None] = None,
) -> int:
    """Each Parquet file of ``source`` enriched by a Spark task's Python worker (pyarrow, not the JVM) into a file
    of the same name in ``destination``; the number of rows written."""

def upload(spark: Any, fib_file: Union[str, PathLike[str]]) -> None:
    """Gives the compiled FIB file to every executor of the session (``SparkContext.addFile``)."""
