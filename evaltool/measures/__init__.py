"""The measure registry: every measure declared once, in trec_eval's output order.

``TREC_ORDER`` is the order in which trec_eval 10.0 computes and prints measures;
``NICKNAMES`` are its named sets. ``NAMED_ORDER`` lists the named-parameter measures
(ir_measures' names and evaltool's own) in the order ``evaltool measures`` documents
them; their aliases are declared on each measure. All of it is data; nothing else maps
names to kernels.
"""

from __future__ import annotations

from evaltool.measures import ap, counts, dcg, err, gain, iprec, precision, rr, strings  # noqa: F401  (registration)
from evaltool.measures.base import NAMED_REGISTRY, REGISTRY, Agg, Measure, Params, Request

TREC_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel",
    "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "yaap", "rbp", "rbp_resid", "unj",
)

NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "relstring",
                 "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
                 "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
}

if set(TREC_ORDER) != set(REGISTRY):
    raise RuntimeError(f"TREC_ORDER and the registry disagree: {set(TREC_ORDER) ^ set(REGISTRY)}")

MEASURES: dict[str, Measure] = {name: REGISTRY[name] for name in TREC_ORDER}

NAMED_ORDER = (
    "P", "R", "AP", "RR", "nDCG", "DCG", "Rprec", "Bpref", "infAP", "Success", "SetP", "SetR", "SetF", "SetAP",
    "IPrec", "NumQ", "NumRet", "NumRel", "Judged", "ERR", "RBP", "Hits", "FirstRelPos",
)

if set(NAMED_ORDER) != set(NAMED_REGISTRY):
    raise RuntimeError(f"NAMED_ORDER and the registry disagree: {set(NAMED_ORDER) ^ set(NAMED_REGISTRY)}")

NAMED_MEASURES: dict[str, Measure] = {name: NAMED_REGISTRY[name] for name in NAMED_ORDER}

__all__ = ["MEASURES", "NAMED_MEASURES", "NAMED_ORDER", "NICKNAMES", "TREC_ORDER", "Agg", "Measure", "Params",
           "Request"]
