"""bertlint: find the mistakes that waste GPU hours in fine-tuning scripts, before the run."""

__version__ = "0.1.0"

_EXTENSION = ("load_ipython_extension", "unload_ipython_extension")  # `%load_ext bertlint`: bertlint.jupyter


def __getattr__(name: str):
    if name in _EXTENSION:  # imported on first use only: `import bertlint` stays free
        from bertlint import jupyter

        return getattr(jupyter, name)
    raise AttributeError(f"module 'bertlint' has no attribute {name!r}")
