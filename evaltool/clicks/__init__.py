"""Implicit feedback: metrics from click logs, and click models that turn clicks into judgments.

In production there are rarely qrels, only what users clicked. ``evaluate`` computes
click metrics (:mod:`evaltool.clicks.metrics`) with the impressions and queries behind
each and a bootstrap interval (:mod:`evaltool.clicks.stats`); ``click_judgments`` scores
every (query, document) with a click model and grades it (:mod:`evaltool.clicks.models`),
so any evaltool measure can run on click-derived qrels. Logs are read by
:mod:`evaltool.io.clicks`.

Click metrics alone are noisy at small samples (Radlinski, Kurup & Joachims, CIKM 2008),
hence the counts and intervals beside every value.
"""

from evaltool.clicks.evaluate import evaluate
from evaltool.clicks.models import ClickJudgments, click_judgments
from evaltool.io.clicks import ClickLog, read_click_log

__all__ = ["evaluate", "click_judgments", "ClickJudgments", "read_click_log", "ClickLog"]
