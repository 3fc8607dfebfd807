"""Formatters: an EvalResult in, text out. Formatting only."""
