"""bertlint: find the mistakes that waste GPU hours in fine-tuning scripts, before the run."""

__version__ = "0.1.0"


def load_ipython_extension(shell) -> None:
    """`%load_ext bertlint`: lint each cell as it runs (see `bertlint.jupyter`)."""
    from bertlint import jupyter

    jupyter.load(shell)


def unload_ipython_extension(shell) -> None:
    from bertlint import jupyter

    jupyter.unload(shell)
