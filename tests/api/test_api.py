"""The public surface is the contract's, and nothing private leaks."""

import types

import tfpartial

CONTRACT = {"FreezeSpec", "freeze", "load_spec", "spec_of", "train_only",
            # Masks from a criterion (DESIGN.md; the names are ours).
            "zeros", "largest", "smallest", "n_of_m", "random_subset",
            "freeze_across", "train_only_across", "keep_pruned"}


def test_all_is_the_contract():
  assert set(tfpartial.__all__) == CONTRACT
  for name in tfpartial.__all__:
    assert getattr(tfpartial, name).__module__.startswith("tfpartial.")


def test_nothing_private_leaks():
  public = {name for name in dir(tfpartial) if not name.startswith("_")}
  modules = {name for name in public
             if isinstance(getattr(tfpartial, name), types.ModuleType)}
  assert public - modules == CONTRACT
  assert modules <= {"cli"}, modules


def test_version_is_a_string():
  assert isinstance(tfpartial.__version__, str) and tfpartial.__version__


def test_spec_methods_are_the_contract():
  methods = {name for name in dir(tfpartial.FreezeSpec)
             if not name.startswith("_")}
  assert methods == {"variables", "frozen_mask", "mask", "mask_gradients",
                     "apply_gradients", "minimize", "wrap", "to_json"}
