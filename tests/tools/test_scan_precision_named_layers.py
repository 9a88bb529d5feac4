"""`tfpartial scan` stays silent on a layer's test-time update of its own
predictor (part twenty's negative code): a Keras layer trains
`[v for v in self.trainable_variables if "predictor" in v.name]` on a
loss recorded under a `tf.GradientTape` that runs only its layers named
with "predictor", through a method of the layer; what the step is handed
(the memory) was computed before the tape opened. The same step is
still found where the loss also runs a layer named otherwise, where the
filter keeps fewer layers than the loss runs, and where the loss is not
recorded by a tape in the step's function. Synthetic sources in the
shape of real code."""

import pytest
import scanned


_LAYER = """\
    import tensorflow as tf

    class SurpriseMemory(tf.keras.layers.Layer):
      def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.predictor_hidden: tf.keras.layers.Dense | None = None
        self.predictor_output: tf.keras.layers.Dense | None = None

      def build(self, input_shape):
        self.encoder = tf.keras.layers.Dense(8, name=f"{{self.name}}_encoder")
        self.predictor_hidden = tf.keras.layers.Dense(
            16, activation="gelu", name=f"{{self.name}}_predictor_hidden")
        self.predictor_output = tf.keras.layers.Dense(
            4, name=f"{{self.name}}_predictor_output")

      def predict_from_memory(self, memory):
        summary = tf.reduce_mean(memory, axis=1)
        hidden = self.predictor_hidden({inner})
        return self.predictor_output(hidden)

      @tf.function
      def update_predictor(self, x_summary, memory):
        {taped}
          prediction = self.predict_from_memory(memory)
          loss = tf.reduce_mean(tf.square(x_summary - prediction))
        trainable_vars = [v for v in self.trainable_variables if {test}]
        if trainable_vars:
          grads = tape.gradient(loss, trainable_vars)
          for var, grad in zip(trainable_vars, grads):
            if grad is not None:
              var.assign_sub(0.01 * grad)

      def call(self, x, memory):
        self.update_predictor(tf.reduce_mean(x, axis=1), memory)
        return self.encoder(x), memory
    """

_TAPE = "with tf.GradientTape() as tape:"
_FOUND = [("var-list-filter", 26)]


def _found(inner="summary", test='"predictor" in v.name', taped=_TAPE):
  return scanned.found(_LAYER.format(inner=inner, test=test, taped=taped))


@pytest.mark.parametrize("kwargs, expected", [
    ({}, []),
    ({"test": "'predictor_' in v.name"}, []),
    ({"inner": "self.encoder(summary)"}, _FOUND),
    ({"test": '"predictor_output" in v.name'}, _FOUND),
    ({"test": '"encoder" in v.name'}, _FOUND),
    ({"inner": "self.memory_gate(summary)"}, _FOUND),
    ({"taped": "if True:\n          tape = tf.GradientTape()"},
     [("var-list-filter", 27)]),
], ids=["only_named_layers", "word_with_underscore",
        "another_layer_run_too", "filter_keeps_fewer_than_run",
        "filter_keeps_a_layer_not_run", "a_layer_not_known",
        "loss_not_taped"])
def test_loss_reads_only_the_layers_the_filter_names(kwargs, expected):
  assert _found(**kwargs) == expected
