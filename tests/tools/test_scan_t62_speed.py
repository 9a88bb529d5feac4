"""`tfpartial scan`'s cost on real code (round forty-five, corpus speed):
the filler of a scope (`_scopes._Filler`) read, for each `if` of a loop's
block, the rest of the block again: whether the statements after it add
on every path to the lists its body adds to (`_scopes._continued`).
A block of n such `if`s cost n * n statement walks. Each block is now
read once, from its end (what each statement adds on every path, reset
where a `continue`, `break`, `return` or `raise` stops the paths), and
each `if` asks only about the lists its body adds to. What the scan
finds is unchanged: the probes below (each a real choice that must stay
found, or a look-alike where every element goes in that must stay
silent) give what they gave before the change."""

import pytest

import scanned

_HEAD = ("import tensorflow as tf\n\ndef train(loss, opt, flag):\n"
         "  out = []\n  for v in tf.trainable_variables():\n")
_TAIL = "  return opt.minimize(loss, var_list=out)\n"

_PROBES = {
    # Every variable goes in (some twice): no choice.
    "later_always": ("    if 'offset' in v.name:\n      out.append(v)\n"
                     "    out.append(v)\n", []),
    # A `continue` before the later `append`: the paths stop there.
    "later_after_continue": (
        "    if 'offset' in v.name:\n      out.append(v)\n    continue\n"
        "    out.append(v)\n", [("var-list-filter", 7)]),
    # A `break` inside an `if` stops only that branch's paths.
    "later_after_break_if": (
        "    if 'offset' in v.name:\n      out.append(v)\n    if flag:\n"
        "      break\n    out.append(v)\n", []),
    # Added later on one path only: a choice.
    "later_one_branch": (
        "    if 'offset' in v.name:\n      out.append(v)\n    if flag:\n"
        "      out.append(v)\n", [("var-list-filter", 7)]),
    # Added later on both paths (`+=` is an addition too).
    "later_both_branches": (
        "    if 'offset' in v.name:\n      out.append(v)\n    if flag:\n"
        "      out.append(v)\n    else:\n      out += [v]\n", []),
    # The later addition is to another list: a choice.
    "later_other_list": (
        "    if 'offset' in v.name:\n      out.append(v)\n    rest = []\n"
        "    rest.append(v)\n", [("var-list-filter", 7)]),
    # An `if` ending in `continue`, the rest adding to the same list.
    "skip_then_add": (
        "    if 'norm' in v.name:\n      out.append(v)\n      continue\n"
        "    out.append(v)\n", []),
    # ... the rest adding to another list: a choice.
    "skip_then_other": (
        "    if 'norm' in v.name:\n      out.append(v)\n      continue\n"
        "    other = [v]\n    other.append(v)\n", [("var-list-filter", 7)]),
    # A bare skip before the addition: a choice.
    "bare_skip": ("    if 'emb' in v.name:\n      continue\n"
                  "    out.append(v)\n", [("var-list-filter", 8)]),
    "two_bare_skips": (
        "    if 'emb' in v.name:\n      continue\n    if 'bias' in v.name:\n"
        "      print(v)\n      continue\n    out.append(v)\n",
        [("var-list-filter", 11)]),
    # The same inside a `with` of the loop.
    "nested_with": (
        "    with tf.device('/cpu:0'):\n      if 'offset' in v.name:\n"
        "        out.append(v)\n      out.append(v)\n", []),
    "nested_with_other_list": (
        "    with tf.device('/cpu:0'):\n      if 'offset' in v.name:\n"
        "        out.append(v)\n      rest = []\n      rest.extend([v])\n",
        [("var-list-filter", 8)]),
}


@pytest.mark.parametrize("name", sorted(_PROBES))
def test_what_a_loops_ifs_choose_is_unchanged(name):
  body, expected = _PROBES[name]
  assert scanned.found(_HEAD + body + _TAIL) == expected


def _ifs_then_added(n, skip=False):
  """A loop of `n` name tests, each adding the variable to `out` (and
  skipping the rest, with `skip`), then adding every variable: no
  choice, and n `if`s each followed by the rest of the block."""
  tests = "".join(
      f"    if 'part{i}' in v.name:\n      out.append(v)\n"
      + ("      continue\n" if skip else "") for i in range(n))
  return _HEAD + tests + "    out.append(v)\n" + _TAIL


def _ratio(make, where):
  small, large = (scanned.scan_work(make(n), where) for n in (10, 40))
  return large / max(small, 1), (small, large)


def test_the_ifs_of_a_long_loop_stay_silent():
  assert scanned.found(_ifs_then_added(30)) == []
  assert scanned.found(_ifs_then_added(30, skip=True)) == []


def test_each_if_of_a_block_does_not_read_the_rest_again():
  # Was quadratic: each `if` read every statement after it (x13 for 4
  # times the `if`s at de1ba36); now each statement is read once (x4).
  ratio, work = _ratio(_ifs_then_added, "_every_path.py")
  assert ratio <= 6, work

