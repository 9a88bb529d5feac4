"""Fixtures shared by the tests: `mode` runs a test in each execution mode."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # pylint: disable=g-import-not-at-top

import helpers  # pylint: disable=g-import-not-at-top

# Imported only by the child process of test_tf1_behavior.py: importing it
# here would switch this whole process to TF1 behaviour. The *_child.py
# scripts run in child processes of their tests, never imported here.
collect_ignore = ["tf1_behavior_plugin.py"]
collect_ignore_glob = ["*_child.py"]


@pytest.fixture(params=helpers.ALL_MODES, ids=lambda mode: mode.name)
def mode(request) -> helpers.Mode:
  """Every mode: TF1 graph (resource and ref variables), eager, tf.function, XLA."""
  return request.param


@pytest.fixture(params=helpers.EXACT_MODES, ids=lambda mode: mode.name)
def exact_mode(request) -> helpers.Mode:
  """The modes guarantee 3 holds bit for bit: all but XLA."""
  return request.param


@pytest.fixture(params=helpers.GRAPH_MODES, ids=lambda mode: mode.name)
def graph_mode(request) -> helpers.Mode:
  """A TF1 graph, with resource and with ref variables."""
  return request.param


@pytest.fixture(params=helpers.TF2_MODES, ids=lambda mode: mode.name)
def tf2_mode(request) -> helpers.Mode:
  """TF2 code: eager and in a `tf.function`."""
  return request.param


@pytest.fixture(params=helpers.KERAS_MODES, ids=lambda mode: mode.name)
def keras_mode(request) -> helpers.KerasMode:
  """Every way of training a Keras model (`helpers.KerasMode`)."""
  return request.param


@pytest.fixture(params=helpers.KERAS_LOOP_AND_FIT, ids=lambda mode: mode.name)
def keras_exact_mode(request) -> helpers.KerasMode:
  """Every way of training a Keras model but XLA in a custom loop."""
  return request.param


@pytest.fixture(scope="session")
def compiled_kernel():
  """The path of the kernel this process loaded. Skips where there is no
  C++ compiler; wherever there is one, the kernel must build and load
  (from the user's cache, which must be private: see `_kernel_cache`)."""
  from tfpartial._kernels import _native  # pylint: disable=g-import-not-at-top
  if _native.compiler() is None:
    pytest.skip("no C++ compiler ($CXX or c++): tfpartial runs without its "
                "kernel here, and every other test covers that")
  assert _native.library() is not None, (
      f"the compiled kernel did not load: {_native.reason()}")
  return _native.loaded_from()
