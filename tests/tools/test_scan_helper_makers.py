"""`tfpartial scan` takes a project helper for a maker of the kernel a
`tf.nn.conv2d` convolves with only when the helper's body (followed
through the module's helpers, to a bounded depth) calls a real variable
maker (`tf.get_variable`, `tf.Variable`, TF1's and slim's layer
functions, Keras layers): a helper that only reshapes, flips or logs the
kernel it is given builds no layer, so the scope around the convolution
is no part left out; a helper that wraps `tf.get_variable` still makes
one, and the scope it is opened in is still found. A helper not of the
module (imported) is read as it was: it may make one. Each source is
synthetic, in the shape of part thirty-four's deep-optics script."""

import textwrap

import pytest
import scanned
import test_scan_fp_data_scopes

_TWO_PARTS = test_scan_fp_data_scopes._TWO_PARTS.replace(
    "    import tensorflow as tf\n\n",
    "    import logging\n    import tensorflow as tf\n    {imports}\n\n"
    "    {helpers}\n", 1).replace(
        "            blur_r = tf.nn.conv2d(image, psfs,",
        "            kernel = {kernel}\n"
        "            blur_r = tf.nn.conv2d(image, kernel,")

_FLIPS = """\
    def flip(psfs):
        logging.info("flipping %s", psfs.name)
        print(psfs.shape)
        return tf.reverse(tf.reshape(psfs, [1, 1, 15, 1]), [0])
    """

_FLIPS_THROUGH = _FLIPS + """\


    def kernel_of(psfs, scale):
        return flip(psfs) * scale
    """

_WRAPS = """\
    def flip(psfs):
        w = tf.get_variable("w", [1, 1, 15, 1])
        return w * psfs
    """

_WRAPS_THROUGH = _WRAPS + """\


    def kernel_of(psfs, scale):
        return flip(psfs) * scale
    """

_LAYER = """\
    def flip(psfs):
        return tf.keras.layers.Dense(15)(psfs)
    """

_CYCLE = """\
    def flip(psfs, n=3):
        if n:
            return flip(tf.reverse(psfs, [0]), n - 1)
        return psfs
    """


def _text(helpers, kernel, imports=""):
  helpers = textwrap.indent(textwrap.dedent(helpers), "    ").strip()
  return _TWO_PARTS.format(helpers=helpers, kernel=kernel, imports=imports)


def _found(helpers, kernel, imports=""):
  return scanned.found(_text(helpers, kernel, imports))


def _at(helpers, kernel, imports=""):
  """The finding at the optical step, wherever it stands."""
  lines = textwrap.dedent(_text(helpers, kernel, imports)).splitlines()
  line = next(i for i, text in enumerate(lines, 1)
              if text.startswith("op_optical"))
  return [("var-list-filter", line)]


@pytest.mark.parametrize("helpers, kernel", [
    (_FLIPS, "flip(psfs)"),
    (_FLIPS_THROUGH, "kernel_of(psfs, 2.0)"),
    (_CYCLE, "flip(psfs)"),
    ("", "tf.reshape(psfs, [1, 1, 15, 1])"),  # No helper at all.
])
def test_a_helper_that_only_reshapes_or_logs_makes_no_layer(helpers, kernel):
  assert _found(helpers, kernel) == []


@pytest.mark.parametrize("helpers, kernel", [
    (_WRAPS, "flip(psfs)"),
    (_WRAPS_THROUGH, "kernel_of(psfs, 2.0)"),
    (_LAYER, "flip(psfs)"),
])
def test_a_helper_that_makes_a_variable_is_a_maker(helpers, kernel):
  assert _found(helpers, kernel) == _at(helpers, kernel)


def test_an_imported_helper_may_make_one_as_before():
  imported = "from optics.kernels import flip"
  assert _found("", "flip(psfs)", imported) == _at("", "flip(psfs)", imported)
