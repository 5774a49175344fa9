# Config defaults and input functions of the multi-class family (multiclass.smk).
if "multiclass" not in config:  # a config without the block: defaults, disabled
    config["multiclass"] = {"enabled": False}
    _check_against(SCHEMAS / "multiclass.schema.yaml", config["multiclass"], "multiclass")
MC = config["multiclass"]
MC_USER = user_datasets("multiclass", MC["datasets"]) if enabled("multiclass") else []
MC_DATASETS = "|".join(["digits", "isolet1", "isolet", *MC_USER])


def mc_fixed_split(dataset):
    """isolet's UCI split, or a user data set given as train: + test:."""
    return dataset == "isolet" or (dataset in MC_USER and USER_DATASETS[dataset]["path"] is None)


def mc_trials(dataset):
    """Trials of a dataset: multiclass.trials (null: one K-fold partition, `folds`
    trials); a fixed split (isolet's UCI one, a user's train/test): one."""
    return 1 if mc_fixed_split(dataset) else (MC["trials"] or MC["folds"])


def mc_source(dataset):
    """The caption's account of a user data set (None for the paper's data)."""
    if dataset not in MC_USER:
        return None
    return {"text": user_caption(dataset), "fixed": mc_fixed_split(dataset)}


def mc_chunks(dataset):
    return trial_chunks(mc_trials(dataset), MC["trials_per_job"])


def mc_fit_params(method):
    """What a fit of `method` reads from the multiclass block (not the cost block, the
    other methods' grids or the trial count); LSPC-new's also its variant
    (multiclass.lspc_new)."""
    grid = {"klr_pairwise": "lams", "klr_ovr": "lams", "lspc_new": "lspc_lams", "svc": "svc_Cs"}
    cfg = {"sigma_factors": MC["sigma_factors"], "cv": MC["cv"], "grid": MC[grid[method]]}
    return cfg | ({"lspc_new": MC["lspc_new"]} if method == "lspc_new" else {})


ISOLET_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/isolet/"

# download rules are defined while the workflow is parsed, so only when isolet is used
ISOLET_FILES = {}
if "isolet" in MC["datasets"] or MC["cost"]["dataset"] == "isolet":
    ISOLET_FILES = {
        "train": download_file(
            "isolet/isolet1+2+3+4.data.Z",
            f"{ISOLET_URL}isolet1+2+3+4.data.Z",
            MC["isolet_sha256"]["train"],
        ),
        "test": download_file(
            "isolet/isolet5.data.Z", f"{ISOLET_URL}isolet5.data.Z", MC["isolet_sha256"]["test"]
        ),
    }


def multiclass_sources(wildcards):
    """Input files of one dataset: none for digits, the mirror's .mat, the UCI files, or
    the user's files."""
    if wildcards.dataset in MC_USER:
        return {"user": user_files(wildcards.dataset)}
    if wildcards.dataset == "isolet1":
        path = mirror_file("isolet/isolet.mat")
        if path is None:
            raise WorkflowError(
                "multiclass dataset isolet1 needs isolet/isolet.mat in the mirror "
                f"({config.get('mirror')}); use 'isolet' (downloads the UCI files) instead"
            )
        return {"mat": path}
    if wildcards.dataset == "isolet":
        if not ISOLET_FILES:
            raise WorkflowError("add isolet to multiclass.datasets to download the UCI files")
        return ISOLET_FILES
    return {}
