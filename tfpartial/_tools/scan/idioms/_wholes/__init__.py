"""Helpers of the idioms: whether a list is a part of a model or all of it, and
whether the other part is trained, restored or left out on purpose."""
