"""Masks from a criterion: what each selects, in spec files and from Python.

The oracle for each selection is a different algorithm than the library's:
a full `np.lexsort` by (key, position) where the library partitions, a
per-group Python sort where it sorts groups in NumPy. Criteria read the
values when the spec binds, once: values assigned later do not move them.
"""

import hashlib
import json

import hypothesis
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._frozen import _ranking


def _oracle_extreme(keys, count, largest):
  """The `count` largest (smallest) keys, ties by lowest position: sorted."""
  position = np.arange(keys.size)
  order = np.lexsort((position, -keys if largest else keys)) if (
      keys.dtype.kind == "f") else sorted(
          range(keys.size), key=lambda i: ((-int(keys[i]) if largest
                                            else int(keys[i])), i))
  mask = np.zeros(keys.size, bool)
  mask[np.asarray(order[:count], dtype=np.int64)] = True
  return mask


def _magnitude(values):
  keys = np.abs(values.astype(np.float64)).reshape(-1)
  keys[np.isnan(keys)] = np.inf
  return keys


def _count(fraction, size):
  return min(size, max(1, int(np.floor(fraction * size + 0.5))))


FLOATS = hnp.arrays(
    np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
    elements=st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0,
                              float("nan"), float("inf")]))


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(FLOATS, st.sampled_from([0.01, 0.25, 0.5, 0.9, 1.0]),
                  st.booleans())
def test_top_and_bottom_fraction_match_a_full_sort(values, fraction, largest):
  criterion = (tfpartial.largest(fraction) if largest
               else tfpartial.smallest(fraction))
  v = tf.Variable(values, name="w")
  selected = ~tfpartial.train_only(v, criterion).frozen_mask(v)
  expected = _oracle_extreme(_magnitude(values), _count(fraction, values.size),
                             largest)
  np.testing.assert_array_equal(selected.reshape(-1), expected)


def test_top_k_breaks_ties_by_lowest_flat_position():
  v = tf.Variable([[1.0, 3.0, -3.0], [3.0, 0.0, 3.0]], name="w")
  selected = tfpartial.freeze(v, tfpartial.largest(k=3)).frozen_mask(v)
  np.testing.assert_array_equal(selected, [[False, True, True],
                                           [True, False, False]])


def test_integers_rank_by_exact_magnitude():
  low = np.iinfo(np.int64).min
  values = np.array([low + 1, low, 2**62, -(2**62), 5], np.int64)
  keys = _ranking.magnitude_keys(values)
  assert keys.dtype == np.uint64
  np.testing.assert_array_equal(
      _ranking.extreme(keys, 2, largest=True), [True, True, False, False, False])
  np.testing.assert_array_equal(
      _ranking.extreme(keys, 1, largest=False), [False] * 4 + [True])


def test_zeros_selects_both_signs_and_nothing_else():
  v = tf.Variable([0.0, -0.0, 1e-45, np.nan, -1.0], name="w")
  np.testing.assert_array_equal(
      tfpartial.freeze(v, tfpartial.zeros()).frozen_mask(v),
      [True, True, False, False, False])


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(st.integers(1, 3), st.sampled_from([(1, 2), (2, 4), (1, 4),
                                                     (3, 3)]),
                  st.data())
def test_n_of_m_matches_a_per_group_sort(rows, n_m, data):
  n, m = n_m
  axis = data.draw(st.sampled_from([0, 1, -1]))
  shape = [rows * m, 2 * m] if axis == 0 else [rows, 2 * m]
  values = data.draw(hnp.arrays(np.float32, shape, elements=st.sampled_from(
      [0.0, -0.0, 1.0, -1.0, 3.0, float("nan")])))
  v = tf.Variable(values, name="w")
  selected = ~tfpartial.train_only(v, tfpartial.n_of_m(n, m, axis=axis)
                                   ).frozen_mask(v)
  expected = np.zeros(values.shape, bool)
  moved = np.moveaxis(values, axis, -1)
  chosen = np.moveaxis(expected, axis, -1)  # A view: writes go to expected.
  for index in np.ndindex(moved.shape[:-1]):
    for start in range(0, moved.shape[-1], m):
      group = list(range(start, start + m))
      keys = _magnitude(moved[index][group])
      best = sorted(range(m), key=lambda i: (-keys[i], i))[:n]
      for i in best:
        chosen[index + (start + i,)] = True
  np.testing.assert_array_equal(selected, expected)
  assert (selected.sum(axis=axis) == shape[axis] // m * n).all()


def test_random_subset_is_splitmix64_of_a_sha256_key():
  # SplitMix64's published first output for seed 0.
  assert int(_ranking.random_keys_from(0, 1)[0]) == 0xE220A8397B1DCDAF
  text = "tfpartial.random\x007\x003,4\x00dense/kernel"
  key = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
  assert _ranking.random_key(7, (3, 4), "dense/kernel") == key
  keys = _ranking.random_keys(7, (3, 4), "dense/kernel")
  v = tf.Variable(tf.zeros([3, 4]), name="dense/kernel")
  selected = ~tfpartial.train_only(
      v, tfpartial.random_subset(0.25, seed=7)).frozen_mask(v)
  np.testing.assert_array_equal(selected.reshape(-1),
                                _oracle_extreme(keys, 3, largest=False))


def test_random_subset_depends_on_seed_shape_and_name_only():
  def chosen(name, shape, seed, value=0.0):
    v = tf.Variable(tf.fill(shape, value), name=name)
    return ~tfpartial.train_only(
        v, tfpartial.random_subset(0.1, seed)).frozen_mask(v)
  first = chosen("a", [50, 40], 3)
  assert first.sum() == 200
  np.testing.assert_array_equal(first, chosen("a", [50, 40], 3, value=5.0))
  assert not np.array_equal(first, chosen("a", [50, 40], 4))
  assert not np.array_equal(first, chosen("b", [50, 40], 3))
  assert not np.array_equal(first.reshape(-1),
                            chosen("a", [40, 50], 3).reshape(-1))


def test_fraction_counts_round_half_up_and_select_at_least_one():
  assert [_ranking.count_of(f, 10) for f in (0.04, 0.05, 0.15, 0.25, 1.0)] == [
      1, 1, 2, 3, 10]
  assert _ranking.count_of(0.29, 100) == 29  # 28.999999999999996 as a float.


def test_across_ranks_every_variable_together_ordered_by_name():
  b = tf.Variable([5.0, 9.0, 5.0], name="b")
  a = tf.Variable([[9.0, 1.0], [5.0, 0.0]], name="a")
  spec = tfpartial.freeze_across([b, a], tfpartial.largest(k=4))
  # 9, 9, then two of the three 5s: `a` before `b` by name, then position.
  np.testing.assert_array_equal(spec.frozen_mask(a), [[True, False],
                                                      [True, False]])
  np.testing.assert_array_equal(spec.frozen_mask(b), [True, True, False])


def test_values_assigned_later_do_not_move_a_criterion():
  v = tf.Variable([0.0, 1.0, 0.0, 2.0], name="w")
  spec = tfpartial.freeze(v, tfpartial.zeros())
  v.assign([3.0, 0.0, 0.0, 0.0])
  np.testing.assert_array_equal(spec.frozen_mask(v),
                                [True, False, True, False])


# --- Spec files ---------------------------------------------------------

CRITERIA = {
    "zero": ({"where": "zero"}, tfpartial.zeros()),
    "top": ({"top": 0.25, "by": "magnitude"}, tfpartial.largest(0.25)),
    "bottom_k": ({"bottom_k": 5, "by": "magnitude"},
                 tfpartial.smallest(k=5)),
    "n_m": ({"n_m": [2, 4], "axis": -1}, tfpartial.n_of_m(2, 4)),
    "random": ({"random": 0.3, "seed": 11},
               tfpartial.random_subset(0.3, seed=11)),
}


def _kernel(name="dense/kernel", shape=(6, 8), seed=0):
  values = np.random.default_rng(seed).normal(size=shape).astype(np.float32)
  values[values < -0.8] = 0.0
  return tf.Variable(values, name=name)


@pytest.mark.parametrize("kind", ["freeze", "train_only"])
@pytest.mark.parametrize("name", sorted(CRITERIA))
def test_a_spec_file_criterion_is_the_python_one_and_written_as_is(kind, name):
  written, criterion = CRITERIA[name]
  v = _kernel()
  loaded = tfpartial.load_spec(json.dumps({"dense/kernel": {kind: written}}),
                               [v])
  made = getattr(tfpartial, kind)(v, criterion)
  assert loaded == made
  for spec in (loaded, made):
    entry = json.loads(spec.to_json())["dense/kernel"]
    assert entry == {kind: written, "shape": [6, 8]}
  assert tfpartial.load_spec(loaded.to_json(), [v]) == loaded


def test_an_entry_wide_criterion_is_written_with_its_group_and_read_back():
  kernels = [_kernel(f"layer_{i}/kernel", (4, 5), seed=i) for i in range(3)]
  text = json.dumps({"layer_*/kernel": {
      "train_only": {"top": 0.1, "by": "magnitude", "scope": "entry"}}})
  spec = tfpartial.load_spec(text, kernels)
  values = np.concatenate([k.numpy().reshape(-1) for k in kernels])
  expected = _oracle_extreme(_magnitude(values), 6, largest=True)
  trained = np.concatenate([~spec.frozen_mask(k).reshape(-1) for k in kernels])
  np.testing.assert_array_equal(trained, expected)
  written = json.loads(spec.to_json())
  assert written["layer_1/kernel"]["train_only"] == {
      "top": 0.1, "by": "magnitude", "scope": "entry", "group": "layer_*/kernel"}
  assert tfpartial.load_spec(spec.to_json(), kernels) == spec
  # The same from Python.
  assert tfpartial.train_only_across(kernels, tfpartial.largest(0.1)) == spec


def test_a_union_writes_the_elements_where_a_criterion_is_not_all():
  kernels = [_kernel(f"k{i}", (4, 4), seed=i) for i in range(2)]
  across = tfpartial.freeze_across(kernels, tfpartial.largest(k=3))
  spec = across | tfpartial.freeze(kernels[0], 0)
  written = json.loads(spec.to_json())
  # k0 is no longer the criterion alone, so neither is its group: k1
  # alone would rank differently when read back.
  assert all(isinstance(e["freeze"], str) for e in written.values()), written
  assert tfpartial.load_spec(spec.to_json(), kernels) == spec
  same = across | across
  assert json.loads(same.to_json()) == json.loads(across.to_json())


def test_two_groups_of_one_label_keep_apart_when_written():
  a = [_kernel(f"a{i}", (3, 3), seed=i) for i in range(2)]
  b = [_kernel(f"b{i}", (3, 3), seed=5 + i) for i in range(2)]
  criterion = tfpartial.largest(k=2)
  spec = (tfpartial.freeze_across(a, criterion.__class__(
      **{**criterion.__dict__, "group": "g"}))
          | tfpartial.freeze_across(b, criterion.__class__(
              **{**criterion.__dict__, "group": "g"})))
  groups = {e["freeze"]["group"] for e in json.loads(spec.to_json()).values()}
  assert groups == {"g", "g #2"}
  assert tfpartial.load_spec(spec.to_json(), a + b) == spec


def test_a_late_spec_computes_its_criterion_at_the_first_step_in_fit():
  import keras  # pylint: disable=g-import-not-at-top
  if not helpers.KERAS_3:
    pytest.skip("Keras 3 model.fit; Keras 2's in test_tf_keras")
  spec = tfpartial.load_spec(
      '{"**/kernel": {"freeze": {"where": "zero"}}}')
  keras.utils.set_random_seed(0)
  model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
  kernel = model.layers[0].kernel
  start = kernel.numpy()
  start[:, 0] = [0.0, -0.0, 0.0, -0.0]
  kernel.assign(start)
  model.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.1)), loss="mse")
  model.fit(np.ones((8, 4), np.float32), np.ones((8, 3), np.float32),
            epochs=2, verbose=0)
  helpers.assert_same_bits(kernel.numpy()[:, 0], start[:, 0], "zeros")
  assert (kernel.numpy()[:, 1:] != start[:, 1:]).all()


def test_a_criterion_in_a_tf1_graph_reads_the_default_session(graph_mode):
  with graph_mode.runner() as runner:
    v = runner.variable([[0.0, 2.0], [-0.0, 1.0]], "w")
    runner.value(v)  # Initialized.
    spec = tfpartial.freeze(v, tfpartial.zeros())
    np.testing.assert_array_equal(spec.frozen_mask(v), [[True, False],
                                                        [True, False]])
  with tf.Graph().as_default():
    w = tf.compat.v1.Variable([0.0, 1.0], name="w")
    with pytest.raises(ValueError, match="only in a session"):
      tfpartial.freeze(w, tfpartial.zeros())
    with tf.compat.v1.Session():
      with pytest.raises(ValueError, match="not initialized or restored"):
        tfpartial.freeze(w, tfpartial.zeros())


# --- Errors ---------------------------------------------------------------

@pytest.mark.parametrize("criterion, message", [
    ({"top": 1.5}, r"'top' must be a fraction F with 0 < F <= 1; got 1.5"),
    ({"top": 0}, r"0 < F <= 1; got 0"),
    ({"top": True}, r"got True"),
    ({"random": 0.1}, r"needs \"seed\", an integer"),
    ({"random": 0.1, "seed": -1}, r"got -1"),
    ({"n_m": [4, 2]}, r"1 <= N <= M; got \[4, 2\]"),
    ({"n_m": [2]}, r"\[N, M\], two integers"),
    ({"n_m": [2, 4], "axis": "0"}, r"\"axis\" must be an integer"),
    ({"where": "nonzero"}, r"\"where\" must be \"zero\""),
    ({"top": 0.1, "by": "value"}, r"\"by\" must be \"magnitude\""),
    ({"top": 0.1, "sorted": True}, r"unknown key\(s\) \['sorted'\]"),
    ({"top": 0.1, "bottom": 0.1}, r"exactly one of"),
    ({"top_k": 2.5}, r"'top_k' must be a count of elements"),
    ({"top": 0.1, "scope": "model"}, r"\"scope\" must be"),
])
def test_a_bad_criterion_names_the_entry(criterion, message):
  text = json.dumps({"enc/*/kernel": {"freeze": criterion}})
  with pytest.raises(ValueError, match=r"^'enc/\*/kernel' in the spec: .*"
                     + message):
    tfpartial.load_spec(text)


@pytest.mark.parametrize("criterion, message", [
    ({"n_m": [2, 4], "axis": 0}, r"needs M = 4 to divide axis 0 of variable "
     r"'enc/0/kernel' of shape \(6, 8\), of length 6"),
    ({"n_m": [2, 4], "axis": 2}, r"\"axis\" 2 is out of range for variable "
     r"'enc/0/kernel' of shape \(6, 8\)"),
    ({"top_k": 49}, r"'top_k' 49 asks for more elements than variable "
     r"'enc/0/kernel' of shape \(6, 8\) has \(48\)"),
    ({"top_k": 97, "scope": "entry"}, r"than variable 'enc/0/kernel' of "
     r"shape \(6, 8\) has across its entry \(96\)"),
])
def test_a_criterion_that_does_not_fit_names_entry_variable_and_shape(
    criterion, message):
  kernels = [_kernel("enc/0/kernel"), _kernel("enc/1/kernel", seed=1)]
  before = [k.numpy() for k in kernels]
  text = json.dumps({"enc/*/kernel": {"train_only": criterion}})
  with pytest.raises(ValueError, match=r"^'enc/\*/kernel' in the spec: .*"
                     + message):
    tfpartial.load_spec(text, kernels)
  for kernel, value in zip(kernels, before):
    helpers.assert_same_bits(kernel.numpy(), value)


def test_python_criteria_refuse_bad_arguments():
  with pytest.raises(ValueError, match="`largest` takes `fraction` or `k`"):
    tfpartial.largest()
  with pytest.raises(ValueError, match="`smallest` takes `fraction` or `k`"):
    tfpartial.smallest(0.1, k=3)
  with pytest.raises(ValueError, match=r"`n_of_m`: \"n_m\" \[N, M\] needs"):
    tfpartial.n_of_m(3, 2)
  with pytest.raises(ValueError, match=r"`random_subset`: 'random' must be"):
    tfpartial.random_subset(2.0, seed=0)
  v = tf.Variable(tf.zeros([3, 5]), name="w")
  with pytest.raises(ValueError, match=r"`index`: \"n_m\" \[2, 4\] needs M = "
                     r"4 to divide axis -1 of variable 'w' of shape \(3, 5\)"):
    tfpartial.train_only(v, tfpartial.n_of_m(2, 4))
  names = tf.Variable(["a", "b"], name="names")
  with pytest.raises(TypeError, match=r"where zero reads variable 'names' of "
                     r"shape \(2,\)'s values, but values of dtype object"):
    tfpartial.freeze(names, tfpartial.zeros())
  with pytest.raises(TypeError, match="`criterion` must be a criterion"):
    tfpartial.freeze_across([v], np.s_[0])
  with pytest.raises(ValueError, match="each by a checkpoint name of its own"):
    tfpartial.freeze_across([v, tf.Variable(tf.zeros([2]), name="w")],
                            tfpartial.largest(k=1))


def test_a_compact_freeze_of_a_criterion_is_written_and_read_back():
  v = _kernel()
  spec = tfpartial.freeze_across([v], tfpartial.zeros(), compact=True)
  assert helpers.selection_of(spec, v).compact
  entry = json.loads(spec.to_json())["dense/kernel"]
  assert entry == {"freeze": {"where": "zero"}, "shape": [6, 8],
                   "compact": True}
  assert tfpartial.load_spec(spec.to_json(), [v]) == spec


@helpers.needs_keras_3
def test_a_saved_wrapped_optimizer_keeps_the_elements_not_the_criterion(
    tmp_path):
  import keras  # pylint: disable=g-import-not-at-top
  keras.utils.set_random_seed(1)
  model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5)])
  kernel = model.layers[0].kernel
  spec = tfpartial.train_only(kernel, tfpartial.largest(k=3))
  model.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.5)), loss="mse")
  model.fit(np.ones((4, 4), np.float32), np.zeros((4, 5), np.float32),
            epochs=3, verbose=0)
  model.save(tmp_path / "model.keras")
  loaded = keras.models.load_model(tmp_path / "model.keras")
  loaded_kernel = loaded.layers[0].kernel
  # Trained, the largest 3 are other elements now; the freeze is not.
  assert not np.array_equal(
      tfpartial.train_only(loaded_kernel, tfpartial.largest(k=3)
                           ).frozen_mask(loaded_kernel),
      spec.frozen_mask(kernel))
  np.testing.assert_array_equal(
      tfpartial.spec_of(loaded).frozen_mask(loaded_kernel),
      spec.frozen_mask(kernel))


def test_a_partitioned_table_is_ranked_in_its_checkpoint_rows():
  values = np.array([[0.0, 5.0], [1.0, -0.0], [9.0, 2.0], [0.0, 3.0],
                     [4.0, 8.0], [7.0, 0.0]], np.float32)
  with tf.Graph().as_default():
    table = _partitioned(values)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      for i, part in enumerate(table):  # 3 parts of 2 rows.
        session.run(part.assign(values[2 * i:2 * i + 2]))
      zeros = tfpartial.freeze(table, tfpartial.zeros())
      top = tfpartial.train_only(table, tfpartial.largest(k=3),
                                 partition_strategy="mod")
      np.testing.assert_array_equal(zeros.frozen_mask(table), values == 0)
      # By value, in the checkpoint's rows: "mod" changes nothing.
      np.testing.assert_array_equal(~top.frozen_mask(table),
                                    np.isin(values, [9.0, 8.0, 7.0]))
      assert json.loads(top.to_json())["emb"]["train_only"] == {
          "top_k": 3, "by": "magnitude"}


def _partitioned(values):
  """A TF1 partitioned variable of 3 parts of `values`' shape."""
  return tf.compat.v1.get_variable(
      "emb", shape=values.shape, initializer=tf.compat.v1.zeros_initializer(),
      partitioner=tf.compat.v1.fixed_size_partitioner(3))
