"""Whether a list is a part of a model or all of it: the gates a filter
passes to be a finding (`_filter_gates`, `_step_gates`), a filter naming
the whole model, its other half trained, restored or left out on
purpose."""
