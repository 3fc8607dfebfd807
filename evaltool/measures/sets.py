"""Named sets of measures: trec_eval's print order and nicknames, and each command's defaults.

Pure data, importable without numpy, so help texts are generated from it
(``evaltool compare --help`` says what ``compare`` computes by default because it reads
:data:`DEFAULT_SETS`). The kernels themselves are in the family modules beside this one.

>>> DEFAULT_SETS["compare"]
('map', 'ndcg_cut.10', 'P.10', 'recip_rank')
>>> described("bench")
'precision@3, precision@5, recall@10, mrr'
"""

from __future__ import annotations

#: trec_eval 10.0's order of computing and printing (its ``te_trec_measures[]``)
TREC_ORDER = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
)

#: trec_eval's nicknames, usable with ``-m`` (``-m official``)
NICKNAMES = {
    "official": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ),
    "set": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ),
    "all_trec": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ),
}

#: what each command computes when no ``-m`` is given (``-m`` spellings)
DEFAULT_SETS = {
    "eval": ("official",),
    "compare": ("map", "ndcg_cut.10", "P.10", "recip_rank"),
    "bench": ("precision@3", "precision@5", "recall@10", "mrr"),
    "suite": ("recip_rank", "ndcg_cut.10", "P.5"),  # the comparative report's, which --labels rates
}

#: the named-parameter measures (ir_measures' names and evaltool's own), in the order documented
NAMED_ORDER = (
    "P",
    "R",
    "AP",
    "RR",
    "nDCG",
    "DCG",
    "Rprec",
    "Bpref",
    "infAP",
    "Success",
    "SetP",
    "SetR",
    "SetF",
    "SetAP",
    "IPrec",
    "NumQ",
    "NumRet",
    "NumRel",
    "Judged",
    "ERR",
    "RBP",
    "Hits",
    "FirstRelPos",
    "BPM",
    "INST",
    "INSQ",
    "SDCG",
    "NERR8",
    "NERR9",
    "NERR10",
    "NERR11",
    "Compat",
    "Accuracy",
    "ARP",
    "OPA",
    # diversity (intent-aware), on subtopic qrels
    "alpha_nDCG",
    "alpha_DCG",
    "ERR_IA",
    "nERR_IA",
    "NRBP",
    "nNRBP",
    "P_IA",
    "AP_IA",
    "StRecall",
)


#: the family module (``evaltool.measures.<family>``) that declares each measure, trec_eval's
#: names and the named-parameter ones (``P``, ``Rprec`` and ``infAP`` are both, in one module):
#: a request imports only the families it names. Checked against the registry whenever
#: every family is loaded (:mod:`evaltool.measures`), so it cannot drift from the declarations.
FAMILIES = {
    "ap": ("map", "gm_map", "bpref", "infAP", "gm_bpref", "binG", "map_cut", "yaap", "AP", "Bpref"),
    "counts": ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "NumQ", "NumRet", "NumRel"),
    "cwl": ("BPM", "INST", "INSQ", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11"),
    "dcg": ("ndcg_cut", "nDCG", "DCG"),
    "diversity": ("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP", "P_IA", "AP_IA", "StRecall"),
    "err": ("ERR",),
    "gain": ("G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "rbp", "rbp_resid", "RBP"),
    "iprec": ("iprec_at_recall", "11pt_avg", "IPrec"),
    "ordering": ("Compat", "Accuracy", "ARP", "OPA"),
    "precision": (
        "Rprec",
        "P",
        "recall",
        "Rprec_mult",
        "utility",
        "relative_P",
        "success",
        "set_P",
        "set_relative_P",
        "set_recall",
        "set_map",
        "set_F",
        "unj",
        "R",
        "Success",
        "SetP",
        "SetR",
        "SetF",
        "SetAP",
        "Judged",
        "Hits",
    ),
    "rr": ("recip_rank", "RR", "FirstRelPos"),
    "strings": ("runid", "relstring"),
}


def described(command: str) -> str:
    """The default set of ``command`` as help texts write it."""
    return ", ".join(DEFAULT_SETS[command])
