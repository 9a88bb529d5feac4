"""`tfpartial bench`: the overhead of partial freezing, as ratios against
the same step without it. `_bench` runs the cases of `_cases`, `_steps`,
`_build` and `_memory`, timed by `_measure`.
"""
