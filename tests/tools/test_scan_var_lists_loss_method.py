"""`tfpartial scan`'s `var-list-filter` beside a perceptual loss built in
a method of its own: the step's function calls `self.loss_cal_all()`,
which runs a pretrained Keras application (`tf.keras.applications.
VGG16(input_tensor=...)`) on the model's output and on a slice of the
data (part 23's Super-SloMo); the filter leaving the application's
variables out is silent. The same application trained from scratch
(`weights=None`), run on two inputs of data, or whose features the
method does not return, is still found. Each source is synthetic."""

import pytest

import scanned

_MODEL = """\
    import tensorflow as tf


    class Slomo:
      def __init__(self, sess):
        self.imgs = tf.placeholder(tf.float32, [4, 64, 64, 9])
        self.frame0 = self.imgs[:, :, :, :3]
        self.frame1 = self.imgs[:, :, :, 3:6]
        with tf.variable_scope("first_unet"):
          flow = my_unet(self.frame0, 3)
        with tf.variable_scope("second_unet"):
          self.output = my_unet(flow, 3)
        self.l1_loss, self.contex_loss = self.loss_cal_all()
        self.loss = self.l1_loss + 0.005 * self.contex_loss
        t_vars = tf.trainable_variables()
        self.first_para = [v for v in t_vars if v.name.startswith("first")]
        self.sec_para = [v for v in t_vars if v.name.startswith("second")]
        self.train_op = tf.train.AdamOptimizer(1e-4).minimize(
            self.loss, var_list=self.first_para + self.sec_para)

      def loss_cal_all(self):
        with tf.variable_scope("VGG16"):
          made = tf.keras.applications.VGG16(
              include_top=False, input_tensor=%s%s).output
          truth = tf.keras.applications.VGG16(
              include_top=False, input_tensor=self.frame1%s).output
          contex_loss = tf.reduce_mean(tf.squared_difference(truth, made))
        l1_loss = tf.reduce_mean(tf.abs(self.output - self.frame1))
        return l1_loss, %s
    """


def _source(made="self.output", weights="", returned="contex_loss"):
  return _MODEL % (made, weights, weights, returned)


def _found(text):
  return [(idiom, line) for idiom, _, line in scanned.in_project(text)]


def test_a_pretrained_application_measuring_the_output_is_silent():
  assert _found(_source()) == []


FOUND = {
    # Trained from scratch: the application is a part of the model.
    "an application without pretrained weights": _source(
        weights=", weights=None"),
    # Both sides are data: a frozen backbone, not a measure of the model.
    "the application run on two inputs of data": _source(
        made="self.frame0"),
    # The method returns only the L1 loss: no network measures the loss.
    "the application's features not returned": _source(
        returned="l1_loss"),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_an_application_that_does_not_measure_the_output_is_found(name):
  assert _found(FOUND[name]) == [("var-list-filter", 16)]


def test_a_filter_leaving_out_a_generator_the_loss_reads_is_found():
  # Only `first_unet` trained: `second_unet`, which the loss reads, is
  # left out beside the VGG16 that measures; the measure excuses only
  # its own variables.
  source = _source().replace(
      "var_list=self.first_para + self.sec_para", "var_list=self.first_para")
  assert _found(source) == [("var-list-filter", 16)]
