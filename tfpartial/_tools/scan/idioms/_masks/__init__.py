"""Masks of weights: fixed 0/1 masks in the forward pass, how they are
made, pruning masks, rows replaced by constants."""
