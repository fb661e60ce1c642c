"""The command line's entry (the `bertlint` script, `python -m bertlint`): the collector set to run rarely before the
command line is imported, whose imports (click, then libcst and the rules) would otherwise pay ~20 young-generation
collections at the default thresholds (~5 ms of CPU, an eighth of bertlint's own import time)."""

from bertlint.collector import collect_rarely


def run() -> None:
    collect_rarely()
    from bertlint.cli import main

    main()


if __name__ == "__main__":
    run()
