"""Helpers of the idioms: where a step's variable list comes from: a flag, a
helper, a parameter, a kept or outer list, a hand-written list."""
