from fibkit_polars import lookup as lookup, prefix as prefix

__all__ = ["lookup", "prefix"]
