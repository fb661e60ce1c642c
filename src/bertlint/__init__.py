"""bertlint: find the mistakes that waste GPU hours in fine-tuning scripts, before the run."""

__version__ = "0.1.0"
