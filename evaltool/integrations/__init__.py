"""Adapters that let other tools call evaltool: an ir_measures provider (and through it PyTerrier)."""
