"""Suites whose expected values come from outside evaltool: trec_eval's goldens and binary, peer libraries, published numbers."""
