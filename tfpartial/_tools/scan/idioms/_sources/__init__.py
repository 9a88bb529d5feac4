"""Where a step's variable list comes from: the steps a scan finds and the
list each receives (`_train_step`, `_steps`), and the forms a list takes:
a flag, a helper, a parameter, a kept or outer list, a list written by
hand, the groups one loop or helper splits the variables into."""
