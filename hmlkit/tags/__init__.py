"""Tag statistics: cross-layer correlations and soft tags (Eq. 6-9), hierarchy estimation (Sec 4.1)."""
from .correlations import below_layer_mask, cooccurrence, mutual_exclusion, soft_tag_confidences
from .hierarchy import default_n_topics, estimate_layers

__all__ = [
    "cooccurrence",
    "mutual_exclusion",
    "soft_tag_confidences",
    "below_layer_mask",
    "estimate_layers",
    "default_n_topics",
]
